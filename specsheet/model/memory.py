"""Bytes: weight memory and the KV cache, as exact integers.

The KV cache holds, per layer and position, the keys and values (2 x kv_heads x head_dim values)
or, with multi-head latent attention, the compressed latent (kv_lora_rank + qk_rope_head_dim, as
DeepSeek's inference code caches it; transformers caches the decompressed keys and values).
A sliding-window layer holds at most ``sliding_window`` positions. Only attention layers keep a
KV cache; a state-space or linear-attention layer keeps a fixed state per request instead (see
``state_elements``), whatever the request's length.

Sizes are counted in bits per element and rounded up to whole bytes once, at the end
(int4 packs two values in a byte). These are plain element types: the scales and zero points of
a quantized checkpoint are quant/'s; an fp8 KV cache's per-tensor scales live with
the weights, not in a request's cache.
"""


from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.model.params import ssm_conv_channels
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


def check_dtype(dtype: str, field: str = "dtype") -> str:
    """Return ``dtype`` if it is known, else raise SpecError about ``field`` (the input that
    gave it: dtype, kv_dtype)."""
    if dtype not in DTYPE_BITS:
        raise SpecError(f"unknown dtype {quoted(dtype)}{did_you_mean(dtype, DTYPE_BITS)}; expected "
                        f"one of {', '.join(DTYPE_BITS)}", field=field, value=dtype)
    return dtype


def bytes_for(elements: int, dtype: str) -> int:
    """Bytes to store ``elements`` values of ``dtype``: ceil(elements x bits / 8)."""
    return -(-elements * DTYPE_BITS[check_dtype(dtype)] // 8)


# transformers keeps the recurrent (SSM and DeltaNet) states in float32 whatever the model's
# dtype; the convolution states are in the model's (the cache's) dtype
STATE_DTYPE = "fp32"


class KVCache(NamedTuple):
    """The per-request cache of one request of ``tokens`` tokens: the attention layers' keys and
    values, and the fixed state of the state-space and linear-attention layers."""

    tokens: int  # T, the request's tokens
    dtype: str  # element type of keys, values and convolution states
    elements_per_token: int  # one token in every attention layer
    bytes_per_token: int  # one token in every attention layer, in ``dtype``
    bytes_per_request: int  # all T tokens (a windowed layer holds min(T, window)) + state_bytes
    state_bytes: int = 0  # convolution states (``dtype``) and recurrent states (fp32)
    conv_state_elements: int = 0  # every layer's convolution state
    recurrent_state_elements: int = 0  # every layer's SSM or DeltaNet state

    @property
    def kv_bytes(self) -> int:
        """The attention layers' keys and values at T tokens."""
        return self.bytes_per_request - self.state_bytes


def kv_elements_per_layer(spec: ModelSpec) -> int:
    """Cached values per token in one layer: k x (d_h + d_v) (K and V), or for multi-head
    latent attention the latent, kv_lora_rank + qk_rope_head_dim."""
    if spec.latent_attention:
        return spec.kv_lora_rank + spec.qk_rope_head_dim
    return spec.kv_heads * (spec.head_dim + spec.v_head_dim)


def kv_elements_per_token(spec: ModelSpec) -> int:
    """Cached values per token, all attention layers: 2 x L x kv_heads x head_dim for standard
    attention."""
    return spec.attention_layers * kv_elements_per_layer(spec)


def kv_positions(spec: ModelSpec, tokens: int) -> int:
    """Positions held over all attention layers for a request of T tokens: T in a
    full-attention layer, min(T, window) in a sliding-window layer."""
    windowed = len(spec.sliding_layers)
    return (spec.attention_layers - windowed) * tokens + windowed * min(
        tokens, spec.sliding_window)


def conv_state_elements(spec: ModelSpec, kind: str) -> int:
    """One layer's convolution state: the last ssm_conv inputs of each convolution channel
    (d_in for Mamba, d_in + 2·G·N for Mamba-2, 2·H_k·d_k + H_v·d_v for gated DeltaNet)."""
    return ssm_conv_channels(spec, kind) * spec.ssm_conv


def recurrent_state_elements(spec: ModelSpec, kind: str) -> int:
    """One layer's recurrent state: d_in x N (Mamba), H x (d_in / H) x N = d_in x N
    (Mamba-2), H_v x d_k x d_v (gated DeltaNet)."""
    if kind in ("mamba", "mamba2", "hybrid"):
        return spec.ssm_inner * spec.ssm_state
    if kind == "linear_attention":
        return spec.linear_value_heads * spec.linear_key_dim * spec.linear_value_dim
    return 0


def kv_cache(spec: ModelSpec, tokens: int, dtype: str = DEFAULT_DTYPE) -> KVCache:
    """Cache of a request of ``tokens`` tokens: positions held x values per layer x bytes, and
    the fixed state of the other layers (convolution states in ``dtype``, recurrent states in
    float32, as transformers keeps them)."""
    per_layer = kv_elements_per_layer(spec)
    layers = spec.attention_layers
    conv = sum(conv_state_elements(spec, kind) for kind in spec.layer_types)
    recurrent = sum(recurrent_state_elements(spec, kind) for kind in spec.layer_types)
    state = bytes_for(conv, dtype) + bytes_for(recurrent, STATE_DTYPE) if conv or recurrent \
        else 0
    return KVCache(
        tokens=tokens,
        dtype=dtype,
        elements_per_token=layers * per_layer,
        bytes_per_token=bytes_for(layers * per_layer, dtype),
        bytes_per_request=bytes_for(kv_positions(spec, tokens) * per_layer, dtype) + state,
        state_bytes=state,
        conv_state_elements=conv,
        recurrent_state_elements=recurrent,
    )
