"""A GGUF file's own metadata read as the Hugging Face config.json its model came from, so that
the family rules of ``hf_config`` build its spec.

llama.cpp's converter (``convert_hf_to_gguf.py``) writes ``{arch}.block_count``,
``{arch}.embedding_length``, ``{arch}.attention.head_count``, ``head_count_kv``,
``feed_forward_length``, ``context_length``, ``expert_count`` and so on; the vocabulary is
``{arch}.vocab_size`` or the length of ``tokenizer.ggml.tokens``. What the metadata does not say,
the family does (biases, norms, the gated MLP). Whether the output head is tied is read from the
file as llama.cpp reads it: without an ``output.weight`` the token embedding serves as the head.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from specsheet.errors import SpecError, quoted
from specsheet.sources.weights.gguf import SkippedArray

# GGUF general.architecture -> transformers model_type (MoE variants are chosen below)
ARCHITECTURES = {
    "llama": "llama", "qwen2": "qwen2", "qwen2moe": "qwen2_moe", "qwen3": "qwen3",
    "qwen3moe": "qwen3_moe", "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3_text",
    "phi3": "phi3", "gpt2": "gpt2", "gptneox": "gpt_neox", "starcoder2": "starcoder2",
    "olmo": "olmo", "olmo2": "olmo2", "deepseek2": "deepseek_v2",
}


def hf_config_from_gguf(metadata: dict[str, Any], names: Collection[str],
                        origin: str) -> dict[str, Any] | None:
    """A config.json mapping for the GGUF metadata, or None for an architecture specsheet does
    not read."""
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str) or arch not in ARCHITECTURES:
        return None

    def get(key: str, default: Any = None) -> Any:
        value = metadata.get(f"{arch}.{key}", default)
        if isinstance(value, list):  # per-layer values: one value for every layer, or none
            if value and all(v == value[0] for v in value):
                return value[0]
            raise SpecError(f"{origin}: {arch}.{key} differs from layer to layer; specsheet "
                            "describes models whose layers are alike")
        return value

    tokens = metadata.get("tokenizer.ggml.tokens")
    vocab = get("vocab_size")
    if vocab is None and tokens is not None:
        vocab = tokens.length if isinstance(tokens, SkippedArray) else len(tokens)
    layers = get("block_count")
    if isinstance(layers, int):
        layers -= get("nextn_predict_layers", 0) or 0  # DeepSeek's MTP layers are extra
    model_type = ARCHITECTURES[arch]
    experts = get("expert_count", 0) or 0
    if model_type == "llama" and experts:
        model_type = "mixtral"
    config: dict[str, Any] = {
        "model_type": model_type,
        "hidden_size": get("embedding_length"),
        "num_hidden_layers": layers,
        "num_attention_heads": get("attention.head_count"),
        "num_key_value_heads": get("attention.head_count_kv", get("attention.head_count")),
        "vocab_size": vocab,
        "max_position_embeddings": get("context_length"),
        "intermediate_size": get("feed_forward_length"),
        "tie_word_embeddings": "output.weight" not in names,
        "attention_bias": "blk.0.attn_q.bias" in names or "blk.0.attn_qkv.bias" in names,
        "sliding_window": None,
    }
    key_length = get("attention.key_length")
    if key_length is not None and model_type != "deepseek_v2":
        config["head_dim"] = key_length
    if model_type == "gpt2":
        config.update(n_embd=config["hidden_size"], n_layer=layers,
                      n_head=config["num_attention_heads"],
                      n_positions=config["max_position_embeddings"],
                      n_inner=config["intermediate_size"])
    if model_type == "mixtral":
        config.update(num_local_experts=experts, num_experts_per_tok=get("expert_used_count"))
    if model_type in ("qwen2_moe", "qwen3_moe"):
        config.update(num_experts=experts, num_experts_per_tok=get("expert_used_count"),
                      moe_intermediate_size=get("expert_feed_forward_length"),
                      decoder_sparse_step=1, mlp_only_layers=[])
        if model_type == "qwen2_moe":
            config["shared_expert_intermediate_size"] = get(
                "expert_shared_feed_forward_length", 0)
            config["qkv_bias"] = config["attention_bias"]
    if model_type == "gemma3_text":
        config["sliding_window_pattern"] = 6
    if model_type == "deepseek_v2":
        rope = get("rope.dimension_count")
        config.update(qk_rope_head_dim=rope,
                      qk_nope_head_dim=(key_length or 0) - (rope or 0),
                      v_head_dim=get("attention.value_length"),
                      kv_lora_rank=get("attention.kv_lora_rank"),
                      q_lora_rank=get("attention.q_lora_rank") or None,
                      n_routed_experts=experts or None,
                      num_experts_per_tok=get("expert_used_count"),
                      moe_intermediate_size=get("expert_feed_forward_length"),
                      n_shared_experts=get("expert_shared_count", 0),
                      first_k_dense_replace=get("leading_dense_block_count", 0))
    missing = [key for key in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                               "vocab_size", "max_position_embeddings") if config[key] is None]
    if missing:
        raise SpecError(f"{origin}: the GGUF metadata of architecture {quoted(arch)} lacks "
                        f"{', '.join(missing)}")
    # an absent q_lora_rank is a direct query projection (null in config.json), not the
    # family's default
    return {k: v for k, v in config.items() if v is not None or k == "q_lora_rank"}
