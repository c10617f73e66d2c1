"""The checkpoint as it ships (quantization_config) and vLLM's MXFP4 MoE padding, against
published figures and vLLM's own start-up logs (tests/data/vllm_logs.yaml has the links)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app

GIB = 2**30


def run(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_gpt_oss_120b_counts_as_shipped_mxfp4_and_none_asks_for_bf16() -> None:
    memory = run("count", "gpt-oss-120b")["memory"]
    assert (memory["format"], memory["format_source"]) == ("mxfp4", "config")
    assert memory["weights_bytes"] == 65_248_815_744  # tests/test_serving.py derives it
    plain = run("count", "gpt-oss-120b", "--quant", "none")["memory"]
    assert (plain["format"], plain["format_source"]) == ("bf16", "option")
    assert plain["weights_bytes"] == 2 * 116_829_156_672
    assert run("count", "gpt-oss-120b", "--dtype", "bf16")["memory"]["format"] == "bf16"
    assert run("count", "llama3-8b")["memory"]["format_source"] == "default"
    assert run("count", "llama3-8b", "--quant", "awq-int4")["memory"]["format_source"] == \
        "option"


# DeepSeek-V3's 91,991 stored tensors, (count, shape, dtype), as the checkpoint's 163 shards hold
# them: README_WEIGHTS.md of deepseek-ai/DeepSeek-V3 (layers 0-60, layer 61 the MTP module with
# its own embed_tokens and shared_head copies; fp8 e4m3 Linears with an fp32 weight_scale_inv
# of ceil(out/128) x ceil(in/128); RMSNorms, router and embeddings bf16; the noaux_tc router's
# e_score_correction_bias fp32), shapes as a public tensor-by-tensor report of the same
# architecture's shards lists them (DeepSeek-R1: 91,991 tensors, 641.29 GiB of tensors in
# 641.30 GiB of files; code-index id 62464985633)
def _fp8(count: int, n: int, k: int) -> list[tuple[int, tuple[int, ...], int]]:
    return [(count, (n, k), 1), (count, (-(-n // 128), -(-k // 128)), 4)]


MAIN = [(1, (129280, 7168), 2), (1, (7168,), 2), (1, (129280, 7168), 2),  # embed, norm, head
        (61 * 2, (7168,), 2), (61, (1536,), 2), (61, (512,), 2),  # block norms
        *_fp8(61, 1536, 7168), *_fp8(61, 24576, 1536), *_fp8(61, 576, 7168),
        *_fp8(61, 32768, 512), *_fp8(61, 7168, 16384),
        *_fp8(3, 18432, 7168), *_fp8(3, 18432, 7168), *_fp8(3, 7168, 18432),  # dense 0-2
        (58, (256, 7168), 2), (58, (256,), 4),  # router, e_score_correction_bias
        *_fp8(58 * 257, 2048, 7168), *_fp8(58 * 257, 2048, 7168),  # experts + shared
        *_fp8(58 * 257, 7168, 2048)]
MTP = [(2, (7168,), 2), (1, (1536,), 2), (1, (512,), 2), *_fp8(1, 1536, 7168),
       *_fp8(1, 24576, 1536), *_fp8(1, 576, 7168), *_fp8(1, 32768, 512),
       *_fp8(1, 7168, 16384), (1, (256, 7168), 2), (1, (256,), 4),
       *_fp8(257, 2048, 7168), *_fp8(257, 2048, 7168), *_fp8(257, 7168, 2048),
       (2, (129280, 7168), 2), (3, (7168,), 2), (1, (7168, 14336), 2)]  # embed/head, e/h/norm, eh


def _bytes(rows: list[tuple[int, tuple[int, ...], int]]) -> int:
    total = 0
    for count, shape, size in rows:
        elements = 1
        for n in shape:
            elements *= n
        total += count * elements * size
    return total


def test_deepseek_v3_ships_fp8_blocks_and_equals_the_published_files_less_what_is_not_weights(
) -> None:
    memory = run("count", "deepseek-v3")["memory"]
    assert (memory["format"], memory["format_source"]) == ("fp8-block", "config")
    assert sum(c for c, _, _ in MAIN + MTP) == 91_991
    tensors = _bytes(MAIN) + _bytes(MTP)
    assert tensors == 688_574_839_360  # what an index's total_size sums: the tensors' bytes
    # 688,586,727,753 B: the 163 .safetensors files of deepseek-ai/DeepSeek-V3 at afb92e1f
    # (a public dataset's artifact_bytes, "weight files only"): the tensors and, per file, the
    # safetensors header (an 8-byte length and the JSON naming each tensor's dtype, shape and
    # offsets): 11,888,393 B, 129 B per tensor (test_the_headers_are_the_difference)
    files, headers = 688_586_727_753, 11_888_393
    assert files - headers == tensors
    # what vLLM loads without a speculative config: everything but model.layers.61
    # (DeepseekV2ForCausalLM.load_weights skips the MTP layer; get_spec_layer_idx_from_weight_name)
    assert memory["weights_bytes"] == files - headers - _bytes(MTP) == 673_150_611_808
    # every Linear fp8 with a fp32 scale per 128 x 128 tile; norms, router, embeddings bf16;
    # the router's e_score_correction_bias fp32 (vLLM deepseek_v2.py DeepseekV2MoE: an F32
    # nn.Parameter of n_routed_experts when topk_method is noaux_tc)
    assert memory["tensor_types"] == {"F8_E4M3": _bytes([r for r in MAIN if r[2] == 1]),
                                      "BF16": _bytes([r for r in MAIN if r[2] == 2]),
                                      "F32": _bytes([r for r in MAIN if r[2] == 4])}
    assert memory["overhead_bytes"] == memory["tensor_types"]["F32"] - 58 * 256 * 4


def _hf_tensors() -> list[tuple[str, str, list[int]]]:
    """DeepSeek-V3's tensors by name, dtype and shape, in layer order."""
    def lin(name: str, n: int, k: int) -> list[tuple[str, str, list[int]]]:
        return [(f"{name}.weight", "F8_E4M3", [n, k]),
                (f"{name}.weight_scale_inv", "F32", [-(-n // 128), -(-k // 128)])]

    out = [("model.embed_tokens.weight", "BF16", [129280, 7168])]
    for i in range(62):
        b = f"model.layers.{i}"
        out += [(f"{b}.input_layernorm.weight", "BF16", [7168]),
                (f"{b}.post_attention_layernorm.weight", "BF16", [7168]),
                (f"{b}.self_attn.q_a_layernorm.weight", "BF16", [1536]),
                (f"{b}.self_attn.kv_a_layernorm.weight", "BF16", [512])]
        for name, n, k in (("q_a_proj", 1536, 7168), ("q_b_proj", 24576, 1536),
                           ("kv_a_proj_with_mqa", 576, 7168), ("kv_b_proj", 32768, 512),
                           ("o_proj", 7168, 16384)):
            out += lin(f"{b}.self_attn.{name}", n, k)
        mlps = [f"{b}.mlp"] if i < 3 else [
            *(f"{b}.mlp.experts.{e}" for e in range(256)), f"{b}.mlp.shared_experts"]
        width = 18432 if i < 3 else 2048
        for m in mlps:
            out += lin(f"{m}.gate_proj", width, 7168) + lin(f"{m}.up_proj", width, 7168) + \
                lin(f"{m}.down_proj", 7168, width)
        if i >= 3:
            out += [(f"{b}.mlp.gate.weight", "BF16", [256, 7168]),
                    (f"{b}.mlp.gate.e_score_correction_bias", "F32", [256])]
        if i == 60:
            out += [("model.norm.weight", "BF16", [7168]), ("lm_head.weight", "BF16",
                                                             [129280, 7168])]
    b = "model.layers.61"
    out += [(f"{b}.embed_tokens.weight", "BF16", [129280, 7168]),
            (f"{b}.shared_head.head.weight", "BF16", [129280, 7168]),
            (f"{b}.eh_proj.weight", "BF16", [7168, 14336])]
    out += [(f"{b}.{n}.weight", "BF16", [7168]) for n in ("enorm", "hnorm", "shared_head.norm")]
    return out


def test_the_headers_are_the_difference() -> None:
    """The files' bytes less the tensors' is what 163 safetensors headers take: written here
    as the safetensors format writes them (an 8-byte length, then compact JSON with the
    {"format": "pt"} metadata and, per tensor, its dtype, shape and data_offsets), the shards
    cut in layer order to equal sizes. The published shards' cut and order are not known, so
    the offsets' digits differ by a few bytes a shard: within 0.02% of 11,888,393."""
    size = {"BF16": 2, "F8_E4M3": 1, "F32": 4}
    tensors = _hf_tensors()
    assert len(tensors) == 91_991
    nbytes = [size[d] * _bytes([(1, tuple(shape), 1)]) for _, d, shape in tensors]
    total = sum(nbytes)
    assert total == 688_574_839_360
    shards: list[list[int]] = [[]]
    acc = 0
    for i, n in enumerate(nbytes):
        if acc >= total / 163 * len(shards):
            shards.append([])
        shards[-1].append(i)
        acc += n
    assert len(shards) == 163
    headers = 0
    for shard in shards:
        header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
        offset = 0
        for i in sorted(shard, key=lambda i: tensors[i][0]):
            name, dtype, shape = tensors[i]
            header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [offset, offset + nbytes[i]]}
            offset += nbytes[i]
        headers += 8 + len(json.dumps(header, separators=(",", ":")))
    assert abs(headers - 11_888_393) / 11_888_393 < 2e-4, headers


def test_the_score_bias_is_the_checkpoints_not_a_parameter() -> None:
    shipped = run("count", "deepseek-v3")
    plain = run("count", "deepseek-v3", "--quant", "fp8-block")
    assert shipped["params"]["total"] == plain["params"]["total"] == 671_026_404_352
    assert shipped["memory"]["weights_bytes"] - plain["memory"]["weights_bytes"] == 58 * 256 * 4


@pytest.mark.parametrize(("kernel", "logged", "link"), [
    ("triton", 64.38, "https://github.com/vllm-project/vllm/issues/33155"),  # v0.14.1
    ("marlin", 65.9651, "https://github.com/vllm-project/vllm/issues/23278"),  # v0.10.1
])
def test_gpt_oss_120b_weights_per_h100_as_vllm_pads_them(kernel: str, logged: float,
                                                        link: str) -> None:
    args = ["serve", "gpt-oss-120b", "--gpu", "h100-sxm"]
    doc = run(*args) if kernel == "triton" else run(*args, "--moe-kernel", kernel)
    assert doc["model"]["format"] == "mxfp4"
    assert doc["engine"] == {"name": "vllm", "version": "0.14.1", "moe_kernel": kernel}
    weights = doc["memory_per_gpu"]["weights_bytes"]
    assert abs(weights / GIB - logged) / logged < 0.005, (weights / GIB, link)


@pytest.mark.parametrize(("tp", "weights"), [(2, 35_882_619_264), (4, 17_996_776_704),
                                             (8, 9_038_520_000)])
def test_gpt_oss_120b_at_tp_4_and_8_is_accepted_with_padded_experts(tp: int,
                                                                   weights: int) -> None:
    doc = run("serve", "gpt-oss-120b", "--gpu", "h100-sxm", "--tp", str(tp))
    assert doc["memory_per_gpu"]["weights_bytes"] == weights
    assert doc["fit"]["verdict"] == "fits"


def test_fit_names_its_estimates() -> None:
    doc = run("serve", "gpt-oss-120b", "--gpu", "h100-sxm")
    s = doc["memory_per_gpu"]
    fit = doc["fit"]
    assert fit["estimated_bytes"] == s["activation_bytes"] + s["overhead_bytes"]
    assert fit["margin_bytes"] == (s["budget_bytes"] - s["weights_bytes"] - s["buffers_bytes"]
                                   - fit["estimated_bytes"] - s["kv_bytes_per_request"])
    # one request fits, but by less than the estimates: tight, and fits stays true
    assert (fit["verdict"], fit["weights_fit"], doc["fits"]) == ("tight", True, True)
    marlin = run("serve", "gpt-oss-120b", "--gpu", "h100-sxm", "--moe-kernel", "marlin")
    assert marlin["fit"]["verdict"] == "does_not_fit" and marlin["fits"] is False
    given = run("serve", "llama3-8b", "--gpu", "h100-sxm", "--kv-memory", "40GiB")["fit"]
    assert given["estimated_bytes"] == 0 and given["verdict"] == "fits"


def test_speed_is_an_upper_bound_only_at_full_efficiency() -> None:
    def first(*more: str) -> str:
        doc = run("serve", "llama3-8b", "--gpu", "h100-sxm", *more)
        return str(doc["estimates"]["assumptions"][0])

    assert first() == "roofline: an estimate at mfu 0.5, mbu 0.8"
    assert first("--mfu", "1", "--mbu", "1").startswith("roofline: an upper bound on speed")


BASE = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
        "vocab_size": 1024, "max_position_embeddings": 2048}


def count_config(tmp_path: Path, quantization: dict[str, Any] | None) -> dict[str, Any]:
    data = dict(BASE) if quantization is None else {**BASE, "quantization_config": quantization}
    (tmp_path / "config.json").write_text(json.dumps(data))
    return run("count", str(tmp_path))["memory"]  # type: ignore[no-any-return]


def test_modules_a_config_leaves_unquantized_stay_bf16(tmp_path: Path) -> None:
    d, f, layers = 256, 512, 2
    attn = d * d * 2 + 2 * (d * 128)  # q, o [256 x 256]; k, v [128 x 256]
    mlp = 3 * d * f
    rest = 2 * 1024 * d * 2 + (2 * layers + 1) * d * 2  # embed + head + norms, bf16
    # fbgemm_fp8 (Llama 3.1 405B FP8's method): per-channel fp8, attention in bf16
    fbgemm = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
              "modules_to_not_convert": [f"model.layers.{i}.self_attn.{p}_proj"
                                         for i in range(layers) for p in "qkvo"]}
    memory = count_config(tmp_path, fbgemm)
    assert (memory["format"], memory["format_source"]) == ("fp8-channel", "config")
    channel_scales = 4 * (f + f + d)  # [N, 1] fp32 per MLP Linear
    assert memory["weights_bytes"] == layers * (attn * 2 + mlp + channel_scales) + rest
    # compressed-tensors w4a16 g32 with an ignore regex: attention stays bf16
    ct = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
              "num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
              "symmetric": True}}},
          "ignore": ["lm_head", "re:.*self_attn.*"]}
    memory = count_config(tmp_path, ct)
    assert memory["format"] == "w4a16"
    packed = f * d // 8 * 4 * 2 + d * f // 8 * 4  # I32 [N, K/8]: gate, up, down
    scales = (f * d // 32 * 2 + d * f // 32) * 2  # bf16 [N, K/32]
    shapes = 3 * 2 * 8  # weight_shape I64 [2] per Linear
    assert memory["weights_bytes"] == layers * (attn * 2 + packed + scales + shapes) + rest


@pytest.mark.parametrize(("config", "name"), [
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
     "gptq-int4"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
      "modules_to_not_convert": ["down_proj"]}, "awq-int4"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
      "bnb_4bit_use_double_quant": True}, "bnb-nf4-dq"),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "bnb-int8"),
    ({"quant_method": "fp8", "activation_scheme": "static"}, "fp8"),
    ({"quant_method": "mxfp4"}, "mxfp4"),
])
def test_each_method_reads_as_its_format(tmp_path: Path, config: dict[str, Any],
                                         name: str) -> None:
    memory = count_config(tmp_path, config)
    assert (memory["format"], memory["format_source"]) == (name, "config")


def test_awq_modules_match_as_substrings(tmp_path: Path) -> None:
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128}
    whole = count_config(tmp_path, awq)["weights_bytes"]
    kept = count_config(tmp_path, {**awq, "modules_to_not_convert": ["down_proj"]})
    # down_proj [256 x 512] fp16 instead of qweight [512, 32] I32 + qzeros [4, 32] I32 +
    # scales [4, 256] F16, in 2 layers
    assert kept["weights_bytes"] - whole == 2 * (256 * 512 * 2 - (512 * 32 * 4 + 4 * 32 * 4
                                                                 + 4 * 256 * 2))


def test_default_requests_fit_the_context_and_long_contexts_need_the_override() -> None:
    # gpt2-small's context is 1,024: the default request shortens to 768 + 256
    est = run("serve", "gpt2-small", "--gpu", "h100-sxm")["estimates"]
    assert (est["prompt_tokens"], est["output_tokens"]) == (768, 256)
    est = run("serve", "llama3-8b", "--gpu", "h100-sxm")["estimates"]
    assert (est["prompt_tokens"], est["output_tokens"]) == (1024, 256)
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN: 16k on an 8k model, the KV of 16k tokens per request
    doc = run("serve", "llama3-8b", "--gpu", "h100-sxm", "--max-model-len", "16k",
              "--allow-long-context")
    assert doc["request"]["max_model_len"] == 16384
    assert doc["memory_per_gpu"]["kv_bytes_per_request"] == 16384 * 131072  # 128 KiB a token
    shipped = run("serve", "gpt-oss-120b", "--gpu", "h100-sxm", "--max-model-len", "200k",
                  "--allow-long-context")
    assert shipped["model"]["format_source"] == "config"


def test_vllm_fp8_kv_dtype_names_are_fp8() -> None:
    fp8 = run("serve", "llama3-8b", "--gpu", "h100-sxm", "--kv-dtype", "fp8")
    for name in ("fp8_e4m3", "fp8_e5m2"):
        doc = run("serve", "llama3-8b", "--gpu", "h100-sxm", "--kv-dtype", name)
        assert doc["model"]["kv_dtype"] == "fp8"
        assert doc["kv_blocks"] == fp8["kv_blocks"]


def test_a_lora_base_is_frozen_as_the_checkpoint_ships_it() -> None:
    # no --quant: the LoRA base is the shipped checkpoint (gpt-oss-20b: mxfp4 experts), the
    # bytes count prints; --quant none asks for the unquantized model
    shipped = run("count", "gpt-oss-20b")["memory"]["weights_bytes"]
    doc = run("train", "gpt-oss-20b", "--lora-rank", "16", "--gpus", "1")
    assert doc["memory_per_gpu"]["frozen_bytes"] == shipped == 13_761_264_768
    assert any("frozen in mxfp4" in a for a in doc["assumptions"])
    plain = run("train", "gpt-oss-20b", "--lora-rank", "16", "--gpus", "1", "--quant", "none")
    params = run("count", "gpt-oss-20b")["params"]["total"]
    assert plain["memory_per_gpu"]["frozen_bytes"] == 2 * params
    # QLoRA keeps its own 4-bit base
    qlora = run("train", "gpt-oss-20b", "--lora-rank", "16", "--qlora", "--gpus", "1")
    assert any("frozen in bnb-nf4" in a for a in qlora["assumptions"])
