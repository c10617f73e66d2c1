"""--vllm-log: a vLLM start-up log's figures beside specsheet's, then the plan with the log's
measured terms (tests/data/vllm_logs/*.log, each with its link in its first line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from specsheet.cli.app import app

LOGS = Path(__file__).parent / "data" / "vllm_logs"
GIB = 2**30


def serve(*args: str) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc, result.stderr


def figures(doc: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    return {f["name"]: (f["log"], f["specsheet"], f["difference"])
            for f in doc["calibration"]["figures"]}


def test_a_v1_excerpt_calibrates_what_it_holds() -> None:
    log = str(LOGS / "qwen3-0.6b-a100.log")
    doc, stderr = serve("qwen3-0.6b", "--gpu", "a100-80gb-sxm", "--vllm-log", log)
    assert stderr == "" and doc["calibration"]["source"] == log
    got = figures(doc)
    assert set(got) == {"weights_bytes", "kv_pool_bytes", "kv_tokens", "max_concurrency"}
    # max_model_len from "Maximum concurrency for 4,096 tokens"; the pool is the log's
    assert doc["request"]["max_model_len"] == 4096
    assert doc["memory_per_gpu"]["kv_pool_bytes"] == round(69.66 * GIB)
    # 69.66 GiB is printed to 0.01 GiB: 652,144 tokens (40,759 blocks of 16) lies within it
    # (tests/test_vllm_logs.py); from the printed figure itself, 2 blocks more
    assert got["kv_tokens"] == (652_144, 652_176, 32)
    assert got["max_concurrency"][:2] == (159.21, 159.22)


def test_a_v0_block_gives_its_settings_and_measured_terms() -> None:
    doc, _ = serve("llama2-7b", "--gpu", "h100-sxm", "--vllm-log",
                   str(LOGS / "llama2-7b-v0.log"))
    got = figures(doc)
    assert got["num_blocks"] == (7191, 7191, 0)  # 56.18 GiB // 8 MiB a block
    memory = doc["memory_per_gpu"]
    # the plan runs on the measured terms: activation 2.38 GiB, non-torch 0.16 GiB
    assert memory["activation_bytes"] == round(2.38 * GIB)
    assert memory["overhead_bytes"] == round(0.16 * GIB)
    # the predicted pool (datasheet capacity, estimated terms) within 3% of the log's
    log, ours, _ = got["kv_pool_bytes"]
    assert abs(ours - log) / log < 0.03
    assert abs(got["weights_bytes"][2]) / got["weights_bytes"][0] < 0.005


def test_the_multi_line_v0_block_predicted_pool_within_three_percent() -> None:
    doc, _ = serve("llama3-8b", "--gpu", "h100-sxm", "--vllm-log",
                   str(LOGS / "llama3-8b-v0.log"))
    got = figures(doc)
    assert got["capacity_bytes"][0] == round(79.22 * GIB)
    log, ours, _ = got["kv_pool_bytes"]
    assert abs(ours - log) / log < 0.03  # +2.6%
    assert doc["request"]["memory_utilization"] is None  # the pool is the log's


def test_an_unreadable_line_is_named_in_one_note(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("INFO Available KV cache memory: lots\n"
                   "INFO GPU KV cache size: 652,144 tokens\n", encoding="utf-8")
    doc, stderr = serve("qwen3-0.6b", "--gpu", "a100-80gb-sxm", "--kv-memory", "69.66GiB",
                        "--max-model-len", "4096", "--vllm-log", str(log))
    assert stderr.count("specsheet: note:") == 1
    assert "'INFO Available KV cache memory: lots'" in stderr
    assert figures(doc)["kv_tokens"][0] == 652_144


def test_a_log_line_table_and_its_80_columns() -> None:
    result = CliRunner().invoke(app, ["serve", "llama2-7b", "--gpu", "h100-sxm", "--vllm-log",
                                      str(LOGS / "llama2-7b-v0.log")], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert "Calibration against" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
