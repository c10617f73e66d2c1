"""Write specsheet/views/schema.json, the JSON Schema (draft 2020-12) of every document.

Each view module describes the document it builds beside the code that builds it
(``schemas()``, definitions by name; the spec's fields come from
specsheet.model.spec.FIELD_DOCS); this script only assembles them and names the command that
writes each document. tests/test_schema.py checks the committed file is what this script
writes and validates every preset's documents against it.

    python scripts/build_schema.py           # write the schema
    python scripts/build_schema.py --check   # exit 1 if it is stale
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "specsheet" / "views" / "schema.json"

# the view modules, each describing its documents (``schemas()``)
VIEWS = ("count", "compare", "check", "serve", "catalog", "inspect", "train", "sweep", "fit",
         "plan")
# every definition in the order the file lists it, with the command that writes it (a
# document) or None (a part that documents share)
DEFINITIONS: dict[str, str | None] = {
    "spec": None,
    "count": "specsheet count --json",
    "compare": "specsheet compare --json",
    "check_entry": None,
    "check": "specsheet check MODEL --json (one model)",
    "check_many": "specsheet check A B ... --json (several models)",
    "serve_entry": None,
    "serve_checked": None,
    "serve": "specsheet serve MODEL --gpu NAME --json",
    "presets": "specsheet presets --json",
    "inspect": "specsheet inspect PATH --json",
    "train": "specsheet train --json",
    "accelerator": None,
    "hardware": "specsheet hardware --json",
    "hardware_one": "specsheet hardware NAME --json",
    "sweep": "specsheet sweep MODEL --json",
    "fit": "specsheet fit MODEL --json",
    "check_fit": "specsheet check MODEL --engine llama.cpp --json",
    "plan": "specsheet plan MODEL --json",
    "plan_train": "specsheet plan MODEL --train --json",
}
# the documents a --json run may write, in the order the schema tries them
DOCUMENTS = ("count", "compare", "check", "check_many", "presets", "inspect", "hardware",
             "hardware_one", "serve", "sweep", "train", "fit", "check_fit", "plan", "plan_train")


def build() -> dict[str, Any]:
    from specsheet.views import SCHEMA_VERSION

    described: dict[str, Any] = {}
    for name in VIEWS:
        for key, schema in importlib.import_module(f"specsheet.views.{name}").schemas().items():
            if key in described:
                raise SystemExit(f"{key} is described twice (specsheet.views.{name})")
            described[key] = schema
    if set(described) != set(DEFINITIONS):
        raise SystemExit(f"described {sorted(described)}, listed {sorted(DEFINITIONS)}")
    definitions = {}
    for key, command in DEFINITIONS.items():
        schema = described[key]
        if command is not None:
            schema["description"] = command
        definitions[key] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:specsheet:documents:v{SCHEMA_VERSION}",
        "title": "specsheet JSON documents",
        "description": f"The documents that specsheet writes with --json (schema_version "
                       f"{SCHEMA_VERSION}). Integers are exact; shares are fractions of 1; "
                       "bytes are bytes.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in DOCUMENTS],
        "$defs": definitions,
    }


def main() -> int:
    text = json.dumps(build(), indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python scripts/build_schema.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
