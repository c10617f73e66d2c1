"""MLX on Apple Silicon: a model's bytes in MLX's affine quantization, to the byte, and its KV
cache, all in the unified memory the GPU may wire (docs/local.md, "MLX").

- ``mx.quantize`` (mlx@846d1762, python/src/ops.cpp; python/mlx/nn/layers/quantized.py): each
  quantized weight [..., K] is stored as uint32 words of ``bits`` bits a value (K x bits / 8
  bytes a row) and, per group of ``group`` values along K, one scale and one bias in the model's
  dtype (bf16: 2 + 2 bytes). ``nn.quantize`` quantizes every Linear and Embedding (mlx-lm's
  SwitchLinear experts too) whose last dimension is whole groups; norms and biases stay bf16.
- A tied head is stored once (mlx-lm's models call ``embed_tokens.as_linear``).
- mlx-lm's KVCache (mlx_lm/models/cache.py, mlx-lm@d78bf58e) grows in steps of 256 tokens, K
  and V of [n_kv_heads, n, head_dim] per layer in the model's dtype; a sliding-window layer keeps
  a RotatingKVCache of at most the window. ``--kv-bits`` (QuantizedKVCache, the same file at
  mlx-lm@02901f4d): K and V each stored as ``mx.quantize`` stores a weight, uint32 words of
  ``bits`` a value and one scale and one bias per group of the head dim in the model's dtype,
  also in 256-token steps; mlx-lm cannot quantize a RotatingKVCache ("RotatingKVCache
  Quantization NYI").
"""

from __future__ import annotations

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import ModelSpec
from specsheet.quant.tensors import model_tensors

KV_STEP = 256  # mlx_lm.models.cache.KVCache.step
DTYPE_BYTES = 2  # bf16, as mlx-community conversions keep scales, biases and norms
KV_BITS = (2, 4, 8)  # those whose words QuantizedKVCache.update_and_fetch sizes exactly
KV_GROUPS = (32, 64, 128)
QUANTIZED_ROLES = ("linear", "router", "shared_gate", "projection", "embedding", "head")


class MLXFormat(NamedTuple):
    name: str
    bits: int
    group: int


FORMATS = {f.name: f for f in (
    MLXFormat("mlx-4bit", 4, 64),  # mlx_lm.convert -q: the default, mlx-community's "4bit"
    MLXFormat("mlx-8bit", 8, 64),
    MLXFormat("mlx-3bit", 3, 64),
    MLXFormat("mlx-6bit", 6, 64),
    MLXFormat("mlx-4bit-g32", 4, 32),
    MLXFormat("mlx-8bit-g32", 8, 32),
    MLXFormat("mlx-4bit-g128", 4, 128),
)}


def check_mlx_format(name: str) -> MLXFormat:
    if name not in FORMATS:
        raise SpecError(f"MLX format {quoted(name)}: expected one of {', '.join(FORMATS)}",
                        field="quant", value=name)
    return FORMATS[name]


def mlx_weight_bytes(spec: ModelSpec, fmt: MLXFormat) -> int:
    """Every stored array of ``spec`` quantized as mlx-lm quantizes it, in bytes."""
    if spec.layer_types and set(spec.layer_types) != {"attention"}:
        raise SpecError("MLX: state-space and linear-attention layers have no layout in "
                        "specsheet yet", field="model")
    total = 0
    for t in model_tensors(spec):
        k = t.in_features
        if t.role in QUANTIZED_ROLES and len(t.shape) >= 2 and k % fmt.group == 0:
            total += t.elements * fmt.bits // 8  # the packed uint32 words
            total += t.elements // fmt.group * 2 * DTYPE_BYTES  # scales and biases
        else:
            total += t.elements * DTYPE_BYTES
    return total


def check_kv_quantization(spec: ModelSpec, bits: int | None, group: int) -> None:
    """SpecError for a quantized cache mlx-lm cannot keep."""
    if bits is None:
        return
    if bits not in KV_BITS:
        raise SpecError(f"KV bits {bits}: expected {', '.join(map(str, KV_BITS))} (the widths "
                        "mlx-lm's QuantizedKVCache packs in whole uint32 words)", field="kv_bits",
                        value=bits)
    if group not in KV_GROUPS:
        raise SpecError(f"KV group size {group}: expected {', '.join(map(str, KV_GROUPS))}",
                        field="kv_group_size", value=group)
    for dim in (spec.head_dim, spec.v_head_dim):
        if dim % group:
            raise SpecError(f"a head of {dim} values is not whole groups of {group}; "
                            "mx.quantize needs them", field="kv_group_size", value=group)
    if spec.sliding_window and spec.sliding_layers:
        raise SpecError("mlx-lm cannot quantize a sliding-window layer's RotatingKVCache "
                        "(\"RotatingKVCache Quantization NYI\")", field="kv_bits", value=bits)


def _row(dim: int, bits: int | None, group: int) -> int:
    """Bytes of one head's K or V at one token: bf16, or packed words + scale + bias."""
    if bits is None:
        return dim * DTYPE_BYTES
    return dim * bits // 8 + dim // group * 2 * DTYPE_BYTES


def mlx_kv_bytes(spec: ModelSpec, ctx: int, bits: int | None = None, group: int = 64) -> int:
    """The KV cache at ``ctx`` tokens: 256-token steps, a window's layers capped at it; with
    ``bits``, QuantizedKVCache's affine words, scales and biases."""
    if spec.latent_attention:
        raise SpecError("MLX: the cache of multi-head latent attention has no layout in "
                        "specsheet yet", field="model")
    check_kv_quantization(spec, bits, group)
    cells = -(-ctx // KV_STEP) * KV_STEP
    sliding = set(spec.sliding_layers) if spec.sliding_window else set()
    types = spec.layer_types or ("attention",) * spec.layers
    per_cell = spec.kv_heads * (_row(spec.head_dim, bits, group) +
                                _row(spec.v_head_dim, bits, group))
    total = 0
    for i, kind in enumerate(types):
        if kind != "attention":
            continue
        n = min(cells, spec.sliding_window) if i in sliding else cells
        total += n * per_cell
    return total
