"""Quantized weight storage: element types and block formats (formats.py), and the tensors each
toolchain stores for a model (layouts.py). Pure, exact integers; no I/O."""

from specsheet.quant.formats import FORMATS, ElementType, QuantFormat, check_format
from specsheet.quant.layouts import (
    QuantizedWeights,
    StoredTensor,
    Tensor,
    gguf_types,
    model_tensors,
    quantized_bytes,
)

__all__ = [
    "FORMATS", "ElementType", "QuantFormat", "QuantizedWeights", "StoredTensor", "Tensor",
    "check_format", "gguf_types", "model_tensors", "quantized_bytes",
]
