"""The Hugging Face Hub: what names a repository (ORG/NAME[@REVISION]), and a
repository's config.json: read from the local cache with no request at all, else downloaded once
into it by ``hub_download.py`` (imported only then, and urllib with it) so that the next call is
offline and fast. The Hub's settings (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE) are read in
``hub_settings.py``. docs/hub.md has the rules and the measurements behind them.
"""

from __future__ import annotations

from pathlib import Path

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.sources import DEFAULT_TIMEOUT, FILE_SUFFIXES
from specsheet.sources.hf_cache import download_hint, find_cached_config, repo_folder
from specsheet.sources.hub_settings import HubUnreachable, offline

# huggingface_hub's rules for a repository id: ORG/NAME of letters, digits, '-', '_' and '.',
# each part neither starting nor ending with '-' or '.', no '--' or '..', 96 characters at most
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _is_repo_id(text: str) -> bool:
    parts = text.split("/")
    return (len(parts) == 2 and len(text) <= 96 and "--" not in text and ".." not in text
            and all(part and set(part) <= _NAME_CHARS and part[0] not in ".-"
                    and part[-1] not in ".-" for part in parts))


class HubReference(NamedTuple):
    """A model repository on the Hub, and the revision asked for."""

    repo_id: str  # ORG/NAME
    revision: str | None  # a branch, tag or commit; None: main, or what the cache holds

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision is not None else "")


def parse_reference(text: str) -> HubReference | None:
    """``ORG/NAME`` or ``ORG/NAME@REVISION`` as a HubReference; None when ``text`` does not
    name a repository. A repository named with a revision that cannot be one is a SpecError."""
    repo_id, at, revision = text.partition("@")
    if not _is_repo_id(repo_id) or repo_id.lower().endswith(FILE_SUFFIXES):
        return None
    if not at:
        return HubReference(repo_id, None)
    parts = revision.split("/")
    if (not revision or len(revision) > 256 or any(p in ("", ".", "..") for p in parts)
            or any(c.isspace() or not c.isprintable() or c in "\\:" for c in revision)):
        raise SpecError(f"expected ORG/NAME@REVISION with a branch, tag or commit "
                        f"after '@', got {quoted(revision)}", source=text)
    return HubReference(repo_id, revision)


def hub_config(ref: HubReference, timeout: float = DEFAULT_TIMEOUT) -> Path:
    """The path of ``ref``'s config.json: the cached one, read with no request; else the one
    downloaded into the cache (unless HF_HUB_OFFLINE is set)."""
    cached = find_cached_config(ref.repo_id, ref.revision)
    if cached is not None:
        return cached
    if offline():
        where = repo_folder(ref.repo_id)
        raise HubUnreachable(f"not in the local Hugging Face cache (looked in {where}) and "
                        f"HF_HUB_OFFLINE is set, so the Hub was not asked; unset it, or "
                        f"download the file with: {download_hint(ref.repo_id)}", source=str(ref))
    from specsheet.sources.hub_download import download_config

    return download_config(ref.repo_id, ref.revision or "main", timeout)
