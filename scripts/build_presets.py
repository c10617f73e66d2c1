"""Compile presets/*.yaml into specsheet/_presets.py (run after editing a preset).

The command reads built-in presets from that module, so it needs no YAML parser; Python loads
it from bytecode. presets/*.yaml stay the source of truth: a test fails while the two differ.

    python scripts/build_presets.py          # write the module
    python scripts/build_presets.py --check  # exit 1 if the module is stale
"""

from __future__ import annotations

import pprint
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "presets"
MODULE = ROOT / "specsheet" / "_presets.py"
HEADER = '''"""The shipped presets, compiled from presets/*.yaml by scripts/build_presets.py.

Generated: edit presets/*.yaml and run the script, never this file.
"""

from typing import Any

PRESETS: dict[str, dict[str, Any]] = '''


def compile_module() -> str:
    index = {}
    for path in sorted(PRESETS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("name") != path.stem:
            raise SystemExit(f"{path}: name must be {path.stem!r}, the file's stem")
        index[path.stem] = data
    return HEADER + pprint.pformat(index, indent=1, width=99, sort_dicts=False) + "\n"


def main() -> int:
    text = compile_module()
    if "--check" in sys.argv[1:]:
        if not MODULE.exists() or MODULE.read_text(encoding="utf-8") != text:
            print(f"{MODULE} is stale: run python scripts/build_presets.py", file=sys.stderr)
            return 1
        return 0
    MODULE.write_text(text, encoding="utf-8")
    print(f"wrote {MODULE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
