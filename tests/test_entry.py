"""The command's entry point: the imports run with the cyclic collector paused, the command
with it running (docs/performance.md)."""

from __future__ import annotations

import gc
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from specsheet.cli import app, entry

ROOT = Path(__file__).resolve().parent.parent


def test_the_command_runs_with_the_collector_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    frozen: list[int] = []
    monkeypatch.setattr(app, "main", lambda: seen.append(gc.isenabled()))
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))  # keep the test process's
    entry.main()
    assert seen == [True] and frozen == [1] and gc.isenabled()


def test_the_console_script_and_python_m_use_it(tmp_path: Path) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '[project.scripts]\nspecsheet = "specsheet.cli.entry:main"\n' in pyproject
    code = ("import gc, sys\n"
            "import specsheet.cli.app as app\n"
            "app.main = lambda: print(gc.isenabled(), gc.get_freeze_count() > 10000)\n"
            "sys.argv = ['specsheet']\n"
            "import runpy; runpy.run_module('specsheet', run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert out == "True True\n"


def _described(command: Any) -> list[tuple[Any, ...]]:
    """What a built command's parameters are: their names, flags, defaults, types and help."""
    return [(p.name, p.opts, p.secondary_opts, p.default, p.required, type(p.type),
             p.type.name, getattr(p.type, "func", None), getattr(p.type, "choices", None),
             getattr(p, "help", None), getattr(p, "hidden", False)) for p in command.params]


@pytest.mark.parametrize("name", sorted(app.COMMANDS))
def test_a_command_built_with_its_parameters_read_once_is_typers_own(name: str) -> None:
    """build_command serves typer's second reading of a command's parameters from its first:
    the command is the one typer builds reading them each time (every option's flags, default,
    type and help), and typer's reader is its own again afterwards."""
    import typer
    from typer.utils import get_params_from_function

    built = app.build_command(name)
    assert typer.main.get_params_from_function is get_params_from_function
    module = import_module(f"specsheet.cli.commands.{name}")
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                         rich_markup_mode=None)
    single.command(name=name, short_help=app.COMMANDS[name], **module.SETTINGS)(
        getattr(module, name))
    own = typer.main.get_command(single)
    assert _described(built) == _described(own)
    assert (built.help, built.epilog, built.short_help) == (own.help, own.epilog, own.short_help)
