"""The hypothesis profile the docs promise is the one a property test runs with."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

RUNS: list[bytes] = []


@given(st.binary(min_size=16, max_size=16))
def _a_property(value: bytes) -> None:
    RUNS.append(value)


def test_a_property_runs_the_profiles_examples() -> None:
    """Decorated at import, as every property test is: it runs the profile's examples."""
    expected = 20_000 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 200
    RUNS.clear()
    _a_property()
    assert len(RUNS) == expected
