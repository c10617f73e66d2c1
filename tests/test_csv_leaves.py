"""Every CSV of compare, sweep and check holds every JSON leaf of every row (issue 24), over
every preset and every quantization format: the whole matrix, in-process.

Each case is one CliRunner run with ``--format csv``: the command's ``emit`` is wrapped to keep
the document it was given (the one ``--json`` writes, tests/test_api_documents.py), and the rows
are taken from that document here, apart from the command's own code; then every leaf of every
row must be in the CSV the command printed, spelled as a CSV spells it. A pair of a model and a
format that the format cannot store (a width not a multiple of its group, a state-space layer)
is refused by ``count`` too; the pairs each run covers are those ``count`` answers, and a test
holds that the refused ones are few and refused for those reasons only. A few runs are real
subprocesses, whose CSV must be the in-process one byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.api.count import load, report
from specsheet.cli.app import app, build_command
from specsheet.errors import SpecError
from specsheet.quant.formats import FORMATS
from specsheet.render.text import flatten
from specsheet.sources.presets import preset_index

runner = CliRunner()
PRESETS = list(preset_index())
QUANTS = ["none", *FORMATS]
CHECK = ["--max-params", "8B", "--max-weights", "20GB", "--gpu", "h100-sxm",
         "--min-concurrency", "2"]


@cache
def stored(name: str) -> tuple[str, ...]:
    """The formats (``none``: bf16) that ``name``'s weights can be stored in, as count says."""
    model = load(name)
    kept = []
    for quant in QUANTS:
        try:
            report(model, quant=None if quant == "none" else quant)
        except SpecError:
            continue
        kept.append(quant)
    return tuple(kept)


def _cell(value: Any) -> str:
    """How a CSV cell spells a JSON leaf, written here apart from render/text.py."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


def _run(command: str, args: list[str]) -> tuple[dict[str, Any], str]:
    """The document ``command`` emitted and the CSV it printed, from one in-process run."""
    import importlib

    module = importlib.import_module(f"specsheet.cli.commands.{command}")
    build_command(command)  # the command module loaded, as the app loads it
    kept: list[dict[str, Any]] = []
    real = module.emit

    def keep(fmt: str, document: dict[str, Any], *rest: Any, **named: Any) -> None:
        kept.append(document)
        real(fmt, document, *rest, **named)

    module.emit = keep
    try:
        result = runner.invoke(app, [command, *args, "--format", "csv"])
    finally:
        module.emit = real
    assert result.exit_code in (0, 1), (command, args, result.stderr)
    (document,) = kept
    return document, result.stdout


def _holds_every_leaf(rows: list[dict[str, Any]], text: str) -> int:
    """Every leaf of every row in its CSV row; the leaves checked."""
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(rows)
    checked = 0
    for row, line in zip(rows, table, strict=True):
        for path, value in flatten(row).items():
            assert path in line, path
            assert line[path] == _cell(value), (path, line[path], value)
            checked += 1
    return checked


def _sweep_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """A sweep's rows: each point's coordinates, its batch and its report (the batch is both a
    coordinate and a column: 1 where the batch is not an axis)."""
    return [{"at": p["at"], "batch": p["at"].get("batch", 1), **p["report"]}
            for p in document["points"]]


def _check_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """check's rows: every model's size checks, then every model's serving checks (one model's
    document holds its checks at the top)."""
    models = document.get("models", [document])
    return [{"name": m["model"]["name"], **c} for m in models for c in m["checks"]] + \
        [{"name": m["model"]["name"], **c} for m in models
         for c in m.get("serve", {}).get("checks", [])]


def _takers(quant: str) -> list[str]:
    return [name for name in PRESETS if quant in stored(name)]


def _quant(quant: str) -> list[str]:
    return [] if quant == "none" else ["--quant", quant]


def test_the_pairs_left_out_are_the_ones_count_refuses() -> None:
    """Of the presets x 23 formats, the pairs left out are refused by count for a reason the
    format states: a width its groups cannot hold, or a state-space layer it has no layout
    for; every preset takes bf16, and a preset of attention layers only most formats."""
    refused: dict[str, list[str]] = {}
    for name in PRESETS:
        assert "none" in stored(name), name
        for quant in set(QUANTS) - set(stored(name)):
            with pytest.raises(SpecError) as error:
                report(load(name), quant=quant)
            refused.setdefault(quant, []).append(name)
            why = str(error.value)
            assert ("not a multiple of" in why or "not whole blocks" in why
                    or "state-space" in why), why
    attention_only = [name for name in PRESETS
                      if not set(load(name).spec.layer_types) - {"attention"}]
    pairs = sum(len(stored(name)) for name in attention_only)
    assert pairs >= 0.9 * len(attention_only) * len(QUANTS), (pairs, refused)
    assert all(len(_takers(q)) >= 40 for q in QUANTS), {q: len(_takers(q)) for q in QUANTS}


@pytest.mark.parametrize("quant", QUANTS)
def test_compare_of_every_preset_in_every_format(quant: str) -> None:
    names = _takers(quant)
    document, text = _run("compare", [*names, *_quant(quant)])
    assert len(document["models"]) == len(names)
    assert _holds_every_leaf(document["models"], text) > 50 * len(names)


@pytest.mark.parametrize("quant", ["none", "fp8", "gguf-q4_k_m"])
def test_compare_on_a_gpu_keeps_each_models_serving_plan(quant: str) -> None:
    """With --gpu a row is a model and its serving plan (serve.*): every leaf of both."""
    names = _takers(quant)
    document, text = _run("compare", [*names, "--gpu", "h100-sxm", *_quant(quant)])
    rows = [{**m, "serve": s} for m, s in zip(document["models"], document["serve"],
                                               strict=True)]
    assert _holds_every_leaf(rows, text) > 150 * len(names)


def _chunks(items: list[str], n: int) -> Iterator[list[str]]:
    for start in range(0, len(items), n):
        yield items[start:start + n]


@pytest.mark.parametrize("names", list(_chunks(PRESETS, 10)), ids=lambda n: f"{n[0]}..")
def test_sweep_of_every_preset_over_every_format(names: list[str]) -> None:
    """Each preset swept over every format it can be stored in, at batch 1 and 4: 46 points
    for most, each holding its layout's tensor types (GGUF's differ by format)."""
    for name in names:
        quants = stored(name)
        document, text = _run("sweep", [name, "--quant", ",".join(quants), "--batch", "1,4"])
        assert len(document["points"]) == 2 * len(quants)
        _holds_every_leaf(_sweep_rows(document), text)


@pytest.mark.parametrize("quant", QUANTS)
def test_check_of_every_preset_in_every_format(quant: str) -> None:
    """check with size limits and a serving limit on an h100-sxm: each model's checks and its
    serving checks, a row each."""
    names = _takers(quant)
    document, text = _run("check", [*names, *CHECK, *_quant(quant)])
    rows = _check_rows(document)
    assert len(rows) == 4 * len(names)  # params, weights; fits, max_concurrency
    _holds_every_leaf(rows, text)


@pytest.mark.parametrize(("command", "args", "rows"), [
    ("compare", ["llama3-8b", "granite-4.0-h-tiny"], lambda d: d["models"]),
    ("sweep", ["gpt2-small", "--quant", "none,gguf-q4_k_m,mxfp4", "--batch", "1,4"],
     _sweep_rows),
    ("check", ["gpt2-small", "llama3-8b", *CHECK, "--quant", "gguf-q8_0"], _check_rows),
])
def test_a_real_process_prints_the_same_csv(command: str, args: list[str], rows: Any) -> None:
    from commands import specsheet

    document, text = _run(command, args)
    real = specsheet(command, *args, "--format", "csv")
    assert real.returncode in (0, 1), real.stderr
    assert real.stdout == text
    _holds_every_leaf(rows(document), real.stdout)
    as_json = specsheet(command, *args, "--json")
    assert json.loads(as_json.stdout) == json.loads(json.dumps(document))
