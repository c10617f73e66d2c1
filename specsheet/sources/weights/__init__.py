"""Checkpoint headers read without loading weight data: safetensors (safetensors.py), GGUF
(gguf.py), a folder or a sharded index of them (files.py, index.py) or a Hub repository's
(remote.py), gathered into one ``WeightFiles`` here, and the tensors mapped to specsheet's
components (checkpoint.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from specsheet.compiled import NamedTuple
from specsheet.quant.stored import Format, TensorRow
from specsheet.sources.weights.tensor import check_tensor_count, check_unique

INDEX = "model.safetensors.index.json"  # a sharded checkpoint's map of tensors to shards


class WeightFiles(NamedTuple):
    """The headers of every file of a checkpoint."""

    format: Format
    files: list[Path]
    tensors: list[TensorRow]  # TensorInfo's fields (``infos`` makes them TensorInfo)
    metadata: dict[str, Any]  # GGUF metadata; safetensors' __metadata__ of the first file
    folder: Path  # where a config.json would be


def gather(kind: Format, files: Sequence[Path], folder: Path, read: Callable[[Path], Any],
           unique: bool = True, counts: list[int] | None = None) -> WeightFiles:
    """The checkpoint of ``files``, each read by ``read``: every file's tensors, each name once
    (``unique=False``: the caller checks, as an index does), and the first file's metadata;
    ``counts`` is given each file's number of tensors, in turn."""
    tensors: list[TensorRow] = []
    metadata: dict[str, Any] = {}
    for i, path in enumerate(files):
        header = read(path)  # a SafetensorsHeader or a GGUF file's: tensors, metadata
        check_tensor_count(len(header.tensors), str(path), len(tensors))
        tensors += header.tensors
        if counts is not None:
            counts.append(len(header.tensors))
        if i == 0:
            metadata = header.metadata
    if unique:
        check_unique(tensors)
    return WeightFiles(kind, list(files), tensors, metadata, folder)
