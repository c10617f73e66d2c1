"""Regenerate the output shown in README.md and docs/*.md from the real commands.

Every ```console block whose first line is ``$ specsheet ...`` is re-run (in process, without
colour, 110 columns) and its output replaced; a command that ends in ``; echo "exit $?"`` shows
its exit code too. docs/models.md's preset-field table is regenerated from FIELD_DOCS.
tests/test_docs.py checks that every page is current and runs the Python examples.
The pictures in docs/images/ are written by the commands in PICTURES (--svg, 100 columns);
tests/test_export.py checks they are current.

    python scripts/update_docs.py          # rewrite README.md and docs/*.md
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
sys.path.insert(0, str(ROOT))  # this checkout's specsheet, not an installed one
BLOCK = re.compile(r"```console\n\$ (specsheet [^\n]*)\n(.*?)```", re.DOTALL)
EXIT = '; echo "exit $?"'
WIDTH = "110"


def run(command: str) -> str:
    """The output of ``command`` (stdout, then stderr) with trailing spaces stripped."""
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    show_exit = command.endswith(EXIT)
    args = shlex.split(command.removesuffix(EXIT))[1:]
    previous = os.getcwd()
    os.chdir(ROOT)  # examples name files relative to the checkout
    try:
        result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": WIDTH, "FORCE_COLOR": None}).invoke(
            app, args)
    finally:
        os.chdir(previous)
    text = result.stdout + result.stderr
    if show_exit:
        text += f"exit {result.exit_code}\n"
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


FIELDS = re.compile(r"(<!-- fields -->\n).*?(<!-- /fields -->)", re.DOTALL)


def fields_table() -> str:
    """The preset fields, from specsheet.model.spec.FIELD_DOCS."""
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


# picture -> the command that draws it (with --svg FILE added)
PICTURES = {
    "docs/images/sweep-llama3.1-8b.svg": "specsheet sweep llama3.1-8b --tokens 1k:128k:x2 "
                                         "--gpu h100-sxm",
    "docs/images/count-gpt2-small.svg": "specsheet count gpt2-small",
    "docs/images/compare-llama3.svg": "specsheet compare llama3-8b llama3-70b --tokens 8192",
}
PICTURE_WIDTH = "100"


def picture(command: str) -> str:
    """The SVG that ``command --svg FILE`` writes."""
    import tempfile

    from typer.testing import CliRunner

    from specsheet.cli.app import app

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "picture.svg"
        result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": PICTURE_WIDTH,
                                "FORCE_COLOR": None}).invoke(
            app, [*shlex.split(command)[1:], "--svg", str(path)])
        if result.exit_code:
            raise SystemExit(f"{command}: {result.stderr}")
        return path.read_text(encoding="utf-8")


def main() -> int:
    os.environ.pop("FORCE_COLOR", None)
    for name, command in PICTURES.items():
        path = ROOT / name
        text = picture(command)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"updated {name}")
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"updated {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
