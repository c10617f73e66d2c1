"""vLLM's cache layouts and parallel layouts beyond the plain ones, each derived here from the
vLLM code docs/serving.md cites."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app

GIB = 2**30


def serve(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_fp8_ds_mla_is_656_bytes_a_token_a_layer_in_blocks_of_64() -> None:
    # MLAAttentionSpec.real_page_size_bytes: block_size x 656, 656 = 512 fp8 latent values +
    # 4 fp32 scales (one per 128) + 64 bf16 rotary values
    assert 512 * 1 + 4 * 4 + 64 * 2 == 656
    doc = serve("deepseek-v3", "--gpu", "h200", "--gpus", "8", "--kv-dtype", "fp8_ds_mla",
                "--kv-memory", "40GiB")
    assert doc["model"]["kv_dtype"] == "fp8_ds_mla"
    blocks = doc["kv_blocks"]
    assert (blocks["block_size"], blocks["page_bytes"]) == (64, 64 * 656)
    assert doc["memory_per_gpu"]["kv_bytes_per_token"] == 61 * 656
    assert blocks["num_blocks"] == 40 * GIB // (64 * 656) // 61 == 16_770
    assert blocks["blocks_per_request"] == 163_840 // 64
    # against plain fp8: 576 bytes a token, the scales and the bf16 rotary part not counted
    fp8 = serve("deepseek-v3", "--gpu", "h200", "--gpus", "8", "--kv-dtype", "fp8",
                "--kv-memory", "40GiB")
    assert fp8["memory_per_gpu"]["kv_bytes_per_token"] == 61 * 576
    # the library takes the same name
    plan = specsheet.serve(specsheet.load("deepseek-v3"), gpu="h200", gpus=8,
                           kv_dtype="fp8_ds_mla", kv_memory="40GiB").plan
    assert plan.binding.num_blocks == 16_770


def test_fp8_ds_mla_on_a_model_without_that_latent_is_refused() -> None:
    result = CliRunner().invoke(app, ["serve", "llama3-8b", "--gpu", "h100-sxm", "--kv-dtype",
                                      "fp8_ds_mla"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "option --kv-dtype: fp8_ds_mla is DeepSeek V3.2's cache" in result.stderr


def _fp8_block(n: int, k: int) -> int:
    """One fp8 matrix of n x k with its fp32 scale per 128 x 128 tile."""
    return n * k + -(-n // 128) * -(-k // 128) * 4


def test_dp_with_ep_spreads_the_experts_over_tp_x_dp_gpus() -> None:
    # vLLM: EP size = TP x DP with --enable-expert-parallel; attention and the rest stay split
    # by tp inside each data-parallel engine
    tp8 = serve("deepseek-v3", "--gpu", "h200", "--tp", "8")
    ep = serve("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "2", "--ep")
    assert ep["parallel"] == {"gpus": 16, "tp": 8, "pp": 1, "ep": 16, "dp": 2, "dcp": 1}
    # one expert: gate, up [2048 x 7168] and down [7168 x 2048]; at tp 8 each is 256 wide
    whole = 3 * _fp8_block(2048, 7168)
    split = 2 * _fp8_block(256, 7168) + _fp8_block(7168, 256)
    assert (whole, split) == (44_050_944, 5_506_368)
    # 58 MoE layers: 256 split experts on each GPU at tp 8; 256 / 16 = 16 whole ones with ep
    weights = tp8["memory_per_gpu"]["weights_bytes"] - 58 * 256 * split + 58 * 16 * whole
    assert ep["memory_per_gpu"]["weights_bytes"] == weights == 44_260_854_816
    # without --ep, data parallelism repeats the whole engine: the same weights per GPU
    dp = serve("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "2")
    assert dp["memory_per_gpu"]["weights_bytes"] == tp8["memory_per_gpu"]["weights_bytes"]
    assert (dp["parallel"]["gpus"], dp["parallel"]["ep"]) == (16, 1)


def test_dp_engines_each_cost_their_own_gpus() -> None:
    # the estimates are one engine's (its pool, its requests): its tp x pp GPUs pay for them
    one = serve("llama3-8b", "--gpu", "h100-sxm", "--price", "2")
    two = serve("llama3-8b", "--gpu", "h100-sxm", "--dp", "2", "--price", "2")
    assert two["parallel"]["gpus"] == 2
    for key in ("usd_per_request", "usd_per_million_output_tokens", "tokens_per_s_total"):
        assert two["estimates"][key] == one["estimates"][key], key
    assert two["max_concurrency"] == one["max_concurrency"]  # per engine


def test_dcp_splits_a_requests_kv_over_the_tp_ranks() -> None:
    # decode context parallelism: a block of block_size slots holds block_size x dcp tokens of
    # the request (each rank 1 / dcp of them); vLLM prints the tokens multiplied by dcp; on
    # Blackwell DCP takes CUTLASS MLA, blocks of 128 (platforms/cuda.py)
    doc = serve("deepseek-v3", "--gpu", "b200", "--tp", "8", "--dcp", "8", "--kv-memory",
                "40GiB")
    k = doc["kv_blocks"]
    page = 128 * 576 * 2
    assert (k["block_size"], k["page_bytes"]) == (128, page)
    blocks = 40 * GIB // page // 61
    assert k["num_blocks"] == blocks == 4_774
    assert k["blocks_per_request"] == -(-163_840 // (128 * 8)) == 160
    assert k["vllm_kv_tokens"] == blocks * 128 * 8 == 4_888_576
    assert doc["max_concurrency"] == blocks // 160 == 29
    plain = serve("deepseek-v3", "--gpu", "b200", "--tp", "8", "--kv-memory", "40GiB")
    assert plain["kv_blocks"]["block_size"] == 64  # FlashInfer MLA without DCP
    assert plain["max_concurrency"] == 40 * GIB // (64 * 576 * 2) // 61 // 2560 == 3


def test_dcp_that_does_not_divide_tp_or_on_a_model_without_mla_is_refused() -> None:
    for args, text in ((["deepseek-v3", "--tp", "8", "--dcp", "3"],
                        "option --dcp: 3 does not divide tp 8"),
                       (["llama3-70b", "--tp", "8", "--dcp", "2"],
                        "option --dcp: decode context parallelism is modelled for multi-head "
                        "latent attention"),
                       (["llama3-8b", "--gpus", "3", "--dp", "2"],
                        "option --gpus: 3 GPUs are not a whole number of engines")):
        result = CliRunner().invoke(app, ["serve", *args, "--gpu", "h200"])
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert text in result.stderr, result.stderr


def test_lora_slots_are_max_loras_adapters_at_full_rank_on_every_gpu() -> None:
    # create_lora_weights: per wrapped Linear and slice, A [N, 1, r, in] and B [N, 1, out, r]
    # in the model's dtype. At tp 1 that is r x (in + out) per matrix: Llama 3 8B's seven
    # projections, r x (8192 + 5120 + 5120 + 8192 + 3 x 18432) = r x 81,920 a layer, the count
    # peft prints for an adapter of rank r (41,943,040 at r = 16, docs/training.md)
    doc = serve("llama3-8b", "--gpu", "h100-sxm", "--max-loras", "4", "--max-lora-rank", "64")
    memory = doc["memory_per_gpu"]
    slots = 4 * 32 * 64 * 81_920 * 2
    assert memory["lora_bytes"] == slots == 1_342_177_280
    assert memory["buffers_bytes"] == slots + 8192 * 128 * 2  # and the rotary cache
    plain = serve("llama3-8b", "--gpu", "h100-sxm")["memory_per_gpu"]
    assert plain["lora_bytes"] == 0
    assert plain["kv_pool_bytes"] - memory["kv_pool_bytes"] == slots + (
        memory["activation_bytes"] - plain["activation_bytes"])
    # at tp 2 the column-parallel outputs and row-parallel inputs halve; the whole inputs of
    # the column-parallel A and the whole outputs of the row-parallel B stay
    tp2 = serve("llama3-8b", "--gpu", "h100-sxm", "--tp", "2", "--max-loras", "1")
    r, d = 16, 4096
    layer = (3 * r * d + r * (2048 + 512 + 512) + r * 2048 + d * r
             + 2 * r * d + r * 2 * 7168 + r * 7168 + d * r)
    assert tp2["memory_per_gpu"]["lora_bytes"] == 32 * layer * 2


def test_lora_slots_on_an_moe_model_are_refused() -> None:
    result = CliRunner().invoke(app, ["serve", "mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2",
                                      "--max-loras", "2"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "option --max-loras: multi-LoRA slots are modelled for dense attention" in \
        result.stderr
