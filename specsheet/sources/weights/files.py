"""Which files hold a checkpoint's weights: a ``.safetensors`` or ``.gguf`` file, a folder of
them, a sharded checkpoint's ``model.safetensors.index.json``, or ``hf:ORG/NAME`` (a snapshot in
the local Hugging Face cache). Only headers are read."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from specsheet.errors import SpecError, quoted
from specsheet.quant.stored import Format, TensorRow
from specsheet.sources.weights import INDEX as INDEX  # re-exported
from specsheet.sources.weights import WeightFiles as WeightFiles
from specsheet.sources.weights.tensor import check_tensor_count

_NAME = itemgetter(0)  # a tensor's name, read at C speed


def read_weights(ref: str) -> WeightFiles:
    """The headers of the checkpoint ``ref`` names (a path or ``hf:ORG/NAME``)."""
    if not ref:  # not the current folder, as Path("") would read it: a variable left unset
        raise SpecError("expected a checkpoint: a .safetensors or .gguf file, a folder of them, "
                        "an index.json, or ORG/NAME; got an empty name", value=ref)
    if ref.startswith("hf:"):
        from specsheet.sources.hf_cache import cached_snapshot

        path = cached_snapshot(ref[3:])
    else:
        path = Path(ref)
    if not path.exists():
        return _hub(ref, path)
    if path.is_dir():
        return _folder(path)
    if not path.is_file():
        raise SpecError(f"{path}: not a regular file; expected a .safetensors or .gguf file, "
                        "or a folder of them")
    if path.name.endswith(".json"):
        return _index(path)
    if path.suffix == ".gguf" or _starts_with_gguf(path):
        return _gguf([path], path.parent)
    return _safetensors([path], path.parent)


def _hub(ref: str, path: Path) -> WeightFiles:
    """``ORG/NAME[@REVISION][:FILE]`` that is no path: its headers read from the Hub by Range
    requests (remote.py), or from the local cache's snapshot when HF_HUB_OFFLINE is set."""
    from specsheet.sources.weights.remote import hub_source

    found = hub_source(ref) if not ref.startswith("hf:") else None
    if found is None:
        raise SpecError(f"{path}: no such file or directory")
    from specsheet.sources.hub_settings import offline

    if offline():  # never the network: the snapshot in the cache, if any
        from specsheet.sources.hf_cache import cached_snapshot

        snapshot = cached_snapshot(found[0])
        return read_weights(str(snapshot / found[2]) if found[2] else str(snapshot))
    from specsheet.sources.weights.remote import read_hub_weights

    return read_hub_weights(*found)


def _starts_with_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"GGUF"
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None


def _folder(path: Path) -> WeightFiles:
    if (path / INDEX).is_file():
        return _index(path / INDEX)
    shards = sorted(p for p in path.glob("*.safetensors") if p.is_file())
    if shards:
        return _safetensors(shards, path)
    ggufs = sorted(p for p in path.glob("*.gguf") if p.is_file())
    if ggufs:
        return _gguf(ggufs, path)
    raise SpecError(f"{path}: a directory without weights (no .safetensors, .gguf or {INDEX})")


def _index(path: Path) -> WeightFiles:
    """A sharded checkpoint: the index's weight_map names each tensor's shard."""
    from specsheet.sources.files import parse_json, read_text

    data = parse_json(read_text(path), str(path))
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    expected = f"{path}: expected a mapping with a weight_map of tensor names to shard files"
    if not isinstance(weight_map, dict):
        raise SpecError(expected)
    try:  # each shard once, in the order of its first tensor
        named = dict.fromkeys(weight_map.values())
    except TypeError:  # a list or a mapping for a shard
        raise SpecError(expected) from None
    if not {str}.issuperset(map(type, named)):  # JSON's text is a str, never a subclass
        raise SpecError(expected)
    check_tensor_count(len(weight_map), str(path))
    shards: dict[str, Path] = {}
    for shard in named:
        if Path(shard).name != shard or shard in ("", ".", ".."):
            raise SpecError(f"{path}: shard {quoted(shard)} is not a file name in the folder")
        shards[shard] = path.parent / shard
        if not shards[shard].is_file():
            raise SpecError(f"{path}: names shard {quoted(shard)}, which is missing from "
                            f"{path.parent}")
    if not shards:
        raise SpecError(f"{path}: the weight_map names no tensors")
    counts: list[int] = []  # each shard's tensors, in turn
    files = _safetensors(list(shards.values()), path.parent, unique=False, counts=counts)
    tensors = files.tensors
    # every name of the index in the shard it names, and as many tensors as names: then the
    # tensors are the index's names, one each (N names in N places), each where the index
    # says and none in two shards. Looked up in the index's order, each in its shard's set,
    # a lookup lands near the one before; each tensor's name looked up in the index jumped
    # across all of it (as many instructions, a third more time for DeepSeek-V3's)
    in_order = map(_NAME, tensors)
    held = {shard: set(islice(in_order, count)) for shard, count in zip(shards, counts,
                                                                          strict=True)}
    if len(tensors) == len(weight_map) and all(map(
            set.__contains__, map(held.__getitem__, weight_map.values()), weight_map)):
        return files
    names = list(map(_NAME, tensors))
    held_in: list[str] = []  # the shard of each tensor
    for shard, count in zip(shards, counts, strict=True):
        held_in += [shard] * count
    where = dict(zip(names, held_in, strict=True))
    if len(where) != len(tensors):  # a name in two shards (each once: no set of the names)
        _unique(tensors)
    if where == weight_map:  # every tensor where the index says (the rest: one by one)
        return files
    for name, shard in weight_map.items():
        if where.get(name) != shard:
            raise SpecError(f"{path}: maps tensor {quoted(name)} to {shard}, which does "
                            "not hold it")
    return files



def _safetensors(paths: list[Path], folder: Path, unique: bool = True,
                 counts: list[int] | None = None) -> WeightFiles:
    from specsheet.sources.weights.safetensors import checked_shapes, read_safetensors

    checked = checked_shapes()  # shared by the files
    return _gather("safetensors", paths, folder, lambda p: read_safetensors(p, checked), unique,
                   counts)


def _gguf(paths: list[Path], folder: Path) -> WeightFiles:
    """One GGUF file, or the splits of one (metadata from the first)."""
    from specsheet.sources.weights.gguf import read_gguf

    return _gather("gguf", paths, folder, read_gguf)


def _gather(kind: Format, paths: list[Path], folder: Path,
            read: Callable[[Path], Any], unique: bool = True,
            counts: list[int] | None = None) -> WeightFiles:
    """Every file's tensors (each name once; ``unique=False``: the caller checks), and the
    first file's metadata; ``counts`` is given each file's number of tensors, in turn."""
    tensors: list[TensorRow] = []
    metadata: dict[str, Any] = {}
    for i, p in enumerate(paths):
        header = read(p)
        check_tensor_count(len(header.tensors), str(p), len(tensors))
        tensors += header.tensors
        if counts is not None:
            counts.append(len(header.tensors))
        if i == 0:
            metadata = header.metadata
    if unique:
        _unique(tensors)
    return WeightFiles(kind, paths, tensors, metadata, folder)


def _unique(tensors: list[TensorRow]) -> None:
    if len(set(map(_NAME, tensors))) == len(tensors):
        return
    seen: dict[str, str] = {}
    for name, _, _, _, file, _ in tensors:
        if name in seen:
            raise SpecError(f"tensor {quoted(name)} is in both {seen[name]} and {file}")
        seen[name] = file
