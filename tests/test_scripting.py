"""The scripting contract, through the installed command with pipes (no terminal)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest
from commands import ROOT, shell, specsheet

ANSI = "\x1b["


class Ran(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def in_process(*args: str) -> Ran:
    """specsheet ARGS through CliRunner, shaped like a finished process."""
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    result = CliRunner(env={"FORCE_COLOR": None}).invoke(app, list(args))
    return Ran(result.exit_code, result.stdout, result.stderr)


# ---- formats ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["count", "gpt2-small"], ["compare", "gpt2-small", "tiny"],
                                     ["presets"], ["check", "tiny", "--max-params", "8k"]])
def test_every_format_parses(command: list[str]) -> None:
    """In process (the streams are tested as real processes in test_contract.py)."""
    as_json = in_process(*command, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    assert doc["schema_version"] == 1
    assert json.loads(in_process(*command, "--json").stdout) == doc

    as_csv = in_process(*command, "--format", "csv")
    assert as_csv.returncode == 0, as_csv.stderr
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert rows and all(len(row) == len(rows[0]) for row in rows)

    as_md = in_process(*command, "--format", "markdown")
    assert as_md.returncode == 0, as_md.stderr
    first = as_md.stdout.split("\n\n**")[0]  # the first table of the document
    table = [line for line in first.splitlines() if line.startswith("|")]
    assert len(table) >= 3
    assert re.fullmatch(r"\|(:?-{3}:?\|)+", table[1])
    assert all(line.count("|") - line.count("\\|") == table[0].count("|") for line in table)
    for output in (as_json, as_csv, as_md):
        assert ANSI not in output.stdout and output.stderr == ""


def test_csv_columns_are_the_json_leaves_with_exact_integers() -> None:
    doc = json.loads(specsheet("compare", "llama3-8b", "gpt2-small", "--json").stdout)
    rows = list(csv.DictReader(io.StringIO(
        specsheet("compare", "llama3-8b", "gpt2-small", "--format", "csv").stdout)))
    assert [row["name"] for row in rows] == ["llama3-8b", "gpt2-small"]
    assert list(rows[0])[:3] == ["schema_version", "name", "published_total"]
    # free text (which may hold commas) comes after every figure; lists are JSON
    assert list(rows[0])[-3:] == ["description", "origin", "reference"]
    assert json.loads(rows[0]["spec.dense_layers"]) == []
    for row, model in zip(rows, doc["models"], strict=True):
        assert int(row["params.total"]) == model["params"]["total"]
        assert int(row["kv_cache.bytes_per_request"]) == model["kv_cache"]["bytes_per_request"]
        assert int(row["params.components.output_head"]) == model["params"]["components"][
            "output_head"]
        assert row["spec.tied_embeddings"] == str(model["spec"]["tied_embeddings"]).lower()
    # the same columns in the same order every time
    again = specsheet("count", "tiny", "--format", "csv").stdout.splitlines()[0]
    assert again.split(",") == list(rows[0])


def test_markdown_is_the_table_without_ansi() -> None:
    out = specsheet("count", "gpt2-small", "--format", "markdown", FORCE_COLOR="1").stdout
    assert ANSI not in out
    assert "| Embeddings | token + position | 39,383,808 | 31.6% |" in out
    assert "| **Total** | **sum of the parts** | **124,439,808** | **100.0%** |" in out


# ---- exit codes ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "code"), [
    (["--max-weights", "16GB"], 1),  # 16,060,522,496 bytes in bf16
    (["--max-weights", "17GB"], 0),
    (["--tokens", "8192", "--max-kv", "1GiB"], 0),  # exactly 1,073,741,824: equal holds
    (["--tokens", "8192", "--max-kv", "1GB"], 1),
    (["--max-params", "8030261248"], 0),  # exactly at the limit
    (["--max-params", "8030261247"], 1),  # one over
    (["--max-params", "8.1B", "--max-flops", "20G"], 0),
    (["--max-params", "9B", "--max-flops", "19G"], 1),  # 19.3 GFLOP at T = 8,192
    (["--max-weights", "16 gigs"], 2),
    (["--max-kv", "-1"], 2),
    (["--max-params", "8GB"], 2),
    ([], 2),  # no limit at all
])
def test_check_exit_codes(args: list[str], code: int) -> None:
    for fmt in ("table", "json"):
        result = specsheet("check", "llama3-8b", *args, "--format", fmt)
        assert result.returncode == code, result.stderr
        if code == 2:
            assert result.stdout == ""
            assert result.stderr.startswith("specsheet: error: ")
            assert result.stderr.count("\n") == 1
        elif fmt == "json":
            assert json.loads(result.stdout)["ok"] is (code == 0)


def test_check_reports_value_limit_and_margin() -> None:
    doc = json.loads(specsheet("check", "llama3-8b", "--max-weights", "16GB", "--json").stdout)
    assert doc["checks"] == [{"figure": "memory.weights_bytes", "option": "--max-weights",
                              "value": 16_060_522_496, "limit": 16_000_000_000,
                              "margin": -60_522_496, "ok": False}]
    assert doc["model"]["memory"]["weights_bytes"] == 16_060_522_496
    table = specsheet("check", "llama3-8b", "--max-weights", "16GB").stdout
    assert "16,060,522,496" in table and "OVER" in table and "-60.5 MB" in table


def test_check_takes_overrides_and_files(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text("layers: 2\nd_model: 16\nheads: 4\nvocab: 32\ncontext: 64\nnorm: none\n"
                    "attn_bias: false\nmlp_bias: false\n")
    assert specsheet("check", str(path), "--max-params", "7680").returncode == 0
    assert specsheet("check", str(path), "--max-params", "7680", "--layers", "3").returncode == 1


@pytest.mark.parametrize("args", [
    ["count", "nope"], ["count", "gpt2-small", "--format", "yaml"],
    ["compare", "gpt2-small", "nope", "--format", "csv"],
    ["count", "gpt2-small", "--json", "--format", "csv"],
    ["count", "gpt2-small", "--tokens", "x", "--format", "markdown"],
])
def test_errors_leave_stdout_empty_and_exit_2(args: list[str]) -> None:
    result = specsheet(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("specsheet: error: ") and "Traceback" not in result.stderr


# ---- terminals, colour and width --------------------------------------------------------------

def test_no_ansi_in_a_pipe_or_under_no_color() -> None:
    assert ANSI not in specsheet("count", "gpt2-small").stdout
    assert ANSI not in specsheet("count", "gpt2-small", NO_COLOR="1").stdout
    assert ANSI not in specsheet("count", "gpt2-small", NO_COLOR="1", FORCE_COLOR="1").stdout


def test_force_color_forces_styles_in_a_pipe() -> None:
    assert ANSI in specsheet("count", "gpt2-small", FORCE_COLOR="1").stdout


def test_a_compare_of_four_models_is_not_squeezed_in_a_log() -> None:
    models = ["gpt2-small", "gpt2-xl", "llama3-8b", "llama3-70b"]
    out = specsheet("compare", *models).stdout
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 160
    header = next(line for line in lines if line.strip().startswith("Figure"))
    assert all(name in header for name in models)  # every column on one line
    row = next(line for line in lines if "embeddings + output head" in line)
    assert len(re.findall(r"\d+\.\d%", row)) == 4  # no cell wrapped onto a second line


def test_columns_still_sets_the_width() -> None:
    out = specsheet("count", "gpt2-small", COLUMNS="100").stdout
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 100


# ---- the rest of the contract -----------------------------------------------------------------

def test_version_python_m_and_completion() -> None:
    from specsheet import __version__

    assert specsheet("--version").stdout == f"specsheet {__version__}\n"
    script = specsheet(_SPECSHEET_COMPLETE="source_bash")
    assert script.returncode == 0 and "_specsheet_completion" in script.stdout
    words = specsheet(_SPECSHEET_COMPLETE="complete_bash", COMP_WORDS="specsheet count llama3-",
                      COMP_CWORD="2")
    assert words.stdout.split() == ["llama3-70b", "llama3-8b"]


def test_the_roots_completion_options() -> None:
    """typer's --install-completion and --show-completion, built only for a line that starts
    with no command (SpecsheetGroup.parse_args), are where typer's add_completion puts them:
    in the help after --version, among the root's completions, in a mistyped option's hint."""
    help_text = specsheet("--help", COLUMNS="80").stdout
    assert re.search(r"\n  --version .*\n  --install-completion .*\n  --show-completion ",
                     help_text), help_text
    words = specsheet(_SPECSHEET_COMPLETE="complete_bash", COMP_WORDS="specsheet --",
                      COMP_CWORD="1")
    assert words.stdout.split() == ["--version", "--install-completion", "--show-completion",
                                    "--help"]
    # the root's option (the script it shows depends on the shell typer detects above pytest)
    assert "No such option" not in specsheet("--show-completion").stderr
    typo = specsheet("--install-complation")
    assert typo.returncode == 2 and typo.stdout == ""
    assert "(Possible options: --install-completion, --show-completion)" in typo.stderr
    after_a_command = specsheet("count", "gpt2-small", "--show-completion")
    assert after_a_command.returncode == 2
    assert "No such option: --show-completion" in after_a_command.stderr


def test_ci_snippet_runs_as_written(tmp_path: Path) -> None:
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- ci-snippet -->\n```sh\n(.*?)```", reference, re.DOTALL)
    assert snippet is not None, "docs/cli.md lost its CI snippet"
    summary = tmp_path / "summary.md"
    result = shell(snippet[1], cwd=tmp_path, GITHUB_STEP_SUMMARY=str(summary))
    assert result.returncode == 0, result.stderr
    assert b"all within budget" in result.stdout
    text = summary.read_text(encoding="utf-8")
    assert "| Figure | llama3-8b | llama3-70b |" in text
    assert ANSI not in text


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """specsheet ... | head: the command ends quietly when the pipe closes."""
    script = 'specsheet compare gpt2-small gpt2-xl llama3-8b llama3-70b --json | head -c 20'
    result = shell(script, cwd=tmp_path)
    assert result.stdout == b'{\n  "schema_version"'
    assert result.returncode == 0
    assert b"Traceback" not in result.stderr and b"Exception" not in result.stderr


def test_large_output_arrives_whole_through_a_pipe() -> None:
    """The early exit (os._exit after flushing) loses nothing."""
    result = specsheet("compare", "gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl",
                       "llama3-8b", "llama3-70b", "tiny", "--format", "csv")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 8
