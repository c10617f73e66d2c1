"""How the tests start specsheet as a real process: the installed command when it is on PATH,
else ``python -m specsheet`` (never a silent skip)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
