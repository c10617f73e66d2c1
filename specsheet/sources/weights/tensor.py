"""The check every header reader makes of its tensors' data: no overlap, nothing past the end."""

from __future__ import annotations

from operator import itemgetter

from specsheet.errors import SpecError
from specsheet.quant.stored import TensorInfo

_BEGIN_NBYTES = itemgetter(5, 3)  # TensorInfo's (begin, nbytes): in the order of the data


def check_overlaps(tensors: list[TensorInfo], data_bytes: int, origin: str) -> None:
    """SpecError when two tensors' data overlap or one runs past the ``data_bytes`` of the
    file's data section."""
    previous: TensorInfo | None = None
    for t in sorted(tensors, key=_BEGIN_NBYTES):
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
