"""Which files hold a checkpoint's weights: a ``.safetensors`` or ``.gguf`` file, a folder of
them, a sharded checkpoint's ``model.safetensors.index.json``, or ``hf:ORG/NAME`` (a snapshot in
the local Hugging Face cache). Only headers are read."""

from __future__ import annotations

from pathlib import Path

from specsheet.errors import SpecError, quoted
from specsheet.sources.weights import INDEX as INDEX  # re-exported
from specsheet.sources.weights import WeightFiles as WeightFiles
from specsheet.sources.weights import gather


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
    """A sharded checkpoint: the index's weight_map names each tensor's shard (index.py)."""
    from specsheet.sources.files import parse_json, read_text
    from specsheet.sources.weights.index import check_shards, weight_map_of

    weight_map, names = weight_map_of(parse_json(read_text(path), str(path)), str(path))
    shards: list[Path] = []
    for shard in names:
        if Path(shard).name != shard or shard in ("", ".", ".."):
            raise SpecError(f"{path}: shard {quoted(shard)} is not a file name in the folder")
        shards.append(path.parent / shard)
        if not shards[-1].is_file():
            raise SpecError(f"{path}: names shard {quoted(shard)}, which is missing from "
                            f"{path.parent}")
    counts: list[int] = []  # each shard's tensors, in turn
    files = _safetensors(shards, path.parent, unique=False, counts=counts)
    check_shards(weight_map, names, counts, files.tensors, str(path))
    return files


def _safetensors(paths: list[Path], folder: Path, unique: bool = True,
                 counts: list[int] | None = None) -> WeightFiles:
    from specsheet.sources.weights.safetensors import checked_shapes, read_safetensors

    checked = checked_shapes()  # shared by the files
    return gather("safetensors", paths, folder, lambda p: read_safetensors(p, checked), unique,
                  counts)


def _gguf(paths: list[Path], folder: Path) -> WeightFiles:
    """One GGUF file, or the splits of one (metadata from the first)."""
    from specsheet.sources.weights.gguf import read_gguf

    return gather("gguf", paths, folder, read_gguf)
