"""Compile specsheet/hardware/accelerators/*.yaml into accelerators.json (run after an edit).

Commands read the built-in hardware from that JSON file, so they need no YAML parser; the YAML
files stay the source of truth and a test fails while the two differ.

    python scripts/build_hardware.py           # write the index
    python scripts/build_hardware.py --check   # exit 1 if the index is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
YAMLS = ROOT / "specsheet" / "hardware" / "accelerators"
INDEX = ROOT / "specsheet" / "hardware" / "accelerators.json"


def compile_index() -> str:
    index = {}
    for path in sorted(YAMLS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("name") != path.stem:
            raise SystemExit(f"{path}: name must be {path.stem!r}, the file's stem")
        index[path.stem] = data
    return json.dumps(index, indent=1) + "\n"


def main() -> int:
    text = compile_index()
    if "--check" in sys.argv[1:]:
        current = INDEX.read_text(encoding="utf-8") if INDEX.exists() else ""
        if current != text:
            print(f"{INDEX} is stale: run python scripts/build_hardware.py", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX.relative_to(ROOT)} ({len(json.loads(text))} accelerators)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
