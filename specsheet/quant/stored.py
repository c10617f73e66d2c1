"""What a checkpoint stores, as its headers give it: the tensors, each named with the component
it belongs to, and the config found beside them.

The vocabulary shared by the reader (``specsheet.sources.weights``, which fills these types
from safetensors and GGUF headers) and the comparison with the config
(``specsheet.plan.inspection``): plain values, no I/O.
"""

from __future__ import annotations

from math import prod
from typing import Literal

from specsheet.compiled import NamedTuple
from specsheet.model.params import COMPONENTS
from specsheet.model.spec import Model

OTHER = "other"  # what count does not include: towers, buffers, layers past the last
ALL_COMPONENTS = (*COMPONENTS, OTHER)
Format = Literal["safetensors", "gguf"]


class TensorInfo(NamedTuple):
    """A stored tensor: its name, element type, shape (PyTorch order: a GGUF tensor's ne
    reversed, so the row length comes last), bytes and where its data lies."""

    name: str
    dtype: str  # safetensors dtype (BF16, I32, F8_E4M3) or GGML type name (Q4_K)
    shape: tuple[int, ...]
    nbytes: int
    file: str  # the file that holds it
    begin: int  # offset of its data from the start of the file's data section

    @property
    def elements(self) -> int:
        return prod(self.shape)


class Named(NamedTuple):
    """A tensor with the component it belongs to and what it stands for."""

    tensor: TensorInfo
    component: str  # a params.COMPONENTS key or "other"
    layer: int | None  # the block, or None outside the blocks
    params: int  # parameters of the unquantized model it stores (0 for scales, zero points)
    layout: str | None  # the quantized layout of its Linear (gptq-int4, fp8-block, ...), or None


class Checkpoint(NamedTuple):
    """A checkpoint read: every tensor named, the quantized layouts found, and the model its
    config describes (config.json beside the weights, or a GGUF file's metadata)."""

    format: Format
    files: list[str]
    named: list[Named]  # every tensor, in the files' order
    layouts: dict[str, int]  # quantized layout -> modules stored in it
    group_sizes: dict[int, int]  # group size -> modules (GPTQ, AWQ, w4a16)
    file_type: int | None  # a GGUF file's general.file_type (llama.cpp's llama_ftype)
    model: Model | None  # the config's model, or None
    note: str  # why there is no model, or ""
