"""specsheet: exact spec sheets for decoder-only transformer language models.

The public API (docs/api.md): ``load``, ``report``, ``presets``, ``serve``, ``train``,
``sweep``, ``check``, ``compare``, ``inspect``, ``fit``, ``search`` (plan's), ``Report``,
``Inspection``, ``FitRequest``, ``PlanRequest``, ``Model``, ``ModelSpec`` and ``SpecError``.
Importing specsheet loads neither typer, rich nor yaml; the API's modules load on first use, so
the command line pays only for what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.errors import SpecError

__version__ = "0.1.0"

if TYPE_CHECKING:
    from specsheet.api.check import check
    from specsheet.api.compare import compare
    from specsheet.api.count import Report, load, presets, report
    from specsheet.api.fit import FitRequest, fit
    from specsheet.api.inspect import Inspection, inspect
    from specsheet.api.plan import PlanRequest, search
    from specsheet.api.serve import serve
    from specsheet.api.sweep import sweep
    from specsheet.api.train import train
    from specsheet.model.spec import Model, ModelSpec

_LAZY = {**dict.fromkeys(("Report", "load", "presets", "report"), "specsheet.api.count"),
         **{name: f"specsheet.api.{name}" for name in ("check", "compare", "fit", "inspect",
                                                        "serve", "sweep", "train")},
         "Inspection": "specsheet.api.inspect", "FitRequest": "specsheet.api.fit",
         # plan's search: ``specsheet.plan`` is the package of the planning arithmetic
         "search": "specsheet.api.plan", "PlanRequest": "specsheet.api.plan",
         "Model": "specsheet.model.spec", "ModelSpec": "specsheet.model.spec"}

__all__ = ["FitRequest", "Inspection", "Model", "ModelSpec", "PlanRequest", "Report",
           "SpecError", "__version__", "check", "compare", "fit", "inspect", "load", "presets",
           "report", "search", "serve", "sweep", "train"]


def __getattr__(name: str) -> Any:
    """The API's names, imported when first used (PEP 562)."""
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'specsheet' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
