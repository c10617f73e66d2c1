"""Pipeline schedules and the traffic of context and expert parallelism, for a training plan.

- In-flight activations on the first stage, in layers' worth (each of a stage's L / pp layers
  held for every micro-batch in flight): 1F1B (PipeDream-Flush, Narayanan et al. 2021) holds pp
  micro-batches, L layers; the interleaved schedule with v virtual stages a GPU holds
  L (1 + (pp - 1) / (pp v)) (Korthikanti et al. 2022, section 4.2.3); zero-bubble's ZB-H1
  (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", section 3.1) keeps 1F1B's peak, L.
  DualPipe (DeepSeek-V3 technical report, section 3.2.1, Table 2; deepseek-ai/DualPipe,
  dualpipe.py ``DualPipe.step``): rank r holds two chunks, stages h and pp - 1 - h of the model
  (h = min(r, pp - 1 - r)), so two copies of the parameters (Table 2: "2x"); at its peak (the
  first F0 of step 4, "nF0B1F1B0") it holds pp - h micro-batches of stage h and h + 1 of stage
  pp - 1 - h: PP + 1 chunks in all (Table 2), for every rank.
- Bubble, as a fraction of the ideal step time with m micro-batches a step: (pp - 1) / m for
  1F1B, (pp - 1) / (v m) interleaved (Narayanan et al. 2021, section 2.2), and about a third
  of 1F1B's for ZB-H1 (Qi et al. 2023: its bubble is (pp - 1)(T_F + T_B - T_W) against 1F1B's
  (pp - 1)(T_F + T_B + T_W), with T_F = T_B = T_W: 1/3). DualPipe: (PP/2 - 1)(F&B + B - 3W)
  (Table 2) against the ideal m (F + B); with F = W = t, a full backward B = 2t and the
  overlapped pair F&B = F + B (its overlap hides communication, not computation): (pp - 2) t
  against 3 t m, (pp - 2) / (3 m). An estimate: real passes are uneven.
- Expert parallelism's all-to-all (Megatron Core's token dispatcher): each MoE layer sends
  every token's hidden state to its k experts and gathers k results back, forward and again in
  the backward: 4 k d values a token a layer, 2 bytes each, the (ep - 1) / ep share of them
  leaving the GPU. An estimate of the volume (load-balanced routing), not of time.
- Context parallelism's ring (Megatron Core's context parallel, torchtitan's ring attention):
  each rank passes its K and V block round the ring, cp - 1 steps a layer in the forward, and
  the backward sends K, V and their gradients: 3 (cp - 1) blocks of K and V a layer in all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.model.spec import ModelSpec
from specsheet.plan.parallel import Parallel, pp_partition

if TYPE_CHECKING:  # fractions (and its import of decimal) only where a share is not whole
    from fractions import Fraction


def in_flight_stages(spec: ModelSpec, layout: Parallel) -> list[list[tuple[range, int]]] | None:
    """For each kind of GPU in the pipeline, the stages (their layers) it runs and the
    micro-batches of each it holds at its peak; None for the interleaved schedule (its peak is
    Korthikanti's average, ``in_flight_layers``)."""
    L, pp = spec.layers, layout.pp
    if pp == 1:
        return [[(range(L), 1)]]
    stages = pp_partition(L, pp)
    if layout.schedule == "interleaved":
        return None
    if layout.schedule == "dualpipe":  # rank h and rank pp - 1 - h hold the same pair
        return [[(stages[h], pp - h), (stages[pp - 1 - h], h + 1)] for h in range(pp // 2)]
    # 1f1b, zero-bubble (ZB-H1): stage i holds pp - i micro-batches of its layers
    return [[(layers, pp - i)] for i, layers in enumerate(stages)]


def in_flight_layers(spec: ModelSpec, layout: Parallel) -> int | Fraction:
    """Layers' worth of activations the busiest GPU holds at its peak (a layer of one
    micro-batch each): a whole number, or the interleaved schedule's average, a Fraction."""
    L, pp = spec.layers, layout.pp
    stages = in_flight_stages(spec, layout)
    if stages is None:
        from fractions import Fraction

        return L * (1 + Fraction(pp - 1, pp * layout.vpp))
    return max(sum(len(layers) * count for layers, count in gpu) for gpu in stages)


def held_stages(layout: Parallel) -> list[tuple[int, ...]]:
    """The pipeline stages each GPU holds the parameters of: one, or DualPipe's two."""
    pp = layout.pp
    if layout.schedule == "dualpipe" and pp > 1:
        return [(h, pp - 1 - h) for h in range(pp // 2)]
    return [(stage,) for stage in range(pp)]


def bubble_fraction(layout: Parallel, micro_batches: int) -> float:
    """The pipeline bubble over the ideal step time (0 without a pipeline)."""
    pp = layout.pp
    if pp == 1:
        return 0.0
    if layout.schedule == "interleaved":
        return (pp - 1) / (layout.vpp * micro_batches)
    if layout.schedule == "zero-bubble":
        return (pp - 1) / (3 * micro_batches)
    if layout.schedule == "dualpipe":
        return (pp - 2) / (3 * micro_batches)
    return (pp - 1) / micro_batches


class Traffic(NamedTuple):
    """Bytes one GPU sends a step for expert and context parallelism (estimates)."""

    all_to_all_bytes: int  # expert parallelism's dispatch and combine, forward and backward
    ring_bytes: int  # context parallelism's K and V (and their gradients) round the ring


def traffic(spec: ModelSpec, layout: Parallel, seq: int, micro_batch: int,
            micro_batches: int) -> Traffic:
    """Per GPU and step: ``micro_batches`` micro-batches of ``micro_batch`` sequences of
    ``seq`` tokens, each GPU holding seq / cp of them and its stage's layers."""
    stages = pp_partition(spec.layers, layout.pp)
    stage = stages[0]
    tokens = micro_batch * micro_batches * (seq // layout.cp) // max(1, layout.tp
                                                                    if layout.sp else 1)
    a2a = 0
    if layout.ep > 1:  # DualPipe: half the micro-batches through each of a rank's two stages
        moe = [sum(1 for layer in layers if is_moe_layer(spec, layer)) for layers in stages]
        held = [(sum(moe[i] for i in gpu), len(gpu)) for gpu in held_stages(layout)]
        from fractions import Fraction

        layers, share = max(held, key=lambda h: Fraction(*h))
        a2a = tokens * layers * 4 * spec.experts_per_token * spec.d_model * 2 \
            * (layout.ep - 1) // (layout.ep * share)
    ring = 0
    if layout.cp > 1:
        kv = 2 * spec.kv_heads * spec.head_dim // layout.tp if not spec.latent_attention \
            else 2 * spec.heads * spec.head_dim // layout.tp
        ring = micro_batch * micro_batches * (seq // layout.cp) * kv * 2 * len(stage) \
            * 3 * (layout.cp - 1)
    return Traffic(all_to_all_bytes=a2a, ring_bytes=ring)


def is_moe_layer(spec: ModelSpec, layer: int) -> bool:
    """Whether layer ``layer`` (from 0) has routed experts."""
    return bool(spec.experts) and layer not in spec.dense_layers \
        and layer not in spec.no_mlp_layers
