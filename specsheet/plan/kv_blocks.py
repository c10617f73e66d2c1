"""vLLM's KV cache on one GPU: blocks, groups and a hybrid's state pages (integers, exact).

A request's KV cache lives in whole blocks of ``block_size`` tokens, one block table per KV-cache
group (``kv_groups``: layers of one kind that share a table); a sliding-window layer holds what
``SlidingWindowSpec.max_memory_usage_bytes`` reserves; a state layer (Mamba, Mamba-2, gated
DeltaNet: ``MambaSpec``) holds one page per request (more with prefix caching: ``state_pages``
by mamba_cache_mode), and a hybrid raises its attention block so
that the two pages are equal (``HybridAttentionMambaModelConfig``). docs/serving.md cites the vLLM
code each function follows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.hardware.catalog import Accelerator
from specsheet.model.memory import bytes_for
from specsheet.model.spec import STATE_KINDS, ModelSpec

BLOCK_SIZE = 16  # vLLM's default block size on CUDA: tokens per KV-cache block
SM100 = ("b200", "gb200")  # compute capability 10.0 (is_device_capability(100))


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
    (K - 1) x (2 H_k d_k + H_v d_v) / tp and H_v / tp x d_k x d_v. A short convolution (LFM2's
    ShortConv, short_conv_state_shape): (K - 1) x d / tp and no recurrent state. vLLM keeps
    K - 1 inputs of the convolution (transformers keeps K)."""
    k = spec.ssm_conv - 1
    if kind == "short_conv":
        return k * spec.d_model // tp, 0
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
    return sum(1 for i in layers if layer_kind(spec, i) in STATE_KINDS)


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
                  state_dtype: str, max_model_len: int, dcp: int = 1,
                  mamba_mode: str = "none") -> int:
    """Tokens per attention block. 16 for a model of attention only. A hybrid raises it as
    HybridAttentionMambaModelConfig.verify_and_update_config does: with mamba_cache_mode none
    (prefix caching off, vLLM's default for hybrids) or align, the smallest multiple of the
    alignment a whose page holds the state, a x cdiv(state page, a x one token's page); with
    all, the smallest multiple of c = lcm(the Mamba-2 chunk, a) holding as many tokens as the
    state page: c x cdiv(cdiv(state page, one token's page), c). A model of state layers only:
    max_model_len (its MambaSpec's block size)."""
    state = state_page_bytes(spec, tp, state_dtype)
    if not state:
        return mla_block_size(spec, hardware, dcp) if spec.kv_lora_rank else BLOCK_SIZE
    if not spec.attention_layers:
        return max_model_len
    token = bytes_for(kv_values_per_layer(spec, tp), kv_dtype)
    align = kernel_block_alignment(spec, hardware)
    if mamba_mode == "all":
        chunk = math.lcm(spec.ssm_chunk, align)
        tokens = -(-state // token)  # attention tokens per state page
        return chunk * -(-tokens // chunk)
    return align * -(-state // (align * token))


MAMBA_CACHE_MODES = ("none", "align", "all")  # CacheConfig.mamba_cache_mode


def state_pages(mamba_mode: str, tokens: int, block_size: int) -> int:
    """Pages one state layer holds for a request of ``tokens`` (MambaSpec.
    max_memory_usage_bytes / page, v1/kv_cache_interface.py at bc8282e6): none 1 (the
    running state); align 2 (the running state and the one it is copied from, MambaManager
    keeps the block of the previous step); all cdiv(tokens, block) (the state at every block
    boundary, for prefix-cache hits)."""
    if mamba_mode == "all":
        return -(-tokens // block_size)
    return 2 if mamba_mode == "align" else 1


def mamba_cache_mode(spec: ModelSpec, prefix_caching: bool, mode: str | None) -> str:
    """The mamba_cache_mode vLLM runs ``spec`` with. Prefix caching off: none (vLLM resets any
    other mode to none, so naming one without prefix caching is refused here). On, for a
    model with state layers beside attention: the mode given, else all when its state layers
    are Mamba-2 (the kernels whose chunk the block aligns to; their model classes support
    Mamba prefix caching), else align (MambaModelConfig.verify_and_update_config). A model
    without state layers keeps none; one of state layers only is not modelled."""
    if mode is not None and mode not in MAMBA_CACHE_MODES:
        raise SpecError(f"unknown mamba cache mode {quoted(mode)}; expected one of "
                        f"{', '.join(MAMBA_CACHE_MODES)}", field="mamba_cache_mode", value=mode)
    if not state_page_bytes(spec, 1, "bf16"):
        if mode not in (None, "none"):
            raise SpecError(f"mamba cache mode {mode} keeps state pages, and the model has no "
                            "state layers (Mamba, gated DeltaNet)", field="mamba_cache_mode",
                            value=mode)
        return "none"
    if not prefix_caching:
        if mode not in (None, "none"):
            raise SpecError(f"mamba cache mode {mode} keeps state pages for prefix caching, "
                            "which is off (vLLM sets the mode to none without it)",
                            field="mamba_cache_mode", value=mode)
        return "none"
    if not spec.attention_layers:
        raise SpecError("prefix caching of a model of state layers only is not modelled "
                        "(vLLM keeps its state blocks by max_model_len)",
                        field="enable_prefix_caching", value=True)
    if mode == "none":
        raise SpecError("with prefix caching vLLM keeps state pages in mode align or all, "
                        "not none", field="mamba_cache_mode", value=mode)
    if mode == "all" and not spec.ssm_chunk:
        raise SpecError("mamba cache mode all aligns the block to the Mamba-2 scan's chunk, "
                        "which this model's state layers have not (vLLM falls back to align)",
                        field="mamba_cache_mode", value=mode)
    return mode or ("all" if spec.ssm_chunk else "align")


def mla_block_size(spec: ModelSpec, hardware: Accelerator, dcp: int = 1) -> int:
    """An MLA model's block as vLLM's CUDA platform forces it (``vllm/platforms/cuda.py`` at
    ``002db495``, ``check_and_update_config``): FlashMLA on Hopper, 64 tokens; on Blackwell
    FlashInfer MLA (64) when qk_nope_head_dim is 128 and decode context parallelism is off,
    else CUTLASS MLA (128: FlashInfer MLA returns no log-sum-exp for DCP); 16 elsewhere
    (Triton MLA)."""
    from specsheet.plan.vllm_layout import generation

    kind = generation(hardware)
    if kind == "sm90":
        return 64
    if kind == "sm100":
        return 64 if spec.head_dim - spec.qk_rope_head_dim == 128 and dcp == 1 else 128
    return BLOCK_SIZE


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
        if kind in STATE_KINDS:
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
                 block_size: int = 16, mamba_mode: str = "none") -> int:
    """Blocks one request of ``tokens`` tokens holds in a layer of the group
    (max_memory_usage_bytes / page size): cdiv(T, block) for full attention; for a window W,
    cdiv(min(W - 1 + max_num_batched_tokens, T), block) + 1 (SlidingWindowSpec); for a state
    group the pages of its mamba_cache_mode (``state_pages``; MambaSpec adds
    num_speculative_blocks, no speculative decoding here)."""
    if group.state:
        return state_pages(mamba_mode, tokens, block_size)
    if not group.window:
        return -(-tokens // block_size)
    return -(-min(group.window - 1 + batched_tokens, tokens) // block_size) + 1


# DeepSeek V3.2's sparse-MLA cache layout (--kv-dtype fp8_ds_mla): one token of one layer is
# 512 fp8 latent values, 4 fp32 scales (one per 128 values) and 64 bf16 rotary values:
# 512 + 4 x 4 + 64 x 2 = 656 bytes (v1/kv_cache_interface.py at bc8282e6,
# MLAAttentionSpec.real_page_size_bytes: "return self.block_size * 656"; the layout is
# FlashMLA sparse's, v1/attention/backends/mla/flashmla_sparse.py), in blocks of 64 tokens
FP8_DS_MLA = "fp8_ds_mla"
FP8_DS_MLA_TOKEN_BYTES = 512 + 4 * 4 + 64 * 2
FP8_DS_MLA_BLOCK = 64


def check_kv_layout(spec: ModelSpec, layout: str | None) -> None:
    """fp8_ds_mla holds MLA's latent of 512 and rotary key of 64 only."""
    if layout is None:
        return
    if layout != FP8_DS_MLA:
        raise SpecError(f"unknown KV layout {quoted(layout)}", field="kv_dtype", value=layout)
    if not (spec.latent_attention and spec.kv_lora_rank == 512 and spec.qk_rope_head_dim == 64):
        raise SpecError("fp8_ds_mla is DeepSeek V3.2's cache of a multi-head latent attention "
                        "of kv_lora_rank 512 and qk_rope_head_dim 64; this model has "
                        f"kv_lora_rank {spec.kv_lora_rank} and qk_rope_head_dim "
                        f"{spec.qk_rope_head_dim}", field="kv_dtype", value=layout)

