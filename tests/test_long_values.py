"""A value of thousands of characters, in any option of any command: one line on stderr that
names the option and says the value back by its start and end with its length
(``errors.quoted``), never whole. Our messages quote values with ``quoted``; click's own (``'...'
is not a valid integer``) are cut at the one boundary (``cli/app.py``)."""

from __future__ import annotations

import subprocess

import pytest
from commands import SPECSHEET, clean_env
from test_numeric_options import RUNS
from typer.testing import CliRunner

from specsheet.cli.app import app, build_command
from specsheet.errors import quoted, shortened

runner = CliRunner()
LONG = "q" * 3000


def _valued(run: str) -> list[str]:
    """Every option of the run's command that takes a value."""
    return [p.opts[0] for p in build_command(RUNS[run][0][0]).params
            if type(p).__name__ == "TyperOption" and not getattr(p, "is_flag", False)]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_long_value_is_said_back_short(run: str) -> None:
    base, as_json = RUNS[run]
    options = _valued(run)
    assert len(options) >= 5, options
    for option in options:
        result = runner.invoke(app, [*base, option, LONG, *(["--json"] if as_json else [])])
        assert "q" * 200 not in result.stderr, (option, result.stderr[:300])
        assert "internal error" not in result.stderr, (option, result.stderr[:300])
        if result.exit_code != 0:
            assert result.exit_code == 2, (option, result.exit_code, result.stderr[:300])
            assert result.stdout == ""
            (line,) = result.stderr.splitlines()
            assert len(line) < 500, (option, line)


@pytest.mark.parametrize(("args", "line"), [
    (["count", "llama3-8b", "--dtype", LONG],
     "specsheet: error: option --dtype: unknown dtype 'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq..."
     "qqqqqqqqqqqqqqqqqqq' (3,000 characters); expected one of fp32, fp16, bf16, fp8, int8, "
     "int4"),
    (["count", "llama3-8b", "--layers", LONG],  # click's message, cut
     "specsheet: error: Invalid value for '--layers': '" + "q" * 89 + "..." + "q" * 39
     + "' is not a valid int. (3,052 characters) (see 'specsheet count --help')"),
    (["train", "llama3-8b", "--seq-len", "5q"],  # a message of ours, over 200 characters
     # with click's label, whole: only click's own messages are cut
     "specsheet: error: Invalid value for '--tokens' / '-t' / '--seq-len' / '-s': '5q' is not a "
     "quantity; expected an integer (1024 or 1_024), or a number with k or M as context lengths "
     "are named (binary: 4k = 4,096, 128k = 131,072, 1M = 1,048,576) (see 'specsheet train "
     "--help')"),
    (["count", "llama3-8b", "--tokens", LONG],  # ours, its value said short
     "specsheet: error: Invalid value for '--tokens' / '-t': '" + "q" * 39 + "..." + "q" * 19
     + "' (3,000 characters) is not a quantity; expected an integer (1024 or 1_024), or a number "
     "with k or M as context lengths are named (binary: 4k = 4,096, 128k = 131,072, 1M = "
     "1,048,576) (see 'specsheet count --help')"),
    (["count", "--hf", LONG + "/x"],  # a source too
     "specsheet: error: " + "q" * 120 + "..." + "q" * 58 + "/x (3,002 characters): expected "
     "a Hugging Face repository, ORG/NAME or ORG/NAME@REVISION (e.g. meta-llama/Llama-3.1-8B)"),
])
def test_in_a_real_process(args: list[str], line: str) -> None:
    result = subprocess.run([*SPECSHEET, *args], capture_output=True, text=True,
                            env=clean_env(), timeout=60, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line + "\n")


def test_quoted_and_shortened() -> None:
    """Short values as repr says them; a long one by its first 40 and last 20 characters of
    the quoted form, with the text's own length; any value, not only a text."""
    assert quoted("fp9") == "'fp9'"
    assert quoted("x" * 78) == repr("x" * 78)
    assert quoted("ab" * 50) == "'" + "ab" * 19 + "a..." + "b" + "ab" * 9 + "' (100 characters)"
    assert quoted(list(range(40))).endswith("37, 38, 39] (150 characters)")
    assert quoted(2.5) == "2.5"
    assert shortened("x" * 200, head=120, tail=60) == "x" * 200
    assert shortened("x" * 201, head=120, tail=60) == ("x" * 120 + "..." + "x" * 60
                                                       + " (201 characters)")
