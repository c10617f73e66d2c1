"""One tensor as a checkpoint's header describes it, whatever the file format."""

from __future__ import annotations

from math import prod
from typing import NamedTuple


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


def check_overlaps(tensors: list[TensorInfo], data_bytes: int, origin: str) -> None:
    """SpecError when two tensors' data overlap or one runs past the ``data_bytes`` of the
    file's data section."""
    from specsheet.errors import SpecError

    previous: TensorInfo | None = None
    for t in sorted(tensors, key=lambda t: (t.begin, t.nbytes)):
        end = t.begin + t.nbytes
        if end > data_bytes:
            raise SpecError(f"{origin}: tensor {t.name!r} runs past the end of the data "
                            f"(bytes {t.begin:,} to {end:,} of {data_bytes:,}); the file is "
                            "truncated or its header is wrong")
        if previous is not None and t.begin < previous.begin + previous.nbytes and t.nbytes:
            raise SpecError(f"{origin}: tensors {previous.name!r} and {t.name!r} overlap "
                            f"(bytes {previous.begin:,} to {previous.begin + previous.nbytes:,} "
                            f"and {t.begin:,} to {end:,})")
        if t.nbytes:
            previous = t
