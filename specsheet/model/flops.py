"""Forward FLOPs per token, as exact integers.

Conventions (those of torch.utils.flop_counter.FlopCounterMode around a transformers forward):
matrix multiplications only; a multiply-add is 2 FLOPs; norms, activations, softmax and bias adds
are not counted. The figure for context T is one T-token forward divided by T, where every token
attends to all T positions (no causal halving; transformers computes the full T x T scores of a
sliding-window layer too, and masks them):

    2 x (L x attention projection weights + MLP weights a token uses) + 2 x V x e
      + 2 x T x L x h x (d_h + d_v)                     (4 x T x L x h x d_h when d_v = d_h)

Only attention layers have the attention terms (L counts them). A state-space or
linear-attention layer (Mamba, Mamba-2, gated DeltaNet) or LFM2's short convolution adds, per
T-token forward:
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


from specsheet.compiled import NamedTuple
from specsheet.model.params import (
    attention_weights,
    mlp_weights,
    ssm_conv_channels,
    ssm_projection_weights,
)
from specsheet.model.spec import STATE_KINDS, ModelSpec


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
    A short convolution (LFM2) has no scan: its gates B·x and C·y are elementwise.
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
    if kind not in STATE_KINDS:
        return 0
    k = spec.ssm_conv
    conv = 2 * ssm_conv_channels(spec, kind) * k * (max(tokens, k) + k - 1)
    return 2 * ssm_projection_weights(spec, kind) * tokens + conv + \
        ssm_scan_flops(spec, kind, tokens)


def ssm_backward_flops(spec: ModelSpec, kind: str, tokens: int) -> int:
    """One state-space or linear-attention layer's backward over a T-token sequence, as
    FlopCounterMode counts it around ``.backward()`` of transformers' PyTorch path, but for the
    one term its formula gets wrong:

    - projections and the scan's products: two of the same size each (both operands' gradients),
      2 x their forward;
    - the depthwise convolution (``aten.convolution_backward``): the input's gradient, a
      transposed convolution over the same T + k - 1 positions, and the weight's gradient, which
      multiplies as much again: 2 x the forward convolution. (FlopCounterMode's formula ignores
      ``groups`` and counts the weight's gradient as a dense C x C convolution, C x the
      forward; ``depthwise_gradient_overcount`` is the difference, which the golden tests
      subtract from transformers' count.)
    - gated DeltaNet adds, per chunk and value head, the gradients of the two triangular
      systems (the backward of ``linalg.solve_triangular``: for X = A⁻¹B, A's gradient
      -(A⁻ᵀ dX) Xᵀ, 2Q²d_v and 2Q²d_k, matrix products FlopCounterMode counts; the solves
      themselves it does not), and loses four products of 2Q·d_k·d_v: the zero initial state
      has no gradient (the first chunk's two reads of it give one gradient each), and the
      final state is not in the loss (the last chunk's write has no backward).
    """
    if kind not in STATE_KINDS:
        return 0
    k = spec.ssm_conv
    channels = ssm_conv_channels(spec, kind)
    conv = 2 * channels * k * (max(tokens, k) + k - 1)
    projections = 2 * ssm_projection_weights(spec, kind) * tokens
    backward = 2 * (projections + ssm_scan_flops(spec, kind, tokens) + conv)
    if kind == "linear_attention":
        q, dk, dv = GDN_CHUNK, spec.linear_key_dim, spec.linear_value_dim
        chunks = -(-tokens // q)
        backward += spec.linear_value_heads * (
            chunks * 2 * q * q * (dk + dv) - 4 * 2 * q * dk * dv)
    return backward


def depthwise_gradient_overcount(spec: ModelSpec, tokens: int) -> int:
    """Per token, what FlopCounterMode adds to the backward of the depthwise convolutions by
    counting each weight gradient as a dense C x C convolution: (C - 1) x the forward
    convolution of every state-space and DeltaNet layer (the weight gradient of a depthwise
    convolution multiplies 2 x C x k x positions, the forward's count), rounded down. Not in
    specsheet's figures: the golden tests subtract it from transformers' count."""
    counts = spec.layers_by_kind if spec.layer_types else {}
    k = spec.ssm_conv
    total = 0
    for kind, n in counts.items():
        if kind in STATE_KINDS:
            channels = ssm_conv_channels(spec, kind)
            total += n * (channels - 1) * 2 * channels * k * (max(tokens, k) + k - 1)
    return total // tokens


def ssm_training_flops(spec: ModelSpec, tokens: int) -> tuple[int, int]:
    """Per token, the state-space and linear-attention layers' forward (ForwardFlops.ssm) and
    backward (``ssm_backward_flops``), each the T-token sum divided by T, rounded down."""
    counts = spec.layers_by_kind if spec.layer_types else {}
    forward = sum(n * ssm_forward_flops(spec, kind, tokens) for kind, n in counts.items())
    backward = sum(n * ssm_backward_flops(spec, kind, tokens) for kind, n in counts.items())
    return forward // tokens, backward // tokens


def forward_flops(spec: ModelSpec, tokens: int) -> ForwardFlops:
    """FLOPs per token of a forward pass over ``tokens`` tokens (see the module docstring)."""
    e, d = spec.embedding_dim, spec.d_model
    return ForwardFlops(
        tokens=tokens,
        attention_projections=2 * spec.attention_layers * attention_weights(spec),
        attention_context=attention_context_flops(spec, tokens),
        ssm=ssm_forward_per_token(spec, tokens),
        mlp=mlp_flops(spec),
        logits=2 * spec.vocab * e,
        embedding_projections=4 * e * d if e != d else 0,
    )


def attention_context_flops(spec: ModelSpec, tokens: int) -> int:
    """2 x T x L x h x (d_h + d_v): the scores q·k and the weighted sum of v, per token."""
    return 2 * tokens * spec.attention_layers * spec.heads * (spec.head_dim + spec.v_head_dim)


def ssm_forward_per_token(spec: ModelSpec, tokens: int) -> int:
    """ForwardFlops.ssm: the state-space and linear-attention layers' forward per token (0
    without such layers)."""
    return ssm_training_flops(spec, tokens)[0] if spec.layer_types else 0



def two_n_estimate(non_embedding_params: int) -> int:
    """The 2N rule (Kaplan et al., 2020): about 2 FLOPs per non-embedding parameter per token.

    An approximation: it leaves out the attention over the context, counts biases and norms,
    and (for MoE models) counts every expert.
    """
    return 2 * non_embedding_params


# ---- training -----------------------------------------------------------------------------

RECOMPUTE = ("none", "selective", "full")
ATTENTION = ("full", "causal")


class TrainingFlops(NamedTuple):
    """FLOPs of training on one token of a sequence of ``tokens`` (forward and backward).

    The backward of every matrix multiplication Y = X W is two of the same size: the input's
    gradient (dY W^T) and the weight's (X^T dY); that of the attention scores Q K^T and of the
    weighted sum P V likewise gives two each. So the backward of every attention and MLP layer,
    and of the head, is 2 x its forward exactly, under the convention (FlopCounterMode around a
    forward and ``.backward()`` in transformers agrees for every golden model:
    tests/golden/*.json, ``train_flops_per_token``). State-space and gated DeltaNet layers are
    not 2 x: their backward is ``ssm_backward`` (``ssm_backward_flops``: the depthwise
    convolution's weight gradient as FlopCounterMode counts it, and gated DeltaNet's triangular
    solves and its states without gradients). Embedding lookups are gathers (no FLOPs forward
    or backward); the first block's input needs its gradient too, since the token embedding is
    trained. ``model`` FLOPs (for MFU) never include recomputation; ``hardware`` FLOPs add what
    ``recompute`` runs again.
    """

    tokens: int  # S, the sequence length (every token attends to all S positions with full)
    attention: str  # full: every S x S score; causal: the S (S + 1) / 2 a causal kernel computes
    recompute: str  # none, selective (the attention core again), full (the forward again)
    forward: int  # one forward, per token
    backward: int  # 2 x (forward - its ssm part) + ssm_backward
    recomputed: int  # forward FLOPs run again in the backward pass (hardware only)
    attention_core: int  # the part of ``forward`` that is scores and weighted sums
    ssm_backward: int  # the state-space and gated DeltaNet layers' part of ``backward``

    @property
    def model(self) -> int:
        """Forward + backward, per token: the FLOPs MFU counts."""
        return self.forward + self.backward

    @property
    def hardware(self) -> int:
        """Model FLOPs + recomputation, per token: what the GPUs execute."""
        return self.model + self.recomputed


def attention_core_flops(spec: ModelSpec, tokens: int, attention: str = "full") -> int:
    """Scores and weighted sums per token of a forward over ``tokens`` tokens.

    full: 2 x S x L x h x (d_h + d_v), as ForwardFlops.attention_context (L the attention
    layers); causal: the lower
    triangle with its diagonal, S (S + 1) / 2 of the S^2 pairs, so (S + 1) x L x h x (d_h + d_v)
    per token (what a causal FlashAttention kernel computes, up to its block edges)."""
    width = spec.attention_layers * spec.heads * (spec.head_dim + spec.v_head_dim)
    if attention == "causal":
        return (tokens + 1) * width
    return 2 * tokens * width


def training_flops(spec: ModelSpec, tokens: int, recompute: str = "none",
                   attention: str = "full") -> TrainingFlops:
    """Training FLOPs per token at sequence length ``tokens`` (see TrainingFlops).

    Selective recomputation runs the attention core again (Korthikanti et al. 2022, section
    5: the scores, softmax, dropout and weighted sum; only the two matrix multiplications
    count); full recomputation runs the whole forward again. The backward is 2 x the forward
    but for the state-space and gated DeltaNet layers, whose backward is their own
    (``ssm_backward_flops``)."""
    if recompute not in RECOMPUTE:
        raise ValueError(recompute)
    if attention not in ATTENTION:
        raise ValueError(attention)
    dense = forward_flops(spec, tokens)
    core = attention_core_flops(spec, tokens, attention)
    forward = dense.total - dense.attention_context + core
    ssm_forward, ssm_backward = ssm_training_flops(spec, tokens)
    recomputed = {"none": 0, "selective": core, "full": forward}[recompute]
    return TrainingFlops(tokens=tokens, attention=attention, recompute=recompute,
                         forward=forward, backward=2 * (forward - ssm_forward) + ssm_backward,
                         recomputed=recomputed, attention_core=core, ssm_backward=ssm_backward)


def six_n_estimate(non_embedding_params: int) -> int:
    """6N per token (Kaplan et al., 2020): 2N forward and 4N backward; no attention over the
    context. N: the active parameters without the embedding tables, as the 2N rule."""
    return 6 * non_embedding_params


def palm_estimate(spec: ModelSpec, non_embedding_params: int, tokens: int) -> int:
    """PaLM's MFU formula per token (Chowdhery et al., 2022, appendix B): 6N + 12 L H Q T,
    H heads of size Q over a sequence of T; full attention, counted three times."""
    return 6 * non_embedding_params + 12 * spec.layers * spec.heads * spec.head_dim * tokens


def megatron_estimate(spec: ModelSpec, tokens: int, recompute: bool) -> int:
    """Megatron-LM's count per token (Narayanan et al., 2021, section 5.1), for a GPT block of
    hidden size h (4h MLP, h x h attention), l layers, vocabulary V, sequence s:

        with activation recomputation:  96 s l h^2 (1 + s / 6h + V / 16 l h) per sequence
        without:                         72 s l h^2 (1 + s / 6h + V / 12 l h)

    i.e. 24 l h^2 + 4 l s h + 2 V h per token forward, four times (three without recompute)
    for the blocks and three times for the logits. Exact integers: the expansions, divided by s.
    """
    h, layer, s, v = spec.d_model, spec.layers, tokens, spec.vocab
    blocks = 24 * layer * h * h + 4 * layer * s * h
    return (4 if recompute else 3) * blocks + 6 * v * h
