"""The local Hugging Face hub cache: where it is, what it holds, and a repository's cached
config.json. Reading only, and never the network (``hub.py`` downloads into this layout).

The layout is huggingface_hub's, so either tool reads what the other wrote::

    <cache>/models--ORG--NAME/blobs/<etag>                      the file's bytes
    <cache>/models--ORG--NAME/snapshots/<commit>/config.json    a link to the blob (or a copy)
    <cache>/models--ORG--NAME/refs/<revision>                   the commit a branch or tag named
"""

from __future__ import annotations

import os
from pathlib import Path

from specsheet.errors import SpecError, quoted


def is_commit(revision: str) -> bool:
    """True for a full commit hash (40 lower-case hex digits): a revision that needs no ref."""
    return len(revision) == 40 and set(revision) <= set("0123456789abcdef")


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, as huggingface_hub finds it: HF_HUB_CACHE, else
    HUGGINGFACE_HUB_CACHE (its older name), else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return _expand(os.environ[variable])
    return hf_home() / "hub"


def hf_home() -> Path:
    """HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface (where the saved
    login token lives too)."""
    if os.environ.get("HF_HOME"):
        return _expand(os.environ["HF_HOME"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return _expand(cache) / "huggingface"


def _expand(path: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(path)))


def repo_folder(repo_id: str) -> Path:
    """The cache folder of model repository ``repo_id`` (ORG/NAME)."""
    return hf_cache_dir() / ("models--" + repo_id.replace("/", "--"))


def cached_repos() -> list[str]:
    """The model repositories (ORG/NAME) that have a folder in the cache."""
    try:
        names = [p.name for p in hf_cache_dir().iterdir()]
    except OSError:
        return []
    return sorted(name[len("models--"):].replace("--", "/", 1) for name in names
                  if name.startswith("models--") and name.count("--") == 2)


def find_cached_config(repo_id: str, revision: str | None = None) -> Path | None:
    """The cached config.json of ``repo_id`` at ``revision`` (a branch, tag or commit), or
    None. With no revision: the snapshot that refs/main names; in a folder with no refs at all
    (filled by hand or by an older tool), the newest snapshot holding one. A revision given is
    matched exactly: a commit's snapshot, or the snapshot its ref names."""
    folder = repo_folder(repo_id)
    wanted = revision or "main"
    commit = wanted if is_commit(wanted) else _read_ref(folder / "refs" / wanted)
    if commit is not None:
        candidate = folder / "snapshots" / commit / "config.json"
        if candidate.is_file():
            return candidate
    if revision is not None or (folder / "refs").exists():
        return None
    try:
        snapshots = [p for p in (folder / "snapshots").glob("*/config.json") if p.is_file()]
    except OSError:
        return None
    return max(snapshots, key=lambda p: p.stat().st_mtime, default=None)


def _read_ref(path: Path) -> str | None:
    """The commit that a ref file names, or None when there is none (or it is not a name)."""
    try:
        commit = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return commit if commit and "/" not in commit and "\\" not in commit and commit not in (
        ".", "..") else None


def download_hint(repo_id: str) -> str:
    """How a user puts ``repo_id``'s config.json into the cache with the Hugging Face CLI."""
    return f"hf download {repo_id} config.json"


def cached_snapshot(repo_id: str) -> Path:
    """The snapshot folder of ``repo_id`` (ORG/NAME) in the local Hugging Face cache: the one
    refs/main names, else the newest. Never the network."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise SpecError(f"expected ORG/NAME (e.g. meta-llama/Llama-3.1-8B), got {quoted(repo_id)}",
                        field="hf")
    folder = repo_folder(repo_id)
    commit = _read_ref(folder / "refs" / "main")
    if commit is not None and (folder / "snapshots" / commit).is_dir():
        return folder / "snapshots" / commit
    snapshots = folder / "snapshots"
    try:
        found = sorted((p for p in snapshots.iterdir() if p.is_dir()),
                       key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        found = []
    if found:
        return found[0]
    raise SpecError(f"not in the local Hugging Face cache (looked in {folder}); "
                    f"download it with: hf download {repo_id}", source=repo_id)
