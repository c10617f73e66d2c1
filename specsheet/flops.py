"""Forward FLOPs per token, as exact integers.

Conventions (those of torch.utils.flop_counter.FlopCounterMode): matrix multiplications only;
a multiply-add is 2 FLOPs; norms, activations, softmax and bias adds are not counted. The figure
for context T is one T-token forward divided by T, where every token attends to all T positions
(no causal halving):

    2 x (attention projection weights + MLP weights) x L + 2 x V x d + 4 x T x L x h x d_h
"""

from typing import NamedTuple

from specsheet.params import attention_weights, mlp_weights
from specsheet.spec import ModelSpec


class ForwardFlops(NamedTuple):
    """FLOPs of one token's forward pass at context ``tokens``, by part."""

    tokens: int  # T, positions attended to
    attention_projections: int  # 2 x L x (q, k, v, o weights)
    attention_context: int  # 4 x T x L x h x d_h: scores q·k and the weighted sum of v
    mlp: int  # 2 x L x MLP weights
    logits: int  # 2 x V x d, the output head

    def parts(self) -> dict[str, int]:
        """The four parts by name, in a fixed order."""
        return dict(zip(self._fields[1:], self[1:], strict=True))  # every field after tokens

    @property
    def total(self) -> int:
        return sum(self[1:])


def forward_flops(spec: ModelSpec, tokens: int) -> ForwardFlops:
    """FLOPs per token of a forward pass over ``tokens`` tokens (see the module docstring)."""
    return ForwardFlops(
        tokens=tokens,
        attention_projections=2 * spec.layers * attention_weights(spec),
        attention_context=4 * tokens * spec.layers * spec.heads * spec.head_dim,
        mlp=2 * spec.layers * mlp_weights(spec),
        logits=2 * spec.vocab * spec.d_model,
    )


def two_n_estimate(non_embedding_params: int) -> int:
    """The 2N rule (Kaplan et al., 2020): about 2 FLOPs per non-embedding parameter per token.

    An approximation: it leaves out the attention over the context and counts biases and norms.
    """
    return 2 * non_embedding_params
