"""LoRA's adapters: the matrices of a model by target, and the trainable parameters of
adapters of rank r on them (Hu et al. 2021). Adafactor's factored states use the same shapes."""

from __future__ import annotations

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import ModelSpec

LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down", "experts")
# the attention and MLP projections; an MoE layer's MLP projections are its experts'
DEFAULT_LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down", "experts")


# ---- the matrices of a model (for LoRA and Adafactor) --------------------------------------

class Matrix(NamedTuple):
    """``count`` linear layers of in_features x out_features, under a LoRA target name."""

    target: str  # q, k, v, o, gate, up, down, experts; "" outside the blocks
    in_features: int
    out_features: int
    copies: int  # how many in the whole model


def _layer_mlp(spec: ModelSpec, width: int, copies: int, target: str | None = None
               ) -> list[Matrix]:
    d = spec.d_model
    names = ("gate", "up") if spec.mlp == "gated" else ("up",)
    rows = [Matrix(target or name, d, width, copies) for name in names]
    return [*rows, Matrix(target or "down", width, d, copies)]


def model_matrices(spec: ModelSpec) -> list[Matrix]:
    """Every matrix of the model, grouped by shape: blocks, embeddings, head, router."""
    d, h, e, L = spec.d_model, spec.heads, spec.embedding_dim, spec.layers
    rows: list[Matrix] = []
    if spec.latent_attention:
        if spec.q_lora_rank:
            rows += [Matrix("q", d, spec.q_lora_rank, L),
                     Matrix("q", spec.q_lora_rank, h * spec.head_dim, L)]
        else:
            rows.append(Matrix("q", d, h * spec.head_dim, L))
        kv_b = h * (spec.head_dim - spec.qk_rope_head_dim + spec.v_head_dim)
        rows += [Matrix("k", d, spec.kv_lora_rank + spec.qk_rope_head_dim, L),
                 Matrix("v", spec.kv_lora_rank, kv_b, L)]
    else:
        kv = spec.kv_heads
        rows += [Matrix("q", d, h * spec.head_dim, L), Matrix("k", d, kv * spec.head_dim, L),
                 Matrix("v", d, kv * spec.v_head_dim, L)]
    rows.append(Matrix("o", h * spec.v_head_dim, d, L))
    if spec.dense_mlp_layers:
        rows += _layer_mlp(spec, spec.d_ff, spec.dense_mlp_layers)
    if spec.moe_layers:
        rows.append(Matrix("", d, spec.experts, spec.moe_layers))  # the router
        rows += _layer_mlp(spec, spec.expert_d_ff, spec.moe_layers * spec.experts, "experts")
        if spec.shared_d_ff:
            rows += _layer_mlp(spec, spec.shared_d_ff, spec.moe_layers)
        if spec.shared_expert_gate:
            rows.append(Matrix("", d, 1, spec.moe_layers))
    rows.append(Matrix("", spec.vocab, e, 1))  # token embedding (the tied head too)
    if not spec.tied_embeddings:
        rows.append(Matrix("", e, spec.vocab, 1))
    if spec.positions == "learned":
        rows.append(Matrix("", spec.context + spec.position_offset, d, 1))
    if e != d:
        rows += [Matrix("", e, d, 1), Matrix("", d, e, 1)]
    return rows


def check_lora_targets(targets: tuple[str, ...]) -> tuple[str, ...]:
    from specsheet.errors import did_you_mean

    if not targets:
        raise SpecError(f"expected some of {', '.join(LORA_TARGETS)}", field="lora_targets",
                        value=targets)
    for target in targets:
        if target not in LORA_TARGETS:
            raise SpecError(f"unknown target {quoted(target)}{did_you_mean(target, LORA_TARGETS)}; "
                            f"expected some of {', '.join(LORA_TARGETS)}",
                            field="lora_targets", value=targets)
    return tuple(dict.fromkeys(targets))


def lora_params(spec: ModelSpec, rank: int, targets: tuple[str, ...]) -> int:
    """LoRA's trainable parameters: r x (in + out) for every targeted matrix (A is in x r, B is
    r x out; Hu et al. 2021). In MLA, k stands for kv_a and v for kv_b; ``experts`` adapts
    every routed expert's matrices."""
    if rank < 1:
        raise SpecError(f"expected a rank of 1 or more, got {rank}", field="lora_rank",
                        value=rank)
    return sum(rank * (m.in_features + m.out_features) * m.copies
               for m in model_matrices(spec) if m.target and m.target in targets)
