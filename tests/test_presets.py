"""The shipped presets: their published totals, and the index (Python data) against the YAML
files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from specsheet.model.params import count_params
from specsheet.sources.presets import preset_index, preset_yaml_dir
from specsheet.sources.resolve import load_file, load_preset

YAML_FILES = sorted(preset_yaml_dir().glob("*.yaml"))


def test_the_issue_presets_are_shipped() -> None:
    names = set(preset_index())
    assert {"gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama3-8b", "llama3-70b",
            "tiny"} <= names
    assert {p.stem for p in YAML_FILES} == names


@pytest.mark.parametrize("name", sorted(preset_index()))
def test_every_preset_matches_its_published_total(name: str) -> None:
    model = load_preset(name)
    assert model.published_total is not None, f"{name} records no published_total"
    assert model.reference, f"{name} records no source"
    assert count_params(model.spec).total == model.published_total


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.stem)
def test_index_agrees_with_the_yaml_source_of_truth(path: Path) -> None:
    assert preset_index()[path.stem] == yaml.safe_load(path.read_text(encoding="utf-8"))
    assert load_file(path).spec == load_preset(path.stem).spec


def test_index_is_what_the_build_script_writes() -> None:
    """The committed preset_data.py is byte for byte what scripts/build_presets.py writes."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "build_presets.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
