"""Spec fields as a preset writes them: the meta keys, each field's type check, and building a
Model from a preset mapping. Values are checked here, where they enter, with the field named."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.model.spec import (
    FIELD_DOCS,
    REQUIRED_FIELDS,
    FieldDoc,
    Model,
    ModelSpec,
    check_type,
)
from specsheet.sources import QUANTIZATION_KEYS

# Preset keys that describe the model rather than its architecture.
META_FIELDS: dict[str, type] = {
    "name": str,
    "description": str,
    "source": str,
    "published_total": int,
    "quantization_config": dict,  # the checkpoint's own format, as its config.json writes it
    "training": dict,  # a published training recipe (``specsheet train``; docs/training.md)
    # the router's top-k method, as config.json writes it (noaux_tc: DeepSeek-V3's routing,
    # whose checkpoint stores a score-correction bias: sources/hf_config/quantization.py)
    "topk_method": str,
    # the checkpoint's multi-token-prediction layers (config.json's num_nextn_predict_layers),
    # the draft of speculative method mtp (plan/speculative.py)
    "mtp_layers": int,
}
SPEC_FIELDS: dict[str, FieldDoc] = {f.name: f for f in FIELD_DOCS}
ALL_FIELDS: tuple[str, ...] = (*META_FIELDS, *SPEC_FIELDS)


def _describe(value: object) -> str:
    """A value as a message shows it: true, a list, nothing (null), a date (2024-01-01), 12.5;
    a long text (a text file read as one YAML string) by its start and end, its length said."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"a date ({value.isoformat()})"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return f"a {'mapping' if isinstance(value, dict) else 'list'}"
    if value is None:
        return "nothing (null)"
    return quoted(value) if isinstance(value, str) else repr(value)


class FieldError(SpecError):
    """An error about one field, named as its reader gave it: ``label`` (by default
    ``field 'NAME'``, as a preset file and the library name a field; the CLI's own words for
    an option it set)."""

    def __init__(self, message: str, *, field: str, value: object = None,
                 source: str | None = None, label: str | None = None) -> None:
        super().__init__(message, field=field, value=value, source=source)
        self.label = f"field '{field}'" if label is None else label

    def line(self, label: str | None = None, spell: Callable[[str], str] | None = None) -> str:
        """``source: label: message``, the field named by ``label`` (default: its own)."""
        return super().line(self.label if label is None else label, spell)


def with_source(e: SpecError, source: str) -> SpecError:
    """``e`` said of ``source`` (a file path, ``preset NAME``): the same error, its origin named."""
    if isinstance(e, FieldError):
        return FieldError(e.message, field=e.field or "", value=e.value, source=source,
                          label=e.label)
    return SpecError(e.message, field=e.field, value=e.value, source=source)


def check_field(doc: FieldDoc, value: object) -> Any:
    """Return ``value`` if it has the type of field ``doc``, else raise FieldError: the spec's
    one type check (``check_type``), the value shown as a file writes it; layer lists here."""
    kind, of = type(value), doc.type
    if kind is int and of in ("int", "count") or kind is bool and of == "bool" or \
            kind is str and of == "choice" and value in doc.choices:  # plainly of its type
        return value  # (a size's range is ModelSpec's to check)
    if doc.type == "layers":
        if value != "all" and not (isinstance(value, list) and all(
                isinstance(i, int) and not isinstance(i, bool) for i in value)):
            raise FieldError(f"expected a list of layer indices ([0, 2, 4]) or all, got "
                             f"{_describe(value)}", field=doc.name, value=value)
    elif doc.type == "kinds":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise FieldError(f"expected a list of layer kinds, one per layer "
                             f"({', '.join(doc.choices)}), got {_describe(value)}",
                             field=doc.name, value=value)
    else:
        try:
            check_type(doc, value, _describe, suggest=True)
        except SpecError as e:
            raise FieldError(e.message, field=doc.name, value=value) from None
    return value


class Given(NamedTuple):
    """Where an override came from: ``option`` (a named option of its own) or ``setting``
    (``FIELD=VALUE`` among several, ``text`` as given: ``kv_heads=64``); ``at``: the value of a
    sweep's point. The CLI spells it (specsheet.cli.errors); the library never sees one."""

    how: Literal["option", "setting"]
    text: str = ""
    at: str | None = None


class Naming(Protocol):
    """How the giver of the overrides names a field: the CLI names its options."""

    def label(self, field: str, given: Given, value: object) -> str:
        """The words for the source of ``field``'s ``value``."""
        ...

    def spelled(self, field: str) -> str:
        """Field ``field`` as a user gives it."""
        ...


class Overrides(dict[str, Any]):
    """Spec field values that win over a source's own (options, FIELD=VALUE settings, API
    arguments), each with where it came from (``origins``), so that an error blames the right
    source. ``naming`` spells them (the CLI's options); without it a field is
    ``field 'kv_heads'``."""

    def __init__(self, values: Mapping[str, Any] | None = None,
                 origins: Mapping[str, Given] | None = None,
                 naming: Naming | None = None) -> None:
        super().__init__(values or {})
        self.origins = dict(origins or {})
        self.naming = naming

    def label(self, name: str) -> str:
        """How an error names the source of field ``name``."""
        given = self.origins.get(name)
        if given is None or self.naming is None:
            return f"field '{name}'"
        return self.naming.label(name, given, self.get(name))

    def spelled(self, name: str) -> str:
        """Field ``name`` as a user gives it: layers, or as the CLI spells its option."""
        return name if self.naming is None else self.naming.spelled(name)


def label_of(overrides: Mapping[str, Any], name: str) -> str:
    """How an error names the source of overridden field ``name``."""
    return overrides.label(name) if isinstance(overrides, Overrides) else f"field '{name}'"


def spelled(overrides: Mapping[str, Any], name: str) -> str:
    """Field ``name`` as the user of ``overrides`` gives it."""
    return overrides.spelled(name) if isinstance(overrides, Overrides) else name


# An override of a shorthand replaces the fields it stands for; an override that turns a
# feature off (0) drops the source's fields that only mean something with it on.
_SHORTHANDS = {"attn_bias": ("qkv_bias", "o_bias")}
_DEPENDENTS = {
    "sliding_window": ("sliding_layers",),
    "experts": ("experts_per_token", "expert_d_ff", "shared_d_ff", "shared_expert_gate",
                "dense_layers", "expert_bias", "router_bias"),
    "kv_lora_rank": ("q_lora_rank", "qk_rope_head_dim"),
}


def merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` applied: an explicit value always wins, shorthands included
    (``attn_bias`` over a source's qkv_bias and o_bias)."""
    merged = dict(base)
    for name, value in overrides.items():
        for field in _SHORTHANDS.get(name, ()):
            merged.pop(field, None)
        if not value:
            for field in _DEPENDENTS.get(name, ()):
                merged.pop(field, None)
    merged.update(overrides)
    return merged


def build_spec(base: Mapping[str, Any], origin: str,
               overrides: Mapping[str, Any] | None = None) -> ModelSpec:
    """The spec of ``base`` (checked spec fields from ``origin``) with ``overrides`` applied.

    An error about an overridden field blames the override (named by its label); other
    errors name ``origin`` and the overrides given with it."""
    overrides = overrides or {}
    try:
        return ModelSpec.create(**merge(base, overrides))
    except SpecError as e:
        if e.field is not None and e.field in overrides:
            where = "" if origin == "options" else f" (with {origin})"
            raise FieldError(e.message + where, field=e.field, value=e.value,
                             label=label_of(overrides, e.field)) from None
        if overrides and origin != "options":
            given = ", ".join(label_of(overrides, name) for name in overrides)
            raise with_source(e, f"{origin} with {given}") from None
        raise with_source(e, origin) from None


def model_from_mapping(
    data: object, origin: str, overrides: Mapping[str, Any] | None = None,
    default_name: str = "custom", shipped: bool = True,
) -> Model:
    """Build a Model from a preset mapping read from ``origin``, then apply ``overrides``.

    Errors in the mapping are prefixed with ``origin`` (a file path or "preset NAME").
    ``shipped`` False: the format the checkpoint ships in is not read (``Model.shipped`` None),
    for a list that shows none (``presets``).
    """
    if not isinstance(data, dict):
        raise SpecError(f"expected a mapping of preset fields (layers: 12, d_model: 768, ...), "
                        f"got {_describe(data)}", source=origin)
    try:
        for key in data:
            if key not in ALL_FIELDS:
                raise SpecError(f"unknown field {quoted(key)}{did_you_mean(str(key), ALL_FIELDS)}; "
                                f"the fields are {', '.join(ALL_FIELDS)}", value=key)
        for key, kind in META_FIELDS.items():
            if key in data and (isinstance(data[key], bool) or not isinstance(data[key], kind)):
                expected = {int: "an integer", dict: "a mapping"}.get(kind, "text")
                raise FieldError(f"expected {expected}, got {_describe(data[key])}", field=key,
                                 value=data[key])
        missing = [n for n in REQUIRED_FIELDS if n not in data and n not in (overrides or {})]
        if missing:
            raise SpecError(f"missing field{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)}: the five numbers "
                            f"{', '.join(REQUIRED_FIELDS)} are required")
        base = {name: check_field(doc, data[name])
                for name, doc in SPEC_FIELDS.items() if name in data}
    except SpecError as e:
        raise with_source(e, origin) from None
    spec = build_spec(base, origin, overrides)
    published = data.get("published_total")
    checkpoint = None
    # the format the checkpoint ships in (an overridden model has no checkpoint), read only
    # from a mapping that names one: most presets ship unquantized and skip its reader
    if shipped and not overrides and any(key in data for key in QUANTIZATION_KEYS):
        from specsheet.sources.hf_config.quantization import shipped_of

        checkpoint = shipped_of(data, spec, origin)
    return Model(
        name=data.get("name", default_name),
        spec=spec,
        origin=origin,
        # a published total describes the model as published, not as overridden
        published_total=published if not overrides else None,
        description=data.get("description", ""),
        reference=data.get("source", ""),
        shipped=checkpoint,
        # so does a training recipe: it describes the run of the published model
        training=tuple((str(k), tuple(v) if isinstance(v, list) else v)
                       for k, v in data.get("training", {}).items()) if not overrides else (),
        # the checkpoint's multi-token-prediction layers, as its config's
        # num_nextn_predict_layers (a preset's mtp_layers)
        mtp_layers=_count(data, "mtp_layers", origin),
    )


def _count(data: Mapping[str, Any], key: str, origin: str) -> int:
    """A preset's count of 0 or more (0 when absent)."""
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecError("expected a count of 0 or more, got "
                        f"{quoted(value)}", field=key, value=value,
                        source=origin)
    return value
