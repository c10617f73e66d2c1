"""How the tests start specsheet as a real process: the installed command when it is on PATH,
else ``python -m specsheet`` (never a silent skip)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

_INSTALLED = shutil.which("specsheet")
SPECSHEET: list[str] = [_INSTALLED] if _INSTALLED else [sys.executable, "-m", "specsheet"]
ROOT = Path(__file__).resolve().parent.parent


def clean_env(**env: str | None) -> dict[str, str]:
    """The environment without the test's colour and width pins, plus ``env`` (None unsets)."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "PY_COLORS", "SPECSHEET_DEBUG")}
    if not _INSTALLED:
        environ.setdefault("PYTHONPATH", str(ROOT))
    for key, value in env.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return environ


def specsheet(*args: str, cwd: Path | None = None, **env: str | None
              ) -> subprocess.CompletedProcess[str]:
    """Run specsheet with ``args``; text output."""
    return subprocess.run([*SPECSHEET, *args], capture_output=True, text=True,
                          env=clean_env(**env), cwd=cwd, timeout=60, check=False)


def shell(script: str, cwd: Path | None = None, **env: str | None
          ) -> subprocess.CompletedProcess[bytes]:
    """Run ``script`` in bash with pipefail, ``specsheet`` meaning the command above."""
    command = " ".join(f"'{part}'" for part in SPECSHEET)
    prelude = f"set -o pipefail\nspecsheet() {{ {command} \"$@\"; }}\n"
    return subprocess.run(["bash", "-c", prelude + script], capture_output=True,
                          env=clean_env(**env), cwd=cwd, timeout=60, check=False)


def serve_json(*args: str) -> dict[str, Any]:
    """``specsheet serve ARGS --json`` in process (typer's runner), its document."""
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    result = CliRunner().invoke(app, ["serve", *args, "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def serve_refused(*args: str) -> str:
    """``specsheet serve ARGS`` in process, refused as bad input: exit 2, nothing on stdout, one
    line on stderr (returned)."""
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr
