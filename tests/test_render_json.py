"""The JSON writer's one optimisation (render.text._item_lines) writes what plain json.dumps
writes: an item per line, each compact, the rest indented by 2."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specsheet.render.text import to_json


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
DOCUMENTS = [
    {"schema_version": 1, "points": []},
    {"schema_version": 1, "axes": [{"name": "tokens"}], "points": [
        {"at": {"tokens": 1}, "report": {"spec": shared, "kv": {"bytes": 1}, "ok": True}},
        {"at": {"tokens": 2}, "report": {"spec": shared, "kv": {"bytes": 2}, "ok": False}},
        {"at": {}, "report": {}},
        {"at": {"tokens": 3}, "report": {"spec": dict(shared), "kv": {}, "x": 1.0}},
        [1, "two"], "three", None,
    ]},
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_items_are_written_as_json_dumps_writes_them(document: dict[str, Any]) -> None:
    text = to_json(document, "points")
    assert text == plain(document, "points")
    assert json.loads(text) == document


def test_a_sweeps_document_is_written_as_json_dumps_writes_it() -> None:
    import specsheet
    from specsheet.figures import Axis, Point
    from specsheet.plan.sweep import moved_to_tokens as at_tokens
    from specsheet.views.sweep import sweep_document

    base = specsheet.report(specsheet.load("gpt2-small"))
    points = [Point({"tokens": t, "batch": b}, at_tokens(base, t), b)
              for t in (128, 256, 512) for b in (1, 2)]
    axes = [Axis("tokens", (128, 256, 512)), Axis("batch", (1, 2))]
    document = sweep_document(axes, points, None, None,
                              options={"tokens": "t", "batch": "b"})
    assert document["points"][0]["report"]["spec"] is document["points"][2]["report"]["spec"]
    assert to_json(document, "points") == plain(document, "points")
