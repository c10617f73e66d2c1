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
