"""plan/search.py's pure parts against independent derivations: the layouts vLLM accepts, the
bound that skips a memory plan (never one that serve fits), the concurrency a rate chooses,
the ranking and the Pareto front on hand-made candidates."""

from __future__ import annotations

import pytest

import specsheet
from specsheet.plan import search
from specsheet.plan.search import Candidate, Constraints, Layout


def test_layouts_are_every_factorisation_serve_accepts() -> None:
    spec = specsheet.load("llama3-70b").spec  # 64 heads, 8 KV heads
    space = search.layouts(spec, 8)
    # tp must divide 64 and 8: 1, 2, 4, 8; pp any; dp the rest, tp x pp x dp <= 8
    expected = {(tp, pp, False, dp) for tp in (1, 2, 4, 8) for pp in range(1, 9)
                for dp in range(1, 9) if tp * pp * dp <= 8}
    assert set(space.layouts) == expected
    # tp 3, 5, 6, 7 refused, once for each dp count that would have followed
    assert space.refused == sum(8 // (tp * pp) for tp in (3, 5, 6, 7)
                                for pp in range(1, 8 // tp + 1))
    alone = search.layouts(spec, 8, 8, replicas=False)
    assert {lay.gpus for lay in alone.layouts} == {8}
    assert all(lay.dp == 1 for lay in alone.layouts)


def test_experts_get_expert_parallel_layouts_above_tp_1() -> None:
    spec = specsheet.load("mixtral-8x7b").spec
    space = search.layouts(spec, 4, replicas=False)
    assert Layout(4, 1, True) in space.layouts and Layout(4, 1, False) in space.layouts
    assert Layout(1, 1, True) not in space.layouts  # ep over one GPU is no parallelism


@pytest.mark.parametrize("name", ["llama3-70b", "mixtral-8x7b", "deepseek-v2-lite",
                                  "gemma3-27b", "qwen3-next-80b-a3b"])
def test_the_memory_bound_never_skips_a_plan_serve_fits(name: str) -> None:
    """The bound skips a layout on a GPU only when serve, run on it, does not fit."""
    from specsheet.api.hardware import load_gpu
    from specsheet.plan.serving import parse_utilization

    model = specsheet.load(name)
    weights = specsheet.report(model).weights_bytes
    share = parse_utilization("0.9")
    skipped = 0
    for gpu in ("l4", "rtx-4090", "a100-40gb-sxm", "h100-sxm", "mi300x"):
        budget = share.of(load_gpu(gpu).device_bytes)
        for lay in search.layouts(model.spec, 4, replicas=False).layouts:
            if not search.weights_cannot_fit(weights, lay, budget):
                continue
            skipped += 1
            served = specsheet.serve(model, gpu, gpus=lay.replica, tp=lay.tp, pp=lay.pp,
                                     ep=lay.ep, max_model_len=4096)
            assert not served.fits, (gpu, lay)
    assert skipped  # the bound does skip some on these GPUs


def _candidate(gpu: str, gpus: int, cost: float | None, latency: float,
               tokens: float = 100.0, misses: tuple[str, ...] = ()) -> Candidate:
    return Candidate(gpu=gpu, layout=Layout(gpus, 1, False), format="bf16", quant=None,
                     kv_dtype="bf16", engine="vllm", concurrency=1, capacity=1,
                     max_concurrency=1, ttft_s=0.1, tpot_s=0.01, tokens_per_s=tokens,
                     requests_per_s=1.0, latency_s=latency, usd_per_hour=None,
                     usd_per_million_output_tokens=cost, limited_by="bandwidth",
                     misses=misses)


def test_ranking_and_the_pareto_front_on_hand_made_candidates() -> None:
    a = _candidate("a", 2, 1.0, 3.0)
    b = _candidate("b", 1, 2.0, 2.0)  # dearer, faster: on the front
    c = _candidate("c", 4, 2.5, 2.5)  # beaten by b on both
    d = _candidate("d", 1, 0.5, 1.0, misses=("max_ttft",))  # best figures, misses a limit
    e = _candidate("e", 1, 1.0 + 1e-12, 3.0)  # ties a on cost (to 9 digits): fewer GPUs wins
    ranked = search.rank([a, b, c, d, e], "cost")
    assert [x.gpu for x in ranked] == ["e", "a", "b", "c", "d"]
    assert search.pareto(ranked, priced=True) == [0, 1, 2]  # e, a (same point) and b
    assert [x.gpu for x in search.rank([a, b, c, d, e], "gpus")][:3] == ["e", "b", "a"]
    assert [x.gpu for x in search.rank([a, b, c], "latency")] == ["b", "c", "a"]
    assert search.why_lost(e, a, "cost") == "#1: 2 GPUs; #0: 1 GPU"
    assert search.why_lost(b, c, "latency") == "#1: a request in 2.5 s; #0: a request in 2.0 s"
    # the digits that tell two figures apart, each with as many decimals (a zero kept)
    f, g = _candidate("f", 1, 0.04319, 5.149), _candidate("g", 1, 0.043191, 5.15)
    assert search.why_lost(f, g, "latency") == \
        "#1: a request in 5.150 s; #0: a request in 5.149 s"
    assert search.why_lost(f, g, "cost") == \
        "#1: $0.043191 per million output tokens; #0: $0.043190 per million output tokens"
    h, i = _candidate("h", 1, 1.0, 1.0, tokens=38397.2), _candidate("i", 1, 1.0, 1.0, 37984.0)
    assert search.why_lost(h, i, "throughput") == \
        "#1: 37,984 output tokens/s; #0: 38,397 output tokens/s"


def test_solve_on_hand_made_candidates() -> None:
    a = _candidate("a", 2, 1.0, 3.0)
    b = _candidate("b", 1, 2.0, 2.0)
    d = _candidate("d", 1, 0.5, 1.0, misses=("budget",))
    ranked = search.rank([a, b, d], "cost")
    assert search.solve("min-gpus", ranked, ["bf16"]) == search.Solved("min-gpus", 1, 1)
    assert search.solve("max-context", ranked, ["bf16"], [100, 300, 900]) == \
        search.Solved("max-context", 300, 1)  # d holds more but misses its budget
    assert search.solve("best-quant", ranked, ["fp8", "bf16"]).answer == "bf16"
    nothing = search.rank([d], "cost")
    assert search.solve("min-gpus", nothing, ["bf16"]) == search.Solved("min-gpus", None, None)


def test_a_rate_bisects_to_the_fewest_requests() -> None:
    """rate(c) = c / (c x prefill + O x step(c)), step = 0.01 + 0.001 c: the fewest c that
    reach 30 requests/s with O = 10 and prefill 0.01 s, found by trying every c."""
    from typing import Any

    class Est:
        def __init__(self, c: int) -> None:
            self.c = c

        def tokens_per_s_end_to_end(self, output: int) -> float:
            return self.c * output / (self.c * 0.01 + output * (0.01 + 0.001 * self.c))

    def at(c: int) -> Any:
        return Est(c)

    def rate(c: int) -> float:
        return Est(c).tokens_per_s_end_to_end(10) / 10

    fewest = next(c for c in range(1, 1000) if rate(c) >= 30)
    got = search.concurrency_for(500, 1, 10, Constraints(requests_per_s=30), at)
    assert got == fewest
    # two replicas: each carries half the rate
    half = next(c for c in range(1, 1000) if rate(c) >= 15)
    assert search.concurrency_for(500, 2, 10, Constraints(requests_per_s=30), at) == half
    # out of reach: the pool's capacity; a concurrency: split over the replicas, rounded up
    assert search.concurrency_for(3, 1, 10, Constraints(requests_per_s=30), at) == 3
    assert search.concurrency_for(500, 3, 10, Constraints(concurrency=10), at) == 4
