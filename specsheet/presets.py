"""The presets shipped with specsheet.

presets/*.yaml are the source of truth. So that a command that only reads a built-in preset
need not import yaml, they are also compiled into ``_presets.json`` beside this module
(``python scripts/build_presets.py``); a test proves the two agree.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_INDEX = Path(__file__).with_name("_presets.json")


@cache
def preset_index() -> dict[str, dict[str, Any]]:
    """Every built-in preset's mapping (as written in its YAML file), by name, sorted."""
    with _INDEX.open(encoding="utf-8") as f:
        index: dict[str, dict[str, Any]] = json.load(f)
    return index


def preset_yaml_dir() -> Path:
    """Where the preset YAML files are: inside the installed package, or presets/ of a checkout."""
    packaged = Path(__file__).with_name("presets")
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "presets"
