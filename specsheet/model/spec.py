"""ModelSpec: the architecture of a decoder-only transformer, validated on construction.

A spec holds the five spec-sheet numbers (layers L, d_model d, heads h, vocab V, context n_max) and
the details that real models add. Defaults are GPT-2's: d_ff = 4 x d, a two-matrix MLP with biases,
attention with biases, LayerNorm with weight and bias, a learned position table, a tied output head.
Mixture-of-experts (experts > 0) and multi-head latent attention (kv_lora_rank > 0) are off unless
their fields are given.
"""

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, get_args

from specsheet.compiled import (
    NamedTuple,
    dataclass,  # dataclasses' own, its methods compiled once
)
from specsheet.errors import SpecError, did_you_mean, quoted

if TYPE_CHECKING:  # a multimodal config's alone: imported when a source builds one
    from specsheet.model.images import ImageProcessor
    from specsheet.model.vision import VisionTower

MLPKind = Literal["plain", "gated"]
NormKind = Literal["layernorm", "rmsnorm", "none"]
PositionKind = Literal["learned", "rotary", "alibi", "none"]
QKNormKind = Literal["none", "head", "full"]
# what mixes positions in a layer: attention, a Mamba (selective scan) or Mamba-2 (state-space
# duality) layer, a gated DeltaNet (linear attention, Qwen3-Next), attention and Mamba-2 side by
# side (Falcon-H1), a gated short convolution (LFM2), or nothing (a block that is only an MLP,
# Nemotron-H)
LayerKind = Literal["attention", "mamba", "mamba2", "linear_attention", "hybrid", "short_conv",
                    "none"]
LAYER_KINDS: tuple[str, ...] = get_args(LayerKind)
ATTENTION_KINDS = ("attention", "hybrid")  # the layers that keep a KV cache
# the layers with a convolution (and a state per request): a state-space, DeltaNet or
# short-convolution mixer
STATE_KINDS = ("mamba", "mamba2", "hybrid", "linear_attention", "short_conv")

MLP_KINDS: tuple[str, ...] = get_args(MLPKind)
NORM_KINDS: tuple[str, ...] = get_args(NormKind)
POSITION_KINDS: tuple[str, ...] = get_args(PositionKind)
QK_NORM_KINDS: tuple[str, ...] = get_args(QKNormKind)

FieldType = Literal["int", "count", "bool", "choice", "layers", "kinds"]


class FieldDoc(NamedTuple):
    """How one spec field is written in a preset and what it means.

    Types: int (a positive integer), count (an integer >= 0), bool, choice (one of
    ``choices``), layers (a list of layer indices from 0, or ``all``), kinds (a list of one
    of ``choices`` per layer).
    """

    name: str
    type: FieldType
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
    FieldDoc("head_dim", "int", "d_model / heads",
             "size of one query/key head, d_h (with MLA: qk_nope_head_dim + qk_rope_head_dim)"),
    FieldDoc("v_head_dim", "int", "head_dim", "size of one value head"),
    FieldDoc("d_ff", "int", "4 x d_model", "MLP inner width (dense layers)"),
    FieldDoc("mlp", "choice", "plain",
             "plain: up and down matrices with an activation (GELU); gated: gate, up, down "
             "(SwiGLU, GeGLU); experts are of this kind too", MLP_KINDS),
    FieldDoc("norm", "choice", "layernorm",
             "layernorm: weight and bias; rmsnorm: weight only; none: norms without parameters "
             "(or none at all)", NORM_KINDS),
    FieldDoc("norms_per_block", "count", "2",
             "d_model-wide norms in each block (1: GPT-J, Falcon-7B; 4: Gemma 2 and 3; at most "
             "64)"),
    FieldDoc("final_norm", "bool", "true", "a norm after the last block"),
    FieldDoc("embedding_norm", "bool", "false", "a norm on the embeddings (BLOOM)"),
    FieldDoc("qk_norm", "choice", "none",
             "norms on queries and keys: head (one head wide: Qwen3, Gemma 3) or full (all heads: "
             "OLMo 2)", QK_NORM_KINDS),
    FieldDoc("attn_bias", "bool", "true",
             "shorthand that sets qkv_bias and o_bias together (input only)"),
    FieldDoc("qkv_bias", "bool", "attn_bias", "the q, k and v projections carry biases"),
    FieldDoc("o_bias", "bool", "attn_bias", "the attention output projection carries a bias"),
    FieldDoc("mlp_bias", "bool", "true", "the dense and shared MLP matrices carry biases"),
    FieldDoc("positions", "choice", "learned",
             "learned: a (context + position_offset) x d_model table; rotary, alibi or none: no "
             "parameters", POSITION_KINDS),
    FieldDoc("position_offset", "count", "0", "extra rows of a learned position table (OPT: 2)"),
    FieldDoc("embedding_dim", "int", "d_model",
             "width of the token embedding; when it differs from d_model, projections map "
             "between the two (OPT-350m)"),
    FieldDoc("tied_embeddings", "bool", "true",
             "the output head reuses the token embedding matrix (counted once)"),
    FieldDoc("head_bias", "bool", "false", "the output head carries a bias (GPT-J)"),
    FieldDoc("attention_sinks", "bool", "false",
             "a learned sink logit per query head in every layer (gpt-oss)"),
    FieldDoc("sliding_window", "count", "0", "positions a sliding-window layer attends to"),
    FieldDoc("sliding_layers", "layers", "all (with a window)", "the layers with a sliding window"),
    FieldDoc("experts", "count", "0", "routed experts per MoE layer (0: a dense model)"),
    FieldDoc("experts_per_token", "count", "0", "routed experts each token uses, k"),
    FieldDoc("expert_d_ff", "count", "0", "inner width of one routed expert"),
    FieldDoc("shared_d_ff", "count", "0", "inner width of the shared experts, all together"),
    FieldDoc("shared_expert_gate", "bool", "false",
             "a d_model x 1 gate on the shared experts (Qwen2-MoE)"),
    FieldDoc("expert_bias", "bool", "false",
             "the routed experts' matrices carry biases (gpt-oss)"),
    FieldDoc("router_bias", "bool", "false", "the MoE router carries a bias, one per expert "
             "(gpt-oss)"),
    FieldDoc("dense_layers", "layers", "none", "layers of an MoE model with a dense MLP of d_ff"),
    FieldDoc("kv_lora_rank", "count", "0",
             "multi-head latent attention: the compressed key/value width (0: no MLA)"),
    FieldDoc("q_lora_rank", "count", "0", "MLA: the compressed query width (0: no compression)"),
    FieldDoc("qk_rope_head_dim", "count", "0", "MLA: the rotary part of each query/key head"),
    FieldDoc("layer_types", "kinds", "all attention",
             "what mixes positions in each layer: attention, mamba, mamba2, linear_attention "
             "(gated DeltaNet), hybrid (attention and Mamba-2 side by side), short_conv (LFM2's "
             "gated short convolution) or none", LAYER_KINDS),
    FieldDoc("no_mlp_layers", "layers", "none", "layers without an MLP (Nemotron-H)"),
    FieldDoc("attention_gate", "bool", "false",
             "the query projection also produces an output gate, h x d_h wide (Qwen3-Next)"),
    FieldDoc("ssm_inner", "count", "0", "Mamba layers: the inner width, d_inner"),
    FieldDoc("ssm_state", "count", "0", "Mamba layers: the state size per channel, N"),
    FieldDoc("ssm_conv", "count", "0", "Mamba, gated DeltaNet and short-convolution layers: the "
             "convolution's kernel"),
    FieldDoc("ssm_heads", "count", "0", "Mamba-2 layers: heads (d_inner / head size)"),
    FieldDoc("ssm_groups", "count", "0", "Mamba-2 layers: groups sharing B and C"),
    FieldDoc("ssm_dt_rank", "count", "0", "Mamba layers: the rank of the time-step projection"),
    FieldDoc("ssm_chunk", "count", "0", "Mamba-2 layers: the scan's chunk (FLOPs only)"),
    FieldDoc("ssm_conv_bias", "bool", "true", "the Mamba (or short) convolution carries a bias"),
    FieldDoc("ssm_bias", "bool", "false", "the Mamba (or short-convolution) in and out "
             "projections carry biases"),
    FieldDoc("ssm_norm", "bool", "true",
             "Mamba-2: a gated RMSNorm over d_inner; Mamba: RMSNorms on the time step, B and C "
             "(Jamba)"),
    FieldDoc("linear_key_heads", "count", "0", "gated DeltaNet: key heads"),
    FieldDoc("linear_value_heads", "count", "0", "gated DeltaNet: value heads"),
    FieldDoc("linear_key_dim", "count", "0", "gated DeltaNet: size of a key head"),
    FieldDoc("linear_value_dim", "count", "0", "gated DeltaNet: size of a value head"),
)

REQUIRED_FIELDS: tuple[str, ...] = ("layers", "d_model", "heads", "vocab", "context")
# Sizes of up to 100 digits are arithmetic (10^30 layers gives exact integers); longer ones are
# refused, so that no product reaches Python's 4,300-digit limit for printing an integer.
MAX_DIGITS = 100
MAX_NORMS_PER_BLOCK = 64  # d-wide norms a block: Gemma 2 and 3 have the most, 4
# fields that create() accepts but a spec does not store
INPUT_ONLY_FIELDS: tuple[str, ...] = ("attn_bias",)
FIELDS: dict[str, FieldDoc] = {f.name: f for f in FIELD_DOCS}
# the stored fields of each type, in FIELD_DOCS' order: the table drives the checks
_STORED = tuple(f for f in FIELD_DOCS if f.name not in INPUT_ONLY_FIELDS)
_OF_TYPE: dict[str, tuple[FieldDoc, ...]] = {
    kind: tuple(f for f in _STORED if f.type == kind) for kind in get_args(FieldType)}
# the int and count fields with their least value, and the first size with too many digits
_SIZED = tuple((f, 1 if f.type == "int" else 0) for f in (*_OF_TYPE["int"], *_OF_TYPE["count"]))
_TOO_LONG = 10**MAX_DIGITS


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer's architecture.

    Build one with ``ModelSpec.create``, which fills the derived defaults (kv_heads = heads,
    head_dim = d_model / heads, v_head_dim = head_dim, d_ff = 4 x d_model, embedding_dim =
    d_model, and every sliding layer when a window is given).
    """

    layers: int  # L, transformer blocks
    d_model: int  # d, residual width
    heads: int  # h, query heads
    vocab: int  # V, vocabulary size
    context: int  # n_max, context length in tokens
    kv_heads: int  # key/value heads; equal to heads for multi-head attention
    head_dim: int  # d_h, size of one query/key head
    v_head_dim: int  # size of one value head
    d_ff: int  # dense MLP inner width
    mlp: MLPKind = "plain"  # plain: 2 matrices; gated: 3 (SwiGLU)
    norm: NormKind = "layernorm"  # layernorm: weight + bias; rmsnorm: weight; none: nothing
    norms_per_block: int = 2  # d-wide norms in a block
    final_norm: bool = True  # a norm after the last block
    embedding_norm: bool = False  # a norm on the embeddings (BLOOM)
    qk_norm: QKNormKind = "none"  # norms on queries and keys
    qkv_bias: bool = True  # q, k, v projections carry biases
    o_bias: bool = True  # the output projection carries a bias
    mlp_bias: bool = True  # dense and shared MLP matrices carry biases
    positions: PositionKind = "learned"  # learned: a (context + offset) x d table
    position_offset: int = 0  # extra rows of the learned table (OPT keeps 2)
    embedding_dim: int = 0  # token embedding width (0 only before create fills d_model)
    tied_embeddings: bool = True  # output head shares the token embedding
    head_bias: bool = False  # the output head carries a bias
    attention_sinks: bool = False  # one learned sink logit per query head per layer
    sliding_window: int = 0  # positions a windowed layer attends to (0: no window)
    sliding_layers: tuple[int, ...] = ()  # the windowed layers
    experts: int = 0  # routed experts per MoE layer (0: dense)
    experts_per_token: int = 0  # k, routed experts a token uses
    expert_d_ff: int = 0  # inner width of one routed expert
    shared_d_ff: int = 0  # inner width of the shared experts together
    shared_expert_gate: bool = False  # a d x 1 gate on the shared experts
    expert_bias: bool = False  # the routed experts' matrices carry biases
    router_bias: bool = False  # the router carries a bias of E
    dense_layers: tuple[int, ...] = ()  # MoE models: layers with a dense MLP
    kv_lora_rank: int = 0  # MLA: compressed key/value width (0: standard attention)
    q_lora_rank: int = 0  # MLA: compressed query width (0: a direct q projection)
    qk_rope_head_dim: int = 0  # MLA: rotary part of each query/key head
    layer_types: tuple[str, ...] = ()  # the mixer of each layer (empty: all attention)
    no_mlp_layers: tuple[int, ...] = ()  # blocks without an MLP (Nemotron-H)
    attention_gate: bool = False  # q_proj also gives an h x d_h output gate (Qwen3-Next)
    ssm_inner: int = 0  # Mamba: d_inner
    ssm_state: int = 0  # Mamba: N, state per channel (Mamba-2: per head channel)
    ssm_conv: int = 0  # Mamba, gated DeltaNet: convolution kernel
    ssm_heads: int = 0  # Mamba-2: heads
    ssm_groups: int = 0  # Mamba-2: groups of B and C
    ssm_dt_rank: int = 0  # Mamba: rank of the time-step projection
    ssm_chunk: int = 0  # Mamba-2: the scan's chunk length (FLOPs)
    ssm_conv_bias: bool = True  # the convolution carries a bias
    ssm_bias: bool = False  # in_proj and out_proj carry biases
    ssm_norm: bool = True  # Mamba-2's gated RMSNorm; Mamba's dt/B/C RMSNorms (Jamba)
    linear_key_heads: int = 0  # gated DeltaNet: key heads
    linear_value_heads: int = 0  # gated DeltaNet: value heads
    linear_key_dim: int = 0  # gated DeltaNet: key head size
    linear_value_dim: int = 0  # gated DeltaNet: value head size
    # a multimodal checkpoint's image encoder and projector (model/vision.py); not a preset
    # field: a config.json's vision_config gives it, and as_dict leaves it out
    vision: "VisionTower | None" = None

    @classmethod
    def create(cls, **given: Any) -> "ModelSpec":
        """Build a spec from field values, deriving the defaults of the fields not given.

        ``attn_bias`` sets qkv_bias and o_bias; ``sliding_layers="all"`` (or leaving it out
        with a window) windows every layer.
        """
        values = {k: v for k, v in given.items() if v is not None}
        for name in REQUIRED_FIELDS:
            if name not in values:
                raise SpecError(f"missing; the five numbers {', '.join(REQUIRED_FIELDS)} are "
                                "required", field=name)
        d_model, heads = values["d_model"], values["heads"]
        _check_size(FIELDS["heads"], heads)
        _check_size(FIELDS["d_model"], d_model)
        attn_bias = values.pop("attn_bias", True)
        values.setdefault("qkv_bias", attn_bias)
        values.setdefault("o_bias", attn_bias)
        if "head_dim" not in values:
            if d_model % heads:
                raise SpecError(f"{heads} does not divide d_model {d_model}; give head_dim "
                                "explicitly or choose heads that divide d_model",
                                field="heads", value=heads)
            values["head_dim"] = d_model // heads
        values.setdefault("kv_heads", heads)
        values.setdefault("v_head_dim", values["head_dim"])
        values.setdefault("d_ff", 4 * d_model)
        values.setdefault("embedding_dim", d_model)
        layers = values["layers"]
        sliding = values.get("sliding_layers")
        if values.get("sliding_window") and sliding in (None, "all"):
            _check_size(FIELDS["layers"], layers)
            values["sliding_layers"] = _all_layers(layers)
        elif sliding == "all":
            values["sliding_layers"] = ()
        for doc in (*_OF_TYPE["layers"], *_OF_TYPE["kinds"]):
            if doc.name in values and not isinstance(values[doc.name], tuple):
                values[doc.name] = tuple(values[doc.name])
        unknown = set(values) - _FIELD_NAMES
        if unknown:
            raise SpecError("not a spec field", field=sorted(unknown)[0])
        return cls(**values)

    def __post_init__(self) -> None:
        # each value that plainly fits passes at once (an int in range, a bool, a str among the
        # choices); any other goes to the one check, which says what is wrong or lets it pass
        for doc, least in _SIZED:
            value = getattr(self, doc.name)
            if type(value) is not int or not least <= value < _TOO_LONG:
                _check_size(doc, value)
        for doc in _OF_TYPE["choice"]:
            value = getattr(self, doc.name)
            if type(value) is not str or value not in doc.choices:
                check_type(doc, value)
        for doc in _OF_TYPE["bool"]:
            if type(getattr(self, doc.name)) is not bool:
                check_type(doc, getattr(self, doc.name))
        if self.norms_per_block > MAX_NORMS_PER_BLOCK:  # the tensor walks list each one
            raise SpecError(f"expected at most {MAX_NORMS_PER_BLOCK}, got "
                            f"{self.norms_per_block:,} (real blocks have 1 to 4)",
                            field="norms_per_block", value=self.norms_per_block)
        if self.heads % self.kv_heads:
            raise SpecError(f"{self.kv_heads} does not divide heads {self.heads}; each "
                            "key/value head must serve a whole group of query heads",
                            field="kv_heads", value=self.kv_heads)
        for doc in _OF_TYPE["layers"]:
            self._check_layer_list(doc.name)
        self._check_layer_types()
        if self.sliding_layers and not self.sliding_window:
            raise SpecError("given without a sliding_window", field="sliding_layers")
        self._check_experts()
        self._check_latent_attention()

    def _check_layer_list(self, name: str) -> None:
        indices = getattr(self, name)
        for index in indices:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise SpecError(f"expected layer indices from 0, got {quoted(index)}", field=name,
                                value=index)
            if index >= self.layers:
                raise SpecError(f"layer {index} does not exist in a model of {self.layers} "
                                "layers (they count from 0)", field=name, value=index)
        if len(set(indices)) != len(indices) or list(indices) != sorted(indices):
            raise SpecError("expected increasing layer indices without repeats", field=name)

    def _check_layer_types(self) -> None:
        types = self.layer_types
        if not types:
            return
        if len(types) != self.layers:
            raise SpecError(f"expected {self.layers} entries (one per layer), got {len(types)}",
                            field="layer_types")
        for kind in types:
            if kind not in LAYER_KINDS:
                hint = did_you_mean(kind, LAYER_KINDS) if isinstance(kind, str) else ""
                raise SpecError(f"unknown layer kind {quoted(kind)}{hint}; expected one of "
                                f"{', '.join(LAYER_KINDS)}", field="layer_types", value=kind)
        windowed = [i for i in self.sliding_layers if types[i] not in ATTENTION_KINDS]
        if windowed:
            raise SpecError(f"layer {windowed[0]} is a {types[windowed[0]]} layer; only "
                            "attention layers have a window", field="sliding_layers")
        kinds = set(types)
        if kinds & {"mamba", "mamba2", "hybrid"}:
            for name in ("ssm_inner", "ssm_state", "ssm_conv"):
                if not getattr(self, name):
                    raise SpecError("the Mamba layers of layer_types need it", field=name)
        if kinds & {"mamba2", "hybrid"} and not (self.ssm_heads and self.ssm_groups):
            raise SpecError("the Mamba-2 layers of layer_types need ssm_heads and ssm_groups",
                            field="ssm_heads")
        if kinds & {"mamba2", "hybrid"} and not self.ssm_chunk:  # the scan's FLOPs: T / Q
            raise SpecError("the Mamba-2 layers of layer_types need the scan's chunk length, at "
                            "least 1 (a config's chunk_size: 256 in Bamba's)", field="ssm_chunk")
        if "mamba" in kinds and not self.ssm_dt_rank:
            raise SpecError("the Mamba layers of layer_types need it", field="ssm_dt_rank")
        if "linear_attention" in kinds:
            for name in ("linear_key_heads", "linear_value_heads", "linear_key_dim",
                         "linear_value_dim", "ssm_conv"):
                if not getattr(self, name):
                    raise SpecError("the linear_attention layers of layer_types need it",
                                    field=name)
        if "short_conv" in kinds and not self.ssm_conv:
            raise SpecError("the short_conv layers of layer_types need it", field="ssm_conv")
        if set(self.no_mlp_layers) & set(self.dense_layers):
            raise SpecError("a layer without an MLP cannot be a dense layer too",
                            field="no_mlp_layers")

    def _check_experts(self) -> None:
        if self.experts:
            if not 1 <= self.experts_per_token <= self.experts:
                raise SpecError(f"expected 1 to experts ({self.experts}), got "
                                f"{self.experts_per_token}", field="experts_per_token",
                                value=self.experts_per_token)
            if not self.expert_d_ff:
                raise SpecError("an MoE model (experts > 0) needs the width of one expert",
                                field="expert_d_ff")
            return
        for name in ("experts_per_token", "expert_d_ff", "shared_d_ff", "dense_layers",
                     "shared_expert_gate", "expert_bias", "router_bias"):
            if getattr(self, name):
                raise SpecError("given for a dense model; set experts too", field=name)

    def _check_latent_attention(self) -> None:
        if not self.kv_lora_rank:
            for name in ("q_lora_rank", "qk_rope_head_dim"):
                if getattr(self, name):
                    raise SpecError("a multi-head latent attention field; set kv_lora_rank too",
                                    field=name)
            return
        if self.kv_heads != self.heads:
            raise SpecError("multi-head latent attention has as many key/value heads as query "
                            f"heads ({self.heads}), got {self.kv_heads}", field="kv_heads",
                            value=self.kv_heads)
        if self.qk_rope_head_dim > self.head_dim:
            raise SpecError(f"{self.qk_rope_head_dim} exceeds head_dim {self.head_dim} (the "
                            "rotary part of a query/key head)", field="qk_rope_head_dim",
                            value=self.qk_rope_head_dim)

    # ---- derived layer counts -------------------------------------------------------------

    @property
    def moe_layers(self) -> int:
        """Layers with routed experts."""
        return self.mlp_layers - len(self.dense_layers) if self.experts else 0

    @property
    def mlp_layers(self) -> int:
        """Layers with an MLP (dense or MoE)."""
        return self.layers - len(self.no_mlp_layers)

    @property
    def dense_mlp_layers(self) -> int:
        """Layers with a dense MLP of width d_ff."""
        return self.mlp_layers - self.moe_layers

    def layers_of(self, *kinds: str) -> int:
        """Layers whose mixer is one of ``kinds``."""
        if not self.layer_types:
            return self.layers if "attention" in kinds else 0
        return sum(1 for kind in self.layer_types if kind in kinds)

    @property
    def attention_layers(self) -> int:
        """Layers with attention (and a KV cache)."""
        return self.layers_of(*ATTENTION_KINDS)

    @property
    def layers_by_kind(self) -> dict[str, int]:
        """Layers by mixer kind, in the order the kinds first appear; they sum to L."""
        counts: dict[str, int] = {}
        for kind in self.layer_types or ("attention",):
            counts[kind] = counts.get(kind, 0) + 1
        if not self.layer_types:
            counts["attention"] = self.layers
        return counts

    @property
    def latent_attention(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2 and V3)."""
        return self.kv_lora_rank > 0

    def as_dict(self) -> dict[str, Any]:
        """Every field by name, in declaration order (layer lists as lists)."""
        return {name: (list(v) if isinstance(v, tuple) else v)
                for name, v in zip(_DICT_FIELDS, _dict_values(self), strict=True)}


_FIELD_NAMES = frozenset(f.name for f in fields(ModelSpec))
_DICT_FIELDS = tuple(f.name for f in fields(ModelSpec) if f.name != "vision")  # as_dict's
_dict_values = attrgetter(*_DICT_FIELDS)  # their values, read in one call


def _all_layers(layers: int) -> tuple[int, ...]:
    if layers > 100_000:
        raise SpecError(f"'all' of {layers:,} layers is more than specsheet lists; give the "
                        "window to fewer layers", field="sliding_layers", value=layers)
    return tuple(range(layers))


EXPECTED = {"int": "a positive integer", "count": "an integer of 0 or more",
            "bool": "true or false"}


def check_type(doc: FieldDoc, value: object, describe: Callable[[object], str] = repr,
               suggest: bool = False) -> None:
    """The one type check of a field of type int, count, bool or choice (``suggest``: a
    choice's error adds the closest name). Raises SpecError with ``field``; ``describe``
    shows the value (a preset file shows true, a list, a date). Layer lists and kinds are
    checked by ModelSpec, against the model's layers."""
    if doc.type == "choice":
        if isinstance(value, str) and value in doc.choices:
            return
        hint = did_you_mean(value, doc.choices) if suggest and isinstance(value, str) else ""
        raise SpecError(f"expected one of {', '.join(doc.choices)}, got {describe(value)}{hint}",
                        field=doc.name, value=value)
    if doc.type == "bool":
        fits = isinstance(value, bool)
    elif doc.type in ("int", "count"):
        fits = isinstance(value, int) and not isinstance(value, bool)
    else:
        return
    if not fits:
        raise SpecError(f"expected {EXPECTED[doc.type]}, got {describe(value)}", field=doc.name,
                        value=value)


def _check_size(doc: FieldDoc, value: object) -> None:
    """An int field above 0, a count of 0 or more, of at most MAX_DIGITS digits."""
    check_type(doc, value)
    assert isinstance(value, int)
    if value < (1 if doc.type == "int" else 0):
        raise SpecError(f"expected {EXPECTED[doc.type]}, got {value}", field=doc.name,
                        value=value)
    _check_digits(doc.name, value)


def _check_digits(name: str, value: int) -> None:
    if value >= 10**MAX_DIGITS:
        raise SpecError(f"an integer of more than {MAX_DIGITS} digits is beyond any model; "
                        "expected a size", field=name)


class Shipped(NamedTuple):
    """The quantization a checkpoint ships in, as its config.json's ``quantization_config``
    writes it: a specsheet format name, its group size, and the modules it leaves unquantized
    (``keep``: entries as the config writes them, matched by ``match``)."""

    format: str  # a quant.formats.FORMATS name: mxfp4, fp8-block, w4a16, ...
    method: str  # the config's quant_method: mxfp4, fp8, compressed-tensors, gptq, ...
    group_size: int | None = None
    keep: tuple[str, ...] = ()  # modules left in their dtype (ignore, modules_to_not_convert)
    match: str = "exact"  # how keep entries match a module: exact (with re: and *), substring
    # the router's score-correction bias (DeepSeek-V3's e_score_correction_bias, topk_method
    # noaux_tc): a buffer to transformers, not a parameter, but stored in the checkpoint and
    # loaded by vLLM as an F32 tensor of E per MoE layer
    router_score_bias: bool = False
    # a GGUF file's own GGML type of each of the model's tensors (its GGUF name, type), as the
    # file holds them: the file's bytes, not llama-quantize's rule for ``format``
    file_types: tuple[tuple[str, str], ...] = ()


class Model(NamedTuple):
    """A spec with the name and provenance it was loaded under."""

    name: str
    spec: ModelSpec
    origin: str  # where it was loaded from: "preset gpt2-small", a file path, or "options"
    published_total: int | None = None  # the parameter count the model's publisher states
    description: str = ""
    reference: str = ""  # where the architecture and published total come from (a URL)
    # what the figures cover: "language model only" for a multimodal config whose vision or
    # audio tower is left out
    counted: str = "whole model"
    shipped: Shipped | None = None  # the checkpoint's own quantization (None: unquantized)
    # a published training recipe, as the preset's training section writes it: (item, value)
    # pairs, lists as tuples (``specsheet train`` applies it; empty: none)
    training: tuple[tuple[str, Any], ...] = ()
    # the image processor of a multimodal config (None: no vision tower), model/images.py
    images: "ImageProcessor | None" = None
    # the checkpoint's multi-token-prediction layers beyond ``spec.layers`` (DeepSeek-V3's
    # num_nextn_predict_layers): not counted in the spec; vLLM loads them only as the draft of
    # speculative method mtp (plan/speculative.py)
    mtp_layers: int = 0
    # an EAGLE-3 head's own output vocabulary (its config's draft_vocab_size; None: the vocab)
    draft_vocab: int | None = None
