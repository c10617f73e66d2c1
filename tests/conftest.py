"""Deterministic rendering for every test: no colour, a fixed width."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "160")
    for name in ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)


# Property tests run 200 examples each by default (in CI too), which keeps the suite under a
# minute on two cores; HYPOTHESIS_PROFILE=long runs 20,000 for a deeper local search.
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("long", max_examples=20000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
