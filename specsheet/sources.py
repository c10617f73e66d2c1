"""Turning what a user gives (a preset name, a preset file, options) into a Model.

Everything here raises SpecError with one line naming the file, field or value at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specsheet.errors import SpecError, did_you_mean
from specsheet.presets import preset_index
from specsheet.spec import FIELD_DOCS, REQUIRED_FIELDS, FieldDoc, Model, ModelSpec

# Preset keys that describe the model rather than its architecture.
META_FIELDS: dict[str, type] = {
    "name": str,
    "description": str,
    "source": str,
    "published_total": int,
}
SPEC_FIELDS: dict[str, FieldDoc] = {f.name: f for f in FIELD_DOCS}
ALL_FIELDS: tuple[str, ...] = (*META_FIELDS, *SPEC_FIELDS)
FILE_SUFFIXES = (".yaml", ".yml", ".json")


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return f"a {'mapping' if isinstance(value, dict) else 'list'}"
    if value is None:
        return "nothing (null)"
    return repr(value)


def _check_field(doc: FieldDoc, value: object) -> Any:
    """Return ``value`` if it has the type of field ``doc``, else raise SpecError."""
    if doc.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(f"field '{doc.name}': expected a positive integer, "
                            f"got {_describe(value)}")
    elif doc.type == "bool":
        if not isinstance(value, bool):
            raise SpecError(f"field '{doc.name}': expected true or false, got {_describe(value)}")
    elif not isinstance(value, str) or value not in doc.choices:
        hint = did_you_mean(value, doc.choices) if isinstance(value, str) else ""
        raise SpecError(f"field '{doc.name}': expected one of {', '.join(doc.choices)}, "
                        f"got {_describe(value)}{hint}")
    return value


def spec_from_mapping(data: Mapping[str, Any]) -> ModelSpec:
    """Build a ModelSpec from spec fields (preset keys); meta fields are ignored."""
    missing = [name for name in REQUIRED_FIELDS if name not in data]
    if missing:
        raise SpecError(f"missing field{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)}: the five numbers "
                        f"{', '.join(REQUIRED_FIELDS)} are required")
    values = {name: _check_field(doc, data[name])
              for name, doc in SPEC_FIELDS.items() if name in data}
    return ModelSpec.create(**values)


def model_from_mapping(
    data: object, origin: str, overrides: Mapping[str, Any] | None = None,
    default_name: str = "custom",
) -> Model:
    """Build a Model from a preset mapping read from ``origin``, then apply ``overrides``.

    Errors are prefixed with ``origin`` (a file path or "preset NAME").
    """
    if not isinstance(data, dict):
        raise SpecError(f"{origin}: expected a mapping of preset fields "
                        f"(layers: 12, d_model: 768, ...), got {_describe(data)}")
    try:
        for key in data:
            if key not in ALL_FIELDS:
                raise SpecError(f"unknown field {key!r}{did_you_mean(str(key), ALL_FIELDS)}; "
                                f"the fields are {', '.join(ALL_FIELDS)}")
        for key, kind in META_FIELDS.items():
            if key in data and (isinstance(data[key], bool) or not isinstance(data[key], kind)):
                expected = "an integer" if kind is int else "text"
                raise SpecError(f"field '{key}': expected {expected}, got {_describe(data[key])}")
        spec = spec_from_mapping({**data, **(overrides or {})})
    except SpecError as e:
        raise SpecError(f"{origin}: {e}") from None
    published = data.get("published_total")
    return Model(
        name=data.get("name", default_name),
        spec=spec,
        origin=origin,
        # a published total describes the model as published, not as overridden
        published_total=published if not overrides else None,
        description=data.get("description", ""),
        reference=data.get("source", ""),
    )


def looks_like_path(ref: str) -> bool:
    """True when ``ref`` names a file rather than a preset."""
    return "/" in ref or "\\" in ref or ref.endswith(FILE_SUFFIXES) or Path(ref).exists()


def read_text(path: Path) -> str:
    """The text of ``path`` as UTF-8 (a BOM is allowed), or SpecError naming the file."""
    if not path.exists():
        raise SpecError(f"{path}: no such file")
    if path.is_dir():
        raise SpecError(f"{path}: is a directory; expected a preset YAML file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 text (byte {e.start})") from None


def parse_yaml(text: str, origin: str) -> object:
    """Parse YAML with a safe loader that refuses duplicate keys; errors give the line."""
    import yaml

    base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[str] = set()
            for key_node, _ in node.value:
                key = key_node.value if key_node.tag.endswith(":str") else None
                if key is not None and key in seen:
                    raise SpecError(f"{origin}: line {key_node.start_mark.line + 1}: "
                                    f"duplicate key '{key}'")
                if key is not None:
                    seen.add(key)
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return mapping

    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = e.problem or e.context or "invalid YAML"
        raise SpecError(f"{origin}: {where}not valid YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise SpecError(f"{origin}: not valid YAML: {e}") from None


def load_file(path: Path, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load a preset YAML file (JSON is YAML too)."""
    data = parse_yaml(read_text(path), str(path))
    return model_from_mapping(data, str(path), overrides, default_name=path.stem)


def load_preset(name: str, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load a built-in preset by name."""
    index = preset_index()
    if name not in index:
        raise SpecError(f"unknown preset '{name}'{did_you_mean(name, index)}; "
                        "'specsheet presets' lists them, or give a path to a preset YAML file")
    return model_from_mapping(index[name], f"preset {name}", overrides)


def check_overrides(overrides: Mapping[str, Any]) -> None:
    """Check option values before they meet a preset, so that errors name the option."""
    for name, value in overrides.items():
        option = "--" + name.replace("_", "-")
        try:
            _check_field(SPEC_FIELDS[name], value)
            if SPEC_FIELDS[name].type == "int" and value <= 0:
                raise SpecError(f"expected a positive integer, got {value}")
        except SpecError as e:
            message = str(e).removeprefix(f"field '{name}': ")
            raise SpecError(f"option {option}: {message}") from None


def resolve(ref: str | None, overrides: Mapping[str, Any] | None = None) -> Model:
    """A Model from a preset name, a file path, or (``ref`` None) the overrides alone."""
    check_overrides(overrides or {})
    if ref is None:
        missing = [name for name in REQUIRED_FIELDS if name not in (overrides or {})]
        if missing:
            options = ", ".join("--" + name.replace("_", "-") for name in missing)
            raise SpecError(f"missing {options}: give a preset name or file, "
                            "or all five of --layers, --d-model, --heads, --vocab, --context")
        return model_from_mapping(dict(overrides or {}), "options", None)
    if looks_like_path(ref):
        return load_file(Path(ref), overrides)
    return load_preset(ref, overrides)
