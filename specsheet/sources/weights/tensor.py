"""The checks every header reader makes of its tensors: not too many, each name once in a
checkpoint, and in each file no overlap of their data and nothing past its end."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from specsheet.errors import SpecError, quoted
from specsheet.quant.stored import TensorRow, row_name

_BEGIN_NBYTES = itemgetter(5, 3)  # a tensor's (begin, nbytes): in the order of the data

# The most tensors a checkpoint's headers are read for, all its files together: every header
# reader checks a file's count against it before it builds anything per tensor. DeepSeek-V3's
# checkpoint holds about 90,000 (bench/inspect.py: 90,369, its 256 experts a layer each with
# FP8 scales), Kimi K2's (384 experts a layer) about 140,000; an inspection of this many
# tiny tensors takes about 300 MB and 10 s (tests/test_bounded.py).
MAX_TENSORS = 300_000


def check_tensor_count(n: int, origin: str, already: int = 0) -> None:
    """SpecError when ``n`` tensors (after ``already`` read from other files of the same
    checkpoint) are more than ``MAX_TENSORS``."""
    if already + n > MAX_TENSORS:
        held = f" (with {already:,} in the files before it)" if already else ""
        raise SpecError(f"{origin}: declares {n:,} tensors{held}; a checkpoint is read for at "
                        f"most {MAX_TENSORS:,} tensors (the largest published ones hold about "
                        "140,000)")


def check_unique(tensors: Sequence[TensorRow]) -> None:
    """SpecError naming the first tensor name that is in two files (the rows' ``file``)."""
    if len(set(map(row_name, tensors))) == len(tensors):
        return
    seen: dict[str, str] = {}
    for name, _, _, _, file, _ in tensors:
        if name in seen:
            raise SpecError(f"tensor {quoted(name)} is in both {seen[name]} and {file}")
        seen[name] = file


def check_overlaps(tensors: Sequence[TensorRow], data_bytes: int, origin: str) -> None:
    """SpecError when two tensors' data overlap or one runs past the ``data_bytes`` of the
    file's data section."""
    if _in_order(tensors, data_bytes):
        return  # no overlap, nothing past the end: the sorted walk below finds no fault
    previous: tuple[str, int, int] | None = None  # the last tensor with data: name, begin, end
    for name, _, _, nbytes, _, begin in sorted(tensors, key=_BEGIN_NBYTES):
        end = begin + nbytes
        if end > data_bytes:
            raise SpecError(f"{origin}: tensor {quoted(name)} runs past the end of the data "
                            f"(bytes {begin:,} to {end:,} of {data_bytes:,}); the file is "
                            "truncated or its header is wrong")
        if previous is not None and begin < previous[2] and nbytes:
            raise SpecError(f"{origin}: tensors {quoted(previous[0])} and {quoted(name)} "
                            f"overlap (bytes {previous[1]:,} to {previous[2]:,} and "
                            f"{begin:,} to {end:,})")
        if nbytes:
            previous = name, begin, end


def _in_order(tensors: Sequence[TensorRow], data_bytes: int) -> bool:
    """Whether ``tensors`` are in the order of their data (as the safetensors library writes
    a header) with no overlap and nothing past the end: one walk and no sort. Any other
    answer goes to ``check_overlaps``' sorted walk, which names the fault first in that
    order."""
    begin = nbytes = end = 0  # the last tensor's, and the end of the last with data
    for t in tensors:
        b, n = t[5], t[3]
        if b < begin or (b == begin and n < nbytes) or (n and b < end) or b + n > data_bytes:
            return False
        begin, nbytes = b, n
        if n:
            end = b + n
    return True
