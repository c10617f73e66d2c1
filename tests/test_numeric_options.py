"""Every numeric option of every command, given any number (issue 24): the answer is a strict
JSON document (no NaN, no Infinity), a check's exit 1, or one clear line with exit 2; never an
internal error, and never more than 1 GB of memory.

The options are read from the commands themselves (every option whose type is a number or a
token count), with the text options that take a number named in ``TEXT_NUMBERS``; a test
fails on any text option of a command that is in neither list, so an option added later is
run here too once it is classified."""

from __future__ import annotations

import json
import resource
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from specsheet.cli.app import COMMANDS, app, build_command

runner = CliRunner()

# click's number types, and the token counts' parser (8k, 8192)
NUMBER_TYPES = {"IntParamType", "FloatParamType", "IntRange", "FloatRange", "FuncParamType"}
# the text options that take a number: budgets, byte sizes, shares, prices, token totals,
# a sweep's series (one number is a series of one), llama.cpp's N|auto
TEXT_NUMBERS = {
    "--memory-utilization", "--price", "--kv-memory", "--max-params", "--max-weights",
    "--max-kv", "--max-flops", "--tokens-total", "--dataset-tokens", "--ctx", "--n-gpu-layers",
    "--host-memory", "--host-bandwidth", "--wired-limit", "--tensor-split", "--batch",
    "--gpus",  # plan's: a count or a range (1..8)
    "--kv-offload",
    "--max-ttft", "--max-tpot",  # seconds, or a number with ms or s
}
SERIES = {"--tokens", "--layers", "--d-model", "--heads", "--vocab", "--context", "--kv-heads",
          "--head-dim", "--d-ff"}  # sweep's, in its text
# the text options that take no number (names, files, choices, lists of names)
TEXT_OTHER = {
    "--quant", "--dtype", "--kv-dtype", "--format", "--svg", "--html", "--hf", "--mlp",
    "--norm", "--positions", "--set", "--gpu", "--text", "--tokenizer", "--engine",
    "--moe-kernel", "--vllm-log", "--cache-type-k", "--cache-type-v", "--flash-attn",
    "--split-mode", "--override-tensor", "--output-rule", "--recompute", "--recompute-modules",
    "--attention", "--precision", "--optimizer", "--schedule", "--offload", "--lora-targets",
    "--output", "--compare", "--activation-cache", "--optimizer-states", "--recipe",
    "--objective", "--solve", "--mamba-cache-mode",
    "--image-size",  # WIDTHxHEIGHT: two numbers in one word (tests/bad_inputs/cases.yaml)
    "--draft", "--speculative-method",
}
# each command's run: its arguments, and whether it writes JSON (--json) or text
RUNS: dict[str, tuple[list[str], bool]] = {
    "count": (["count", "llama3-8b"], True),
    "compare": (["compare", "llama3-8b", "gpt2-small", "--gpu", "h100-sxm"], True),
    "check": (["check", "llama3-8b", "--gpu", "h100-sxm", "--max-params", "1T"], True),
    "check --engine": (["check", "llama3-8b", "--engine", "llama.cpp", "--gpu", "rtx-4090",
                        "--min-ctx", "4k"], True),
    "serve": (["serve", "llama3-8b", "--gpu", "h100-sxm"], True),
    "train": (["train", "llama3-8b"], True),
    "sweep": (["sweep", "llama3-8b", "--batch", "1,2", "--gpu", "h100-sxm"], True),
    "fit": (["fit", "llama3-8b", "--gpu", "rtx-4090"], True),
    "convert": (["convert", "llama3-8b"], False),
    "explore": (["explore", "llama3-8b", "--print", "--gpu", "h100-sxm"], False),
    "plan": (["plan", "llama3-8b", "--gpu", "h100-sxm"], True),
}
# options a run leaves out: the ones of the other run of the same command
LEFT_OUT = {"check": {"--min-ctx", "--min-gpu-layers"},
            "check --engine": {"--min-concurrency", "--max-ttft", "--min-tokens-per-s",
                               "--gpus", "--tp", "--pp", "--concurrency", "--kv-memory",
                               "--max-params", "--max-weights", "--max-kv", "--max-flops"}}
NUMBERS = st.one_of(
    st.integers(min_value=-2, max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["5e-324", "1e308", "1e-300", "0", "-0.0", "1e400", "nan", "inf", "-inf",
                     "1k", "8k", "1e9", "123456789012345678901234567890"]),
)
GB = 2**30


def _options(command: str) -> list[tuple[str, str]]:
    """Every option of ``command``: (its name, its type's name)."""
    return [(p.opts[0], type(p.type).__name__) for p in build_command(command).params
            if type(p).__name__ == "TyperOption" and not getattr(p, "is_flag", False)]


@cache
def numeric(run: str) -> tuple[str, ...]:
    command = RUNS[run][0][0]
    names = [name for name, kind in _options(command)
             if kind in NUMBER_TYPES or name in TEXT_NUMBERS
             or (command == "sweep" and name in SERIES)]
    return tuple(n for n in names if n not in LEFT_OUT.get(run, set()))


def test_every_text_option_is_classified() -> None:
    """A text option of any command is a number (run below) or not: a new one must be put in
    one list or the other."""
    unknown = {(command, name) for command in COMMANDS for name, kind in _options(command)
               if kind == "StringParamType" and name not in TEXT_NUMBERS | TEXT_OTHER
               and not (command == "sweep" and name in SERIES)}
    assert not unknown, sorted(unknown)


def test_every_numeric_option_of_every_model_command_is_run() -> None:
    """Every command that takes a model is run, each with all its numeric options."""
    from specsheet.cli.model_source import GROUP_PARAMETERS  # noqa: F401 - the group exists

    taking = {c for c in COMMANDS if any(name == "--layers" for name, _ in _options(c))}
    assert taking == {run.split()[0] for run in RUNS}, taking
    for command in taking:
        kinds = dict(_options(command))
        runs = [r for r in RUNS if r.split()[0] == command]
        covered = set().union(*(numeric(r) for r in runs))
        wanted = {n for n, k in kinds.items() if k in NUMBER_TYPES or n in TEXT_NUMBERS}
        assert wanted <= covered, (command, wanted - covered)
    assert {"--ctx", "--n-gpu-layers", "--parallel", "--n-cpu-moe", "--ubatch-size",
            "--host-memory", "--timeout"} <= set(numeric("fit"))


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@given(run=st.sampled_from(sorted(RUNS)), data=st.data())
def test_any_number_in_any_numeric_option(run: str, data: st.DataObject) -> None:
    base, as_json = RUNS[run]
    chosen = data.draw(st.lists(st.sampled_from(numeric(run)), min_size=1, max_size=2,
                                unique=True))
    args = [*base]
    for option in chosen:
        args += [option, data.draw(NUMBERS)]
    result = runner.invoke(app, [*args, *(["--json"] if as_json else [])])
    assert "internal error" not in result.stderr, (args, result.stderr)
    assert result.exit_code in (0, 1, 2), (args, result.stderr)
    if result.exit_code == 2:
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, (args, result.stderr)
    elif as_json:
        _strict(result.stdout)
    else:  # convert's YAML, explore's first screen: a total stated
        assert "parameters" in result.stdout, (args, result.stdout)
        assert "nan" not in result.stdout.lower().split(), (args, result.stdout)
    # ru_maxrss is in KiB on Linux: the whole test process, every example so far
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < GB


@pytest.mark.parametrize("run", sorted(RUNS))
def test_each_run_answers_as_given(run: str) -> None:
    """The runs themselves answer (so an example's refusal is its number's)."""
    base, as_json = RUNS[run]
    result = runner.invoke(app, [*base, *(["--json"] if as_json else [])])
    assert result.exit_code == 0, (run, result.stderr)
