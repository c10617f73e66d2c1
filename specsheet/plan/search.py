"""Plan's search: the layouts vLLM allows for a model on up to N GPUs, each candidate's figures
from its serving plan, the constraints it meets or misses, the ranking by objective, the Pareto
front of cost against latency, and the inverse single answers (docs/plan.md).

Pure: the serving plans and their estimates come from the caller (``specsheet.api.plan`` builds
them with serve's own code, so every candidate equals the ``serve`` run its command reproduces).
One memory plan per (GPU, tp, pp, ep, format, KV dtype) is reused for every request shape and
every data-parallel replica count: dp replicas multiply the throughput, the requests held and
the price, and change nothing per GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.model.spec import Model, ModelSpec
from specsheet.plan.parallel import Parallel, check_parallel
from specsheet.plan.roofline import Estimates
from specsheet.plan.serving import OVERHEAD_BYTES, ServePlan
from specsheet.plan.sharding import Cut
from specsheet.quant.tensors import Tensor

OBJECTIVES = ("cost", "gpus", "latency", "throughput")
SOLVES = ("max-context", "max-concurrency", "best-quant", "min-gpus")
# the constraints a candidate may miss, in the order a miss is reported
CONSTRAINTS = ("concurrency", "requests_per_s", "max_ttft", "max_tpot", "min_tokens_per_s",
               "budget")


class Layout(NamedTuple):
    """One arrangement of GPUs: dp replicas of tp x pp GPUs, experts spread if ep."""

    tp: int
    pp: int
    ep: bool
    dp: int = 1

    @property
    def replica(self) -> int:
        """GPUs of one replica: tp x pp."""
        return self.tp * self.pp

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp


class Space(NamedTuple):
    """The layouts to evaluate and how many vLLM refuses (per replica layout x dp count)."""

    layouts: tuple[Layout, ...]
    refused: int


def layouts(spec: ModelSpec, max_gpus: int, min_gpus: int = 1, replicas: bool = True) -> Space:
    """Every layout of ``min_gpus`` to ``max_gpus`` GPUs that vLLM accepts for ``spec``
    (``check_parallel``, as ``serve`` checks it): tp x pp per replica, with and without expert
    parallelism for a mixture of experts (tp above 1), and dp replicas when ``replicas``."""
    found: list[Layout] = []
    refused = 0
    eps = (False, True) if spec.experts else (False,)
    for tp in range(1, max_gpus + 1):
        for pp in range(1, max_gpus // tp + 1):
            dps = range(1, max_gpus // (tp * pp) + 1) if replicas else range(1, 2)
            wanted = [dp for dp in dps if tp * pp * dp >= min_gpus]
            for ep in eps:
                if ep and tp == 1:  # expert parallelism over one GPU is no parallelism
                    continue
                if not wanted:
                    continue
                try:
                    check_parallel(spec, tp * pp, tp, pp, ep)
                except SpecError:
                    refused += len(wanted)
                    continue
                found.extend(Layout(tp, pp, ep, dp) for dp in wanted)
    return Space(tuple(found), refused)


def weights_cannot_fit(weights_bytes: int, layout: Layout, budget_bytes: int) -> bool:
    """A bound that skips a memory plan: the GPUs of a replica hold at least all the weights
    between them (sharding replicates, never drops), so the fullest GPU holds at least
    weights / (tp x pp); a plan fits only when its KV pool, floor(U x memory) - weights -
    activation peak - runtime overhead, is above 0, so at or over floor(U x memory) -
    overhead no plan of that layout fits (tests/test_plan_search.py checks it against serve)."""
    return weights_bytes >= (budget_bytes - OVERHEAD_BYTES) * layout.replica


class Constraints(NamedTuple):
    """What a candidate must meet; None: not asked."""

    concurrency: int | None = None  # requests decoded at once, all replicas
    requests_per_s: float | None = None  # requests of prompt + output a second, all replicas
    max_ttft: float | None = None  # seconds to the first token (the prefill)
    max_tpot: float | None = None  # seconds per output token (a decode step)
    min_tokens_per_s: float | None = None  # output tokens a second, all replicas
    budget: float | None = None  # US dollars an hour, all GPUs


class Candidate(NamedTuple):
    """One layout of one format on one GPU, served as ``serve`` serves it, with dp replicas."""

    gpu: str
    layout: Layout
    format: str  # the weights' format as the report names it (bf16, fp8, awq-int4 ...)
    quant: str | None  # the format given to serve (None: the model's own)
    kv_dtype: str
    engine: str
    concurrency: int  # requests decoded at once on each replica (serve's concurrency)
    capacity: int  # requests of prompt + output one replica's pool holds, <= max_num_seqs
    max_concurrency: int  # requests of max_model_len held at once, all replicas
    ttft_s: float  # the prefill of one prompt (estimate)
    tpot_s: float  # one decode step at the concurrency (estimate)
    tokens_per_s: float  # output tokens a second, all replicas (estimate)
    requests_per_s: float  # requests a second from start to end, all replicas (estimate)
    latency_s: float  # one request: ttft + output x tpot (estimate)
    usd_per_hour: float | None  # every GPU at the price
    usd_per_million_output_tokens: float | None
    limited_by: str  # memory (the KV pool holds no more requests), compute or bandwidth
    misses: tuple[str, ...]  # the constraints not met, in CONSTRAINTS order

    @property
    def meets(self) -> bool:
        return not self.misses

    @property
    def gpus(self) -> int:
        return self.layout.gpus


def rate(est: Estimates, output: int) -> float:
    """Requests a second that C concurrent requests complete, prefills included (serve's
    end-to-end tokens/s divided by the output): C / (C x prefill + O x decode step)."""
    return est.tokens_per_s_end_to_end(output) / output


def concurrency_for(capacity: int, dp: int, output: int, constraints: Constraints,
                    at: Callable[[int], Estimates]) -> int:
    """The requests each replica decodes at once: the given concurrency split over the replicas
    (rounded up); for a rate, the fewest that reach it (rate grows with concurrency, so a
    bisection finds them), else the pool's capacity; with neither, the capacity (serve's
    default)."""
    if constraints.concurrency is not None:
        return -(-constraints.concurrency // dp)
    if constraints.requests_per_s is None:
        return capacity
    need = constraints.requests_per_s / dp
    if rate(at(capacity), output) < need:
        return capacity
    low, high = 0, capacity  # rate(low) < need (none at 0), rate(high) >= need
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if rate(at(mid), output) < need else (low, mid)
    return high


def evaluate(gpu: str, layout: Layout, plan: ServePlan, quant: str | None, engine: str,
             constraints: Constraints, at: Callable[[int], tuple[Estimates, float | None]]
             ) -> Candidate:
    """The candidate of ``plan`` (one replica of ``layout``) under ``constraints``; ``at(c)``
    gives serve's estimates and cost per million output tokens at concurrency c."""
    request = plan.request
    prompt_output = request.prompt + request.output
    pooled = plan.concurrency_at(prompt_output)
    capacity = min(pooled, request.max_seqs)
    dp = layout.dp
    c = concurrency_for(capacity, dp, request.output,
                        constraints, lambda n: at(n)[0])
    est, per_million = at(c)
    hw = plan.hardware
    bytes_s = est.decode_bytes / (hw.bandwidth_bytes_per_s * est.mbu)
    flops_s = est.decode_flops / (layout.tp * est.peak_flops_per_s * est.mfu)
    if c >= pooled:
        limited = "memory"  # the KV pool holds no more requests of this shape
    else:
        limited = "compute" if flops_s > bytes_s else "bandwidth"
    usd_hour = None if est.price is None else est.price * layout.gpus
    tokens = dp * est.tokens_per_s_total
    done = dp * rate(est, request.output)
    latency = est.prefill_s + request.output * est.decode_step_s
    candidate = Candidate(
        gpu=gpu, layout=layout, format=plan.report.weights.format, quant=quant,
        kv_dtype=plan.report.kv.dtype, engine=engine, concurrency=c, capacity=capacity,
        max_concurrency=dp * plan.max_concurrency, ttft_s=est.prefill_s,
        tpot_s=est.decode_step_s, tokens_per_s=tokens, requests_per_s=done,
        latency_s=latency, usd_per_hour=usd_hour, usd_per_million_output_tokens=per_million,
        limited_by=limited, misses=())
    return candidate._replace(misses=misses(candidate, constraints))


def misses(c: Candidate, k: Constraints) -> tuple[str, ...]:
    """The constraints ``c`` does not meet (equal meets), in CONSTRAINTS order."""
    missed = {
        "concurrency": c.concurrency > c.capacity,
        "requests_per_s": k.requests_per_s is not None and c.requests_per_s < k.requests_per_s,
        "max_ttft": k.max_ttft is not None and c.ttft_s > k.max_ttft,
        "max_tpot": k.max_tpot is not None and c.tpot_s > k.max_tpot,
        "min_tokens_per_s": k.min_tokens_per_s is not None
                            and c.tokens_per_s < k.min_tokens_per_s,
        "budget": k.budget is not None and (c.usd_per_hour is None
                                            or c.usd_per_hour > k.budget),
    }
    return tuple(name for name in CONSTRAINTS if missed[name])


def figure(c: Candidate, constraint: str) -> float | None:
    """The candidate's figure a constraint bounds (the requests each replica's pool holds, for
    concurrency)."""
    return {"concurrency": float(c.capacity * c.layout.dp), "requests_per_s": c.requests_per_s,
            "max_ttft": c.ttft_s, "max_tpot": c.tpot_s, "min_tokens_per_s": c.tokens_per_s,
            "budget": c.usd_per_hour}[constraint]


def objective_used(objective: str, priced: bool) -> str:
    """The objective ranked by: cost needs a price, else fewest GPUs."""
    if objective not in OBJECTIVES:
        raise SpecError(f"unknown objective {quoted(objective)}; expected one of "
                        f"{', '.join(OBJECTIVES)}", field="objective", value=objective)
    return "gpus" if objective == "cost" and not priced else objective


def _near(value: float) -> float:
    """``value`` to 9 significant digits: figures that differ only by rounding (two GPUs at
    twice the price and twice the speed) tie, and the next key decides."""
    return float(f"{value:.9g}")


def _cost(c: Candidate) -> tuple[bool, float]:
    value = c.usd_per_million_output_tokens
    return value is None, 0.0 if value is None else _near(value)


def rank_key(objective: str) -> Callable[[Candidate], tuple[object, ...]]:
    """The sort key of an objective: its figure first, then fewer GPUs, the lower cost and
    latency, then the layout (a stable, total order)."""
    def tail(c: Candidate) -> tuple[object, ...]:
        return (c.gpu, c.layout.tp, c.layout.pp, c.layout.ep, c.layout.dp, c.format,
                c.kv_dtype)

    if objective == "cost":
        return lambda c: (*_cost(c), c.gpus, _near(c.latency_s), *tail(c))
    if objective == "gpus":
        return lambda c: (c.gpus, *_cost(c), _near(c.latency_s), *tail(c))
    if objective == "latency":
        return lambda c: (_near(c.latency_s), *_cost(c), c.gpus, *tail(c))
    return lambda c: (-_near(c.tokens_per_s), *_cost(c), c.gpus, *tail(c))


def rank(candidates: Sequence[Candidate], objective: str) -> list[Candidate]:
    """Those that meet every constraint by the objective, then the others: fewest constraints
    missed first, then by the objective."""
    key = rank_key(objective)
    return sorted(candidates, key=lambda c: (len(c.misses), key(c)))


def pareto(candidates: Sequence[Candidate], priced: bool) -> list[int]:
    """The indices of the meeting candidates no other meeting candidate beats on both cost per
    million output tokens (GPUs without prices) and request latency (each to 9 significant
    digits, as the ranking compares them)."""
    def point(c: Candidate) -> tuple[float, float]:
        cost = c.usd_per_million_output_tokens if priced else c.gpus
        return (float("inf") if cost is None else _near(cost), _near(c.latency_s))

    meeting = [(i, point(c)) for i, c in enumerate(candidates) if c.meets]
    front = []
    for i, (cost, latency) in meeting:
        if not any((x <= cost and y <= latency) and (x < cost or y < latency)
                   for _, (x, y) in meeting):
            front.append(i)
    return front


def longest_context(plan: ServePlan, concurrency: int, shortest: int) -> int:
    """The longest max_model_len (up to the model's context) at which ``concurrency`` requests
    of that length fit in ``plan``'s pool, or 0 (below ``shortest``, or weights that do not
    fit); exact for attention models, whose blocks do not depend on max_model_len (a model of
    state layers only is checked again by the caller)."""
    if not all(s.weights_fit for s in plan.stages):
        return 0
    top = plan.report.model.spec.context

    def holds(tokens: int) -> bool:
        return plan.concurrency_at(tokens) >= concurrency

    if holds(top):
        return top
    if not holds(shortest):
        return 0
    low, high = shortest, top  # holds(low), not holds(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if holds(mid) else (low, mid)
    return low


class Solved(NamedTuple):
    """An inverse single answer: the question, its answer, the candidate that gives it."""

    question: str
    answer: int | str | None
    candidate: int | None


def solve(question: str, ranked: Sequence[Candidate], formats: Sequence[str],
          contexts: Sequence[int] = ()) -> Solved:
    """The answer to ``question`` over the meeting candidates of ``ranked`` (best first):
    max-concurrency, the most requests of max_model_len held; best-quant, the first of
    ``formats`` (least lossy first) any candidate meets in; min-gpus, the fewest GPUs; for
    max-context, ``contexts`` holds each candidate's longest context."""
    meeting = [i for i, c in enumerate(ranked) if c.meets]
    if not meeting:
        return Solved(question, None, None)
    if question == "max-context":
        i = max(meeting, key=lambda j: (contexts[j], -j))
        return Solved(question, contexts[i] or None, i if contexts[i] else None)
    if question == "max-concurrency":
        i = max(meeting, key=lambda j: (ranked[j].max_concurrency, -j))
        return Solved(question, ranked[i].max_concurrency, i)
    if question == "best-quant":
        for name in formats:
            for i in meeting:
                if ranked[i].format == name:
                    return Solved(question, name, i)
        return Solved(question, None, None)
    if question == "min-gpus":
        i = min(meeting, key=lambda j: (ranked[j].gpus, j))
        return Solved(question, ranked[i].gpus, i)
    raise SpecError(f"unknown question {quoted(question)}; expected one of {', '.join(SOLVES)}",
                    field="solve", value=question)


def why_lost(best: Candidate, other: Candidate, objective: str) -> str:
    """Why ``other`` ranks after ``best``: the first figure of the objective's order in which
    they differ, in words, with the digits that tell them apart."""
    steps: dict[str, Callable[[Candidate], object]] = {
        "cost": _cost, "gpus": lambda c: c.gpus, "latency": lambda c: _near(c.latency_s),
        "throughput": lambda c: _near(c.tokens_per_s)}
    figures: dict[str, Callable[[Candidate], float | None]] = {
        "cost": lambda c: c.usd_per_million_output_tokens, "gpus": lambda c: c.gpus,
        "latency": lambda c: c.latency_s, "throughput": lambda c: c.tokens_per_s}
    words: dict[str, Callable[[str], str]] = {
        "cost": "${} per million output tokens".format,
        "gpus": lambda n: f"{n} GPU" if n == "1" else f"{n} GPUs",
        "latency": "a request in {} s".format, "throughput": "{} output tokens/s".format}
    order = {"cost": ("cost", "gpus", "latency"), "gpus": ("gpus", "cost", "latency"),
             "latency": ("latency", "cost", "gpus"),
             "throughput": ("throughput", "cost", "gpus")}[objective]
    for step in order:
        if steps[step](best) == steps[step](other):
            continue
        a, b = figures[step](other), figures[step](best)
        if a is None or b is None:
            return f"#1: {'no price' if a is None else 'a price'}; #0: " \
                   f"{'no price' if b is None else 'a price'}"
        worse, better = map(words[step], _apart(a, b))
        return f"#1: {worse}; #0: {better}"
    return (f"a tie with #0 on {', '.join(order)}; the layouts are then ordered by GPU name, "
            "tp, pp, ep, dp, format and KV dtype")


def _apart(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with as many decimals each as tell them apart, at least three
    significant digits of the larger (0.043191 beside 0.043190, 5.150 beside 5.149, 2.5 beside
    2.0, 38,397 beside 37,984); integers whole."""
    if isinstance(a, int) and isinstance(b, int):
        return f"{a:,}", f"{b:,}"
    larger = max(abs(a), abs(b))
    start = max(0, 2 - math.floor(math.log10(larger))) if larger else 0
    for decimals in range(start, start + 16):
        x, y = f"{a:,.{decimals}f}", f"{b:,.{decimals}f}"
        if x != y:
            break
    while decimals > 0 and x.endswith("0") and y.endswith("0"):
        x, y, decimals = x[:-1], y[:-1], decimals - 1
    return x.rstrip("."), y.rstrip(".")


class Planning(NamedTuple):
    """The search: candidates best first (each with its serve line), the objective used, and
    the answer to a question."""

    model: Model
    params: int  # the model's parameters, all of them
    asked: str  # the objective asked for
    objective: str  # the objective ranked by (cost falls back to gpus without prices)
    priced: bool
    constraints: Constraints
    max_gpus: int | None
    mfu: float
    mbu: float
    formats: tuple[tuple[str, float], ...]  # (format, bits per weight), least lossy first
    candidates: tuple[Candidate, ...]
    commands: tuple[tuple[str, ...], ...]  # each candidate's serve line (one replica)
    searched: int  # memory plans evaluated
    refused: int  # layouts vLLM refuses for this model
    over_memory: int  # layouts whose weights or one request do not fit
    pareto: tuple[int, ...]
    solved: Solved | None
    solve_command: tuple[str, ...] | None  # the serve line at the answer (max-context)
    max_model_len: int
    prompt: int
    output: int
    # the formats of --quant any that cannot store the model: (format, why)
    unstored: tuple[tuple[str, str], ...] = ()

    @property
    def best(self) -> int | None:
        """The first candidate, when it meets every constraint."""
        return 0 if self.candidates and self.candidates[0].meets else None


# ---- training: the fewest GPUs, or the cheapest, for a run in a number of days ----------------

class TrainCandidate(NamedTuple):
    """One training layout on one GPU type, planned as ``train`` plans it."""

    gpu: str
    gpus: int
    tp: int
    pp: int
    dp: int
    zero: int
    recompute: str
    days: float  # the run's wall-clock days (an estimate at the MFU)
    gpu_hours: float
    usd: float | None  # gpu_hours x the price
    usd_per_hour: float | None
    bytes_per_gpu: int  # the busiest GPU's step (exact: states and activations)
    capacity_bytes: int
    misses: tuple[str, ...]  # "days", "budget"

    @property
    def meets(self) -> bool:
        return not self.misses


TRAIN_RECOMPUTE = ("none", "selective", "full")  # the least recomputation first
TRAIN_ZERO = (1, 3)  # with data parallelism: optimizer states sharded, or everything (FSDP)


def train_layouts(gpus: int) -> list[tuple[int, int, int, str]]:
    """(tp, pp, zero, recompute) for ``gpus`` GPUs: tp and pp powers of 2 up to 8 dividing the
    count, ZeRO 1 or 3 when data parallelism remains (else 0), each recompute policy."""
    found = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            if gpus % (tp * pp):
                continue
            zeros = TRAIN_ZERO if gpus // (tp * pp) > 1 else (0,)
            found += [(tp, pp, zero, rc) for zero in zeros for rc in TRAIN_RECOMPUTE]
    return found


def train_counts(low: int, high: int) -> list[int]:
    """The GPU counts a training search tries: 1, 2, 4, 8, then whole nodes of 8."""
    return [n for n in (1, 2, 4, 8) if low <= n <= high] + \
        [8 * k for k in range(2, high // 8 + 1) if low <= 8 * k <= high]


def train_misses(days: float, usd_per_hour: float | None, most_days: float | None,
                 budget: float | None) -> tuple[str, ...]:
    missed = []
    if most_days is not None and days > most_days:
        missed.append("days")
    if budget is not None and (usd_per_hour is None or usd_per_hour > budget):
        missed.append("budget")
    return tuple(missed)


def train_rank(candidates: Sequence[TrainCandidate], objective: str) -> list[TrainCandidate]:
    """Those that meet every constraint first, each group by the objective: cost (the run's
    dollars), gpus, or latency and throughput (the fewest days); then fewer GPUs, less
    recomputation, the layout."""
    def cost(c: TrainCandidate) -> tuple[bool, float]:
        return c.usd is None, 0.0 if c.usd is None else _near(c.usd)

    def tail(c: TrainCandidate) -> tuple[object, ...]:
        return (TRAIN_RECOMPUTE.index(c.recompute), c.gpu, c.tp, c.pp, c.zero)

    keys: dict[str, Callable[[TrainCandidate], tuple[object, ...]]] = {
        "cost": lambda c: (*cost(c), c.gpus, _near(c.days), *tail(c)),
        "gpus": lambda c: (c.gpus, *cost(c), _near(c.days), *tail(c)),
        "latency": lambda c: (_near(c.days), *cost(c), c.gpus, *tail(c)),
        "throughput": lambda c: (_near(c.days), *cost(c), c.gpus, *tail(c)),
    }
    key = keys[objective]
    return sorted(candidates, key=lambda c: (len(c.misses), key(c)))


class TrainPlanning(NamedTuple):
    """A training search: candidates best first (each with its train line)."""

    model: Model
    params: int
    asked: str
    objective: str
    priced: bool
    tokens_total: int
    seq_len: int
    most_days: float | None
    budget: float | None
    max_gpus: int | None
    mfu: float
    candidates: tuple[TrainCandidate, ...]
    commands: tuple[tuple[str, ...], ...]
    searched: int  # training plans evaluated
    refused: int  # layouts the training checks refuse for this model
    over_memory: int  # plans whose step does not fit
    too_slow: int  # (GPU, count) pairs skipped: more days than asked even without recompute
    solved: Solved | None

    @property
    def best(self) -> int | None:
        return 0 if self.candidates and self.candidates[0].meets else None


class KeptCut(Cut):
    """The plan search's one cache: each stage's tensors (by model, layout and stage) and
    their bytes (by tensors and format; in a dtype, by stage and dtype), computed once for
    every GPU searched (a stage's cut does not depend on the GPU) and for every training run
    of a layout. One per search; nothing outlives it (``api.plan.search`` makes it).

    Kept by model, then by what is asked; the model a search asks of is found by identity
    first (hashing a spec hashes its 54 fields: a tenth of a search's time when done on every
    stage of every plan)."""

    def __init__(self) -> None:
        self.kept: dict[ModelSpec, dict[tuple[object, ...], Any]] = {}
        self.spec: ModelSpec | None = None  # the model asked of last, and its table
        self.table: dict[tuple[object, ...], Any] = {}

    def _of(self, spec: ModelSpec) -> dict[tuple[object, ...], Any]:
        if spec is not self.spec:
            self.table = self.kept.setdefault(spec, {})
            self.spec = spec
        return self.table

    def stage_tensors(self, spec: ModelSpec, layout: Parallel, stage: int
                      ) -> tuple[Tensor, ...]:
        table, key = self._of(spec), ("tensors", layout, stage)
        held: tuple[Tensor, ...] | None = table.get(key)
        if held is None:
            held = table[key] = super().stage_tensors(spec, layout, stage)
        return held

    def stage_weights(self, spec: ModelSpec, layout: Parallel, stage: int, dtype: str | None,
                      score_bias: bool) -> tuple[int, int, int]:
        table, key = self._of(spec), ("weights", layout, stage, dtype, score_bias)
        found: tuple[int, int, int] | None = table.get(key)
        if found is None:
            found = table[key] = super().stage_weights(spec, layout, stage, dtype, score_bias)
        return found

    def stored_bytes(self, spec: ModelSpec, tensors: tuple[Tensor, ...], dtype: str | None,
                     quant: str | None, group_size: int | None, keep: tuple[str, ...] = (),
                     match: str = "exact", file_types: tuple[tuple[str, str], ...] = ()) -> int:
        table = self._of(spec)
        key = ("bytes", tensors, dtype, quant, group_size, keep, match, file_types)
        found: int | None = table.get(key)
        if found is None:
            found = table[key] = super().stored_bytes(spec, tensors, dtype, quant, group_size,
                                                      keep, match, file_types)
        return found
