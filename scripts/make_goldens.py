"""Golden figures for tests/data/*.json, from transformers' own model classes.

A developer tool, run by hand in a scratch virtual environment; torch and transformers never
become dependencies of specsheet or of its test suite, which compares specsheet against the
goldens this writes to tests/golden/:

    python -m venv /tmp/hf && /tmp/hf/bin/pip install torch transformers
    /tmp/hf/bin/python scripts/make_goldens.py [NAME ...]
    /tmp/hf/bin/python scripts/make_goldens.py --defaults [FAMILY ...]  # {"model_type": X}
    /tmp/hf/bin/python scripts/make_goldens.py --variants [NAME ...]  # VARIANTS below
    /tmp/hf/bin/python scripts/make_goldens.py --identical [FAMILY ...]  # IDENTICAL below
    /tmp/hf/bin/python scripts/make_goldens.py --multimodal [NAME ...]  # MULTIMODAL below

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
- training FLOPs (``--train``, added to the goldens already written): FlopCounterMode around one
  T-token forward in training mode and ``.backward()`` of the summed logits, divided by T, at
  each of TRAIN_TOKENS, with the forward alone beside it (``train_flops_per_token``: forward,
  forward + backward, and their ratio; the hybrids, whose Mamba, Mamba-2 and gated DeltaNet
  layers' backward is not 2 x their forward, at HYBRID_TRAIN_TOKENS, several chunks of their
  scans). Every parameter requires a gradient, as in
  pre-training; meta tensors carry autograd, so no weights are needed here either.
- multimodal wrappers (``--multimodal``, tests/golden/multimodal/): the whole checkpoint as
  ``AutoModelForImageTextToText`` builds it from the config, its parameters split into the
  vision tower, the projector and the language model by the module that holds them
  (``wrapper_component``), and the tower's tensors by name and shape.
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
from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"
TOKENS = (1, 8, 128, 1024)
TRAIN_TOKENS = (8, 128)
# hybrids train at 1,024 tokens too: several chunks of Mamba-2's scan (256) and gated
# DeltaNet's (64), whose backward is not 2 x the forward
HYBRID_TRAIN_TOKENS = (8, 128, 1024)


def load(path: Path | dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    data = path if isinstance(path, dict) else json.loads(path.read_text())
    if isinstance(data.get("text_config"), dict):
        data = data["text_config"]
    # Kimi K2 (model_type kimi_k2) names transformers' DeepseekV3Config in its auto_map
    model_type = {"kimi_k2": "deepseek_v3"}.get(data["model_type"], data["model_type"])
    return CONFIG_MAPPING[model_type].from_dict(data), data


def dbrx_experts_forward(self: Any, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                         top_k_weights: torch.Tensor) -> torch.Tensor:
    """DbrxExperts.forward by gathered batched matmuls: the same matrices, but without the
    data-dependent torch.nonzero that the meta device cannot run. Each token multiplies by
    the w1, v1 and w2 of its k chosen experts, as transformers' batched_mm path does for the
    other MoE families."""
    batch = hidden_states.shape[0]
    x = hidden_states.reshape(-1, self.hidden_size)
    k = top_k_index.shape[-1]
    chosen = top_k_index.reshape(-1)
    shape = (self.num_experts, self.ffn_hidden_size, self.hidden_size)
    w1, v1, w2 = (m.view(shape)[chosen] for m in (self.mlp.w1, self.mlp.v1, self.mlp.w2))
    xk = x.repeat_interleave(k, dim=0).unsqueeze(-1)  # (tokens x k, d, 1)
    gate = self.mlp.activation_fn(torch.bmm(w1, xk).squeeze(-1))
    up = torch.bmm(v1, xk).squeeze(-1)
    out = torch.bmm((gate * up).unsqueeze(1), w2).squeeze(1)  # (tokens x k, d)
    out = out * top_k_weights.reshape(-1, 1)
    return out.view(-1, k, self.hidden_size).sum(dim=1).view(batch, -1, self.hidden_size)


def build(config: Any) -> torch.nn.Module:
    # bf16 as the checkpoints ship, so that the cache holds its states in the dtypes
    # transformers keeps them in (FLOPs and counts do not depend on it); given to from_config
    # too, as a config's torch_dtype overrides the default (the Mamba checkpoints say float32,
    # and a float32 model keeps its convolution states in float32)
    torch.set_default_dtype(torch.bfloat16)
    if config.model_type == "dbrx":
        from transformers.models.dbrx import modeling_dbrx

        modeling_dbrx.DbrxExperts.forward = dbrx_experts_forward  # type: ignore[method-assign]
    with torch.device("meta"):
        try:
            return AutoModelForCausalLM.from_config(config, experts_implementation="batched_mm",
                                                    dtype=torch.bfloat16)
        except (TypeError, ValueError):
            return AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)


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
    mixer = re.match(r"(.*\.layers\.\d+\.(mixer|mamba|linear_attn|conv))\.", name)
    if mixer:  # Mamba, Mamba-2, gated DeltaNet and LFM2's short-convolution layers;
        # Nemotron-H's blocks hold any kind
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
    if re.search(r"\.(mlp|block_sparse_moe|feed_forward|ffn|fc1|fc2)\.", name):
        # routers: a gate or router Linear (DBRX's router.layer), and ERNIE 4.5's
        # e_score_correction_bias, a parameter of one value per expert beside the gate
        if re.search(r"\.(mlp|block_sparse_moe|feed_forward|ffn)\.(gate|router)\."
                     r"((layer\.)?(weight|bias)|moe_statics\.e_score_correction_bias)$", name):
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


def train_step(model: torch.nn.Module, tokens: int) -> tuple[int, int]:
    """FLOPs of one T-token forward in training mode, and of that forward and its backward."""
    model.train()
    ids = torch.zeros((1, tokens), dtype=torch.long, device="meta")
    counter = FlopCounterMode(display=False)
    with counter:
        # use_cache=True as in forward(): without a cache transformers looks for packed
        # sequences in the position ids, which calls .item() (impossible on meta tensors)
        out = model(input_ids=ids, use_cache=True)
        forward_flops = counter.get_total_flops()
        out.logits.float().sum().backward()
    model.eval()
    return forward_flops, counter.get_total_flops()


def train_golden(path: Path | dict[str, Any]) -> dict[str, Any]:
    """``train_flops_per_token`` of one config: per T, the forward and forward + backward."""
    config, _ = load(path)
    model = build(config)
    # a Mamba, Mamba-2 or gated DeltaNet layer: each has a depthwise convolution
    hybrid = any(isinstance(m, torch.nn.Conv1d) for m in model.modules())
    # Mamba and Falcon Mamba have no chunked scan (one step per token, as at 8 and 128): 1,024
    # tokens would add nothing but a long run of 1,024 steps a layer
    chunked = hybrid and config.model_type not in ("mamba", "falcon_mamba")
    result = {}
    for tokens in HYBRID_TRAIN_TOKENS if chunked else TRAIN_TOKENS:
        forward_flops, total = train_step(model, tokens)
        assert forward_flops % tokens == 0 and total % tokens == 0
        result[str(tokens)] = {"forward": forward_flops // tokens, "train": total // tokens,
                               "ratio": total / forward_flops}
    return result


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
    if config.model_type == "dbrx":  # its MoE keys are under ffn_config
        experts, k = config.ffn_config.moe_num_experts, config.ffn_config.moe_top_k
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
    "glm4_moe", "llama4_text", "exaone4", "glm4", "olmo3", "seed_oss", "ernie4_5", "ernie4_5_moe",
    "phimoe", "granitemoe", "mamba2", "jamba", "falcon_h1", "qwen3_next", "olmoe", "mamba",
    "falcon_mamba", "gpt_bigcode", "gpt_neo", "mpt",
)
# hunyuan_v1_dense (head_dim defaults to None) and dbrx (its attention configuration has no
# rope_theta) cannot be built from their configuration classes' defaults alone


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
    "glm4-no-attention-bias": ("glm-4-9b-0414", {"attention_bias": False}),
    "olmo3-gqa-attention-bias": ("olmo-3-7b", {"num_key_value_heads": 8,
                                               "attention_bias": True}),
    "hunyuan-attention-bias": ("hunyuan-4b", {"attention_bias": True}),
    # the key norm is kv heads x head_dim wide, the query norm hidden_size
    "olmoe-gqa-attention-bias": ("olmoe-1b-7b", {"num_key_value_heads": 4,
                                                 "attention_bias": True}),
    "seed_oss-out-and-mlp-bias": ("seed-oss-36b", {"attention_out_bias": True,
                                                   "mlp_bias": True}),
    "ernie4_5-use-bias": ("ernie-4.5-0.3b", {"use_bias": True}),
    "ernie4_5_moe-interval-end-bias": ("ernie-4.5-21b-a3b", {
        "moe_layer_interval": 2, "moe_layer_start_index": 2, "moe_layer_end_index": 20,
        "moe_num_shared_experts": 0, "use_bias": True}),
    "phimoe-no-biases-no-window": ("phi-3.5-moe", {"lm_head_bias": False, "sliding_window": None,
                                                   "attention_bias": False}),
    "granitemoe-attention-bias": ("granite-3.1-1b-a400m", {"attention_bias": True}),
    # DBRX's nested attn_config and ffn_config with their keys left out: their classes' defaults
    # (one KV head; 4 experts of 3,584, one per token); rope_theta and clip_qkv given, without
    # which transformers 5.24 cannot run DBRX's attention
    "dbrx-nested-defaults": ("dbrx-instruct", {"attn_config": {"rope_theta": 500000.0,
                                                               "clip_qkv": 8.0},
                                               "ffn_config": {}}),
    "qwen2_moe-57b-sparse-step-3": ("qwen2-57b-a14b", {"decoder_sparse_step": 3,
                                                       "mlp_only_layers": [1]}),
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
    # Bamba's switches: biases on the Mamba projections, the attention and the MLP, no
    # convolution bias, two groups, mamba_d_head "auto", attention at the first layer
    "bamba-biases-groups": ("bamba-9b", {
        "num_hidden_layers": 8, "attn_layer_indices": [0, 5], "mamba_proj_bias": True,
        "mamba_conv_bias": False, "attention_bias": True, "mlp_bias": True,
        "mamba_n_groups": 2, "mamba_d_head": "auto"}),
    # LFM2's switches: layer_types over full_attn_idxs, conv_bias on the convolution and both
    # projections, a multiplier of the MLP width, tie_embedding (its old name) false; then the
    # MLP width as given (block_auto_adjust_ff_dim false, block_ff_dim its old name)
    "lfm2-layer-types-biases": ("lfm2-1.2b", {
        "num_hidden_layers": 6, "layer_types": ["conv", "full_attention", "conv", "conv",
                                                "full_attention", "conv"],
        "conv_bias": True, "block_ffn_dim_multiplier": 1.5, "tie_embedding": False}),
    "lfm2-width-as-given": ("lfm2-1.2b", {
        "num_hidden_layers": 4, "full_attn_idxs": [0], "block_auto_adjust_ff_dim": False,
        "block_ff_dim": 5000}),
    # dots1's switches: windows from max_window_layers on, attention biases, more dense layers
    # and one shared expert
    "dots1-windows-bias-dense": ("dots.llm1-inst", {
        "num_hidden_layers": 8, "max_window_layers": 5, "sliding_window": 512,
        "attention_bias": True, "first_k_dense_replace": 3, "n_shared_experts": 1}),
    # MiniMax-M2 builds no attention biases and no shared expert whatever these keys say; a
    # head_dim of 64 narrows its q/k norms (heads x head_dim, kv heads x head_dim)
    "minimax_m2-keys-it-ignores": ("minimax-m2", {
        "num_hidden_layers": 4, "attn_type_list": [1] * 4, "attention_bias": True,
        "shared_intermediate_size": 512, "head_dim": 64}),
    # GLM-4.7-Flash's dense layers from mlp_layer_types (first_k_dense_replace is not read),
    # and a direct query projection (a null q_lora_rank)
    "glm4_moe_lite-mlp-layer-types": ("glm-4.7-flash", {
        "num_hidden_layers": 6, "first_k_dense_replace": 3, "q_lora_rank": None,
        "mlp_layer_types": ["dense", "sparse", "dense", "sparse", "sparse", "sparse"]}),
    "mamba2-groups-bias": ("mamba2-780m", {"n_groups": 4, "use_bias": True}),
    # time_step_rank "auto" (ceil(1000 / 16) = 63), the projections' biases, no convolution
    # bias, an untied head
    "mamba-auto-rank-biases-untied": ("mamba-130m", {
        "hidden_size": 1000, "intermediate_size": 2000, "time_step_rank": "auto",
        "use_bias": True, "use_conv_bias": False, "tie_word_embeddings": False}),
    "falcon_mamba-biases-tied": ("falcon-mamba-7b", {"num_hidden_layers": 4, "use_bias": True,
                                                     "tie_word_embeddings": True}),
}


# a family transformers builds with another class but, for the same keys, the same parameters
# and FLOPs as a supported family's (unsupported.py's ``identical``): both goldens side by side
IDENTICAL: dict[str, tuple[str, dict[str, Any]]] = {
    "codegen": ("gptj", {"n_embd": 1024, "n_layer": 4, "n_head": 16, "n_positions": 2048,
                         "rotary_dim": 32, "vocab_size": 51200, "tie_word_embeddings": False}),
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


# multimodal wrappers: name -> config (tests/data/multimodal/NAME.json, or a config of
# tests/data whose text goldens are the language model's)
MULTIMODAL = {
    "gemma-3-4b": DATA / "gemma-3-4b.json",
    "llama-4-scout": DATA / "llama-4-scout.json",
    **{p.stem: p for p in sorted((DATA / "multimodal").glob("*.json"))},
}
# the modules of a wrapper that hold its projector; the rest of its vision module is the tower
PROJECTOR = re.compile(r"(^|\.)(multi_modal_projector|connector|visual\.merger|"
                       r"visual\.deepstack_merger_list)\.")
VISION = re.compile(r"(^|\.)(vision_tower|vision_model|visual)\.")


def wrapper_component(name: str) -> str:
    """vision, projector or language_model, from a wrapper's parameter name."""
    if PROJECTOR.search(name):
        return "projector"
    if VISION.search(name):
        return "vision"
    return "language_model"


def multimodal_golden(name: str) -> dict[str, Any]:
    from transformers import AutoModelForImageTextToText

    torch.set_default_dtype(torch.bfloat16)
    data = json.loads(MULTIMODAL[name].read_text())
    config = AutoConfig.for_model(**data)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    parts = {"vision": 0, "projector": 0, "language_model": 0}
    tower: dict[str, list[int]] = {}
    for pname, p in model.named_parameters():  # tied matrices once
        part = wrapper_component(pname)
        parts[part] += p.numel()
        if part != "language_model":
            tower[pname] = list(p.shape)
    total = sum(p.numel() for p in model.parameters())
    assert total == sum(parts.values())
    return {
        "model": name,
        "config": str(MULTIMODAL[name].relative_to(DATA)),
        "class": type(model).__name__,
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "total": total,
        "components": parts,
        "language_model": parts["language_model"],
        "tower_tensors": tower,
    }


def main() -> int:
    GOLDEN.mkdir(exist_ok=True)
    if sys.argv[1:2] == ["--multimodal"]:
        (GOLDEN / "multimodal").mkdir(exist_ok=True)
        for name in sys.argv[2:] or MULTIMODAL:
            result = multimodal_golden(name)
            (GOLDEN / "multimodal" / f"{name}.json").write_text(json.dumps(result, indent=1)
                                                                + "\n")
            print(f"{name}: {result['total']:,} parameters, {result['components']}", flush=True)
        return 0
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
    if sys.argv[1:2] == ["--identical"]:
        (GOLDEN / "identical").mkdir(exist_ok=True)
        for name in sys.argv[2:] or IDENTICAL:
            family, keys = IDENTICAL[name]
            pair = {"keys": keys, name: golden({"model_type": name, **keys}),
                    family: golden({"model_type": family, **keys})}
            (GOLDEN / "identical" / f"{name}.json").write_text(json.dumps(pair, indent=2) + "\n")
            print(f"{name} as {family}: {pair[name]['total']:,} and {pair[family]['total']:,} "
                  "parameters", flush=True)
        return 0
    if sys.argv[1:2] == ["--train"]:
        # add train_flops_per_token to the goldens of tests/golden (all, or those named)
        for name in sys.argv[2:] or sorted(p.stem for p in GOLDEN.glob("*.json")):
            path = GOLDEN / f"{name}.json"
            result = json.loads(path.read_text())
            result["train_flops_per_token"] = train_golden(DATA / f"{name}.json")
            path.write_text(json.dumps(result, indent=2) + "\n")
            ratios = {t: r["ratio"] for t, r in result["train_flops_per_token"].items()}
            print(f"{name}: forward + backward / forward {ratios}", flush=True)
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
        written = GOLDEN / f"{name}.json"
        if written.exists():  # keep the training figures of --train, which this does not redo
            train = json.loads(written.read_text()).get("train_flops_per_token")
            if train is not None:
                result["train_flops_per_token"] = train
        (GOLDEN / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
        print(f"{name}: {result['total']:,} parameters, {result['active']:,} active, "
              f"{result['kv_bytes_per_token_bf16']:,} KV bytes/token", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
