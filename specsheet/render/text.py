"""Machine-readable and Markdown renderings: JSON, CSV and GitHub-flavoured Markdown.

None of these imports rich, so scripts that ask for them pay nothing for it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specsheet.views.charts import ChartView
    from specsheet.views.table import TableView

Scalar = int | float | str | bool | None

_ASCII = str.maketrans({"█": "#", "▉": "#", "▊": "#", "▋": "#", "▌": "+", "▍": "+", "▎": "",
                        "▏": "", "░": ".", "×": "x", "²": "^2", "·": "*", "↳": "->", "…": "...",
                        "−": "-"})


def to_ascii(text: str) -> str:
    """``text`` with specsheet's table characters spelled in ASCII (× as x, ² as ^2, bars as #);
    anything else non-ASCII (a model's own name, say) is left for the stream to replace."""
    return text.translate(_ASCII)


def _dumps(value: Any, indent: int | None = None) -> str:
    """``json.dumps``, strict: a number that is not finite raises ValueError, never written
    as ``Infinity`` or ``NaN``, which strict JSON readers refuse."""
    return json.dumps(value, indent=indent, allow_nan=False)


def to_json(document: dict[str, Any], lines_of: str | None = None) -> str:
    """One JSON document, keys in schema order, integers exact: ``json.dumps`` with an indent
    of 2. With ``lines_of``, that key's list (a sweep's points) is written an item per line,
    each as ``json.dumps`` writes it compact: the same JSON value, and a line per point for
    grep (``_item_lines``)."""
    if lines_of is None:
        return _dumps(document, indent=2) + "\n"
    head = "".join(f"  {_dumps(key)}: {_dumps(value)},\n"
                   for key, value in document.items() if key != lines_of)
    items = document[lines_of]
    if not items:
        return f"{{\n{head}  {_dumps(lines_of)}: []\n}}\n"
    return f"{{\n{head}  {_dumps(lines_of)}: [\n    {_item_lines(items)}\n  ]\n}}\n"


def _item_lines(items: list[Any]) -> str:
    """``",\\n    ".join(map(json.dumps, items))``, written faster: the one optimisation of
    the JSON writer, held to that join by tests/test_render_json.py. A sweep's points share the
    sections that do not move along the grid (views/sweep.py: the very same objects), and a
    value that several items share is encoded once. An item's document that shares no section
    with the item before it is encoded whole, as json.dumps encodes it."""
    encoded: dict[int, str] = {}  # a value's text by its id (every value lives meanwhile)
    keys: dict[str, str] = {}  # '"key": ' by key
    before: dict[str, Any] = {}  # the item before's value by key

    def text(value: Any) -> str:
        found = encoded.get(id(value))
        if found is None:
            found = encoded[id(value)] = _dumps(value)
        return found

    def key(name: str) -> str:
        found = keys.get(name)
        if found is None:
            found = keys[name] = _dumps(name) + ": "
        return found

    lines = []
    for item in items:
        if type(item) is not dict:
            lines.append(_dumps(item))
            continue
        fields = []
        for name, value in item.items():
            found = encoded.get(id(value))
            if found is None:
                last = before.get(name)
                if type(value) is dict and type(last) is dict and any(
                        section is last.get(inner) for inner, section in value.items()
                        if type(section) is dict):
                    found = "{" + ", ".join(key(inner) + text(section)
                                            for inner, section in value.items()) + "}"
                else:
                    found = _dumps(value)
                encoded[id(value)] = found
            before[name] = value
            fields.append(key(name) + found)
        lines.append("{" + ", ".join(fields) + "}")
    return ",\n    ".join(lines)


def flatten(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The leaves of a JSON document by dotted path: {"params.total": 124439808, ...}; a list
    is a leaf."""
    leaves: dict[str, Any] = {}
    for key, value in document.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            leaves.update(flatten(value, f"{path}."))
        else:
            leaves[path] = value
    return leaves


# columns of free text (which may hold commas and quotes) go last, after every figure
FREE_TEXT = ("description", "origin", "reference")


def _csv_cell(value: Scalar | list[Any]) -> Scalar:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    return "" if value is None else value


def to_csv(rows: list[dict[str, Any]]) -> str:
    """A header row and one line per row. The columns are the union of every row's keys, in
    the order they first appear (the first row's, then each key a later row adds), free-text
    columns last, so no row loses a field; a row without a column has an empty cell. Lists are
    written as JSON ([0, 2, 4]), booleans as true and false, null as an empty cell."""
    import csv  # lazy: the CSV path alone needs it, and every JSON path imports this module

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = list(dict.fromkeys(key for row in rows for key in row))
    header = [c for c in columns if c.rsplit(".", 1)[-1] not in FREE_TEXT]
    header += [c for c in columns if c.rsplit(".", 1)[-1] in FREE_TEXT]
    writer.writerow(header)
    for row in rows:
        writer.writerow([_csv_cell(row.get(column)) for column in header])
    return out.getvalue()


def _md_cell(text: str) -> str:
    return text.strip().replace("|", "\\|") or " "


def to_markdown(views: Sequence[TableView | ChartView]) -> str:
    """Each table view as a bold title, a GitHub-flavoured table and an italic caption (charts
    are for the terminal and pictures: the table beside a chart holds its figures)."""
    from specsheet.views.table import TableView

    parts = []
    for view in views:
        if not isinstance(view, TableView):
            continue
        lines = [f"**{view.title}**", ""]
        lines.append("| " + " | ".join(_md_cell(h) for h in view.headers) + " |")
        lines.append("|" + "|".join("---:" if n else ":---" for n in view.numeric) + "|")
        for row in view.rows:
            cells = [_md_cell(c) for c in row.cells]
            if row.style == "sub":
                cells[0] = f"↳ {cells[0]}"
            elif row.style == "total":
                cells = [f"**{c}**" if c.strip() else c for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        if view.footnote:
            lines += ["", f"_{view.footnote}_"]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
