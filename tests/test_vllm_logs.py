"""specsheet against real vLLM start-up logs (tests/data/vllm_logs.yaml, each row with its link
and the checks it names; the file's header says what each check asserts). Every row is tested:
a test below fails if a row names no check, or a check no test knows. docs/serving.md shows
every row with both numbers (``table``); a test keeps the two the same.

    python tests/test_vllm_logs.py      # prints the table
"""

from __future__ import annotations

import json
import sys
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
DOC = Path(__file__).parent.parent / "docs" / "serving.md"
BEGIN = "<!-- the vLLM logs table: python tests/test_vllm_logs.py -->"
END = "<!-- end of the vLLM logs table -->"


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
    # weights, the rotary cos/sin cache and the caching allocator's unsplit segment tails
    # (memory_per_gpu.buffers_bytes, docs/serving.md)
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


def test_llama_405b_fp8_as_first_published_held_16_kv_heads(tmp_path: Path) -> None:
    # the log loaded the config of July 2024 (16 KV heads); the Hub's is 8 since August (vLLM
    # issue 6689): the difference is one KV head's k and v projections on each of 8 GPUs, in
    # bf16 (attention is not converted), 126 layers of 2 x 128 x 16,384 x 2 bytes
    row = next(r for r in ROWS if ident(r) == "6746")
    assert row["kv_heads"] == 16
    first = DATA / "vllm_logs" / row["config"]
    config = json.loads((first / "config.json").read_text(encoding="utf-8"))
    assert config["num_key_value_heads"] == 16
    (tmp_path / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 8}),
                                          encoding="utf-8")
    then, now = (serve(str(m), *_args(row)[1:])["memory_per_gpu"] for m in (first, tmp_path))
    assert then["weights_bytes"] - now["weights_bytes"] == 126 * 2 * 128 * 16384 * 2


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


def test_r1_distill_qwen_14b_loads_the_allocators_segment_tails() -> None:
    # at tp 2 every layer's qkv_proj (35 MiB), o_proj (25 MiB), gate_up_proj (135 MiB) and
    # down_proj (67.5 MiB) gets a segment rounded up to 2 MiB whose tail of 1 MiB or less
    # the allocator does not split off: 3.5 MiB a layer, 48 layers (plan/allocator.py)
    row = next(r for r in ROWS if ident(r) == "13061")
    memory = serve(*_args(row))["memory_per_gpu"]
    assert memory["allocator_bytes"] == 48 * 7 * 2**19
    assert memory["buffers_bytes"] == 131072 * 128 * 2 + 48 * 7 * 2**19  # and the rotary cache
    # the predicted pool is the stated gap (the estimated overhead and the datasheet's memory)
    low, high = row["gap"]
    assert low < memory["kv_pool_bytes"] / GIB / row["kv_memory_gib"] - 1 < high


def test_every_gap_row_has_its_test() -> None:
    assert {ident(r) for r in rows("gap")} == {"10927", "13061"}


# ---- the table docs/serving.md shows ----------------------------------------------------------

def _pools(row: dict[str, Any]) -> list[int]:
    return [int((row["kv_memory_gib"] + d) * GIB) for d in (-0.005, 0.005)]


def _percent(ratio: float, places: int) -> str:
    text = f"{ratio * 100:+.{places}f}%"
    return text[1:] if float(text[:-1]) == 0 else text


def _span(low: float, high: float, fmt: str) -> str:
    a, b = format(low, fmt), format(high, fmt)
    return a if a == b else f"{a}-{b}"


def _figures(row: dict[str, Any]) -> list[str]:
    """The row's figures, the log's / specsheet's, as its checks compare them."""
    out: list[str] = []
    checks = row["checks"]
    known = any(k in row for k in ("preset", "config", "stand_in"))
    if "weights_gib" in row and known and "gap" not in checks or "weights" in checks:
        memory = serve(*_args(row))["memory_per_gpu"]
        loaded = (memory["weights_bytes"] + memory["buffers_bytes"]) / GIB
        out.append(f"weights {row['weights_gib']} / {loaded:.4f} "
                   f"({_percent(loaded / row['weights_gib'] - 1, 2)})")
    if "pool" in checks or "predicted pool" in row.get("outside", ""):
        pool = serve(*_args(row))["memory_per_gpu"]["kv_pool_bytes"] / GIB
        out.append(f"predicted pool {row['kv_memory_gib']} / {pool:.2f} "
                   f"({_percent(pool / row['kv_memory_gib'] - 1, 1)})")
    if "blocks" in checks:
        if "kv_memory_bytes" in row:  # the log prints the pool in bytes
            pools, extra = [row["kv_memory_bytes"]] * 2, ["--block-size", str(row["block_size"])]
        elif "blocks" in row:
            probe = serve(*_args(row), "--block-size", str(row["block_size"]),
                          "--kv-memory", "1GiB")
            per = probe["kv_blocks"]["page_bytes"] * probe["kv_blocks"]["layers_per_group"]
            pools, extra = [row["blocks"] * per] * 2, ["--block-size", str(row["block_size"])]
        else:
            pools, extra = _pools(row), []
        low, high = (_kv(serve(*_args(row), *extra, "--kv-memory", str(p))) for p in pools)
        for i, (name, fmt) in enumerate((("gpu_blocks", ","), ("kv_tokens", ","),
                                         ("concurrency", ".2f"))):
            if name in row:
                label = {"gpu_blocks": "blocks", "kv_tokens": "tokens"}.get(name, "concurrency")
                out.append(f"{label} {format(row[name], fmt)} / "
                           f"{_span(low[i], high[i], fmt)}")
    if "rule" in checks:
        out.append(f"tokens {row['kv_tokens']:,}, concurrency {row['concurrency']} from "
                   f"{row['kv_tokens'] // 16:,} blocks of 16 at {row['max_model_len']:,}")
    if "verdict" in checks:
        out.append(f"KV {row['kv_memory_gib']} GiB logged: does_not_fit")
    if "refusal" in checks:
        out.append(f"{row['format']} state layers: refused")
    if "gap" in checks and "gpu_blocks" in row:  # an engine older than the layout followed
        low, high = (_kv(serve(*_args(row), "--block-size", "16", "--kv-memory", str(p)))
                     for p in _pools(row))
        out.append(f"blocks {row['gpu_blocks']:,} / {_span(low[0], high[0], ',')} (the MLA "
                   f"latent, not {row['version']}'s padded heads)")
    if "gap" in checks and "weights" not in checks:
        memory = serve(*_args(row))["memory_per_gpu"]
        loaded = (memory["weights_bytes"] + memory["buffers_bytes"]) / GIB
        out.append(f"weights {row['weights_gib']} / {loaded:.4f} "
                   f"({_percent(loaded / row['weights_gib'] - 1, 2)})")
    return out


def _label(row: dict[str, Any]) -> str:
    owner_repo = str(row["link"]).split("github.com/", 1)[1].split("/")
    where = "vllm" if owner_repo[:2] == ["vllm-project", "vllm"] else owner_repo[1]
    return f"{where} {ident(row)}" + (f" ({row['version']})" if "version" in row else "")


def table() -> str:
    lines = ["| log | model, GPU, tp | checked | log / specsheet (GiB) |", "|---|---|---|---|"]
    for row in ROWS:
        model = ", ".join(str(x) for x in (row["model"], row.get("gpu"), row.get("tp"))
                          if x is not None)
        checks = ", ".join(row["checks"]) + (" (outside)" if row.get("outside") else "")
        lines.append(f"| {_label(row)} | {model} | {checks} | {'; '.join(_figures(row))} |")
    return "\n".join(lines)


def test_docs_show_every_log_with_both_numbers() -> None:
    text = DOC.read_text("utf-8")
    shown = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    assert shown == table(), "run: python tests/test_vllm_logs.py and paste into docs/serving.md"


if __name__ == "__main__":
    sys.stdout.write(table() + "\n")
