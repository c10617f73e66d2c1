"""Local inference: will a GGUF run on this machine with llama.cpp (or Ollama, which runs
llama-server), layer by layer, GPU and host memory (``specsheet fit``; docs/local.md).

    >>> import specsheet as s
    >>> f = s.fit("llama3-8b", s.FitRequest(gpu=("rtx-4090",), ctx=8192, n_gpu_layers=33))
    >>> f.placement.devices[0].model_bytes, f.placement.host.model_bytes
    (4617396224, 295501824)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.plan import check_searched, check_walked
from specsheet.plan.local import LocalFit

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.model.spec import Model, ModelSpec
    from specsheet.plan.budgets import LocalCheck
    from specsheet.plan.local import Device, LayerKV, LocalSetup, LocalTensor, Placement

DEFAULT_QUANT = "gguf-q4_k_m"
ENGINES = ("llama.cpp", "ollama", "mlx")
# the llama.cpp build whose code the rules follow, and the rule PR #18148 changed
LLAMA_CPP_BUILD = "b7437 (ec98e2002)"
OLLAMA_VERSION = "fb307609 (llama-server b10488)"
MLX_VERSION = "mlx-lm d78bf58e, mlx 846d1762"
DEFAULT_MLX_QUANT = "mlx-4bit"
GIB = 1 << 30


MIB_BYTES = 1 << 20


class FitRequest(NamedTuple):
    """What to run and on what: the GPUs (catalog names or hardware files; none: host only),
    llama.cpp's settings (its defaults: common/common.h) and the engine. The defaults are the
    CLI's. ``ctx`` None is the engine's default context, "auto" the longest that fits with
    every layer on the GPUs; ``n_gpu_layers`` "auto" is the most layers that fit."""

    gpu: tuple[str, ...] = ()
    quant: str | None = None  # default: a .gguf's own types, else gguf-q4_k_m
    ctx: int | str | None = None
    parallel: int = 1
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    flash_attn: str = "auto"
    tensor_split: tuple[float, ...] = ()
    split_mode: str = "layer"
    host_memory: int | None = None
    n_gpu_layers: int | str = "auto"
    n_cpu_moe: int = 0
    engine: str = "llama.cpp"
    output_rule: str = "output-first"  # PR #18148; blocks-first: b7437 and before
    n_ubatch: int = 512
    kv_unified: bool = False
    mmap: bool = True
    override_tensor: tuple[str, ...] = ()  # llama.cpp's -ot PATTERN=BUFFER, in order
    wired_limit_mb: int | None = None  # macOS iogpu.wired_limit_mb: the Metal working set
    host_bandwidth: int | None = None  # the host memory's bytes/s, for the decode estimate
    kv_bits: int | None = None  # MLX: mlx-lm's --kv-bits, a quantized cache (2, 4 or 8)
    kv_group_size: int = 64  # MLX: mlx-lm's --kv-group-size
    mmproj_offload: bool = True  # llama.cpp's --mmproj-offload: the mmproj file on the GPU


class Fit(LocalFit):
    """Where llama.cpp puts everything, and whether it fits (plan.local.LocalFit's fields:
    model, quant, file, placement, engine, engine_version, parallel, cache types, max_ctx,
    command, env, notes)."""

    __slots__ = ()

    @property
    def fits(self) -> bool:
        return self.placement.fits

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet fit --json`` writes for the same inputs."""
        from specsheet.views.fit import fit_document

        return fit_document(self)


# how the CLI names the option that set each local limit (the figure is the key)
CHECK_OPTIONS = {"max_ctx": "--min-ctx", "layers.on_gpu": "--min-gpu-layers"}


class FitChecked(NamedTuple):
    """A placement and its limits (``specsheet check --engine``; exit 1 when one fails)."""

    fit: Fit
    checks: list[LocalCheck]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        from specsheet.views.fit import fit_check_document

        return fit_check_document(self.fit, self.checks, CHECK_OPTIONS)


def check_fit(model: str | Model, request: FitRequest = FitRequest(),
              min_ctx: int | None = None, min_gpu_layers: int | None = None) -> FitChecked:
    """``model`` placed as ``fit`` places it (at ``min_ctx`` when no context is asked for),
    against the least context and the fewest GPU layers."""
    from specsheet.plan.budgets import local_checks

    if min_ctx is None and min_gpu_layers is None:
        raise SpecError("a local check needs a limit: the least context or the fewest GPU "
                        "layers", field="min_ctx")
    for field, value in (("min_ctx", min_ctx), ("min_gpu_layers", min_gpu_layers)):
        if value is not None and value <= 0:
            raise SpecError(f"expected a number above 0, got {value}", field=field,
                            value=value)
    if request.ctx is None and min_ctx is not None:
        request = request._replace(ctx=min_ctx)
    placed = fit(model, request)
    return FitChecked(placed, local_checks(placed, min_ctx, min_gpu_layers))


class _Source(NamedTuple):
    model: Model
    tensors: list[LocalTensor]
    quant: str
    file: str | None
    mmproj: tuple[LocalTensor, ...] = ()  # a multimodal model's projector file (mmproj)


def _gguf_source(path: Path) -> _Source:
    from specsheet.plan.local import LocalTensor
    from specsheet.sources.resolve import model_from_hf_config
    from specsheet.sources.weights.gguf import read_gguf
    from specsheet.sources.weights.gguf_config import hf_config_from_gguf

    header = read_gguf(path)
    names = {t.name for t in header.tensors}
    origin = f"{path} (GGUF metadata)"
    config = hf_config_from_gguf(header.metadata, names, origin)
    if config is None:
        arch = header.metadata.get("general.architecture")
        raise SpecError(f"{path}: GGUF architecture {quoted(arch)} has no placement rule in "
                        "specsheet (its tensors and cache are not described)",
                        field="model", value=str(path))
    name = header.metadata.get("general.name")
    model = model_from_hf_config(config, origin, name if isinstance(name, str) and name
                                 else path.stem)
    tensors = [LocalTensor(t.name, t.dtype, t.shape[-1] if t.shape else 1, t.nbytes, t.begin)
               for t in header.tensors]
    return _Source(model, tensors, "file", str(path))


def _spec_source(model: Model, quant: str) -> _Source:
    from specsheet.plan.local import LocalTensor
    from specsheet.quant.formats import check_format
    from specsheet.quant.layouts import quantized_bytes

    if check_format(quant).family != "gguf":
        raise SpecError(f"{quant}: llama.cpp runs GGUF files; give a gguf-* format",
                        field="quant", value=quant)
    if model.spec.layer_types and set(model.spec.layer_types) != {"attention"}:
        # quantized_bytes would ask for a plain dtype, which llama.cpp's GGUF files never are
        raise SpecError(f"{model.name}: llama.cpp's GGUF tensors of state-space and "
                        "linear-attention layers (Mamba, gated DeltaNet, short convolutions) "
                        "have no layout in "
                        "specsheet yet, so fit cannot place it; count and serve give its "
                        "weights and state in a plain dtype", field="model", value=model.name)
    stored = [LocalTensor(s.name, s.dtype, s.shape[-1], s.nbytes)
              for s in quantized_bytes(model.spec, quant).tensors]
    # the vision tower and projector: llama.cpp's separate mmproj file (quant/layouts.py)
    return _Source(model, [t for t in stored if not t.name.startswith("v.")], quant, None,
                   tuple(t for t in stored if t.name.startswith("v.")))


def cache_layers(spec: ModelSpec, mla: bool = False) -> tuple[list[LayerKV], int]:
    """Each block's cache widths as llama.cpp allocates them, and the sliding window.

    ``mla``: the file holds DeepSeek's MLA in llama.cpp's current layout (attn_k_b and
    attn_v_b, converted since PR #12801): one K/V head of kv_lora_rank + the rotary dims and
    kv_lora_rank (convert_hf_to_gguf.py DeepseekV2Model: key_length, value_length). A file
    with attn_kv_b (the older conversion, and specsheet's own tensor list) caches every head,
    head_dim and v_head_dim wide (llama-hparams.cpp is_mla false, n_embd_k_gqa)."""
    from specsheet.plan.local import LayerKV

    types = spec.layer_types or ("attention",) * spec.layers
    sliding = set(spec.sliding_layers) if spec.sliding_window else set()
    layers = []
    for i, kind in enumerate(types):
        if kind == "attention" and spec.latent_attention and mla:
            layers.append(LayerKV(spec.kv_lora_rank + spec.qk_rope_head_dim,
                                  spec.kv_lora_rank, i in sliding))
        elif kind == "attention":
            layers.append(LayerKV(spec.kv_heads * spec.head_dim, spec.kv_heads * spec.v_head_dim,
                                  i in sliding))
        elif kind in ("mamba", "mamba2"):
            groups = spec.ssm_groups if kind == "mamba2" else 0
            r = (spec.ssm_conv - 1) * (spec.ssm_inner + 2 * groups * spec.ssm_state)
            layers.append(LayerKV(0, 0, False, r, spec.ssm_state * spec.ssm_inner))
        elif kind == "linear_attention":
            # gated DeltaNet (qwen3next, qwen35): llama.cpp's ssm_d_inner = value heads x value
            # dim, ssm_n_group = key heads, ssm_d_state = key dim; n_embd_r and n_embd_s as
            # for Mamba (llama-hparams.cpp)
            inner = spec.linear_value_heads * spec.linear_value_dim
            r = (spec.ssm_conv - 1) * (inner + 2 * spec.linear_key_heads * spec.linear_key_dim)
            layers.append(LayerKV(0, 0, False, r, spec.linear_key_dim * inner))
        elif kind == "none":
            layers.append(LayerKV(0, 0))
        else:
            raise SpecError(f"{kind} layers: llama.cpp's state of them has no placement rule "
                            "in specsheet yet", field="model")
    return layers, spec.sliding_window if sliding else 0


def _load_gpu(name: str) -> Accelerator:
    """The accelerator ``name`` (a catalog name or a hardware YAML file); errors name gpu."""
    from specsheet.sources.hardware import load_accelerator

    try:
        return load_accelerator(name)
    except SpecError as e:
        raise SpecError(str(e), field="gpu", value=name) from None


def _devices(names: tuple[str, ...], wired_limit_mb: int | None = None) -> list[Device]:
    from specsheet.plan.local import Device

    devices: list[Device] = []
    cuda = 0
    for name in names:
        gpu = _load_gpu(name)
        if gpu.vendor == "Apple":
            from specsheet.hardware.apple import metal_working_set

            if any(d.backend == "Metal" for d in devices):
                raise SpecError("one Apple GPU per machine", field="gpu", value=name)
            devices.append(Device("Metal", "Metal", metal_working_set(gpu, wired_limit_mb),
                                  gpu.bandwidth_bytes_per_s))
        else:
            devices.append(Device(f"CUDA{cuda}", "CUDA", gpu.memory_bytes,
                                  gpu.bandwidth_bytes_per_s))
            cuda += 1
    if len({d.backend for d in devices}) > 1:
        raise SpecError("CUDA and Metal GPUs together: llama.cpp runs one backend's devices",
                        field="gpu", value=",".join(names))
    return devices


def _setup(request: FitRequest, ctx: int, ngl: int) -> LocalSetup:
    from specsheet.plan.local import LocalSetup

    return LocalSetup(ctx=ctx, n_gpu_layers=ngl, parallel=request.parallel,
                      cache_type_k=request.cache_type_k, cache_type_v=request.cache_type_v,
                      flash_attn=request.flash_attn, tensor_split=request.tensor_split,
                      split_mode=request.split_mode, n_cpu_moe=request.n_cpu_moe,
                      n_ubatch=request.n_ubatch, kv_unified=request.kv_unified,
                      output_rule=request.output_rule, mmap=request.mmap,
                      overrides=_override_pairs(request.override_tensor),
                      mmproj_offload=request.mmproj_offload)


def _override_pairs(given: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in given:
        pattern, sep, target = item.rpartition("=")
        if not sep or not pattern or not target:
            raise SpecError(f"tensor override {quoted(item)}: expected PATTERN=BUFFER, e.g. "
                            "'exps=CPU'", field="override_tensor", value=item)
        pairs.append((pattern, target))
    return tuple(pairs)


def _check(request: FitRequest) -> None:
    if request.engine not in ENGINES:
        raise SpecError(f"unknown engine {quoted(request.engine)}: expected one of "
                        f"{', '.join(ENGINES)}", field="engine",
                        value=request.engine)
    if request.host_memory is not None and request.host_memory <= 0:
        raise SpecError(f"host memory {request.host_memory:,} bytes: expected a positive size",
                        field="host_memory", value=request.host_memory)
    if isinstance(request.ctx, str) and request.ctx != "auto":
        raise SpecError(f"context {quoted(request.ctx)}: expected tokens or auto", field="ctx",
                        value=request.ctx)
    if isinstance(request.n_gpu_layers, str) and request.n_gpu_layers not in ("auto", "all"):
        raise SpecError(f"GPU layers {quoted(request.n_gpu_layers)}: expected a number, "
                        "auto or all",
                        field="n_gpu_layers", value=request.n_gpu_layers)
    if request.n_ubatch <= 0:
        raise SpecError(f"micro-batch {request.n_ubatch}: expected a positive number",
                        field="n_ubatch", value=request.n_ubatch)
    if request.engine == "ollama":
        if request.cache_type_k != request.cache_type_v:
            raise SpecError("Ollama sets one cache type for K and V (OLLAMA_KV_CACHE_TYPE)",
                            field="cache_type_v", value=request.cache_type_v)
        for field, value in (("n_cpu_moe", request.n_cpu_moe),
                             ("override_tensor", request.override_tensor),
                             ("tensor_split", request.tensor_split)):
            if value:
                raise SpecError("Ollama does not pass this setting to llama-server",
                                field=field, value=str(value))
    if request.host_bandwidth is not None and request.host_bandwidth <= 0:
        raise SpecError(f"host bandwidth {request.host_bandwidth:,} bytes/s: expected a "
                        "positive rate", field="host_bandwidth", value=request.host_bandwidth)
    if request.engine != "mlx" and (request.kv_bits is not None or request.kv_group_size != 64):
        raise SpecError("a quantized cache of KV bits is MLX's (llama.cpp's are the cache "
                        "types)", field="kv_bits", value=str(request.kv_bits))
    if request.wired_limit_mb is not None and request.wired_limit_mb <= 0:
        raise SpecError(f"wired limit {request.wired_limit_mb} MiB: expected a positive size",
                        field="wired_limit_mb", value=request.wired_limit_mb)


def _uncapped(request: FitRequest, trained: int) -> int:
    """The context that gives each of llama.cpp's sequences the ``trained`` context, no more:
    one stream (a unified cache) holds it whole, separate streams ``parallel`` times it."""
    return trained if request.kv_unified else trained * request.parallel


def _slot_capped(placement: Placement, enough: Placement, ctx: int, trained: int) -> str:
    """The note for a context past the training context: llama-server allocates every cell
    asked for, then caps each slot at the training context (tools/server, the server
    context's slot setup: n_ctx_slot = min(llama_n_ctx_seq, llama_model_n_ctx_train)).
    ``enough`` is the placement at ``ctx``, the context that gives each slot as much."""
    def kv(p: Placement) -> int:
        return sum(d.kv_bytes for d in (*p.devices, p.host))

    said = (f"each slot is capped at the trained context, {trained:,} tokens: llama-server "
            f"logs \"the slot context ({placement.n_ctx_seq}) exceeds the training context "
            f"of the model ({trained}) - capping\"")
    saved = kv(placement) - kv(enough)
    if not saved:  # the cells were padded past it (llama.cpp pads the context to 256)
        return said
    return f"{said}; --ctx-size {ctx} gives a slot as much with {saved / MIB_BYTES:,.2f} MiB " \
        "less KV cache"


def default_ctx(request: FitRequest, spec: ModelSpec, devices: list[Device]) -> int:
    """The engine's default context: llama.cpp's n_ctx 0 = the training context (common.h,
    since PR #16653, b7437); Ollama's by the GPUs' memory, 4096 / 32768 / 262144 at < 23,
    >= 23, >= 47 GiB (server/routes.go, 0334ffa62), at most the training context."""
    if request.engine == "ollama":
        vram = sum(d.memory_bytes for d in devices)
        tier = 262144 if vram >= 47 * GIB else 32768 if vram >= 23 * GIB else 4096
        return min(tier, spec.context)
    return spec.context


def fit(model: str | Model, request: FitRequest = FitRequest()) -> Fit:
    """Place ``model`` (a reference ``load`` takes, a .gguf file, or a Model) on the request's
    GPUs and host as llama.cpp does."""
    from specsheet.plan.local import (
        ComputeShape,
        decode_estimate,
        group_tensors,
        longest_ctx,
        most_layers,
        place,
    )

    _check(request)
    if not isinstance(model, str):
        check_walked(model.spec.layers, model.name, "a placement")  # before any per layer
    if request.engine == "mlx":
        return _fit_mlx(model, request)
    if isinstance(model, str) and model.lower().endswith(".gguf") and not Path(model).is_file():
        raise SpecError(f"{model}: no such file")
    if isinstance(model, str) and model.lower().endswith(".gguf"):
        if request.quant is not None:
            raise SpecError("a .gguf file holds its own tensor types; leave out the format",
                            field="quant", value=request.quant)
        source = _gguf_source(Path(model))
    else:
        if isinstance(model, str):
            from specsheet.api.count import load

            model = load(model)
            check_walked(model.spec.layers, model.name, "a placement")
        source = _spec_source(model, request.quant or DEFAULT_QUANT)
    spec = source.model.spec
    check_walked(spec.layers, source.model.name, "a placement")  # a .gguf's block count
    mla = any(t.name.endswith(".attn_k_b.weight") for t in source.tensors)
    kv, n_swa = cache_layers(spec, mla)
    shape = ComputeShape(spec.d_model, spec.heads, spec.vocab)
    devices = _devices(request.gpu, request.wired_limit_mb)
    if request.wired_limit_mb is not None and not any(d.backend == "Metal" for d in devices):
        raise SpecError("a wired limit is macOS's, for an Apple GPU", field="wired_limit_mb",
                        value=request.wired_limit_mb)
    tied = not any(t.name == "output.weight" for t in source.tensors)
    n_layer = spec.layers
    host = request.host_memory or 0

    # Ollama's num_ctx is each sequence's: it runs llama-server -c num_ctx x parallel
    scale = request.parallel if request.engine == "ollama" else 1

    placed: dict[tuple[int, int], Placement] = {}
    # grouped once for every placement (-ot's patterns as given: place() refuses a bad one)
    grouped = group_tensors(source.tensors, [item.rpartition("=")[0]
                                             for item in request.override_tensor])

    def at(ctx: int, ngl: int) -> Placement:
        """The placement at ``ctx`` and ``ngl``, each computed once: the searches and the
        answer ask for the same ones (a Placement is immutable)."""
        if (ctx, ngl) not in placed:
            placed[ctx, ngl] = place(grouped, n_layer, kv, n_swa, shape, devices,
                                     _setup(request, ctx * scale, ngl), host, tied,
                                     source.mmproj)
        return placed[ctx, ngl]

    def ok(p: Placement) -> bool:
        return p.fits_estimate

    every = n_layer + 1 if devices else 0
    notes = []
    if request.ctx == "auto":
        found = longest_ctx(lambda c: ok(at(c, every)), spec.context)
        if found is None:
            raise SpecError(f"no context fits with all {every} layers on the GPUs; lower "
                            "the GPU layers", field="ctx", value="auto")
        ctx = found
    elif request.ctx is None:
        ctx = default_ctx(request, spec, devices)
        notes.append(f"context {ctx:,}: the engine's default")
    else:
        assert isinstance(request.ctx, int)
        ctx = request.ctx
        if request.engine == "ollama" and ctx > spec.context:
            # Ollama sizes everything at the training context (llm/server.go,
            # NewLlamaServer: opts.NumCtx = trainCtx), before llama-server starts
            notes.append(f"num_ctx {ctx:,} is past the model's trained context: Ollama runs "
                         f"{spec.context:,} (it logs \"requested context size too large for "
                         f"model\" num_ctx={ctx} n_ctx_train={spec.context})")
            ctx = spec.context
    if request.n_gpu_layers == "auto":
        check_searched(n_layer, source.model.name)  # before the search
        best = most_layers(lambda n: ok(at(ctx, n)), n_layer) if devices else 0
        if best is None:  # the host is short at every count: as llama.cpp's --fit, the
            # most layers the GPUs hold, the host's lack shown
            best = most_layers(lambda n: at(ctx, n).gpus_fit_estimate, n_layer)
        ngl = 0 if best is None else best
    elif request.n_gpu_layers == "all":
        ngl = every
    else:
        assert isinstance(request.n_gpu_layers, int)
        ngl = request.n_gpu_layers
        if devices and ngl > every:  # llama.cpp offloads min(ngl, n_layer + 1): 999 is all
            notes.append(f"GPU layers {ngl:,}: all {every} (llama.cpp takes a larger count as "
                         "all of them)")
            ngl = every
    placement = at(ctx, ngl)
    max_ctx = longest_ctx(lambda c: ok(at(c, ngl)), spec.context)
    if placement.n_ctx_seq > spec.context and request.engine == "llama.cpp":
        enough = _uncapped(request, spec.context)
        notes.append(_slot_capped(placement, at(enough, ngl), enough, spec.context))
    if request.split_mode == "none" and len(devices) > 1:
        # llama_model_load_from_file_impl: "if using single GPU mode, remove all except the
        # main GPU" (main_gpu 0)
        others = "the other GPU holds" if len(devices) == 2 else \
            f"the other {len(devices) - 1} GPUs hold"
        notes.append(f"split mode none: everything on the GPUs goes on {devices[0].name} (the "
                     f"main GPU, 0); {others} nothing")
    if source.quant != "file" and request.quant is None:
        notes.append(f"weights in {DEFAULT_QUANT} (give --quant, or a .gguf file)")
    if source.mmproj:
        where = "the first GPU" if devices and request.mmproj_offload else "the host"
        notes.append(f"the vision tower and projector: a separate mmproj file (F16, vectors "
                     f"F32) of {sum(t.nbytes for t in source.mmproj) / MIB_BYTES:,.2f} MiB, "
                     f"on {where}; its compute buffer is not estimated")
    command, env = _command(request, source, placement, ctx, ngl)
    version = OLLAMA_VERSION if request.engine == "ollama" else LLAMA_CPP_BUILD + (
        " + PR #18148 (output layer first)" if request.output_rule == "output-first" else "")
    share = spec.experts_per_token / spec.experts if spec.experts else 1.0
    used = devices[:len(placement.devices)]  # split mode none: the first GPU alone
    step = decode_estimate(placement, [d.bandwidth_bytes_per_s for d in used],
                           request.host_bandwidth or 0, share)
    return Fit(source.model, source.quant, source.file, placement, request.engine, version,
               request.parallel, request.cache_type_k, request.cache_type_v, max_ctx,
               command, env, tuple(notes), step)


def _fit_mlx(model: str | Model, request: FitRequest) -> Fit:
    """MLX: every layer on the Apple GPU, the weights in an MLX format, the cache in bf16."""
    from specsheet.plan.local import Buffer, Placement, decode_estimate, longest_ctx, pad
    from specsheet.plan.mlx import (
        check_kv_quantization,
        check_mlx_format,
        mlx_kv_bytes,
        mlx_weight_bytes,
    )

    if isinstance(model, str):
        if model.lower().endswith(".gguf"):
            raise SpecError("MLX runs safetensors checkpoints, not a .gguf file", field="engine",
                            value="mlx")
        from specsheet.api.count import load

        model = load(model)
        check_walked(model.spec.layers, model.name, "a placement")
    fmt = check_mlx_format(request.quant or DEFAULT_MLX_QUANT)
    devices = _devices(request.gpu, request.wired_limit_mb)
    if len(devices) != 1 or devices[0].backend != "Metal":
        raise SpecError("MLX runs on one Apple GPU: give an Apple entry of the catalog",
                        field="gpu", value=",".join(request.gpu))
    cache = "its cache is in the model's dtype, or quantized with --kv-bits"
    whole = "the one Apple GPU holds every layer"
    for field, value, default, why in (("cache_type_k", request.cache_type_k, "f16", cache),
                                       ("cache_type_v", request.cache_type_v, "f16", cache),
                                       ("tensor_split", request.tensor_split, (), whole),
                                       ("n_cpu_moe", request.n_cpu_moe, 0, whole),
                                       ("override_tensor", request.override_tensor, (), whole)):
        if value != default:
            raise SpecError(f"MLX has no such setting ({why})", field=field, value=str(value))
    spec = model.spec
    every = spec.layers + 1
    if request.n_gpu_layers not in ("auto", "all") and (
            not isinstance(request.n_gpu_layers, int) or request.n_gpu_layers < every):
        raise SpecError(f"MLX runs all {every} layers on the GPU", field="n_gpu_layers",
                        value=request.n_gpu_layers)
    weights = mlx_weight_bytes(spec, fmt)
    check_kv_quantization(spec, request.kv_bits, request.kv_group_size)
    device = devices[0]
    host = request.host_memory or 0

    def at(ctx: int) -> Placement:
        kv = mlx_kv_bytes(spec, ctx, request.kv_bits, request.kv_group_size)
        n_ctx = pad(ctx, 256)
        swa = min(n_ctx, spec.sliding_window) if spec.sliding_window and \
            spec.sliding_layers else 0
        gpu = Buffer(device.name, device.memory_bytes, weights, kv, 0, spec.layers, True)
        return Placement((gpu,), Buffer("CPU", host, 0, 0, 0, 0, False), spec.layers, every,
                         n_ctx, n_ctx, swa, True)

    notes = ["MLX's working memory while it computes is not estimated (no compute buffers)"]
    if request.ctx == "auto":
        found = longest_ctx(lambda c: at(c).fits, spec.context)
        if found is None:
            raise SpecError("no context fits in the GPU's working set", field="ctx",
                            value="auto")
        ctx = found
    elif request.ctx is None:
        ctx = spec.context
        notes.append(f"context {ctx:,}: the model's")
    else:
        assert isinstance(request.ctx, int)
        ctx = request.ctx
        if ctx > spec.context:  # placed as asked: no cap is modelled for mlx-lm
            notes.append(f"context {ctx:,} is past the model's trained context "
                         f"({spec.context:,}): the positions past it are ones the model was "
                         "not trained on")
    if request.quant is None:
        notes.append(f"weights in {DEFAULT_MLX_QUANT} (affine, group 64, bf16 scales and "
                     "biases; give --quant)")
    placement = at(ctx)
    if weights > device.memory_bytes * 9 // 10:
        notes.append("mlx-lm warns above 90% of the working set for the weights "
                     "(mlx_lm/generate.py wired_limit)")
    max_ctx = longest_ctx(lambda c: at(c).fits, spec.context)
    command: tuple[str, ...] = ("mlx_lm.generate", "--model", model.name, "--max-kv-size",
                                str(ctx))
    cache = "bf16"
    if request.kv_bits is not None:
        # from the first token: mlx-lm's default --quantized-kv-start 5000 keeps a shorter
        # context in bf16
        command += ("--kv-bits", str(request.kv_bits), "--kv-group-size",
                    str(request.kv_group_size), "--quantized-kv-start", "0")
        cache = f"affine {request.kv_bits}-bit, group {request.kv_group_size}"
    step = decode_estimate(placement, [device.bandwidth_bytes_per_s], 0, 1.0) \
        if not spec.experts else None
    return Fit(model, fmt.name, None, placement, "mlx", MLX_VERSION, 1, cache, cache,
               max_ctx, command, (), tuple(notes), step)


def _command(request: FitRequest, source: _Source, placement: Placement, ctx: int,
             ngl: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The engine's command line (argv) and, for Ollama, its settings."""
    file = source.file or f"{source.model.name}-{source.quant.removeprefix('gguf-')}.gguf"
    if request.engine == "ollama":
        env = [("num_ctx", str(ctx)), ("num_gpu", str(ngl))]
        if request.cache_type_k != "f16":
            env.append(("OLLAMA_KV_CACHE_TYPE", request.cache_type_k))
        if request.flash_attn != "auto":
            env.append(("OLLAMA_FLASH_ATTENTION", "1" if request.flash_attn == "on" else "0"))
        if request.parallel != 1:
            env.append(("OLLAMA_NUM_PARALLEL", str(request.parallel)))
        return ("ollama", "run", source.model.name), tuple(env)
    argv = ["llama-server", "-m", file, "-ngl", str(ngl), "--ctx-size", str(ctx)]
    if source.mmproj:
        argv += ["--mmproj", f"mmproj-{source.model.name}-f16.gguf"]
        if not request.mmproj_offload:
            argv += ["--no-mmproj-offload"]
    if request.parallel != 1:
        argv += ["--parallel", str(request.parallel)]
    if request.cache_type_k != "f16":
        argv += ["-ctk", request.cache_type_k]
    if request.cache_type_v != "f16":
        argv += ["-ctv", request.cache_type_v]
    if request.flash_attn != "auto":
        argv += ["--flash-attn", request.flash_attn]
    if request.tensor_split:
        argv += ["--tensor-split", ",".join(f"{s:g}" for s in request.tensor_split)]
    if request.split_mode != "layer":
        argv += ["--split-mode", request.split_mode]
    if request.n_cpu_moe:
        argv += ["--n-cpu-moe", str(request.n_cpu_moe)]
    if request.n_ubatch != 512:
        argv += ["-ub", str(request.n_ubatch)]
    for item in request.override_tensor:
        argv += ["-ot", item]
    argv += ["--fit", "off"]  # the placement above, not llama.cpp's own fitting
    return tuple(argv), ()
