"""The header of a ``.gguf`` file: metadata and tensor infos, read with the standard library.

The format follows llama.cpp's gguf-py (``gguf/gguf_reader.py``, ``gguf/constants.py``;
github.com/ggml-org/llama.cpp): little-endian; the magic ``GGUF``; a uint32 version (2 or 3);
uint64 tensor count and metadata count; the metadata, each a string key, a uint32 value type and
the value (a string is a uint64 length and UTF-8 bytes; an array a uint32 element type, a uint64
length and the elements); the tensor infos, each a name, a uint32 n_dims, n_dims uint64 sizes
(ne order: ne[0] is the row length), a uint32 GGML type and a uint64 offset into the data
section; the data section starts at the end of the header rounded up to ``general.alignment``
(32 by default).

Large arrays (a tokenizer's 150,000 tokens, merges, scores) are skipped without being built:
only their element type and length are kept. Every count is checked against the bytes left in
the file before it is used, so a damaged header cannot make the reader allocate or loop beyond
the file's size.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, Protocol

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.quant.stored import TensorInfo
from specsheet.sources.weights.tensor import check_overlaps, check_tensor_count

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS
CHUNK = 1 << 20  # bytes read at a time
MAX_KEPT_ARRAY = 4096  # arrays of numbers up to this length are kept; longer ones skipped
MAX_KEPT_STRING = 1 << 20  # longer string values are skipped
MAX_METADATA = 100_000  # metadata entries read (an array is one entry, however long)

# GGML type id -> (name, values per block, bytes per block): GGML_QUANT_SIZES and
# GGMLQuantizationType of gguf-py's constants.py
_K = 256
GGML_TYPE_IDS: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40),
    10: ("Q2_K", _K, 2 + 2 + _K // 16 + _K // 4), 11: ("Q3_K", _K, 2 + _K // 4 + _K // 8 + 12),
    12: ("Q4_K", _K, 2 + 2 + _K // 2 + 12), 13: ("Q5_K", _K, 2 + 2 + _K // 2 + _K // 8 + 12),
    14: ("Q6_K", _K, 2 + _K // 2 + _K // 4 + _K // 16), 15: ("Q8_K", _K, 4 + _K + _K // 8),
    16: ("IQ2_XXS", _K, 2 + _K // 4), 17: ("IQ2_XS", _K, 2 + _K // 4 + _K // 32),
    18: ("IQ3_XXS", _K, 2 + _K // 4 + _K // 8), 19: ("IQ1_S", _K, 2 + _K // 8 + _K // 16),
    20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", _K, 2 + _K // 4 + _K // 8 + _K // 32 + 4),
    22: ("IQ2_S", _K, 2 + _K // 4 + _K // 16), 23: ("IQ4_XS", _K, 2 + 2 + _K // 2 + _K // 64),
    24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
    28: ("F64", 1, 8), 29: ("IQ1_M", _K, _K // 8 + _K // 16 + _K // 32), 30: ("BF16", 1, 2),
    34: ("TQ1_0", _K, 2 + 4 * 13), 35: ("TQ2_0", _K, 2 + 64), 39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18),
}

# metadata value types: id -> (name, struct format or None, size)
_STRING, _ARRAY = 8, 9
_SCALARS: dict[int, tuple[str, str]] = {
    0: ("uint8", "<B"), 1: ("int8", "<b"), 2: ("uint16", "<H"), 3: ("int16", "<h"),
    4: ("uint32", "<I"), 5: ("int32", "<i"), 6: ("float32", "<f"), 7: ("bool", "<?"),
    10: ("uint64", "<Q"), 11: ("int64", "<q"), 12: ("float64", "<d"),
}
_SIZE = {t: struct.calcsize(fmt) for t, (_, fmt) in _SCALARS.items()}
_MIN_SIZE = {**_SIZE, _STRING: 8, _ARRAY: 12}  # the least bytes one value can take


class SkippedArray(NamedTuple):
    """An array the reader did not build: its element type and length."""

    element_type: str  # uint8, ..., string, array
    length: int


class GGUFHeader(NamedTuple):
    version: int
    metadata: dict[str, Any]  # numbers, text, lists of numbers, or SkippedArray
    tensors: list[TensorInfo]
    alignment: int
    data_offset: int  # where the data section starts
    data_bytes: int  # file size - data_offset


class Seekable(Protocol):
    """What the reader needs of a file: an open binary file, or the Hub's bytes by range."""

    def seek(self, offset: int, /) -> int: ...

    def read(self, n: int, /) -> bytes: ...


class _Reader:
    """A forward reader over a file with its own buffer: every read names what it reads, and
    a read past the end is a SpecError."""

    def __init__(self, f: Seekable, size: int, origin: str, chunk: int = CHUNK,
                 most: int = CHUNK) -> None:
        self.f, self.size, self.origin = f, size, origin
        self.chunk, self.most = chunk, most  # bytes read at a time: doubled, up to most
        self.buf = b""
        self.off = 0  # position in buf
        self.base = 0  # file offset of buf[0]

    @property
    def pos(self) -> int:
        return self.base + self.off

    def left(self) -> int:
        return self.size - self.pos

    def _fill(self, n: int, what: str) -> None:
        """Make ``n`` bytes available at ``off``."""
        if self.off + n <= len(self.buf):
            return
        if n > self.left():
            raise SpecError(f"{self.origin}: truncated: {what} at byte {self.pos:,} needs "
                            f"{n:,} bytes, the file has {self.left():,} left")
        rest = self.buf[self.off:]
        self.base += self.off
        self.f.seek(self.base + len(rest))
        more = self.f.read(max(n - len(rest), self.chunk))
        self.chunk = min(2 * self.chunk, self.most)
        self.buf, self.off = rest + more, 0
        if len(self.buf) < n:
            raise SpecError(f"{self.origin}: truncated while reading {what} at byte "
                            f"{self.pos:,}")

    def unpack(self, fmt: str, size: int, what: str) -> Any:
        self._fill(size, what)
        (value,) = struct.unpack_from(fmt, self.buf, self.off)
        self.off += size
        return value

    def u32(self, what: str) -> int:
        value: int = self.unpack("<I", 4, what)
        return value

    def u64(self, what: str) -> int:
        value: int = self.unpack("<Q", 8, what)
        return value

    def skip(self, n: int, what: str) -> None:
        if n > self.left():
            raise SpecError(f"{self.origin}: truncated: {what} at byte {self.pos:,} takes "
                            f"{n:,} bytes, the file has {self.left():,} left")
        if self.off + n <= len(self.buf):
            self.off += n
        else:
            self.base, self.buf, self.off = self.pos + n, b"", 0

    def count(self, n: int, least: int, what: str) -> int:
        """``n`` items of at least ``least`` bytes each must fit in what is left."""
        if n * least > self.left():
            raise SpecError(f"{self.origin}: {what} {n:,} at byte {self.pos:,} is more than "
                            f"the file could hold ({self.left():,} bytes left)")
        return n

    def string(self, what: str, keep: bool = True, strict: bool = False) -> str | None:
        n = self.u64(f"the length of {what}")
        if n > self.left():
            raise SpecError(f"{self.origin}: the length of {what} ({n:,} bytes) at byte "
                            f"{self.pos - 8:,} is more than the file could hold "
                            f"({self.left():,} bytes left)")
        if not keep or n > MAX_KEPT_STRING:
            self.skip(n, what)
            return None
        self._fill(n, what)
        raw = self.buf[self.off:self.off + n]
        self.off += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            if strict:
                raise SpecError(f"{self.origin}: {what} at byte {self.pos - n:,} is not "
                                "UTF-8") from None
            return raw.decode("utf-8", "replace")

    def skip_strings(self, count: int, what: str) -> None:
        """Skip ``count`` strings (a tokenizer's vocabulary) without building them."""
        unpack = struct.Struct("<Q").unpack_from
        while count:
            buf, off = self.buf, self.off
            end = len(buf)
            # the fast path: walk the buffer while whole strings are in it
            while count and off + 8 <= end:
                (n,) = unpack(buf, off)
                if off + 8 + n > end:
                    break
                off += 8 + n
                count -= 1
            self.off = off
            if count:  # a string that crosses the buffer's end, or a long one
                self.string(what, keep=False)
                count -= 1


def read_gguf(path: Path) -> GGUFHeader:
    """The metadata and tensor infos of ``path``; SpecError names the file and the fault."""
    origin = str(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            return _read(_Reader(f, size, origin))
    except OSError as e:
        raise SpecError(f"{origin}: cannot read: {e.strerror or e}") from None


def read_gguf_from(f: Seekable, size: int, origin: str, chunk: int, most: int) -> GGUFHeader:
    """The header of a GGUF file of ``size`` bytes read from ``f`` (a seekable reader of its
    bytes: a file on the Hub read by Range requests), ``chunk`` bytes first, then twice as
    many each time up to ``most``: a header is read with at most about twice its bytes."""
    return _read(_Reader(f, size, origin, chunk, most))


def _read(r: _Reader) -> GGUFHeader:
    origin = r.origin
    if r.size < 4:
        raise SpecError(f"{origin}: {r.size} bytes is too short for a GGUF file")
    r._fill(4, "the magic")
    magic = r.buf[:4]
    r.off = 4
    if magic != MAGIC:
        raise SpecError(f"{origin}: not a GGUF file (it starts with {quoted(magic)}, not b'GGUF')")
    version = r.u32("the version")
    if version not in VERSIONS:
        if version & 0xFFFF == 0 and version >> 24 in VERSIONS:
            raise SpecError(f"{origin}: a big-endian GGUF file; only little-endian files are "
                            "read")
        raise SpecError(f"{origin}: GGUF version {version} is not supported (versions 2 and "
                        "3 are)")
    n_tensors = r.u64("the tensor count")
    n_kv = r.u64("the metadata count")
    r.count(n_kv, 8 + 4 + 1, "metadata count")
    r.count(n_tensors, 8 + 4 + 4 + 8, "tensor count")
    check_tensor_count(n_tensors, origin)  # a count the file could hold: before any per tensor
    if n_kv > MAX_METADATA:
        raise SpecError(f"{origin}: declares {n_kv:,} metadata entries; a GGUF header is read "
                        f"for at most {MAX_METADATA:,} (llama.cpp's converter writes about 50)")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        at = r.pos
        key = r.string("a metadata key", strict=True)
        assert key is not None
        if key in metadata:
            raise SpecError(f"{origin}: metadata key {quoted(key)} at byte {at:,} appears twice")
        kind = r.u32(f"the type of {quoted(key)}")
        metadata[key] = _value(r, kind, key)
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment <= 0 \
            or alignment & (alignment - 1):
        raise SpecError(f"{origin}: general.alignment {quoted(alignment)} is not a power of two")
    infos = []
    names: set[str] = set()
    for i in range(n_tensors):
        infos.append(_tensor_info(r, i, names))
    data_offset = -(-r.pos // alignment) * alignment
    data_bytes = max(r.size - data_offset, 0)
    tensors = []
    for name, dims, type_id, offset in infos:
        type_name, block, type_size = GGML_TYPE_IDS[type_id]
        if dims and dims[0] % block:
            raise SpecError(f"{origin}: tensor {quoted(name)}: rows of {dims[0]:,} values are not "
                            f"whole blocks of {block} for {type_name}")
        if offset % alignment:
            raise SpecError(f"{origin}: tensor {quoted(name)}: offset {offset:,} is not a multiple "
                            f"of the alignment {alignment}")
        elements = 1
        for n in dims:
            elements *= n
        nbytes = elements // block * type_size
        tensors.append(TensorInfo(name, type_name, tuple(reversed(dims)), nbytes, origin,
                                  offset))
    check_overlaps(tensors, data_bytes, origin)
    return GGUFHeader(version, metadata, tensors, alignment, data_offset, data_bytes)


def _value(r: _Reader, kind: int, key: str, depth: int = 0) -> Any:
    shown = quoted(key)
    what = f"the value of {shown}"
    if kind in _SCALARS:
        return r.unpack(_SCALARS[kind][1], _SIZE[kind], what)
    if kind == _STRING:
        return r.string(what)
    if kind == _ARRAY:
        element = r.u32(f"the element type of {shown}")
        length = r.u64(f"the length of {shown}")
        if element not in _MIN_SIZE:
            raise SpecError(f"{r.origin}: {shown}: unknown array element type {element}")
        r.count(length, _MIN_SIZE[element], f"the length of array {shown},")
        if element in _SCALARS:
            size = _SIZE[element]
            if length <= MAX_KEPT_ARRAY:
                r._fill(length * size, what)
                values = list(struct.unpack_from(f"<{length}{_SCALARS[element][1][1]}", r.buf,
                                                 r.off))
                r.off += length * size
                return values
            r.skip(length * size, what)
            return SkippedArray(_SCALARS[element][0], length)
        if element == _STRING:
            r.skip_strings(length, f"a string of {shown}")
            return SkippedArray("string", length)
        if depth >= 8:
            raise SpecError(f"{r.origin}: {shown}: arrays nested more than 8 deep")
        for _ in range(length):  # arrays of arrays
            _value(r, _ARRAY, key, depth + 1)
        return SkippedArray("array", length)
    raise SpecError(f"{r.origin}: {shown}: unknown metadata value type {kind}")


def _tensor_info(r: _Reader, i: int, names: set[str]) -> tuple[str, list[int], int, int]:
    name = r.string(f"the name of tensor {i}", strict=True)
    assert name is not None
    shown = quoted(name)  # once: the descriptions below are made for every tensor
    if name in names:
        raise SpecError(f"{r.origin}: tensor {shown} appears twice")
    names.add(name)
    n_dims = r.u32(f"the dimensions of {shown}")
    if n_dims > MAX_DIMS:
        raise SpecError(f"{r.origin}: tensor {shown} has {n_dims} dimensions; GGUF allows "
                        f"{MAX_DIMS} at most")
    dims = [r.u64(f"the shape of {shown}") for _ in range(n_dims)]
    if any(n >= 2**63 for n in dims):
        raise SpecError(f"{r.origin}: tensor {shown}: shape {dims} has a negative size")
    type_id = r.u32(f"the type of {shown}")
    if type_id not in GGML_TYPE_IDS:
        raise SpecError(f"{r.origin}: tensor {shown}: unknown GGML type {type_id}")
    offset = r.u64(f"the offset of {shown}")
    return name, dims, type_id, offset
