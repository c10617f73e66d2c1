"""The activations a training step keeps for its backward, on the busiest GPU.

Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models"),
section 4, for a GPT block: s b h (34 + 5 a s / h) bytes a layer in 16 bits, with the
tensor-parallel, sequence-parallel, selective and full-recompute forms. The terms are derived
here from the named tensors a block keeps (``layer_parts``), so that grouped-query attention,
gated MLPs, mixtures of experts and latent attention follow the same reasoning; for the GPT-3
shape they are the paper's formulas exactly.

With ``cache="fp8"`` (the DeepSeek-V3 technical report, section 3.3.3, "Low-Precision
Activation"): every value kept only as the input of a Linear operator's backward is cached in
FP8 (1 byte) with one fp32 scale a 1 x 128 tile (section 3.3.2); the input of the output
projection in E5M6 (12 bits), also with its scales; the inputs of the MoE experts' SwiGLU in
FP8 too; everything else keeps its precision: the norms' inputs, the attention operator's q, k
and v, the router's fp32 logits, a dense MLP's SwiGLU inputs and the 1-byte dropout masks.
"""

from __future__ import annotations

import math

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import ModelSpec
from specsheet.plan.parallel import Parallel
from specsheet.plan.schedules import in_flight_layers, in_flight_stages, is_moe_layer

RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "moe_act")  # Megatron Core's
ACTIVATION_CACHES = ("bf16", "fp8")  # how the kept values are stored (16-bit, or §3.3.3's)
SCALE_GROUP = 128  # values sharing one fp32 scale (a 1 x 128 tile, DeepSeek-V3 §3.3.2)


class Part(NamedTuple):
    """One tensor a layer keeps, per token: its values, and its bits under each cache."""

    name: str
    values: int  # per token
    bits: int  # as kept in 16-bit training (masks 8, fp32 logits 32)
    fp8_bits: int  # under cache fp8 (8: FP8, 12: E5M6, else unchanged)
    inside_tp: bool  # split by tensor parallelism
    dropped_by: str = ""  # the recompute module that rebuilds it in the backward


def layer_parts(spec: ModelSpec, moe_layer: bool) -> tuple[Part, ...]:
    """The tensors one layer keeps for its backward (Korthikanti's accounting, term by term):
    attention keeps the norm's output (its input: 2sh), q, k and v, the output projection's
    input (2sh) and a dropout mask (sh); the MLP keeps its input (2sh), the activation's
    input(s) and output and a mask (sh); the two norms their inputs (4sh). Derived for other
    shapes the same way (our extension, not the paper's): q, k and v by their widths, a gated
    MLP keeps gate, up and their product, an MoE layer its router's fp32 logits and, a token,
    the k experts' and the shared experts' inner activations; MLA keeps its latents too."""
    d, h = spec.d_model, spec.heads
    if spec.latent_attention:
        qkv = h * (2 * spec.head_dim + spec.v_head_dim)
        latents = spec.q_lora_rank + spec.kv_lora_rank
        rope = spec.qk_rope_head_dim
    else:
        qkv = h * spec.head_dim + spec.kv_heads * (spec.head_dim + spec.v_head_dim)
        latents = rope = 0
    gated = spec.mlp == "gated"
    # an MoE layer's inner width: its k routed experts' and its shared experts'
    routed = spec.experts_per_token * spec.expert_d_ff if moe_layer else 0
    width = routed + spec.shared_d_ff if moe_layer else spec.d_ff
    # a gated MLP keeps gate and up (the SwiGLU's inputs, FP8 in the experts, section 3.3.3
    # (2)) and their product (a Linear's input); an ungated one the activation's input and
    # output
    act_in = 2 * width if gated else width
    parts = [
        Part("norm inputs", 2 * d, 16, 16, False),
        Part("attention input (a norm's output)", d, 16, 8, False, "layernorm"),
        Part("MLP input (a norm's output)", d, 16, 8, False, "layernorm"),
        Part("dropout masks", 2 * d, 8, 8, False),
        Part("q, k, v", qkv, 16, 16, True, "mla_up_proj" if spec.latent_attention else ""),
        Part("MLA latents", latents, 16, 8, True),
        Part("MLA rotary key", rope, 16, 16, True),
        Part("attention output (the output projection's input)", h * spec.v_head_dim, 16, 12,
             True),
        Part("MLP activation input", act_in, 16, 8 if moe_layer and gated else 16, True),
        Part("MLP activation output, routed experts", routed, 16, 8, True, "moe_act"),
        Part("MLP activation output", width - routed if moe_layer else width, 16, 8, True),
        Part("router logits (fp32)", spec.experts if moe_layer else 0, 32, 32, True),
    ]
    return tuple(p for p in parts if p.values)


class ActivationTerms(NamedTuple):
    """Bytes one layer keeps for its backward, per sequence of s tokens (b = 1), split as
    tensor parallelism splits them (Korthikanti et al. 2022, section 4.1; the GPT-3 block in
    16 bits gives 10 s h + 24 s h + 5 a s^2)."""

    outside_tp: int  # norm inputs, the inputs of attention and MLP, the two dropout masks
    inside_tp: int  # q, k, v, the output projection's input, the MLP's inner activations
    scores: int  # softmax output, its dropout mask and output: 5 a s^2 (FlashAttention: none)
    layer_input: int  # what full recomputation keeps: the layer's input, 2 s h


def _part_bytes(part: Part, seq: int, cache: str) -> int:
    bits = part.fp8_bits if cache == "fp8" else part.bits
    scales = 32 * -(-part.values // SCALE_GROUP) if bits in (8, 12) and bits < part.bits \
        else 0  # an fp32 scale a 1 x 128 tile of each FP8 / E5M6 value a token
    return -(-seq * (part.values * bits + scales) // 8)


def activation_terms(spec: ModelSpec, seq: int, moe_layer: bool = False,
                     modules: tuple[str, ...] = ("core_attn",),
                     cache: str = "bf16") -> ActivationTerms:
    """One layer's activations for one sequence of ``seq`` tokens: the parts ``layer_parts``
    names, less those the recompute ``modules`` rebuild in the backward (Megatron Core's
    recompute_modules: layernorm, the norms' outputs; mla_up_proj, MLA's decompressed q, k and
    v; moe_act, the routed experts' activation outputs; core_attn is the s^2 term, which the
    selective form drops), in ``cache``'s widths."""
    outside = inside = 0
    for part in layer_parts(spec, moe_layer):
        if part.dropped_by and part.dropped_by in modules:
            continue
        size = _part_bytes(part, seq, cache)
        if part.inside_tp:
            inside += size
        else:
            outside += size
    return ActivationTerms(outside_tp=outside, inside_tp=inside,
                           scores=5 * spec.heads * seq * seq, layer_input=2 * seq * spec.d_model)


class Activations(NamedTuple):
    """Activation bytes on the busiest GPU for one micro-batch."""

    per_layer: int  # one layer, one sequence (the largest kind of layer)
    layers_held: int  # layers whose activations the busiest stage holds at once
    output: int  # the final norm's input and the fp32 logits (the last stage), one sequence
    per_sequence: int  # everything, one sequence
    micro_batch: int
    total: int  # per_sequence x micro_batch
    form: str  # which of Korthikanti's forms applies


def layer_activation_bytes(terms: ActivationTerms, tp: int, sp: bool, recompute: str,
                           flash: bool) -> int:
    """Korthikanti et al. 2022's forms, per layer (b = 1; ceilings where t does not divide):

    none:       10 s h + 24 s h / t + 5 a s^2 / t           (t = 1: s h (34 + 5 a s / h))
    sp:         (34 s h + 5 a s^2) / t
    selective:  10 s h + 24 s h / t, or 34 s h / t with sp  (the s^2 term recomputed)
    full:       2 s h, or 2 s h / t with sp                 (the layer's input only)

    FlashAttention never stores the s x s scores: the s^2 term goes, as with selective."""
    if recompute == "full":
        return -(-terms.layer_input // tp) if sp else terms.layer_input
    scores = 0 if flash or recompute == "selective" else terms.scores
    if sp:
        return -(-(terms.outside_tp + terms.inside_tp + scores) // tp)
    return terms.outside_tp + -(-(terms.inside_tp + scores) // tp)


def check_cache(cache: str) -> None:
    if cache not in ACTIVATION_CACHES:
        raise SpecError(f"expected one of {', '.join(ACTIVATION_CACHES)}, got {quoted(cache)} (FP8 "
                        "caching is the DeepSeek-V3 report's; other formats are not modelled)",
                        field="activation_cache", value=cache)


def activations(spec: ModelSpec, seq: int, micro_batch: int, layout: Parallel,
                recompute: str, flash: bool, modules: tuple[str, ...] = ("core_attn",),
                cache: str = "bf16") -> Activations:
    """Activations of the busiest GPU for a micro-batch.

    Each GPU holds, at its schedule's peak, some micro-batches of each stage it runs
    (``schedules.in_flight_stages``: 1F1B's first stage pp micro-batches of its layers,
    Korthikanti et al. section 4.2.3; DualPipe's PP + 1 chunks); each layer counted as its kind
    (dense or MoE) keeps. The last stage's output (final norm input 2sh, fp32 logits 4sV, split
    over t) is added for each micro-batch in flight on the stage holding the head. The
    interleaved schedule keeps Korthikanti's L (1 + (pp - 1) / (pp v)) layers of the largest
    kind."""
    check_cache(cache)
    local = seq // layout.cp  # context parallelism: each rank holds seq / cp of a sequence
    selected = modules if recompute == "selective" else ("core_attn",)

    def layer_bytes(moe_layer: bool) -> int:
        terms = activation_terms(spec, local, moe_layer, selected, cache)
        if layout.cp > 1:  # local queries against the whole sequence's keys: 5 a (s / cp) s
            terms = terms._replace(scores=terms.scores * layout.cp)
        return layer_activation_bytes(terms, layout.tp, layout.sp, recompute, flash)

    # every layer without routed experts (a dense MLP's, or none: taken as a dense one's)
    kinds = {False: layer_bytes(False)} if spec.moe_layers < spec.layers else {}
    if spec.moe_layers:
        kinds[True] = layer_bytes(True)
    per_layer = max(kinds.values())
    output = -(-(2 * local * spec.d_model + 4 * local * spec.vocab) // layout.tp)
    held = in_flight_layers(spec, layout)
    stages = in_flight_stages(spec, layout)
    if stages is None:  # interleaved: the paper's average, the largest kind of layer
        per_sequence = -(-per_layer * held.numerator // held.denominator)
        per_sequence += output if layout.pp == 1 else 0
    else:
        last = spec.layers - 1
        per_sequence = max(
            sum(count * (sum(kinds[is_moe_layer(spec, i)] for i in layers)
                         + (output if last in layers else 0))
                for layers, count in gpu)
            for gpu in stages)
    chosen = "selective" if modules == ("core_attn",) else f"selective: {', '.join(modules)}"
    form = {"none": "sp" if layout.sp else "tp" if layout.tp > 1 else "plain",
            "selective": f"{chosen} + sp" if layout.sp else chosen,
            "full": "full + sp" if layout.sp else "full"}[recompute]
    if flash and recompute == "none":
        form += ", FlashAttention (no s^2 term)"
    if cache == "fp8" and recompute != "full":
        form += ", FP8 cache"
    return Activations(per_layer=per_layer, layers_held=math.ceil(held), output=output,
                       per_sequence=per_sequence, micro_batch=micro_batch,
                       total=per_sequence * micro_batch, form=form)
