"""Fuzzed model files and specs through the CLI: exit 0 or 2, never a traceback or a hang;
and for any valid spec, the CLI's JSON is the library's figures."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import specs

from specsheet.figures import build_report
from specsheet.model.spec import INPUT_ONLY_FIELDS, REQUIRED_FIELDS, Model, ModelSpec
from specsheet.sources.fields import ALL_FIELDS
from specsheet.views.count import count_document as report_dict

FUZZ = settings(deadline=timedelta(seconds=5),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SCALARS = (st.none() | st.booleans() | st.integers(-(10**40), 10**40)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
STRUCTURES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.sampled_from(ALL_FIELDS) | st.text(max_size=10), children, max_size=8),
    max_leaves=40,
)


class Ran(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str


@functools.cache
def group() -> Any:
    """The specsheet command, built once (these tests run it thousands of times)."""
    import typer

    from specsheet.cli.app import app

    return typer.main.get_command(app)


def run_file(suffix: str, content: bytes, *args: str) -> Ran:
    """``specsheet count FILE ARGS`` in process, FILE holding ``content``; every way it can end
    is an exit code (an unforeseen exception is 70)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"model{suffix}"
        path.write_bytes(content)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = group().main(["count", str(path), *args], standalone_mode=False)
        return Ran(code, out.getvalue(), err.getvalue())


def assert_clean(result: Ran) -> None:
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    if result.exit_code == 2:
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1


@FUZZ
@given(st.binary(max_size=2000), st.sampled_from([".yaml", ".json", ".yml", ""]))
def test_random_bytes(content: bytes, suffix: str) -> None:
    assert_clean(run_file(suffix, content, "--json"))


@FUZZ
@given(STRUCTURES, st.sampled_from(["yaml", "json"]))
def test_random_structures(data: object, kind: str) -> None:
    if kind == "json":
        text = json.dumps(data)
    else:
        text = yaml.safe_dump(data, allow_unicode=True)
    assert_clean(run_file(f".{kind}", text.encode(), "--format", "csv"))


@FUZZ
@given(st.fixed_dictionaries({"layers": st.integers(-2, 10**6), "d_model": st.integers(-2, 4096),
                              "heads": st.integers(-2, 64), "vocab": st.integers(-2, 10**6),
                              "context": st.integers(-2, 10**7)},
                             optional={name: SCALARS for name in ALL_FIELDS
                                       if name not in REQUIRED_FIELDS}))
def test_random_presets(data: dict[str, Any]) -> None:
    assert_clean(run_file(".yaml", yaml.safe_dump(data).encode(), "--json"))


@FUZZ
@given(specs())
def test_the_cli_json_is_the_library_figures(spec: ModelSpec) -> None:
    fields = {k: v for k, v in spec.as_dict().items() if k not in INPUT_ONLY_FIELDS}
    result = run_file(".yaml", yaml.safe_dump({"name": "m", **fields}).encode(), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    expected = report_dict(build_report(Model("m", spec, "test")))
    for key in ("spec", "params", "memory", "kv_cache", "flops"):
        assert doc[key] == expected[key]


WORDS = st.sampled_from([
    "count", "compare", "check", "presets", "convert", "schema", "gpt2-small", "llama3-8b",
    "deepseek-v3", "gemma2-9b", "tiny", "--json", "--format", "csv", "markdown", "table",
    "--tokens", "8", "0", "--quant", "gguf-q4_k_m", "awq-int4", "--dtype", "int4", "--kv-dtype",
    "fp8", "--max-weights", "16GB", "--max-params", "1,024", "--max-kv", "1Gi", "--set",
    "layers=3", "experts=2", "--layers", "5", "--heads", "7", "--no-attn-bias", "--untied",
    "--group-size", "-1", "²", "hf:x/y", "./nothing.yaml", "-", "--", "--help",
]) | st.text(max_size=12)


@FUZZ
@given(args=st.lists(WORDS, max_size=8),
       encoding=st.sampled_from(["utf-8", "ascii", "cp1252", "latin-1", "utf-16"]),
       columns=st.sampled_from(["0", "-3", "abc", "1", "20", "40", "80", "200", ""]))
def test_random_command_lines_on_any_stream(args: list[str], encoding: str,
                                            columns: str) -> None:
    """Any command line, on a stdout and stderr of any encoding and a terminal of any width:
    an exit code of the contract, one line on stderr for bad input with an empty stdout, and
    output the stream can hold."""
    import io
    import sys

    import typer

    from specsheet.cli import streams
    from specsheet.cli.app import app

    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    err = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        patch.setenv("COLUMNS", columns)
        patch.chdir(folder)
        streams.prepare()
        code = typer.main.get_command(app).main(args, standalone_mode=False)
    out.flush()
    err.flush()
    stdout = out.buffer.getvalue().decode(encoding)  # type: ignore[attr-defined]
    stderr = err.buffer.getvalue().decode(encoding)  # type: ignore[attr-defined]
    assert code in (0, 1, 2), (code, stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    if code == 2 and "--help" not in args and args:
        assert stdout == "" and stderr.startswith("specsheet: error: ")
        assert stderr.count("\n") == 1, stderr
