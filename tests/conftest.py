"""Deterministic rendering for every test: no colour, a fixed width."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "160")
    for name in ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
