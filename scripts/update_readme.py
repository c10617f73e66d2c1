"""Regenerate the output shown in README.md from the real commands.

Every ```console block in README.md whose first line is ``$ specsheet ...`` is re-run (in
process, without colour, 110 columns) and its output replaced. tests/test_docs.py checks that
the README is up to date.

    python scripts/update_readme.py          # rewrite README.md
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"```console\n\$ (specsheet [^\n]*)\n(.*?)```", re.DOTALL)
WIDTH = "110"


def run(command: str) -> str:
    """The output of ``command`` (stdout, then stderr) with trailing spaces stripped."""
    from typer.testing import CliRunner

    from specsheet.cli import app

    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": WIDTH, "FORCE_COLOR": None}).invoke(
        app, shlex.split(command)[1:]
    )
    text = result.stdout + result.stderr
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


def render(text: str) -> str:
    """``text`` with every specsheet console block's output regenerated."""
    return BLOCK.sub(lambda m: f"```console\n$ {m.group(1)}\n{run(m.group(1))}```", text)


def main() -> int:
    os.environ.pop("FORCE_COLOR", None)
    text = README.read_text(encoding="utf-8")
    README.write_text(render(text), encoding="utf-8")
    print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
