"""Machine-readable and Markdown renderings: JSON, CSV and GitHub-flavoured Markdown.

None of these imports rich, so scripts that ask for them pay nothing for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
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


def to_json(document: dict[str, Any], lines_of: str | None = None) -> str:
    """One JSON document, keys in schema order, integers exact.

    With ``lines_of``, that key's list (a sweep's points) is written an item per line, each
    compact: the same JSON value, written in a fraction of the time, and a line per point for
    grep. A section that several items share (the same dict) is encoded once."""
    if lines_of is None:
        return json.dumps(document, indent=2) + "\n"
    from json.encoder import encode_basestring_ascii as quote

    dumps = _compact_encoder()
    encoded: dict[int, str] = {}  # by id: every value lives in the document meanwhile
    keys: dict[str, str] = {}  # '"key": ' by key
    pieces: list[str] = []  # the text, joined once at the end (no copies of each item)

    def write(value: Any, depth: int) -> None:
        """An item and the document in it are walked key by key; what lies below (the
        sections) is encoded whole by the json module's C encoder, once per object."""
        if type(value) is dict and depth < 2:
            separator = "{"
            for k, v in value.items():
                key = keys.get(k)
                if key is None:
                    key = keys[k] = json.dumps(k) + ": "
                pieces.append(separator)
                pieces.append(key)
                write(v, depth + 1)
                separator = ", "
            pieces.append("}" if separator == ", " else "{}")
            return
        text = encoded.get(id(value))
        if text is None:
            kind = type(value)
            text = encoded[id(value)] = int.__repr__(value) if kind is int else \
                str(quote(value)) if kind is str else dumps(value)
        pieces.append(text)

    pieces.append("{\n")
    for key, value in document.items():
        if key != lines_of:
            pieces.append(f"  {json.dumps(key)}: {json.dumps(value)},\n")
    items = document[lines_of]
    pieces.append(f"  {json.dumps(lines_of)}: [" + ("\n    " if items else ""))
    for index, item in enumerate(items):
        if index:
            pieces.append(",\n    ")
        write(item, 0)
    pieces.append("\n  ]\n}\n" if items else "]\n}\n")
    return "".join(pieces)


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps`` with its default settings, without the cost of setting it up on each call
    (about 3 us, which is most of the time for a small section): the json module's own C
    encoder, built once; ``json.dumps`` itself where the C encoder is missing."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)
    if make is None:
        return json.dumps
    try:
        iterencode = make(None, None, encoder.encode_basestring_ascii, None, ": ", ", ", False,
                          False, True)
    except TypeError:  # a Python whose C encoder takes other arguments
        return json.dumps

    def dumps(value: Any) -> str:
        return "".join(iterencode(value, 0))

    return dumps


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
    """A header row (the first row's keys, free-text columns last) and one line per row; lists
    are written as JSON ([0, 2, 4]), booleans as true and false, null as an empty cell."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = list(rows[0]) if rows else []
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
        if view.caption:
            lines += ["", f"_{view.caption}_"]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
