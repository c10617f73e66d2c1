"""Forward FLOPs per token, as exact integers.

Conventions (those of torch.utils.flop_counter.FlopCounterMode around a transformers forward):
matrix multiplications only; a multiply-add is 2 FLOPs; norms, activations, softmax and bias adds
are not counted. The figure for context T is one T-token forward divided by T, where every token
attends to all T positions (no causal halving; transformers computes the full T x T scores of a
sliding-window layer too, and masks them):

    2 x (L x attention projection weights + MLP weights a token uses) + 2 x V x e
      + 2 x T x L x h x (d_h + d_v)                     (4 x T x L x h x d_h when d_v = d_h)

Only attention layers have the attention terms (L counts them). A state-space or
linear-attention layer (Mamba, Mamba-2, gated DeltaNet) adds, per T-token forward:
its projections (2 x weights x T), its depthwise convolution as FlopCounterMode counts
``aten.convolution`` (2 x channels x kernel x (max(T, kernel) + kernel - 1) output positions,
the padding's included), and the matrix multiplications of its scan as transformers' PyTorch
path runs them (``ssm_scan_flops``); the per-token figure is that sum divided by T, rounded down
when T does not divide it. Elementwise work (gates, decays, softplus, the triangular solve of
gated DeltaNet, which FlopCounterMode does not count) is not counted.

A token uses, in an MoE layer, the router, its k routed experts and the shared experts.
Biases (of experts and routers too) are adds, and attention sinks join the softmax as one more
logit per head: neither is a multiplication, and neither is counted.
"""

from typing import NamedTuple

from specsheet.model.params import (
    attention_weights,
    mlp_weights,
    ssm_conv_channels,
    ssm_projection_weights,
)
from specsheet.model.spec import ModelSpec


class ForwardFlops(NamedTuple):
    """FLOPs of one token's forward pass at context ``tokens``, by part."""

    tokens: int  # T, positions attended to
    attention_projections: int  # 2 x L x (q, k, v, o weights; MLA's projections)
    attention_context: int  # 2 x T x L x h x (d_h + d_v): scores q·k and the weighted sum of v
    ssm: int  # state-space and linear-attention layers: projections, convolution, scan
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


def ssm_scan_flops(spec: ModelSpec, kind: str, tokens: int) -> int:
    """Matrix multiplications of one layer's scan over a T-token forward.

    Mamba (a step per token): C·h, 2 x d_in x N per token.
    Mamba-2 (chunks of Q, T padded to c = ceil(T / Q) chunks; H heads of P = d_in / H): per
    chunk C·Bᵀ 2Q²HN, its product with x 2Q²HP, the chunk's state 2QHPN and the state's output
    2QHPN; across chunks the decayed states, 2(c + 1)²HPN.
    Gated DeltaNet (chunks of 64, per value head): per chunk k_β·kᵀ and q·kᵀ 2 x 2Q²d_k,
    the intra-chunk product with the new values 2Q²d_v, and reading and writing the state
    3 x 2Q·d_k·d_v.
    """
    if kind == "mamba":
        return 2 * spec.ssm_inner * spec.ssm_state * tokens
    if kind in ("mamba2", "hybrid"):
        q, heads, n = spec.ssm_chunk, spec.ssm_heads, spec.ssm_state
        p = spec.ssm_inner // heads
        chunks = -(-tokens // q)
        per_chunk = 2 * q * q * heads * (n + p) + 4 * q * heads * p * n
        return chunks * per_chunk + 2 * (chunks + 1) ** 2 * heads * p * n
    if kind == "linear_attention":
        q, dk, dv = GDN_CHUNK, spec.linear_key_dim, spec.linear_value_dim
        chunks = -(-tokens // q)
        return chunks * spec.linear_value_heads * (2 * q * q * (2 * dk + dv) + 6 * q * dk * dv)
    return 0


GDN_CHUNK = 64  # transformers' chunk of the gated delta rule (torch_chunk_gated_delta_rule)


def ssm_forward_flops(spec: ModelSpec, kind: str, tokens: int) -> int:
    """One state-space or linear-attention layer over a T-token forward: projections, the
    convolution (as FlopCounterMode counts it) and the scan."""
    if kind not in ("mamba", "mamba2", "hybrid", "linear_attention"):
        return 0
    k = spec.ssm_conv
    conv = 2 * ssm_conv_channels(spec, kind) * k * (max(tokens, k) + k - 1)
    return 2 * ssm_projection_weights(spec, kind) * tokens + conv + \
        ssm_scan_flops(spec, kind, tokens)


def forward_flops(spec: ModelSpec, tokens: int) -> ForwardFlops:
    """FLOPs per token of a forward pass over ``tokens`` tokens (see the module docstring)."""
    e, d = spec.embedding_dim, spec.d_model
    return ForwardFlops(
        tokens=tokens,
        attention_projections=2 * spec.attention_layers * attention_weights(spec),
        attention_context=2 * tokens * spec.attention_layers * spec.heads * (
            spec.head_dim + spec.v_head_dim),
        ssm=_ssm_flops(spec, tokens),
        mlp=mlp_flops(spec),
        logits=2 * spec.vocab * e,
        embedding_projections=4 * e * d if e != d else 0,
    )


def _ssm_flops(spec: ModelSpec, tokens: int) -> int:
    counts = spec.layers_by_kind if spec.layer_types else {}
    return sum(n * ssm_forward_flops(spec, kind, tokens) for kind, n in counts.items()) // tokens


def two_n_estimate(non_embedding_params: int) -> int:
    """The 2N rule (Kaplan et al., 2020): about 2 FLOPs per non-embedding parameter per token.

    An approximation: it leaves out the attention over the context, counts biases and norms,
    and (for MoE models) counts every expert.
    """
    return 2 * non_embedding_params
