"""The schema version of every document, and the pieces its JSON Schema is described with.

Integers are exact; shares are fractions of 1 (floats). Each view module describes the
document it builds beside the code that builds it (its ``schemas()``: JSON Schema definitions
by name, made with ``obj``, ``ints`` and ``numbers``); scripts/build_schema.py assembles them
into ``schema.json`` beside this module (draft 2020-12, printed by ``specsheet schema``), and
tests/test_schema.py validates every document against it. docs/json.md documents every key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specsheet.views import SCHEMA_VERSION

VERSION: dict[str, Any] = {"const": SCHEMA_VERSION}  # a document's schema_version


def ref(name: str) -> dict[str, str]:
    """A reference to the definition ``name``."""
    return {"$ref": f"#/$defs/{name}"}


def obj(properties: dict[str, Any], description: str = "") -> dict[str, Any]:
    """An object with exactly these keys."""
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": list(properties), "additionalProperties": False}
    if description:
        schema["description"] = description
    return schema


def ints(*names: str, minimum: int = 0) -> dict[str, Any]:
    """An object of these integer keys, each at least ``minimum``."""
    return obj({name: {"type": "integer", "minimum": minimum} for name in names})


def numbers(*names: str) -> dict[str, Any]:
    """An object of these number keys."""
    return obj({name: {"type": "number"} for name in names})


def optional(schema: dict[str, Any], *names: str) -> dict[str, Any]:
    """``schema`` with ``names`` no longer required."""
    schema["required"] = [name for name in schema["required"] if name not in names]
    return schema


def schema_text() -> str:
    """The JSON Schema of every document, as shipped."""
    return Path(__file__).with_name("schema.json").read_text(encoding="utf-8")
