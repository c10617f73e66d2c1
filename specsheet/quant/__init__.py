"""Quantized weight storage: element types and block formats (formats.py), a model's tensors
(tensors.py), and the tensors each toolchain stores for a model (layouts.py). Pure, exact
integers; no I/O.

The names below load on first use (PEP 562), so that importing ``specsheet.quant.tensors`` does
not load the quantization tables.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

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
