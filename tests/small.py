"""A config.json of tests/data made small (2 layers, d = 64, 4 experts): what the inspect tests
write as real files, and what scripts/make_shapes.py builds with transformers. Standard library
only, so that the script's scratch environment can import it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"

# small sizes for every key a family may have (a key is set only where the config has it)
SMALL = {
    "hidden_size": 64, "n_embd": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "n_layer": 2, "num_attention_heads": 4, "n_head": 4, "head_dim": 16, "vocab_size": 256,
    "max_position_embeddings": 128, "n_positions": 128, "n_ctx": 128,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "kv_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16,
    "first_k_dense_replace": 1, "max_window_layers": 2, "ffn_dim": 128,
    "word_embed_proj_dim": 64, "rotary_dim": 8,
}


def small_config(name: str) -> dict[str, Any]:
    """tests/data/NAME.json with every size made small (2 layers, d = 64)."""
    config: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    for key, value in SMALL.items():
        if key in config and config[key] is not None:
            config[key] = value
    if config.get("num_key_value_heads") not in (None, config.get("num_attention_heads")):
        config["num_key_value_heads"] = 2
    elif "num_key_value_heads" in config:
        config["num_key_value_heads"] = 4
    if config.get("q_lora_rank"):
        config["q_lora_rank"] = 48
    if config.get("n_inner"):
        config["n_inner"] = 128
    return config


def wide_config(name: str) -> dict[str, Any]:
    """``small_config`` with rows of 256 and more (d = 256, d_ff = 512): GGML's k-quants pack
    rows in blocks of 256."""
    config = small_config(name)
    config.update({k: 256 for k in ("hidden_size", "n_embd") if k in config})
    config.update({k: 512 for k in ("intermediate_size", "moe_intermediate_size") if k in config})
    return config
