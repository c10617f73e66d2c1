"""specsheet against real vLLM start-up logs (tests/data/vllm_logs.yaml, each row with its link
and the checks it names; the file's header says what each check asserts). Every row is tested:
a test below fails if a row names no check, or a check no test knows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from specsheet.cli.app import app

GIB = 2**30
DATA = Path(__file__).parent / "data"
ROWS: list[dict[str, Any]] = yaml.safe_load((DATA / "vllm_logs.yaml").read_text(encoding="utf-8"))
CHECKS = ("blocks", "rule", "weights", "pool", "verdict", "refusal", "gap")


def serve(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def rows(check: str) -> list[dict[str, Any]]:
    return [r for r in ROWS if check in r["checks"]]


def ident(row: dict[str, Any]) -> str:
    return str(row["link"]).rstrip("/").rsplit("/", 1)[-1]


def test_the_table_has_at_least_twelve_logs_each_with_its_link_and_checks() -> None:
    assert len(ROWS) >= 12
    for row in ROWS:
        assert str(row["link"]).startswith("https://github.com/")
        assert row["checks"] and set(row["checks"]) <= set(CHECKS), row["link"]
        # a row outside what specsheet claims says why; a row without a model is outside
        known = any(k in row for k in ("preset", "config"))
        assert known or row.get("outside"), row["link"]


def _model(row: dict[str, Any]) -> list[str]:
    if "config" in row:
        return [str(DATA / "vllm_logs" / row["config"])]
    return [row.get("preset") or row["stand_in"]]


def _args(row: dict[str, Any]) -> list[str]:
    args = [*_model(row), "--gpu", row.get("gpu", "h100-sxm"), "--tp", str(row.get("tp", 1))]
    if "max_model_len" in row:
        args += ["--max-model-len", str(row["max_model_len"])]
    if row.get("utilization"):
        args += ["--memory-utilization", str(row["utilization"])]
    if row.get("moe_kernel"):
        args += ["--moe-kernel", row["moe_kernel"]]
    if row.get("kv_dtype"):
        args += ["--kv-dtype", row["kv_dtype"]]
    if "stand_in" in row:  # the log's max_model_len exceeds the preset's context
        args += ["--allow-long-context"]
    return args + list(row.get("args", []))


def _kv(doc: dict[str, Any]) -> tuple[int, int, float]:
    k = doc["kv_blocks"]
    return k["num_blocks"], k["vllm_kv_tokens"], round(k["vllm_max_concurrency"], 2)


@pytest.mark.parametrize("row", rows("blocks"), ids=ident)
def test_blocks_tokens_and_concurrency_from_the_logged_pool_match_to_its_rounding(
        row: dict[str, Any]) -> None:
    if "kv_memory_bytes" in row:  # the log prints the pool in bytes
        pools = [row["kv_memory_bytes"]] * 2
        extra = ["--block-size", str(row["block_size"])]
    elif "blocks" in row:  # the pool the printed tokens imply, in whole blocks
        probe = serve(*_args(row), "--block-size", str(row["block_size"]), "--kv-memory", "1GiB")
        per_block = probe["kv_blocks"]["page_bytes"] * probe["kv_blocks"]["layers_per_group"]
        pools = [row["blocks"] * per_block] * 2
        extra = ["--block-size", str(row["block_size"])]
    else:  # the log prints the pool to 0.01 GiB: the true pool lies within half of that
        pools = [int((row["kv_memory_gib"] + d) * GIB) for d in (-0.005, 0.005)]
        extra = []
    low, high = (_kv(serve(*_args(row), *extra, "--kv-memory", str(p))) for p in pools)
    for i, name in enumerate(("gpu_blocks", "kv_tokens", "concurrency")):
        if name in row:
            assert low[i] <= row[name] <= high[i], (name, low[i], row[name], high[i])


@pytest.mark.parametrize("row", rows("rule"), ids=ident)
def test_tokens_and_concurrency_follow_from_the_blocks_as_vllm_derives_them(
        row: dict[str, Any]) -> None:
    # one full-attention group of 16-token blocks: tokens = blocks x 16, concurrency = blocks /
    # cdiv(max_model_len, 16). Llama 3.1 8B stands in: 32 layers of 16 x 8 x 256 x 2 bytes
    blocks = row["kv_tokens"] // 16
    doc = serve("llama3.1-8b", "--gpu", "h100-sxm", "--max-model-len", str(row["max_model_len"]),
                "--kv-memory", str(blocks * 16 * 8 * 256 * 2 * 32))
    assert _kv(doc) == (blocks, row["kv_tokens"], row["concurrency"])


@pytest.mark.parametrize("row", rows("weights"), ids=ident)
def test_weights_per_gpu_within_half_a_percent(row: dict[str, Any]) -> None:
    # "Model loading took" / "Loading model weights took" counts what the load allocates: the
    # weights and the rotary cos/sin cache (memory_per_gpu.buffers_bytes, docs/serving.md)
    memory = serve(*_args(row))["memory_per_gpu"]
    loaded = (memory["weights_bytes"] + memory["buffers_bytes"]) / GIB
    assert abs(loaded - row["weights_gib"]) / row["weights_gib"] < 0.005, loaded


@pytest.mark.parametrize("row", rows("pool"), ids=ident)
def test_the_predicted_pool_within_three_percent(row: dict[str, Any]) -> None:
    # no log: CUDA's memory from the catalog (the datasheet's where it has none), the estimated
    # activation peak and overhead
    pool = serve(*_args(row))["memory_per_gpu"]["kv_pool_bytes"] / GIB
    assert abs(pool - row["kv_memory_gib"]) / row["kv_memory_gib"] < 0.03, pool


@pytest.mark.parametrize("row", rows("verdict"), ids=ident)
def test_what_the_engine_could_not_serve_does_not_fit(row: dict[str, Any]) -> None:
    given = row["kv_memory_gib"] > 0
    doc = serve(*_args(row), *(["--kv-memory", f"{row['kv_memory_gib']}GiB"] if given else []))
    assert doc["fit"]["verdict"] == "does_not_fit" and doc["max_concurrency"] == 0


@pytest.mark.parametrize("row", rows("refusal"), ids=ident)
def test_a_quantized_hybrid_is_refused_in_one_line(row: dict[str, Any]) -> None:
    quant = {"fp8": "fp8", "nvfp4": "nvfp4"}[row["format"]]
    result = CliRunner().invoke(app, ["serve", row["family_preset"], "--gpu", "h100-sxm",
                                      "--tp", "4", "--quant", quant])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "no quantized layout" in result.stderr
    # the log's tokens are vLLM >= 0.20's int(concurrency x max_model_len) (PR 40694)
    assert round(row["kv_tokens"] / row["max_model_len"], 2) == row["concurrency"]


def test_llama_405b_fp8_with_the_recipes_list_is_the_stated_gap(tmp_path: Path) -> None:
    row = next(r for r in ROWS if ident(r) == "6746")
    config = json.loads((DATA / "llama-3.1-405b.json").read_text(encoding="utf-8"))
    keep = [f"model.layers.{i}.self_attn.{p}_proj" for i in range(126) for p in "qkvo"]
    keep += [f"model.layers.{i}.mlp.{p}_proj" for i in (0, 125) for p in ("gate", "up", "down")]
    config["quantization_config"] = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
                                     "modules_to_not_convert": [*keep, "lm_head"]}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    doc = serve(str(tmp_path), "--gpu", "h100-sxm", "--tp", "8", "--max-model-len", "8192")
    assert doc["model"]["format"] == "fp8-channel"
    memory = doc["memory_per_gpu"]
    loaded = (memory["weights_bytes"] + memory["buffers_bytes"]) / GIB
    low, high = row["gap"]
    assert low < loaded / row["weights_gib"] - 1 < high, loaded


def test_deepseek_v2_lite_in_vllm_0_6_4_cached_padded_heads_not_the_latent() -> None:
    row = next(r for r in ROWS if ident(r) == "10927")
    pools = [int((row["kv_memory_gib"] + d) * GIB) for d in (-0.005, 0.005)]
    # 0.6.4's page: 16 tokens x 16 heads x (key + value) 256 wide x 2 bytes, 27 layers
    old = [p // (16 * 16 * 2 * 256 * 2) // 27 for p in pools]
    assert old[0] <= row["gpu_blocks"] <= old[1]
    assert round(row["gpu_blocks"] * 16 / 8192, 2) == row["concurrency"]
    # specsheet follows 0.14.1: the 576-value latent, whole on the GPU
    doc = serve(*_args(row), "--block-size", "16", "--kv-memory", str(pools[0]))
    assert doc["kv_blocks"]["num_blocks"] == pools[0] // (16 * 576 * 2) // 27


def test_r1_distill_qwen_14b_weights_are_the_stated_gap() -> None:
    row = next(r for r in ROWS if ident(r) == "13061")
    memory = serve(*_args(row))["memory_per_gpu"]
    # Qwen2.5-14B's 14,770,033,664 parameters, halved but for the norms, and the rotary cache
    assert memory["buffers_bytes"] == 131072 * 128 * 2
    loaded = (memory["weights_bytes"] + memory["buffers_bytes"]) / GIB
    low, high = row["gap"]
    assert low < loaded / row["weights_gib"] - 1 < high, loaded


def test_every_gap_row_has_its_test() -> None:
    assert {ident(r) for r in rows("gap")} == {"6746", "10927", "13061"}
