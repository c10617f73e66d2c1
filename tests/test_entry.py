"""The command's entry point: the imports run with the cyclic collector paused, the command
with it running (docs/performance.md)."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

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
