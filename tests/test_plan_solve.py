"""``specsheet plan --solve`` against a brute-force search written here with ``specsheet.serve``
alone: every GPU, every count, every tp x pp x dp (and ep) serve accepts, each run as serve
runs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app

runner = CliRunner()


def solved(*argv: str) -> dict[str, object]:
    result = runner.invoke(app, ["plan", *argv, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    document = json.loads(result.stdout)
    solve: dict[str, object] = document["solve"]
    return solve


def layouts(n: int, moe: bool) -> Iterator[tuple[int, int, int, bool]]:
    """Every (tp, pp, dp, ep) of n GPUs."""
    for tp in range(1, n + 1):
        for pp in range(1, n // tp + 1):
            if n % (tp * pp):
                continue
            for ep in (False, True) if moe and tp > 1 else (False,):
                yield tp, pp, n // (tp * pp), ep


def served(model: specsheet.Model, gpu: str, tp: int, pp: int, ep: bool,
           **request: object) -> Any:
    try:
        return specsheet.serve(model, gpu, gpus=tp * pp, tp=tp, pp=pp, ep=ep, **request)
    except specsheet.SpecError:  # a layout serve refuses
        return None


MIN_GPUS = [
    # model, GPUs, concurrency, max tpot (seconds)
    ("llama3.1-70b", ("l40s", "h100-sxm", "a100-40gb-sxm"), 64, 0.03),
    ("llama3-8b", ("l4", "rtx-4090"), 40, 0.05),
    ("mixtral-8x7b", ("a100-80gb-sxm", "l40s"), 16, 0.04),
]


@pytest.mark.parametrize(("name", "gpus", "concurrency", "tpot"), MIN_GPUS,
                         ids=[m[0] for m in MIN_GPUS])
def test_min_gpus_is_the_brute_force_answer(name: str, gpus: tuple[str, ...],
                                            concurrency: int, tpot: float) -> None:
    model = specsheet.load(name)
    spec = model.spec
    answer = None
    for n in range(1, 9):
        for gpu in gpus:
            for tp, pp, dp, ep in layouts(n, bool(spec.experts)):
                each = -(-concurrency // dp)
                alone = served(model, gpu, tp, pp, ep, max_model_len=4096)
                if alone is None or not alone.fits or alone.estimates is None:
                    continue
                # the pool's capacity: serve's default concurrency
                if alone.estimates.concurrency < each:
                    continue
                at = served(model, gpu, tp, pp, ep, max_model_len=4096, concurrency=each)
                assert at is not None and at.estimates is not None
                if at.estimates.decode_step_s <= tpot:
                    answer = n
                    break
            if answer:
                break
        if answer:
            break
    assert answer is not None, "the case should have an answer"
    solve = solved(name, "--gpu", ",".join(gpus), "--tokens", "4096", "--concurrency",
                   str(concurrency), "--max-tpot", str(tpot), "--solve", "min-gpus")
    assert solve["answer"] == answer


MAX_CONTEXT = [
    ("llama3.1-8b", ("l4", "h100-sxm"), 8, 2),
    ("qwen3-8b", ("rtx-4090", "a10g"), 4, 1),
    ("mixtral-8x7b", ("h100-sxm", "l40s"), 8, 2),  # experts, and expert parallelism
    ("granite-4.0-h-tiny", ("l4",), 64, 1),  # a hybrid: attention blocks and state pages
]


@pytest.mark.parametrize(("name", "gpus", "concurrency", "most"), MAX_CONTEXT,
                         ids=[m[0] for m in MAX_CONTEXT])
def test_max_context_is_the_brute_force_answer(name: str, gpus: tuple[str, ...],
                                               concurrency: int, most: int) -> None:
    model = specsheet.load(name)
    top = model.spec.context
    shortest = 1024 + 256  # the default request: prompt + output

    def holds(gpu: str, tp: int, pp: int, ep: bool, tokens: int, each: int) -> bool:
        s = served(model, gpu, tp, pp, ep, max_model_len=tokens)
        return s is not None and s.fits and s.max_concurrency >= each

    best = 0
    for n in range(1, most + 1):
        for gpu in gpus:
            for tp, pp, dp, ep in layouts(n, bool(model.spec.experts)):
                each = -(-concurrency // dp)
                if not holds(gpu, tp, pp, ep, shortest, each):
                    continue
                if holds(gpu, tp, pp, ep, top, each):
                    best = top
                    continue
                low, high = shortest, top  # holds at low, not at high
                while high - low > 1:
                    mid = (low + high) // 2
                    low, high = (mid, high) if holds(gpu, tp, pp, ep, mid, each) else (low, mid)
                best = max(best, low)
    assert best, "the case should have an answer"
    solve = solved(name, "--gpu", ",".join(gpus), "--gpus", f"1..{most}", "--concurrency",
                   str(concurrency), "--solve", "max-context")
    assert solve["answer"] == best
    # its command reproduces it: serve at that length holds the requests, one token more not
    command = solve["command"]
    assert isinstance(command, list)
    result = runner.invoke(app, [*command[1:], "--json"])
    document = json.loads(result.stdout)
    # the command is one replica: its concurrency is the replica's share
    assert document["max_concurrency"] >= int(command[command.index("--concurrency") + 1])
    if best < top:
        longer = [*command[1:]]
        longer[longer.index("--tokens") + 1] = str(best + 1)
        over = json.loads(runner.invoke(app, [*longer, "--json"]).stdout)
        assert over["max_concurrency"] < int(command[command.index("--concurrency") + 1])


def test_max_concurrency_and_best_quant() -> None:
    """max-concurrency is the most requests of max_model_len any candidate holds; best-quant
    the format with the most bits per weight among the candidates that meet every
    constraint."""
    result = runner.invoke(app, ["plan", "llama3-70b", "--gpu", "l40s", "--gpus", "2",
                                 "--quant", "any", "--solve", "best-quant", "--json"])
    doc = json.loads(result.stdout)
    bits = {f["format"]: f["bits_per_weight"] for f in doc["formats"]}
    meeting = {c["format"] for c in doc["candidates"] if c["meets"]}
    assert doc["solve"]["answer"] == max(meeting, key=lambda f: bits[f])
    assert "bf16" not in meeting  # 141 GB of bf16 weights do not fit on 2 x 48 GB
    result = runner.invoke(app, ["plan", "llama3-8b", "--gpu", "l4,h100-sxm", "--gpus", "1..2",
                                 "--solve", "max-concurrency", "--json"])
    doc = json.loads(result.stdout)
    assert doc["solve"]["answer"] == max(c["max_concurrency"] for c in doc["candidates"])
