"""The README shows real output, and documents every command and preset field."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from specsheet.cli.app import COMMANDS as _COMMANDS
from specsheet.model.spec import FIELD_DOCS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def load_script(name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_output_is_current() -> None:
    """Run python scripts/update_readme.py when this fails."""
    text = README.read_text(encoding="utf-8")
    assert load_script("update_readme").render(text) == text  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", list(_COMMANDS))
def test_every_command_is_in_the_readme(command: str) -> None:
    assert f"specsheet {command}" in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("field", [f.name for f in FIELD_DOCS])
def test_every_preset_field_is_documented(field: str) -> None:
    assert f"| `{field}` |" in README.read_text(encoding="utf-8")


def test_readme_setup_commands_are_the_ci_commands() -> None:
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = "pip install '.[test]' && pytest"
    assert test_command in readme and test_command in ci
    assert "pip install . && specsheet count gpt2-small" in readme
