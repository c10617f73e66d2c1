"""Outputs that cannot lose data (issue 24): a CSV holds every JSON leaf of every row, whatever
row first has it (over every preset and format: tests/test_csv_leaves.py); JSON never holds NaN
or Infinity; check --json lists every failing check at the top level."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.sources.presets import preset_index

runner = CliRunner()


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def test_a_field_only_a_later_row_has_is_kept() -> None:
    """granite-4.0-h-tiny's 36 Mamba-2 layers, after llama3-8b which has none (the issue)."""
    text = _run("compare", "llama3-8b", "granite-4.0-h-tiny", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["kv_cache.layers_by_kind.mamba2"] == ""
    assert rows[1]["kv_cache.layers_by_kind.mamba2"] == "36"


def test_check_json_lists_every_failure_at_the_top() -> None:
    """The issue: a serving limit failed, and the top said "checks": [] and nothing else."""
    result = runner.invoke(app, ["check", "llama3.1-8b", "--gpu", "h100-sxm",
                                 "--min-concurrency", "10", "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False
    assert document["checks"] == []
    # 131,072 tokens: 17,179,869,184 KV bytes a request; the pool of 58.7 GB holds 3
    assert document["failed"] == [{"model": "llama3.1-8b", "figure": "max_concurrency",
                                   "option": "--min-concurrency", "value": 3, "limit": 10,
                                   "ok": False}]
    many = json.loads(runner.invoke(app, ["check", "gpt2-small", "llama3-8b", "--max-params",
                                          "1B", "--json"]).stdout)
    assert [(f["model"], f["figure"]) for f in many["failed"]] == [("llama3-8b", "params.total")]
    fine = json.loads(runner.invoke(app, ["check", "gpt2-small", "--max-params", "1B",
                                          "--json"]).stdout)
    assert fine["failed"] == []


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@pytest.mark.parametrize("args", [
    ["train", "llama3-8b", "--mfu", "5e-324"],
    ["train", "llama3-8b", "--price", "1e308"],
    ["serve", "llama3-8b", "--gpu", "h100-sxm", "--mfu", "5e-324"],
    ["serve", "llama3-8b", "--gpu", "h100-sxm", "--price", "1e308"],
    ["serve", "llama3-8b", "--gpu", "h100-sxm", "--mbu", "5e-324"],
])
@pytest.mark.parametrize("fmt", [["--json"], []])
def test_a_result_that_is_not_finite_is_an_error_naming_its_option(args: list[str],
                                                                   fmt: list[str]) -> None:
    result = runner.invoke(app, [*args, *fmt])
    if result.exit_code == 0:  # an answer, then a finite one
        assert _finite(json.loads(result.stdout)) if fmt else True
        return
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("specsheet: error: ")
    assert args[-2] in line, line


def _swept(where: str, value: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A sweep's document of two points and its CSV rows (as the sweep command makes them),
    with ``value`` at ``where``: a point's report (points.1.report.flops.share), the
    document's head (gpu.share) or a list in a point (points.0.report.list)."""
    shared = {"total": 10, "name": "x"}
    points = [{"at": {"tokens": t}, "report": {"spec": shared, "list": [1.5, 2],
                                                 "flops": {"tokens": t, "share": 0.5}}}
              for t in (1, 2)]
    document: dict[str, Any] = {"schema_version": 1, "gpu": {"share": 0.5}, "points": points}
    if where == "points.1.report.flops.share":
        points[1]["report"]["flops"]["share"] = value
    elif where == "gpu.share":
        document["gpu"]["share"] = value
    else:
        points[0]["report"]["list"] = [value]
    rows = [{"at": p["at"], "batch": 1, **p["report"]} for p in points]
    return document, rows


@pytest.mark.parametrize("where", ["points.1.report.flops.share", "gpu.share",
                                   "points.0.report.list.0"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_sweeps_csv_that_is_not_finite_is_an_error_naming_its_figure(
        where: str, value: float, capsys: pytest.CaptureFixture[str]) -> None:
    """CSV checks a sweep's points as it writes their rows (render.text.to_csv refuses a
    number that is not finite) and the rest of the document before: the same error as a
    walk of the whole document, nothing written."""
    from specsheet.cli.options import emit
    from specsheet.errors import SpecError

    document, rows = _swept(where, value)
    with pytest.raises(SpecError) as raised:
        emit("csv", document, rows, list, lines_of="points", inputs={"--x": "1e308"})
    kind = "not a number" if math.isnan(value) else "infinite"
    assert str(raised.value).startswith(f"{where} comes out {kind} with --x 1e308: ")
    assert capsys.readouterr().out == ""
    finite, rows = _swept(where, 0.25)
    emit("csv", finite, rows, list, lines_of="points")
    assert capsys.readouterr().out.splitlines() == [
        "at.tokens,batch,spec.total,spec.name,list,flops.tokens,flops.share",
        "1,1,10,x," + ("[0.25]" if where.endswith("list.0") else '"[1.5, 2]"') + ",1,0.5",
        "2,1,10,x,\"[1.5, 2]\",2," + ("0.25" if where.startswith("points.1") else "0.5")]


def _under_1gb(*args: str) -> Any:
    """specsheet in a real process that may not map more than 1 GB."""
    import resource
    import subprocess

    from commands import SPECSHEET, clean_env

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    return subprocess.run([*SPECSHEET, *args], capture_output=True, text=True, env=clean_env(),
                          timeout=60, check=False, preexec_fn=limit)


def test_work_per_layer_is_bounded_before_it_starts(tmp_path: Any) -> None:
    """serve --set layers=1000000 grew until the machine ran out; an inspection of a header
    whose config declares 10^9 layers too. Both refuse in a process held to 1 GB, naming the
    cap; count answers any number of layers."""
    import struct

    result = _under_1gb("serve", "llama3-8b", "--gpu", "h100-sxm", "--set", "layers=1000000")
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("specsheet: error: layers: llama3-8b has 1,000,000 layers; a "
                             "serving plan walks the layers one by one and takes at most "
                             "10,000 (count answers any number)\n")
    config = json.loads((Path(__file__).parent / "data" / "llama-3.1-8b.json").read_text())
    config["num_hidden_layers"] = 10**9
    (tmp_path / "config.json").write_text(json.dumps(config))
    size = 128256 * 4096 * 2
    header = json.dumps({"model.embed_tokens.weight": {
        "dtype": "BF16", "shape": [128256, 4096], "data_offsets": [0, size]}}).encode()
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(struct.pack("<Q", len(header)) + header)
    os.truncate(weights, 8 + len(header) + size)  # sparse: the reader reads headers only
    inspected = _under_1gb("inspect", str(tmp_path))
    assert inspected.returncode == 2, inspected.stderr
    assert "declares 1,000,000,000 layers; an inspection checks the tensors layer by layer " \
        "and takes at most 10,000" in inspected.stderr
    counted = _under_1gb("count", "llama3-8b", "--set", "layers=1000000000", "--json")
    assert counted.returncode == 0, counted.stderr
    # 10^9 blocks of 218,112,000 and the two embedding matrices and the final norm
    assert json.loads(counted.stdout)["params"]["total"] == \
        10**9 * 218_112_000 + 2 * 525_336_576 + 4096


def test_the_issues_examples_in_real_processes(tmp_path: Any) -> None:
    """Each example of issue 24 as a user meets it: exit code, stderr line and stdout."""
    from commands import specsheet

    # compare at one length: both at 8,192 tokens, KV 1,207,959,552 / 1,073,741,824 = 1.125x
    # (Qwen3 8B: 36 layers x 8 KV heads x 128 x 2 x 2 bytes = 147,456 a token; it read 5.62x)
    compared = specsheet("compare", "llama3-8b", "qwen3-8b", "--json")
    assert compared.returncode == 0 and compared.stderr == ""
    kv = [m["kv_cache"]["bytes_per_request"] for m in json.loads(compared.stdout)["models"]]
    assert kv == [1_073_741_824, 36 * 8 * 128 * 2 * 2 * 8192]
    # check --gpu --json lists its serving failure at the top
    checked = specsheet("check", "llama3.1-8b", "--gpu", "h100-sxm", "--min-concurrency", "10",
                        "--json")
    assert checked.returncode == 1 and checked.stderr == ""
    assert [f["figure"] for f in json.loads(checked.stdout)["failed"]] == ["max_concurrency"]
    # the CSV keeps granite's Mamba-2 layers
    csv_run = specsheet("compare", "llama3-8b", "granite-4.0-h-tiny", "--format", "csv")
    assert csv_run.returncode == 0
    rows = list(csv.DictReader(io.StringIO(csv_run.stdout)))
    assert [r["kv_cache.layers_by_kind.mamba2"] for r in rows] == ["", "36"]
    # train --mfu 5e-324: no Infinity, one line naming the option
    infinite = specsheet("train", "llama3-8b", "--mfu", "5e-324", "--json")
    assert (infinite.returncode, infinite.stdout) == (2, "")
    assert infinite.stderr == ("specsheet: error: time.seconds comes out infinite with --mfu "
                               "5e-324: give values nearer real ones (an efficiency far from 0, "
                               "a price far below 10^308)\n")
    # a file name too long for the file system
    long_name = specsheet("count", "a" * 300 + ".yaml")
    assert (long_name.returncode, long_name.stdout) == (2, "")
    assert long_name.stderr.endswith("(305 characters): File name too long\n")
    # presets at 80 columns: a line a model (530 stacked lines before)
    listed = specsheet("presets", COLUMNS="80")
    assert listed.returncode == 0
    # the title, a blank line, the header and its rule, the rows, a blank line, two of footnote
    assert len(listed.stdout.splitlines()) == len(preset_index()) + 7
