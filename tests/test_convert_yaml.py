"""convert writes a preset's YAML itself: the same text as PyYAML's dump, byte for byte, over
every preset and generated values; whatever it is not sure of goes to PyYAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from specsheet.sources.convert import _emit, _pyyaml, preset_mapping, to_yaml
from specsheet.sources.fields import Overrides
from specsheet.sources.presets import preset_index
from specsheet.sources.resolve import resolve
from tests.test_startup import imported_modules, top_level


@pytest.mark.parametrize("name", list(preset_index()))
def test_every_preset_is_written_as_pyyaml_writes_it(name: str) -> None:
    model = resolve(name, Overrides(), [], 10.0)
    mapping = preset_mapping(model)
    text = _emit(mapping)
    assert text is not None  # every preset takes the path without PyYAML
    assert text == _pyyaml(mapping)
    assert yaml.safe_load(to_yaml(model)) == mapping


CASES: list[dict[str, Any]] = [
    {"description": "Google Gemma 3 1B (2025), 5 local : 1 global layers"},  # single-quoted
    {"description": "it's a model: with a quote"},
    {"description": "C# and 3:1 and a,b [x] {y} - z"},  # plain
    {"description": "yes"}, {"description": "null"}, {"description": "On"},  # not strings
    {"description": "7B model"},  # left to PyYAML (a digit first)
    {"description": "ends with a colon:"},
    {"description": "two  spaces"}, {"description": "trailing "}, {"description": ""},
    {"description": "non-ASCII \u00e9"}, {"description": "a\nb"}, {"description": "a # b"},
    {"description": "word " * 30}, {"description": ("x" * 60 + " ") * 2 + "end"},
    {"sliding_layers": list(range(0, 200, 2))}, {"layer_types": ["mamba2", "attention"] * 30},
    {"layer_types": ["no", "attention"]}, {"dense_layers": []}, {"x": None}, {"x": 1.5},
    {"layers": -3, "tied_embeddings": False, "final_norm": True}, {"on": 1}, {"a b": 1},
    {"xs": [[1]]}, {"k" * 99: [1, 2]},
]


@pytest.mark.parametrize("mapping", CASES, ids=range(len(CASES)))
def test_the_text_is_pyyaml_s_or_left_to_it(mapping: dict[str, Any]) -> None:
    text = _emit(mapping)
    if text is not None:
        assert text == _pyyaml(mapping)


def test_the_cases_take_both_paths() -> None:
    taken = [_emit(m) is not None for m in CASES]
    assert taken[:3] == [True, True, True] and taken[3:7] == [False] * 4


WORDS = st.text(st.sampled_from("abcxyzAEZ019_ :#',-[]{}\"!&*?"), max_size=120)
VALUES = st.one_of(st.integers(), st.booleans(), WORDS,
                   st.lists(st.integers(0, 10**6), max_size=80),
                   st.lists(st.sampled_from(["attention", "mamba2", "linear_attention", "no",
                                             "x_1"]), max_size=60))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "description", "source", "layers", "d",
                                        "sliding_layers", "layer_types"]), VALUES))
def test_generated_mappings(mapping: dict[str, Any]) -> None:
    text = _emit(mapping)
    if text is not None:
        assert text == _pyyaml(mapping)


def test_convert_of_a_preset_imports_no_yaml(tmp_path: Path) -> None:
    assert "yaml" not in top_level(imported_modules("convert", "gemma3-27b", cwd=tmp_path))
    assert "yaml" not in top_level(imported_modules("convert", "llama3-8b", cwd=tmp_path))
