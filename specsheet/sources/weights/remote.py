"""A Hub repository's checkpoint read from its headers alone, by HTTP Range requests: no
weights are downloaded.

The repository's files come from the Hub's API (``/api/models/ORG/NAME/revision/REV``, as
huggingface_hub's ``model_info`` lists them), and every file is then read at the commit that
named, so that the headers and the config are of one revision. Which files hold the weights:
a sharded checkpoint's ``model.safetensors.index.json`` (read whole: a few MB), else the
``.safetensors`` files at the top of the repository, else its one ``.gguf`` file (or the file
``ORG/NAME:FILE`` names, with its splits). A safetensors header is two requests: its first 8
bytes (the header's length; the answer's Content-Range gives the file's size), then the header;
a GGUF header is read from the start in requests of 16 KiB, then twice as many bytes each
time up to 16 MiB, until the tensor infos end (where the tensor data begins), so a header is
read with at most about twice its bytes. A header larger than any published one is refused
before it is asked for (safetensors: the safetensors library's 100 MB; GGUF: 256 MiB read
without reaching the tensor data), and so is a server that ignores Range and would send a
whole file (sources/hub_download.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from specsheet.errors import SpecError, quoted
from specsheet.quant.stored import Format
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.weights import INDEX, WeightFiles, gather

FIRST_CHUNK = 16 * 1024  # a GGUF's first request: the header of a small model whole
MOST_CHUNK = 16 * 2**20  # the largest request (a 256,000-token vocabulary takes a few)
MAX_GGUF_HEADER = 256 * 2**20  # bytes read of one GGUF file without reaching its tensor data
MAX_INDEX_BYTES = 64 * 2**20  # DeepSeek-V3's index of 90,000 tensors is 8.9 MB
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")  # llama.cpp's gguf-split names


def hub_source(ref: str) -> tuple[str, str | None, str | None] | None:
    """``ORG/NAME[@REVISION][:FILE]`` as (repository, revision, file), or None when ``ref``
    does not name a Hub repository."""
    from specsheet.sources.hub import parse_reference

    name, colon, file = ref.partition(":")
    if colon and (not file or file.startswith("/") or ".." in file.split("/")):
        return None
    if name.lower().endswith((".gguf", ".safetensors")):  # a file that is not there
        return None
    found = parse_reference(name)
    if found is None:
        return None
    return found.repo_id, found.revision, file or None


def read_hub_weights(repo_id: str, revision: str | None, file: str | None,
                     timeout: float = DEFAULT_TIMEOUT) -> WeightFiles:
    """The headers of the checkpoint of Hub repository ``repo_id`` at ``revision`` (main),
    or of its file ``file``; ``folder`` is where its config.json was put in the local cache
    (or the repository's name when it has none)."""
    from specsheet.sources.hub_download import repository_files

    commit, names = repository_files(repo_id, revision or "main", timeout)
    at = f"{repo_id}@{revision}" if revision else repo_id
    chosen = _choose(at, names, file)
    if chosen == [INDEX]:
        weights = _index(repo_id, commit, names, timeout)
    elif chosen[0].endswith(".gguf"):
        weights = _gather("gguf", repo_id, commit, chosen, timeout)
    else:
        weights = _gather("safetensors", repo_id, commit, chosen, timeout)
    folder = Path(repo_id)
    if "config.json" in names:
        from specsheet.sources.hub import HubReference, hub_config

        folder = hub_config(HubReference(repo_id, commit), timeout).parent
    return weights._replace(folder=folder)


def _choose(at: str, names: list[str], file: str | None) -> list[str]:
    """The files to read: the index, the top-level safetensors files, or one GGUF file and
    its splits."""
    ggufs = sorted(n for n in names if n.endswith(".gguf"))
    if file is not None:
        if file not in names:
            known = ", ".join(ggufs[:8] or sorted(names)[:8]) or "none"
            raise SpecError(f"{at} has no file {quoted(file)} (its weights files: {known})")
        if not file.endswith((".gguf", ".safetensors")) and file != INDEX:
            raise SpecError(f"{quoted(file)} is not a weights file; expected a .gguf or "
                            f".safetensors file or {INDEX}", source=at)
        return _splits(file, names) if file.endswith(".gguf") else [file]
    if INDEX in names:
        return [INDEX]
    shards = sorted(n for n in names if "/" not in n and n.endswith(".safetensors"))
    if shards:
        return shards
    whole = [n for n in ggufs if (m := _SPLIT.search(n)) is None or m.group(1) == "00001"]
    if len(whole) == 1:
        return _splits(whole[0], names)
    if whole:
        listed = ", ".join(whole[:12]) + (f" and {len(whole) - 12} more" if len(whole) > 12
                                          else "")
        raise SpecError(f"{at} holds {len(whole)} GGUF files: {listed}; name one as "
                        f"{at}:FILE")
    raise SpecError(f"{at} holds no weights files (no .safetensors, {INDEX} or .gguf); "
                    f"its files: {', '.join(sorted(names)[:12]) or 'none'}")


def _splits(file: str, names: list[str]) -> list[str]:
    """A GGUF file, or every split of a split one (llama.cpp's NAME-00001-of-0000N.gguf)."""
    match = _SPLIT.search(file)
    if match is None:
        return [file]
    count = int(match.group(2))
    parts = [file[:match.start()] + f"-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)]
    missing = [p for p in parts if p not in names]
    if missing:
        raise SpecError(f"{file} is split in {count} files and the repository lacks "
                        f"{missing[0]}")
    return parts


def _index(repo_id: str, commit: str, names: list[str], timeout: float) -> WeightFiles:
    """A sharded checkpoint: the index's weight_map names each tensor's shard (index.py)."""
    from specsheet.sources.hub_download import fetch_file
    from specsheet.sources.weights.index import check_shards, weight_map_of

    origin = f"{repo_id}/{INDEX}"
    raw = fetch_file(repo_id, commit, INDEX, MAX_INDEX_BYTES, timeout)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        data = None
    weight_map, shards = weight_map_of(data, origin)
    for shard in shards:
        if shard not in names:
            raise SpecError(f"{origin}: names shard {quoted(shard)}, which the repository lacks")
    counts: list[int] = []  # each shard's tensors, in turn
    weights = _gather("safetensors", repo_id, commit, shards, timeout, counts)
    check_shards(weight_map, shards, counts, weights.tensors, origin)
    return weights


def _gather(kind: Format, repo_id: str, commit: str, files: list[str], timeout: float,
            counts: list[int] | None = None) -> WeightFiles:
    """Every file's tensors (each name once, unless ``counts`` is asked for: the index
    checks), and the first file's metadata."""
    paths = {Path(f"{repo_id}/{name}"): name for name in files}
    read = _gguf if kind == "gguf" else _safetensors
    return gather(kind, list(paths), Path(repo_id),
                  lambda path: read(repo_id, commit, paths[path], f"{repo_id}/{paths[path]}",
                                    timeout),
                  unique=counts is None, counts=counts)


def _safetensors(repo_id: str, commit: str, name: str, origin: str, timeout: float) -> Any:
    """Its first 8 bytes, then its header: two requests."""
    from specsheet.sources.hub_download import fetch_bytes
    from specsheet.sources.weights.safetensors import header_length, parse_header

    head, size = fetch_bytes(repo_id, commit, name, 0, 7, timeout)
    if len(head) < 8:
        raise SpecError(f"{origin}: {size} bytes is too short for a safetensors file "
                        "(8 bytes of header length come first)")
    length = header_length(head, size, origin)
    raw = fetch_bytes(repo_id, commit, name, 8, 8 + length - 1, timeout)[0] if length else b""
    return parse_header(raw, length, size, origin)


class _RemoteFile:
    """A file on the Hub as the GGUF reader reads it: seek, then read by a Range request (the
    first chunk asked for when it is opened, to learn the file's size)."""

    def __init__(self, repo_id: str, commit: str, name: str, origin: str,
                 timeout: float) -> None:
        from specsheet.sources.hub_download import fetch_bytes

        self.ask = (repo_id, commit, name)
        self.origin, self.timeout, self.pos = origin, timeout, 0
        self.first, self.size = fetch_bytes(repo_id, commit, name, 0, FIRST_CHUNK - 1, timeout)
        self.fetched = len(self.first)

    def seek(self, offset: int, /) -> int:
        self.pos = offset
        return offset

    def read(self, n: int, /) -> bytes:
        from specsheet.sources.hub_download import fetch_bytes

        end = min(self.pos + n, self.size)
        if end <= len(self.first):
            data = self.first[self.pos:end]
        elif self.pos >= end:
            data = b""
        else:
            if self.fetched + end - self.pos > MAX_GGUF_HEADER:
                raise SpecError(f"{self.origin}: {MAX_GGUF_HEADER // 2**20} MiB of its "
                                "header read without reaching the tensor data; larger than "
                                "any GGUF header (a tokenizer of 256,000 tokens takes a few "
                                "MB), so nothing more is read")
            data = fetch_bytes(*self.ask, self.pos, end - 1, self.timeout)[0]
            self.fetched += len(data)
        self.pos += len(data)
        return data


def _gguf(repo_id: str, commit: str, name: str, origin: str, timeout: float) -> Any:
    from specsheet.sources.weights.gguf import read_gguf_from

    remote = _RemoteFile(repo_id, commit, name, origin, timeout)
    return read_gguf_from(remote, remote.size, origin, FIRST_CHUNK, MOST_CHUNK)
