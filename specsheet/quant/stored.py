"""What a checkpoint stores, as its headers give it: the tensors, each named with the component
it belongs to, and the config found beside them.

The vocabulary shared by the reader (``specsheet.sources.weights``, which fills these types
from safetensors and GGUF headers) and the comparison with the config
(``specsheet.plan.inspection``): plain values, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import compress
from math import prod
from operator import itemgetter
from typing import Any, Literal

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


# A TensorInfo's fields as a plain tuple, in its order: how the safetensors reader hands out a
# header's tensors, and how a checkpoint's are held until one is asked for by name (a tuple
# subclass's instance made from Python costs some 250 ns more than the tuple it is made of:
# 22 ms of reading DeepSeek-V3's 90,369 headers' entries). ``infos`` makes them TensorInfo.
TensorRow = tuple[str, str, tuple[int, ...], int, str, int]
row_name = itemgetter(0)  # a TensorRow's (or TensorInfo's) name, read at C speed


def infos(rows: Iterable[TensorRow]) -> list[TensorInfo]:
    """Each row as a TensorInfo (one that is a TensorInfo as it is)."""
    new = tuple.__new__  # TensorInfo(...) without TensorInfo._make's Python frame
    return [t if type(t) is TensorInfo else new(TensorInfo, t) for t in rows]


class Named(NamedTuple):
    """A tensor with the component it belongs to and what it stands for."""

    tensor: TensorInfo
    component: str  # a params.COMPONENTS key or "other"
    layer: int | None  # the block, or None outside the blocks
    params: int  # parameters of the unquantized model it stores (0 for scales, zero points)
    layout: str | None  # the quantized layout of its Linear (gptq-int4, fp8-block, ...), or None


class TensorGroup(NamedTuple):
    """Tensors alike: the same component, layer, element type, shape, bytes, parameters and
    layout (a layer's 256 experts' gate_proj weights, say)."""

    component: str
    layer: int | None
    dtype: str
    shape: tuple[int, ...]
    nbytes: int  # of each tensor
    params: int  # of each tensor
    layout: str | None
    tensors: int  # how many


GroupKey = tuple[Any, ...]  # what tells a group of tensors alike from the others


class NamedTensors:
    """Every tensor of a checkpoint with its component, held as the groups of tensors alike
    (``groups``, in the order of each group's first tensor) and each tensor's key into them
    (``keys``, in the files' order): a 90,000-tensor checkpoint is a few thousand groups.
    ``named()`` makes the ``Named`` of every tensor, anew on each call."""

    __slots__ = ("groups", "keys", "tensors")

    def __init__(self, tensors: list[TensorRow], keys: list[GroupKey],
                 groups: dict[GroupKey, TensorGroup]) -> None:
        self.tensors = tensors  # in the files' order, as rows (``infos`` for TensorInfo)
        self.keys = keys  # keys[i]: the group of tensors[i]
        self.groups = groups

    @classmethod
    def of(cls, named: list[Named]) -> NamedTensors:
        """The groups of ``named``."""
        keys: list[GroupKey] = [(n.component, n.layer, n.tensor.dtype, n.tensor.shape,
                                 n.tensor.nbytes, n.params, n.layout) for n in named]
        groups = {key: TensorGroup(*key, tensors=count)  # type: ignore[misc]
                  for key, count in Counter(keys).items()}
        return cls([n.tensor for n in named], keys, groups)

    def __len__(self) -> int:
        return len(self.tensors)

    def __eq__(self, other: object) -> bool:
        """The same tensors named alike, however they are grouped."""
        if not isinstance(other, NamedTensors):
            return NotImplemented
        return self.tensors == other.tensors and self.named() == other.named()

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return f"NamedTensors({len(self.tensors):,} tensors in {len(self.groups):,} groups)"

    def named(self) -> list[Named]:
        """Each tensor with its component, layer, parameters and layout, in the files'
        order."""
        of = {key: (g.component, g.layer, g.params, g.layout) for key, g in self.groups.items()}
        new = tuple.__new__  # Named(...) without Named._make's Python frame
        return [new(Named, (t, *of[key])) for t, key in zip(infos(self.tensors), self.keys,
                                                              strict=True)]

    def names_in(self, component: str) -> list[str]:
        """The names of the tensors of ``component``, in the files' order."""
        inside = {key: g.component == component for key, g in self.groups.items()}
        if not any(inside.values()):
            return []
        return list(compress(map(row_name, self.tensors), map(inside.__getitem__, self.keys)))


class Checkpoint(NamedTuple):
    """A checkpoint read: every tensor named, the quantized layouts found, and the model its
    config describes (config.json beside the weights, or a GGUF file's metadata)."""

    format: Format
    files: list[str]
    named: NamedTensors  # every tensor, in the files' order
    layouts: dict[str, int]  # quantized layout -> modules stored in it
    group_sizes: dict[int, int]  # group size -> modules (GPTQ, AWQ, w4a16)
    file_type: int | None  # a GGUF file's general.file_type (llama.cpp's llama_ftype)
    model: Model | None  # the config's model, or None
    note: str  # why there is no model, or ""
