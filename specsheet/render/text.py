"""Machine-readable and Markdown renderings: JSON, CSV and GitHub-flavoured Markdown.

None of these imports rich, so scripts that ask for them pay nothing for it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from functools import cache
from itertools import compress, repeat
from math import isfinite
from operator import is_, is_not
from typing import TYPE_CHECKING, Any

try:  # json.encoder's string writer itself (its C accelerator), without importing the json
    # package: its decoder compiles six regular expressions as it loads (4.4 million
    # instructions, about 1 ms), which a document that holds only dicts, lists and scalars
    # does not need (tests/test_render_json.py checks that this is json.encoder's function)
    from _json import encode_basestring_ascii
except ImportError:  # an interpreter without CPython's accelerator
    from json.encoder import encode_basestring_ascii

if TYPE_CHECKING:
    from json import JSONEncoder

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


def _dumps(value: Any) -> str:
    """``json.dumps(value, allow_nan=False)``'s compact text: a number that is not finite
    raises ValueError, never written as ``Infinity`` or ``NaN``, which strict JSON readers
    refuse. One encoder's ``encode`` (what ``json.dumps`` builds and calls each time)."""
    return _strict().encode(value)


@cache
def _strict() -> JSONEncoder:
    """``_dumps``'s encoder, made (and the json package imported) by the first writer that
    needs it: a sweep's points, a CSV's lists. A document is a tree (a section may be in it
    twice, never inside itself): no check for a cycle, which costs a sweep's 3,000 small
    encodings about 0.5 ms."""
    import json

    return json.JSONEncoder(allow_nan=False, check_circular=False)


def _not_finite(value: float) -> str:
    raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")


# The text of each scalar as json.dumps writes it (ensure_ascii), by its exact type: a subclass
# (an IntEnum, say) is json.dumps's to write. `value - value == 0` fails for inf and nan alone.
_SCALAR_TEXT: dict[type, Callable[[Any], str]] = {
    str: encode_basestring_ascii, int: int.__repr__,
    float: lambda value: float.__repr__(value) if value - value == 0 else _not_finite(value),
    bool: {True: "true", False: "false"}.__getitem__, type(None): lambda value: "null"}
_scalar_text = _SCALAR_TEXT.get


def _indented(value: Any, level: int, keys: dict[str, str]) -> str:
    """``json.dumps(value, indent=2, allow_nan=False)``'s text, ``value`` at depth ``level``
    (its lines after the first indented by 2 x ``level`` spaces); ``keys``: each key's text
    with its ``": "``, made as met. CPython's C encoder writes compact text alone, and with an
    indent json.dumps runs its pure-Python encoder, a chain of generators (some 9,000
    instructions a value; this walk, some 3,700): the second optimisation of the writers,
    held by tests/test_render_json.py to json.dumps's text. A value of a type json.dumps
    writes otherwise (a tuple, a subclass, a dict with a key that is not a string) is
    json.dumps's own text."""
    kind = type(value)
    scalar = _scalar_text(kind)
    if scalar is not None:
        return scalar(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        try:
            entries = [keys[key] + (scalar(entry) if (scalar := _scalar_text(type(entry)))
                                    else _indented(entry, level + 1, keys))
                       for key, entry in value.items()]
        except KeyError:  # a key not met before: its text made, the dict written again (the
            # entries before it too, once a document: cheaper than a test of every dict's keys)
            if not all(type(key) is str for key in value):
                return _whole(value, level)
            for key in value:
                if key not in keys:
                    keys[key] = encode_basestring_ascii(key) + ": "
            return _indented(value, level, keys)
        return "{" + inner + ("," + inner).join(entries) + inner[:-2] + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = "\n" + "  " * (level + 1)
        kinds = set(map(type, value))
        if len(kinds) == 1 and (scalar := _scalar_text(kinds.pop())) is not None:
            items = list(map(scalar, value))
        else:
            items = [scalar(item) if (scalar := _scalar_text(type(item)))
                     else _indented(item, level + 1, keys) for item in value]
        return "[" + inner + ("," + inner).join(items) + inner[:-2] + "]"
    return _whole(value, level)


def _whole(value: Any, level: int) -> str:
    """json.dumps's own indented text of ``value`` at depth ``level`` (its text holds no line
    break but those between its lines: ensure_ascii writes one in a string as \\n)."""
    import json

    return json.dumps(value, indent=2, allow_nan=False).replace("\n", "\n" + "  " * level)


def to_json(document: dict[str, Any], lines_of: str | None = None) -> str:
    """One JSON document, keys in schema order, integers exact: ``json.dumps`` with an indent
    of 2. With ``lines_of``, that key's list (a sweep's points) is written an item per line,
    each as ``json.dumps`` writes it compact: the same JSON value, and a line per point for
    grep (``json_pieces``)."""
    return "".join(json_pieces(document, lines_of))


ITEMS_PER_PIECE = 16  # a sweep's point is some 3 KB of text: pieces of about 50 KB


def json_pieces(document: dict[str, Any], lines_of: str | None = None) -> list[str]:
    """``to_json``'s text in pieces, which joined are that text: ``lines_of``'s items
    ``ITEMS_PER_PIECE`` to a piece (else the document is one piece). A writer sends them in
    turn, so that a sweep's megabytes are never one string, nor encoded as one copy of it.
    Every value is encoded before the pieces are returned: a number that is not finite raises
    ValueError before anything is written."""
    if lines_of is None:
        return [_indented(document, 0, {}) + "\n"]
    head = "".join(f"  {_dumps(key)}: {_dumps(value)},\n"
                   for key, value in document.items() if key != lines_of)
    items = document[lines_of]
    if not items:
        return [f"{{\n{head}  {_dumps(lines_of)}: []\n}}\n"]
    parts = [f"{{\n{head}  {_dumps(lines_of)}: [\n    "]
    starts = [0]  # where each piece's parts start
    written = _Written()
    for n, item in enumerate(items, 1):
        parts += written.item(item)
        parts.append(",\n    ")
        if not n % ITEMS_PER_PIECE:
            starts.append(len(parts))
    parts[-1] = "\n  ]\n}\n"
    if starts[-1] < len(parts):
        starts.append(len(parts))
    return ["".join(parts[a:b]) for a, b in zip(starts, starts[1:], strict=False)]


# The first optimisation of the text writers (the second is ``_indented``, above): a section
# that consecutive items share (the very same object: views/sweep.py shares a sweep's spec,
# parameters and memory along the grid) is written once. Held by tests/test_render_json.py to
# what json.dumps and a plain flatten + csv.writer write.

_NOTHING = object()  # no value written yet at a key
_MARK = "\x00"  # never in json.dumps's text, which writes a control character as \u0000


class _Place:
    """The value an item held last at one key, for the next item's value there: its text (in
    pieces), and for a dict its keys, its entries, each entry's text, the entries that were
    new and the text between them (``runs``)."""

    __slots__ = ("value", "text", "names", "entries", "pieces", "fresh", "runs")

    def __init__(self) -> None:
        self.value: Any = _NOTHING
        self.text: list[str] = []
        self.names: list[Any] | None = None  # None: not a dict that may be spliced
        self.entries: list[Any] = []
        self.pieces: list[str] | None = None  # None: written whole
        self.fresh: list[int] | None = None
        self.runs: list[str] = []


class _Written:
    """Items written in turn as ``json.dumps`` writes each (compact). An item's value at a key
    that is the very same object as the item before's there is that text again; a dict of
    the same keys as the one before (three or more: a smaller one is as quick written whole),
    some of its entries the same objects, is spliced from their texts: the runs of entries
    that are shared joined once, and kept while the same entries are new, each new entry
    written; anything else is encoded whole."""

    def __init__(self) -> None:
        self.places: dict[str, _Place] = {}
        self.heads: dict[str, str] = {}  # '"key": ' by key

    def head(self, name: str) -> str:
        """'"name": ', as json.dumps writes a key."""
        head = self.heads.get(name)
        if head is None:
            head = self.heads[name] = _dumps(name) + ": "
        return head

    def item(self, item: Any) -> list[str]:
        """The text of ``item``, in pieces."""
        if type(item) is not dict or not item:
            return [_dumps(item)]
        text: list[str] = []
        separator = "{"
        for name, value in item.items():
            if type(name) is not str:  # json.dumps spells such a key as a string
                return [_dumps(item)]
            text.append(separator + self.head(name))
            separator = ", "
            place = self.places.get(name)
            if place is None:
                place = self.places[name] = _Place()
            if place.value is not value:
                place.text = self._value(value, place)
                place.value = value
            text += place.text
        text.append("}")
        return text

    def _value(self, value: Any, place: _Place) -> list[str]:
        """The text of ``value``, the one before it at its key held by ``place``."""
        if type(value) is not dict or len(value) < 3:
            place.names = None
            return [_dumps(value)]
        names = list(value)
        entries = list(value.values())
        text = None
        if names == place.names:
            text = self._spliced(names, entries, place)
        else:
            place.pieces = None
        place.names, place.entries = names, entries
        return [_dumps(value)] if text is None else text

    def _spliced(self, names: list[Any], entries: list[Any], place: _Place
                 ) -> list[str] | None:
        """The text of the dict of ``names`` and ``entries`` from the one before it (the same
        keys, ``place``), or None when it shares no entry with it and has no runs to take, or
        a key is not a string."""
        fresh = list(compress(range(len(names)), map(is_not, entries, place.entries)))
        pieces = place.pieces
        if pieces is None:
            if len(fresh) == len(names) or not all(type(name) is str for name in names):
                return None
            pieces = place.pieces = list(map(_dumps, entries))
            place.fresh = None
        if fresh != place.fresh:  # other entries are new: the runs between them again
            new = set(fresh)
            marked = [self.head(name) + (_MARK if i in new else pieces[i])
                      for i, name in enumerate(names)]
            place.runs = ("{" + ", ".join(marked) + "}").split(_MARK)
            place.fresh = fresh
        runs = place.runs
        text = [runs[0]]
        for j, i in enumerate(fresh, 1):
            pieces[i] = entry = _dumps(entries[i])
            text.append(entry)
            text.append(runs[j])
        return text


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
        return _dumps(value)
    return "" if value is None else value


def to_csv(rows: list[dict[str, Any]]) -> str:
    """``csv_pieces``'s text, joined."""
    return "".join(csv_pieces(rows))


ROWS_PER_PIECE = 64  # a sweep's row is some 1 KB of text


def csv_pieces(rows: list[dict[str, Any]]) -> list[str]:
    """A header row and one line per row, in pieces of ``ROWS_PER_PIECE`` lines that joined
    are the text (every cell written before they are returned, as in ``json_pieces``); each
    row's leaves by dotted path (``flatten``). The columns are the union of every row's
    leaves, in the order they first appear (the first row's, then each a later row adds),
    free-text columns last, so no row loses a field; a row without a column has an empty
    cell. Lists are written as JSON ([0, 2, 4]), booleans as true and false, null as an
    empty cell: what csv.writer writes of the cells. A number that is not finite raises
    ValueError, as in JSON (``_dumps``), never written as inf.

    A section or value that a row shares with the row before it (the same object at the same
    key) has its cells written once (the first optimisation, above): csv.writer quotes a cell by
    what it holds alone, so a line is the join of its cells' texts, each written once. Rows
    laid out alike (the same columns at the same keys) whose section at a key is one object
    in all of them have its cells joined once, into the text between the cells that vary: a
    sweep's line is its place, KV cache and FLOPs put into the text its points share."""
    import csv  # lazy: the CSV path alone needs it, and every JSON path imports this module

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    values: list[Any] = []  # every section's leaves, in turn, to be written as cells
    made: list[list[Any]] = []  # every section, in the order the rows first hold them:
    # [its columns, its first cell among values, the cell after its last, the cells' texts,
    # its shape (_leaves)]
    columns_of: dict[Any, tuple[str, ...]] = {}  # by (key's type, key, shape): one tuple each
    before: dict[Any, tuple[Any, Any, list[Any]]] = {}  # a row's before by key: its value,
    # the key, its section (kept by the rows laid out otherwise than the row before them)
    layouts: dict[tuple[int, ...], list[int]] = {}  # the rows by their sections' columns
    held: list[list[list[Any]]] = []  # each row's sections
    first_row = 0  # the sections of the first row
    keys_before: list[Any] = []
    values_before: list[Any] = []
    sections: list[list[Any]] = []
    group: list[int] = []
    for row in rows:
        keys = list(row)
        entries = list(row.values())
        if held and len(keys) == len(keys_before) and all(map(is_, keys, keys_before)):
            # the keys of the row before (the same objects): the values that are not its
            fresh = list(compress(range(len(keys)), map(is_not, entries, values_before)))
            relaid = False
            if fresh:
                sections = sections.copy()
                for i in fresh:
                    last = sections[i]
                    section = sections[i] = _section(keys[i], entries[i], last, values,
                                                     columns_of)
                    made.append(section)
                    relaid = relaid or section[0] is not last[0]
        else:
            if held:
                for key, value, section in zip(keys_before, values_before, sections,
                                               strict=True):
                    before[key] = (value, key, section)
            sections = []
            for key, value in zip(keys, entries, strict=True):
                known = before.get(key)
                if known is not None and known[1] is key:
                    if known[0] is value:
                        sections.append(known[2])
                        continue
                    section = _section(key, value, known[2], values, columns_of)
                else:
                    section = _section(key, value, None, values, columns_of)
                made.append(section)
                sections.append(section)
            relaid = True
        if relaid:
            group = layouts.setdefault(tuple([id(s[0]) for s in sections]), [])
        group.append(len(held))
        if not held:
            first_row = len(made)
        held.append(sections)
        keys_before, values_before = keys, entries
    if not all(map(isfinite, compress(values, map(isinstance, values, repeat(float))))):
        raise ValueError("Out of range float values are not CSV compliant")
    cells = [v if type(v) in _PLAIN else _csv_cell(v) for v in values]
    # the first row's texts section by section (its free text is quoted), then the rest's
    texts = []
    for section in made[:first_row]:
        texts += _cell_texts(cells[section[1]:section[2]], writer, out)
    texts += _cell_texts(cells[len(texts):], writer, out)
    for section in made:
        section[3] = texts[section[1]:section[2]]
    union: dict[str, None] = {}
    for group in layouts.values():
        for section in held[group[0]]:
            union.update(dict.fromkeys(section[0]))
    header = [c for c in union if c.rsplit(".", 1)[-1] not in FREE_TEXT]
    header += [c for c in union if c.rsplit(".", 1)[-1] in FREE_TEXT]
    out.seek(0)
    out.truncate()
    writer.writerow(header)
    lines = [""] * (len(held) + 1)
    lines[0] = out.getvalue()
    for group in layouts.values():
        _lines(header, held, group, lines)
    return ["".join(lines[i:i + ROWS_PER_PIECE])
            for i in range(0, len(lines), ROWS_PER_PIECE)]


def _section(key: Any, value: Any, last: list[Any] | None, values: list[Any],
             columns_of: dict[Any, tuple[str, ...]]) -> list[Any]:
    """A row's value at ``key``, its leaves put in ``values``; ``last``: the section a row
    before held at that key (the same key object), whose columns it takes if it has its
    shape. ``columns_of``: the columns by key and shape, one tuple each."""
    start = len(values)
    if isinstance(value, dict):
        shape: Any = _leaves(value, values)
    else:
        values.append(value)
        shape = _LEAF
    if last is not None and last[4] == shape:
        columns = last[0]
    else:
        columns = columns_of.get((type(key), key, shape))
        if columns is None:
            columns = columns_of[type(key), key, shape] = tuple(
                _paths(value, f"{key}.") if shape is not _LEAF else [f"{key}"])
    return [columns, start, len(values), None, shape]


_LEAF = object()  # the shape of a value that is not a dict
_PLAIN = frozenset({int, float, str})  # values that are their own cells


def _leaves(value: dict[Any, Any], values: list[Any]) -> tuple[Any, ...]:
    """Put the leaves of ``value`` in ``values`` in the order ``flatten`` takes them, and
    return its shape: its keys in order and each dict's within it, with the keys' types when
    one is not a string (1 and True are equal keys but not one column), from which ``flatten``
    names its columns."""
    shape: list[Any] = []
    for key, entry in value.items():
        if isinstance(entry, dict):
            shape.append((_LEAF, type(key), key, _leaves(entry, values)))
        else:
            values.append(entry)
            shape.append(key if type(key) is str else (type(key), key))
    return tuple(shape)


def _paths(value: dict[Any, Any], prefix: str) -> list[str]:
    """The dotted path of each leaf of ``value`` in turn, as ``flatten`` names them (a path
    that two leaves share is there twice: ``flatten`` keeps the later leaf)."""
    paths = []
    for key, entry in value.items():
        if isinstance(entry, dict):
            paths += _paths(entry, f"{prefix}{key}.")
        else:
            paths.append(f"{prefix}{key}")
    return paths


def _lines(header: list[str], held: list[list[list[Any]]], group: list[int],
           lines: list[str]) -> None:
    """The lines of the rows ``group`` (indices into ``held``, rows laid out alike), each at
    its place in ``lines`` (after the header). The text of the cells that every row of the
    group holds in one section (the same object), and of the columns that none holds, is
    joined once; a row's line is its other cells put into that text."""
    first = held[group[0]]
    shared = [len({id(s) for s in slot}) == 1
              for slot in zip(*[held[r] for r in group], strict=True)] if first else []
    where = {column: (i, j) for i, section in enumerate(first)
             for j, column in enumerate(section[0])}
    varying = [i for i, same in enumerate(shared) if not same]
    offset = {}  # a varying section's first cell among the row's varying cells
    count = 0
    for i in varying:
        offset[i] = count
        count += len(first[i][0])
    pieces = []
    order = []  # the varying cells in the header's order, by their place among the row's
    for column in header:
        place = where.get(column)
        if place is None:
            pieces.append("")
        elif shared[place[0]]:
            pieces.append(first[place[0]][3][place[1]].replace("%", "%%"))
        else:
            pieces.append("%s")
            order.append(offset[place[0]] + place[1])
    if len(header) == 1 and not order:  # a line of one empty cell is written "", not as nothing
        pieces = [pieces[0] or '""']
    template = ",".join(pieces) + "\n"
    if not order:
        line = template % ()
        for r in group:
            lines[r + 1] = line
        return
    pick = None if order == list(range(count)) else order
    for r in group:
        sections = held[r]
        cells: list[str] = []
        for i in varying:
            cells += sections[i][3]
        if pick is not None:
            cells = [cells[k] for k in pick]
        if len(header) == 1 and not cells[0]:
            lines[r + 1] = '""\n'
            continue
        lines[r + 1] = template % tuple(cells)


def _cell_texts(cells: list[Scalar], writer: Any, out: io.StringIO) -> list[str]:
    """Each cell as csv.writer writes it in a line of several: its ``str`` when every cell is
    an int, a float or a string and none holds a comma, a quote or a line break (as
    csv.writer writes those: a float as its repr, which its str is); else the line of them
    all (written by ``writer`` to ``out``) split at its commas when no cell in it is quoted (a
    cell holding a comma would be), else split into its fields as csv.writer writes them (a
    field quoted whole, its quotes doubled, or one without a comma or a quote), or cell by
    cell should that not account for every character of the line."""
    if not cells:
        return []
    if set(map(type, cells)) <= _PLAIN:
        texts: list[str] = list(map(str, cells))
        joined = "".join(texts)
        if not any(c in joined for c in ',"\r\n'):
            return texts
    out.seek(0)
    out.truncate()
    writer.writerow(cells)
    line = out.getvalue()[:-1]
    if '"' not in line:
        return line.split(",")
    if len(cells) > 1:  # a field of csv.writer's line, and its comma (compiled here: the
        # JSON paths import this module)
        texts = re.findall(r'((?:"[^"]*")+|[^,"]*),', line + ",")
        if len(texts) == len(cells) and sum(map(len, texts)) + len(texts) == len(line) + 1:
            return texts
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
