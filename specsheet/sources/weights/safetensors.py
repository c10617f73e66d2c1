"""The header of a ``.safetensors`` file, read with the standard library.

The format (github.com/huggingface/safetensors, README "Format"): 8 bytes, a little-endian
unsigned length N; N bytes of UTF-8 JSON, a mapping of tensor name to ``{"dtype", "shape",
"data_offsets": [begin, end)}`` (offsets relative to the data section that follows the header)
and an optional ``__metadata__`` mapping of text to text; then the data. Only the header is
read: the safetensors package itself cannot read one without numpy or torch.
"""

from __future__ import annotations

import json
from math import prod
from pathlib import Path
from typing import Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.quant.stored import TensorRow
from specsheet.sources.weights.tensor import MAX_TENSORS, check_overlaps, check_tensor_count

# bits of one element, by the dtype names of safetensors' Dtype enum (safetensors/src/tensor.rs)
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
    "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32,
    "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}
_KEY = b'"data_offsets"'  # once in each tensor's entry
MAX_HEADER_BYTES = 100 * 10**6  # the safetensors library refuses headers over 100 MB
MAX_DIMS = 64  # no tensor has more; a longer shape is a damaged header


# the dtypes and shapes checked (``_tensors``), which the files of one checkpoint share: by
# dtype, its name (one str, however many tensors have it), its bits, and its shapes checked
# (their tuple -> the bytes of one tensor, the tuple kept); and one tuple for each shape
Checked = tuple[dict[str, tuple[str, int, dict[tuple[int, ...], tuple[int, tuple[int, ...]]]]],
                dict[tuple[int, ...], tuple[int, ...]]]


def checked_shapes() -> Checked:
    """Nothing checked yet: a ``Checked`` for the files of one checkpoint."""
    return {name: (name, bits, {}) for name, bits in DTYPE_BITS.items()}, {}


class SafetensorsHeader(NamedTuple):
    tensors: list[TensorRow]  # each a TensorInfo's fields (``infos`` makes them TensorInfo)
    metadata: dict[str, Any]
    data_bytes: int  # size of the data section (file size - 8 - header length)


def read_safetensors(path: Path, checked: Checked | None = None) -> SafetensorsHeader:
    """The tensors of ``path`` from its header, checked: SpecError names the file and the fault
    (a header length past the end, a header that is not a JSON mapping, unknown dtypes, shapes
    that are not lists of integers of 0 or more, data offsets that disagree with the shape,
    overlap or run past the data). ``checked``: what the other files of the checkpoint
    checked, added to (``_tensors``)."""
    origin = str(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise SpecError(f"{origin}: {size} bytes is too short for a safetensors file "
                                "(8 bytes of header length come first)")
            length = header_length(head, size, origin)
            raw = f.read(length)
    except OSError as e:
        raise SpecError(f"{origin}: cannot read: {e.strerror or e}") from None
    return parse_header(raw, length, size, origin, checked)


def header_length(head: bytes, size: int, origin: str) -> int:
    """The header's length from a file's first 8 bytes, checked against the cap and against
    the file's ``size``."""
    length = int.from_bytes(head, "little")
    if length > MAX_HEADER_BYTES:
        raise SpecError(f"{origin}: header length {length:,} bytes is larger than any "
                        f"safetensors header ({MAX_HEADER_BYTES // 10**6} MB at most); "
                        "not a safetensors file, or a damaged one")
    if 8 + length > size:
        raise SpecError(f"{origin}: header length {length:,} bytes runs past the end "
                        f"of the file ({size:,} bytes); the file is truncated or not "
                        "safetensors")
    return length


def parse_header(raw: bytes, length: int, size: int, origin: str,
                 checked: Checked | None = None) -> SafetensorsHeader:
    """The tensors of a file of ``size`` bytes whose header (``length`` bytes) is ``raw``."""
    if len(raw) < length:
        raise SpecError(f"{origin}: truncated while reading the header")
    # each tensor's entry has one "data_offsets" key (inside a name or a metadata string the
    # quotes are escaped): the count is known before the JSON is parsed, and a header shorter
    # than MAX_TENSORS + 1 of those 14 bytes holds too few to count
    if len(raw) >= len(_KEY) * (MAX_TENSORS + 1):
        check_tensor_count(raw.count(_KEY), origin)
    header, floats = _parse(raw, origin)
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise SpecError(f"{origin}: __metadata__ is not a mapping of text to text")
    data_bytes = size - 8 - length
    tensors, end = _tensors(header, origin, floats, checked)
    if end is None or end > data_bytes:  # not back to back from 0, or past the end
        check_overlaps(tensors, data_bytes, origin)
    return SafetensorsHeader(tensors, metadata, data_bytes)


class _Float(Exception):
    """A JSON number that is no integer: the header is read again, as JSON reads it."""


def _no_float(text: str) -> float:
    raise _Float


def _parse(raw: bytes, origin: str) -> tuple[dict[str, Any], bool]:
    """The header's JSON mapping, and whether it holds a number that is no integer (its
    ``json.loads`` then taken again, with no hook)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"{origin}: the header is not UTF-8 (byte {8 + e.start}); not a "
                        "safetensors file") from None
    try:
        try:
            header, floats = json.loads(text, parse_float=_no_float,
                                        parse_constant=_no_float), False
        except _Float:  # a number with a fraction or an exponent, NaN or Infinity
            header, floats = json.loads(text), True
    except json.JSONDecodeError as e:
        raise SpecError(f"{origin}: the header is not valid JSON ({e.msg} at byte "
                        f"{8 + e.pos}); not a safetensors file") from None
    except (RecursionError, ValueError):
        raise SpecError(f"{origin}: the header is not valid JSON; not a safetensors "
                        "file") from None
    if not isinstance(header, dict):
        raise SpecError(f"{origin}: the header is not a JSON mapping of tensor names; not a "
                        "safetensors file")
    return header, floats


def _tensors(header: dict[str, Any], origin: str, floats: bool = True,
             checked: Checked | None = None) -> tuple[list[TensorRow], int | None]:
    """Every entry of the header as a TensorInfo's row; and where the last one's data end when
    each one's begin where the one before it ends, from 0 (as the safetensors library writes
    them: then none overlaps), else None.

    An entry that is plainly well formed (JSON gives ints, never subclasses, so ``type(n) is
    int`` is ``_tensor``'s test; an entry that is not a mapping, or offsets that are not a
    list, fail the subscripts or the type tests) is taken at once; any other goes through
    ``_tensor``, which names the fault or accepts it alike.

    A shape is checked element by element once per dtype (in ``checked``, which the files of
    one checkpoint share): the next entry of that dtype and shape (its shape's tuple equal to
    one checked) needs only its offsets checked against the bytes found. Equal is not alike
    when the elements are bools or floats (``True == 1``, ``2.0 == 2``): a header without a
    number that is no integer (``floats`` False: ``_parse`` tells) holds no float, and a shape
    of elements all 2 or more equals no shape with a bool, so only such shapes are remembered,
    and none used or remembered when ``floats``."""
    tensors: list[TensorRow] = []
    append = tensors.append
    # one tuple for each shape, however many tensors and files have it: grouping the tensors
    # by them (names.py) then compares objects, not their contents
    dtypes, shapes = checked if checked is not None and not floats else checked_shapes()
    same = shapes.setdefault
    last: int | None = 0  # where the data so far end, while they are back to back
    for name, entry in header.items():
        try:
            shape, (begin, end) = entry["shape"], entry["data_offsets"]
            dtype, bits, of_dtype = dtypes[entry["dtype"]]
            found = of_dtype.get(tuple(shape))
        except (TypeError, KeyError, ValueError):  # not a mapping, a key missing, ...
            append(_tensor(name, entry, origin))
            last = None
            continue
        if found is not None:  # a shape checked: its elements ints of 2 or more
            nbytes, dims = found
            if type(begin) is int is type(end) and 0 <= begin and end - begin == nbytes:
                append((name, dtype, dims, nbytes, origin, begin))
                last = end if begin == last else None
                continue
        elif type(shape) is list and len(shape) <= MAX_DIMS and type(begin) is int \
                and type(end) is int and 0 <= begin <= end:
            for n in shape:
                if type(n) is not int or n < 0:
                    break
                bits *= n
            else:
                if bits == 8 * (end - begin):
                    dims = tuple(shape)
                    dims = same(dims, dims)
                    if not floats and 0 not in dims and 1 not in dims:
                        of_dtype[dims] = (end - begin, dims)
                    append((name, dtype, dims, end - begin, origin, begin))
                    last = end if begin == last else None
                    continue
        append(_tensor(name, entry, origin))
        last = None
    return tensors, last


def _tensor(name: str, entry: object, origin: str) -> TensorRow:
    where = f"{origin}: tensor {quoted(name)}"
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected a mapping of dtype, shape and data_offsets")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        hint = did_you_mean(dtype, DTYPE_BITS) if isinstance(dtype, str) else ""
        raise SpecError(f"{where}: unknown dtype {quoted(dtype)}{hint}; expected one of "
                        f"{', '.join(DTYPE_BITS)}")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise SpecError(f"{where}: shape {_short(shape)} is not a list of integers of 0 or "
                        "more")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in offsets)
            and offsets[0] <= offsets[1]):
        raise SpecError(f"{where}: data_offsets {_short(offsets)} is not [begin, end] with "
                        "0 <= begin <= end")
    bits = prod(shape) * DTYPE_BITS[dtype]
    begin, end = offsets
    if bits % 8 or bits // 8 != end - begin:
        raise SpecError(f"{where}: {dtype} {shape} takes {bits / 8:,g} bytes but its "
                        f"data_offsets hold {end - begin:,}")
    return name, dtype, tuple(shape), end - begin, origin, begin


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
