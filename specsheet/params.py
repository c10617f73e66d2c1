"""Parameter counts by component, as exact integers.

Notation: L layers, d = d_model, h heads, k = kv_heads, d_h = head_dim, f = d_ff, V vocab,
n_max context. Every weight and bias is counted; a tied output head is counted once (as the
token embedding). Totals are always sums of the named parts below.
"""

from typing import NamedTuple

from specsheet.spec import ModelSpec


def attention_weights(spec: ModelSpec) -> int:
    """Projection matrices of one block: q d x h·d_h, k and v d x k·d_h, o h·d_h x d."""
    d, q_width, kv_width = spec.d_model, spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim
    return d * q_width + 2 * d * kv_width + q_width * d


def attention_biases(spec: ModelSpec) -> int:
    """Bias vectors of one block's projections: h·d_h + 2·k·d_h + d, or 0 without biases."""
    if not spec.attn_bias:
        return 0
    return spec.heads * spec.head_dim + 2 * spec.kv_heads * spec.head_dim + spec.d_model


def mlp_weights(spec: ModelSpec) -> int:
    """MLP matrices of one block: 2·d·f (plain) or 3·d·f (gated: gate, up, down)."""
    matrices = 3 if spec.mlp == "gated" else 2
    return matrices * spec.d_model * spec.d_ff


def mlp_biases(spec: ModelSpec) -> int:
    """MLP bias vectors of one block: f + d (plain) or 2·f + d (gated), or 0 without biases."""
    if not spec.mlp_bias:
        return 0
    inner = 2 * spec.d_ff if spec.mlp == "gated" else spec.d_ff
    return inner + spec.d_model


def norm_size(spec: ModelSpec) -> int:
    """Parameters of one norm: 2·d (LayerNorm weight and bias), d (RMSNorm weight) or 0."""
    return {"layernorm": 2, "rmsnorm": 1, "none": 0}[spec.norm] * spec.d_model


COMPONENTS = (
    "token_embedding", "position_embedding", "attention", "mlp", "norms", "output_head",
)


class BlockParams(NamedTuple):
    """The parameters of one transformer block."""

    attention: int  # projections and their biases
    mlp: int  # MLP matrices and their biases
    norms: int  # the two pre-norms

    @property
    def total(self) -> int:
        return self.attention + self.mlp + self.norms


class ParamBreakdown(NamedTuple):
    """Where a model's parameters live. ``total`` is the sum of the six components."""

    token_embedding: int  # V x d
    position_embedding: int  # n_max x d for a learned table, else 0
    attention: int  # L x block attention
    mlp: int  # L x block MLP
    norms: int  # L x block norms + the final norm
    output_head: int  # V x d when untied, 0 when tied
    block: BlockParams  # one block

    def components(self) -> dict[str, int]:
        """The six components by name, in a fixed order."""
        return {name: getattr(self, name) for name in COMPONENTS}

    @property
    def total(self) -> int:
        return sum(self.components().values())

    @property
    def embeddings(self) -> int:
        """Token and position tables."""
        return self.token_embedding + self.position_embedding

    @property
    def non_embedding(self) -> int:
        """Total minus the token and position tables (an untied output head stays in).

        This is ``num_parameters(exclude_embeddings=True)`` of Hugging Face transformers, and
        the N of the 2N rule.
        """
        return self.total - self.embeddings


def count_params(spec: ModelSpec) -> ParamBreakdown:
    """Count every parameter of ``spec`` by component."""
    norm = norm_size(spec)
    block = BlockParams(
        attention=attention_weights(spec) + attention_biases(spec),
        mlp=mlp_weights(spec) + mlp_biases(spec),
        norms=2 * norm,
    )
    token_embedding = spec.vocab * spec.d_model
    return ParamBreakdown(
        token_embedding=token_embedding,
        position_embedding=spec.context * spec.d_model if spec.positions == "learned" else 0,
        attention=spec.layers * block.attention,
        mlp=spec.layers * block.mlp,
        norms=spec.layers * block.norms + norm,
        output_head=0 if spec.tied_embeddings else token_embedding,
        block=block,
    )
