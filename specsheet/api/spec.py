"""The spec's vocabulary for the command line and the explorer: the fields a model is written
in, the five numbers, the element types, so that the CLI need not reach into specsheet.model."""

from __future__ import annotations

from specsheet.model.memory import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.model.params import ParamBreakdown, count_params
from specsheet.model.spec import FIELD_DOCS, MAX_DIGITS, REQUIRED_FIELDS, FieldDoc, Model, ModelSpec

__all__ = ["DEFAULT_DTYPE", "DTYPE_BITS", "FIELD_DOCS", "MAX_DIGITS", "REQUIRED_FIELDS",
           "FieldDoc", "Model", "ModelSpec", "ParamBreakdown", "count_params"]
