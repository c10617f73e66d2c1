"""Where llama.cpp puts a GGUF's tensors, KV cache and compute buffers on a local machine:
GPUs and the host, layer by layer (``specsheet fit``; see docs/local.md).

Pure functions over Python ints. The rules are llama.cpp's (ec98e2002 = build b7437, as
vendored in Ollama f63eea3d; the output-layer-first rule of PR #18148, Dec 2025, as the
default):

- layers: ``llama_model::load_tensors`` (src/llama-model.cpp): the last ``n_gpu_layers`` of the
  n_layer + 1 "layers" (the blocks, then the output layer) go to the GPUs; each offloaded
  layer's device is ``upper_bound(splits, (il - i_gpu_start) / act_gpu_layers)`` over the
  cumulative fractions of the tensor split; the token embedding stays on the host;
- buffers: CUDA pads every tensor to 128 bytes after one extra partial row of 512 elements for
  a quantized tensor whose row is not whole 512s (ggml-cuda.cu ``get_alloc_size``,
  ``MATRIX_ROW_PADDING``); a memory-mapped buffer (CPU_Mapped, Metal_Mapped) is the file's byte
  range from its first tensor to the end of its last (src/llama-model-loader.cpp
  ``get_mapping_range``);
- KV: n_ctx padded to 256, split into ``parallel`` streams each padded to 256
  (src/llama-context.cpp); a sliding-window layer keeps PAD(min(cells, n_swa + n_ubatch), 256)
  cells (src/llama-kv-cache-iswa.cpp); each layer's cache on its layer's device; a recurrent
  layer's state is f32, one cell per sequence (src/llama-memory-recurrent.cpp).

Compute buffers are an estimate (llama.cpp sizes them by allocating the worst-case graph; no
closed formula exists): see ``compute_estimate``.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import Model
from specsheet.quant.formats import GGML_TYPES

MIB = 1 << 20
CUDA_ALIGNMENT = 128  # ggml-cuda.cu: #define CUDA_ALIGNMENT 128
MATRIX_ROW_PADDING = 512  # ggml-cuda/common.cuh
CPU_ALIGNMENT = 32  # ggml-impl.h TENSOR_ALIGNMENT
CTX_PAD = 256  # src/llama-context.cpp: GGML_PAD(n_ctx, 256)
DEFAULT_UBATCH = 512  # common.h n_ubatch
DEFAULT_BATCH = 2048  # common.h n_batch
CACHE_TYPES = ("f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")
FLASH_ATTN = ("on", "off", "auto")
SPLIT_MODES = ("layer", "none")
OUTPUT_RULES = ("output-first", "blocks-first")  # PR #18148 (default), before it (b7437)
# common.h: LLM_FFN_EXPS_REGEX, widened for fused gate_up experts
EXPERTS = re.compile(r"\.ffn_(up|down|gate|gate_up)_(ch|)exps")
HOST = -1  # the device index of the host


class LocalTensor(NamedTuple):
    """One tensor of a GGUF: its name, GGML type, row length (ne[0]), bytes, and where its
    data begins in the file's data section (None when no file was read)."""

    name: str
    ggml_type: str
    ne0: int
    nbytes: int
    begin: int | None = None


class Device(NamedTuple):
    """A GPU as llama.cpp sees it: its buffer name (CUDA0, Metal), backend and memory (for
    Metal, the working-set limit macOS grants the GPU)."""

    name: str
    backend: str  # CUDA or Metal
    memory_bytes: int
    bandwidth_bytes_per_s: int = 0


class LayerKV(NamedTuple):
    """The cache of one block: K and V row widths (0, 0 for a layer without KV), whether it is
    a sliding-window layer, and a recurrent layer's state widths (f32 values per cell)."""

    k_width: int
    v_width: int
    swa: bool = False
    r_width: int = 0
    s_width: int = 0


class LocalSetup(NamedTuple):
    """What llama.cpp is asked to do (its defaults as in common.h)."""

    ctx: int
    n_gpu_layers: int  # -ngl; more than n_layer + 1 is all of them, as llama.cpp's load_tensors
    # takes min(n_gpu_layers, n_layer + 1) (-ngl 999 is the usual way to say all)
    parallel: int = 1
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    flash_attn: str = "auto"
    tensor_split: tuple[float, ...] = ()  # empty: by each device's memory
    split_mode: str = "layer"
    n_cpu_moe: int = 0
    n_ubatch: int = DEFAULT_UBATCH
    kv_unified: bool = False
    output_rule: str = "output-first"
    mmap: bool = True
    overrides: tuple[tuple[str, str], ...] = ()  # -ot: (regex, buffer: CPU, CUDA0, ...)
    mmproj_offload: bool = True  # --mmproj-offload (default) / --no-mmproj-offload


class Buffer(NamedTuple):
    """What one device (or the host) holds, in bytes: model, KV, compute (estimate)."""

    name: str  # CUDA0, Metal, CPU
    memory_bytes: int  # 0 for the host when its memory was not given
    model_bytes: int
    kv_bytes: int
    compute_bytes_estimate: int
    layers: int  # blocks on it (the output layer is counted in ``output``)
    output: bool  # holds the output layer
    expert_bytes: int = 0  # of model_bytes: routed experts (a token reads k / E of them)
    embedding_bytes: int = 0  # of model_bytes: the input embedding (a token reads one row)
    mmproj_bytes: int = 0  # of model_bytes: the multimodal projector file (mmproj)

    @property
    def exact_bytes(self) -> int:
        return self.model_bytes + self.kv_bytes

    @property
    def total_bytes(self) -> int:
        return self.model_bytes + self.kv_bytes + self.compute_bytes_estimate

    @property
    def free_bytes(self) -> int:
        return self.memory_bytes - self.total_bytes


class Placement(NamedTuple):
    """Where everything went: each GPU, then the host; the context llama.cpp allocates."""

    devices: tuple[Buffer, ...]
    host: Buffer
    n_layer: int
    on_gpu: int  # of the n_layer + 1 layers, as llama.cpp's "offloaded N/M layers"
    n_ctx: int  # after padding
    n_ctx_seq: int  # cells of one stream
    n_swa_cells: int  # cells of a sliding-window layer's cache (0: none)
    flash_attn: bool

    @property
    def fits(self) -> bool:
        """Every device holds its model and KV buffers (the exact part)."""
        return all(d.exact_bytes <= d.memory_bytes for d in self.devices) and (
            not self.host.memory_bytes or self.host.exact_bytes <= self.host.memory_bytes)

    @property
    def gpus_fit_estimate(self) -> bool:
        """Every GPU holds its buffers, the compute buffers too (an estimate); the host aside,
        as llama.cpp's --fit checks the devices alone."""
        return all(d.total_bytes <= d.memory_bytes for d in self.devices)

    @property
    def fits_estimate(self) -> bool:
        """And the compute buffers too (an estimate)."""
        return self.gpus_fit_estimate and (
            not self.host.memory_bytes or self.host.total_bytes <= self.host.memory_bytes)

    @property
    def margin_bytes(self) -> int | None:
        """The least memory any device has left with the estimate counted (negative: short);
        None with no GPU and no host memory given."""
        margins = [d.free_bytes for d in self.devices]
        if self.host.memory_bytes:
            margins.append(self.host.free_bytes)
        return min(margins) if margins else None


class LocalFit(NamedTuple):
    """A model placed on a machine: what was placed, how, and the engine's command."""

    model: Model
    quant: str  # the GGUF format, or "file" for a .gguf's own types
    file: str | None
    placement: Placement
    engine: str
    engine_version: str
    parallel: int
    cache_type_k: str
    cache_type_v: str
    max_ctx: int | None  # the longest context that fits at this placement (estimate counted)
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]  # Ollama's settings
    notes: tuple[str, ...]
    decode_step_s: float | None = None  # ESTIMATE: one decode step at a full context


def pad(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def row_bytes(ggml_type: str, n: int) -> int:
    """ggml_row_size: bytes of one row of ``n`` values."""
    kind = GGML_TYPES[ggml_type.upper()]
    return n // kind.block_size * kind.block_bytes


def quantized(ggml_type: str) -> bool:
    return GGML_TYPES[ggml_type.upper()].block_size > 1


def cuda_alloc(ggml_type: str, ne0: int, nbytes: int) -> int:
    """The bytes a CUDA buffer gives one tensor: one extra partial row of a quantized tensor
    whose row is not whole 512s, padded to 128 (ggml-cuda.cu get_alloc_size, CUDA_ALIGNMENT)."""
    size = nbytes
    if quantized(ggml_type) and ne0 % MATRIX_ROW_PADDING:
        size += row_bytes(ggml_type, MATRIX_ROW_PADDING - ne0 % MATRIX_ROW_PADDING)
    return pad(size, CUDA_ALIGNMENT)


def cumulative(splits: Sequence[float]) -> list[float]:
    """The split points llama.cpp derives from a tensor split: cumulative fractions, last 1."""
    total = 0.0
    points = []
    for s in splits:
        total += s
        points.append(total)
    return [p / total for p in points]


def layer_devices(n_layer: int, n_gpu_layers: int, splits: Sequence[float],
                  rule: str = "output-first") -> list[int]:
    """The device of each of the n_layer + 1 layers (the blocks, then the output layer): a GPU
    index, or HOST. ``rule`` output-first (PR #18148): the last n_gpu_layers of blocks + output
    are offloaded; blocks-first (b7437 and before): the last n_gpu_layers blocks, and the
    output layer only when n_gpu_layers > n_layer."""
    if not splits:
        return [HOST] * (n_layer + 1)
    points = cumulative(splits)
    if rule == "output-first":
        start = max(n_layer + 1 - n_gpu_layers, 0)
    else:
        start = max(n_layer - n_gpu_layers, 0)
    act = min(n_gpu_layers, n_layer + 1)
    devices = []
    for il in range(n_layer + 1):
        if il < start or il - start >= act:
            devices.append(HOST)
        else:
            gpu = bisect_right(points, (il - start) / act)  # std::upper_bound
            devices.append(min(gpu, len(points) - 1))
    return devices


INPUT_NAMES = ("token_embd.", "token_embd_norm.", "position_embd.", "token_types.")
OUTPUT_NAMES = ("output.", "output_norm.", "cls.", "cls_out.")


def check_setup(setup: LocalSetup, n_layer: int, n_gpus: int) -> None:
    """SpecError for what llama.cpp refuses, or what specsheet cannot place."""
    if setup.cache_type_k not in CACHE_TYPES:
        raise SpecError(f"KV cache type {quoted(setup.cache_type_k)}: expected one of "
                        f"{', '.join(CACHE_TYPES)}", field="cache_type_k",
                        value=setup.cache_type_k)
    if setup.cache_type_v not in CACHE_TYPES:
        raise SpecError(f"KV cache type {quoted(setup.cache_type_v)}: expected one of "
                        f"{', '.join(CACHE_TYPES)}", field="cache_type_v",
                        value=setup.cache_type_v)
    if setup.flash_attn not in FLASH_ATTN:
        raise SpecError(f"flash attention {quoted(setup.flash_attn)}: expected on, off or auto",
                        field="flash_attn", value=setup.flash_attn)
    if quantized(setup.cache_type_v) and setup.flash_attn == "off":
        raise SpecError(f"a quantized V cache ({setup.cache_type_v}) needs flash attention, as "
                        "llama.cpp requires (\"V cache quantization requires flash_attn\")",
                        field="flash_attn", value="off")
    if setup.split_mode not in SPLIT_MODES:
        raise SpecError(f"split mode {quoted(setup.split_mode)}: specsheet places layer and none; "
                        "row split is not modelled yet", field="split_mode",
                        value=setup.split_mode)
    if setup.output_rule not in OUTPUT_RULES:
        raise SpecError(f"output rule {quoted(setup.output_rule)}: expected one of "
                        f"{', '.join(OUTPUT_RULES)}", field="output_rule")
    if setup.ctx <= 0:
        raise SpecError(f"context {setup.ctx:,}: expected a positive number of tokens",
                        field="ctx", value=setup.ctx)
    if setup.parallel <= 0:
        raise SpecError(f"parallel {setup.parallel}: expected at least 1 sequence",
                        field="parallel", value=setup.parallel)
    if setup.n_gpu_layers < 0:
        raise SpecError(f"GPU layers {setup.n_gpu_layers}: expected 0 or more",
                        field="n_gpu_layers", value=setup.n_gpu_layers)
    if setup.n_gpu_layers and not n_gpus:
        raise SpecError(f"GPU layers {setup.n_gpu_layers} without a GPU", field="gpu")
    if setup.n_cpu_moe < 0 or setup.n_cpu_moe > n_layer:
        raise SpecError(f"MoE layers on the host {setup.n_cpu_moe}: expected 0 to {n_layer}",
                        field="n_cpu_moe", value=setup.n_cpu_moe)
    if setup.tensor_split:
        if len(setup.tensor_split) != n_gpus:
            raise SpecError(f"tensor split of {len(setup.tensor_split)} values for {n_gpus} "
                            f"GPU{'s' if n_gpus != 1 else ''}: give one value per GPU",
                            field="tensor_split", value=",".join(map(str, setup.tensor_split)))
        if not all(0 <= s < math.inf for s in setup.tensor_split) or not any(setup.tensor_split):
            raise SpecError("tensor split: expected finite shares of 0 or more, not all 0",
                            field="tensor_split", value=",".join(map(str, setup.tensor_split)))


def context_cells(setup: LocalSetup) -> tuple[int, int, int]:
    """(n_ctx, cells per stream, streams) as llama_context pads them."""
    n_ctx = pad(setup.ctx, CTX_PAD)
    if setup.kv_unified:
        return n_ctx, n_ctx, 1
    seq = pad(n_ctx // setup.parallel, CTX_PAD)
    return seq * setup.parallel, seq, setup.parallel


def swa_cells(setup: LocalSetup, cells: int, n_swa: int) -> int:
    """Cells of a sliding-window layer's cache (llama_kv_cache_iswa, swa_full false)."""
    ubatch = min(setup.n_ubatch, context_cells(setup)[0])
    window = n_swa * (setup.parallel if setup.kv_unified else 1)
    return pad(min(cells, window + ubatch), CTX_PAD)


def _kv_tensor(backend: str, ggml_type: str, width: int, cells: int, streams: int) -> int:
    nbytes = row_bytes(ggml_type, width) * cells * streams
    if backend == "CUDA":
        if quantized(ggml_type) and width % MATRIX_ROW_PADDING:
            nbytes += row_bytes(ggml_type, MATRIX_ROW_PADDING - width % MATRIX_ROW_PADDING)
        return pad(nbytes, CUDA_ALIGNMENT)
    return pad(nbytes, CPU_ALIGNMENT)


class ComputeShape(NamedTuple):
    """What the compute estimate needs of the model."""

    n_embd: int
    n_head: int
    n_vocab: int


def compute_estimate(shape: ComputeShape, cells: int, ubatch: int, flash: bool,
                     output: bool) -> int:
    """ESTIMATE of a GPU's compute buffer, fitted to llama.cpp logs (docs/local.md):
    max(logits, attention) where logits = (n_vocab + n_embd) x ub x 4 on the output device and
    attention = cells x ub x n_head x 4 (the f32 KQ matrix; 0 with flash attention)
    + 6 x n_embd x ub x 4."""
    attention = (0 if flash else cells * ubatch * shape.n_head * 4) + 6 * shape.n_embd * ubatch * 4
    logits = (shape.n_vocab + shape.n_embd) * ubatch * 4 if output else 0
    return max(logits, attention)


def host_compute_estimate(shape: ComputeShape, cells: int, ubatch: int, parallel: int) -> int:
    """ESTIMATE of the host's compute and output buffers: the input embeddings and the f32 KQ
    mask, (n_embd + cells) x ub x 4, and the logits of each sequence, n_vocab x 4 x parallel."""
    return (shape.n_embd + cells) * ubatch * 4 + shape.n_vocab * 4 * parallel


class TensorGroup(NamedTuple):
    """Tensors that share a device in every placement (a block's routed experts, the rest of
    the block, the input layer, ...), summed once: their bytes as a CUDA buffer and as a CPU
    buffer holds them, the routed experts' bytes, and the file range they span (None when a
    tensor's offset is not known)."""

    cuda_bytes: int
    cpu_bytes: int
    expert_bytes: int
    first: int | None
    end: int | None


def tensor_group(tensors: Sequence[LocalTensor],
                 sizes: dict[tuple[str, int, int], tuple[int, int]] | None = None
                 ) -> TensorGroup:
    """``tensors``' sums (``cuda_alloc`` each; each padded to 32 bytes) and file range.
    ``sizes``: the two sizes by (type, row length, bytes), filled as met (blocks repeat)."""
    sizes = {} if sizes is None else sizes
    cuda = cpu = experts = 0
    for t in tensors:
        key = (t.ggml_type, t.ne0, t.nbytes)
        size = sizes.get(key)
        if size is None:
            size = sizes[key] = (cuda_alloc(*key), pad(t.nbytes, CPU_ALIGNMENT))
        cuda += size[0]
        cpu += size[1]
        if EXPERTS.search(t.name):
            experts += t.nbytes
    spans = [(t.begin, t.begin + t.nbytes) for t in tensors if t.begin is not None]
    if not spans or len(spans) < len(tensors):  # an offset not known: no file range
        return TensorGroup(cuda, cpu, experts, None, None)
    return TensorGroup(cuda, cpu, experts, min(b for b, _ in spans), max(e for _, e in spans))


class GroupedTensors(NamedTuple):
    """A model's tensors as ``place`` assigns them, grouped once for all the placements of a
    search: by block (its routed experts apart, which --n-cpu-moe moves), the input layer
    (on the host), the output layer, the rest (a copy on each device of the blocks), and those
    an -ot pattern sends to its buffer (by the first pattern that matches)."""

    tensors: Sequence[LocalTensor]
    patterns: tuple[str, ...]
    blocks: tuple[tuple[int, bool, TensorGroup], ...]  # (block, routed experts?, group)
    input: TensorGroup | None
    output: TensorGroup | None
    shared: TensorGroup | None
    forced: tuple[tuple[int, TensorGroup], ...]  # (the -ot pattern's index, group)
    embedding: LocalTensor | None  # token_embd.weight
    embedding_pattern: int | None  # the -ot pattern that moved it


def group_tensors(tensors: Sequence[LocalTensor], patterns: Sequence[str] = ()
                  ) -> GroupedTensors:
    """``tensors`` grouped for ``place`` under the -ot ``patterns`` (std::regex_search on each
    name). A pattern that is not a regular expression matches nothing here: ``place`` refuses
    it before it reads the groups."""
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:
            compiled.append(re.compile(r"(?!)"))  # matches nothing
    blocks: dict[tuple[int, bool], list[LocalTensor]] = {}
    forced: dict[int, list[LocalTensor]] = {}
    inputs: list[LocalTensor] = []
    outputs: list[LocalTensor] = []
    shared: list[LocalTensor] = []
    embedding = None
    embedding_pattern = None
    for t in tensors:
        name = t.name
        k = next((i for i, p in enumerate(compiled) if p.search(name)), None) \
            if compiled else None
        if k is not None:
            forced.setdefault(k, []).append(t)
            if name == "token_embd.weight":
                embedding, embedding_pattern = t, k
        elif name.startswith("blk."):
            key = (int(name.split(".", 2)[1]), EXPERTS.search(name) is not None)
            blocks.setdefault(key, []).append(t)
        elif name.startswith(INPUT_NAMES):
            inputs.append(t)
            if name == "token_embd.weight":
                embedding = t
        elif name.startswith(OUTPUT_NAMES):
            outputs.append(t)
        else:  # rope_freqs and the like
            shared.append(t)
    sizes: dict[tuple[str, int, int], tuple[int, int]] = {}
    return GroupedTensors(
        tensors, tuple(patterns),
        tuple((layer, experts, tensor_group(ts, sizes))
              for (layer, experts), ts in blocks.items()),
        tensor_group(inputs, sizes) if inputs else None,
        tensor_group(outputs, sizes) if outputs else None,
        tensor_group(shared, sizes) if shared else None,
        tuple((k, tensor_group(ts, sizes)) for k, ts in forced.items()), embedding,
        embedding_pattern)


def place(tensors: Sequence[LocalTensor] | GroupedTensors, n_layer: int,
          kv: Sequence[LayerKV], n_swa: int, shape: ComputeShape, devices: Sequence[Device],
          setup: LocalSetup, host_memory: int = 0, tied: bool = False,
          mmproj: Sequence[LocalTensor] = ()) -> Placement:
    """Every tensor, cache and compute buffer of a model on ``devices`` and the host, as
    llama.cpp assigns them for ``setup``. ``tensors``: a model's, or them grouped once
    (``group_tensors``) for the many placements of a search. ``tied``: the model has no
    output.weight, so the output layer holds a copy of the token embedding when it is on a
    GPU. ``mmproj``: the tensors of a multimodal projector file, which tools/mtmd/clip.cpp
    loads whole (no memory map) onto the first GPU, or the host with --no-mmproj-offload or
    no GPU."""
    check_setup(setup, n_layer, len(devices))
    gpus = list(devices)
    if setup.split_mode == "none" and gpus:
        gpus = gpus[:1]
    splits = list(setup.tensor_split[:len(gpus)]) if setup.tensor_split else [
        float(d.memory_bytes) for d in gpus]
    ngl = setup.n_gpu_layers if gpus else 0
    where = layer_devices(n_layer, ngl, splits, setup.output_rule)
    on_gpu = sum(1 for d in where if d != HOST)
    overrides = _overrides(setup.overrides, gpus)
    patterns = tuple(pattern for pattern, _ in setup.overrides)
    if not isinstance(tensors, GroupedTensors) or tensors.patterns != patterns:
        tensors = group_tensors(tensors.tensors if isinstance(tensors, GroupedTensors)
                                else tensors, patterns)
    host_held: list[TensorGroup] = []
    held: list[list[TensorGroup]] = [[] for _ in gpus]

    def put(device: int, group: TensorGroup) -> None:
        (host_held if device == HOST else held[device]).append(group)

    for layer, experts, group in tensors.blocks:
        if layer >= n_layer:
            put(where[n_layer - 1], group)  # MTP blocks past n_layer: with the last block
        elif experts and layer < setup.n_cpu_moe:
            put(HOST, group)
        else:
            put(where[layer], group)
    if tensors.input:
        put(HOST, tensors.input)
    if tensors.output:
        put(where[n_layer], tensors.output)
    if tensors.shared:  # one copy per distinct device of the blocks
        for device in dict.fromkeys(where[:n_layer]):
            put(device, tensors.shared)
    for k, group in tensors.forced:  # -ot: the first pattern that matches wins
        put(overrides[k][1], group)
    embedding = tensors.embedding
    embedding_device = HOST if tensors.embedding_pattern is None else \
        overrides[tensors.embedding_pattern][1]
    if tied and embedding is not None and where[n_layer] != HOST:
        put(where[n_layer], tensor_group([embedding]))

    model = [_buffer_bytes(gpu.backend, held[i], setup.mmap) for i, gpu in enumerate(gpus)]
    host_model = _buffer_bytes("CPU", host_held, setup.mmap)
    mmproj_gpu = bool(mmproj) and bool(gpus) and setup.mmproj_offload
    projector = _buffer_bytes(gpus[0].backend if mmproj_gpu else "CPU",
                              [tensor_group(mmproj)] if mmproj else [], False)
    if mmproj_gpu:
        model[0] += projector
    else:
        host_model += projector
    experts_held = [sum(g.expert_bytes for g in groups) for groups in held]
    host_experts = sum(g.expert_bytes for g in host_held)
    host_embedding = embedding.nbytes if embedding is not None and embedding_device == HOST \
        else 0

    n_ctx, cells, streams = context_cells(setup)
    swa = swa_cells(setup, cells, n_swa) if n_swa and any(k.swa for k in kv) else 0
    kv_bytes = [0] * len(gpus)
    host_kv = 0
    for il, cache in enumerate(kv):
        device = where[il]
        backend = "CPU" if device == HOST else gpus[device].backend
        size = 0
        if cache.k_width:
            n = swa if cache.swa else cells
            size += _kv_tensor(backend, setup.cache_type_k, cache.k_width, n, streams)
            size += _kv_tensor(backend, setup.cache_type_v, cache.v_width, n, streams)
        if cache.r_width or cache.s_width:
            mem = max(1, setup.parallel)
            size += pad(cache.r_width * mem * 4, CPU_ALIGNMENT if backend != "CUDA"
                        else CUDA_ALIGNMENT)
            size += pad(cache.s_width * mem * 4, CPU_ALIGNMENT if backend != "CUDA"
                        else CUDA_ALIGNMENT)
        if device == HOST:
            host_kv += size
        else:
            kv_bytes[device] += size

    flash = setup.flash_attn != "off"
    ubatch = min(setup.n_ubatch, n_ctx)
    buffers = []
    for i, gpu in enumerate(gpus):
        blocks = sum(1 for d in where[:n_layer] if d == i)
        has_output = where[n_layer] == i
        compute = compute_estimate(shape, cells, ubatch, flash, has_output) \
            if blocks or has_output else 0
        buffers.append(Buffer(gpu.name, gpu.memory_bytes, model[i], kv_bytes[i], compute,
                              blocks, has_output, experts_held[i],
                              mmproj_bytes=projector if mmproj_gpu and i == 0 else 0))
    host = Buffer("CPU", host_memory, host_model, host_kv,
                  host_compute_estimate(shape, cells, ubatch, setup.parallel),
                  sum(1 for d in where[:n_layer] if d == HOST), where[n_layer] == HOST,
                  host_experts, host_embedding, 0 if mmproj_gpu else projector)
    return Placement(tuple(buffers), host, n_layer, on_gpu, n_ctx, cells, swa, flash)


DECODE_FORMULA = (
    "step = sum over the devices of bytes read / bandwidth (the layers run one device after "
    "another); bytes read = model - experts x (1 - k/E) - the input embedding + the whole KV "
    "cache (a full context), at the full memory bandwidth")


def decode_estimate(placement: Placement, bandwidths: Sequence[int], host_bandwidth: int,
                    expert_share: float) -> float | None:
    """ESTIMATE of one decode step in seconds at a full context (one sequence), or None when
    the host holds layers and its bandwidth is not known. ``expert_share``: k / E, the share of
    the routed experts one token reads (1 for a dense model)."""
    step = 0.0
    for buffer, bandwidth in zip((*placement.devices, placement.host),
                                 (*bandwidths, host_bandwidth), strict=True):
        read = (buffer.model_bytes - buffer.embedding_bytes
                - buffer.expert_bytes * (1 - expert_share) + buffer.kv_bytes)
        if read <= 0:
            continue
        if not bandwidth:
            return None
        step += read / bandwidth
    return step or None


def _overrides(given: Sequence[tuple[str, str]], gpus: Sequence[Device]
               ) -> list[tuple[re.Pattern[str], int]]:
    """-ot patterns (std::regex_search on the tensor's name) with their device index."""
    names = {d.name: i for i, d in enumerate(gpus)}
    found = []
    for pattern, target in given:
        if target.upper() == "CPU":
            device = HOST
        elif target in names:
            device = names[target]
        else:
            raise SpecError(f"tensor override {pattern}={target}: the buffer is CPU or one of "
                            f"the GPUs ({', '.join(names) or 'none'})", field="override_tensor",
                            value=f"{pattern}={target}")
        try:
            found.append((re.compile(pattern), device))
        except re.error as e:
            raise SpecError(f"tensor override {quoted(pattern)}: not a regular expression ({e})",
                            field="override_tensor", value=pattern) from None
    return found


def _buffer_bytes(backend: str, groups: Sequence[TensorGroup], mmap: bool) -> int:
    """A buffer's size: a mapped file range (host or Metal with mmap and file offsets), else
    each tensor padded to the backend's alignment."""
    if not groups:
        return 0
    if mmap and backend in ("CPU", "Metal") and all(g.first is not None for g in groups):
        return max(g.end or 0 for g in groups) - min(g.first or 0 for g in groups)
    return sum(g.cuda_bytes if backend == "CUDA" else g.cpu_bytes for g in groups)


def most_layers(fits: Callable[[int], bool], n_layer: int) -> int | None:
    """The most GPU layers (0 .. n_layer + 1) at which ``fits`` holds; None if not even 0.
    With several GPUs a layer more can move the boundaries between them, so every count is
    tried, from the most down."""
    for n in range(n_layer + 1, -1, -1):
        if fits(n):
            return n
    return None


def longest_ctx(fits: Callable[[int], bool], limit: int) -> int | None:
    """The longest context (a multiple of 256, at most ``limit`` padded down to 256) at which
    ``fits`` holds; None if not even 256. Every buffer grows with the context, so the search
    is a bisection; the longest is tried first, the answer whenever the model fits at
    ``limit`` (fit's usual case: one placement, not two)."""
    top = max(limit // CTX_PAD, 1)
    if fits(top * CTX_PAD):
        return top * CTX_PAD
    if top == 1 or not fits(CTX_PAD):
        return None
    low, high = 1, top
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid * CTX_PAD):
            low = mid
        else:
            high = mid
    return low * CTX_PAD
