"""Deterministic rendering for every test: no colour, a fixed width. No test reaches the
Hugging Face Hub: HF_HUB_OFFLINE is set and the Hugging Face home is an empty folder (the tests
of the Hub in test_hub.py lift this, against a local fake Hub)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "160")
    for name in ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf-home")))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
                 "HF_TOKEN_PATH", "HF_ENDPOINT", "TRANSFORMERS_OFFLINE",
                 "HF_HUB_DISABLE_IMPLICIT_TOKEN", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)


def pytest_configure(config: pytest.Config) -> None:
    """Property tests run 200 examples each by default (in CI too), which keeps the suite under
    a minute on two cores; HYPOTHESIS_PROFILE=long runs 20,000 for a deeper local search.

    Loaded before the test modules are imported (hypothesis binds a test's settings when it is
    decorated), in every process that runs tests; pytest-xdist's controller runs none, so it
    need not load hypothesis (seconds, where bytecode cannot be cached)."""
    if getattr(config, "workerinput", None) is None and config.getoption("numprocesses", None):
        return
    from hypothesis import settings

    settings.register_profile("default", max_examples=200, deadline=None)
    settings.register_profile("long", max_examples=20000, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
