"""Planning: the cheapest hardware, the fewest GPUs, the best format or the longest context
that serves a model under constraints (``specsheet plan``; docs/plan.md).

Every candidate is a ``serve`` run: its memory plan is ``api.serve.plan_serve``'s, built once
per (GPU, tp, pp, ep, format, KV dtype) and reused for each concurrency and replica count; its
estimates are ``api.serve.estimates_of``'s at the concurrency chosen. The candidate's
``command`` is the ``serve`` line that reproduces one replica.

    >>> import specsheet as s
    >>> p = s.search(s.load("llama3-8b"), gpu="h100-sxm,a100-80gb-sxm", gpus=2, price="2")
    >>> p.best is not None
    True
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from specsheet.api.defaults import DEFAULT_MBU, DEFAULT_MFU, DEFAULT_UTILIZATION
from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.plan import check_searched_gpus
from specsheet.plan.search import Planning as _Planning
from specsheet.plan.search import TrainPlanning as _TrainPlanning

if TYPE_CHECKING:
    from specsheet.figures import Report
    from specsheet.model.spec import Model
    from specsheet.plan.search import Candidate, KeptCut, TrainCandidate

MAX_PER_NODE = 8  # GPUs a node holds: the default top of the GPU counts searched
# the formats --quant any adds to the model's own: the ones vLLM loads on most GPUs
ANY_FORMATS = ("fp8", "w8a8", "w4a16", "awq-int4", "nvfp4")
ENGINES = ("vllm",)


class PlanRequest(NamedTuple):
    """What to search and what must hold; the defaults are the CLI's."""

    gpu: str = "all"  # a name, a comma list, or all (the catalog but Apple's, which vLLM lacks)
    gpus: str | int | None = None  # a count N, or a range LOW..HIGH (default: 1..8 x nodes)
    nodes: int = 1
    quant: str | None = None  # None: the model's own format; any; or a comma list
    kv_dtype: str = "bf16"  # one or a comma list
    engine: str = "vllm"
    max_model_len: int | None = None  # default: the model's context
    prompt: int | None = None
    output: int | None = None
    concurrency: int | None = None
    requests_per_s: float | None = None
    max_ttft: float | None = None
    max_tpot: float | None = None
    min_tokens_per_s: float | None = None
    budget: float | None = None  # US dollars an hour, all GPUs
    max_gpus: int | None = None
    objective: str = "cost"
    price: str | float | None = None  # USD per GPU-hour: one for all, or NAME=USD,NAME=USD
    solve: str | None = None
    memory_utilization: str = DEFAULT_UTILIZATION
    mfu: float | None = None  # default: serve's 0.5, train's 0.40 with train
    mbu: float = DEFAULT_MBU
    model_args: tuple[str, ...] | None = None  # the model as the command names it
    train: bool = False  # search training runs (train's plans) instead of serving
    tokens_total: int | str | None = None  # with train: the tokens to train on (15.6T)
    days: float | None = None  # with train: the run's days at most
    # speculative decoding, as serve takes it (every candidate a serve run with it)
    draft: str | None = None
    speculative_tokens: int | None = None
    speculative_method: str | None = None


class Planning(_Planning):
    """The search (``specsheet.plan.search.Planning``): candidates best first, each with its
    serve line, the objective used, the answer to a question."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet plan --json`` writes for the same inputs."""
        from specsheet.views.plan import plan_document

        return plan_document(self)


def _names(text: str, field: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise SpecError(f"expected one name or a comma list, got {quoted(text)}", field=field,
                        value=text)
    return list(dict.fromkeys(names))


def gpu_names(text: str) -> list[str]:
    """The accelerators named: ``all`` is the catalog but Apple's (vLLM has no Metal
    backend)."""
    if text.strip().lower() == "all":
        from specsheet.hardware.catalog import catalog_index

        return [n for n, e in catalog_index().items() if e.get("vendor") != "Apple"]
    return _names(text, "gpu")


def gpu_range(gpus: str | int | None, nodes: int, max_gpus: int | None) -> tuple[int, int]:
    """The counts searched: N alone, LOW..HIGH, or 1..8 x nodes; capped by max_gpus."""
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise SpecError(f"expected a positive number of nodes, got {quoted(nodes)}", field="nodes",
                        value=nodes)
    if gpus is None:
        low, high = 1, MAX_PER_NODE * nodes
    elif isinstance(gpus, int) and not isinstance(gpus, bool):
        low, high = gpus, gpus
    else:
        first, dots, last = str(gpus).partition("..")
        try:
            low = int(first) if first.strip() else 1
            high = int(last) if dots else low
        except ValueError:
            raise SpecError(f"expected a count N or a range LOW..HIGH such as 1..8, got "
                            f"{quoted(gpus)}", field="gpus", value=gpus) from None
    if low < 1 or high < low:
        raise SpecError(f"expected 1 <= LOW <= HIGH, got {quoted(gpus)}", field="gpus", value=gpus)
    if max_gpus is not None:
        if max_gpus < 1:
            raise SpecError(f"expected a positive number of GPUs, got {max_gpus}",
                            field="max_gpus", value=max_gpus)
        if max_gpus < low:
            raise SpecError(f"{max_gpus} GPUs at most, but the search starts at {low}; "
                            "the two contradict", field="max_gpus", value=max_gpus)
        high = min(high, max_gpus)
    check_searched_gpus(high, "nodes" if gpus is None else "gpus")
    return low, high


def prices(price: str | float | None, names: list[str]) -> dict[str, float]:
    """USD per GPU-hour by accelerator: one number for all, or NAME=USD pairs."""
    from specsheet.api.serve import _price

    if price is None:
        return {}
    if not isinstance(price, str) or "=" not in price:
        value = _price(price)
        return {n: value for n in names if value is not None}
    found: dict[str, float] = {}
    for pair in _names(price, "price"):
        name, _, usd = pair.partition("=")
        value = _price(usd)
        if value is None or not name.strip():
            raise SpecError(f"expected NAME=USD, got {quoted(pair)}", field="price", value=pair)
        found[name.strip()] = value
    unknown = sorted(set(found) - set(names))
    if unknown:
        raise SpecError(f"a price for {unknown[0]}, which is not searched", field="price",
                        value=unknown[0])
    return found


def _positive(value: float | None, field: str) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise SpecError(f"expected a number above 0, got {value:g}", field=field, value=value)


def check_plan_request(request: PlanRequest) -> None:
    """The settings that need no model, checked before any model is read."""
    from specsheet.plan.search import SOLVES, objective_used

    objective_used(request.objective, True)
    if request.solve is not None and request.solve not in SOLVES:
        raise SpecError(f"unknown question {quoted(request.solve)}; expected one of "
                        f"{', '.join(SOLVES)}", field="solve", value=request.solve)
    if request.engine not in ENGINES:
        raise SpecError(f"plan searches vLLM's layouts (engine vllm) so far; for llama.cpp "
                        f"and Ollama, fit places one GGUF (got {quoted(request.engine)})",
                        field="engine", value=request.engine)
    if request.concurrency is not None and request.requests_per_s is not None:
        raise SpecError("give a concurrency or a rate of requests, not both; the rate sets "
                        "the concurrency", field="requests_per_s", value=request.requests_per_s)
    if request.concurrency is not None and request.concurrency < 1:
        raise SpecError(f"expected a positive number of requests, got {request.concurrency}",
                        field="concurrency", value=request.concurrency)
    for field in ("requests_per_s", "max_ttft", "max_tpot", "min_tokens_per_s", "budget",
                  "days"):
        _positive(getattr(request, field), field)
    from specsheet.api.serve import _share

    if request.mfu is not None:
        _share(request.mfu, "mfu")
    _share(request.mbu, "mbu")
    from specsheet.api.speculative import check_speculation

    if request.train and check_speculation(_spec_request(request)) is not None:
        raise SpecError("speculative decoding is a serving setting; a training search takes "
                        "none", field="speculative_method", value=request.speculative_method)
    if request.train:
        check_train_request(request)
    else:
        for field in ("tokens_total", "days"):
            if getattr(request, field) is not None:
                raise SpecError("used only with a training search", field=field,
                                value=getattr(request, field))
    gpu_range(request.gpus, request.nodes, request.max_gpus)
    if request.solve == "max-context" and request.max_model_len is not None:
        raise SpecError("max-context finds the longest max_model_len; give the concurrency, "
                        "prompt and output, not the tokens", field="max_model_len",
                        value=request.max_model_len)
    if request.budget is not None and request.price is None:
        raise SpecError("a budget in US dollars an hour needs a price per GPU-hour",
                        field="budget", value=request.budget)


def _spec_request(request: PlanRequest) -> Any:
    """``request``'s speculative settings (api/speculative.py)."""
    from specsheet.api.speculative import Speculative

    return Speculative(request.draft, request.speculative_tokens, request.speculative_method)


def search(model: Model, request: PlanRequest | None = None, **options: Any
           ) -> Planning | TrainPlanning:
    """Search the layouts, formats and KV dtypes of ``model`` under ``request`` (or
    PlanRequest's fields as keyword arguments: ``gpu="h100-sxm,h200"``, ``concurrency=64``,
    ``max_ttft=0.5``, ``price="2.5"``); candidates best first by the objective."""
    if request is None:
        unknown = sorted(set(options) - set(PlanRequest._fields))
        if unknown:
            from specsheet.errors import did_you_mean

            raise SpecError(f"unknown planning option {quoted(unknown[0])}"
                            f"{did_you_mean(unknown[0], PlanRequest._fields)}",
                            field=unknown[0])
        request = PlanRequest(**options)
    check_plan_request(request)
    from specsheet.plan.search import KeptCut

    cut = KeptCut()  # a stage's cut, once per layout for every GPU searched
    if request.train:
        return search_train(model, request, cut)
    return _search(model, request, cut)


def _reports(model: Model, request: PlanRequest
             ) -> tuple[list[tuple[str | None, Report]], tuple[tuple[str, str], ...]]:
    """A report per (format, KV dtype): the model's own format first, then the formats asked;
    and the formats of ``any`` that cannot store the model, each with why (a format asked by
    name that cannot is bad input)."""
    from specsheet.api.count import report

    any_format = request.quant is not None and request.quant.strip().lower() == "any"
    if request.quant is None:
        quants: list[str | None] = [None]
    elif any_format:
        quants = [None, *ANY_FORMATS]
    else:
        quants = list(_names(request.quant, "quant"))
    found: list[tuple[str | None, Report]] = []
    unstored: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for kv in _names(request.kv_dtype, "kv_dtype"):
        for quant in quants:
            try:
                r = report(model, None, None, kv, quant)
            except SpecError as e:  # a tensor the format cannot store (awq-int4's groups)
                if not any_format or quant is None:
                    raise
                unstored.setdefault(quant, e.message)
                continue
            if (r.weights.format, kv) not in seen:  # --quant any names the own format again
                seen.add((r.weights.format, kv))
                found.append((quant, r))
    return found, tuple(unstored.items())


def bits_per_weight(r: Report) -> float:
    """Stored bits per parameter: weights bytes x 8 / parameters (scales and all)."""
    return r.weights_bytes * 8 / r.params.total


def _search(model: Model, request: PlanRequest, cut: KeptCut | None = None) -> Planning:
    from specsheet.api.hardware import load_gpu
    from specsheet.api.serve import ServeRequest, estimates_of, plan_serve, request_shape
    from specsheet.plan import search
    from specsheet.plan.serving import parse_utilization

    spec = model.spec
    max_len = request.max_model_len or spec.context
    if max_len > spec.context:
        raise SpecError(f"{max_len:,} exceeds the context of {model.name} ({spec.context:,} "
                        "tokens), which vLLM refuses", field="max_model_len", value=max_len)
    mfu = DEFAULT_MFU if request.mfu is None else request.mfu
    shape = ServeRequest("", max_model_len=max_len, prompt=request.prompt,
                         output=request.output)
    prompt, output = request_shape(shape, max_len)
    if request.solve == "max-context":  # every layout that holds one request of the shape
        max_len = prompt + output
    names = gpu_names(request.gpu)
    hardware = {n: load_gpu(n) for n in names}
    price_of = prices(request.price, names)
    low, high = gpu_range(request.gpus, request.nodes, request.max_gpus)
    replicas = request.concurrency is not None or request.requests_per_s is not None
    space = search.layouts(spec, high, low, replicas)
    share = parse_utilization(request.memory_utilization)
    constraints = search.Constraints(
        concurrency=request.concurrency, requests_per_s=request.requests_per_s,
        max_ttft=request.max_ttft, max_tpot=request.max_tpot,
        min_tokens_per_s=request.min_tokens_per_s, budget=request.budget)
    reports, unstored = _reports(model, request)
    speculative = _spec_request(request)
    if reports:  # what refuses the draft on any layout, said once, not as no candidate
        from specsheet.api.speculative import draft_of
        from specsheet.plan.parallel import Parallel

        draft_of(reports[0][1], speculative, Parallel(gpus=1, tp=1, pp=1))
    formats = sorted({(r.weights.format, bits_per_weight(r)) for _, r in reports},
                     key=lambda f: -f[1])
    by_replica: dict[tuple[int, int, bool], list[search.Layout]] = {}
    for layout in space.layouts:
        by_replica.setdefault((layout.tp, layout.pp, layout.ep), []).append(layout)
    candidates: list[search.Candidate] = []
    plans: dict[tuple[object, ...], Any] = {}  # a replica's plan by its key (max-context)
    searched = over = 0
    refused = space.refused
    for name in names:
        hw = hardware[name]
        budget_bytes = share.of(hw.device_bytes)
        for quant, r in reports:
            for (tp, pp, ep), group in by_replica.items():
                if search.weights_cannot_fit(r.weights_bytes, group[0], budget_bytes):
                    over += len(group)
                    continue
                serve_request = ServeRequest(
                    name, gpus=tp * pp, tp=tp, pp=pp, ep=ep, max_model_len=max_len,
                    prompt=prompt, output=output, memory_utilization=request.memory_utilization,
                    price=price_of.get(name), mfu=mfu, mbu=request.mbu,
                    draft=request.draft, speculative_tokens=request.speculative_tokens,
                    speculative_method=request.speculative_method)
                try:
                    served = plan_serve(r, serve_request, cut=cut)
                except SpecError:  # a layout serve refuses past check_parallel's checks
                    refused += len(group)
                    continue
                searched += 1
                if not served.fits:
                    over += len(group)
                    continue
                cache: dict[int, Any] = {}

                def at(c: int, plan: Any = served.plan, req: ServeRequest = serve_request,
                       cache: dict[int, Any] = cache) -> Any:
                    if c not in cache:
                        est, costs = estimates_of(plan, req._replace(concurrency=c))
                        cache[c] = (est, costs.get("usd_per_million_output_tokens"))
                    return cache[c]

                for layout in group:
                    c = search.evaluate(name, layout, served.plan, quant, "vllm", constraints,
                                        at)
                    candidates.append(c)
                plans[(name, tp, pp, ep, r.weights.format, r.kv.dtype)] = served.plan
    priced = any(c.usd_per_hour is not None for c in candidates)
    used = search.objective_used(request.objective, priced)
    ranked = search.rank(candidates, used)
    solved = None
    solve_command = None
    if request.solve is not None:
        contexts: list[int] = []
        if request.solve == "max-context":
            for c in ranked:
                need = -(-(request.concurrency or 1) // c.layout.dp)
                key = (c.gpu, c.layout.tp, c.layout.pp, c.layout.ep, c.format, c.kv_dtype)
                contexts.append(search.longest_context(plans[key], need, prompt + output))
        solved = search.solve(request.solve, ranked, [f for f, _ in formats], contexts)
        if solved.question == "max-context" and solved.candidate is not None:
            c = ranked[solved.candidate]
            assert isinstance(solved.answer, int)
            solve_command = command(model, c, request, solved.answer, prompt, output,
                                    -(-(request.concurrency or 1) // c.layout.dp),
                                    price_of.get(c.gpu))
    commands = tuple(command(model, c, request, max_len, prompt, output, c.concurrency,
                             price_of.get(c.gpu)) for c in ranked)
    return Planning(
        model=model, params=reports[0][1].params.total, asked=request.objective,
        objective=used, constraints=constraints,
        max_gpus=request.max_gpus, mfu=mfu, mbu=request.mbu, priced=priced,
        formats=tuple(formats), unstored=unstored,
        candidates=tuple(ranked), commands=commands, searched=searched, refused=refused,
        over_memory=over,
        pareto=tuple(search.pareto(ranked, priced)), solved=solved,
        solve_command=solve_command, max_model_len=max_len, prompt=prompt, output=output)


def command(model: Model, c: Candidate, request: PlanRequest, max_len: int, prompt: int,
            output: int, concurrency: int, price: float | None) -> tuple[str, ...]:
    """The ``specsheet serve`` line of one replica of ``c``."""
    argv = ["specsheet", "serve", *(request.model_args or (model.name,)), "--gpu", c.gpu,
            "--gpus", str(c.layout.replica), "--tp", str(c.layout.tp), "--pp",
            str(c.layout.pp)]
    if c.layout.ep:
        argv.append("--ep")
    argv += ["--tokens", str(max_len), "--prompt", str(prompt), "--output", str(output),
             "--concurrency", str(concurrency)]
    if c.quant is not None:
        argv += ["--quant", c.quant]
    argv += ["--kv-dtype", c.kv_dtype]
    if request.memory_utilization != DEFAULT_UTILIZATION:
        argv += ["--memory-utilization", request.memory_utilization]
    if request.mfu is not None and request.mfu != DEFAULT_MFU:
        argv += ["--mfu", repr(request.mfu)]
    if request.mbu != DEFAULT_MBU:
        argv += ["--mbu", repr(request.mbu)]
    if price is not None:
        argv += ["--price", repr(price)]
    for option, value in (("--draft", request.draft),
                          ("--speculative-tokens", request.speculative_tokens),
                          ("--speculative-method", request.speculative_method)):
        if value is not None:
            argv += [option, str(value)]
    return tuple(argv)


# ---- training: the fewest GPUs, or the cheapest, that train D tokens in N days ---------------
# Every candidate is a ``train`` run: its plan is ``api.train``'s for the resolved request the
# ``train`` command builds, and its ``command`` is the ``specsheet train`` line that reproduces
# it. GPU-hours do not depend on the count (FLOPs / (peak x MFU)), so the counts that cannot
# finish in N days even without recomputation are skipped before any plan; for each accelerator
# the search stops at the first count where a layout meets every constraint.

class TrainPlanning(_TrainPlanning):
    """The training search (``specsheet.plan.search.TrainPlanning``)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet plan --train --json`` writes for the same inputs."""
        from specsheet.views.plan import plan_train_document

        return plan_train_document(self)


def check_train_request(request: PlanRequest) -> None:
    """What a training search cannot take, before any model is read."""
    serving = {"concurrency": request.concurrency, "requests_per_s": request.requests_per_s,
               "max_ttft": request.max_ttft, "max_tpot": request.max_tpot,
               "min_tokens_per_s": request.min_tokens_per_s, "prompt": request.prompt,
               "output": request.output}
    for field, value in serving.items():
        if value is not None:
            raise SpecError("a serving constraint; a training search takes the days and the "
                            "budget", field=field, value=value)
    if request.quant is not None or request.kv_dtype != "bf16":
        raise SpecError("a training search plans bf16-mixed runs of the whole model",
                        field="quant" if request.quant is not None else "kv_dtype")
    if request.solve not in (None, "min-gpus"):
        raise SpecError(f"a training search answers min-gpus, not {request.solve}",
                        field="solve", value=request.solve)
    if request.tokens_total is None:
        raise SpecError("a training search needs the tokens to train on", field="tokens_total")


def search_train(model: Model, request: PlanRequest, cut: KeptCut | None = None
                 ) -> TrainPlanning:
    """Every accelerator's fewest GPUs (and the layouts at that count) whose step fits and
    whose run meets the days and the budget."""
    from specsheet.api.train import DEFAULT_MFU, TrainRequest, _plan, resolved, tokens_of
    from specsheet.plan import search

    tokens = tokens_of(request.tokens_total)
    assert tokens is not None
    mfu = DEFAULT_MFU if request.mfu is None else request.mfu
    names = gpu_names(request.gpu)
    price_of = prices(request.price, names)
    low, high = gpu_range(request.gpus, request.nodes, request.max_gpus)
    base = resolved(model, TrainRequest(tokens_total=tokens, seq_len=request.max_model_len,
                                        mfu=mfu))
    candidates: list[TrainCandidate] = []
    searched = refused = over = slow = 0
    for name in names:
        reference = _plan(model, base._replace(gpu=name, gpus=1), cut)  # GPU-hours, any count
        assert reference.time is not None
        hours = reference.time.gpu_hours
        last: list[TrainCandidate] = []
        for count in search.train_counts(low, high):
            if request.days is not None and hours / count / 24 > request.days:
                slow += 1  # no recomputation and every GPU busy still takes too long
                continue
            found: list[TrainCandidate] = []
            for tp, pp, zero, recompute in search.train_layouts(count):
                run = base._replace(gpu=name, gpus=count, tp=tp, pp=pp, zero=zero,
                                    recompute=recompute, price=price_of.get(name),
                                    grad_accum=pp)
                try:
                    plan = _plan(model, run, cut)
                except SpecError:  # a layout the training checks refuse
                    refused += 1
                    continue
                searched += 1
                if not plan.fits:
                    over += 1
                    continue
                assert plan.time is not None
                price = price_of.get(name)
                per_hour = None if price is None else price * count
                found.append(search.TrainCandidate(
                    gpu=name, gpus=count, tp=tp, pp=pp, dp=plan.layout.dp, zero=zero,
                    recompute=recompute, days=plan.time.days, gpu_hours=plan.time.gpu_hours,
                    usd=plan.time.usd, usd_per_hour=per_hour, bytes_per_gpu=plan.total_bytes,
                    capacity_bytes=plan.capacity_bytes,
                    misses=search.train_misses(plan.time.days, per_hour, request.days,
                                               request.budget)))
            if found:
                last = found
            if any(c.meets for c in found):
                break
        candidates += last
    priced = any(c.usd is not None for c in candidates)
    used = search.objective_used(request.objective, priced)
    ranked = search.train_rank(candidates, used)
    solved = None
    if request.solve == "min-gpus":
        meeting = [i for i, c in enumerate(ranked) if c.meets]
        i = min(meeting, key=lambda j: (ranked[j].gpus, j)) if meeting else None
        solved = search.Solved("min-gpus", None if i is None else ranked[i].gpus, i)
    return TrainPlanning(
        model=model, params=reference.params.total if names else 0, asked=request.objective,
        objective=used, priced=priced, tokens_total=tokens, seq_len=base.seq_len or 0,
        most_days=request.days, budget=request.budget, max_gpus=request.max_gpus, mfu=mfu,
        candidates=tuple(ranked),
        commands=tuple(train_command(model, c, request, tokens, base.seq_len or 0, mfu,
                                     DEFAULT_MFU) for c in ranked),
        searched=searched, refused=refused, over_memory=over, too_slow=slow, solved=solved)


def train_command(model: Model, c: TrainCandidate, request: PlanRequest, tokens: int,
                  seq_len: int, mfu: float, default_mfu: float) -> tuple[str, ...]:
    """The ``specsheet train`` line of ``c``."""
    argv = ["specsheet", "train", *(request.model_args or (model.name,)), "--tokens-total",
            str(tokens), "--tokens", str(seq_len), "--gpu", c.gpu, "--gpus", str(c.gpus),
            "--tp", str(c.tp), "--pp", str(c.pp), "--zero", str(c.zero), "--recompute",
            c.recompute]
    if mfu != default_mfu:
        argv += ["--mfu", repr(mfu)]
    if c.usd_per_hour is not None:
        argv += ["--price", repr(c.usd_per_hour / c.gpus)]
    return tuple(argv)
