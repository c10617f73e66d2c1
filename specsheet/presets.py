"""The presets shipped with specsheet.

presets/*.yaml are the source of truth. So that a command that only reads a built-in preset
need not import a YAML parser, scripts/build_presets.py compiles them into ``_presets.py``
beside this module (loaded from bytecode); a test proves the two agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def preset_index() -> dict[str, dict[str, Any]]:
    """Every built-in preset's mapping (as written in its YAML file), by name, sorted."""
    from specsheet._presets import PRESETS

    return PRESETS


def preset_yaml_dir() -> Path:
    """Where the preset YAML files are: inside the installed package, or presets/ of a checkout."""
    packaged = Path(__file__).with_name("presets")
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "presets"
