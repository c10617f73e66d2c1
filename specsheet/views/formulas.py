"""A model's parameter counts in symbols, as the breakdown table shows them: 4d² + 4d per layer
for GPT-2's attention, 3d·f for a SwiGLU MLP.

A second encoding of model/params.py: tests/test_formulas.py evaluates every formula at several
sizes and checks it against the arithmetic. Symbols: d = d_model, h heads, k = kv_heads,
d_h = head_dim, d_v = v_head_dim, f = d_ff, f_e = expert_d_ff, f_s = shared_d_ff, L layers.
"""

from specsheet.model.spec import ModelSpec


def _terms(*terms: str) -> str:
    return " + ".join(t for t in terms if t)


def attention_formula(spec: ModelSpec) -> str:
    """One layer's attention parameters in symbols: 4d² + 4d for GPT-2."""
    if spec.latent_attention:
        q = "q_a, q_b" if spec.q_lora_rank else "q"
        return f"MLA: {q}, kv_a, kv_b, o" + (
            " + biases" if spec.qkv_bias or spec.o_bias or spec.attention_sinks else "")
    square = spec.heads * spec.head_dim == spec.d_model and spec.v_head_dim == spec.head_dim
    mha = spec.kv_heads == spec.heads
    if square and mha:
        weights, qkv, out = "4d²", "3d", "d"
    elif square:
        weights, qkv, out = "2d² + 2d·k·d_h", "d + 2k·d_h", "d"
    elif spec.v_head_dim == spec.head_dim:
        weights, qkv, out = "2d·h·d_h + 2d·k·d_h", "h·d_h + 2k·d_h", "d"
    else:
        weights, qkv, out = "d·h·d_h + d·k·(d_h + d_v) + h·d_v·d", "h·d_h + k·(d_h + d_v)", "d"
    if spec.qkv_bias and spec.o_bias:
        biases = "4d" if square and mha else f"{qkv} + {out}"
    else:
        biases = qkv if spec.qkv_bias else out if spec.o_bias else ""
    if spec.attention_gate:  # the output gate: q_proj twice as wide (Qwen3-Next)
        weights = "d·h·d_h (gate) + " + weights
        biases = "h·d_h (gate) + " + biases if spec.qkv_bias else biases
    return _terms(weights, biases, "h" if spec.attention_sinks else "")


def mlp_formula(spec: ModelSpec, width: str = "f") -> str:
    """One MLP's parameters in symbols: 8d² + 5d for GPT-2, 3d·f for SwiGLU."""
    matrices = 3 if spec.mlp == "gated" else 2
    if width == "f" and spec.d_ff == 4 * spec.d_model:
        weights = f"{4 * matrices}d²"
        biases = "9d" if spec.mlp == "gated" else "5d"
    else:
        weights = f"{matrices}d·{width}"
        biases = f"2{width} + d" if spec.mlp == "gated" else f"{width} + d"
    bias = spec.expert_bias if width == "f_e" else spec.mlp_bias
    return _terms(weights, biases if bias else "")


def norm_formula(spec: ModelSpec) -> str:
    """All norms: the layers' norms, the final one, q/k and latent norms."""
    if spec.norm == "none":
        return "no parameters" if not spec.latent_attention else "MLA latents: L × (r_q + r_kv)"
    width = {"layernorm": "2d", "rmsnorm": "d"}[spec.norm]
    count = f"{spec.norms_per_block}L" if spec.norms_per_block != 1 else "L"
    extra = (1 if spec.final_norm else 0) + (1 if spec.embedding_norm else 0)
    terms = f"({count} + {extra}) × {width}" if extra else f"{count} × {width}"
    if spec.qk_norm != "none":
        terms += " + q/k norms"
    if spec.latent_attention:
        terms += " + MLA latents"
    return terms




def layer_norm_formula(spec: ModelSpec) -> str:
    """One layer's norms: 2 × 2d for GPT-2 (two LayerNorms), 2 × d for Llama."""
    if spec.norm == "none":
        return "no parameters" if not spec.latent_attention else "MLA latents: r_q + r_kv"
    width = {"layernorm": "2d", "rmsnorm": "d"}[spec.norm]
    terms = f"{spec.norms_per_block} × {width}" if spec.norms_per_block != 1 else width
    if spec.qk_norm != "none":
        terms += " + q/k norms"
    if spec.latent_attention:
        terms += " + MLA latents"
    return terms
