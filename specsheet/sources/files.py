"""Reading what a user names: bounded, UTF-8, regular files; YAML and JSON with errors that give
the file and the line."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

from specsheet.errors import SpecError

MAX_FILE_BYTES = 16 * 2**20  # a config.json is a few KB


def read_text(path: Path) -> str:
    """The text of ``path`` as UTF-8 (a BOM is allowed), or SpecError naming the file."""
    if not path.exists():
        raise SpecError("no such file", source=str(path))
    if path.is_dir():
        raise SpecError("is a directory without a config.json; expected a preset "
                        "YAML file, a config.json, or a model folder holding one", source=str(path))
    if not path.is_file():  # a pipe or a device could block or never end
        raise SpecError("not a regular file; expected a preset YAML file or a "
                        "config.json", source=str(path))
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SpecError(f"{path.stat().st_size:,} bytes is larger than any model "
                            f"file ({MAX_FILE_BYTES // 2**20} MiB at most)", source=str(path))
        raw = path.read_bytes()
    except OSError as e:
        raise SpecError(f"cannot read: {e.strerror}", source=str(path)) from None
    bom = codecs.BOM_UTF8  # (codecs is loaded with the interpreter; the utf-8-sig codec is not)
    try:  # as raw.decode("utf-8-sig") does: a byte's offset counts from after the BOM
        return (raw[len(bom):] if raw.startswith(bom) else raw).decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"not UTF-8 text (byte {e.start})", source=str(path)) from None


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
                    raise SpecError(f"line {key_node.start_mark.line + 1}: "
                                    f"duplicate key '{key}'", source=origin)
                if key is not None:
                    seen.add(key)
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return mapping

        def construct_yaml_int(self, node: Any) -> int:
            """YAML 1.1 reads 012 as octal (10) and 1:30 as base 60 (90): refuse both rather
            than compute with a number the writer did not mean."""
            digits = str(node.value).replace("_", "").lstrip("+-")
            if len(digits) > _MAX_INT_DIGITS:  # before int() meets Python's own limit
                raise SpecError(_HUGE, source=origin)
            value: int = super().construct_yaml_int(node)
            line = node.start_mark.line + 1
            if ":" in digits:
                raise SpecError(f"line {line}: {node.value} is a base-60 number in "
                                f"YAML 1.1 ({value}); write the integer you mean", source=origin)
            if len(digits) > 1 and digits[0] == "0" and digits[1] not in "xXbBoO":
                sign = "-" if str(node.value).startswith("-") else ""
                raise SpecError(f"line {line}: {node.value} is an octal number in "
                                f"YAML 1.1 ({value}); write {sign}{digits.lstrip('0') or '0'} "
                                "without the leading zero", source=origin)
            return value

    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)

    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except SpecError:  # our own refusals (duplicate keys, octal integers) say it all
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = e.problem or e.context or "invalid YAML"
        raise SpecError(f"{where}not valid YAML: {problem}", source=origin) from None
    except yaml.YAMLError as e:  # a reader error: characters YAML does not allow
        raise SpecError(f"not valid YAML: {' '.join(str(e).split())}",
                        source=origin) from None
    except RecursionError:
        raise SpecError("not valid YAML: nested too deeply", source=origin) from None
    except ValueError as e:
        raise SpecError(f"not valid YAML: {e}", source=origin) from None
    except TypeError as e:  # e.g. a date that does not exist: 2024-13-45
        raise SpecError(f"not valid YAML: {e}", source=origin) from None


_MAX_INT_DIGITS = 4300  # sys.int_info.default_max_str_digits: Python's own limit
_HUGE = "a number with more than 4,300 digits is beyond any model"


def parse_json(text: str, origin: str) -> object:
    """Parse JSON; errors give the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"line {e.lineno}: not valid JSON: {e.msg}",
                        source=origin) from None
    except RecursionError:
        raise SpecError("not valid JSON: nested too deeply", source=origin) from None
    except ValueError:  # an integer past Python's 4,300-digit limit
        raise SpecError(_HUGE, source=origin) from None
