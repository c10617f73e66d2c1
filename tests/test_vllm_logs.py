"""specsheet against real vLLM start-up logs (tests/data/vllm_logs.yaml, each row with its link):
the blocks from the logged KV pool, to the log's printed rounding, and the weights per GPU."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from specsheet.cli.app import app

GIB = 2**30
ROWS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "vllm_logs.yaml").read_text(encoding="utf-8"))


def serve(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_the_table_has_at_least_twelve_logs_each_with_its_link() -> None:
    assert len(ROWS) >= 12
    assert all(str(r["link"]).startswith("https://github.com/") for r in ROWS)


def _args(row: dict[str, Any]) -> list[str]:
    args = [row["preset"], "--gpu", row["gpu"], "--tp", str(row["tp"])]
    if "max_model_len" in row:
        args += ["--max-model-len", str(row["max_model_len"])]
    if row.get("moe_kernel"):
        args += ["--moe-kernel", row["moe_kernel"]]
    return args


BLOCK_ROWS = [r for r in ROWS if r.get("preset") and r.get("kv_memory_gib", 0) > 0
              and ("kv_tokens" in r or "gpu_blocks" in r)]


@pytest.mark.parametrize("row", BLOCK_ROWS, ids=lambda r: r["link"].rsplit("/", 1)[-1])
def test_blocks_from_the_logged_pool_match_to_its_rounding(row: dict[str, Any]) -> None:
    # the log prints the pool to 0.01 GiB: the true pool lies within half of that
    def blocks(gib: float) -> int:
        doc = serve(*_args(row), "--kv-memory", str(int(gib * GIB)))
        return int(doc["kv_blocks"]["num_blocks"])

    logged = row.get("gpu_blocks") or row["kv_tokens"] // 16
    low, high = blocks(row["kv_memory_gib"] - 0.005), blocks(row["kv_memory_gib"] + 0.005)
    assert low <= logged <= high, (low, logged, high)


WEIGHT_ROWS = [r for r in ROWS if r.get("preset") and "weights_gib" in r
               and r["format"] in ("bf16", "mxfp4")]


@pytest.mark.parametrize("row", WEIGHT_ROWS, ids=lambda r: r["link"].rsplit("/", 1)[-1])
def test_weights_per_gpu_within_half_a_percent(row: dict[str, Any]) -> None:
    # "Model loading took" counts every tensor allocated at load, the rotary cos/sin cache
    # too: [max_position_embeddings, rotary_dim] in the model's dtype (vLLM's RotaryEmbedding
    # _compute_cos_sin_cache, one per GPU): 10.5 MB for Qwen3-0.6B (40,960 x 128 x 2 B)
    doc = serve(*_args(row))
    spec = json.loads(CliRunner().invoke(app, ["count", row["preset"], "--json"]).stdout)["spec"]
    rotary = spec["context"] * spec["head_dim"] * 2
    memory = doc["memory_per_gpu"]
    assert memory["buffers_bytes"] == rotary
    weights = (memory["weights_bytes"] + rotary) / GIB
    assert abs(weights - row["weights_gib"]) / row["weights_gib"] < 0.005, weights
