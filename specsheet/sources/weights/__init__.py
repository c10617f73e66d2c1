"""Checkpoint headers read without loading weight data: safetensors (safetensors.py), GGUF
(gguf.py), a folder or a sharded index of them (files.py), and the tensors mapped to specsheet's
components (checkpoint.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specsheet.compiled import NamedTuple
from specsheet.quant.stored import Format, TensorRow

INDEX = "model.safetensors.index.json"  # a sharded checkpoint's map of tensors to shards


class WeightFiles(NamedTuple):
    """The headers of every file of a checkpoint."""

    format: Format
    files: list[Path]
    tensors: list[TensorRow]  # TensorInfo's fields (``infos`` makes them TensorInfo)
    metadata: dict[str, Any]  # GGUF metadata; safetensors' __metadata__ of the first file
    folder: Path  # where a config.json would be
