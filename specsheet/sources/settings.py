"""Settings and overrides: ``FIELD=VALUE`` strings read by each field's type, and override values
checked before they meet a preset, so that errors name where each came from. Errors about a
setting carry its field; the CLI names the option that gave them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.model.spec import MAX_DIGITS, FieldDoc
from specsheet.sources.fields import (
    SPEC_FIELDS,
    FieldError,
    Given,
    Overrides,
    check_field,
    label_of,
)


def parse_settings(settings: list[str]) -> Overrides:
    """``FIELD=VALUE`` strings as field values, read by each field's type, each with its
    origin (``Given("setting", "kv_heads=64")``)."""
    values = Overrides()
    for setting in settings:
        name, sep, text = setting.partition("=")
        name, text = name.strip().replace("-", "_"), text.strip()
        if not sep or not name:
            raise SpecError(f"expected FIELD=VALUE, got {quoted(setting)}", value=setting)
        doc = SPEC_FIELDS.get(name)
        if doc is None:
            raise SpecError(f"unknown field {quoted(name)}{did_you_mean(name, SPEC_FIELDS)}; the "
                            f"fields are {', '.join(SPEC_FIELDS)}", value=name)
        values[name] = _parse_value(doc, text)
        values.origins[name] = Given("setting", f"{name}={text}")
    return values


def _parse_value(doc: FieldDoc, text: str) -> Any:
    lowered = text.lower()
    if doc.type == "bool":
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise FieldError(f"expected true or false, got {quoted(text)}", field=doc.name, value=text)
    if doc.type == "choice":
        return text
    if doc.type == "kinds":  # attention,mamba2,... one per layer (the spec checks the kinds)
        return [i.strip() for i in text.strip("[]").split(",") if i.strip()]
    if doc.type == "layers":
        if lowered == "all":
            return "all"
        items = [i.strip() for i in text.strip("[]").split(",") if i.strip()]
        if not all(_is_decimal(i) for i in items):
            raise FieldError(f"expected layer indices like 0,2,4 or all, got {quoted(text)}",
                             field=doc.name, value=text)
        return [int(i) for i in items]
    if not _is_decimal(text):
        expected = "a positive integer" if doc.type == "int" else "an integer of 0 or more"
        raise FieldError(f"expected {expected}, got {quoted(text)}", field=doc.name, value=text)
    return int(text)


def _is_decimal(text: str) -> bool:
    """ASCII digits only (str.isdigit also takes ², ① and other scripts' digits), and few
    enough of them to be a size (MAX_DIGITS)."""
    return text.isascii() and text.isdigit() and len(text.lstrip("0")) <= MAX_DIGITS


def check_overrides(overrides: Mapping[str, Any]) -> None:
    """Check override values by type before they meet a source, so that errors name where each
    came from (``Overrides.label``)."""
    for name, value in overrides.items():
        doc = SPEC_FIELDS.get(name)
        try:
            if doc is None:
                raise SpecError(f"unknown field {quoted(name)}{did_you_mean(name, SPEC_FIELDS)}; "
                                f"the fields are {', '.join(SPEC_FIELDS)}")
            check_field(doc, value)
            if doc.type == "int" and value <= 0:
                raise SpecError(f"expected a positive integer, got {value}")
            if doc.type == "count" and value < 0:
                raise SpecError(f"expected an integer of 0 or more, got {value}")
        except SpecError as e:
            raise FieldError(e.message, field=name, value=value,
                             label=label_of(overrides, name)) from None


def check_fields(values: Mapping[str, Any]) -> Overrides:
    """Spec field values given by name (the Python API's keyword arguments), checked by type;
    errors name the field."""
    overrides = Overrides(values)
    check_overrides(overrides)
    return overrides
