"""The local Hugging Face hub cache: where it is, and a repository's cached config.json."""

from __future__ import annotations

from pathlib import Path

from specsheet.errors import SpecError


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: HF_HUB_CACHE, else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub."""
    import os

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "huggingface" / "hub"


def cached_config(repo_id: str) -> Path:
    """The config.json of ``repo_id`` (ORG/NAME) in the local Hugging Face cache: the
    snapshot that refs/main names, else the newest snapshot holding one. Never the network."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise SpecError(f"--hf: expected ORG/NAME (e.g. meta-llama/Llama-3.1-8B), "
                        f"got {repo_id!r}")
    folder = hf_cache_dir() / ("models--" + repo_id.replace("/", "--"))
    ref = folder / "refs" / "main"
    candidates = []
    if ref.is_file():
        candidates.append(folder / "snapshots" / ref.read_text().strip() / "config.json")
    snapshots = folder / "snapshots"
    if snapshots.is_dir():
        candidates += sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime,
                             reverse=True)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise SpecError(f"{repo_id}: no config.json in the local Hugging Face cache (looked in "
                    f"{folder}); download it with: huggingface-cli download {repo_id} "
                    "config.json")


def cached_snapshot(repo_id: str) -> Path:
    """The snapshot folder of ``repo_id`` (ORG/NAME) in the local Hugging Face cache: the one
    refs/main names, else the newest. Never the network."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise SpecError(f"hf: expected ORG/NAME (e.g. meta-llama/Llama-3.1-8B), got {repo_id!r}")
    folder = hf_cache_dir() / ("models--" + repo_id.replace("/", "--"))
    ref = folder / "refs" / "main"
    if ref.is_file():
        snapshot = folder / "snapshots" / ref.read_text().strip()
        if snapshot.is_dir():
            return snapshot
    snapshots = folder / "snapshots"
    found = sorted((p for p in snapshots.iterdir() if p.is_dir()),
                   key=lambda p: p.stat().st_mtime, reverse=True) if snapshots.is_dir() else []
    if found:
        return found[0]
    raise SpecError(f"{repo_id}: not in the local Hugging Face cache (looked in {folder}); "
                    f"download it with: huggingface-cli download {repo_id}")
