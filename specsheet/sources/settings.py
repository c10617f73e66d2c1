"""Option values: ``--set FIELD=VALUE`` strings read by each field's type, and the named options
checked before they meet a preset, so that errors name the option."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specsheet.errors import SpecError, did_you_mean
from specsheet.model.spec import MAX_DIGITS, FieldDoc
from specsheet.sources.fields import SPEC_FIELDS, Overrides, check_field, label_of


def parse_settings(settings: list[str]) -> Overrides:
    """``FIELD=VALUE`` strings from ``--set`` as field values, read by each field's type."""
    values = Overrides(option_prefix="--")
    for setting in settings:
        name, sep, text = setting.partition("=")
        name, text = name.strip().replace("-", "_"), text.strip()
        if not sep or not name:
            raise SpecError(f"option --set: expected FIELD=VALUE, got {setting!r}")
        doc = SPEC_FIELDS.get(name)
        if doc is None:
            raise SpecError(f"option --set: unknown field {name!r}"
                            f"{did_you_mean(name, SPEC_FIELDS)}; the fields are "
                            f"{', '.join(SPEC_FIELDS)}")
        values[name] = _parse_value(doc, text)
        values.labels[name] = f"option --set {name}={text}"
    return values


def _parse_value(doc: FieldDoc, text: str) -> Any:
    lowered = text.lower()
    if doc.type == "bool":
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise SpecError(f"option --set: field '{doc.name}': expected true or false, "
                        f"got {text!r}")
    if doc.type == "choice":
        return text
    if doc.type == "kinds":  # attention,mamba2,... one per layer (the spec checks the kinds)
        return [i.strip() for i in text.strip("[]").split(",") if i.strip()]
    if doc.type == "layers":
        if lowered == "all":
            return "all"
        items = [i.strip() for i in text.strip("[]").split(",") if i.strip()]
        if not all(_is_decimal(i) for i in items):
            raise SpecError(f"option --set: field '{doc.name}': expected layer indices "
                            f"like 0,2,4 or all, got {text!r}")
        return [int(i) for i in items]
    if not _is_decimal(text):
        expected = "a positive integer" if doc.type == "int" else "an integer of 0 or more"
        raise SpecError(f"option --set: field '{doc.name}': expected {expected}, got {text!r}")
    return int(text)


def _is_decimal(text: str) -> bool:
    """ASCII digits only (str.isdigit also takes ², ① and other scripts' digits), and few
    enough of them to be a size (MAX_DIGITS)."""
    return text.isascii() and text.isdigit() and len(text.lstrip("0")) <= MAX_DIGITS


def check_overrides(overrides: Mapping[str, Any]) -> None:
    """Check override values by type before they meet a source, so that errors name where each
    came from (``option --layers: ...``)."""
    for name, value in overrides.items():
        doc = SPEC_FIELDS.get(name)
        try:
            if doc is None:
                raise SpecError(f"unknown field {name!r}{did_you_mean(name, SPEC_FIELDS)}; "
                                f"the fields are {', '.join(SPEC_FIELDS)}")
            check_field(doc, value)
            if doc.type == "int" and value <= 0:
                raise SpecError(f"expected a positive integer, got {value}")
            if doc.type == "count" and value < 0:
                raise SpecError(f"expected an integer of 0 or more, got {value}")
        except SpecError as e:
            message = str(e).removeprefix(f"field '{name}': ")
            raise SpecError(f"{label_of(overrides, name)}: {message}") from None


def check_fields(values: Mapping[str, Any]) -> Overrides:
    """Spec field values given by name (the Python API's keyword arguments), checked by type;
    errors name the field."""
    overrides = Overrides(values)
    check_overrides(overrides)
    return overrides
