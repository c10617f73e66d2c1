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
MAX_FILE_BYTES = 16 * 2**20  # a config.json is a few KB
# keys that only a Hugging Face config.json has
HF_KEYS = {"architectures", "hidden_size", "num_hidden_layers", "n_embd", "n_layer",
           "vocab_size", "num_attention_heads"}


def _describe(value: object) -> str:
    """A value as a message shows it: true, a list, nothing (null), a date (2024-01-01), 12.5."""
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"a date ({value.isoformat()})"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return f"a {'mapping' if isinstance(value, dict) else 'list'}"
    if value is None:
        return "nothing (null)"
    return repr(value)


def _check_field(doc: FieldDoc, value: object) -> Any:
    """Return ``value`` if it has the type of field ``doc``, else raise SpecError."""
    if doc.type in ("int", "count"):
        if isinstance(value, bool) or not isinstance(value, int):
            expected = "a positive integer" if doc.type == "int" else "an integer of 0 or more"
            raise SpecError(f"field '{doc.name}': expected {expected}, got {_describe(value)}")
    elif doc.type == "layers":
        if value != "all" and not (isinstance(value, list) and all(
                isinstance(i, int) and not isinstance(i, bool) for i in value)):
            raise SpecError(f"field '{doc.name}': expected a list of layer indices "
                            f"([0, 2, 4]) or all, got {_describe(value)}")
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
        raise SpecError(f"{path}: is a directory without a config.json; expected a preset "
                        "YAML file, a config.json, or a model folder holding one")
    if not path.is_file():  # a pipe or a device could block or never end
        raise SpecError(f"{path}: not a regular file; expected a preset YAML file or a "
                        "config.json")
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SpecError(f"{path}: {path.stat().st_size:,} bytes is larger than any model "
                            f"file ({MAX_FILE_BYTES // 2**20} MiB at most)")
        raw = path.read_bytes()
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 text (byte {e.start})") from None


def parse_yaml(text: str, origin: str) -> object:
    """Parse YAML with PyYAML's safe loader, refusing duplicate keys and tags that would build
    objects; errors give the line. (The pure-Python loader, not libyaml's: deeply nested input
    overflows the C parser's stack, while here it ends in a RecursionError.)"""
    import yaml

    class StrictLoader(yaml.SafeLoader):
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
    except yaml.YAMLError as e:  # a reader error: characters YAML does not allow
        raise SpecError(f"{origin}: not valid YAML: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise SpecError(f"{origin}: not valid YAML: nested too deeply") from None
    except (ValueError, TypeError) as e:  # e.g. a date that does not exist: 2024-13-45
        raise SpecError(f"{origin}: not valid YAML: {e}") from None


def parse_json(text: str, origin: str) -> object:
    """Parse JSON; errors give the line."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"{origin}: line {e.lineno}: not valid JSON: {e.msg}") from None
    except RecursionError:
        raise SpecError(f"{origin}: not valid JSON: nested too deeply") from None


def model_from_hf_config(data: Mapping[str, Any], origin: str, name: str,
                         overrides: Mapping[str, Any] | None = None) -> Model:
    """Build a Model from a Hugging Face config.json mapping, then apply ``overrides``."""
    from specsheet.hf_config import fields_from_hf_config

    fields, note = fields_from_hf_config(data, origin)
    try:
        spec = ModelSpec.create(**{**fields, **(overrides or {})})
    except SpecError as e:
        raise SpecError(f"{origin}: {e}") from None
    family = data.get("text_config", data).get("model_type")
    description = f"{family} config.json" + (f", {note}" if note else "")
    return Model(name=name, spec=spec, origin=origin, description=description)


def load_file(path: Path, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load a preset YAML file, a config.json, or a model folder holding a config.json."""
    from specsheet.hf_config import is_hf_config

    if path.is_dir() and (path / "config.json").is_file():
        path = path / "config.json"
    text = read_text(path)
    origin = str(path)
    data = parse_json(text, origin) if path.suffix == ".json" else parse_yaml(text, origin)
    if isinstance(data, dict) and not is_hf_config(data) and HF_KEYS & set(data):
        raise SpecError(f"{origin}: missing key 'model_type': a Hugging Face config.json names "
                        "its model family there")
    if is_hf_config(data):
        assert isinstance(data, dict)
        name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
        return model_from_hf_config(data, origin, _short_name(data, name), overrides)
    return model_from_mapping(data, origin, overrides, default_name=path.stem)


def _short_name(data: Mapping[str, Any], fallback: str) -> str:
    """A model's name from its config's ``_name_or_path`` (org/name), else ``fallback``."""
    named = data.get("_name_or_path")
    if isinstance(named, str) and named.strip("/"):
        return named.strip("/").rsplit("/", 1)[-1]
    return fallback


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: HF_HUB_CACHE, else HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub."""
    import os

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "huggingface" / "hub"


def cached_config(repo_id: str) -> Path:
    """The config.json of ``repo_id`` (ORG/NAME) in the local Hugging Face cache: the
    snapshot that refs/main names, else the newest snapshot holding one. Never the network."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise SpecError(f"--hf: expected ORG/NAME (e.g. meta-llama/Llama-3.1-8B), "
                        f"got {repo_id!r}")
    folder = hf_cache_dir() / ("models--" + repo_id.replace("/", "--"))
    ref = folder / "refs" / "main"
    candidates = []
    if ref.is_file():
        candidates.append(folder / "snapshots" / ref.read_text().strip() / "config.json")
    snapshots = folder / "snapshots"
    if snapshots.is_dir():
        candidates += sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime,
                             reverse=True)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise SpecError(f"{repo_id}: no config.json in the local Hugging Face cache (looked in "
                    f"{folder}); download it with: huggingface-cli download {repo_id} "
                    "config.json")


def load_cached(repo_id: str, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load ORG/NAME's config.json from the local Hugging Face cache."""
    from specsheet.hf_config import is_hf_config

    path = cached_config(repo_id)
    data = parse_json(read_text(path), str(path))
    if not is_hf_config(data):
        raise SpecError(f"{path}: expected a Hugging Face config.json with a model_type")
    assert isinstance(data, dict)
    return model_from_hf_config(data, str(path), repo_id.split("/")[1], overrides)


def load_preset(name: str, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load a built-in preset by name."""
    index = preset_index()
    if name not in index:
        raise SpecError(f"unknown preset '{name}'{did_you_mean(name, index)}; "
                        "'specsheet presets' lists them, or give a path to a preset YAML file")
    return model_from_mapping(index[name], f"preset {name}", overrides)


def parse_settings(settings: list[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` strings from ``--set`` as field values, read by each field's type."""
    values: dict[str, Any] = {}
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
    if doc.type == "layers":
        if lowered == "all":
            return "all"
        items = [i.strip() for i in text.strip("[]").split(",") if i.strip()]
        if not all(i.isdigit() for i in items):
            raise SpecError(f"option --set: field '{doc.name}': expected layer indices "
                            f"like 0,2,4 or all, got {text!r}")
        return [int(i) for i in items]
    if not text.isdigit():
        expected = "a positive integer" if doc.type == "int" else "an integer of 0 or more"
        raise SpecError(f"option --set: field '{doc.name}': expected {expected}, got {text!r}")
    return int(text)


def check_overrides(overrides: Mapping[str, Any]) -> None:
    """Check option values before they meet a preset, so that errors name the option."""
    for name, value in overrides.items():
        option = "--" + name.replace("_", "-")
        try:
            _check_field(SPEC_FIELDS[name], value)
            if SPEC_FIELDS[name].type == "int" and value <= 0:
                raise SpecError(f"expected a positive integer, got {value}")
            if SPEC_FIELDS[name].type == "count" and value < 0:
                raise SpecError(f"expected an integer of 0 or more, got {value}")
        except SpecError as e:
            message = str(e).removeprefix(f"field '{name}': ")
            raise SpecError(f"option {option}: {message}") from None


def resolve(ref: str | None, overrides: Mapping[str, Any] | None = None) -> Model:
    """A Model from a preset name, a file path (preset YAML, config.json or a folder holding
    one), ``hf:ORG/NAME`` (the local Hugging Face cache), or (``ref`` None) the overrides."""
    check_overrides(overrides or {})
    if ref is None:
        missing = [name for name in REQUIRED_FIELDS if name not in (overrides or {})]
        if missing:
            options = ", ".join("--" + name.replace("_", "-") for name in missing)
            raise SpecError(f"missing {options}: give a preset name or file, "
                            "or all five of --layers, --d-model, --heads, --vocab, --context")
        return model_from_mapping(dict(overrides or {}), "options", None)
    if ref.startswith("hf:"):
        return load_cached(ref[3:], overrides)
    if looks_like_path(ref):
        return load_file(Path(ref), overrides)
    return load_preset(ref, overrides)
