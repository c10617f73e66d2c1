"""Tables never lose a figure: at 40, 80, 120 and 160 columns every figure of the JSON document
appears whole in the text (stacked when the table cannot fit), and nothing is cut with '…'."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.units import exact, human_bytes, human_count, human_flops

WIDTHS = [40, 80, 120, 160]
MODELS = ["gpt2-small", "llama3-70b", "deepseek-v3", "mixtral-8x7b", "gemma2-9b", "opt-350m"]


def run(args: list[str], width: int | str) -> tuple[str, dict[str, Any]]:
    runner = CliRunner(env={"COLUMNS": str(width)})
    table = runner.invoke(app, args)
    assert table.exit_code in (0, 1), table.stderr
    document = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    return table.stdout, document


def count_figures(doc: dict[str, Any]) -> list[str]:
    """The exact integers a count table shows."""
    p, kv, fl = doc["params"], doc["kv_cache"], doc["flops"]
    figures = [p["total"], p["non_embedding"], *p["components"].values(), *p["per_block"].values(),
               doc["memory"]["weights_bytes"], kv["bytes_per_token"], kv["bytes_per_request"],
               fl["forward_per_token"], fl["approx_2n_per_token"],
               *(v for k, v in fl["components"].items() if v or k != "embedding_projections")]
    if doc["spec"]["experts"]:
        figures.append(p["active"])
    return [exact(f) for f in figures]


def assert_whole(text: str, figures: list[str], width: int) -> None:
    assert "…" not in text  # rich's mark of a cut cell
    for figure in figures:
        assert figure in text, f"{figure} is missing at {width} columns"
    assert text.strip(), "nothing printed"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("model", MODELS)
def test_count(model: str, width: int) -> None:
    text, doc = run(["count", model], width)
    assert_whole(text, count_figures(doc), width)
    assert "Embeddings" in text and "Forward FLOPs per token" in text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("n", range(1, 7))
def test_compare(n: int, width: int) -> None:
    text, doc = run(["compare", *MODELS[:n]], width)
    figures = []
    for model in doc["models"]:
        figures += [human_count(model["params"]["total"]),
                    human_bytes(model["memory"]["weights_bytes"]),
                    human_bytes(model["kv_cache"]["bytes_per_request"]),
                    human_flops(model["flops"]["forward_per_token"])]
    assert_whole(text, figures, width)
    for label in ("Parameters", "Weights (bf16)", "KV cache per request", "Forward FLOPs"):
        assert label in text, f"row label {label!r} lost at {width} columns"
    for name in MODELS[:n]:
        assert name in text


@pytest.mark.parametrize("width", WIDTHS)
def test_check(width: int) -> None:
    args = ["check", "llama3-8b", "mixtral-8x7b", "--max-params", "8B", "--max-weights", "16GB",
            "--max-kv", "1GiB", "--max-flops", "20G"]
    text, doc = run(args, width)
    figures = [exact(c[key]) for m in doc["models"] for c in m["checks"] for key in
               ("value", "limit")]
    assert_whole(text, figures, width)
    assert text.count("OVER") == sum(not c["ok"] for m in doc["models"] for c in m["checks"])
    for label in ("Parameters", "Weights (bf16)", "KV cache per request (bf16)",
                  "Forward FLOPs per token"):
        assert label in text


@pytest.mark.parametrize("width", WIDTHS)
def test_presets(width: int) -> None:
    text, doc = run(["presets", "--long"], width)
    assert_whole(text, [exact(p["total"]) for p in doc["presets"]], width)
    assert all(p["name"] in text for p in doc["presets"])


@pytest.mark.parametrize("width", WIDTHS)
def test_presets_and_hardware_are_one_line_each(width: int) -> None:
    """The compact lists: a line a model (its name, total and context as tokens) at any width
    from 80 up; at 40 the table stacks, as every table does."""
    text, doc = run(["presets"], width)
    rows = [line for line in text.splitlines() if line.startswith(" ") and "──" not in line][1:]
    assert len(rows) == len(doc["presets"]) or width < 80
    assert all(p["name"] in text for p in doc["presets"])
    assert all(len(line) <= max(width, 80) for line in text.splitlines())
    if width >= 80:
        line = next(r for r in rows if r.split()[0] == "llama3.1-8b")
        assert line.split() == ["llama3.1-8b", "8.03B", "131,072", "llama3.1"]
    hardware, listed = run(["hardware"], width)
    if width >= 80:
        assert len(hardware.splitlines()) < len(listed["accelerators"]) + 12
        row = next(r for r in hardware.splitlines() if r.strip().startswith("h100-sxm "))
        assert row.split() == ["h100-sxm", "85.5", "GB", "3.35", "TB/s", "989", "TFLOP/s"]


@pytest.mark.parametrize("columns", ["0", "-5", "abc", "", "80.5"])
def test_a_width_that_is_not_one_means_80(columns: str) -> None:
    assert run(["count", "gpt2-small"], columns)[0] == run(["count", "gpt2-small"], 80)[0]


def test_a_table_drops_repeated_columns_then_stacks() -> None:
    args = ["check", "llama3-8b", "--max-weights", "16GB", "--max-kv", "1GiB"]
    wide, _ = run(args, 160)
    assert ["Weights", "(bf16)", "16.1", "GB", "16.0", "GB", "-60.5", "MB", "(-0.4%)", "OVER",
            "16,060,522,496", "16,000,000,000"] in [line.split() for line in wide.splitlines()]
    medium, _ = run(args, 80)  # the readable forms go; the exact integers and verdicts stay
    assert ["Weights", "(bf16)", "OVER", "16,060,522,496", "16,000,000,000"] in [
        line.split() for line in medium.splitlines()]
    narrow, _ = run(args, 40)
    assert "    Exact value: 16,060,522,496" in narrow
    for text, width in ((wide, 160), (medium, 80), (narrow, 40)):
        assert max(len(line) for line in text.splitlines()) <= width


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> str:
    from checkpoints import hf_tensors, small_config, spec_of, write_checkpoint

    config = small_config("mixtral-8x7b")
    folder = write_checkpoint(tmp_path_factory.mktemp("ckpt") / "mixtral", config,
                              hf_tensors("mixtral", spec_of(config)))
    return str(folder)


@pytest.mark.parametrize("width", WIDTHS)
def test_inspect(checkpoint: str, width: int) -> None:
    text, doc = run(["inspect", checkpoint], width)
    figures = [exact(doc["params"]["total"]), exact(doc["bytes"]["data"]),
               *(exact(v) for v in doc["params"]["components"].values() if v)]
    assert_whole(text, figures, width)
