"""Every example in a command's help runs: each 'specsheet ...' its docstring quotes (the text
``--help`` prints) that needs no file, folder or network exits 0 or 1 (a verdict), never 2
(bad input: an example the command refuses) or with an internal error."""

from __future__ import annotations

import re
import shlex
from importlib import import_module

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import COMMANDS, app

QUOTED = re.compile(r"'(specsheet [^']+)'")


def examples() -> list[list[str]]:
    """The arguments of each example that runs on its own: not ``explore`` (interactive),
    nor one that names a path, a Hub repository or a redirection."""
    found = []
    for name in COMMANDS:
        module = import_module(f"specsheet.cli.commands.{name}")
        text = " ".join((getattr(module, name).__doc__ or "").split())
        for example in QUOTED.findall(text):
            args = shlex.split(example)[1:]
            if args[0] == "explore" or any(
                    "/" in a or a.endswith((".gguf", ".json", ".yaml")) or a.startswith(
                        ("hf:", ">")) for a in args):
                continue
            found.append(args)
    return found


EXAMPLES = examples()


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 12  # count, compare, check, serve, plan, fit, train, sweep, ...
    assert ["sweep", "gpt2-small", "--d-model", "768:3072:x2", "--layers", "12,24,48",
            "--json"] in EXAMPLES


@pytest.mark.parametrize("args", EXAMPLES, ids=" ".join)
def test_an_example_in_the_help_runs(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
