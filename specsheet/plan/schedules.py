"""Pipeline schedules and the traffic of context and expert parallelism, for a training plan.

- In-flight activations on the first stage, in layers' worth (each of a stage's L / pp layers
  held for every micro-batch in flight): 1F1B (PipeDream-Flush, Narayanan et al. 2021) holds pp
  micro-batches, L layers; the interleaved schedule with v virtual stages a GPU holds
  L (1 + (pp - 1) / (pp v)) (Korthikanti et al. 2022, section 4.2.3); zero-bubble's ZB-H1
  (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", section 3.1) keeps 1F1B's peak, L.
- Bubble, as a fraction of the ideal step time with m micro-batches a step: (pp - 1) / m for
  1F1B, (pp - 1) / (v m) interleaved (Narayanan et al. 2021, section 2.2), and about a third
  of 1F1B's for ZB-H1 (Qi et al. 2023: its bubble is (pp - 1)(T_F + T_B - T_W) against 1F1B's
  (pp - 1)(T_F + T_B + T_W), with T_F = T_B = T_W: 1/3). An estimate: real passes are uneven.
- Expert parallelism's all-to-all (Megatron Core's token dispatcher): each MoE layer sends
  every token's hidden state to its k experts and gathers k results back, forward and again in
  the backward: 4 k d values a token a layer, 2 bytes each, the (ep - 1) / ep share of them
  leaving the GPU. An estimate of the volume (load-balanced routing), not of time.
- Context parallelism's ring (Megatron Core's context parallel, torchtitan's ring attention):
  each rank passes its K and V block round the ring, cp - 1 steps a layer in the forward, and
  the backward sends K, V and their gradients: 3 (cp - 1) blocks of K and V a layer in all.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from specsheet.model.spec import ModelSpec
from specsheet.plan.parallel import Parallel, pp_partition


def in_flight_layers(spec: ModelSpec, layout: Parallel) -> Fraction:
    """Layers' worth of activations the first pipeline stage holds at its peak."""
    L, pp = spec.layers, layout.pp
    if pp == 1:
        return Fraction(L)
    if layout.schedule == "interleaved":
        return L * (1 + Fraction(pp - 1, pp * layout.vpp))
    # 1f1b, zero-bubble (ZB-H1): stage i holds pp - i micro-batches of its layers
    return Fraction(max(len(layers) * (pp - i) for i, layers in enumerate(pp_partition(L, pp))))


def bubble_fraction(layout: Parallel, micro_batches: int) -> float:
    """The pipeline bubble over the ideal step time (0 without a pipeline)."""
    pp = layout.pp
    if pp == 1:
        return 0.0
    if layout.schedule == "interleaved":
        return (pp - 1) / (layout.vpp * micro_batches)
    if layout.schedule == "zero-bubble":
        return (pp - 1) / (3 * micro_batches)
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
    if layout.ep > 1:
        moe = max(sum(1 for layer in layers if _is_moe(spec, layer)) for layers in stages)
        a2a = tokens * moe * 4 * spec.experts_per_token * spec.d_model * 2 \
            * (layout.ep - 1) // layout.ep
    ring = 0
    if layout.cp > 1:
        kv = 2 * spec.kv_heads * spec.head_dim // layout.tp if not spec.latent_attention \
            else 2 * spec.heads * spec.head_dim // layout.tp
        ring = micro_batch * micro_batches * (seq // layout.cp) * kv * 2 * len(stage) \
            * 3 * (layout.cp - 1)
    return Traffic(all_to_all_bytes=a2a, ring_bytes=ring)


def _is_moe(spec: ModelSpec, layer: int) -> bool:
    return bool(spec.experts) and layer not in spec.dense_layers \
        and layer not in spec.no_mlp_layers
