"""Where vLLM's layout differs from the checkpoint's arithmetic: the MXFP4 MoE kernels' padding.

vLLM pads the routed experts of an MXFP4 checkpoint (gpt-oss) to the widths its MoE kernel needs
(``vllm/model_executor/layers/quantization/mxfp4.py`` at commit ``007d5005``,
``Mxfp4MoEMethod.create_weights`` and ``get_mxfp4_backend``; docs/serving.md). With E experts on
a GPU, hidden size H and expert width I per GPU (I_full / tp, or I_full with expert parallelism):

- marlin: I' = ceil128(I), H' = ceil256(H); w13 [E, 2I', H'/2] + scales [E, 2I', H'/32] + bf16
  bias [E, 2I']; w2 [E, H', I'/2] + scales [E, H', I'/32] + bf16 bias [E, H'];
- flashinfer (SM100): I' = ceil256(I), H' = ceil256(H), the same tensors;
- triton: I' = ceil64(I), H unchanged, then triton_kernels' Hopper swizzle pads the stored
  tensors (``hopper_value.py`` ``_padded_shape``: the packed-byte axis to 64, the other to 256;
  ``hopper_scale.py``: scale rows to 256, the K/32 axis to 2) and the biases become fp32.

The kernel vLLM picks by GPU generation (``get_mxfp4_backend``, v0.14.1): Blackwell (SM100)
FlashInfer, Hopper (SM90) Triton, the others (Ampere, Ada: no native FP4) Marlin.
"""

from __future__ import annotations

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.hardware.catalog import Accelerator
from specsheet.model.spec import ModelSpec
from specsheet.plan.parallel import Parallel

VLLM_VERSION = "0.14.1"  # the release whose rules specsheet follows (docs/serving.md)
MOE_KERNELS = ("marlin", "triton", "flashinfer")
_HOPPER = ("h100", "h200", "h800", "h20", "gh200")
_BLACKWELL = ("b200", "b300", "gb200", "gb300")


class Engine(NamedTuple):
    """The engine whose layout the plan follows."""

    name: str
    version: str


ENGINE = Engine("vllm", VLLM_VERSION)


def generation(hardware: Accelerator) -> str:
    """sm100 (Blackwell data centre), sm90 (Hopper) or other, by the catalog's name."""
    name = hardware.name.lower()
    if name.startswith(_BLACKWELL):
        return "sm100"
    if name.startswith(_HOPPER):
        return "sm90"
    return "other"


def default_moe_kernel(hardware: Accelerator) -> str:
    """The MXFP4 MoE kernel vLLM picks on ``hardware`` (get_mxfp4_backend)."""
    return {"sm100": "flashinfer", "sm90": "triton"}.get(generation(hardware), "marlin")


def check_moe_kernel(kernel: str | None) -> None:
    if kernel is not None and kernel not in MOE_KERNELS:
        raise SpecError(f"unknown MoE kernel {quoted(kernel)}; expected one of "
                        f"{', '.join(MOE_KERNELS)}", field="moe_kernel", value=kernel)


def _up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def mxfp4_expert_bytes(spec: ModelSpec, layout: Parallel, layers: int, kernel: str) -> int:
    """Bytes of the routed experts of ``layers`` MoE layers on one GPU as ``kernel`` stores
    them (see the module docstring)."""
    check_moe_kernel(kernel)
    h = spec.d_model
    if layout.ep > 1:
        experts, width = -(-spec.experts // layout.ep), spec.expert_d_ff
    else:
        experts, width = spec.experts, spec.expert_d_ff // layout.tp
    if kernel == "triton":
        i = _up(width, 64)
        w13 = _up(h // 2, 64) * _up(2 * i, 256) + _up(2 * i, 256) * _up(h // 32, 2)
        w2 = _up(i // 2, 64) * _up(h, 256) + _up(h, 256) * _up(i // 32, 2)
        bias = (2 * i + h) * 4
    else:
        i = _up(width, 128 if kernel == "marlin" else 256)
        hp = _up(h, 256)
        w13 = 2 * i * hp // 2 + 2 * i * hp // 32
        w2 = hp * i // 2 + hp * i // 32
        bias = (2 * i + hp) * 2 if spec.expert_bias else 0
    if not spec.expert_bias and kernel == "triton":
        bias = 0
    return layers * experts * (w13 + w2 + bias)


def rotary_cache_bytes(spec: ModelSpec, dtype: str | None) -> int:
    """The rotary embedding's cos/sin cache vLLM allocates on every GPU that holds attention:
    [max_position, rotary_dim] in the model's dtype (fp32 only for an fp32 model), one per GPU,
    since ``get_rope`` hands every layer the same instance (``_ROPE_DICT``). vLLM's
    ``RotaryEmbedding.__init__`` / ``_compute_cos_sin_cache``
    (``model_executor/layers/rotary_embedding``): cos and sin of rotary_dim / 2 each,
    concatenated; max_position is the config's max_position_embeddings (DeepSeek's YaRN:
    original_max_position_embeddings x factor, the same figure). rotary_dim is head_dim, or
    qk_rope_head_dim with MLA; a partial rotary factor and a second cache (Gemma 3's local
    layers, Phi-3's LongRoPE) are not in the spec, so for those models it is an estimate."""
    if spec.positions != "rotary" or not spec.attention_layers:
        return 0
    rotary_dim = spec.qk_rope_head_dim if spec.latent_attention else spec.head_dim
    return spec.context * rotary_dim * (4 if dtype == "fp32" else 2)


DEFAULT_MAX_LORA_RANK = 16  # LoRAConfig.max_lora_rank


def lora_slot_bytes(spec: ModelSpec, tp: int, layers: range, max_loras: int, rank: int,
                    dtype: str | None) -> int:
    """The adapter slots vLLM preallocates on one GPU with --enable-lora: for every wrapped
    Linear (qkv_proj, o_proj, gate_up_proj, down_proj) and each of its slices, A [max_loras,
    1, rank, input] and B [max_loras, 1, output, rank] in the model's dtype, zeros until an
    adapter is loaded (``vllm/lora/layers/base_linear.py`` at ``01235a49``,
    ``create_lora_weights``; ``column_parallel_linear.py`` at ``0163de2b``: a column-parallel
    slice keeps the whole input and its output per partition; a row-parallel layer its input
    per partition and the whole output). Per layer: qkv 3 x r x d + r x (q + k + v rows on the
    GPU); o r x (h d_v / tp) + d x r; gate_up 2 x r x d + r x 2 f / tp; down r x f / tp + d x r.
    Modelled for dense attention layers (MoE experts, MLA and state layers are wrapped by other
    classes: refused)."""
    if spec.experts or spec.latent_attention or (spec.layer_types and
                                                 set(spec.layer_types) != {"attention"}):
        raise SpecError("multi-LoRA slots are modelled for dense attention models (vLLM wraps "
                        "MoE experts, MLA and state layers with other classes)",
                        field="max_loras", value=max_loras)
    d, hd = spec.d_model, spec.head_dim
    kv = max(1, spec.kv_heads // tp)
    q_rows = spec.heads // tp * hd * (2 if spec.attention_gate else 1)
    qkv = 3 * rank * d + rank * (q_rows + kv * hd + kv * spec.v_head_dim)
    o = rank * (spec.heads * spec.v_head_dim // tp) + d * rank
    parts = 2 if spec.mlp == "gated" else 1
    mlp = parts * rank * d + rank * parts * spec.d_ff // tp + rank * spec.d_ff // tp + d * rank
    mlps = sum(1 for i in layers if i not in spec.no_mlp_layers)
    elements = max_loras * (len(layers) * (qkv + o) + mlps * mlp)
    return elements * (4 if dtype == "fp32" else 2)

