"""The hypothesis profile the docs promise is the one in force where the tests run."""

from __future__ import annotations

import os

from hypothesis import settings


def test_the_profile_in_force() -> None:
    expected = 20_000 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 200
    assert settings.default.max_examples == expected
    assert settings.default.deadline is None
