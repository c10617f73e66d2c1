"""Bytes: weight memory and the KV cache, as exact integers.

Sizes are counted in bits per element and rounded up to whole bytes once, at the end
(int4 packs two values in a byte). Quantization scales and zero points are not counted.
"""

from typing import NamedTuple

from specsheet.errors import SpecError, did_you_mean
from specsheet.spec import ModelSpec

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

    tokens: int  # T, positions held
    dtype: str  # element type
    elements_per_token: int  # 2 (K and V) x L x kv_heads x head_dim
    bytes_per_token: int
    bytes_per_request: int  # for all T tokens


def kv_elements_per_token(spec: ModelSpec) -> int:
    """Cached values per token: 2 (K and V) x L x kv_heads x head_dim."""
    return 2 * spec.layers * spec.kv_heads * spec.head_dim


def kv_cache(spec: ModelSpec, tokens: int, dtype: str = DEFAULT_DTYPE) -> KVCache:
    """KV cache of a request of ``tokens`` tokens: 2 x L x kv_heads x head_dim x T x bytes."""
    per_token = kv_elements_per_token(spec)
    return KVCache(
        tokens=tokens,
        dtype=dtype,
        elements_per_token=per_token,
        bytes_per_token=bytes_for(per_token, dtype),
        bytes_per_request=bytes_for(per_token * tokens, dtype),
    )
