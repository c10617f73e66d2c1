"""Accelerators by name: a catalog entry or a hardware YAML file (``specsheet hardware``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specsheet.errors import SpecError

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator


def load_gpu(name: str) -> Accelerator:
    """The accelerator ``name`` (a catalog name or a hardware YAML file); errors name gpu."""
    from specsheet.sources.hardware import load_accelerator

    try:
        return load_accelerator(name)
    except SpecError as e:
        raise SpecError(str(e), field="gpu", value=name) from None
