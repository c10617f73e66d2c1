"""The Hugging Face Hub's settings, read as huggingface_hub reads them: the address
(HF_ENDPOINT), the token (HF_TOKEN and the saved login) and whether to stay offline
(HF_HUB_OFFLINE). Both ``hub.py`` (the cache, then the Hub) and ``hub_download.py`` (the
client) read them here."""

from __future__ import annotations

import os
from pathlib import Path

from specsheet.errors import SpecError, quoted
from specsheet.sources.hf_cache import hf_home

DEFAULT_ENDPOINT = "https://huggingface.co"
TRUE_VALUES = {"1", "ON", "YES", "TRUE"}  # huggingface_hub's reading of a boolean variable


def endpoint() -> str:
    """HF_ENDPOINT (a mirror, say) without its trailing '/', else https://huggingface.co."""
    value = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    if not value.lower().startswith(("http://", "https://")):
        raise SpecError(f"expected an http:// or https:// address, got {quoted(value)}",
                        field="HF_ENDPOINT", value=value)
    return value


def offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) says never to use the network."""
    return any((os.environ.get(name) or "").upper() in TRUE_VALUES
               for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def token() -> str | None:
    """The token huggingface_hub would send: HF_TOKEN (or its older name
    HUGGING_FACE_HUB_TOKEN), else the saved login (HF_TOKEN_PATH, else HF_HOME/token); none
    when HF_HUB_DISABLE_IMPLICIT_TOKEN is set."""
    if (os.environ.get("HF_HUB_DISABLE_IMPLICIT_TOKEN") or "").upper() in TRUE_VALUES:
        return None
    for value in (os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN")):
        if value and value.strip():
            return value.replace("\r", "").replace("\n", "").strip()
    path_text = os.environ.get("HF_TOKEN_PATH")
    path = (Path(os.path.expandvars(os.path.expanduser(path_text))) if path_text
            else hf_home() / "token")
    try:
        saved = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return saved.replace("\r", "").replace("\n", "").strip() or None


class HubUnreachable(SpecError):
    """The Hub was not asked (HF_HUB_OFFLINE) or did not answer (no network, a timeout): a
    name a shipped preset was built from may answer from the preset instead."""
