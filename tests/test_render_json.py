"""The text writers' one optimisation (render.text: a section consecutive items share is
written once, and in CSV the text that rows laid out alike share is joined once) writes what
plain json.dumps writes (an item per line, each compact, the rest indented by 2), and what a
plain flatten and csv.writer write, for the documents below and for random ones."""

from __future__ import annotations

import csv
import enum
import io
import json
import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specsheet.render.text import FREE_TEXT, flatten, to_csv, to_json


def plain(document: dict[str, Any], lines_of: str) -> str:
    """The reference: json.dumps and nothing else."""
    head = "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n"
                   for k, v in document.items() if k != lines_of)
    items = document[lines_of]
    if not items:
        return "{\n" + head + f"  {json.dumps(lines_of)}: []\n" + "}\n"
    body = ",\n    ".join(json.dumps(item) for item in items)
    return "{\n" + head + f"  {json.dumps(lines_of)}: [\n    {body}\n  ]\n" + "}\n"


shared = {"layers": 32, "name": "é", "list": [1, 2.5, None, True]}


def _changing() -> list[dict[str, Any]]:
    """A section whose entries a, b, c change in turn, then two at once, then one again."""
    sections = [{"a": 10**6, "b": 2 * 10**6, "c": 3 * 10**6, "d": "x"}]
    for change in ({"a": 10**7}, {"b": 10**8}, {"c": 10**9}, {"a": 5, "b": 10**10},
                   {"a": 10**11}, {"a": 10**12}):
        sections.append({**sections[-1], **change})
    return sections
DOCUMENTS = [
    {"schema_version": 1, "points": []},
    {"schema_version": 1, "axes": [{"name": "tokens"}], "points": [
        {"at": {"tokens": 1}, "report": {"spec": shared, "kv": {"bytes": 1}, "ok": True}},
        {"at": {"tokens": 2}, "report": {"spec": shared, "kv": {"bytes": 2}, "ok": False}},
        {"at": {}, "report": {}},
        {"at": {"tokens": 3}, "report": {"spec": dict(shared), "kv": {}, "x": 1.0}},
        [1, "two"], "three", None,
    ]},
    # spliced dicts: entries shared in part, keys reordered, a key added, non-string keys
    {"schema_version": 1, "points": [
        {"at": {"tokens": 1}, "report": {"spec": shared, "kv": {"b": 1}, "n": "x"}},
        {"at": {"tokens": 2}, "report": {"spec": shared, "kv": {"b": 2}, "n": "x"}},
        {"at": {"tokens": 2}, "report": {"kv": {"b": 2}, "spec": shared, "n": "x"}},
        {"at": {"tokens": 2}, "report": {"kv": {"b": 2}, "spec": shared, "n": "y", "z": 1}},
        {"at": {1: 2}, "report": {1: shared, 2: {"b": 2}}},
        {"at": {1: 2}, "report": {1: shared, 2: {"b": 3}}},
        {"at": {"tokens": 3}, "report": {"spec": shared, "kv": [1.5, shared], "n": None}},
        {"at": {"tokens": 3}, "report": {"spec": shared, "kv": [1.5, shared], "n": None}},
    ]},
    # a section spliced from the one before it, which of its entries are new changing
    {"schema_version": 1, "points": [{"s": s} for s in _changing()]},
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_items_are_written_as_json_dumps_writes_them(document: dict[str, Any]) -> None:
    text = to_json(document, "points")
    assert text == plain(document, "points")
    assert json.loads(text) == json.loads(json.dumps(document))  # integer keys become strings


def test_a_sweeps_document_is_written_as_json_dumps_writes_it() -> None:
    import specsheet
    from specsheet.figures import Axis, Point
    from specsheet.figures import moved_to_tokens as at_tokens
    from specsheet.views.sweep import sweep_document

    base = specsheet.report(specsheet.load("gpt2-small"))
    points = [Point({"tokens": t, "batch": b}, at_tokens(base, t), b)
              for t in (128, 256, 512) for b in (1, 2)]
    axes = [Axis("tokens", (128, 256, 512)), Axis("batch", (1, 2))]
    document = sweep_document(axes, points, None, None,
                              options={"tokens": "t", "batch": "b"})
    assert document["points"][0]["report"]["spec"] is document["points"][2]["report"]["spec"]
    assert to_json(document, "points") == plain(document, "points")


def plain_flatten(document: dict[Any, Any], prefix: str = "") -> dict[str, Any]:
    """The leaves of a document by dotted path, written here apart from render/text.py."""
    leaves: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, dict):
            leaves.update(plain_flatten(value, f"{prefix}{key}."))
        else:
            leaves[f"{prefix}{key}"] = value
    return leaves


def plain_csv(rows: list[dict[str, Any]]) -> str:
    """The reference: each row flattened, the union of their columns (free text last), a
    cell by csv.writer."""
    flat = [plain_flatten(row) for row in rows]
    columns = list(dict.fromkeys(key for row in flat for key in row))
    header = [c for c in columns if c.rsplit(".", 1)[-1] not in FREE_TEXT]
    header += [c for c in columns if c.rsplit(".", 1)[-1] in FREE_TEXT]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)

    def cell(value: Any) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return json.dumps(value)
        return "" if value is None else value

    for row in flat:
        writer.writerow([cell(row.get(column)) for column in header])
    return out.getvalue()


CSV_ROWS = [
    [],
    [{"a": None}],
    [{"a": {"b": 1}}, {"a": {"c": 2}}],
    [{"at": {"tokens": 1}, "batch": 1, "spec": shared, "kv": {"bytes": 1, "on": True}},
     {"at": {"tokens": 2}, "batch": 1, "spec": shared, "kv": {"bytes": 2, "on": False}},
     {"at": {"tokens": 3}, "batch": 2, "spec": dict(shared, name='a "b", c'),
      "description": "x,y", "kv": {}},
     {"batch": None, "spec": shared, "extra": [1, {"x": 1}], "kv": {"bytes": 2.5}}],
]


@pytest.mark.parametrize("rows", CSV_ROWS)
def test_rows_are_written_as_a_plain_csv_writer_writes_them(rows: list[dict[str, Any]]) -> None:
    assert to_csv(rows) == plain_csv(rows)


def test_a_sweeps_rows_are_written_as_a_plain_csv_writer_writes_them() -> None:
    import specsheet

    sweep = specsheet.sweep("gpt2-small", tokens=[128, 256, 512], batch=[1, 2])
    document = sweep.to_dict()
    rows = [{"at": point["at"], "batch": p.batch, **point["report"]}
            for point, p in zip(document["points"], sweep.points, strict=True)]
    assert rows[0]["spec"] is rows[1]["spec"]
    text = to_csv(rows)
    assert text == plain_csv(rows)
    assert text.splitlines()[1].startswith("128,1,1,1,gpt2-small,124439808,")


def test_the_flatten_of_render_text_is_the_plain_one() -> None:
    document = {"a": {"b": 1, "c": {"d": [1]}, 2: None}, "e": {}, "a.b": "x", True: 1.5}
    assert flatten(document) == plain_flatten(document) == {
        "a.b": "x", "a.c.d": [1], "a.2": None, "True": 1.5}


# Random rows: keys that collide (as dotted paths, 1 and True, free-text names), values with
# commas, quotes, percent signs, line breaks, empty strings, -0.0, NaN, lists; sections drawn
# from a pool, so that rows share them (the same objects) in turn, in runs and out of order.
KEYS = st.sampled_from(["a", "b", "a.b", "description", "x.origin", "reference", "%s", "",
                        "é", 0, 1, True, False])
SCALARS = st.one_of(
    st.integers(min_value=-10**20, max_value=10**20), st.floats(), st.booleans(), st.none(),
    st.text(alphabet=' a1,"%\n\r.é', max_size=6),
    st.lists(st.one_of(st.integers(0, 9), st.floats()), max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4),
                      max_leaves=8)


@st.composite
def shared_rows(draw: st.DrawFn) -> list[dict[Any, Any]]:
    pool = draw(st.lists(VALUES, min_size=1, max_size=6))
    layouts = draw(st.lists(st.lists(st.tuples(KEYS, st.integers(0, 5)), max_size=5),
                            min_size=1, max_size=4))
    rows = []
    for n in draw(st.lists(st.integers(0, 3), max_size=12)):
        picks = layouts[n % len(layouts)]
        shift = draw(st.integers(0, 2))  # the same layout over other sections of the pool
        rows.append({key: pool[(i + shift) % len(pool)] for key, i in picks})
    return rows


def finite(value: Any) -> bool:
    """Every float in ``value`` (a row, a list, a leaf) is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True


def written_as_plain(rows: list[dict[Any, Any]]) -> None:
    """to_csv writes what plain_csv writes, or refuses (as JSON does) a number that is not
    finite, in a cell or a list."""
    if all(finite(row) for row in rows):
        assert to_csv(rows) == plain_csv(rows)
    else:
        with pytest.raises(ValueError):
            to_csv(rows)


@settings(max_examples=400, deadline=None)
@given(shared_rows())
def test_random_rows_are_written_as_a_plain_csv_writer_writes_them(
        rows: list[dict[Any, Any]]) -> None:
    written_as_plain(rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(KEYS, VALUES, max_size=5), max_size=6))
def test_random_unshared_rows_are_written_as_a_plain_csv_writer_writes_them(
        rows: list[dict[Any, Any]]) -> None:
    written_as_plain(rows)


NAMES = st.one_of(st.sampled_from(["a", "b", "a.b", "description", "%s", "", "é", "x"]),
                  KEYS)  # mostly strings: a dict with another key is written whole
SECTIONS = st.dictionaries(NAMES, VALUES, min_size=3, max_size=6)


@st.composite
def shared_items(draw: st.DrawFn) -> list[Any]:
    """Items (dicts, now and then a scalar or a list) whose values are drawn from a pool of
    sections (dicts of three or more entries) and values, so that items share them; most
    items are the one before built again: each section a new dict of the same entries (the
    same objects), some replaced by new ones, so that which entries are new changes from item
    to item; now and then the very same item again."""
    pool = draw(st.lists(st.one_of(SECTIONS, VALUES), min_size=1, max_size=4))
    keys = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    items: list[Any] = []
    for _ in range(draw(st.integers(1, 14))):
        before = items[-1] if items else None
        choice = draw(st.integers(0, 9))
        if choice == 0:
            items.append(draw(st.one_of(SCALARS, st.lists(VALUES, max_size=2))))
        elif choice == 1 and items:
            items.append(before)  # the very same item again
        elif isinstance(before, dict) and choice > 3:
            item = {}
            for key, value in before.items():
                if isinstance(value, dict) and value:
                    value = dict(value)
                    for entry in draw(st.lists(st.sampled_from(list(value)), max_size=3)):
                        value[entry] = draw(st.one_of(VALUES, st.integers(10**6, 10**9)))
                item[key] = value
            items.append(item)
        else:
            items.append({key: draw(st.sampled_from(pool)) for key in keys})
    return items


@settings(max_examples=400, deadline=None)
@given(shared_items())
def test_random_items_are_written_as_json_dumps_writes_them(items: list[Any]) -> None:
    document = {"schema_version": 1, "points": items}
    if finite(items):
        assert to_json(document, "points") == plain(document, "points")
        assert json.loads(to_json(document, "points")) == json.loads(json.dumps(document))
    else:
        with pytest.raises(ValueError):
            to_json(document, "points")


# Whole documents, written indented (every command's --json but a sweep's): nested dicts and
# lists, keys that are not strings, empty containers, and the types json.dumps writes its own
# way (a tuple as a list, an int or a str subclass by its value)
class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


ODD = st.one_of(st.just(Level.LOW), st.builds(Name, st.text(alphabet="ab\"é\n", max_size=3)),
                st.tuples(st.integers(0, 9), st.text(max_size=2)))
NESTED = st.recursive(st.one_of(SCALARS, ODD),
                      lambda inner: st.one_of(st.dictionaries(NAMES, inner, max_size=5),
                                              st.lists(inner, max_size=4)),
                      max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(NAMES, NESTED, max_size=6))
@example({"a": [1.5, {"b": float("nan")}], "c": {}})
@example({"a": [float("-inf")], "b": [1, "x", None, True, 2.5, -0.0]})
@example({"a": {1: [], "b": {True: (1, Name("é"))}, "c": [Level.LOW, []]}})
def test_random_documents_are_written_as_json_dumps_writes_them_indented(
        document: dict[Any, Any]) -> None:
    if finite(document):
        assert to_json(document) == json.dumps(document, indent=2) + "\n"
    else:
        with pytest.raises(ValueError):
            to_json(document)


@pytest.mark.parametrize("args", [["presets", "--json"], ["count", "llama3.1-8b", "--json"],
                                  ["compare", "gpt2-small", "mixtral-8x7b", "--json"]])
def test_commands_documents_are_written_as_json_dumps_writes_them_indented(
        args: list[str]) -> None:
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    text = CliRunner().invoke(app, args).stdout
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


def test_strings_are_written_by_json_encoders_own_function() -> None:
    """render/text.py takes the string writer from CPython's accelerator without importing the
    json package: it is the very function json.encoder writes strings with."""
    import json.encoder

    from specsheet.render import text

    assert text.encode_basestring_ascii is json.encoder.encode_basestring_ascii
    assert text.to_json({"é\n\"\x7f": ["\U0001f600", "\\"]}) == json.dumps(
        {"é\n\"\x7f": ["\U0001f600", "\\"]}, indent=2) + "\n"
