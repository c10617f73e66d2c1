"""specsheet: exact spec sheets for decoder-only transformer language models.

The public API (docs/api.md): ``load``, ``report``, ``presets``, ``Report``, ``Model``,
``ModelSpec`` and ``SpecError``. Importing specsheet loads neither typer, rich nor yaml.
"""

__version__ = "0.1.0"

from specsheet.api import Report, load, presets, report
from specsheet.errors import SpecError
from specsheet.model.spec import Model, ModelSpec

__all__ = ["Model", "ModelSpec", "Report", "SpecError", "__version__", "load", "presets",
           "report"]
