"""Errors carry their field, and the CLI names it once (specsheet.cli.errors): the library
raises with ``field=``, records where an override came from, and never parses a message."""

from __future__ import annotations

import pytest

import specsheet
from specsheet.cli.errors import NAMING, as_option, given_by_options, option_of
from specsheet.errors import SpecError
from specsheet.sources.fields import Given, Overrides, build_spec
from specsheet.units import parse_quantity

GPT2 = {"layers": 12, "d_model": 768, "heads": 12, "vocab": 50257, "context": 1024}


def test_the_library_raises_with_the_field() -> None:
    with pytest.raises(SpecError) as e:
        specsheet.load("gpt2-small", kv_heads=5)
    assert (e.value.field, e.value.value) == ("kv_heads", 5)
    assert str(e.value).startswith("field 'kv_heads': 5 does not divide heads 12")
    with pytest.raises(SpecError) as e:
        parse_quantity("lots", "bytes", "kv_memory")
    assert e.value.field == "kv_memory"
    assert str(e.value).startswith("kv_memory: 'lots' is not a quantity")


@pytest.mark.parametrize(("field", "value", "option"), [
    ("kv_heads", 5, "--kv-heads"), ("d_ff", 5, "--d-ff"), ("tied_embeddings", True, "--tied"),
    ("tied_embeddings", False, "--untied"), ("kv_dtype", "fp12", "--kv-dtype"),
    ("group size", 0, "--group-size")])
def test_a_field_maps_to_its_option(field: str, value: object, option: str) -> None:
    assert option_of(field, value) == option
    error = as_option(SpecError("bad", field=field, value=value))
    assert str(error) == f"option {option}: bad"
    assert error.field == field


@pytest.mark.parametrize(("given", "label"), [
    (Given("option"), "option --kv-heads"),
    (Given("setting", "kv_heads=5"), "option --set kv_heads=5"),
    (Given("option", at="5"), "option --kv-heads (at 5)"),
    (Given("setting", "kv_heads", "5"), "option --set kv_heads (at 5)")])
def test_an_override_is_named_by_where_it_came_from(given: Given, label: str) -> None:
    overrides = given_by_options({"kv_heads": 5}, {"kv_heads": given})
    with pytest.raises(SpecError) as e:
        build_spec(GPT2, "preset gpt2-small", overrides)
    assert str(e.value) == (f"{label}: 5 does not divide heads 12; each key/value head must "
                            "serve a whole group of query heads (with preset gpt2-small)")
    assert e.value.field == "kv_heads"
    plain = Overrides({"kv_heads": 5})  # the library's own words, with no CLI naming
    with pytest.raises(SpecError, match="^field 'kv_heads': 5 does not divide"):
        build_spec(GPT2, "preset gpt2-small", plain)
    assert NAMING.spelled("d_model") == "--d-model"
