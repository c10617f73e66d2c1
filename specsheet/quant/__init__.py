"""Quantized weight storage: element types and block formats (formats.py), a model's tensors
(tensors.py), and the tensors each toolchain stores for a model (layouts.py). Pure, exact
integers; no I/O.

The names below load on first use (PEP 562), so that importing ``specsheet.quant.tensors`` does
not load the quantization tables.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# The most layers a model's tensors are listed for, one by one: a quantized layout's bytes, a
# serving plan's stages and KV groups, training's busiest GPU, a local placement, an
# inspection's expected tensors (plan.MAX_WALKED_LAYERS is this number). About 5 s for a
# serving plan at this many; the largest published model has 126. count in a plain dtype
# answers any number: it builds no list per layer. Here rather than in tensors.py, so that the
# plans read it without importing the tensor lists.
MAX_LISTED_LAYERS = 10_000

_WHERE = {
    "FORMATS": "formats", "ElementType": "formats", "QuantFormat": "formats",
    "check_format": "formats", "QuantizedWeights": "layouts", "StoredTensor": "layouts",
    "Tensor": "tensors", "gguf_types": "layouts", "model_tensors": "tensors",
    "quantized_bytes": "layouts",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'specsheet.quant' has no attribute {name!r}")
    return getattr(import_module(f"specsheet.quant.{_WHERE[name]}"), name)
