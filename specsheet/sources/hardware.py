"""An accelerator by what a user names: a built-in name, or a path to a hardware YAML file."""

from __future__ import annotations

import os
from pathlib import Path

from specsheet.hardware.catalog import Accelerator, accelerator_from_mapping, builtin, catalog_index


def load_accelerator(ref: str) -> Accelerator:
    """The accelerator ``ref`` names: a built-in (``h100-sxm``) or a YAML file
    (``./my-gpu.yaml``, written like the files in specsheet/hardware/accelerators/).
    A built-in name wins over a path of the same name; ``./NAME`` reads the path."""
    if ref in catalog_index():
        return builtin(ref)
    path = Path(ref)
    # (os.path.exists: a name too long for a path is no file, where Path.exists raises)
    if path.suffix.lower() in (".yaml", ".yml") or os.path.exists(ref) or "/" in ref or \
            "\\" in ref:
        from specsheet.sources.files import parse_yaml, read_text  # a file's readers: only here

        origin = str(path)
        return accelerator_from_mapping(parse_yaml(read_text(path), origin), origin)
    return builtin(ref)
