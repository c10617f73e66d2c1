"""Every example in the library's docstrings runs and prints what it shows (doctest)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "specsheet"
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py") if ">>> " in path.read_text("utf-8"))


def test_the_examples_are_found() -> None:
    assert "specsheet.api.fit_ways" in MODULES and len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_examples_print_what_they_show(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
