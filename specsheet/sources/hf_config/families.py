"""Hugging Face config.json files turned into spec fields, family by family.

Each family reads the keys its transformers model class reads, and where a key is absent applies
the default of its transformers configuration class (transformers 5.x), so that a config.json
that transformers accepts gives the model transformers builds.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.sources.hf_config.defaults import DEFAULTS
from specsheet.sources.hf_config.reader import HFConfig, key_error

Fields = dict[str, Any]


def _sliding(fields: Fields, window: int | None, layers: Iterable[int]) -> None:
    windowed = list(layers)
    if window and windowed:
        fields["sliding_window"] = window
        fields["sliding_layers"] = windowed


def _layer_types_or(c: HFConfig, fields: Fields, window: int | None,
                    rule: Callable[[int], bool]) -> None:
    """Windowed layers from an explicit ``layer_types``, else from the family's rule."""
    layers = fields["layers"]
    types = c.layer_types(layers)
    if types is not None:
        _sliding(fields, window, (i for i, t in enumerate(types) if t == "sliding_attention"))
    else:
        _sliding(fields, window, (i for i in range(layers) if rule(i)))


def _llama_like_dims(c: HFConfig) -> Fields:
    """Llama's keys for a family whose head_dim defaults to hidden_size // heads even when
    heads do not divide hidden_size (the attention's getattr(config, "head_dim", ...))."""
    d, heads = c.integer("hidden_size"), c.integer("num_attention_heads")
    head_dim = c.optional_integer("head_dim") or d // heads
    return {**_llama_like(c, check_head_dim=False), "head_dim": head_dim}


def _llama_like(c: HFConfig, check_head_dim: bool = True) -> Fields:
    """The keys shared by Llama and its descendants: RMSNorm, gated MLP, rotary positions.
    num_key_value_heads defaults to the heads, head_dim to hidden_size / heads."""
    d, heads = c.integer("hidden_size"), c.integer("num_attention_heads")
    fields: Fields = {
        "layers": c.integer("num_hidden_layers"),
        "d_model": d,
        "heads": heads,
        "kv_heads": c.integer("num_key_value_heads", heads),
        "vocab": c.integer("vocab_size"),
        "context": c.integer("max_position_embeddings"),
        "d_ff": c.integer("intermediate_size"),
        "mlp": "gated",
        "norm": "rmsnorm",
        "attn_bias": c.flag("attention_bias"),
        "mlp_bias": c.flag("mlp_bias"),
        "positions": "rotary",
        "tied_embeddings": c.flag("tie_word_embeddings"),
    }
    head_dim = c.optional_integer("head_dim")
    if head_dim is not None:
        fields["head_dim"] = head_dim
    elif d % heads and check_head_dim:
        raise key_error("num_attention_heads", f"{heads} does not divide "
                        f"hidden_size {d}, and head_dim is not given", source=c.origin)
    return fields


def _gpt2(c: HFConfig) -> Fields:
    d = c.integer("n_embd")
    return {"layers": c.integer("n_layer"), "d_model": d, "heads": c.integer("n_head"),
            "vocab": c.integer("vocab_size"), "context": c.integer("n_positions"),
            "d_ff": c.integer("n_inner", 4 * d),
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _gpt_bigcode(c: HFConfig) -> Fields:
    """StarCoder and SantaCoder: GPT-2's block with one KV head when multi_query (the fused
    c_attn is hidden + 2 x head_dim wide, with its bias), else one per query head."""
    fields = _gpt2(c)
    fields["kv_heads"] = 1 if c.flag("multi_query") else fields["heads"]
    return fields


def _gpt_neo(c: HFConfig) -> Fields:
    """GPT-Neo: GPT-2's block with q, k and v without biases (the output projection has one).
    Its local layers (``attention_types``, ``window_size``) only mask the scores: transformers'
    cache (a DynamicCache with no sliding layers: GPTNeoConfig has no sliding_window or
    layer_types) keeps every position in every layer, and the scores are computed over all of
    them, so no layer is windowed here either."""
    d = c.integer("hidden_size")
    return {"layers": c.integer("num_layers"), "d_model": d, "heads": c.integer("num_heads"),
            "vocab": c.integer("vocab_size"), "context": c.integer("max_position_embeddings"),
            "d_ff": c.integer("intermediate_size", 4 * d), "qkv_bias": False, "o_bias": True,
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _gpt_neox(c: HFConfig) -> Fields:
    return {"layers": c.integer("num_hidden_layers"), "d_model": c.integer("hidden_size"),
            "heads": c.integer("num_attention_heads"), "vocab": c.integer("vocab_size"),
            "context": c.integer("max_position_embeddings"),
            "d_ff": c.integer("intermediate_size"), "attn_bias": c.flag("attention_bias"),
            "positions": "rotary", "tied_embeddings": c.flag("tie_word_embeddings")}


def _gptj(c: HFConfig) -> Fields:
    d = c.integer("n_embd")
    return {"layers": c.integer("n_layer"), "d_model": d, "heads": c.integer("n_head"),
            "vocab": c.integer("vocab_size"), "context": c.integer("n_positions"),
            "d_ff": c.integer("n_inner", 4 * d), "attn_bias": False, "head_bias": True,
            "norms_per_block": 1, "positions": "rotary",
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _opt(c: HFConfig) -> Fields:
    d = c.integer("hidden_size")
    bias = c.flag("enable_bias")
    return {"layers": c.integer("num_hidden_layers"), "d_model": d,
            "heads": c.integer("num_attention_heads"), "vocab": c.integer("vocab_size"),
            "context": c.integer("max_position_embeddings"), "d_ff": c.integer("ffn_dim"),
            "attn_bias": bias, "mlp_bias": bias,
            "norm": "layernorm" if c.flag("layer_norm_elementwise_affine") else "none",
            "position_offset": 2,  # OPT's learned positions keep 2 extra rows
            "embedding_dim": c.integer("word_embed_proj_dim", d),
            "final_norm": c.flag("do_layer_norm_before")
            and not c.flag("_remove_final_layer_norm"),
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _bloom(c: HFConfig) -> Fields:
    """BLOOM has no position limit (ALiBi); its context is seq_length, else 2,048 tokens,
    the length it was trained on."""
    d = c.integer(("hidden_size", "n_embed"))
    return {"layers": c.integer(("n_layer", "num_hidden_layers")), "d_model": d,
            "heads": c.integer(("n_head", "num_attention_heads")), "vocab": c.integer("vocab_size"),
            "context": c.integer(("seq_length", "max_position_embeddings"), 2048),
            "d_ff": 4 * d, "embedding_norm": True, "positions": "alibi",
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _falcon(c: HFConfig) -> Fields:
    """Falcon: num_kv_heads with new_decoder_architecture, one head with multi_query; one norm
    per block when parallel_attn, two otherwise (and with the new architecture)."""
    d = c.integer("hidden_size")
    heads = c.integer(("num_attention_heads", "n_head"))
    new_arch = c.flag("new_decoder_architecture")
    if new_arch:
        kv = c.integer(("num_kv_heads", "n_head_kv"), heads)
    elif c.flag("multi_query"):
        kv = 1
    else:
        kv = heads
    parallel = c.flag("parallel_attn")
    norms = c.integer("num_ln_in_parallel_attn", 2 if new_arch else 1) if parallel else 2
    bias = c.flag("bias")
    return {"layers": c.integer(("num_hidden_layers", "n_layer")), "d_model": d, "heads": heads,
            "kv_heads": kv, "vocab": c.integer("vocab_size"),
            "context": c.integer("max_position_embeddings"),
            "d_ff": c.integer("ffn_hidden_size", 4 * d), "attn_bias": bias, "mlp_bias": bias,
            "norms_per_block": norms, "positions": "alibi" if c.flag("alibi") else "rotary",
            "tied_embeddings": c.flag("tie_word_embeddings")}


def _mpt(c: HFConfig) -> Fields:
    """MPT as transformers builds it: ALiBi, a fused Wqkv, no biases anywhere, LayerNorms with
    a weight and no bias (counted as weight-only norms), an MLP 4 x d_model wide, tied. A file
    whose expansion_ratio is not 4, or whose attn_config asks for grouped-query attention, is
    refused: transformers' MPT (MptMLP, MptAttention) builds 4 x d_model and all heads
    whatever those keys say, so such a checkpoint is not the model it builds."""
    d = c.integer("d_model")
    ratio = c.data.get("expansion_ratio", 4)
    if ratio != 4:
        raise key_error("expansion_ratio", f"transformers' MPT builds an MLP 4 x d_model wide "
                        f"whatever this key says, so a checkpoint of ratio {quoted(ratio)} is not "
                        "the model it builds", source=c.origin, value=ratio)
    attn = c.data.get("attn_config")
    if isinstance(attn, dict) and attn.get("attn_type", "multihead_attention") \
            != "multihead_attention":
        raise key_error("attn_config", f"attn_type {quoted(attn.get('attn_type'))}: transformers' "
                        "MPT builds multi-head attention only", source=c.origin)
    return {"layers": c.integer("n_layers"), "d_model": d, "heads": c.integer("n_heads"),
            "vocab": c.integer("vocab_size"), "context": c.integer("max_seq_len"),
            "d_ff": 4 * d, "attn_bias": False, "mlp_bias": False, "norm": "rmsnorm",
            "positions": "alibi", "tied_embeddings": c.flag("tie_word_embeddings")}


def _mistral(c: HFConfig) -> Fields:
    """Mistral and Phi-3: no biases; sliding_window (Mistral's default 4,096, Phi-3's none)
    windows every layer."""
    fields = _llama_like(c)
    fields.update(attn_bias=False, mlp_bias=False)
    _sliding(fields, c.optional_integer("sliding_window"), range(fields["layers"]))
    return fields


def _mixtral(c: HFConfig) -> Fields:
    fields = _mistral(c)
    fields.update(experts=c.integer(("num_local_experts", "num_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"])
    return fields


def _qwen_window(c: HFConfig) -> int | None:
    return c.optional_integer("sliding_window") if c.flag("use_sliding_window") else None


def _qwen2(c: HFConfig) -> Fields:
    """Qwen2: q, k and v carry biases, the output projection none; windows from
    max_window_layers on."""
    fields = _llama_like(c)
    fields.update(qkv_bias=True, o_bias=False, attn_bias=None, mlp_bias=False)
    start = c.integer("max_window_layers", minimum=0)
    _layer_types_or(c, fields, _qwen_window(c), lambda i: i >= start)
    return fields


def _qwen3(c: HFConfig) -> Fields:
    """Qwen3: q/k norms one head wide."""
    fields = _llama_like(c)
    fields.update(qk_norm="head", mlp_bias=False)
    start = c.integer("max_window_layers", minimum=0)
    _layer_types_or(c, fields, _qwen_window(c), lambda i: i >= start)
    return fields


def _moe_layers(c: HFConfig, fields: Fields) -> None:
    """Qwen's rule: layer i has experts unless listed in mlp_only_layers or
    (i + 1) % decoder_sparse_step != 0."""
    step = c.integer("decoder_sparse_step")
    only = set(c.integers("mlp_only_layers"))
    fields["dense_layers"] = [i for i in range(fields["layers"])
                              if i in only or (i + 1) % step]


def _qwen2_moe(c: HFConfig) -> Fields:
    """Qwen2-MoE: qkv_bias, routed experts, a shared expert with a sigmoid gate."""
    fields = _llama_like(c)
    fields.update(qkv_bias=c.flag("qkv_bias"), o_bias=False, attn_bias=None, mlp_bias=False,
                  experts=c.integer(("num_experts", "num_local_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=c.integer("moe_intermediate_size"),
                  shared_d_ff=c.integer("shared_expert_intermediate_size", minimum=0),
                  shared_expert_gate=True)
    _moe_layers(c, fields)
    stop = c.integer("max_window_layers", minimum=0)
    window = c.optional_integer("sliding_window", minimum=0) if c.flag("use_sliding_window") \
        else None
    _layer_types_or(c, fields, window, lambda i: bool((i + 1) % 2) and i < stop)
    return fields


def _qwen3_moe(c: HFConfig) -> Fields:
    """Qwen3-MoE: q/k norms, routed experts, no shared expert."""
    fields = _llama_like(c)
    fields.update(qk_norm="head", mlp_bias=False,
                  experts=c.integer(("num_experts", "num_local_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=c.integer("moe_intermediate_size"))
    _moe_layers(c, fields)
    _layer_types_or(c, fields, _qwen_window(c), lambda i: True)
    return fields


def _gemma(c: HFConfig) -> Fields:
    fields = _llama_like(c)
    fields["mlp_bias"] = False
    return fields


def _gemma2(c: HFConfig) -> Fields:
    """Gemma 2: four norms per block; even layers windowed."""
    fields = _llama_like(c)
    fields.update(mlp_bias=False, norms_per_block=4)
    _layer_types_or(c, fields, c.optional_integer("sliding_window"),
                    lambda i: bool((i + 1) % 2))
    return fields


def _gemma3_text(c: HFConfig) -> Fields:
    """Gemma 3: four norms per block, q/k norms; sliding_window_pattern - 1 windowed layers
    to each global one."""
    fields = _llama_like(c)
    fields.update(mlp_bias=False, norms_per_block=4, qk_norm="head")
    pattern = c.integer("sliding_window_pattern")
    _layer_types_or(c, fields, c.optional_integer("sliding_window"),
                    lambda i: bool((i + 1) % pattern))
    return fields


def _starcoder2(c: HFConfig) -> Fields:
    """StarCoder2: LayerNorm with bias, a plain MLP, use_bias everywhere."""
    fields = _llama_like(c)
    bias = c.flag("use_bias")
    fields.update(mlp="plain", norm="layernorm", attn_bias=bias, mlp_bias=bias)
    _sliding(fields, c.optional_integer("sliding_window"), range(fields["layers"]))
    return fields


def _olmo(c: HFConfig) -> Fields:
    fields = _llama_like(c)
    fields["norm"] = "none"  # OLMo's LayerNorm has no parameters
    return fields


def _olmo2(c: HFConfig) -> Fields:
    fields = _llama_like(c)
    fields["qk_norm"] = "full"  # over all heads' queries and keys
    return fields


def _deepseek(c: HFConfig, v3: bool) -> Fields:
    """Multi-head latent attention and DeepSeekMoE; the first_k_dense_replace layers are dense.
    A null q_lora_rank projects queries directly; a null n_routed_experts makes a dense model.
    head_dim is qk_nope_head_dim + qk_rope_head_dim, so heads need not divide hidden_size."""
    fields = _llama_like(c, check_head_dim=False)
    rope = c.integer("qk_rope_head_dim")
    fields.update(
        head_dim=c.integer("qk_nope_head_dim") + rope,
        v_head_dim=c.integer("v_head_dim"),
        kv_heads=fields["heads"],
        kv_lora_rank=c.integer("kv_lora_rank"),
        q_lora_rank=c.optional_integer("q_lora_rank") or 0,
        qk_rope_head_dim=rope,
        mlp_bias=False if v3 else fields["mlp_bias"],  # V3's MLPs have no biases
    )
    experts = c.optional_integer("n_routed_experts", minimum=0) or 0
    if experts:
        expert_d_ff = c.integer("moe_intermediate_size")
        dense = c.integer("first_k_dense_replace", minimum=0)
        fields.update(experts=experts,
                      experts_per_token=c.integer("num_experts_per_tok"),
                      expert_d_ff=expert_d_ff,
                      shared_d_ff=c.integer("n_shared_experts", minimum=0) * expert_d_ff,
                      dense_layers=list(range(min(dense, fields["layers"]))))
    return fields


def _glm4_moe_lite(c: HFConfig) -> Fields:
    """GLM-4.7-Flash (glm4_moe_lite): DeepSeek-V3's multi-head latent attention and GLM-4.5's
    experts (n_routed_experts, and n_shared_experts shared ones, of moe_intermediate_size)
    on the layers mlp_layer_types marks sparse, dense MLPs of intermediate_size on the
    dense ones; without mlp_layer_types the first layer is dense and the others sparse
    (Glm4MoeLiteConfig), whatever first_k_dense_replace says (transformers does not read
    it). The router's e_score_correction_bias is a buffer; the multi-token-prediction layer
    is not built by transformers and not counted."""
    fields = _deepseek(c, v3=True)
    layers = fields["layers"]
    value = c.data.get("mlp_layer_types")
    if value is None:
        kinds = ["dense"] + ["sparse"] * (layers - 1)
    else:
        kinds = _kinds(c, "mlp_layer_types", layers, {"dense": "dense", "sparse": "sparse"})
    if fields.get("experts"):
        fields["dense_layers"] = [i for i, kind in enumerate(kinds) if kind == "dense"]
    return fields


def _phi(c: HFConfig) -> Fields:
    """Phi-1, 1.5 and 2: one LayerNorm per block (attention and MLP in parallel), a plain GELU
    MLP, biases everywhere, an output head with a bias; partial rotary changes no count;
    qk_layernorm adds LayerNorms one head wide on queries and keys."""
    fields = _llama_like(c)
    fields.update(mlp="plain", norm="layernorm", attn_bias=True, mlp_bias=True,
                  norms_per_block=1, head_bias=True,
                  qk_norm="head" if c.flag("qk_layernorm") else "none")
    return fields


def _gpt_oss(c: HFConfig) -> Fields:
    """gpt-oss: attention_bias on q, k, v and o; a sink logit per head; every layer an MoE of
    num_local_experts experts of intermediate_size with biases and a router with a bias;
    sliding and full layers alternating (layer_types, else the odd-numbered from 1 full)."""
    fields = _llama_like(c)
    fields.update(mlp_bias=False, attention_sinks=True,
                  experts=c.integer(("num_local_experts", "num_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"], expert_bias=True, router_bias=True)
    _layer_types_or(c, fields, c.optional_integer("sliding_window"),
                    lambda i: bool((i + 1) % 2))
    return fields


def _cohere(c: HFConfig) -> Fields:
    """Command R (cohere): one LayerNorm per block (attention and MLP in parallel) with a
    weight and no bias, counted as a weight-only norm; attention_bias on q, k, v and o; no MLP
    biases; use_qk_norm adds the same norms over all heads' queries and keys; tied."""
    fields = _llama_like(c)
    fields.update(mlp_bias=False, norms_per_block=1,
                  qk_norm="full" if c.flag("use_qk_norm") else "none")
    return fields


def _cohere2(c: HFConfig) -> Fields:
    """Command R7B (cohere2): Command R's layers, sliding_window_pattern - 1 windowed layers
    to each full one (layer_types when given)."""
    fields = _llama_like(c)
    # Cohere2Config sets head_dim to hidden_size // heads whatever the file says
    fields.update(mlp_bias=False, norms_per_block=1,
                  head_dim=fields["d_model"] // fields["heads"])
    pattern = c.integer("sliding_window_pattern")
    _layer_types_or(c, fields, c.optional_integer("sliding_window"),
                    lambda i: bool((i + 1) % pattern))
    return fields


def _rope_layers(c: HFConfig, layers: int) -> list[int]:
    """1 for a layer with rotary positions, 0 for a no-RoPE layer: no_rope_layers when given,
    else every no_rope_layer_interval-th layer has none (SmolLM3, Llama 4)."""
    rope = c.integers("no_rope_layers")
    if not rope:
        interval = c.integer("no_rope_layer_interval")
        return [int((i + 1) % interval != 0) for i in range(layers)]
    if len(rope) != layers:
        raise key_error("no_rope_layers", f"expected {layers} entries (one per "
                        f"layer), got {len(rope)}", source=c.origin)
    return rope


def _smollm3(c: HFConfig) -> Fields:
    """SmolLM3: Llama's layers; its no-RoPE layers change no count. With use_sliding_window
    and a sliding_window, the no-RoPE layers (0 in no_rope_layers, else every
    no_rope_layer_interval-th) are the windowed ones (layer_types when given)."""
    fields = _llama_like(c)
    layers = fields["layers"]
    rope = _rope_layers(c, layers)
    window = c.optional_integer("sliding_window") if c.flag("use_sliding_window") else None
    _layer_types_or(c, fields, window, lambda i: not rope[i])
    return fields


def _glm4_moe(c: HFConfig) -> Fields:
    """GLM-4.5 (glm4_moe): attention_bias on q, k and v only; use_qk_norm adds RMSNorms one
    head wide; the first first_k_dense_replace layers dense, the others n_routed_experts
    experts and n_shared_experts shared ones of moe_intermediate_size. head_dim defaults to
    hidden_size // heads, rounded down as transformers does; the multi-token-prediction layers
    (num_mtp_layers) are not built by transformers and not counted, nor is the router's
    e_score_correction_bias (a buffer)."""
    fields = _llama_like_dims(c)
    bias = c.flag("attention_bias")
    expert_d_ff = c.integer("moe_intermediate_size")
    fields.update(qkv_bias=bias, o_bias=False, mlp_bias=False,
                  qk_norm="head" if c.flag("use_qk_norm") else "none",
                  experts=c.integer("n_routed_experts"),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=expert_d_ff,
                  shared_d_ff=c.integer("n_shared_experts", minimum=0) * expert_d_ff,
                  dense_layers=list(range(min(c.integer("first_k_dense_replace", minimum=0),
                                              fields["layers"]))))
    return fields


def _dots1(c: HFConfig) -> Fields:
    """dots.llm1 (dots1): Qwen3's attention (q/k norms one head wide, attention_bias on q, k, v
    and o) and DeepSeek-V3's MoE: the first first_k_dense_replace layers a dense MLP of
    intermediate_size, the others n_routed_experts experts (num_local_experts) and
    n_shared_experts shared ones of moe_intermediate_size, a router without bias (its
    e_score_correction_bias is a buffer); no MLP biases; windows from layer_types, else on
    the layers from max_window_layers on when sliding_window is set. head_dim defaults to
    hidden_size // heads (Qwen3Attention's getattr)."""
    fields = _llama_like_dims(c)
    expert_d_ff = c.integer("moe_intermediate_size")
    fields.update(mlp_bias=False, qk_norm="head",
                  experts=c.integer(("n_routed_experts", "num_local_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=expert_d_ff,
                  shared_d_ff=c.integer("n_shared_experts") * expert_d_ff,
                  dense_layers=list(range(min(c.integer("first_k_dense_replace", minimum=0),
                                              fields["layers"]))))
    start = c.integer("max_window_layers", minimum=0)
    _layer_types_or(c, fields, c.optional_integer("sliding_window"), lambda i: i >= start)
    return fields


def _minimax_m2(c: HFConfig) -> Fields:
    """MiniMax-M2: no biases (its attention builds none, whatever attention_bias says);
    RMSNorms over all heads' queries (heads x head_dim) and keys (kv heads x head_dim);
    every layer an MoE of num_local_experts experts of intermediate_size with a router
    without bias (its e_score_correction_bias is a buffer); no shared expert (transformers
    does not read shared_intermediate_size); the multi-token-prediction modules
    (num_mtp_modules) are not built by transformers and not counted; its partial rotary
    (rotary_dim) changes no count."""
    fields = _llama_like(c)
    fields.update(attn_bias=False, mlp_bias=False, qk_norm="full",
                  experts=c.integer("num_local_experts"),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"])
    return fields


def _exaone(c: HFConfig) -> Fields:
    """EXAONE 3.0 and 3.5 (exaone): transformers builds Llama's model from EXAONE's
    configuration class, whose attribute_map reads num_layers as num_hidden_layers (and
    layer_norm_epsilon, activation_function, which change no count); head_dim is
    hidden_size // heads unless given; EXAONE's own defaults (vocab 102,400, 8 KV heads)."""
    given = dict(c.given)
    if "num_layers" in given and "num_hidden_layers" not in given:
        given["num_hidden_layers"] = given.pop("num_layers")
    return _llama_like(HFConfig(given, c.origin, DEFAULTS["exaone"]))


def _llama4_text(c: HFConfig) -> Fields:
    """Llama 4's language model: MoE layers (moe_layers, else every interleave_moe_layer_step-th)
    of num_local_experts experts and one shared expert, both intermediate_size wide, with a
    router without bias; the other layers dense MLPs of intermediate_size_mlp. Its q/k norm is
    an L2 norm without parameters. The layers with RoPE (1 in no_rope_layers, else all but every
    no_rope_layer_interval-th) attend in chunks of attention_chunk_size, which transformers'
    cache holds as a sliding window of that size: specsheet counts them as windowed layers."""
    fields = _llama_like(c)
    layers = fields["layers"]
    width = c.integer("intermediate_size")
    step = c.integer("interleave_moe_layer_step")
    moe = c.integers("moe_layers") if c.data.get("moe_layers") is not None \
        else list(range(step - 1, layers, step))  # an empty list: no MoE layer at all
    if any(i < 0 or i >= layers for i in moe):
        raise key_error("moe_layers", f"expected layer indices from 0 to "
                        f"{layers - 1}, got {moe}", source=c.origin)
    fields.update(d_ff=c.integer("intermediate_size_mlp"), mlp_bias=False,
                  experts=c.integer("num_local_experts"),
                  experts_per_token=c.integer("num_experts_per_tok"), expert_d_ff=width,
                  shared_d_ff=width, dense_layers=[i for i in range(layers) if i not in moe])
    rope = _rope_layers(c, layers)
    chunk = c.optional_integer("attention_chunk_size")
    types = c.layer_types(layers, ("chunked_attention", "full_attention"))
    chunked = [i for i, t in enumerate(types) if t == "chunked_attention"] if types \
        else [i for i in range(layers) if rope[i]]
    _sliding(fields, chunk, chunked)
    return fields


def _exaone4(c: HFConfig) -> Fields:
    """EXAONE 4.0: no biases; RMSNorms after attention and after the MLP (no input norms) and
    q/k norms one head wide; with a sliding_window, sliding_window_pattern - 1 windowed layers
    to each full one (layer_types when given)."""
    fields = _llama_like(c)
    fields.update(attn_bias=False, mlp_bias=False, qk_norm="head")
    window = c.optional_integer("sliding_window")
    pattern = c.integer("sliding_window_pattern") if window else 0
    _layer_types_or(c, fields, window, lambda i: bool((i + 1) % pattern))
    return fields


def _glm4(c: HFConfig) -> Fields:
    """GLM-4-0414 (glm4): four RMSNorms per block (before and after attention and the MLP);
    attention_bias on q, k and v only; a fused gate and up projection (the gated MLP's count);
    partial rotary changes no count."""
    fields = _llama_like_dims(c)
    fields.update(qkv_bias=c.flag("attention_bias"), o_bias=False, attn_bias=None,
                  mlp_bias=False, norms_per_block=4)
    return fields


def _glm(c: HFConfig) -> Fields:
    """GLM-4 (2024, glm): GLM-4-0414's layers with two RMSNorms per block: attention_bias on
    q, k and v only; a fused gate and up projection without biases (the gated MLP's count);
    partial rotary changes no count; head_dim 128 unless given."""
    fields = _glm4(c)
    fields["norms_per_block"] = 2
    return fields


def _olmo3(c: HFConfig) -> Fields:
    """OLMo 3: OLMo 2's layers (norms after attention and the MLP, q/k norms over all heads);
    three sliding-window layers to each full one (layer_types when given)."""
    fields = _olmo2(c)
    fields["mlp_bias"] = False
    _layer_types_or(c, fields, c.optional_integer("sliding_window"),
                    lambda i: bool((i + 1) % 4))
    return fields


def _hunyuan_v1_dense(c: HFConfig) -> Fields:
    """Hunyuan dense (hunyuan_v1_dense): Llama's layers with RMSNorms one head wide on queries
    and keys; attention_bias on q, k, v and o; no MLP biases. head_dim is required: its
    configuration class defaults it to None, and transformers cannot build the model then."""
    fields = _llama_like(c, check_head_dim=False)
    fields.update(qk_norm="head", mlp_bias=False, head_dim=c.integer("head_dim"))
    return fields


def _seed_oss(c: HFConfig) -> Fields:
    """Seed-OSS: attention_bias on q, k and v, attention_out_bias on o, mlp_bias on the MLP."""
    fields = _llama_like(c)
    fields.update(qkv_bias=c.flag("attention_bias"), o_bias=c.flag("attention_out_bias"),
                  attn_bias=None)
    return fields


def _ernie4_5(c: HFConfig) -> Fields:
    """ERNIE 4.5 dense: use_bias on every projection of attention and MLP; head_dim 128 unless
    given (a null head_dim is hidden_size // heads)."""
    fields = _llama_like_dims(c)
    bias = c.flag("use_bias")
    fields.update(attn_bias=bias, mlp_bias=bias)
    return fields


def _ernie4_5_moe(c: HFConfig) -> Fields:
    """ERNIE 4.5 MoE: use_bias on attention, the dense and shared MLPs and the output head;
    MoE layers from moe_layer_start_index to moe_layer_end_index (-1: the last), every
    moe_layer_interval-th; moe_num_experts experts of moe_intermediate_size, k = moe_k,
    moe_num_shared_experts shared ones; the router's e_score_correction_bias is a parameter of
    one value per expert, counted as a router bias."""
    fields = _ernie4_5(c)
    layers = fields["layers"]
    start = c.integer("moe_layer_start_index", minimum=0)
    end = c.data.get("moe_layer_end_index")
    end = layers - 1 if end in (None, -1) else c.integer("moe_layer_end_index", minimum=0)
    interval = c.integer("moe_layer_interval")
    if start >= layers:
        raise key_error("moe_layer_start_index", f"{start} is past the last "
                        f"layer ({layers - 1}): no layer would hold the experts", source=c.origin)
    expert_d_ff = c.integer("moe_intermediate_size")
    fields.update(head_bias=fields["mlp_bias"],
                  experts=c.integer(("moe_num_experts", "num_experts")),
                  experts_per_token=c.integer(("moe_k", "num_experts_per_tok")),
                  expert_d_ff=expert_d_ff,
                  shared_d_ff=c.integer("moe_num_shared_experts", minimum=0) * expert_d_ff,
                  router_bias=True,
                  dense_layers=[i for i in range(layers)
                                if (i + 1) % interval or not start <= i <= end])
    return fields


def _phimoe(c: HFConfig) -> Fields:
    """Phi-3.5-MoE (phimoe): LayerNorms with bias; attention_bias on q, k, v and o; every
    layer an MoE of num_local_experts experts of intermediate_size, a router without bias;
    lm_head_bias on the output head; sliding_window windows every layer."""
    fields = _llama_like(c)
    fields.update(norm="layernorm", mlp_bias=False, head_bias=c.flag("lm_head_bias"),
                  experts=c.integer(("num_local_experts", "num_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"])
    _sliding(fields, c.optional_integer("sliding_window"), range(fields["layers"]))
    return fields


def _granitemoe(c: HFConfig) -> Fields:
    """Granite MoE (granitemoe): Granite's layers, every MLP an MoE of num_local_experts
    experts of intermediate_size and a router without bias; its multipliers scale
    activations, not counts."""
    fields = _llama_like(c)
    fields.update(mlp_bias=False, experts=c.integer(("num_local_experts", "num_experts")),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"])
    return fields


def _dbrx(c: HFConfig) -> Fields:
    """DBRX: its own keys, the attention's under attn_config and the MoE's under ffn_config;
    LayerNorms without bias (a weight each); a fused qkv projection and an output
    projection without biases; every layer an MoE of moe_num_experts gated experts of
    ffn_hidden_size and a router without bias; never tied."""
    attn = _nested(c, "attn_config")
    ffn = _nested(c, "ffn_config")
    width = ffn.integer("ffn_hidden_size")
    return {"layers": c.integer("n_layers"), "d_model": c.integer("d_model"),
            "heads": c.integer("n_heads"), "kv_heads": attn.integer("kv_n_heads"),
            "vocab": c.integer("vocab_size"), "context": c.integer("max_seq_len"),
            "d_ff": width, "mlp": "gated", "norm": "rmsnorm", "attn_bias": False,
            "mlp_bias": False, "positions": "rotary", "tied_embeddings": False,
            "experts": ffn.integer("moe_num_experts"),
            "experts_per_token": ffn.integer("moe_top_k"), "expert_d_ff": width}


def _nested(c: HFConfig, key: str) -> HFConfig:
    """A nested mapping of a config (DBRX's attn_config, ffn_config) over its defaults."""
    value = c.given.get(key)
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise key_error(key, f"expected a mapping, got "
                        f"{type(value).__name__} {quoted(str(value)[:40])}", source=c.origin)
    nested = HFConfig(value, f"{c.origin} ({key})", c.data.get(f"{key}.defaults", {}))
    nested.model_type = c.model_type
    return nested


def _olmoe(c: HFConfig) -> Fields:
    """OLMoE: Llama's attention with RMSNorms over all heads' queries (hidden_size wide) and
    keys (kv heads x head_dim), every layer an MoE of num_experts experts of
    intermediate_size (Mixtral's experts: gated, no biases) with a router without bias; no
    shared expert, no dense layer. clip_qkv and norm_topk_prob change no count. Its attention
    takes head_dim as hidden_size // heads (OlmoeConfig has no head_dim)."""
    fields = _llama_like(c)
    d, heads = fields["d_model"], fields["heads"]
    if d % heads:
        raise key_error("num_attention_heads", f"{heads} does not divide hidden_size {d}",
                        source=c.origin)
    fields.update(head_dim=d // heads, mlp_bias=False, qk_norm="full",
                  experts=c.integer("num_experts"),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=fields["d_ff"])
    return fields


# ---- hybrids: state-space and linear-attention layers beside attention --------------------

def _mamba2_fields(c: HFConfig, inner: int, heads: int, groups: int, state: int, conv: int,
                   chunk: int, conv_bias: bool, bias: bool, norm: bool) -> Fields:
    return {"ssm_inner": inner, "ssm_heads": heads, "ssm_groups": groups, "ssm_state": state,
            "ssm_conv": conv, "ssm_chunk": chunk, "ssm_conv_bias": conv_bias, "ssm_bias": bias,
            "ssm_norm": norm}


def _kinds(c: HFConfig, key: str, layers: int, names: Mapping[str, str],
           value: object = None) -> list[str]:
    """A per-layer list of block names (``key``, or ``value`` read from it), mapped to spec
    layer kinds; its length must be the layer count and every name known."""
    value = c.data.get(key) if value is None else value
    if not isinstance(value, list) or len(value) != layers:
        got = f"{len(value)} entries" if isinstance(value, list) else repr(value)[:40]
        raise key_error(key, f"expected {layers} entries (one per layer), "
                        f"got {got}", source=c.origin)
    for name in value:
        if name not in names:
            raise key_error(key, f"unknown layer kind {quoted(name)}; expected "
                            f"one of {', '.join(names)}", source=c.origin)
    return [names[name] for name in value]


def _state_space_only(c: HFConfig, kind: str, layers: int, d: int, heads: int,
                      head_dim: int) -> Fields:
    """The fields of a model whose every block is one ``kind`` mixer with one RMSNorm (no
    attention, no MLP; heads, head_dim and d_ff are placeholders no layer uses). No position
    limit: the context is max_position_embeddings when given, else 1,048,576 tokens (a bound
    for T, not a limit of the model)."""
    return {"layers": layers, "d_model": d, "heads": heads, "head_dim": head_dim,
            "vocab": c.integer("vocab_size"),
            "context": c.integer("max_position_embeddings", 1_048_576),
            "d_ff": 1, "mlp": "gated", "norm": "rmsnorm", "norms_per_block": 1,
            "attn_bias": False, "mlp_bias": False, "positions": "none",
            "tied_embeddings": c.flag("tie_word_embeddings"),
            "layer_types": [kind] * layers, "no_mlp_layers": list(range(layers))}


def _mamba2(c: HFConfig) -> Fields:
    """Mamba-2: every block a Mamba-2 mixer (no attention, no MLP) with one RMSNorm;
    d_inner = expand x hidden_size. It has no position limit: the context is
    max_position_embeddings when given, else 1,048,576 tokens (a bound for T, not a limit
    of the model)."""
    d = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_heads")
    inner = c.integer("expand") * d
    return {**_state_space_only(c, "mamba2", layers, d, heads, max(d // heads, 1)),
            **_mamba2_fields(c, inner, heads, c.integer("n_groups"), c.integer("state_size"),
                             c.integer("conv_kernel"), c.integer("chunk_size"),
                             c.flag("use_conv_bias"), c.flag("use_bias"), True)}


def _mamba(c: HFConfig) -> Fields:
    """Mamba (and Falcon Mamba): every block one Mamba mixer (selective scan; no attention, no
    MLP) with one RMSNorm. d_inner is intermediate_size when given, else expand x hidden_size;
    time_step_rank "auto" is ceil(hidden_size / 16) (transformers' MambaConfig.__post_init__,
    whose intermediate_size the config's key then overrides). Falcon Mamba's RMSNorms on the
    time step, B and C hold no parameters (FalconMambaWeightlessRMSNorm: a buffer of ones)
    and are not matrix multiplications: the counts are Mamba's. No position limit: the
    context is max_position_embeddings when given, else 1,048,576 tokens (a bound for T).
    heads, head_dim and d_ff are placeholders no layer uses (as for Mamba-2)."""
    d = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    inner = c.optional_integer("intermediate_size") or c.integer("expand") * d
    rank_value = c.data.get("time_step_rank")
    if isinstance(rank_value, str) and rank_value != "auto":
        raise key_error("time_step_rank", f"expected a positive integer or \"auto\", got "
                        f"{quoted(rank_value[:40])}", source=c.origin)
    rank = -(-d // 16) if rank_value in (None, "auto") else c.integer("time_step_rank")
    return {**_state_space_only(c, "mamba", layers, d, 1, d),
            "ssm_inner": inner, "ssm_state": c.integer("state_size"),
            "ssm_conv": c.integer("conv_kernel"), "ssm_dt_rank": rank,
            "ssm_conv_bias": c.flag("use_conv_bias"), "ssm_bias": c.flag("use_bias"),
            "ssm_norm": False}


def _jamba(c: HFConfig) -> Fields:
    """Jamba: Mamba layers (selective scan, with RMSNorms on the time step, B and C) and an
    attention layer where i % attn_layer_period == attn_layer_offset; routed experts (no
    shared expert) where i % expert_layer_period == expert_layer_offset, dense MLPs elsewhere;
    no positions."""
    fields = _llama_like(c)
    layers, d = fields["layers"], fields["d_model"]
    period, offset = c.integer("attn_layer_period"), c.integer("attn_layer_offset", minimum=0)
    e_period = c.integer("expert_layer_period")
    e_offset = c.integer("expert_layer_offset", minimum=0)
    experts = c.integer("num_experts")
    moe = [i for i in range(layers) if i % e_period == e_offset] if experts > 1 else []
    fields.update(attn_bias=False, mlp_bias=False, positions="none",
                  layer_types=["attention" if i % period == offset else "mamba"
                               for i in range(layers)],
                  ssm_inner=c.integer("mamba_expand") * d, ssm_state=c.integer("mamba_d_state"),
                  ssm_conv=c.integer("mamba_d_conv"), ssm_dt_rank=c.integer("mamba_dt_rank"),
                  ssm_conv_bias=c.flag("mamba_conv_bias"), ssm_bias=c.flag("mamba_proj_bias"),
                  ssm_norm=True)
    if moe:
        fields.update(experts=experts, experts_per_token=c.integer("num_experts_per_tok"),
                      expert_d_ff=fields["d_ff"],
                      dense_layers=[i for i in range(layers) if i not in moe])
    return fields


def _falcon_h1(c: HFConfig) -> Fields:
    """Falcon-H1: every layer attention and a Mamba-2 mixer side by side, then a gated MLP;
    d_inner = mamba_d_ssm, else mamba_expand x hidden_size; the Mamba-2 gated RMSNorm only
    with mamba_rms_norm. Its multipliers scale activations, not counts. mamba_proj_bias
    gives in_proj a bias, projectors_bias out_proj: specsheet takes them together."""
    fields = _llama_like_dims(c)
    layers, d = fields["layers"], fields["d_model"]
    inner = c.optional_integer("mamba_d_ssm") or c.integer("mamba_expand") * d
    bias = c.flag("mamba_proj_bias")
    if c.flag("projectors_bias") != bias:
        raise SpecError("keys 'mamba_proj_bias' and 'projectors_bias' differ; "
                        "specsheet counts the Mamba projections' biases together", source=c.origin)
    fields.update(layer_types=["hybrid"] * layers,
                  **_mamba2_fields(c, inner, c.integer("mamba_n_heads"),
                                   c.integer("mamba_n_groups"), c.integer("mamba_d_state"),
                                   c.integer("mamba_d_conv"), c.integer("mamba_chunk_size"),
                                   c.flag("mamba_conv_bias"), bias, c.flag("mamba_rms_norm")))
    return fields


_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe",
                    "mamba": "mamba", "attention": "attention", "mlp": "mlp", "moe": "moe",
                    "linear_attention": "mamba", "full_attention": "attention"}


def _nemotron_h(c: HFConfig) -> Fields:
    """Nemotron-H: blocks of one kind each (hybrid_override_pattern: M a Mamba-2 mixer, * an
    attention layer, - an MLP of two matrices (squared ReLU)), each with one RMSNorm;
    d_inner = mamba_num_heads x mamba_head_dim; the attention has no biases whatever
    attention_bias says (transformers' Nemotron-H ignores it); use_bias gives the Mamba
    projections biases
    (mamba_proj_bias is not read by transformers' Nemotron-H). MoE blocks (E) are not
    supported."""
    d = c.integer("hidden_size")
    pattern = c.data.get("hybrid_override_pattern")
    key, names = "layers_block_type", c.data.get("layers_block_type")
    if names is None and isinstance(pattern, str):
        key, names = "hybrid_override_pattern", list(pattern)
    # num_hidden_layers, when given, must agree with the pattern (transformers warns, and
    # follows the pattern)
    layers = c.integer("num_hidden_layers") if c.data.get("num_hidden_layers") is not None \
        else len(names) if isinstance(names, list) else 0
    blocks = _kinds(c, key, layers, _NEMOTRON_BLOCKS, names)
    if "moe" in blocks:
        raise SpecError("Nemotron-H's MoE blocks (E) are not supported yet",
                        source=c.origin)
    heads = c.integer("num_attention_heads")
    head_dim = c.optional_integer(("head_dim", "attention_head_dim")) or d // heads
    kinds = {"mamba": "mamba2", "attention": "attention", "mlp": "none"}
    return {"layers": layers, "d_model": d, "heads": heads, "head_dim": head_dim,
            "kv_heads": c.integer("num_key_value_heads", heads), "vocab": c.integer("vocab_size"),
            "context": c.integer("max_position_embeddings"),
            "d_ff": c.integer("intermediate_size"), "mlp": "plain", "norm": "rmsnorm",
            "norms_per_block": 1, "attn_bias": False,  # transformers ignores attention_bias
            "mlp_bias": c.flag("mlp_bias"), "positions": "none",
            "tied_embeddings": c.flag("tie_word_embeddings"),
            "layer_types": [kinds[b] for b in blocks],
            "no_mlp_layers": [i for i, b in enumerate(blocks) if b != "mlp"],
            **_mamba2_fields(c, c.integer("mamba_num_heads") * c.integer("mamba_head_dim"),
                             c.integer("mamba_num_heads"), c.integer("n_groups"),
                             c.integer("ssm_state_size"), c.integer("conv_kernel"),
                             c.integer("chunk_size"), c.flag("use_conv_bias"),
                             c.flag("use_bias"), True)}


_GRANITE_LAYERS = {"mamba": "mamba2", "attention": "attention", "linear_attention": "mamba2",
                   "full_attention": "attention"}


def _granitemoehybrid(c: HFConfig) -> Fields:
    """Granite 4.0 hybrids: layer_types of Mamba-2 and attention layers; every layer has
    num_local_experts experts of intermediate_size (routed, gated, no biases) and a shared
    MLP of shared_intermediate_size, or with no experts the shared MLP alone; d_inner =
    mamba_expand x hidden_size. Its multipliers scale activations, not counts."""
    fields = _llama_like(c)
    layers, d = fields["layers"], fields["d_model"]
    experts = c.integer("num_local_experts", minimum=0)
    shared = c.integer("shared_intermediate_size")
    fields.update(mlp_bias=False, positions="none",
                  layer_types=_kinds(c, "layer_types", layers, _GRANITE_LAYERS),
                  **_mamba2_fields(c, c.integer("mamba_expand") * d, c.integer("mamba_n_heads"),
                                   c.integer("mamba_n_groups"), c.integer("mamba_d_state"),
                                   c.integer("mamba_d_conv"), c.integer("mamba_chunk_size"),
                                   c.flag("mamba_conv_bias"), c.flag("mamba_proj_bias"), True))
    if experts:
        fields.update(experts=experts, experts_per_token=c.integer("num_experts_per_tok"),
                      expert_d_ff=fields["d_ff"], shared_d_ff=shared)
    else:
        fields["d_ff"] = shared
    return fields


def _bamba(c: HFConfig) -> Fields:
    """Bamba: Mamba-2 layers, and attention layers at attn_layer_indices (none given: every
    layer Mamba-2), each followed by a gated MLP of intermediate_size; d_inner =
    mamba_expand x hidden_size (mamba_d_head x mamba_n_heads must equal it, as BambaConfig
    checks); mamba_proj_bias gives in_proj and out_proj biases; the Mamba-2 gated RMSNorm
    always. head_dim is hidden_size // heads unless given (BambaAttention's getattr)."""
    fields = _llama_like_dims(c)
    layers, d = fields["layers"], fields["d_model"]
    indices = c.integers("attn_layer_indices")
    outside = [i for i in indices if not 0 <= i < layers]
    if outside:
        raise key_error("attn_layer_indices", f"expected layer indices from 0 to {layers - 1}, "
                        f"got {outside[0]}", source=c.origin, value=outside[0])
    inner = c.integer("mamba_expand") * d
    heads = c.integer("mamba_n_heads")
    head = c.data.get("mamba_d_head", "auto")
    if inner % heads or (head != "auto" and c.integer("mamba_d_head") * heads != inner):
        raise key_error("mamba_n_heads", f"{heads} heads of mamba_d_head {head} do not make "
                        f"the Mamba inner width mamba_expand x hidden_size = {inner}",
                        source=c.origin, value=heads)
    fields.update(positions="rotary",
                  layer_types=["attention" if i in indices else "mamba2"
                               for i in range(layers)],
                  **_mamba2_fields(c, inner, heads, c.integer("mamba_n_groups"),
                                   c.integer("mamba_d_state"), c.integer("mamba_d_conv"),
                                   c.integer("mamba_chunk_size"), c.flag("mamba_conv_bias"),
                                   c.flag("mamba_proj_bias"), True))
    return fields


_LFM2_LAYERS = {"conv": "short_conv", "full_attention": "attention"}


def _lfm2(c: HFConfig) -> Fields:
    """LFM2: gated short-convolution layers (in_proj d x 3d giving B, C and x; a depthwise
    convolution of conv_L_cache; out_proj d x d; conv_bias on all three) and attention layers
    with RMSNorms one head wide on q and k and no biases (layer_types, else full_attn_idxs,
    else every layer attention, as Lfm2Config builds it); two RMSNorms per block and one
    after the last (embedding_norm); every layer a gated MLP without biases whose width,
    with block_auto_adjust_ff_dim, is int(2 x intermediate_size / 3), times
    block_ffn_dim_multiplier, rounded up to block_multiple_of (Lfm2MLP). block_ff_dim and
    tie_embedding are read as intermediate_size and tie_word_embeddings, as Lfm2Config does.
    A layer_types entry other than conv and full_attention is refused (transformers would make
    any entry but conv an attention layer)."""
    given = dict(c.given)
    for old, new in (("block_ff_dim", "intermediate_size"), ("tie_embedding",
                                                              "tie_word_embeddings")):
        if old in given:
            given[new] = given.pop(old)
    c = HFConfig(given, c.origin, DEFAULTS["lfm2"])
    fields = _llama_like_dims(c)
    layers = fields["layers"]
    if c.data.get("layer_types") is not None:
        types = _kinds(c, "layer_types", layers, _LFM2_LAYERS)
    else:
        given_idxs = c.data.get("full_attn_idxs")
        attention = set(c.integers("full_attn_idxs")) if given_idxs is not None \
            else set(range(layers))
        types = ["attention" if i in attention else "short_conv" for i in range(layers)]
    width = fields["d_ff"]
    if c.flag("block_auto_adjust_ff_dim"):
        width = int(2 * width / 3)
        multiplier = c.data.get("block_ffn_dim_multiplier")
        if multiplier is not None:
            if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)):
                raise key_error("block_ffn_dim_multiplier", f"expected a number, got "
                                f"{quoted(multiplier)}", source=c.origin, value=multiplier)
            step = c.integer("block_multiple_of")
            width = step * -(-int(multiplier * width) // step)
    if width < 1:
        raise key_error("intermediate_size", f"the MLP width it gives is {width}; expected "
                        "a positive width", source=c.origin, value=fields["d_ff"])
    bias = c.flag("conv_bias")
    fields.update(d_ff=width, attn_bias=False, mlp_bias=False, qk_norm="head",
                  layer_types=types, ssm_conv=c.integer("conv_L_cache"),
                  ssm_conv_bias=bias, ssm_bias=bias)
    return fields


_QWEN3_NEXT_LAYERS = {"linear_attention": "linear_attention", "full_attention": "attention"}


def _qwen3_next(c: HFConfig) -> Fields:
    """Qwen3-Next: gated DeltaNet layers and gated attention layers (layer_types, else every
    full_attention_interval-th layer attention), q/k norms one head wide, attention_bias on
    q (its gate too), k, v and o; Qwen2-MoE's experts with a gated shared expert
    (decoder_sparse_step, mlp_only_layers); no MLP biases."""
    fields = _llama_like(c)
    layers = fields["layers"]
    if c.data.get("layer_types") is not None:
        types = _kinds(c, "layer_types", layers, _QWEN3_NEXT_LAYERS)
    else:
        interval = c.integer("full_attention_interval")
        types = ["attention" if (i + 1) % interval == 0 else "linear_attention"
                 for i in range(layers)]
    fields.update(mlp_bias=False, qk_norm="head", attention_gate=True,
                  experts=c.integer("num_experts"),
                  experts_per_token=c.integer("num_experts_per_tok"),
                  expert_d_ff=c.integer("moe_intermediate_size"),
                  shared_d_ff=c.integer("shared_expert_intermediate_size", minimum=0),
                  shared_expert_gate=True, layer_types=types,
                  linear_key_heads=c.integer("linear_num_key_heads"),
                  linear_value_heads=c.integer("linear_num_value_heads"),
                  linear_key_dim=c.integer("linear_key_head_dim"),
                  linear_value_dim=c.integer("linear_value_head_dim"),
                  ssm_conv=c.integer("linear_conv_kernel_dim"))
    _moe_layers(c, fields)
    return fields


FAMILIES: dict[str, Callable[[HFConfig], Fields]] = {
    "gpt2": _gpt2,
    "gpt_neox": _gpt_neox,
    "gpt_bigcode": _gpt_bigcode,
    "gpt_neo": _gpt_neo,
    "gptj": _gptj,
    "opt": _opt,
    "bloom": _bloom,
    "falcon": _falcon,
    "mpt": _mpt,
    "llama": _llama_like,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "qwen2_5_vl_text": _qwen2,  # Qwen2.5-VL's language model: Qwen2's layers
    "qwen2_moe": _qwen2_moe,
    "qwen3": _qwen3,
    "qwen3_vl_text": _qwen3,  # Qwen3-VL's language model: Qwen3's layers
    "qwen3_moe": _qwen3_moe,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "gemma3_text": _gemma3_text,
    "phi3": _mistral,
    "starcoder2": _starcoder2,
    "olmo": _olmo,
    "olmo2": _olmo2,
    "deepseek_v2": lambda c: _deepseek(c, v3=False),
    "deepseek_v3": lambda c: _deepseek(c, v3=True),
    # Kimi K2's config.json names transformers' DeepseekV3Config in its auto_map
    "kimi_k2": lambda c: _deepseek(c, v3=True),
    "phi": _phi,
    "gpt_oss": _gpt_oss,
    "cohere": _cohere,
    "cohere2": _cohere2,
    "smollm3": _smollm3,
    "granite": _llama_like,  # its four multipliers scale activations, not counts
    "glm4_moe": _glm4_moe,
    "dots1": _dots1,
    "glm4_moe_lite": _glm4_moe_lite,
    "exaone": _exaone,
    "minimax_m2": _minimax_m2,
    "llama4_text": _llama4_text,
    "exaone4": _exaone4,
    "glm4": _glm4,
    "glm": _glm,
    "olmo3": _olmo3,
    "hunyuan_v1_dense": _hunyuan_v1_dense,
    "seed_oss": _seed_oss,
    "ernie4_5": _ernie4_5,
    "ernie4_5_moe": _ernie4_5_moe,
    "phimoe": _phimoe,
    "granitemoe": _granitemoe,
    "dbrx": _dbrx,
    "olmoe": _olmoe,
    "mamba": _mamba,
    "falcon_mamba": _mamba,
    "mamba2": _mamba2,
    "jamba": _jamba,
    "falcon_h1": _falcon_h1,
    "nemotron_h": _nemotron_h,
    "granitemoehybrid": _granitemoehybrid,
    "bamba": _bamba,
    "lfm2": _lfm2,
    "qwen3_next": _qwen3_next,
}

def is_hf_config(data: object) -> bool:
    """A mapping with a ``model_type`` (at the top or under ``text_config``) is a config.json."""
    if not isinstance(data, dict):
        return False
    text = data.get("text_config")
    return "model_type" in data or (isinstance(text, dict) and "model_type" in text)


def fields_from_hf_config(data: Mapping[str, Any], origin: str) -> tuple[Fields, str, str]:
    """Spec fields from a config.json mapping, its model_type, and a note on how it was read.

    A multimodal wrapper's language model is read from its ``text_config`` (a null one is
    absent, as in transformers; anything else but a mapping is refused).
    """
    from specsheet.sources.hf_config.vision import FLAT_TEXT

    note = ""
    wrapper, wrapper_origin = data, origin
    text = data.get("text_config")
    if text is not None and not isinstance(text, dict):
        raise key_error("text_config", f"expected a mapping of the language "
                        f"model's keys, got {type(text).__name__} {quoted(str(text)[:40])}",
                        source=origin)
    if isinstance(text, dict):
        data = text
        origin = f"{origin} (text_config)"
        note = "read from text_config"
    elif data.get("model_type") in FLAT_TEXT:  # text keys at the top level (Qwen2.5-VL)
        data = {k: v for k, v in data.items() if k != "vision_config"}
        data["model_type"] = FLAT_TEXT[str(wrapper["model_type"])]
    model_type = data.get("model_type")
    if not isinstance(model_type, str):
        raise key_error("model_type", f"expected the name of a model family, "
                        f"got {quoted(model_type)}", source=origin)
    family = FAMILIES.get(model_type)
    if family is None:
        # a family transformers knows is refused with its reason, never by a similar name
        # (bamba is not jamba); a name it does not know may be a misspelt supported one
        from specsheet.sources.hf_config.unsupported import refusal  # a refusal's table

        why = refusal(model_type)
        if why is not None:
            raise SpecError(f"model_type '{model_type}' is not supported: {why}",
                            source=origin)
        raise SpecError(f"model_type '{model_type}' is not supported"
                        f"{did_you_mean(model_type, FAMILIES)}; supported: "
                        f"{', '.join(FAMILIES)}", source=origin)
    from specsheet.sources.hf_config.vision import vision_tower, wrapper_tie

    tie = wrapper_tie(wrapper, data, DEFAULTS.get(model_type, {}).get("tie_word_embeddings"))
    if tie is not None:  # transformers ties a wrapper's head by the wrapper's key
        data = {**data, "tie_word_embeddings": tie}
    config = HFConfig(data, origin, DEFAULTS[model_type])
    fields = {k: v for k, v in family(config).items() if v is not None}
    tower = vision_tower(wrapper, fields["d_model"], wrapper_origin)
    if tower is not None:
        fields["vision"] = tower
    return fields, model_type, note


# model types whose multi-token-prediction layers vLLM loads as a draft of the target's own
# decoder layer (SpeculativeConfig.hf_config_override: deepseek_v3 -> deepseek_mtp, glm4_moe
# -> glm4_moe_mtp; vllm/config/speculative.py at 002e77c1)
MTP_MODEL_TYPES = ("deepseek_v3", "glm4_moe")


def mtp_layers_of(data: Mapping[str, Any], origin: str) -> int:
    """The checkpoint's multi-token-prediction layers (num_nextn_predict_layers), for the model
    types whose layers specsheet models (0 for the others and when absent)."""
    if data.get("model_type") not in MTP_MODEL_TYPES:
        return 0
    value = data.get("num_nextn_predict_layers")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise key_error("num_nextn_predict_layers", f"expected a count of 0 or more, got "
                        f"{quoted(value)}", source=origin)
    return value


def draft_vocab_of(data: Mapping[str, Any], origin: str) -> int | None:
    """An EAGLE-3 head's draft_vocab_size (None when absent: the head predicts the whole
    vocabulary, as Eagle3LlamaForCausalLM defaults it)."""
    value = data.get("draft_vocab_size")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise key_error("draft_vocab_size", f"expected a positive number of tokens, got "
                        f"{quoted(value)}", source=origin)
    return value
