"""The presets shipped with specsheet.

presets/*.yaml are the source of truth. So that a command that only reads a built-in preset
need not import a YAML parser, scripts/build_presets.py compiles them into ``preset_data.py``
beside this module, a generated module of Python data (a test proves the two agree).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any


@cache
def preset_index() -> dict[str, dict[str, Any]]:
    """Every built-in preset's mapping (as written in its YAML file), by name, sorted.

    Callers must not mutate the mappings: the index is one per process.
    """
    from specsheet.sources.preset_data import PRESETS

    return PRESETS


def preset_yaml_dir() -> Path:
    """Where the preset YAML files are: inside the installed package, or presets/ of a checkout."""
    packaged = Path(__file__).parent.parent / "presets"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent.parent / "presets"
