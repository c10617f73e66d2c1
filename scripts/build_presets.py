"""Compile presets/*.yaml into specsheet/sources/preset_data.py (run after editing a preset).

The command reads built-in presets from that generated module, so it needs no YAML parser, nor
the json package (scripts/data_module.py says why a module). presets/*.yaml stay the source of
truth: a test fails while the two differ.

    python scripts/build_presets.py            # write the index
    python scripts/build_presets.py --check    # exit 1 if the index is stale
    python scripts/build_presets.py --restyle  # rewrite flow-style presets in block style
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from data_module import data_module

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "presets"
INDEX = ROOT / "specsheet" / "sources" / "preset_data.py"


def compile_index() -> str:
    index = {}
    for path in sorted(PRESETS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("name") != path.stem:
            raise SystemExit(f"{path}: name must be {path.stem!r}, the file's stem")
        index[path.stem] = data
    return data_module(DOCSTRING, "PRESETS", index)


DOCSTRING = """The built-in presets: presets/*.yaml, file by file, as Python data (each
mapping as its YAML file reads), by name. Written by scripts/build_presets.py: do not edit;
edit the YAML and run the script."""


def restyle() -> None:
    """Block style, as `specsheet convert` writes, keeping each file's header comments."""

    class Dumper(yaml.SafeDumper):
        pass

    def flow_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)

    Dumper.add_representer(list, flow_list)
    for path in sorted(PRESETS.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        body = [line for line in text.splitlines() if not line.startswith("#")]
        if not any(line.startswith("{") for line in body):
            continue
        header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
        data = yaml.safe_load(text)
        path.write_text(header + yaml.dump(data, Dumper=Dumper, sort_keys=False, width=100),
                        encoding="utf-8")
        print(f"restyled {path}")


def main() -> int:
    if "--restyle" in sys.argv[1:]:
        restyle()
    text = compile_index()
    if "--check" in sys.argv[1:]:
        if not INDEX.exists() or INDEX.read_text(encoding="utf-8") != text:
            print(f"{INDEX} is stale: run python scripts/build_presets.py", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
