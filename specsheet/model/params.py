"""Parameter counts by component, as exact integers.

Notation: L layers, d = d_model, h heads, k = kv_heads, d_h = head_dim, d_v = v_head_dim,
f = d_ff, V vocab, e = embedding_dim, n_max context; MoE: E experts, f_e = expert_d_ff,
f_s = shared_d_ff; MLA: r_kv = kv_lora_rank, r_q = q_lora_rank, d_r = qk_rope_head_dim.
Every weight and bias is counted; a tied output head is counted once (as the token embedding).
Totals are always sums of the named parts below.
"""


from specsheet.compiled import NamedTuple
from specsheet.model.spec import STATE_KINDS, ModelSpec

COMPONENTS = (
    "token_embedding", "position_embedding", "embedding_projections", "attention", "ssm", "mlp",
    "norms", "output_head",
)
_NORM_FACTOR = {"layernorm": 2, "rmsnorm": 1, "none": 0}


def norm_params(spec: ModelSpec, width: int) -> int:
    """One norm over ``width`` values: 2 x width (LayerNorm), width (RMSNorm) or 0."""
    return _NORM_FACTOR[spec.norm] * width


def attention_weights(spec: ModelSpec) -> int:
    """Projection matrices of one layer.

    Standard: q d x h·d_h, k d x k·d_h, v d x k·d_v, o h·d_v x d.
    MLA: q (d x r_q, r_q x h·d_h; or d x h·d_h), kv_a d x (r_kv + d_r),
    kv_b r_kv x h·(d_h - d_r + d_v), o h·d_v x d.
    """
    d, h = spec.d_model, spec.heads
    out = h * spec.v_head_dim * d
    if spec.latent_attention:
        q_width = h * spec.head_dim
        q = spec.q_lora_rank * (d + q_width) if spec.q_lora_rank else d * q_width
        kv_a = d * (spec.kv_lora_rank + spec.qk_rope_head_dim)
        kv_b = spec.kv_lora_rank * h * (spec.head_dim - spec.qk_rope_head_dim + spec.v_head_dim)
        return q + kv_a + kv_b + out
    kv = spec.kv_heads
    gate = d * h * spec.head_dim if spec.attention_gate else 0  # Qwen3-Next's output gate
    return d * h * spec.head_dim + gate + d * kv * spec.head_dim + d * kv * spec.v_head_dim + out


def attention_biases(spec: ModelSpec) -> int:
    """Bias vectors of one layer's projections (qkv_bias: q, k, v or MLA's q_a and kv_a;
    o_bias: the output), and with attention_sinks one sink logit per query head (h)."""
    biases = (spec.d_model if spec.o_bias else 0) + (spec.heads if spec.attention_sinks else 0)
    if spec.qkv_bias:
        if spec.latent_attention:
            q = spec.q_lora_rank if spec.q_lora_rank else 0
            biases += q + spec.kv_lora_rank + spec.qk_rope_head_dim
        else:
            gate = 2 if spec.attention_gate else 1  # the output gate's bias too
            biases += gate * spec.heads * spec.head_dim + spec.kv_heads * (
                spec.head_dim + spec.v_head_dim)
    return biases


def mlp_weights(spec: ModelSpec, width: int) -> int:
    """One MLP of inner width ``width``: 2·d·width (plain) or 3·d·width (gated)."""
    matrices = 3 if spec.mlp == "gated" else 2
    return matrices * spec.d_model * width


def mlp_biases(spec: ModelSpec, width: int) -> int:
    """Its biases: width + d (plain) or 2·width + d (gated), or 0 without biases."""
    if not spec.mlp_bias or not width:
        return 0
    return (2 * width if spec.mlp == "gated" else width) + spec.d_model


def expert_params(spec: ModelSpec) -> int:
    """One routed expert: its matrices, and with expert_bias their biases
    (2·f_e + d gated, f_e + d plain)."""
    width = spec.expert_d_ff
    biases = 0
    if spec.expert_bias and width:
        biases = (2 * width if spec.mlp == "gated" else width) + spec.d_model
    return mlp_weights(spec, width) + biases


def router_params(spec: ModelSpec) -> int:
    """One MoE layer's router: E x d, and E with router_bias."""
    return spec.experts * (spec.d_model + (1 if spec.router_bias else 0))


def ssm_conv_channels(spec: ModelSpec, kind: str) -> int:
    """Channels of a layer's causal convolution: d_inner (Mamba), d_inner + 2·G·N (Mamba-2),
    2·H_k·d_k + H_v·d_v (gated DeltaNet: queries, keys and values), d (a short convolution)."""
    if kind == "short_conv":
        return spec.d_model
    if kind == "mamba":
        return spec.ssm_inner
    if kind in ("mamba2", "hybrid"):
        return spec.ssm_inner + 2 * spec.ssm_groups * spec.ssm_state
    if kind == "linear_attention":
        return 2 * spec.linear_key_heads * spec.linear_key_dim + \
            spec.linear_value_heads * spec.linear_value_dim
    return 0


def ssm_projection_weights(spec: ModelSpec, kind: str) -> int:
    """The matrices a token is multiplied by in one state-space or linear-attention layer.

    Mamba: in d x 2·d_in, x d_in x (R + 2N), dt R x d_in, out d_in x d.
    Mamba-2: in d x (2·d_in + 2·G·N + H), out d_in x d.
    Gated DeltaNet: qkvz d x (2·H_k·d_k + 2·H_v·d_v), ba d x 2·H_v, out H_v·d_v x d.
    Short convolution (LFM2): in d x 3d (B, C and x), out d x d.
    """
    d, inner = spec.d_model, spec.ssm_inner
    if kind == "short_conv":
        return 4 * d * d
    if kind == "mamba":
        rank = spec.ssm_dt_rank
        return d * 2 * inner + inner * (rank + 2 * spec.ssm_state) + rank * inner + inner * d
    if kind in ("mamba2", "hybrid"):
        return d * (2 * inner + 2 * spec.ssm_groups * spec.ssm_state + spec.ssm_heads) + inner * d
    if kind == "linear_attention":
        keys = spec.linear_key_heads * spec.linear_key_dim
        values = spec.linear_value_heads * spec.linear_value_dim
        return d * (2 * keys + 2 * values) + d * 2 * spec.linear_value_heads + values * d
    return 0


def ssm_params(spec: ModelSpec, kind: str) -> int:
    """One layer's state-space or linear-attention mixer, its norms left out: the projections,
    their biases (ssm_bias), the convolution (kernel x channels, and a bias with
    ssm_conv_bias), and per channel or head A, D and the time-step bias (a short convolution
    has none of those three: its projections' biases are 3d + d)."""
    if kind not in STATE_KINDS:
        return 0
    d, inner = spec.d_model, spec.ssm_inner
    channels = ssm_conv_channels(spec, kind)
    if kind == "short_conv":
        return ssm_projection_weights(spec, kind) + (4 * d if spec.ssm_bias else 0) + \
            channels * spec.ssm_conv + (channels if spec.ssm_conv_bias else 0)
    if kind == "linear_attention":  # no conv bias; A_log and dt_bias per value head
        return ssm_projection_weights(spec, kind) + channels * spec.ssm_conv + \
            2 * spec.linear_value_heads
    conv = channels * spec.ssm_conv + (channels if spec.ssm_conv_bias else 0)
    if kind == "mamba":
        biases = 2 * inner + d if spec.ssm_bias else 0
        # dt_proj's bias, A (d_in x N), D (d_in)
        return ssm_projection_weights(spec, kind) + biases + conv + inner + \
            inner * spec.ssm_state + inner
    heads = spec.ssm_heads
    biases = 2 * inner + 2 * spec.ssm_groups * spec.ssm_state + heads + d if spec.ssm_bias else 0
    return ssm_projection_weights(spec, kind) + biases + conv + 3 * heads  # dt_bias, A, D


def ssm_norms(spec: ModelSpec, kind: str) -> int:
    """The norms inside one mixer: Mamba-2's gated RMSNorm (d_in), Jamba's RMSNorms on the
    time step, B and C (R + 2N), gated DeltaNet's gated RMSNorm (one value head wide)."""
    if kind == "linear_attention":
        return spec.linear_value_dim
    if not spec.ssm_norm:
        return 0
    if kind == "mamba":
        return spec.ssm_dt_rank + 2 * spec.ssm_state
    if kind in ("mamba2", "hybrid"):
        return spec.ssm_inner
    return 0


def layer_norms(spec: ModelSpec) -> int:
    """Norms of one layer: norms_per_block x d wide, q/k norms, MLA's latent norms."""
    qk = {"none": 0, "head": 2 * spec.head_dim,
          "full": (spec.heads + spec.kv_heads) * spec.head_dim}[spec.qk_norm]
    latent = spec.kv_lora_rank + spec.q_lora_rank  # MLA's RMSNorms on its latents
    return norm_params(spec, spec.norms_per_block * spec.d_model + qk) + latent


class MoEParams(NamedTuple):
    """The MLP parameters of a mixture-of-experts model, all layers."""

    dense: int  # dense MLPs (of the dense layers)
    router: int  # E x d per MoE layer (+ E with a router bias)
    routed_experts: int  # E experts per MoE layer
    shared_experts: int  # shared experts and their gate

    @property
    def total(self) -> int:
        return sum(self)


class BlockParams(NamedTuple):
    """The parameters of one layer (for an MoE model, the MLP of an MoE layer)."""

    attention: int  # projections and their biases
    mlp: int  # MLP, or router + experts + shared experts
    norms: int  # the layer's norms

    @property
    def total(self) -> int:
        return self.attention + self.mlp + self.norms


class ParamBreakdown(NamedTuple):
    """Where a model's parameters live. ``total`` is the sum of the eight components, and of
    a multimodal checkpoint's vision tower and projector (``vision``, ``projector``): the
    whole checkpoint; ``language_model`` is the eight alone."""

    token_embedding: int  # V x e
    position_embedding: int  # (n_max + offset) x d for a learned table, else 0
    embedding_projections: int  # e x d in and d x e out, when e != d
    attention: int  # the attention layers' attention
    ssm: int  # state-space and linear-attention mixers (Mamba, Mamba-2, gated DeltaNet)
    mlp: int  # dense MLPs, routers, routed and shared experts
    norms: int  # every norm: layers, final, q/k, MLA latent, embedding
    output_head: int  # V x e when untied (+ V with a bias), 0 when tied
    block: BlockParams  # one layer
    moe: MoEParams  # the split of ``mlp``
    expert: int  # one routed expert
    active: int  # used per token: total minus the routed experts a token does not use
    vision: int = 0  # a multimodal checkpoint's image encoder
    projector: int = 0  # and the projector from its features to d_model
    multimodal: bool = False  # the spec has a vision tower: vision and projector are components

    def components(self) -> dict[str, int]:
        """The eight components by name, in a fixed order, then vision and projector for a
        multimodal checkpoint."""
        if not self.multimodal:
            return {name: getattr(self, name) for name in COMPONENTS}
        from specsheet.model.vision import TOWER_COMPONENTS  # a multimodal checkpoint's alone

        names = (*COMPONENTS, *TOWER_COMPONENTS)
        return {name: getattr(self, name) for name in names}

    @property
    def towers(self) -> int:
        """The vision tower and projector (0 for a text-only model)."""
        return self.vision + self.projector

    @property
    def language_model(self) -> int:
        """The text model: the total without the vision tower and projector (what a
        text-only count of the checkpoint means)."""
        return self.total - self.towers

    @property
    def total(self) -> int:
        """The sum of ``components()``, written out: it is asked often."""
        eight = (self.token_embedding + self.position_embedding + self.embedding_projections
                 + self.attention + self.ssm + self.mlp + self.norms + self.output_head)
        return eight + self.vision + self.projector if self.multimodal else eight

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
    d, e = spec.d_model, spec.embedding_dim
    dense = mlp_weights(spec, spec.d_ff) + mlp_biases(spec, spec.d_ff)
    expert = expert_params(spec)  # biases only with expert_bias (gpt-oss)
    shared = (mlp_weights(spec, spec.shared_d_ff) + mlp_biases(spec, spec.shared_d_ff)
              + (d if spec.shared_expert_gate else 0))
    moe_layers = spec.moe_layers
    moe = MoEParams(
        dense=spec.dense_mlp_layers * dense,
        router=moe_layers * router_params(spec),
        routed_experts=moe_layers * spec.experts * expert,
        shared_experts=moe_layers * shared,
    )
    attention = attention_weights(spec) + attention_biases(spec)
    norms = layer_norms(spec)
    mlp_of_block = router_params(spec) + spec.experts * expert + shared if spec.experts \
        else dense
    kinds = spec.layer_types
    attention_layers = spec.attention_layers
    ssm = sum(ssm_params(spec, kind) for kind in kinds)
    mixer_norms = sum(ssm_norms(spec, kind) for kind in kinds)
    qk = {"none": 0, "head": 2 * spec.head_dim,
          "full": (spec.heads + spec.kv_heads) * spec.head_dim}[spec.qk_norm]
    # q/k norms and MLA latents belong to the attention layers only
    attention_norms = norm_params(spec, qk) + spec.kv_lora_rank + spec.q_lora_rank
    token_embedding = spec.vocab * e
    head = (0 if spec.tied_embeddings else spec.vocab * e) + (spec.vocab if spec.head_bias else 0)
    breakdown = ParamBreakdown(
        token_embedding=token_embedding,
        position_embedding=(spec.context + spec.position_offset) * d
        if spec.positions == "learned" else 0,
        embedding_projections=2 * e * d if e != d else 0,
        attention=attention_layers * attention,
        ssm=ssm,
        mlp=moe.total,
        norms=spec.layers * norms - (spec.layers - attention_layers) * attention_norms
        + mixer_norms + (norm_params(spec, d) if spec.final_norm else 0)
        + (norm_params(spec, d) if spec.embedding_norm else 0),
        output_head=head,
        block=BlockParams(attention=attention, mlp=mlp_of_block, norms=norms),
        moe=moe,
        expert=expert,
        active=0,
    )
    if spec.vision is not None:
        from specsheet.model.vision import tower_params  # a multimodal checkpoint's alone

        tower = tower_params(spec.vision)
        breakdown = breakdown._replace(multimodal=True, vision=tower["vision"],
                                       projector=tower["projector"])
    unused = moe_layers * (spec.experts - spec.experts_per_token) * expert
    return breakdown._replace(active=breakdown.total - unused)
