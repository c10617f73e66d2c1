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


_STRICT = json.JSONEncoder(allow_nan=False)


def _dumps(value: Any, indent: int | None = None) -> str:
    """``json.dumps``, strict: a number that is not finite raises ValueError, never written
    as ``Infinity`` or ``NaN``, which strict JSON readers refuse. Compact, it is one encoder's
    ``encode`` (what ``json.dumps(value, allow_nan=False)`` builds and calls each time)."""
    if indent is None:
        return _STRICT.encode(value)
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
    lines = _item_lines(items)
    parts = [""] * (2 * len(lines) + 1)  # the text joined once: a copy of megabytes less
    parts[0] = f"{{\n{head}  {_dumps(lines_of)}: [\n    "
    parts[1::2] = lines
    parts[2:-1:2] = [",\n    "] * (len(lines) - 1)
    parts[-1] = "\n  ]\n}\n"
    return "".join(parts)


# The one optimisation of the text writers: a section that consecutive items share (the very
# same object: views/sweep.py shares a sweep's spec, parameters and memory along the grid) is
# written once. Held by tests/test_render_json.py to what json.dumps and a plain flatten +
# csv.writer write.

def _item_lines(items: list[Any]) -> list[str]:
    """``list(map(json.dumps, items))``, written faster (the one optimisation, above).
    Each item's value at a key is compared with the value at that key in the item before: the
    same object is its text again; a dict whose entries are partly the item before's (the same
    objects under the same keys, in the same order) is spliced from their texts and the others
    encoded; anything else is encoded whole, as json.dumps encodes it."""
    keys: dict[str, str] = {}  # '"key": ' by key
    before: dict[str, tuple[Any, str, list[str] | None]] = {}  # the item before's, by key:
    # its value, its '"key": text', and for a spliced dict its entries' texts
    lines = []
    for item in items:
        if type(item) is not dict:
            lines.append(_dumps(item))
            continue
        fields = []
        for name, value in item.items():
            last = before.get(name)
            if last is not None and last[0] is value:
                fields.append(last[1])
                continue
            head = keys.get(name)
            if head is None:
                head = keys[name] = _dumps(name) + ": "
            pieces = None
            if last is not None and type(value) is dict and type(last[0]) is dict:
                pieces = _spliced(value, last[0], last[2], keys)
            text = head + (_dumps(value) if pieces is None else "{" + ", ".join(pieces) + "}")
            before[name] = (value, text, pieces)
            fields.append(text)
        lines.append("{" + ", ".join(fields) + "}")
    return lines


def _spliced(value: dict[Any, Any], last: dict[Any, Any], pieces: list[str] | None,
             keys: dict[str, str]) -> list[str] | None:
    """The '"key": text' of each entry of ``value``, taking ``pieces`` (those of ``last``,
    when it was spliced) for the entries that are the same objects as ``last``'s; None when
    none is, or the keys differ (then ``value`` is encoded whole)."""
    names = list(value)
    if names != list(last) or pieces is None and not any(
            v is w for v, w in zip(value.values(), last.values(), strict=True)):
        return None  # (a dict spliced before is spliced again: its neighbours share)
    new = []
    for i, (key, entry, entry_before) in enumerate(
            zip(names, value.values(), last.values(), strict=True)):
        if entry is entry_before and pieces is not None:
            new.append(pieces[i])  # (its key was checked when its piece was written)
            continue
        if type(key) is not str:
            return None
        head = keys.get(key)
        if head is None:
            head = keys[key] = _dumps(key) + ": "
        new.append(head + _dumps(entry))
    return new


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
    """A header row and one line per row, each row's leaves by dotted path (``flatten``). The
    columns are the union of every row's leaves, in the order they first appear (the first
    row's, then each a later row adds), free-text columns last, so no row loses a field; a
    row without a column has an empty cell. Lists are written as JSON ([0, 2, 4]), booleans
    as true and false, null as an empty cell: what csv.writer writes of the cells.

    A section or value that a row shares with the row before it (the same object at the same
    key) has its cells written once (the one optimisation, above): csv.writer quotes a cell by
    what it holds alone, so a line is the join of its cells' texts, each written once."""
    import csv  # lazy: the CSV path alone needs it, and every JSON path imports this module

    rows_texts: list[list[dict[str, str]]] = []  # each row's sections' cells' texts by column
    before: dict[str, tuple[Any, dict[str, str]]] = {}  # the row before's section by key
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        parts: list[Any] = []  # by key in order: a value's texts, or its leaves to write
        fresh: list[Any] = []
        for key, value in row.items():
            last = before.get(key)
            if last is not None and last[0] is value:
                parts.append(last[1])
                continue
            leaves = flatten(value, f"{key}.") if isinstance(value, dict) else {key: value}
            parts.append((key, value, leaves))
            fresh.extend(_csv_cell(leaf) for leaf in leaves.values())
        written = iter(_cell_texts(fresh, writer, out))
        for n, part in enumerate(parts):
            if type(part) is not dict:
                key, value, leaves = part
                section = before[key] = (value, dict(zip(leaves, written, strict=False)))
                parts[n] = section[1]  # the cells in turn
        rows_texts.append(parts)
    columns: dict[str, None] = {}
    seen: set[int] = set()  # a section seen in a row before adds no column
    for parts in rows_texts:
        for part in parts:
            if id(part) not in seen:
                seen.add(id(part))
                columns.update(dict.fromkeys(part))
    header = [c for c in columns if c.rsplit(".", 1)[-1] not in FREE_TEXT]
    header += [c for c in columns if c.rsplit(".", 1)[-1] in FREE_TEXT]
    out.seek(0)
    out.truncate()
    writer.writerow(header)
    if len(header) == 1:  # a line of one empty cell is written "", not as nothing
        writer.writerows([_merged(parts).get(header[0], "")] for parts in rows_texts)
        return out.getvalue()
    empty = dict.fromkeys(header, "")
    width = len(header)
    lines = [out.getvalue()]
    for parts in rows_texts:
        cells = _merged(parts)
        lines.append(",".join(map((cells if len(cells) == width else {**empty, **cells})
                                  .__getitem__, header)))
        lines.append("\n")
    return "".join(lines)


def _merged(parts: list[dict[str, str]]) -> dict[str, str]:
    cells: dict[str, str] = {}
    for part in parts:
        cells.update(part)
    return cells


def _cell_texts(cells: list[Scalar], writer: Any, out: io.StringIO) -> list[str]:
    """Each cell as csv.writer writes it in a line of several: the line of them all split at
    its commas when no cell is quoted (a cell holding a comma would be), else one by one
    (``writer`` writes to ``out``)."""
    if not cells:
        return []
    out.seek(0)
    out.truncate()
    writer.writerow(cells)
    line = out.getvalue()[:-1]
    if '"' not in line:
        return line.split(",")
    texts = []
    for cell in cells:
        if cell == "":
            texts.append("")
            continue
        out.seek(0)
        out.truncate()
        writer.writerow([cell])
        texts.append(out.getvalue()[:-1])
    return texts


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
