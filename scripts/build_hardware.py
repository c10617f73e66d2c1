"""Compile specsheet/hardware/accelerators/*.yaml into accelerator_data.py (run after an edit).

Commands read the built-in hardware from that generated module, so they need no YAML parser, nor
the json package (scripts/data_module.py says why a module); the YAML files stay the source of
truth and a test fails while the two differ.

    python scripts/build_hardware.py           # write the index
    python scripts/build_hardware.py --check   # exit 1 if the index is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from data_module import data_module

ROOT = Path(__file__).resolve().parent.parent
YAMLS = ROOT / "specsheet" / "hardware" / "accelerators"
INDEX = ROOT / "specsheet" / "hardware" / "accelerator_data.py"


def compile_index() -> str:
    index = {}
    for path in sorted(YAMLS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("name") != path.stem:
            raise SystemExit(f"{path}: name must be {path.stem!r}, the file's stem")
        index[path.stem] = data
    return data_module(DOCSTRING, "ACCELERATORS", index)


DOCSTRING = """The built-in accelerators: specsheet/hardware/accelerators/*.yaml, file by
file, as Python data (each mapping as its YAML file reads), by name. Written by
scripts/build_hardware.py: do not edit; edit the YAML and run the script."""


def main() -> int:
    text = compile_index()
    if "--check" in sys.argv[1:]:
        current = INDEX.read_text(encoding="utf-8") if INDEX.exists() else ""
        if current != text:
            print(f"{INDEX} is stale: run python scripts/build_hardware.py", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX.relative_to(ROOT)} ({len(list(YAMLS.glob('*.yaml')))} accelerators)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
