"""A model's parameter tensors by GGUF name and PyTorch shape: what every storage layout
(quant/layouts.py) and every per-GPU share (plan/serving.py) is counted over.

``model_tensors(spec)`` lists them; their elements add up to ``count_params(spec).total``. Kept
apart from the formats so that a plain-dtype path does not load the quantization tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError
from specsheet.model.spec import STATE_KINDS, ModelSpec
from specsheet.quant import MAX_LISTED_LAYERS

# What a parameter tensor is, for the toolchains' choices.
# linear: a Linear weight inside a transformer block; router: an MoE router (ffn_gate_inp);
# shared_gate: Qwen2-MoE's d x 1 gate on the shared experts; projection: OPT's project_in/out;
# embedding: token or position table; head: the untied output matrix; norm; bias; buffer: a
# tensor a checkpoint stores that is no parameter (score_bias_tensors), kept in F32; tower_column,
# tower_row, tower: a multimodal checkpoint's vision tower and projector (model/vision.py), cut
# column- or row-parallel under tensor parallelism or whole, never quantized.
ROLES = ("linear", "router", "shared_gate", "projection", "embedding", "head", "norm", "bias",
         "buffer", "tower_column", "tower_row", "tower")
TOWER_ROLES = ("tower_column", "tower_row", "tower")


class Tensor(NamedTuple):
    """One parameter tensor of a model, named as GGUF names it."""

    name: str  # blk.0.attn_q.weight
    shape: tuple[int, ...]  # [N, K] (PyTorch order), [E, N, K] for experts, [n] for a vector
    component: str  # a params.COMPONENTS key
    role: str  # one of ROLES
    layer: int | None = None  # the block, or None outside the blocks

    @property
    def elements(self) -> int:
        return prod(self.shape)

    @property
    def matrices(self) -> int:
        """Linear layers this tensor stands for: E for stacked experts, else 1."""
        return self.shape[0] if len(self.shape) == 3 else 1

    @property
    def out_features(self) -> int:
        """N: rows of one matrix."""
        return self.shape[-2]

    @property
    def in_features(self) -> int:
        """K: the row length (GGUF's ne[0])."""
        return self.shape[-1]


# ---- the model's tensors -------------------------------------------------------------------

_NORM_NAMES = ("attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm")


def _norm(spec: ModelSpec, name: str, width: int, component: str = "norms",
          layer: int | None = None) -> Iterator[Tensor]:
    """A norm of ``width``: a weight (RMSNorm, LayerNorm) and a bias (LayerNorm)."""
    if spec.norm == "none":
        return
    yield Tensor(f"{name}.weight", (width,), component, "norm", layer)
    if spec.norm == "layernorm":
        yield Tensor(f"{name}.bias", (width,), component, "norm", layer)


def _linear(name: str, n: int, k: int, bias: bool, component: str, layer: int | None,
            role: str = "linear") -> Iterator[Tensor]:
    yield Tensor(f"{name}.weight", (n, k), component, role, layer)
    if bias:
        yield Tensor(f"{name}.bias", (n,), component, "bias", layer)


def _attention(spec: ModelSpec, i: int) -> Iterator[Tensor]:
    """Standard: q [h·d_h, d], k [k·d_h, d], v [k·d_v, d], o [d, h·d_v]. MLA: q_a [r_q, d],
    q_b [h·d_h, r_q] (or q), kv_a_mqa [r_kv + d_r, d], kv_b [h·(d_h - d_r + d_v), r_kv], o."""
    d, h, blk = spec.d_model, spec.heads, f"blk.{i}"
    qkv_bias = spec.qkv_bias
    if spec.latent_attention:
        if spec.q_lora_rank:
            yield from _linear(f"{blk}.attn_q_a", spec.q_lora_rank, d, qkv_bias, "attention", i)
            yield from _linear(f"{blk}.attn_q_b", h * spec.head_dim, spec.q_lora_rank, False,
                               "attention", i)
        else:
            yield from _linear(f"{blk}.attn_q", h * spec.head_dim, d, False, "attention", i)
        yield from _linear(f"{blk}.attn_kv_a_mqa", spec.kv_lora_rank + spec.qk_rope_head_dim, d,
                           qkv_bias, "attention", i)
        kv_b = h * (spec.head_dim - spec.qk_rope_head_dim + spec.v_head_dim)
        yield from _linear(f"{blk}.attn_kv_b", kv_b, spec.kv_lora_rank, False, "attention", i)
    else:
        kv = spec.kv_heads
        gate = 2 if spec.attention_gate else 1  # Qwen3-Next's output gate: q twice as wide
        yield from _linear(f"{blk}.attn_q", gate * h * spec.head_dim, d, qkv_bias, "attention",
                           i)
        yield from _linear(f"{blk}.attn_k", kv * spec.head_dim, d, qkv_bias, "attention", i)
        yield from _linear(f"{blk}.attn_v", kv * spec.v_head_dim, d, qkv_bias, "attention", i)
    yield from _linear(f"{blk}.attn_output", d, h * spec.v_head_dim, spec.o_bias, "attention", i)
    if spec.attention_sinks:  # llama.cpp's name for gpt-oss's sinks, one per query head
        yield Tensor(f"{blk}.attn_sinks.weight", (h,), "attention", "bias", i)


def _mlp(spec: ModelSpec, prefix: str, suffix: str, width: int, bias: bool, layer: int,
         experts: int = 0) -> Iterator[Tensor]:
    """gate [f, d] (gated only), up [f, d], down [d, f]; stacked [E, ...] for experts (their
    biases too, [E, f] and [E, d], as gpt-oss stores them)."""
    d = spec.d_model
    stack = (experts,) if experts else ()
    names = ("gate", "up") if spec.mlp == "gated" else ("up",)
    for part in names:
        yield Tensor(f"{prefix}.ffn_{part}{suffix}.weight", (*stack, width, d), "mlp", "linear",
                     layer)
        if bias:
            yield Tensor(f"{prefix}.ffn_{part}{suffix}.bias", (*stack, width), "mlp", "bias",
                         layer)
    yield Tensor(f"{prefix}.ffn_down{suffix}.weight", (*stack, d, width), "mlp", "linear", layer)
    if bias:
        yield Tensor(f"{prefix}.ffn_down{suffix}.bias", (*stack, d), "mlp", "bias", layer)


def _ssm(spec: ModelSpec, i: int, kind: str) -> Iterator[Tensor]:
    """A state-space or gated DeltaNet mixer as params.ssm_params and ssm_norms count it, by
    llama.cpp's names. Mamba: in [2·d_in, d], conv1d [d_in, K] (+ bias), x [R + 2N, d_in],
    dt [d_in, R] + bias, A [d_in, N], D [d_in], Jamba's dt/B/C norms, out [d, d_in]. Mamba-2:
    in [2·d_in + 2·G·N + H, d], conv1d [d_in + 2·G·N, K] (+ bias), dt bias, A, D [H], the
    gated norm [d_in], out [d, d_in]. Gated DeltaNet: in (qkvz) [2·H_k·d_k + 2·H_v·d_v, d],
    ba [2·H_v, d], conv1d [2·H_k·d_k + H_v·d_v, K], A, dt bias [H_v], norm [d_v], out
    [d, H_v·d_v]. A short convolution (LFM2, llama.cpp's shortconv tensors): in_proj [3·d, d],
    conv [d, K] (+ bias), out_proj [d, d], the projections with biases when ssm_bias."""
    d, inner, n, blk = spec.d_model, spec.ssm_inner, spec.ssm_state, f"blk.{i}"
    bias = spec.ssm_bias
    if kind == "short_conv":
        yield from _linear(f"{blk}.shortconv.in_proj", 3 * d, d, bias, "ssm", i)
        yield Tensor(f"{blk}.shortconv.conv.weight", (d, spec.ssm_conv), "ssm", "linear", i)
        if spec.ssm_conv_bias:
            yield Tensor(f"{blk}.shortconv.conv.bias", (d,), "ssm", "bias", i)
        yield from _linear(f"{blk}.shortconv.out_proj", d, d, bias, "ssm", i)
        return
    if kind == "linear_attention":
        keys = spec.linear_key_heads * spec.linear_key_dim
        values = spec.linear_value_heads * spec.linear_value_dim
        heads = spec.linear_value_heads
        yield from _linear(f"{blk}.ssm_in", 2 * keys + 2 * values, d, False, "ssm", i)
        yield from _linear(f"{blk}.ssm_ba", 2 * heads, d, False, "ssm", i)
        yield Tensor(f"{blk}.ssm_conv1d.weight", (2 * keys + values, spec.ssm_conv), "ssm",
                     "linear", i)
        yield Tensor(f"{blk}.ssm_a", (heads,), "ssm", "bias", i)
        yield Tensor(f"{blk}.ssm_dt.bias", (heads,), "ssm", "bias", i)
        yield Tensor(f"{blk}.ssm_norm.weight", (spec.linear_value_dim,), "norms", "norm", i)
        yield from _linear(f"{blk}.ssm_out", d, values, False, "ssm", i)
        return
    if kind == "mamba":
        rank = spec.ssm_dt_rank
        yield from _linear(f"{blk}.ssm_in", 2 * inner, d, bias, "ssm", i)
        yield Tensor(f"{blk}.ssm_conv1d.weight", (inner, spec.ssm_conv), "ssm", "linear", i)
        if spec.ssm_conv_bias:
            yield Tensor(f"{blk}.ssm_conv1d.bias", (inner,), "ssm", "bias", i)
        yield from _linear(f"{blk}.ssm_x", rank + 2 * n, inner, False, "ssm", i)
        yield from _linear(f"{blk}.ssm_dt", inner, rank, True, "ssm", i)
        yield Tensor(f"{blk}.ssm_a", (inner, n), "ssm", "bias", i)
        yield Tensor(f"{blk}.ssm_d", (inner,), "ssm", "bias", i)
        if spec.ssm_norm:
            for name, width in (("ssm_dt_norm", rank), ("ssm_b_norm", n), ("ssm_c_norm", n)):
                yield Tensor(f"{blk}.{name}.weight", (width,), "norms", "norm", i)
        yield from _linear(f"{blk}.ssm_out", d, inner, bias, "ssm", i)
        return
    heads, channels = spec.ssm_heads, inner + 2 * spec.ssm_groups * n
    yield from _linear(f"{blk}.ssm_in", inner + channels + heads, d, bias, "ssm", i)
    yield Tensor(f"{blk}.ssm_conv1d.weight", (channels, spec.ssm_conv), "ssm", "linear", i)
    if spec.ssm_conv_bias:
        yield Tensor(f"{blk}.ssm_conv1d.bias", (channels,), "ssm", "bias", i)
    yield Tensor(f"{blk}.ssm_dt.bias", (heads,), "ssm", "bias", i)
    yield Tensor(f"{blk}.ssm_a", (heads,), "ssm", "bias", i)
    yield Tensor(f"{blk}.ssm_d", (heads,), "ssm", "bias", i)
    if spec.ssm_norm:
        yield Tensor(f"{blk}.ssm_norm.weight", (inner,), "norms", "norm", i)
    yield from _linear(f"{blk}.ssm_out", d, inner, bias, "ssm", i)


def _block(spec: ModelSpec, i: int) -> Iterator[Tensor]:
    """Block ``i``: its norms, its mixer (attention with its q/k and latent norms, or a
    state-space or DeltaNet mixer, or both side by side: ``layer_types``) and its MLP."""
    d, blk = spec.d_model, f"blk.{i}"
    kind = spec.layer_types[i] if spec.layer_types else "attention"
    for j in range(spec.norms_per_block):
        name = _NORM_NAMES[j] if j < len(_NORM_NAMES) else f"norm_{j}"
        yield from _norm(spec, f"{blk}.{name}", d, layer=i)
    if kind in ("attention", "hybrid"):
        if spec.qk_norm == "head":
            yield from _norm(spec, f"{blk}.attn_q_norm", spec.head_dim, layer=i)
            yield from _norm(spec, f"{blk}.attn_k_norm", spec.head_dim, layer=i)
        elif spec.qk_norm == "full":
            yield from _norm(spec, f"{blk}.attn_q_norm", spec.heads * spec.head_dim, layer=i)
            yield from _norm(spec, f"{blk}.attn_k_norm", spec.kv_heads * spec.head_dim, layer=i)
        if spec.q_lora_rank:  # MLA's RMSNorms on its latents (weight only, whatever spec.norm)
            yield Tensor(f"{blk}.attn_q_a_norm.weight", (spec.q_lora_rank,), "norms", "norm", i)
        if spec.kv_lora_rank:
            yield Tensor(f"{blk}.attn_kv_a_norm.weight", (spec.kv_lora_rank,), "norms", "norm",
                         i)
        yield from _attention(spec, i)
    if kind in STATE_KINDS:
        yield from _ssm(spec, i, kind)
    if i in spec.no_mlp_layers:
        return
    if spec.experts and i not in spec.dense_layers:
        yield Tensor(f"{blk}.ffn_gate_inp.weight", (spec.experts, d), "mlp", "router", i)
        if spec.router_bias:
            yield Tensor(f"{blk}.ffn_gate_inp.bias", (spec.experts,), "mlp", "bias", i)
        yield from _mlp(spec, blk, "_exps", spec.expert_d_ff, spec.expert_bias, i, spec.experts)
        if spec.shared_d_ff:
            yield from _mlp(spec, blk, "_shexp", spec.shared_d_ff, spec.mlp_bias, i)
        if spec.shared_expert_gate:
            yield Tensor(f"{blk}.ffn_gate_inp_shexp.weight", (1, d), "mlp", "shared_gate", i)
    else:
        yield from _mlp(spec, blk, "", spec.d_ff, spec.mlp_bias, i)


def check_listed(spec: ModelSpec) -> None:
    """Refuse, before any list per layer is built, a model of more layers than
    ``MAX_LISTED_LAYERS``."""
    if spec.layers > MAX_LISTED_LAYERS:
        raise SpecError(f"a model of {spec.layers:,} layers: its tensors are listed layer by "
                        f"layer (a quantized layout, a plan per GPU, a placement) for at most "
                        f"{MAX_LISTED_LAYERS:,} layers (count in a plain dtype answers any "
                        "number)", field="layers", value=spec.layers)


def model_tensors(spec: ModelSpec) -> tuple[Tensor, ...]:
    """Every parameter tensor of ``spec`` (GGUF names, PyTorch shapes), in GGUF's order: the
    tensors outside the blocks, then block by block. A tied output head is not listed (the
    token embedding serves as both); attention projections are listed as separate q, k, v
    as Llama stores them. A block holds the mixers ``layer_types`` gives it (attention, a
    state-space or DeltaNet mixer, or both) and an MLP unless it is in ``no_mlp_layers``."""
    check_listed(spec)
    tensors = _outside_blocks(spec)
    # a block of a kind met before: that block's tensors renamed (block_kinds)
    made: dict[int, list[tuple[str, tuple[int, ...], str, str]]] = {}
    for i, at in enumerate(_first_of_kind(spec, range(spec.layers))):
        if at == i:
            block = list(_block(spec, i))
            tensors += block
            cut = len(f"blk.{i}.")
            made[i] = [(t.name[cut:], t.shape, t.component, t.role) for t in block]
        else:
            prefix = f"blk.{i}."
            tensors += [Tensor(prefix + tail, shape, component, role, i)
                        for tail, shape, component, role in made[at]]
    if spec.vision is not None:
        tensors += tower_of(spec)
    return tuple(tensors)


def model_tensors_alike(spec: ModelSpec, layers: range | None = None
                        ) -> list[tuple[Tensor, int]]:
    """``model_tensors(spec)`` with each block's tensors listed once for all the blocks built
    alike, each with how many tensors it stands for: a tensor outside the blocks stands for
    itself, a block's for the blocks of its kind (``block_kinds``). The blocks listed come in
    ``model_tensors``' order, so the first tensor of any shape is the one it lists first.
    With ``layers`` (a pipeline stage's), only those blocks."""
    check_listed(spec)
    pairs = [(t, 1) for t in _outside_blocks(spec)]
    for i, n in block_kinds(spec, layers).items():
        pairs += ((t, n) for t in _block(spec, i))
    if spec.vision is not None:
        pairs += ((t, 1) for t in tower_of(spec))
    return pairs


def block_kinds(spec: ModelSpec, layers: range | None = None) -> dict[int, int]:
    """The first block of each kind and how many blocks are of that kind, in block order (of
    ``layers``, default all). A block's tensors read its index in their names and ``layer``
    alone, and otherwise its kind: its layer type, whether it has an MLP and whether that MLP
    is routed experts (``_block``)."""
    kinds: dict[int, int] = {}
    for at in _first_of_kind(spec, range(spec.layers) if layers is None else layers):
        kinds[at] = kinds.get(at, 0) + 1
    return kinds


def _first_of_kind(spec: ModelSpec, layers: range) -> list[int]:
    """For each block of ``layers``, the first of them of its kind (``block_kinds``)."""
    types, no_mlp, dense = spec.layer_types, set(spec.no_mlp_layers), set(spec.dense_layers)
    routed = spec.experts > 0
    first: dict[tuple[str, bool, bool], int] = {}
    return [first.setdefault((types[i] if types else "attention", i in no_mlp,
                              routed and i not in dense), i) for i in layers]


def _outside_blocks(spec: ModelSpec) -> list[Tensor]:
    """The tensors ``model_tensors`` lists before the blocks: embeddings, their projections
    and norm, the final norm and the output head."""
    d, e = spec.d_model, spec.embedding_dim
    tensors: list[Tensor] = [Tensor("token_embd.weight", (spec.vocab, e), "token_embedding",
                                    "embedding")]
    if spec.positions == "learned":
        tensors.append(Tensor("position_embd.weight", (spec.context + spec.position_offset, d),
                              "position_embedding", "embedding"))
    if e != d:
        tensors += _linear("project_in", d, e, False, "embedding_projections", None,
                           "projection")
        tensors += _linear("project_out", e, d, False, "embedding_projections", None,
                           "projection")
    if spec.embedding_norm:
        tensors += _norm(spec, "token_embd_norm", d)
    if spec.final_norm:
        tensors += _norm(spec, "output_norm", d)
    if not spec.tied_embeddings:
        tensors.append(Tensor("output.weight", (spec.vocab, e), "output_head", "head"))
    if spec.head_bias:
        tensors.append(Tensor("output.bias", (spec.vocab,), "output_head", "bias"))
    return tensors


def tower_of(spec: ModelSpec) -> tuple[Tensor, ...]:
    """The vision tower's and projector's tensors (``v.`` and transformers' names below the
    tower's module), outside the blocks (``layer`` None): none for a text-only spec."""
    if spec.vision is None:
        return ()
    from specsheet.model.vision import tower_tensors

    return tuple(Tensor(f"v.{t.name}", t.shape, t.component,
                        f"tower_{t.cut}" if t.cut else "tower") for t in tower_tensors(spec.vision))


def layer_tensors(spec: ModelSpec, i: int) -> tuple[Tensor, ...]:
    """The tensors of block ``i``, as ``model_tensors`` lists them."""
    return tuple(_block(spec, i))


def score_bias_tensors(spec: ModelSpec, layers: range | None = None) -> tuple[Tensor, ...]:
    """The router's score-correction bias of every MoE layer (of ``layers``, default all):
    DeepSeek-V3's ``mlp.gate.e_score_correction_bias``, E values in F32 (llama.cpp names it
    ``exp_probs_b.bias``). A buffer to transformers, so not in ``model_tensors`` nor in the
    parameter count; the checkpoint stores it and vLLM loads it whole on every GPU (the gate
    is a ReplicatedLinear)."""
    if not spec.experts:
        return ()
    held = range(spec.layers) if layers is None else layers
    return tuple(Tensor(f"blk.{i}.exp_probs_b.bias", (spec.experts,), "mlp", "buffer", i)
                 for i in held if i not in spec.dense_layers and i not in spec.no_mlp_layers)

