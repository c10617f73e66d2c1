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

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT))  # this checkout's specsheet, not an installed one
BLOCK = re.compile(r"```console\n\$ (specsheet [^\n]*)\n(.*?)```", re.DOTALL)
WIDTH = "110"


def run(command: str) -> str:
    """The output of ``command`` (stdout, then stderr) with trailing spaces stripped."""
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": WIDTH, "FORCE_COLOR": None}).invoke(
        app, shlex.split(command)[1:]
    )
    text = result.stdout + result.stderr
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


FIELDS = re.compile(r"(<!-- fields -->\n).*?(<!-- /fields -->)", re.DOTALL)


def fields_table() -> str:
    """The preset fields, from specsheet.spec.FIELD_DOCS."""
    from specsheet.model.spec import FIELD_DOCS

    rows = ["| field | default | meaning |", "|---|---|---|",
            "| `name` | the file's stem | the model's name in the output |",
            "| `description` | empty | one line about the model |",
            "| `source` | empty | where the architecture and published total come from |",
            "| `published_total` | none | the publisher's parameter count; `count` says whether "
            "it matches |"]
    for doc in FIELD_DOCS:
        default = doc.default if doc.default in ("required", "none") else f"`{doc.default}`"
        rows.append(f"| `{doc.name}` | {default} | {doc.help} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """``text`` with every specsheet console block's output and the fields table regenerated."""
    text = FIELDS.sub(lambda m: m.group(1) + fields_table() + m.group(2), text)
    return BLOCK.sub(lambda m: f"```console\n$ {m.group(1)}\n{run(m.group(1))}```", text)


def main() -> int:
    os.environ.pop("FORCE_COLOR", None)
    text = README.read_text(encoding="utf-8")
    README.write_text(render(text), encoding="utf-8")
    print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
