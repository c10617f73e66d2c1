"""The public Python API: everything the CLI can do, as functions that take typed arguments with
the CLI's defaults and return typed results whose ``to_dict()`` is the CLI's ``--json`` document.

This package is the only place where ``specsheet.sources`` (what a user gives) and
``specsheet.plan`` (the questions asked of a model) meet. Nothing here prints or exits; bad input
raises ``SpecError``. One module per question; ``specsheet/__init__.py`` re-exports the names.
"""

from __future__ import annotations

from specsheet.api.count import Report, load, presets, report
from specsheet.api.inspect import Inspection, inspect

__all__ = ["Inspection", "Report", "inspect", "load", "presets", "report"]
