"""Compile presets/*.yaml into specsheet/_presets.json (run after editing a preset).

    python scripts/build_presets.py          # write the index
    python scripts/build_presets.py --check  # exit 1 if the index is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "presets"
INDEX = ROOT / "specsheet" / "_presets.json"


def compile_index() -> str:
    index = {}
    for path in sorted(PRESETS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("name") != path.stem:
            raise SystemExit(f"{path}: name must be {path.stem!r}, the file's stem")
        index[path.stem] = data
    return json.dumps(index, indent=1, sort_keys=False) + "\n"


def main() -> int:
    text = compile_index()
    if "--check" in sys.argv[1:]:
        if not INDEX.exists() or INDEX.read_text(encoding="utf-8") != text:
            print(f"{INDEX} is stale: run python scripts/build_presets.py", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
