"""Serving plan: a model on N accelerators as vLLM lays it out, and what that leaves for requests.

Exact parts (integers; docs/serving.md cites the vLLM code each follows):

- the weights on one GPU: every tensor of ``quant.layouts.model_tensors`` cut to one GPU's share
  the way vLLM's parallel layers cut it (``shard``), on the layers of one pipeline stage
  (``pp_partition``), stored in the dtype or quantization format;
- the KV cache per request on one GPU at T tokens, in whole blocks of 16 tokens, a sliding-window
  layer holding what vLLM's ``SlidingWindowSpec.max_memory_usage_bytes`` reserves; a hybrid
  model's state (Mamba, Mamba-2, gated DeltaNet layers: ``MambaSpec``) one page per layer, the
  attention block raised and the state page padded so that both pages are equal
  (``HybridAttentionMambaModelConfig``);
- the KV pool: floor(U x memory) - weights - activation peak - overhead (or ``kv_memory``),
  its blocks (``get_num_blocks``) and the requests that fit (``get_max_concurrency_for_kv_cache_
  config``), on the pipeline stage that holds the fewest.

The activation peak and the runtime overhead are estimates (``activation_estimate``,
``OVERHEAD_BYTES``), labelled so wherever they are shown. The time and cost figures are roofline
estimates (``estimate``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from specsheet.errors import SpecError
from specsheet.figures import Report
from specsheet.hardware.catalog import Accelerator
from specsheet.model.flops import forward_flops
from specsheet.model.memory import DTYPE_BITS, bytes_for
from specsheet.model.spec import ModelSpec
from specsheet.quant.tensors import Tensor, model_tensors

BLOCK_SIZE = 16  # vLLM's default block size on CUDA: tokens per KV-cache block
SM100 = ("b200", "gb200")  # compute capability 10.0 (is_device_capability(100))
VOCAB_PADDING = 64  # vocab_parallel_embedding.DEFAULT_VOCAB_PADDING_SIZE
DEFAULT_MEMORY_UTILIZATION = "0.9"  # CacheConfig.gpu_memory_utilization
OVERHEAD_BYTES = 2**30  # an estimate: CUDA context, NCCL buffers, CUDA graphs (docs/serving.md)
ACTIVATION_BYTES = 2  # activations in bf16/fp16
LOGIT_BYTES = 4  # the sampler's logits in fp32
GIB = 2**30


# ---- parallel layout ---------------------------------------------------------------------------

class Parallel(NamedTuple):
    """How the GPUs are arranged: tp x pp = gpus; ep = tp with expert parallelism, else 1."""

    gpus: int
    tp: int
    pp: int
    ep: int


def pad_vocab(vocab: int) -> int:
    """The vocabulary rounded up to a multiple of 64 (pad_vocab_size)."""
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


def pp_partition(layers: int, pp: int) -> list[range]:
    """The layers of each pipeline stage, as vLLM's get_pp_indices assigns them: layers // pp
    each, the remainder one each to the stages before the last, from the second-to-last back."""
    sizes = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


def _divisors(n: int) -> list[int]:
    return [i for i in range(1, n + 1) if n % i == 0] if n <= 100_000 else [1]


def tp_problem(spec: ModelSpec, tp: int, ep: bool = False) -> str | None:
    """Why vLLM cannot split ``spec`` over ``tp`` GPUs, or None."""
    if spec.heads % tp:
        return f"does not divide the {spec.heads} attention heads"
    kv = spec.kv_heads
    if not spec.latent_attention:
        if kv >= tp and kv % tp:
            return f"does not divide the {kv} KV heads"
        if tp > kv and tp % kv:
            return (f"exceeds the {kv} KV heads without being a multiple of them (each KV "
                    "head is then replicated on tp / KV heads GPUs)")
    state = _state_problem(spec, tp)
    if state:
        return state
    if spec.dense_mlp_layers and spec.d_ff % tp:
        return f"does not divide the MLP width d_ff {spec.d_ff}"
    if spec.experts and not ep and spec.expert_d_ff % tp:
        return f"does not divide the expert width {spec.expert_d_ff} (--ep splits experts instead)"
    if spec.shared_d_ff % tp:
        return f"does not divide the shared-expert width {spec.shared_d_ff}"
    if pad_vocab(spec.vocab) % tp:
        return (f"does not divide the vocabulary padded to a multiple of {VOCAB_PADDING} "
                f"({pad_vocab(spec.vocab)})")
    return None


def _state_problem(spec: ModelSpec, tp: int) -> str | None:
    """Why vLLM's state layers cannot split over ``tp`` GPUs (its ``divide`` asserts in
    mamba_utils.MambaStateShapeCalculator), or None."""
    kinds = set(spec.layer_types)
    if kinds & {"mamba", "mamba2", "hybrid"} and spec.ssm_inner % tp:
        return f"does not divide the Mamba inner width {spec.ssm_inner}"
    if kinds & {"mamba2", "hybrid"}:
        if spec.ssm_heads % tp:
            return f"does not divide the {spec.ssm_heads} Mamba-2 heads"
        if spec.ssm_groups % tp and tp % spec.ssm_groups:
            return (f"neither divides nor is a multiple of the {spec.ssm_groups} Mamba-2 "
                    "groups")
    if "linear_attention" in kinds:
        if spec.linear_value_heads % tp:
            return f"does not divide the {spec.linear_value_heads} gated DeltaNet value heads"
        if spec.linear_key_heads % tp:
            return f"does not divide the {spec.linear_key_heads} gated DeltaNet key heads"
    return None


def check_parallel(spec: ModelSpec, gpus: int | None, tp: int | None, pp: int | None,
                   ep: bool = False) -> Parallel:
    """The layout from what was given (tp = gpus / pp, pp = 1 by default), or SpecError saying
    what does not divide and which values would."""
    for name, value in (("gpus", gpus), ("tp", tp), ("pp", pp)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value <= 0):
            raise SpecError(f"{name}: expected a positive integer, got {value!r}")
    pp = pp or 1
    if tp is None:
        gpus = gpus or pp
        if gpus % pp:
            raise SpecError(f"gpus: {gpus} GPUs are not a whole number of pipeline stages of "
                            f"pp {pp}; give gpus = tp x pp")
        tp = gpus // pp
    elif gpus is None:
        gpus = tp * pp
    if gpus != tp * pp:
        raise SpecError(f"gpus: {gpus} GPUs but tp {tp} x pp {pp} = {tp * pp}; give gpus = "
                        "tp x pp")
    if pp > spec.layers:
        raise SpecError(f"pp: {pp} pipeline stages for {spec.layers} layers; at most "
                        f"{spec.layers}")
    problem = tp_problem(spec, tp, ep)
    if problem:
        working = [t for t in _divisors(spec.heads) if tp_problem(spec, t, ep) is None]
        raise SpecError(f"tp: {tp} {problem}; tp values that work: "
                        f"{', '.join(map(str, working))}")
    if ep and not spec.experts:
        raise SpecError("ep: expert parallelism needs a mixture-of-experts model")
    return Parallel(gpus=gpus, tp=tp, pp=pp, ep=tp if ep else 1)


# ---- weights per GPU ---------------------------------------------------------------------------

_COLUMN = ("attn_q", "attn_q_b", "attn_kv_b", "ffn_gate", "ffn_up", "ffn_gate_shexp",
           "ffn_up_shexp")
_ROW = ("attn_output", "ffn_down", "ffn_down_shexp")


def _part(name: str) -> tuple[str, str]:
    """blk.3.attn_q.weight -> (attn_q, weight)."""
    parts = [*name.split("."), ""]  # blk.3.ssm_a has no kind
    return (parts[2], parts[3]) if parts[0] == "blk" else (parts[0], parts[1])


def shard(spec: ModelSpec, t: Tensor, layout: Parallel) -> Tensor:
    """``t`` cut to one GPU's share (the first GPU of its stage: the largest share).

    As vLLM's layers cut them: column-parallel (QKVParallelLinear, MergedColumnParallelLinear,
    ColumnParallelLinear) split the output rows and their bias, the KV heads max(1, kv / tp)
    per GPU; row-parallel (RowParallelLinear) split the input columns and keep the whole bias;
    VocabParallelEmbedding and ParallelLMHead hold pad64(V) / tp rows; FusedMoE splits every
    expert's width by tp, or with expert parallelism holds ceil(E / ep) whole experts; the
    attention sinks split by head; norms, routers, MLA's q_a and kv_a projections (replicated
    linear layers) and position tables are whole on every GPU."""
    tp = layout.tp
    module, kind = _part(t.name)
    shape = t.shape
    if module in ("token_embd", "output") and t.role in ("embedding", "head", "bias"):
        return t._replace(shape=(pad_vocab(spec.vocab) // tp, *shape[1:]))
    if module.endswith("_exps"):
        if layout.ep > 1:
            return t._replace(shape=(-(-shape[0] // layout.ep), *shape[1:]))
        if module == "ffn_down_exps":  # [E, d, f] weight, [E, d] bias
            return t._replace(shape=(*shape[:-1], shape[-1] // tp)) if kind == "weight" else t
        return t._replace(shape=(shape[0], shape[1] // tp, *shape[2:]))  # gate/up [E, f, ...]
    if module in ("attn_k", "attn_v"):
        per_gpu = max(1, spec.kv_heads // tp)
        return t._replace(shape=(shape[0] // spec.kv_heads * per_gpu, *shape[1:]))
    if module == "attn_sinks":
        return t._replace(shape=(shape[0] // tp,))
    if module.startswith("ssm_"):
        return _shard_state_mixer(spec, t, module, kind, tp)
    if module in _COLUMN:
        return t._replace(shape=(shape[0] // tp, *shape[1:]))
    if module in _ROW and kind == "weight":
        return t._replace(shape=(shape[0], shape[1] // tp))
    return t


def _shard_state_mixer(spec: ModelSpec, t: Tensor, module: str, kind: str,
                       tp: int) -> Tensor:
    """A state-space or DeltaNet mixer's tensor cut as vLLM's MambaMixer, MambaMixer2 and
    Qwen3-Next's GatedDeltaNet cut it: the input projections, the convolution, the time step,
    A and D split by channel or head (column-parallel); x_proj (Mamba) and the output
    projection split by input column (row-parallel, the bias whole); Mamba-2's gated norm
    split, Jamba's dt/B/C norms and DeltaNet's per-head norm whole. With tp not dividing the
    Mamba-2 groups each GPU holds a copy of the groups its heads read: the B and C rows of
    the input projection and the convolution count tp groups (extra_groups_for_head_shards)."""
    shape = t.shape
    mixer = layer_kind(spec, t.layer) if t.layer is not None else ""
    if module in ("ssm_dt_norm", "ssm_b_norm", "ssm_c_norm"):
        return t
    if module == "ssm_norm":
        return t if mixer == "linear_attention" else t._replace(shape=(shape[0] // tp,))
    if module == "ssm_out" or (module == "ssm_x" and kind == "weight"):
        return t._replace(shape=(shape[0], shape[1] // tp)) if kind == "weight" else t
    rows = shape[0]
    if mixer in ("mamba2", "hybrid") and module in ("ssm_in", "ssm_conv1d") and \
            spec.ssm_groups % tp:
        rows += 2 * (tp - spec.ssm_groups) * spec.ssm_state
    return t._replace(shape=(rows // tp, *shape[1:]))


def stage_tensors(spec: ModelSpec, layout: Parallel, stage: int) -> tuple[Tensor, ...]:
    """The tensors one GPU of pipeline stage ``stage`` holds, cut to its share: the layers of
    the stage; the embeddings on the first stage; the final norm and the head on the last (with
    a tied head and pp > 1 the last stage holds its own copy of the embedding, as vLLM's
    ParallelLMHead does when the embedding is on another stage)."""
    layers = pp_partition(spec.layers, layout.pp)[stage]
    first, last = stage == 0, stage == layout.pp - 1
    held: list[Tensor] = []
    for t in model_tensors(spec):
        if t.layer is not None:
            keep = t.layer in layers
        elif t.name.startswith(("token_embd", "position_embd", "project_in")):
            keep = first
            if last and not first and t.name == "token_embd.weight" and spec.tied_embeddings:
                held.append(shard(spec, t, layout))  # the last stage's copy, as its head
        else:  # output norm, output head, project_out
            keep = last
        if keep:
            held.append(shard(spec, t, layout))
    return tuple(held)


def stored_bytes(spec: ModelSpec, tensors: tuple[Tensor, ...], dtype: str | None,
                 quant: str | None, group_size: int | None) -> int:
    """Bytes of ``tensors`` in ``dtype`` (rounded up once) or as ``quant`` stores them."""
    if not tensors:
        return 0
    if quant is None:
        return bytes_for(sum(t.elements for t in tensors), dtype or "bf16")
    from specsheet.quant.layouts import quantized_bytes

    return quantized_bytes(spec, quant, group_size, dtype, tensors).weights_bytes


# ---- KV cache per GPU --------------------------------------------------------------------------

class KVGroup(NamedTuple):
    """One of vLLM's KV-cache groups on a GPU: layers that share a block table."""

    window: int  # 0: full attention (or a state group); else the sliding window
    layers: int  # layers in the group
    state: bool = False  # a state group (MambaSpec): one page per layer per request


def layer_kind(spec: ModelSpec, i: int) -> str:
    """What mixes positions in layer ``i``: attention unless ``layer_types`` says otherwise."""
    return spec.layer_types[i] if spec.layer_types else "attention"


def kv_values_per_layer(spec: ModelSpec, tp: int) -> int:
    """Values one token caches in one layer on one GPU: max(1, kv / tp) x (d_h + d_v), or with
    MLA the whole latent kv_lora_rank + qk_rope_head_dim (every GPU holds it all)."""
    if spec.latent_attention:
        return spec.kv_lora_rank + spec.qk_rope_head_dim
    return max(1, spec.kv_heads // tp) * (spec.head_dim + spec.v_head_dim)


def state_values_per_layer(spec: ModelSpec, kind: str, tp: int) -> tuple[int, int]:
    """One request's state in one layer of ``kind`` on one GPU, as vLLM shapes it
    (mamba_utils.MambaStateShapeCalculator): (convolution values, recurrent values).

    Mamba: (K - 1) x d_in / tp and d_in / tp x N. Mamba-2: (K - 1) x (d_in + 2 G' N) / tp and
    H / tp x (d_in / H) x N, where G' = G when tp divides the G groups, else tp (each GPU gets
    a copy of the group its heads read: extra_groups_for_head_shards). Gated DeltaNet:
    (K - 1) x (2 H_k d_k + H_v d_v) / tp and H_v / tp x d_k x d_v. vLLM keeps K - 1 inputs of
    the convolution (transformers keeps K)."""
    k = spec.ssm_conv - 1
    if kind == "mamba":
        return k * spec.ssm_inner // tp, spec.ssm_inner // tp * spec.ssm_state
    if kind in ("mamba2", "hybrid"):
        groups = spec.ssm_groups if spec.ssm_groups % tp == 0 else tp
        conv = k * (spec.ssm_inner + 2 * groups * spec.ssm_state) // tp
        return conv, spec.ssm_heads // tp * (spec.ssm_inner // spec.ssm_heads) * spec.ssm_state
    if kind == "linear_attention":
        channels = (2 * spec.linear_key_heads * spec.linear_key_dim
                    + spec.linear_value_heads * spec.linear_value_dim)
        return (k * channels // tp,
                spec.linear_value_heads // tp * spec.linear_key_dim * spec.linear_value_dim)
    return 0, 0


def state_page_bytes(spec: ModelSpec, tp: int, dtype: str) -> int:
    """One state layer's page on one GPU, unpadded (MambaSpec.page_size_bytes): its
    convolution and recurrent values in ``dtype``, the model's dtype (vLLM's mamba_cache_dtype
    and mamba_ssm_cache_dtype default "auto": the model's dtype, for both). A model's state
    layers all have one kind, as vLLM's hybrids do; 0 without state layers."""
    kinds = [k for k in dict.fromkeys(spec.layer_types) if k not in ("attention", "none")]
    return max((bytes_for(sum(state_values_per_layer(spec, k, tp)), dtype) for k in kinds),
               default=0)


def state_layers(spec: ModelSpec, layers: Iterable[int]) -> int:
    """Layers among ``layers`` that hold a state (a hybrid layer holds both a KV and a state)."""
    return sum(1 for i in layers if layer_kind(spec, i) in ("mamba", "mamba2", "hybrid",
                                                           "linear_attention"))


def attention_layers(spec: ModelSpec, layers: Iterable[int]) -> list[int]:
    """Layers among ``layers`` that hold keys and values."""
    return [i for i in layers if layer_kind(spec, i) in ("attention", "hybrid")]


def kernel_block_alignment(spec: ModelSpec, hardware: Accelerator) -> int:
    """The attention block's alignment in HybridAttentionMambaModelConfig: 64 for MLA, 32 for
    head size 256 on an SM100 GPU (B200, GB200: FlashInfer), else 16."""
    if spec.latent_attention:
        return 64
    if spec.head_dim == 256 and hardware.name in SM100:
        return 32
    return 16


def kv_block_size(spec: ModelSpec, hardware: Accelerator, tp: int, kv_dtype: str,
                  state_dtype: str, max_model_len: int) -> int:
    """Tokens per attention block. 16 for a model of attention only. A hybrid raises it as
    HybridAttentionMambaModelConfig.verify_and_update_config does (prefix caching off, vLLM's
    default for hybrids): the smallest multiple of the alignment a whose page holds the state,
    a x cdiv(state page, a x one token's page). A model of state layers only: max_model_len
    (its MambaSpec's block size)."""
    state = state_page_bytes(spec, tp, state_dtype)
    if not state:
        return BLOCK_SIZE
    if not spec.attention_layers:
        return max_model_len
    token = bytes_for(kv_values_per_layer(spec, tp), kv_dtype)
    align = kernel_block_alignment(spec, hardware)
    return align * -(-state // (align * token))


def kv_groups(spec: ModelSpec, layers: Iterable[int]) -> list[KVGroup]:
    """vLLM's KV-cache groups for the layers of a stage (kv_cache_utils
    _get_kv_cache_groups_uniform_page_size): one group when every layer is alike; else the
    layers of each kind (full attention, each window, state) split into groups of the smallest
    kind's count (or of the largest, when it is under 1.5 x the smallest), the last group
    padded."""
    by_kind: dict[tuple[int, bool], int] = {}
    windowed = set(spec.sliding_layers)
    for i in layers:
        kind = layer_kind(spec, i)
        if kind in ("attention", "hybrid"):
            key = (spec.sliding_window if i in windowed else 0, False)
            by_kind[key] = by_kind.get(key, 0) + 1
        if kind in ("mamba", "mamba2", "hybrid", "linear_attention"):
            by_kind[(0, True)] = by_kind.get((0, True), 0) + 1
    if len(by_kind) <= 1:
        return [KVGroup(w, n, state) for (w, state), n in by_kind.items()]
    smallest, largest = min(by_kind.values()), max(by_kind.values())
    size = largest if largest < smallest * 1.5 else smallest
    groups = []
    for (window, state), n in by_kind.items():
        count = -(-n // size)
        for i in range(count):
            groups.append(KVGroup(window, len(range(i, n, count)), state))
    return groups


def group_blocks(group: KVGroup, tokens: int, batched_tokens: int,
                 block_size: int = 16) -> int:
    """Blocks one request of ``tokens`` tokens holds in a layer of the group
    (max_memory_usage_bytes / page size): cdiv(T, block) for full attention; for a window W,
    cdiv(min(W - 1 + max_num_batched_tokens, T), block) + 1 (SlidingWindowSpec); one for a
    state group (MambaSpec: 1 + num_speculative_blocks, no speculative decoding here)."""
    if group.state:
        return 1
    if not group.window:
        return -(-tokens // block_size)
    return -(-min(group.window - 1 + batched_tokens, tokens) // block_size) + 1


class StageMemory(NamedTuple):
    """One GPU of one pipeline stage: what it holds and the KV pool it leaves."""

    stage: int
    layers: int
    capacity_bytes: int
    budget_bytes: int  # floor(U x capacity), or the capacity with a given KV pool
    weights_bytes: int
    expert_bytes: int  # the routed experts among the weights
    activation_bytes: int  # an estimate
    overhead_bytes: int  # an estimate
    kv_pool_bytes: int
    kv_bytes_per_token: int  # one token in every attention layer of the stage, unrounded
    block_size: int  # tokens per attention block (raised for a hybrid)
    page_bytes: int  # one block of one layer (a state layer's page padded to it)
    state_page_bytes: int  # one state layer's page for one request, unpadded (0: no state)
    groups: tuple[KVGroup, ...]
    layers_per_group: int
    num_blocks: int  # pool // page // layers_per_group (get_num_blocks)
    blocks_per_request: int  # at max_model_len
    kv_read_per_token: int  # decode: bytes one request's KV adds per cached position (estimate)

    @property
    def kv_bytes_per_request(self) -> int:
        """The pool one request of max_model_len takes, its state included: blocks x page x
        layers per group."""
        return self.blocks_per_request * self.page_bytes * self.layers_per_group

    @property
    def state_blocks_per_request(self) -> int:
        """The blocks of ``blocks_per_request`` that hold the state: one per state group."""
        return sum(1 for g in self.groups if g.state)

    @property
    def state_bytes_per_request(self) -> int:
        """The part of ``kv_bytes_per_request`` that holds the state, in padded pages (a padded
        group's missing layers included, as vLLM allocates them)."""
        return self.state_blocks_per_request * self.page_bytes * self.layers_per_group

    @property
    def max_concurrency(self) -> int:
        """floor(num_blocks / blocks per request): vLLM's "Maximum concurrency", whole."""
        return self.num_blocks // self.blocks_per_request if self.blocks_per_request else 0

    @property
    def weights_fit(self) -> bool:
        return (self.weights_bytes + self.activation_bytes + self.overhead_bytes
                <= self.budget_bytes)


def _state_inputs(spec: ModelSpec) -> list[Tensor]:
    """The input projection (ssm_in) of the first state layer of each kind."""
    firsts: dict[str, Tensor] = {}
    for t in model_tensors(spec):
        if t.layer is not None and t.name.endswith(".ssm_in.weight"):
            firsts.setdefault(layer_kind(spec, t.layer), t)
    return list(firsts.values())


def activation_estimate(spec: ModelSpec, layout: Parallel, layers: range, last: bool,
                        batched_tokens: int, max_seqs: int) -> int:
    """An estimate of vLLM's profile-run peak: max_num_batched_tokens x (2 x d + the widest
    intermediate of a layer on one GPU) x 2 bytes, plus on the last stage the sampler's fp32
    logits for min(max_num_seqs, max_num_batched_tokens) requests: S x pad64(V) / tp x 4."""
    tp, d = layout.tp, spec.d_model
    if not len(layers):
        return 0
    matrices = 2 if spec.mlp == "gated" else 1
    kv_gpu = max(1, spec.kv_heads // tp)
    if spec.latent_attention:
        attention = spec.heads // tp * (2 * spec.head_dim - spec.qk_rope_head_dim
                                        + spec.v_head_dim)
    else:
        attention = spec.heads // tp * spec.head_dim + 2 * kv_gpu * spec.head_dim
    widths = [attention]
    state_rows = {shard(spec, t, layout).shape[0] for t in _state_inputs(spec)}
    widths += state_rows  # a state layer's input projection on one GPU
    if spec.dense_mlp_layers:
        widths.append(matrices * spec.d_ff // tp)
    if spec.experts:
        expert = spec.expert_d_ff if layout.ep > 1 else spec.expert_d_ff // tp
        widths.append(spec.experts_per_token * matrices * expert
                      + matrices * spec.shared_d_ff // tp)
    total = batched_tokens * (2 * d + max(widths)) * ACTIVATION_BYTES
    if last:
        total += min(max_seqs, batched_tokens) * pad_vocab(spec.vocab) // tp * LOGIT_BYTES
    return total


def stage_memory(report: Report, hardware: Accelerator, layout: Parallel, stage: int,
                 max_model_len: int, utilization: Share, kv_memory: int | None,
                 batched_tokens: int, max_seqs: int, group_size: int | None) -> StageMemory:
    """The memory of one GPU of pipeline stage ``stage``."""
    spec = report.model.spec
    quant = report.weights.format if report.weights.quantized else None
    dtype = report.dtype
    layers = pp_partition(spec.layers, layout.pp)[stage]
    tensors = stage_tensors(spec, layout, stage)
    weights = stored_bytes(spec, tensors, dtype, quant, group_size)
    experts = stored_bytes(spec, tuple(t for t in tensors if "_exps." in t.name), dtype, quant,
                           group_size) if spec.experts else 0
    activation = activation_estimate(spec, layout, layers, stage == layout.pp - 1,
                                     batched_tokens, max_seqs)
    capacity = hardware.memory_bytes
    if kv_memory is None:
        budget = utilization.of(capacity)
        pool = max(0, budget - weights - activation - OVERHEAD_BYTES)
    else:
        budget, pool = capacity, kv_memory
    values = kv_values_per_layer(spec, layout.tp)
    kv_dtype = report.kv.dtype
    state_dtype = dtype or "bf16"
    block = kv_block_size(spec, hardware, layout.tp, kv_dtype, state_dtype, max_model_len)
    state_page = state_page_bytes(spec, layout.tp, state_dtype)
    attention = attention_layers(spec, layers)
    page = bytes_for(block * values, kv_dtype) if spec.attention_layers else state_page
    groups = tuple(kv_groups(spec, layers))
    per_group = max((g.layers for g in groups), default=0)
    num_blocks = pool // page // per_group if per_group else 0
    blocks = sum(group_blocks(g, max_model_len, batched_tokens, block) for g in groups)
    per_token = values * DTYPE_BITS[kv_dtype] * len(attention) // 8
    return StageMemory(
        stage=stage, layers=len(layers), capacity_bytes=capacity, budget_bytes=budget,
        weights_bytes=weights, expert_bytes=experts, activation_bytes=activation,
        overhead_bytes=OVERHEAD_BYTES, kv_pool_bytes=pool, kv_bytes_per_token=per_token,
        block_size=block, page_bytes=page, state_page_bytes=state_page, groups=groups,
        layers_per_group=per_group, num_blocks=num_blocks, blocks_per_request=blocks,
        kv_read_per_token=values * DTYPE_BITS[kv_dtype] // 8)


# ---- the plan ----------------------------------------------------------------------------------

class Request(NamedTuple):
    """The request shape: max_model_len for memory; prompt and output for the estimates."""

    max_model_len: int
    prompt: int
    output: int
    batched_tokens: int  # max_num_batched_tokens
    max_seqs: int  # max_num_seqs


class ServePlan(NamedTuple):
    """Every exact figure of serving one model on ``layout`` of ``hardware``."""

    report: Report
    hardware: Accelerator
    layout: Parallel
    request: Request
    utilization: Share
    kv_memory_given: bool
    stages: tuple[StageMemory, ...]

    @property
    def binding(self) -> StageMemory:
        """The stage that admits the fewest requests (then the one with the most weights)."""
        return min(self.stages, key=lambda s: (s.max_concurrency, -s.weights_bytes))

    @property
    def max_concurrency(self) -> int:
        return min(s.max_concurrency for s in self.stages)

    @property
    def vllm_max_concurrency(self) -> float:
        """num_blocks / blocks per request, as vLLM logs it ("%.2fx")."""
        s = self.binding
        return s.num_blocks / s.blocks_per_request if s.blocks_per_request else 0.0

    @property
    def fits(self) -> bool:
        """Every stage holds its weights and at least one request of max_model_len."""
        return all(s.weights_fit for s in self.stages) and self.max_concurrency >= 1

    @property
    def max_context(self) -> int:
        """The longest request that fits alone (up to the model's context), in tokens."""
        spec = self.report.model.spec
        best = spec.context
        for s in self.stages:
            def fits(t: int, s: StageMemory = s) -> bool:
                return sum(group_blocks(g, t, self.request.batched_tokens, s.block_size)
                           for g in s.groups) <= s.num_blocks
            if fits(best):
                continue
            low, high = 0, best  # fits(low), not fits(high)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if fits(mid) else (low, mid)
            best = low
        return best if all(s.weights_fit for s in self.stages) else 0

    def concurrency_at(self, tokens: int) -> int:
        """Requests of ``tokens`` tokens the pool holds at once (every stage)."""
        return min(s.num_blocks // max(1, sum(group_blocks(g, tokens,
                                                           self.request.batched_tokens,
                                                           s.block_size)
                                              for g in s.groups)) for s in self.stages)


def default_batched_tokens(hardware: Accelerator) -> int:
    """vLLM's `vllm serve` default max_num_batched_tokens: 8,192 on a GPU of 70 GiB or more that
    is not an A100, else 2,048 (EngineArgs.get_batch_defaults)."""
    return 8192 if _large(hardware) else 2048


def default_max_seqs(hardware: Accelerator) -> int:
    """vLLM's `vllm serve` default max_num_seqs: 1,024 on a large GPU, else 256."""
    return 1024 if _large(hardware) else 256


def _large(hardware: Accelerator) -> bool:
    return hardware.memory_bytes >= 70 * GIB and "a100" not in hardware.name.lower()


class Share(NamedTuple):
    """An exact share in (0, 1] written as a decimal: numerator / denominator (0.9 = 9 / 10).
    (fractions.Fraction would cost the start-up its import of decimal.)"""

    numerator: int
    denominator: int

    def of(self, whole: int) -> int:
        """floor(share x whole), exactly."""
        return whole * self.numerator // self.denominator

    def __float__(self) -> float:
        return self.numerator / self.denominator


def parse_utilization(text: str) -> Share:
    """U in (0, 1] from its decimal text (0.9, .95, 1), exactly."""
    whole, _, decimals = text.strip().partition(".")
    digits = whole + decimals
    if not digits or not digits.isascii() or not digits.isdigit():
        raise SpecError(f"memory-utilization: expected a number in (0, 1] such as 0.9, got "
                        f"{text!r}")
    value = Share(int(digits), 10 ** len(decimals))
    if not 0 < value.numerator <= value.denominator:
        raise SpecError(f"memory-utilization: expected a number in (0, 1], got {text.strip()}")
    return value


def plan_serving(report: Report, hardware: Accelerator, layout: Parallel, request: Request,
                 utilization: Share | None = None,
                 kv_memory: int | None = None, group_size: int | None = None) -> ServePlan:
    """Lay ``report``'s model out on ``layout`` GPUs of ``hardware`` (see the module docstring).
    ``report`` gives the weights' format and dtype and the KV dtype."""
    spec = report.model.spec
    utilization = utilization or parse_utilization(DEFAULT_MEMORY_UTILIZATION)
    if request.max_model_len > spec.context:
        raise SpecError(f"max-model-len: {request.max_model_len:,} exceeds the context of "
                        f"{report.model.name} ({spec.context:,} tokens)")
    stages = tuple(stage_memory(report, hardware, layout, i, request.max_model_len, utilization,
                                kv_memory, request.batched_tokens, request.max_seqs, group_size)
                   for i in range(layout.pp))
    return ServePlan(report, hardware, layout, request, utilization, kv_memory is not None,
                     stages)


def at_max_model_len(plan: ServePlan, report: Report, max_model_len: int) -> ServePlan:
    """``plan`` for ``report`` (the same model, weights and KV dtype as the plan's, at other
    tokens) and requests of ``max_model_len`` tokens: the same as ``plan_serving`` with them,
    computing again only the blocks a request holds, so that a sweep over the tokens lays the
    model out once."""
    spec = report.model.spec
    if max_model_len > spec.context:
        raise SpecError(f"max-model-len: {max_model_len:,} exceeds the context of "
                        f"{report.model.name} ({spec.context:,} tokens)")
    request = plan.request._replace(max_model_len=max_model_len)
    block = kv_block_size(spec, plan.hardware, plan.layout.tp, report.kv.dtype,
                          report.dtype or "bf16", max_model_len)
    stages = tuple(s._replace(block_size=block, blocks_per_request=sum(
        group_blocks(g, max_model_len, request.batched_tokens, block)
        for g in s.groups)) for s in plan.stages)
    return plan._replace(report=report, request=request, stages=stages)


# ---- estimates ---------------------------------------------------------------------------------

COMPUTE_DTYPE = {"fp8": "fp8", "fp8-channel": "fp8", "fp8-block": "fp8", "w8a8": "int8",
                 "nvfp4": "fp4"}


def compute_dtype(report: Report) -> str:
    """The element type the matrix multiplications run in: fp8 for fp8 checkpoints, int8 for
    w8a8, fp4 for nvfp4; weight-only formats compute in 16 bits."""
    if report.weights.quantized:
        return COMPUTE_DTYPE.get(report.weights.format, "bf16")
    dtype = report.dtype or "bf16"
    return dtype if dtype in ("fp32", "fp16", "bf16", "fp8") else "bf16"


def experts_touched(spec: ModelSpec, tokens: int) -> float:
    """The share of a layer's routed experts that ``tokens`` tokens reach when each picks k of E
    uniformly: 1 - (1 - k/E)^C (1 for a dense model)."""
    if not spec.experts:
        return 1.0
    return 1 - (1 - spec.experts_per_token / spec.experts) ** tokens


class Estimates(NamedTuple):
    """Roofline estimates (upper bounds on speed) of one request shape at ``concurrency``."""

    concurrency: int
    compute_dtype: str
    peak_flops_per_s: int
    mfu: float
    mbu: float
    prefill_flops: int
    prefill_compute_s: float
    prefill_allreduce_s: float
    decode_context: int
    decode_bytes: float  # bytes read per step, all stages
    decode_flops: int  # FLOPs per step, all GPUs
    decode_step_s: float
    experts_touched: float
    price: float | None
    tokens_per_word: float | None
    text_tokens: int | None = None  # with a measured ratio: the text's tokens and words
    text_words: int | None = None

    @property
    def prefill_s(self) -> float:
        return self.prefill_compute_s + self.prefill_allreduce_s

    @property
    def tokens_per_s_per_request(self) -> float:
        return 1 / self.decode_step_s

    @property
    def tokens_per_s_total(self) -> float:
        return self.concurrency / self.decode_step_s

    def tokens_per_s_end_to_end(self, output: int) -> float:
        """Output tokens/s of C requests served from start to end, prefills included (as an
        offline benchmark counts them): C x O / (C x prefill + O x decode step)."""
        return self.concurrency * output / (self.concurrency * self.prefill_s
                                            + output * self.decode_step_s)


def estimate(plan: ServePlan, concurrency: int, mfu: float, mbu: float,
             price: float | None = None, tokens_per_word: float | None = None,
             text: tuple[int, int] | None = None) -> Estimates:
    """Roofline estimates for the plan's request shape (docs/serving.md has every formula)."""
    report, hw, layout = plan.report, plan.hardware, plan.layout
    spec = report.model.spec
    p, o = plan.request.prompt, plan.request.output
    dtype = compute_dtype(report)
    peak = hw.peak(dtype)
    tp = layout.tp
    prefill_flops = p * forward_flops(spec, p).total
    compute = prefill_flops / (tp * peak * mfu)
    allreduce = 0.0
    if tp > 1 and hw.interconnect_bytes_per_s:
        message = p * spec.d_model * ACTIVATION_BYTES
        allreduce = (2 * spec.layers * 2 * (tp - 1) / tp * message
                     / hw.interconnect_bytes_per_s)
    context = p + o // 2
    share = experts_touched(spec, concurrency)
    weights_read = sum(s.weights_bytes - s.expert_bytes + share * s.expert_bytes
                       for s in plan.stages)
    windowed = set(spec.sliding_layers)
    kv_read = 0
    for s, layers in zip(plan.stages, pp_partition(spec.layers, layout.pp), strict=True):
        positions = sum(min(context, spec.sliding_window) if i in windowed else context
                        for i in attention_layers(spec, layers))
        states = state_layers(spec, layers) * s.state_page_bytes
        kv_read += concurrency * (positions * s.kv_read_per_token + states)
    decode_bytes = weights_read + kv_read
    decode_flops = concurrency * forward_flops(spec, context).total
    step = max(decode_bytes / (hw.bandwidth_bytes_per_s * mbu),
               decode_flops / (tp * peak * mfu))
    return Estimates(concurrency=concurrency, compute_dtype=dtype, peak_flops_per_s=peak,
                     mfu=mfu, mbu=mbu, prefill_flops=prefill_flops, prefill_compute_s=compute,
                     prefill_allreduce_s=allreduce, decode_context=context,
                     decode_bytes=decode_bytes, decode_flops=decode_flops, decode_step_s=step,
                     experts_touched=share, price=price,
                     tokens_per_word=text[0] / text[1] if text else tokens_per_word,
                     text_tokens=text[0] if text else None, text_words=text[1] if text else None)


def costs(plan: ServePlan, est: Estimates) -> dict[str, float | None]:
    """Costs at the price per GPU-hour: per request (its prefill alone, plus its 1/C share of
    O decode steps), per million output tokens (at the total decode rate), per million input
    tokens (at the prefill rate), and per million output words (x tokens per word)."""
    if est.price is None:
        return {"usd_per_request": None, "usd_per_million_output_tokens": None,
                "usd_per_million_input_tokens": None, "usd_per_million_output_words": None}
    per_second = plan.layout.gpus * est.price / 3600
    request = per_second * (est.prefill_s + plan.request.output * est.decode_step_s
                            / est.concurrency)
    output = per_second / est.tokens_per_s_total * 1e6
    prompt = per_second * est.prefill_s / plan.request.prompt * 1e6
    words = output * est.tokens_per_word if est.tokens_per_word is not None else None
    return {"usd_per_request": request, "usd_per_million_output_tokens": output,
            "usd_per_million_input_tokens": prompt, "usd_per_million_output_words": words}


def assumptions(plan: ServePlan, est: Estimates) -> list[str]:
    """The estimates' assumptions, in words (docs/serving.md has the formulas)."""
    spec = plan.report.model.spec
    notes = [
        "roofline: an upper bound on speed; real kernels, scheduling and communication are slower",
        f"prefill: {plan.request.prompt:,} prompt tokens x forward FLOPs per token / (tp x "
        f"{est.compute_dtype} peak x mfu {est.mfu:g}), every token attending to all prompt "
        "tokens, plus 2 ring all-reduces of the activations per layer over the interconnect",
        f"decode step: max(bytes read / (bandwidth x mbu {est.mbu:g}), FLOPs / (tp x peak x "
        f"mfu)) at {est.concurrency:,} requests of {est.decode_context:,} tokens (prompt + "
        "half the output)",
        "pipeline stages run one after another for a token (one batch in flight)",
        f"activation peak (estimate): max_num_batched_tokens {plan.request.batched_tokens:,} "
        "x (2 x d + the widest layer intermediate on a GPU) x 2 bytes, plus the sampler's fp32 "
        "logits on the last stage",
        f"runtime overhead (estimate): {OVERHEAD_BYTES:,} bytes (1 GiB) per GPU for the CUDA "
        "context, NCCL buffers and CUDA graphs",
    ]
    if spec.experts:
        notes.append(f"experts read per step: E x (1 - (1 - k/E)^C) per layer under uniform "
                     f"routing: {est.experts_touched:.1%} of the routed experts at C = "
                     f"{est.concurrency:,}")
    if est.concurrency > plan.concurrency_at(plan.request.prompt + plan.request.output):
        notes.append(f"concurrency {est.concurrency:,} exceeds the requests of this shape "
                     "the KV pool holds")
    return notes


class ServeCheck(NamedTuple):
    """One serving limit of ``specsheet check``: the figure, its limit and the verdict."""

    figure: str  # the figure's JSON path in the serve entry
    option: str
    label: str
    value: float | int | bool | None  # None: no estimate (nothing fits)
    limit: float | int | bool
    ok: bool
    bound: Literal["fits", "min", "max"]  # what the limit bounds: the fit, a least or a most


def serve_checks(plan: ServePlan, est: Estimates | None, min_concurrency: int | None = None,
                 max_ttft: float | None = None,
                 min_tokens_per_s: float | None = None) -> list[ServeCheck]:
    """The model fits (always checked), and each limit given: at least ``min_concurrency``
    requests of max_model_len at once, a time to first token of at most ``max_ttft`` seconds,
    at least ``min_tokens_per_s`` tokens/s per request (estimates; no estimate fails)."""
    checks = [ServeCheck("fits", "--gpu", "Fits", plan.fits, True, plan.fits, "fits")]
    if min_concurrency is not None:
        checks.append(ServeCheck("max_concurrency", "--min-concurrency",
                                 "Requests of max-model-len at once", plan.max_concurrency,
                                 min_concurrency, plan.max_concurrency >= min_concurrency, "min"))
    if max_ttft is not None:
        ttft = None if est is None else est.prefill_s
        checks.append(ServeCheck("estimates.prefill_s", "--max-ttft",
                                 "Time to first token, s (estimate)", ttft, max_ttft,
                                 ttft is not None and ttft <= max_ttft, "max"))
    if min_tokens_per_s is not None:
        rate = None if est is None else est.tokens_per_s_per_request
        checks.append(ServeCheck("estimates.tokens_per_s_per_request", "--min-tokens-per-s",
                                 "Tokens/s per request (estimate)", rate, min_tokens_per_s,
                                 rate is not None and rate >= min_tokens_per_s, "min"))
    return checks
