"""specsheet sweep: each point's figures are count's at that point, the axes parse as written,
and the terminal shows a table and a chart that tell the same story."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.errors import SpecError
from specsheet.units import parse_series
from specsheet.views.schema import schema_text

runner = CliRunner()
GIB = 2**30


def invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result


def as_json(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(invoke(*args, "--json").stdout)
    jsonschema.Draft202012Validator(json.loads(schema_text())).validate(document)
    return document


def count(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(invoke("count", *args, "--json").stdout)
    return document


# ---- the done-when sweep ----------------------------------------------------------------------

def test_each_point_is_count_at_its_tokens() -> None:
    doc = as_json("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2")
    tokens = [1024 * 2**i for i in range(8)]
    assert doc["axes"] == [{"name": "tokens", "option": "--tokens", "values": tokens}]
    assert [p["at"] for p in doc["points"]] == [{"tokens": t} for t in tokens]
    for point in doc["points"]:
        assert point["report"] == count("llama3.1-8b", "--tokens", str(point["at"]["tokens"]))
    assert doc["batch"] == 1
    assert doc["gpu"] is None


def test_layer_types_given_to_set_is_one_value() -> None:
    """``--set layer_types=none,attention`` is the model's list, not a series of two one-layer
    lists (which stopped with an internal error, unhashable in the sweep's cache, or were
    refused as one entry for two layers): each point is count with the same --set."""
    for kinds in ("none,attention", "attention,attention"):
        setting = f"layer_types={kinds}"
        doc = as_json("sweep", "tiny", "--tokens", "1,2", "--set", setting)
        assert [a["name"] for a in doc["axes"]] == ["tokens"]
        for point in doc["points"]:
            assert point["report"] == count("tiny", "--set", setting, "--tokens",
                                            str(point["at"]["tokens"]))
        assert doc["points"][0]["report"]["spec"]["layer_types"] == kinds.split(",")


def serve(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(invoke("serve", *args, "--json").stdout)
    return document


def test_with_a_gpu_each_point_is_serve_at_its_tokens() -> None:
    """The done-when sweep: each point is serve with --max-model-len T (the requests the pool
    is sized for) and --concurrency 1 (the batch)."""
    doc = as_json("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm")
    tokens = [1024 * 2**i for i in range(8)]
    assert [p["at"] for p in doc["points"]] == [{"tokens": t} for t in tokens]
    assert doc["batch"] == 1
    assert doc["gpu"] == {"name": "h100-sxm", "label": "NVIDIA H100 SXM5 80GB",
                          "memory_bytes": 85_520_809_984}
    for i in (0, 3, 7):
        point = doc["points"][i]
        assert point["report"] == serve("llama3.1-8b", "--gpu", "h100-sxm", "--max-model-len",
                                        str(tokens[i]), "--concurrency", "1")
    memory = [p["report"]["memory_per_gpu"] for p in doc["points"]]
    # 128 KiB a token in whole blocks of 16 tokens: T x 128 KiB for these T
    assert [m["kv_bytes_per_request"] for m in memory] == [t * 128 * 1024 for t in tokens]
    assert {m["weights_bytes"] for m in memory} == {8_030_261_248 * 2}
    assert [p["report"]["max_concurrency"] for p in doc["points"]] == \
        [m["kv_pool_bytes"] // m["kv_bytes_per_request"] for m in memory]


def test_with_a_gpu_the_batch_is_the_concurrency_and_layouts_are_serves() -> None:
    doc = as_json("sweep", "llama3-8b", "--batch", "1,64", "--quant", "none,gptq-int4",
                  "--tokens", "8k", "--gpu", "h100-pcie", "--tp", "2",
                  "--memory-utilization", "0.85")
    for point in doc["points"]:
        at = point["at"]
        quant = ["--quant", at["quant"]] if at["quant"] else []
        assert point["report"] == serve("llama3-8b", "--gpu", "h100-pcie", "--tp", "2",
                                        "--memory-utilization", "0.85", "--max-model-len",
                                        "8192", "--concurrency", str(at["batch"]), *quant)
    assert doc["points"][1]["report"]["estimates"]["concurrency"] == 64
    assert doc["points"][0]["report"]["parallel"] == {"gpus": 2, "tp": 2, "pp": 1, "ep": 1,
                                                          "dp": 1, "dcp": 1}


def test_with_a_given_kv_pool_and_pipeline_stages() -> None:
    doc = as_json("sweep", "llama3.1-70b", "--tokens", "8k,32k", "--gpu", "h100-sxm",
                  "--pp", "2", "--tp", "4", "--kv-memory", "20GiB")
    for point in doc["points"]:
        assert point["report"] == serve("llama3.1-70b", "--gpu", "h100-sxm", "--pp", "2",
                                        "--tp", "4", "--kv-memory", "20GiB",
                                        "--max-model-len", str(point["at"]["tokens"]),
                                        "--concurrency", "1")
        assert point["report"]["memory_per_gpu"]["kv_pool_bytes"] == 20 * GIB


def test_a_point_that_does_not_fit_is_shown_not_an_error() -> None:
    """llama3.1-70b in bf16 (141 GB) on one H100: fits false at every point, exit 0."""
    doc = as_json("sweep", "llama3.1-70b", "--tokens", "8k,128k", "--gpu", "h100-sxm")
    assert [p["report"]["fits"] for p in doc["points"]] == [False, False]
    assert all(p["report"]["estimates"] is None for p in doc["points"])
    out = invoke("sweep", "llama3.1-70b", "--tokens", "8k,128k", "--gpu", "h100-sxm").stdout
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("8,192",
                                                                                  "131,072"))]
    assert [row[-2] for row in rows] == ["no", "no"]  # Fits, before the exact bytes
    assert "The batch fits at no point." in out


def test_a_batch_that_outgrows_the_pool_is_marked() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "8k:128k:x2", "--batch", "8",
                 "--gpu", "h100-sxm").stdout
    assert "Batch fits" in out and "KV of batch" in out
    # 54 requests of 8k fit, 3 of 128k: a batch of 8 fits up to 32k (13), not at 64k (6)
    assert "The batch fits up to tokens 32,768, not from 65,536 on." in out


@pytest.mark.parametrize("args", [["--tp", "2"], ["--gpus", "2"], ["--pp", "2"], ["--ep"],
                                  ["--kv-memory", "40GiB"], ["--memory-utilization", "0.8"]])
def test_serving_options_need_a_gpu(args: list[str]) -> None:
    result = runner.invoke(app, ["sweep", "llama3.1-8b", "--tokens", "1k:4k:x2", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"specsheet: error: option {args[0]}: plans serving, which needs "
                             "--gpu (an accelerator such as h100-sxm, or a hardware YAML "
                             "file)\n")


def test_a_layout_that_does_not_divide_is_serves_error() -> None:
    result = runner.invoke(app, ["sweep", "llama3.1-8b", "--tokens", "1k:4k:x2", "--gpu",
                                 "h100-sxm", "--tp", "3"])
    assert result.exit_code == 2
    assert result.stderr.startswith("specsheet: error: option --tp: 3 does not divide")
    assert result.stderr.count("\n") == 1


def test_the_default_memory_utilization_is_vllms() -> None:
    from specsheet.api.defaults import DEFAULT_UTILIZATION
    from specsheet.plan.serving import DEFAULT_MEMORY_UTILIZATION

    assert DEFAULT_UTILIZATION == DEFAULT_MEMORY_UTILIZATION


def test_the_kv_cache_outgrows_the_weights_at_128k() -> None:
    """llama3.1-8b in bf16: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 128 KiB a
    token, so 16 GiB at 131,072 tokens, against 8,030,261,248 × 2 bytes (15 GiB) of weights."""
    doc = as_json("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2")
    weights = 8_030_261_248 * 2
    kv = [p["report"]["kv_cache"]["bytes_per_request"] for p in doc["points"]]
    assert kv[-1] == 16 * GIB and kv[-2] == 8 * GIB
    assert all(p["report"]["memory"]["weights_bytes"] == weights for p in doc["points"])
    assert kv[-2] < weights < kv[-1]


def test_the_terminal_shows_the_points_and_a_chart_with_the_crossing() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2").stdout
    for tokens in ("1,024", "2,048", "65,536", "131,072"):
        assert f" {tokens} " in out
    assert "33,240,391,680" in out  # 16,060,522,496 of weights + 16 GiB of KV cache
    assert "51.7%" in out  # the KV share at 128k
    assert "outgrows the weights between tokens 65,536 and 131,072: 17.2 GB against 16.1 GB" \
        in out


def test_with_a_gpu_the_terminal_shows_per_gpu_figures_against_the_budget() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm").stdout
    assert "8 points over tokens, on 1 x h100-sxm" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if "yes" in line or " no " in line}
    assert len(rows) == 8
    # weights/GPU, KV/request, of budget, max requests, fits, weights + KV (B)
    assert rows["1,024"][1:] == ["16.1", "GB", "134", "MB", "24.1%", "433", "yes",
                                 "16,194,740,224"]
    assert rows["131,072"][1:] == ["16.1", "GB", "17.2", "GB", "46.4%", "3", "yes",
                                   "33,240,391,680"]
    assert "76.4 GB ┤" in out  # the line at the budget, 0.9 x CUDA's 84.9 GB, labelled on the axis
    assert "budget (0.9 x h100-sxm memory): 76.4 GB" in out
    assert "activation + overhead (estimates)" in out
    assert "outgrows the weights between tokens 65,536 and 131,072: 17.2 GB against 16.1 GB" \
        in out
    assert "The batch fits at every point." in out
    chart = out[out.index("weights + KV cache per GPU (1 x h100-sxm) against tokens"):]
    ticks = next(line for line in chart.splitlines() if "1k" in line and "128k" in line)
    assert ticks.split() == ["1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"]


@pytest.mark.parametrize("width", ["40", "80", "120"])
def test_the_chart_fits_narrow_terminals(width: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", width)
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm").stdout
    chart = out[out.index("weights + KV cache per GPU"):].splitlines()
    plot = [line for line in chart if "┤" in line or "│" in line]
    assert len(plot) == 16
    assert all(len(line) <= int(width) for line in plot)


def test_a_thousand_points_chart_in_columns_of_the_terminal() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "128:128000:+128", "--format",
                 "table").stdout
    assert "1,000 points over tokens" in out
    assert "128,000" in out
    assert all(len(line) <= 160 for line in out.splitlines())


def test_ascii_stdout_gets_an_ascii_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("specsheet.cli.streams.ascii_only", lambda: True)
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm").stdout
    assert out.isascii()
    assert "#######" in out and "=======" in out


# ---- other axes -------------------------------------------------------------------------------

def test_spec_field_axes_are_count_with_the_option() -> None:
    doc = as_json("sweep", "gpt2-small", "--d-model", "768,1536", "--layers", "12:24:+12")
    # as long as each other, the axes come in the order of the spec's fields
    assert [a["name"] for a in doc["axes"]] == ["layers", "d_model"]
    assert [p["at"] for p in doc["points"]] == [  # the first axis varies fastest
        {"layers": 12, "d_model": 768}, {"layers": 24, "d_model": 768},
        {"layers": 12, "d_model": 1536}, {"layers": 24, "d_model": 1536}]
    for point in doc["points"]:
        at = point["at"]
        assert point["report"] == count("gpt2-small", "--d-model", str(at["d_model"]),
                                        "--layers", str(at["layers"]))
    assert doc["points"][0]["report"]["params"]["total"] == 124_439_808


def test_set_takes_a_list_for_any_field() -> None:
    doc = as_json("sweep", "mixtral-8x7b", "--set", "experts_per_token=1,2", "--tokens", "4k")
    for point in doc["points"]:
        k = point["at"]["experts_per_token"]
        assert point["report"] == count("mixtral-8x7b", "--set", f"experts_per_token={k}",
                                        "--tokens", "4096")


def test_formats_and_batch_as_axes() -> None:
    doc = as_json("sweep", "llama3-8b", "--quant", "none,gptq-int4", "--batch", "1,8",
                  "--tokens", "8k")
    assert [a["name"] for a in doc["axes"]] == ["batch", "quant"]
    assert doc["batch"] is None
    assert [p["at"] for p in doc["points"]] == [
        {"batch": 1, "quant": None}, {"batch": 8, "quant": None},
        {"batch": 1, "quant": "gptq-int4"}, {"batch": 8, "quant": "gptq-int4"}]
    assert doc["points"][2]["report"] == count("llama3-8b", "--quant", "gptq-int4",
                                              "--tokens", "8192")
    assert doc["points"][0]["report"] == count("llama3-8b", "--tokens", "8192")


def test_dtype_lists() -> None:
    doc = as_json("sweep", "gpt2-small", "--dtype", "fp32,bf16,int8", "--kv-dtype", "fp8")
    assert [p["report"]["memory"]["weights_bytes"] for p in doc["points"]] == \
        [124_439_808 * 4, 124_439_808 * 2, 124_439_808]
    assert all(p["report"]["kv_cache"]["dtype"] == "fp8" for p in doc["points"])


def test_csv_has_a_row_per_point() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 8
    assert rows[0]["at.tokens"] == "1024" and rows[-1]["at.tokens"] == "131072"
    assert rows[-1]["kv_cache.bytes_per_request"] == str(16 * GIB)
    assert rows[-1]["batch"] == "1"


def test_markdown_has_the_table() -> None:
    out = invoke("sweep", "llama3.1-8b", "--tokens", "1k:4k:x2", "--format", "markdown").stdout
    assert out.startswith("**llama3.1-8b: 3 points over tokens**")
    assert "| 4,096 |" in out and "┤" not in out


def test_json_writes_a_point_per_line() -> None:
    out = invoke("sweep", "gpt2-small", "--tokens", "128:1024:+128", "--json").stdout
    lines = out.splitlines()
    assert sum(line.startswith('    {"at": ') for line in lines) == 8
    assert len(lines) < 20


# ---- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind", "values"), [
    ("1k:128k:x2", "tokens", [1024 * 2**i for i in range(8)]),
    ("1Ki:4Ki:*2", "tokens", [1024, 2048, 4096]),
    ("512:2048:+512", "count", [512, 1024, 1536, 2048]),
    ("512:2000:512", "count", [512, 1024, 1536]),  # stops at the last value not above STOP
    ("12,24,48", "count", [12, 24, 48]),
    ("48,12,12", "count", [48, 12]),  # in the order given, without repeats
    ("1:10:x1.5", "count", [1, 2, 3, 5, 7]),  # a fraction of a factor, rounded down
    ("7:7:x2", "count", [7]),
    ("1_024", "tokens", [1024]),
])
def test_series(text: str, kind: Any, values: list[int]) -> None:
    assert parse_series(text, kind, "--x") == values


@pytest.mark.parametrize(("text", "message"), [
    ("1k:128k:0", "the step 0 of '1k:128k:0' would never reach the stop"),
    ("1k:128k:-1k", "the step -1k"),
    ("1k:128k:x1", "the factor 1 of '1k:128k:x1' would never reach the stop"),
    ("1k:128k:x0.5", "expected a factor above 1"),
    ("128k:1k:x2", "stops (1,024) below where it starts (131,072)"),
    ("1:1M:+1", "'1:1M:+1' gives 1,048,576 points, more than 10,000; take a larger step "
                "(1:1M:+105)"),
    ("1:2:x1.00001", "gives 69,316 points, more than 10,000"),
    ("1k:2k", "is not a range"),
    ("0,1", "expected a positive integer, got '0'"),
    ("1,,2", "has an empty value"),
])
def test_bad_series(text: str, message: str) -> None:
    with pytest.raises(SpecError, match="^option --x: ") as error:
        parse_series(text, "tokens", "--x")
    assert message in str(error.value)


@pytest.mark.parametrize(("text", "tokens"), [("8k", 8192), ("8192", 8192), ("4_096", 4096),
                                              ("1.5k", 1536), ("2Ki", 2048)])
def test_count_reads_tokens_as_sweep_does(text: str, tokens: int) -> None:
    assert count("llama3-8b", "--tokens", text)["kv_cache"]["tokens"] == tokens


def test_tp_without_a_gpu_in_a_real_process() -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "specsheet", "sweep", "llama3.1-8b",
                             "--tokens", "1k:128k:x2", "--tp", "2"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == ("specsheet: error: option --tp: plans serving, which needs --gpu "
                             "(an accelerator such as h100-sxm, or a hardware YAML file)\n")


def test_with_a_gpu_a_hybrids_state_is_its_own_column_and_segment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Granite 4.0 H Tiny: 36 Mamba-2 layers' state, a page each per request whatever T (one
    page = 400 tokens of an attention layer, 819,200 bytes: tests/test_serving.py), beside the
    4 attention layers' KV; each point is serve's."""
    doc = as_json("sweep", "granite-4.0-h-tiny", "--tokens", "4k,64k", "--gpu", "h100-sxm")
    for point, tokens in zip(doc["points"], (4096, 65536), strict=True):
        assert point["report"] == serve("granite-4.0-h-tiny", "--gpu", "h100-sxm",
                                        "--max-model-len", str(tokens), "--concurrency", "1")
        memory = point["report"]["memory_per_gpu"]
        assert memory["state_bytes_per_request"] == 36 * 819_200
        blocks = -(-tokens // 400)
        assert memory["kv_bytes_per_request"] == (blocks + 9) * 4 * 819_200
    out = invoke("sweep", "granite-4.0-h-tiny", "--tokens", "4k:128k:x2", "--batch", "32",
                 "--gpu", "h100-sxm").stdout
    assert "░░ state (bf16, as vLLM keeps it, batch 32)" in out
    assert "▓▓ activation + overhead (estimates)" in out
    assert "blocks of 400 tokens" in out
    monkeypatch.setattr("specsheet.cli.streams.ascii_only", lambda: True)
    out = invoke("sweep", "granite-4.0-h-tiny", "--tokens", "4k:128k:x2", "--batch", "32",
                 "--gpu", "h100-sxm").stdout
    assert out.isascii()
    assert "~~ state" in out and "%% activation" in out and "~~~~~~~" in out


def test_an_axis_keeps_the_option_it_was_given_by() -> None:
    """layers has an option of its own; given by --set, the document and the errors say so."""
    by_option = json.loads(runner.invoke(app, ["sweep", "gpt2-small", "--layers", "12,24",
                                               "--json"]).stdout)
    by_set = json.loads(runner.invoke(app, ["sweep", "gpt2-small", "--set", "layers=12,24",
                                            "--json"]).stdout)
    assert by_option["axes"][0]["option"] == "--layers"
    assert by_set["axes"][0]["option"] == "--set layers"
    assert by_option["points"] == by_set["points"]
    bad = runner.invoke(app, ["sweep", "gpt2-small", "--set", "layers=12,0"])
    assert bad.exit_code == 2 and "option --set layers" in bad.stderr


@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_a_report_moved_along_the_tokens_is_the_report_at_them(kv_dtype: str) -> None:
    """plan/sweep.py recomputes only the terms that hold T (the KV positions, the attention
    over the context, the state-space scan): for every preset (sliding windows, MLA, Mamba,
    hybrids, DeltaNet) the moved report equals build_report at those tokens."""
    from specsheet.api.count import load
    from specsheet.figures import build_report, moved_to_tokens
    from specsheet.sources.presets import preset_index

    for name in preset_index():
        model = load(name)
        context = model.spec.context
        base = build_report(model, None, None, kv_dtype)
        for tokens in sorted({1, 3, min(4096, context), context // 3, context - 1, context} - {0}):
            assert moved_to_tokens(base, tokens) == build_report(model, tokens, None,
                                                                 kv_dtype), (name, tokens)
