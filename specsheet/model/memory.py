"""Bytes: weight memory and the KV cache, as exact integers.

The KV cache holds, per layer and position, the keys and values (2 x kv_heads x head_dim values)
or, with multi-head latent attention, the compressed latent (kv_lora_rank + qk_rope_head_dim, as
DeepSeek's inference code caches it; transformers caches the decompressed keys and values).
A sliding-window layer holds at most ``sliding_window`` positions.

Sizes are counted in bits per element and rounded up to whole bytes once, at the end
(int4 packs two values in a byte). These are plain element types: the scales and zero points of
a quantized checkpoint are quant/'s (``--quant``); an fp8 KV cache's per-tensor scales live with
the weights, not in a request's cache.
"""

from typing import NamedTuple

from specsheet.errors import SpecError, did_you_mean
from specsheet.model.spec import ModelSpec

DTYPE_BITS: dict[str, int] = {
    "fp32": 32,
    "fp16": 16,
    "bf16": 16,
    "fp8": 8,
    "int8": 8,
    "int4": 4,
}
DEFAULT_DTYPE = "bf16"


def check_dtype(dtype: str, option: str = "dtype") -> str:
    """Return ``dtype`` if it is known, else raise SpecError naming the option."""
    if dtype not in DTYPE_BITS:
        raise SpecError(
            f"{option}: unknown dtype {dtype!r}{did_you_mean(dtype, DTYPE_BITS)}; "
            f"expected one of {', '.join(DTYPE_BITS)}"
        )
    return dtype


def bytes_for(elements: int, dtype: str) -> int:
    """Bytes to store ``elements`` values of ``dtype``: ceil(elements x bits / 8)."""
    return -(-elements * DTYPE_BITS[check_dtype(dtype)] // 8)


class KVCache(NamedTuple):
    """The key/value cache of one request of ``tokens`` tokens."""

    tokens: int  # T, the request's tokens
    dtype: str  # element type
    elements_per_token: int  # one token in every layer
    bytes_per_token: int  # one token in every layer, in ``dtype``
    bytes_per_request: int  # all T tokens; a windowed layer holds min(T, window) of them


def kv_elements_per_layer(spec: ModelSpec) -> int:
    """Cached values per token in one layer: k x (d_h + d_v) (K and V), or for multi-head
    latent attention the latent, kv_lora_rank + qk_rope_head_dim."""
    if spec.latent_attention:
        return spec.kv_lora_rank + spec.qk_rope_head_dim
    return spec.kv_heads * (spec.head_dim + spec.v_head_dim)


def kv_elements_per_token(spec: ModelSpec) -> int:
    """Cached values per token, all layers: 2 x L x kv_heads x head_dim for standard attention."""
    return spec.layers * kv_elements_per_layer(spec)


def kv_positions(spec: ModelSpec, tokens: int) -> int:
    """Positions held over all layers for a request of T tokens: T in a full-attention layer,
    min(T, window) in a sliding-window layer."""
    windowed = len(spec.sliding_layers)
    return (spec.layers - windowed) * tokens + windowed * min(tokens, spec.sliding_window)


def kv_cache(spec: ModelSpec, tokens: int, dtype: str = DEFAULT_DTYPE) -> KVCache:
    """KV cache of a request of ``tokens`` tokens: positions held x values per layer x bytes."""
    per_layer = kv_elements_per_layer(spec)
    return KVCache(
        tokens=tokens,
        dtype=dtype,
        elements_per_token=spec.layers * per_layer,
        bytes_per_token=bytes_for(spec.layers * per_layer, dtype),
        bytes_per_request=bytes_for(kv_positions(spec, tokens) * per_layer, dtype),
    )
