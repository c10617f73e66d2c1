"""ModelSpec: the architecture of a decoder-only transformer, validated on construction.

A spec holds the five spec-sheet numbers (layers L, d_model d, heads h, vocab V, context n_max) and
the details that real models add. Defaults are GPT-2's: d_ff = 4 x d, a two-matrix MLP with biases,
attention with biases, LayerNorm with weight and bias, a learned position table, a tied output head.
"""

from dataclasses import dataclass, fields
from typing import Literal, NamedTuple, get_args

from specsheet.errors import SpecError

MLPKind = Literal["plain", "gated"]
NormKind = Literal["layernorm", "rmsnorm", "none"]
PositionKind = Literal["learned", "rotary", "none"]

MLP_KINDS: tuple[str, ...] = get_args(MLPKind)
NORM_KINDS: tuple[str, ...] = get_args(NormKind)
POSITION_KINDS: tuple[str, ...] = get_args(PositionKind)


class FieldDoc(NamedTuple):
    """How one spec field is written in a preset and what it means."""

    name: str
    type: Literal["int", "bool", "choice"]
    default: str  # what the field is when it is left out, as a person reads it
    help: str
    choices: tuple[str, ...] = ()


FIELD_DOCS: tuple[FieldDoc, ...] = (
    FieldDoc("layers", "int", "required", "number of transformer blocks, L"),
    FieldDoc("d_model", "int", "required", "hidden size (residual width), d"),
    FieldDoc("heads", "int", "required", "attention (query) heads, h"),
    FieldDoc("vocab", "int", "required", "vocabulary size, V"),
    FieldDoc("context", "int", "required", "context length in tokens, n_max"),
    FieldDoc("kv_heads", "int", "heads", "key/value heads (fewer than heads: grouped-query)"),
    FieldDoc("head_dim", "int", "d_model / heads", "size of one attention head, d_h"),
    FieldDoc("d_ff", "int", "4 x d_model", "MLP inner width"),
    FieldDoc(
        "mlp", "choice", "plain",
        "plain: up and down matrices with an activation (GELU); gated: gate, up, down (SwiGLU)",
        MLP_KINDS,
    ),
    FieldDoc(
        "norm", "choice", "layernorm",
        "layernorm: weight and bias; rmsnorm: weight only; none: no norms",
        NORM_KINDS,
    ),
    FieldDoc("attn_bias", "bool", "true", "the q, k, v and output projections carry biases"),
    FieldDoc("mlp_bias", "bool", "true", "the MLP matrices carry biases"),
    FieldDoc(
        "positions", "choice", "learned",
        "learned: a context x d_model table; rotary or none: no parameters",
        POSITION_KINDS,
    ),
    FieldDoc(
        "tied_embeddings", "bool", "true",
        "the output head reuses the token embedding matrix (counted once)",
    ),
)

REQUIRED_FIELDS: tuple[str, ...] = ("layers", "d_model", "heads", "vocab", "context")


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer's architecture; every size is a positive integer.

    Build one with ``ModelSpec.create``, which fills the derived defaults (kv_heads = heads,
    head_dim = d_model / heads, d_ff = 4 x d_model).
    """

    layers: int  # L, transformer blocks
    d_model: int  # d, residual width
    heads: int  # h, query heads
    vocab: int  # V, vocabulary size
    context: int  # n_max, context length in tokens
    kv_heads: int  # key/value heads; equal to heads for multi-head attention
    head_dim: int  # d_h, size of one head
    d_ff: int  # MLP inner width
    mlp: MLPKind = "plain"  # plain: 2 matrices; gated: 3 (SwiGLU)
    norm: NormKind = "layernorm"  # layernorm: weight + bias; rmsnorm: weight
    attn_bias: bool = True  # q, k, v, o projections carry biases
    mlp_bias: bool = True  # MLP matrices carry biases
    positions: PositionKind = "learned"  # learned: a context x d table
    tied_embeddings: bool = True  # output head shares the token embedding

    @classmethod
    def create(
        cls,
        *,
        layers: int,
        d_model: int,
        heads: int,
        vocab: int,
        context: int,
        kv_heads: int | None = None,
        head_dim: int | None = None,
        d_ff: int | None = None,
        mlp: MLPKind = "plain",
        norm: NormKind = "layernorm",
        attn_bias: bool = True,
        mlp_bias: bool = True,
        positions: PositionKind = "learned",
        tied_embeddings: bool = True,
    ) -> "ModelSpec":
        """Build a spec, deriving kv_heads, head_dim and d_ff when they are not given."""
        _check_positive("heads", heads)
        _check_positive("d_model", d_model)
        if head_dim is None:
            if d_model % heads:
                raise SpecError(
                    f"heads: {heads} does not divide d_model {d_model}; "
                    "give head_dim explicitly or choose heads that divide d_model"
                )
            head_dim = d_model // heads
        return cls(
            layers=layers,
            d_model=d_model,
            heads=heads,
            vocab=vocab,
            context=context,
            kv_heads=heads if kv_heads is None else kv_heads,
            head_dim=head_dim,
            d_ff=4 * d_model if d_ff is None else d_ff,
            mlp=mlp,
            norm=norm,
            attn_bias=attn_bias,
            mlp_bias=mlp_bias,
            positions=positions,
            tied_embeddings=tied_embeddings,
        )

    def __post_init__(self) -> None:
        for name in ("layers", "d_model", "heads", "vocab", "context", "kv_heads", "head_dim",
                     "d_ff"):
            _check_positive(name, getattr(self, name))
        if self.heads % self.kv_heads:
            raise SpecError(
                f"kv_heads: {self.kv_heads} does not divide heads {self.heads}; "
                "each key/value head must serve a whole group of query heads"
            )
        for name, allowed in (("mlp", MLP_KINDS), ("norm", NORM_KINDS),
                              ("positions", POSITION_KINDS)):
            value = getattr(self, name)
            if value not in allowed:
                raise SpecError(f"{name}: expected one of {', '.join(allowed)}, got {value!r}")
        for name in ("attn_bias", "mlp_bias", "tied_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise SpecError(f"{name}: expected true or false, got {getattr(self, name)!r}")

    def as_dict(self) -> dict[str, int | str | bool]:
        """Every field by name, in declaration order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{name}: expected a positive integer, got {value!r}")
    if value <= 0:
        raise SpecError(f"{name}: expected a positive integer, got {value}")


class Model(NamedTuple):
    """A spec with the name and provenance it was loaded under."""

    name: str
    spec: ModelSpec
    origin: str  # where it was loaded from: "preset gpt2-small", a file path, or "options"
    published_total: int | None = None  # the parameter count the model's publisher states
    description: str = ""
    reference: str = ""  # where the architecture and published total come from (a URL)
