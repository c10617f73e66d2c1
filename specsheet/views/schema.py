"""The schema version of every document, and the JSON Schema they validate against.

Integers are exact; shares are fractions of 1 (floats). docs/json.md documents every key and
its unit, and ``schema.json`` beside this module (printed by ``specsheet schema``) is the JSON
Schema (draft 2020-12) that every document validates against.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema.json")


def schema_text() -> str:
    """The JSON Schema of every document, as shipped."""
    return SCHEMA_PATH.read_text(encoding="utf-8")

