"""Forward FLOPs per token, as exact integers.

Conventions (those of torch.utils.flop_counter.FlopCounterMode around a transformers forward):
matrix multiplications only; a multiply-add is 2 FLOPs; norms, activations, softmax and bias adds
are not counted. The figure for context T is one T-token forward divided by T, where every token
attends to all T positions (no causal halving; transformers computes the full T x T scores of a
sliding-window layer too, and masks them):

    2 x (L x attention projection weights + MLP weights a token uses) + 2 x V x e
      + 2 x T x L x h x (d_h + d_v)                     (4 x T x L x h x d_h when d_v = d_h)

A token uses, in an MoE layer, the router, its k routed experts and the shared experts.
Biases (of experts and routers too) are adds, and attention sinks join the softmax as one more
logit per head: neither is a multiplication, and neither is counted.
"""

from typing import NamedTuple

from specsheet.model.params import attention_weights, mlp_weights
from specsheet.model.spec import ModelSpec


class ForwardFlops(NamedTuple):
    """FLOPs of one token's forward pass at context ``tokens``, by part."""

    tokens: int  # T, positions attended to
    attention_projections: int  # 2 x L x (q, k, v, o weights; MLA's projections)
    attention_context: int  # 2 x T x L x h x (d_h + d_v): scores q·k and the weighted sum of v
    mlp: int  # 2 x (dense MLPs + routers + k routed experts + shared experts)
    logits: int  # 2 x V x e, the output head
    embedding_projections: int  # 2 x 2 x e x d when the embedding width differs from d

    def parts(self) -> dict[str, int]:
        """The parts by name, in a fixed order."""
        return dict(zip(self._fields[1:], self[1:], strict=True))  # every field after tokens

    @property
    def total(self) -> int:
        return sum(self[1:])


def mlp_flops(spec: ModelSpec) -> int:
    """2 x the MLP weights one token uses, all layers."""
    d = spec.d_model
    dense = spec.dense_mlp_layers * mlp_weights(spec, spec.d_ff)
    moe = spec.moe_layers * (
        spec.experts * d
        + spec.experts_per_token * mlp_weights(spec, spec.expert_d_ff)
        + mlp_weights(spec, spec.shared_d_ff)
        + (d if spec.shared_expert_gate else 0)
    )
    return 2 * (dense + moe)


def forward_flops(spec: ModelSpec, tokens: int) -> ForwardFlops:
    """FLOPs per token of a forward pass over ``tokens`` tokens (see the module docstring)."""
    e, d = spec.embedding_dim, spec.d_model
    return ForwardFlops(
        tokens=tokens,
        attention_projections=2 * spec.layers * attention_weights(spec),
        attention_context=2 * tokens * spec.layers * spec.heads * (
            spec.head_dim + spec.v_head_dim),
        mlp=mlp_flops(spec),
        logits=2 * spec.vocab * e,
        embedding_projections=4 * e * d if e != d else 0,
    )


def two_n_estimate(non_embedding_params: int) -> int:
    """The 2N rule (Kaplan et al., 2020): about 2 FLOPs per non-embedding parameter per token.

    An approximation: it leaves out the attention over the context, counts biases and norms,
    and (for MoE models) counts every expert.
    """
    return 2 * non_embedding_params
