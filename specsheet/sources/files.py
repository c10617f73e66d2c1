"""Reading what a user names: bounded, UTF-8, regular files; YAML and JSON with errors that give
the file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specsheet.errors import SpecError

FILE_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 16 * 2**20  # a config.json is a few KB


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
