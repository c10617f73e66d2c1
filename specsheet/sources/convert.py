"""A Model written back as a preset: the mapping, and its YAML text.

The text is what PyYAML's ``yaml.dump`` writes for the mapping (block style, flow style for
lists, width 100). A preset's mapping has a restricted shape (integers, booleans, plain
strings, lists of layer numbers or layer kinds), which ``_emit`` writes itself, so that
``specsheet convert`` of a preset does not import PyYAML (about a tenth of its start-up); any
value whose text it is not sure of (a string YAML would double-quote or read as another type,
a float, None) goes to PyYAML, as everything did before. tests/test_convert_yaml.py
proves the two texts equal over every preset and over generated values.
"""

import re
from dataclasses import fields, replace
from typing import Any

from specsheet.errors import SpecError
from specsheet.model.params import count_params
from specsheet.model.spec import REQUIRED_FIELDS, Model, ModelSpec


def minimal_fields(spec: ModelSpec) -> dict[str, Any]:
    """The spec fields that ``ModelSpec.create`` needs to rebuild ``spec``: the five numbers and
    every field whose value differs from what would be derived without it."""
    spec = replace(spec, vision=None)  # a preset is the language model: no tower field
    kept = spec.as_dict()
    for f in fields(spec):
        if f.name in REQUIRED_FIELDS:
            continue
        trial = {k: v for k, v in kept.items() if k != f.name}
        try:
            same = ModelSpec.create(**trial) == spec
        except SpecError:  # a field others depend on: keep it
            same = False
        if same:
            kept = trial
    return kept


def preset_mapping(model: Model) -> dict[str, Any]:
    """The preset of ``model``: name, description, source, published total, then its fields."""
    mapping: dict[str, Any] = {"name": model.name}
    if model.description:
        mapping["description"] = model.description
    mapping["source"] = model.reference or model.origin
    if model.published_total is not None:
        mapping["published_total"] = model.published_total
    mapping.update(minimal_fields(model.spec))
    return mapping


def to_yaml(model: Model, by: str = "specsheet convert") -> str:
    """The preset of ``model`` as YAML: a header comment (naming the command ``by`` that wrote
    it), then the fields in order."""
    total = count_params(replace(model.spec, vision=None)).total  # the language model
    header = f"# {model.name}: written by {by} from {model.origin}\n"
    header += f"# specsheet counts {total:,} parameters"
    header += "\n" if model.published_total is not None else (
        "; add published_total: with the publisher's count to have it checked\n")
    mapping = preset_mapping(model)
    body = _emit(mapping)
    return header + (_pyyaml(mapping) if body is None else body)


def _pyyaml(mapping: dict[str, Any]) -> str:
    """``mapping`` as PyYAML writes it: block style, flow style ([0, 2, 4]) for lists."""
    import yaml

    class Dumper(yaml.SafeDumper):
        """Block style for the preset, flow style ([0, 2, 4]) for layer lists."""

    def flow_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)

    Dumper.add_representer(list, flow_list)
    text: str = yaml.dump(mapping, Dumper=Dumper, sort_keys=False, width=100)
    return text


WIDTH = 100  # the width given to yaml.dump
# PyYAML's implicit resolvers that read a plain word beginning with a letter as something
# other than a string (yaml/resolver.py: bool and null; the rest begin with a digit, a sign,
# a dot or a symbol, which _PLAIN leaves to PyYAML)
_NOT_A_STRING = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|"
                           r"off|Off|OFF|null|Null|NULL")
_PLAIN = re.compile(r"[A-Za-z][ -~]*")  # printable ASCII, beginning with a letter
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")  # a list item: no flow indicator , [ ] { }


def _scalar(value: object, in_list: bool = False) -> tuple[str, str] | None:
    """The style PyYAML writes ``value`` in (``""`` plain, ``"'"`` single-quoted) and its
    text, in block (or flow, ``in_list``) context; None when that is not certain here."""
    if isinstance(value, bool):
        return "", "true" if value else "false"
    if isinstance(value, int):
        return "", str(value)
    if not isinstance(value, str) or _NOT_A_STRING.fullmatch(value):
        return None
    if (_WORD if in_list else _PLAIN).fullmatch(value) is None or value.endswith(" "):
        return None
    if in_list:
        return "", value
    if ": " in value or " #" in value or value.endswith(":"):  # an indicator: not plain
        return "'", value
    return "", value


def _folded(column: int, style: str, text: str) -> str:
    """A block mapping's value written after its key's colon at ``column``, as PyYAML's
    emitter writes a one-line plain or single-quoted scalar (write_plain,
    write_single_quoted): a lone space after the width is passed becomes a line break,
    indented by 2 (a single-quoted text's first and last spaces never do), and a quote is
    doubled."""
    out = [" '" if style else " "]
    column += len(out[0])
    begin = 0
    i = 0
    n = len(text)
    while i <= n:
        ch = text[i] if i < n else None
        if i and text[i - 1] == " " and ch != " ":  # the end of a run of spaces
            if begin + 1 == i and column > WIDTH and (not style or (begin and i != n)):
                out.append("\n  ")
                column = 2
            else:
                out.append(text[begin:i])
                column += i - begin
            begin = i
        elif ch is None or ch == " " or (style and ch == "'"):
            if not (i and text[i - 1] == " ") and begin < i:
                out.append(text[begin:i])
                column += i - begin
                begin = i
        if style and ch == "'":
            out.append("''")
            column += 2
            begin = i + 1
        i += 1
    if style:
        out.append("'")
    return "".join(out)


def _emit(mapping: dict[str, Any]) -> str | None:
    """``mapping`` as PyYAML's dump writes it, or None if a value is not one _scalar knows.

    Long lines wrap as PyYAML's emitter wraps them: a string at a lone space (_folded), a
    list after an item's comma, on a new line indented by 2, once the column passes the width
    (expect_flow_sequence_item)."""
    lines = []
    for key, value in mapping.items():
        if not isinstance(key, str) or _WORD.fullmatch(key) is None or \
                _NOT_A_STRING.fullmatch(key):
            return None
        if isinstance(value, list):
            scalars = [_scalar(item, in_list=True) for item in value]
            items = [None if scalar is None else scalar[1] for scalar in scalars]
            if any(item is None for item in items):
                return None
            text = f"{key}: ["
            column = len(text)
            for i, item in enumerate(items):
                assert item is not None
                if i:
                    text += ","
                    column += 1
                    if column > WIDTH:
                        text += "\n  "
                        column = 2
                    else:
                        text += " "
                        column += 1
                elif column > WIDTH:
                    return None
                text += item
                column += len(item)
            lines.append(text + "]")
            continue
        scalar = _scalar(value)
        if scalar is None:
            return None
        lines.append(key + ":" + _folded(len(key) + 1, *scalar))
    return "\n".join(lines) + "\n" if lines else None
