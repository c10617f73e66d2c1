"""Golden figures for tests/data/*.json, from transformers' own model classes.

A developer tool, run by hand in a scratch virtual environment; torch and transformers never
become dependencies of specsheet or of its test suite, which compares specsheet against the
goldens this writes to tests/golden/:

    python -m venv /tmp/hf && /tmp/hf/bin/pip install torch transformers
    /tmp/hf/bin/python scripts/make_goldens.py [NAME ...]
    /tmp/hf/bin/python scripts/make_goldens.py --defaults [FAMILY ...]  # {"model_type": X}
    /tmp/hf/bin/python scripts/make_goldens.py --variants [NAME ...]  # VARIANTS below

Each model is built from its config.json on PyTorch's meta device (no weights, no network):
- parameters: numel() of every parameter (tied matrices once), sorted into components by the
  module that holds them, the MoE split, and the parameters a token uses;
- KV cache: the elements per token of the cache tensors a forward returns (for multi-head latent
  attention, the latent that DeepSeek's inference caches: transformers caches the decompressed
  keys and values, recorded as hf_cache_elements_per_token); past a sliding window, the positions
  each layer holds (transformers keeps window - 1 after a long prefill; a request needs the window
  when it generates its next token, so windowed layers count window positions);
- FLOPs: torch.utils.flop_counter.FlopCounterMode around one T-token forward, divided by T.
  Where transformers' MoE runs every token through every expert (Llama 4), the golden also holds
  flops_per_token_routed: the same minus the matrix multiplications of the E - k experts a
  token does not choose, the figure specsheet gives.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode
from transformers import CONFIG_MAPPING, AutoModelForCausalLM

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"
TOKENS = (1, 8, 128, 1024)


def load(path: Path | dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    data = path if isinstance(path, dict) else json.loads(path.read_text())
    if isinstance(data.get("text_config"), dict):
        data = data["text_config"]
    return CONFIG_MAPPING[data["model_type"]].from_dict(data), data


def build(config: Any) -> torch.nn.Module:
    # bf16 as the checkpoints ship, so that the cache holds its states in the dtypes
    # transformers keeps them in (FLOPs and counts do not depend on it)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("meta"):
        try:
            return AutoModelForCausalLM.from_config(config, experts_implementation="batched_mm")
        except (TypeError, ValueError):
            return AutoModelForCausalLM.from_config(config)


def component(model: torch.nn.Module, name: str) -> str:
    """Which component a parameter belongs to, from the module that holds it."""
    owner = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
    if "norm" in type(owner).__name__.lower():
        return "norms"
    if re.match(r"(lm_head|embed_out)\.", name):
        return "output_head"
    if re.search(r"(embed_tokens|wte|word_embeddings|embed_in|embeddings)\.weight$", name):
        return "token_embedding"
    if re.search(r"(wpe|embed_positions)\.weight$", name):
        return "position_embedding"
    if re.search(r"project_(in|out)\.", name):
        return "embedding_projections"
    mixer = re.match(r"(.*\.layers\.\d+\.(mixer|mamba|linear_attn))\.", name)
    if mixer:  # Mamba, Mamba-2 and gated DeltaNet layers; Nemotron-H's blocks hold any kind
        kind = type(model.get_submodule(mixer.group(1))).__name__.lower()
        if "mamba" in kind or "delta" in kind:
            return "ssm"
        if "attention" in kind:
            return "attention"
        if "mlp" in kind or "moe" in kind:
            return "mlp.dense"
        return "ssm"
    if ".shared_mlp." in name:  # Granite 4.0: the shared expert, or the only MLP
        return "mlp.shared_experts" if getattr(model.config, "num_local_experts", 0) \
            else "mlp.dense"
    if re.search(r"\.(mlp|block_sparse_moe|feed_forward|fc1|fc2)\.", name):
        if re.search(r"\.(mlp|block_sparse_moe|feed_forward)\.(gate|router)\.(weight|bias)$",
                     name):
            return "mlp.router"
        if ".experts." in name:
            return "mlp.routed_experts"
        if "shared_expert" in name:
            return "mlp.shared_experts"
        return "mlp.dense"
    if re.search(r"\.(self_attn|self_attention|attn|attention)\.", name):
        return "attention"
    raise SystemExit(f"unclassified parameter {name}")


def forward(model: torch.nn.Module, tokens: int, count_flops: bool) -> tuple[int, Any]:
    ids = torch.zeros((1, tokens), dtype=torch.long, device="meta")
    counter = FlopCounterMode(display=False)
    with torch.no_grad():
        if count_flops:
            with counter:
                out = model(input_ids=ids, use_cache=True)
        else:
            out = model(input_ids=ids, use_cache=True)
    return counter.get_total_flops(), out.past_key_values


def cache_lengths(cache: Any) -> list[tuple[int, int]]:
    """(positions held, elements per position) of each attention layer's keys and values."""
    rows = []
    for layer in cache.layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if keys is None:  # a Mamba or gated DeltaNet layer, or an MLP block (Nemotron-H)
            continue
        positions = keys.shape[-2]
        per_position = (keys.numel() + values.numel()) // positions
        rows.append((positions, per_position))
    return rows


def cache_bytes(cache: Any) -> dict[str, int]:
    """What the cache holds, read from its tensors: keys and values, convolution states and
    recurrent states, in elements and in bytes of the dtypes transformers keeps them in."""
    held = {"kv_elements": 0, "kv_bytes": 0, "conv_elements": 0, "conv_bytes": 0,
            "recurrent_elements": 0, "recurrent_bytes": 0}
    for layer in cache.layers:
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if tensor is not None:
                held["kv_elements"] += tensor.numel()
                held["kv_bytes"] += tensor.numel() * tensor.element_size()
        for name, key in (("conv_states", "conv"), ("recurrent_states", "recurrent")):
            for tensor in (getattr(layer, name, None) or {}).values():
                if tensor is not None:
                    held[f"{key}_elements"] += tensor.numel()
                    held[f"{key}_bytes"] += tensor.numel() * tensor.element_size()
    return held


# hybrids whose request memory is read at long lengths too (the done-when check of issue 12)
LONG_REQUESTS = {"granite-4.0-h-tiny": (8, 32768), "qwen3-next-80b-a3b": (8, 32768)}


def golden(path: Path | dict[str, Any]) -> dict[str, Any]:
    config, data = load(path)
    stem = path.get("model_type") if isinstance(path, dict) else path.stem
    model = build(config)
    parts: dict[str, int] = {}
    for name, p in model.named_parameters():
        key = component(model, name)
        parts[key] = parts.get(key, 0) + p.numel()
    total = sum(p.numel() for p in model.parameters())
    assert total == sum(parts.values())
    unused = 0
    experts = getattr(config, "num_local_experts", None) or getattr(config, "num_experts", None) \
        or getattr(config, "n_routed_experts", None)
    k = getattr(config, "num_experts_per_tok", None)
    for name, module in model.named_modules():
        if name.endswith(".experts"):
            n = sum(p.numel() for p in module.parameters())
            assert n * (experts - k) % experts == 0
            unused += n * (experts - k) // experts
    moe = {key.split(".")[1]: parts.pop(key, 0)
           for key in ("mlp.dense", "mlp.router", "mlp.routed_experts", "mlp.shared_experts")}
    components = {key: parts.get(key, 0) for key in (
        "token_embedding", "position_embedding", "embedding_projections", "attention", "ssm",
        "norms", "output_head")}
    components["mlp"] = sum(moe.values())

    flops = {}
    cache8 = None
    for tokens in TOKENS:
        count, cache = forward(model, tokens, count_flops=True)
        assert count % tokens == 0, (stem, tokens, count)
        flops[str(tokens)] = count // tokens
        if tokens == 8:
            cache8 = cache
    # Llama 4's MoE (Llama4TextMoe) runs every token through every expert, scaling the
    # unchosen ones by 0; specsheet counts the k experts a token uses, so the golden also
    # records the figure without the (E - k) unchosen experts' matrix multiplications
    everyone = [m for m in model.modules() if type(m).__name__ == "Llama4TextMoe"]
    if everyone:
        per_expert = sum(p.numel() for p in everyone[0].experts.parameters()) // experts
        unchosen = 2 * len(everyone) * (experts - k) * per_expert
        result_routed = {t: f - unchosen for t, f in flops.items()}
    hf_per_token = sum(per for _, per in cache_lengths(cache8))
    layers = config.num_hidden_layers
    latent = getattr(config, "kv_lora_rank", None)
    per_token = layers * (latent + config.qk_rope_head_dim) if latent else hf_per_token
    result: dict[str, Any] = {
        "model": stem,
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "total": total,
        "components": components,
        "moe": moe,
        "active": total - unused,
        "kv_elements_per_token": per_token,
        "hf_cache_elements_per_token": hf_per_token,
        "kv_bytes_per_token_bf16": 2 * per_token,
        "flops_per_token": flops,
    }
    held = cache_bytes(cache8)
    if held["conv_elements"] or held["recurrent_elements"]:
        # bf16 model: keys, values and convolution states in bf16; transformers keeps the
        # recurrent (SSM, DeltaNet) states in float32
        result["state"] = {k: v for k, v in held.items() if not k.startswith("kv_")}
        result["state"]["bytes"] = held["conv_bytes"] + held["recurrent_bytes"]
        result["request_bytes"] = {"8": held["kv_bytes"] + result["state"]["bytes"]}
        for tokens in LONG_REQUESTS.get(stem, ()):
            _, cache = forward(model, tokens, count_flops=False)
            long = cache_bytes(cache)
            result["request_bytes"][str(tokens)] = long["kv_bytes"] + long["conv_bytes"] + \
                long["recurrent_bytes"]
    if everyone:
        result["moe_computes_every_expert"] = True
        result["flops_per_token_routed"] = result_routed
    window = data.get("sliding_window") or getattr(config, "sliding_window", None)
    types = getattr(config, "layer_types", None)
    if types is not None and "chunked_attention" in types:
        # transformers' cache holds a chunked layer as a sliding window of the chunk size
        window = config.attention_chunk_size
    windowed = bool(window) and (types is None or "sliding_attention" in types
                                 or "chunked_attention" in types)
    if windowed and not latent and getattr(config, "use_sliding_window", True) is not False:
        tokens = window + 100
        _, cache = forward(model, tokens, count_flops=False)
        rows = cache_lengths(cache)
        held = 0
        hf_held = 0
        for positions, per in rows:
            assert positions in (tokens, window - 1), (stem, positions, window)
            held += (tokens if positions == tokens else window) * per
            hf_held += positions * per
        result["kv_beyond_window"] = {
            "tokens": tokens, "sliding_window": window,
            "windowed_layers": sum(1 for positions, _ in rows if positions != tokens),
            "elements": held, "bytes_bf16": 2 * held, "hf_cache_elements": hf_held,
        }
    return result


# every family whose configuration class builds a model with no keys given at all
DEFAULT_FAMILIES = (
    "gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "llama", "mistral", "mixtral", "qwen2",
    "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text", "phi3", "starcoder2",
    "olmo", "olmo2", "deepseek_v3", "phi", "gpt_oss", "cohere", "cohere2", "smollm3", "granite",
    "glm4_moe", "llama4_text", "exaone4", "mamba2", "jamba", "falcon_h1", "qwen3_next",
)


# variants of a published config (file in tests/data, the keys changed): a family's switches
# that no published config in tests/data turns, checked against transformers all the same
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "qwen2_moe-sparse-step-2": ("qwen1.5-moe-a2.7b", {"decoder_sparse_step": 2}),
    "qwen2_moe-mlp-only-layers": ("qwen1.5-moe-a2.7b", {"mlp_only_layers": [0, 3, 23]}),
    "qwen2_moe-step-and-mlp-only": ("qwen1.5-moe-a2.7b",
                                    {"decoder_sparse_step": 2, "mlp_only_layers": [1, 4]}),
    "qwen2_moe-no-shared-expert": ("qwen1.5-moe-a2.7b", {"shared_expert_intermediate_size": 0}),
    "qwen2_moe-windows": ("qwen1.5-moe-a2.7b", {"use_sliding_window": True,
                                                "sliding_window": 4096, "max_window_layers": 16}),
    "qwen2_moe-no-qkv-bias": ("qwen1.5-moe-a2.7b", {"qkv_bias": False}),
    "phi-qk-layernorm": ("phi-2", {"qk_layernorm": True}),
    "cohere-qk-norm": ("aya-23-8b", {"use_qk_norm": True}),
    "smollm3-windows": ("smollm3-3b", {"use_sliding_window": True, "sliding_window": 4096}),
    "glm4_moe-qk-norm": ("glm-4.5-air", {"use_qk_norm": True, "attention_bias": False}),
    "llama4-interleaved": ("llama-4-scout", {"interleave_moe_layer_step": 2,
                                            "num_local_experts": 128}),
    "falcon_h1-mamba-rms-norm-biases": ("falcon-h1-0.5b", {"mamba_rms_norm": True,
                                                           "mamba_proj_bias": True,
                                                           "projectors_bias": True,
                                                           "mamba_conv_bias": False}),
    "granitemoehybrid-biases": ("granite-4.0-h-1b", {"mamba_proj_bias": True,
                                                     "attention_bias": True}),
    "nemotron_h-biases": ("nemotron-h-8b", {"use_bias": True, "use_conv_bias": False,
                                            "mlp_bias": True, "attention_bias": True}),
    "qwen3_next-dense-layers": ("qwen3-next-80b-a3b", {"mlp_only_layers": [0, 3],
                                                       "decoder_sparse_step": 2}),
    "qwen3_next-attention-bias-interval": ("qwen3-next-80b-a3b", {
        "attention_bias": True, "num_hidden_layers": 12, "layer_types": None,
        "full_attention_interval": 3}),
    "jamba-short-every-layer-experts": ("jamba-1.5-mini", {
        "num_hidden_layers": 8, "expert_layer_period": 1, "expert_layer_offset": 0,
        "attn_layer_period": 4, "attn_layer_offset": 1, "mamba_proj_bias": True}),
    "mamba2-groups-bias": ("mamba2-780m", {"n_groups": 4, "use_bias": True}),
}


def variant(name: str) -> dict[str, Any]:
    """A variant's config: its published config with the changed keys (in text_config when the
    config has one)."""
    base, changes = VARIANTS[name]
    data: dict[str, Any] = json.loads((DATA / f"{base}.json").read_text())
    if isinstance(data.get("text_config"), dict):
        data = {**data, "text_config": {**data["text_config"], **changes}}
    else:
        data = {**data, **changes}
    return data


def main() -> int:
    GOLDEN.mkdir(exist_ok=True)
    if sys.argv[1:2] == ["--variants"]:
        (GOLDEN / "variants").mkdir(exist_ok=True)
        for name in sys.argv[2:] or VARIANTS:
            result = golden(variant(name))
            result["model"] = name
            result["variant_of"], result["changes"] = VARIANTS[name]
            (GOLDEN / "variants" / f"{name}.json").write_text(json.dumps(result, indent=2)
                                                               + "\n")
            print(f"{name}: {result['total']:,} parameters", flush=True)
        return 0
    if sys.argv[1:2] == ["--defaults"]:
        # {"model_type": X} alone: what each configuration class's defaults build (all the
        # families, or those named after --defaults)
        (GOLDEN / "defaults").mkdir(exist_ok=True)
        for family in sys.argv[2:] or DEFAULT_FAMILIES:
            result = golden({"model_type": family})
            (GOLDEN / "defaults" / f"{family}.json").write_text(json.dumps(result, indent=2) + "\n")
            print(f"{family}: {result['total']:,} parameters", flush=True)
        return 0
    names = sys.argv[1:] or sorted(p.stem for p in DATA.glob("*.json") if p.stem != "sources")
    for name in names:
        result = golden(DATA / f"{name}.json")
        (GOLDEN / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
        print(f"{name}: {result['total']:,} parameters, {result['active']:,} active, "
              f"{result['kv_bytes_per_token_bf16']:,} KV bytes/token", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
