"""``specsheet plan``: the JSON document, its schema, and the tables (the candidates best first,
the verdict with the chosen one's serve line and why the next best lost)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from specsheet.plan.roofline import speed_wording
from specsheet.plan.search import CONSTRAINTS, Candidate, figure, why_lost

if TYPE_CHECKING:
    from specsheet.plan.search import Planning, TrainCandidate, TrainPlanning
    from specsheet.views.table import TableView

SCHEMA_VERSION = 1
SHOWN = 10  # candidates the table shows; JSON holds them all
# what each constraint bounds, in words (a miss says "TTFT 1.3 s over 1 s")
CONSTRAINT_WORDS = {"concurrency": "requests held at once", "requests_per_s": "requests/s",
                    "max_ttft": "time to first token", "max_tpot": "time per output token",
                    "min_tokens_per_s": "output tokens/s", "budget": "US dollars an hour"}
# the same, in a table's narrow column
SHORT = {"concurrency": "conc", "requests_per_s": "rate", "max_ttft": "ttft",
         "max_tpot": "tpot", "min_tokens_per_s": "tok/s", "budget": "budget"}


def _limits(p: Planning) -> dict[str, float | None]:
    return dict(p.constraints._asdict())


def _candidate(c: Candidate, argv: tuple[str, ...]) -> dict[str, Any]:
    layout = c.layout
    return {"gpu": c.gpu, "gpus": c.gpus,
            "layout": {"tp": layout.tp, "pp": layout.pp, "ep": layout.tp if layout.ep else 1,
                       "dp": layout.dp},
            "format": c.format, "kv_dtype": c.kv_dtype, "engine": c.engine,
            "concurrency": c.concurrency * layout.dp, "max_concurrency": c.max_concurrency,
            "ttft_s": c.ttft_s, "tpot_s": c.tpot_s, "tokens_per_s": c.tokens_per_s,
            "requests_per_s": c.requests_per_s, "latency_s": c.latency_s,
            "usd_per_hour": c.usd_per_hour,
            "usd_per_million_output_tokens": c.usd_per_million_output_tokens,
            "limited_by": c.limited_by, "meets": c.meets, "misses": list(c.misses),
            "command": list(argv)}


def closest(p: Planning) -> dict[str, Any] | None:
    """The first candidate (none meets): the constraints it misses, its figure and the limit."""
    if not p.candidates or p.best is not None:
        return None
    c, limits = p.candidates[0], _limits(p)
    return {"candidate": 0,
            "misses": [{"constraint": m, "value": figure(c, m), "limit": limits[m]}
                       for m in c.misses]}


def reason(p: Planning) -> str | None:
    """Why there is no best candidate (None when there is one)."""
    if p.best is not None:
        return None
    if not p.candidates:
        return ("no layout searched holds the weights and one request of max_model_len "
                f"({p.max_model_len:,} tokens)")
    return "no candidate meets every constraint; the closest misses " + ", ".join(
        CONSTRAINT_WORDS[m] for m in p.candidates[0].misses)


def runner_up(p: Planning) -> dict[str, Any] | None:
    """Why the second candidate lost to the first (both meeting every constraint)."""
    if p.best is None or len(p.candidates) < 2 or not p.candidates[1].meets:
        return None
    return {"candidate": 1, "why": why_lost(p.candidates[0], p.candidates[1], p.objective)}


def objective_note(p: Planning) -> str:
    asked = p.asked
    if asked == "cost" and p.objective != "cost":
        return "cost needs a price per GPU-hour (none given): fewest GPUs instead"
    return {"cost": "the lowest cost per million output tokens",
            "gpus": "the fewest GPUs", "latency": "the shortest request: TTFT + output x TPOT",
            "throughput": "the most output tokens/s"}[p.objective]


def plan_document(p: Planning) -> dict[str, Any]:
    """The document of ``p``."""
    from specsheet.plan.vllm_layout import ENGINE

    k = p.constraints
    solved = None
    if p.solved is not None:
        s = p.solved
        argv = p.solve_command if p.solve_command is not None else (
            p.commands[s.candidate] if s.candidate is not None else None)
        solved = {"question": s.question, "answer": s.answer, "candidate": s.candidate,
                  "command": None if argv is None else list(argv)}
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "serve",
        "model": {"name": p.model.name, "origin": p.model.origin, "params": p.params},
        "engine": {"name": ENGINE.name, "version": ENGINE.version},
        "request": {"max_model_len": p.max_model_len, "prompt": p.prompt, "output": p.output,
                    "concurrency": k.concurrency, "requests_per_s": k.requests_per_s},
        "constraints": {**{name: v for name, v in _limits(p).items()
                           if name not in ("concurrency", "requests_per_s")},
                        "max_gpus": p.max_gpus},
        "objective": {"asked": p.asked, "used": p.objective, "note": objective_note(p)},
        "formats": [{"format": f, "bits_per_weight": bits} for f, bits in p.formats],
        "searched": p.searched,
        "skipped": {"refused": p.refused, "memory": p.over_memory,
                    "formats": [{"format": f, "reason": why} for f, why in p.unstored]},
        "candidates": [_candidate(c, argv) for c, argv in zip(p.candidates, p.commands,
                                                               strict=True)],
        "best": p.best,
        "reason": reason(p),
        "closest": closest(p),
        "runner_up": runner_up(p),
        "pareto": list(p.pareto),
        "solve": solved,
        "estimates": estimate_wording(p),
    }


def estimate_wording(p: Planning) -> str:
    return (f"ttft_s, tpot_s, tokens_per_s, requests_per_s, latency_s and the costs are "
            f"serve's {speed_wording(p.mfu, p.mbu)}; max_concurrency and the memory that "
            "admits a candidate are exact but for serve's labelled estimates of the "
            "activation peak and the runtime overhead")


def _layout_text(c: Candidate) -> str:
    text = f"tp{c.layout.tp}"
    if c.layout.pp > 1:
        text += f" pp{c.layout.pp}"
    if c.layout.ep:
        text += " ep"
    if c.layout.dp > 1:
        text += f" dp{c.layout.dp}"
    return text


def plan_views(p: Planning, price_option: str) -> list[TableView]:
    """The candidates best first (at most SHOWN), then the verdict."""
    from specsheet.units import significant
    from specsheet.views.table import TableView, seconds_text, usd_text

    shown = p.candidates[:SHOWN]
    formats = {(c.format, c.kv_dtype) for c in shown}
    same = len(formats) == 1  # one format and KV dtype: said once, in the title
    title = (f"{p.model.name}: {len(p.candidates):,} candidates that fit, best first by "
             f"{p.objective}")
    if same:
        weights, kv = next(iter(formats))
        title += f" ({weights} weights, {kv} KV cache)"
    # (header, numeric, optional, cell)
    columns: list[tuple[str, bool, bool, Callable[[int, Candidate], str]]] = [
        ("#", True, False, lambda i, c: str(i)),
        ("GPUs", False, False, lambda i, c: f"{c.gpus} x {c.gpu}"),
        ("Layout", False, False, lambda i, c: _layout_text(c)),
        *([] if same else [("Format", False, False, lambda i, c: c.format),
                           ("KV", False, True, lambda i, c: c.kv_dtype)]),
        ("Conc", True, True, lambda i, c: f"{c.concurrency * c.layout.dp:,}"),
        ("TTFT", True, False, lambda i, c: seconds_text(c.ttft_s)),
        ("TPOT", True, True, lambda i, c: seconds_text(c.tpot_s)),
        ("tok/s", True, False, lambda i, c: f"{c.tokens_per_s:,.0f}"),
        ("$/h", True, True, lambda i, c: "-" if c.usd_per_hour is None
         else usd_text(c.usd_per_hour, price_option)),
        ("$/1M", True, False, lambda i, c: "-" if c.usd_per_million_output_tokens is None
         else usd_text(c.usd_per_million_output_tokens, price_option)),
        ("Limit", False, False, lambda i, c: c.limited_by),
        ("Meets", False, False, lambda i, c: "yes" if c.meets else
         "no: " + ", ".join(SHORT[m] for m in c.misses)),
    ]
    table = TableView(
        title=title, headers=tuple(h for h, _, _, _ in columns),
        numeric=tuple(n for _, n, _, _ in columns),
        optional=tuple(o for _, _, o, _ in columns),
        caption=f"TTFT, tok/s and $ are estimates ({speed_wording(p.mfu, p.mbu)}); $/1M: "
                "per million output tokens. Limit: what stops more (memory: the KV pool; "
                "compute or bandwidth: the decode step).")
    table.column_notes = {"Conc": "Conc: requests decoded at once.",
                          "TPOT": "TPOT: time per output token (estimate).",
                          "$/h": "$/h: every GPU at the price.",
                          "Meets": "Meets: yes, or no and what it misses: " + ", ".join(
                              f"{SHORT[m]} ({CONSTRAINT_WORDS[m]})" for m in CONSTRAINTS)
                          + "."}
    for i, c in enumerate(shown):
        table.add(*(cell(i, c) for _, _, _, cell in columns))
    verdict = TableView(title="Verdict: " + ("best is #0" if p.best is not None
                                             else "no candidate meets every constraint"),
                        headers=("Figure", "Value"), numeric=(False, False))
    verdict.add("objective", objective_note(p))
    verdict.add("searched", f"{p.searched:,} memory plans; skipped {p.refused:,} layouts "
                            f"vLLM refuses, {p.over_memory:,} that do not fit")
    for _, why in p.unstored:
        verdict.add("format skipped", why)
    if p.best is not None:
        verdict.add("reproduce #0", " ".join(p.commands[0]))
        lost = runner_up(p)
        if lost is not None:
            verdict.add("why #1 lost", lost["why"])
    else:
        verdict.add("reason", reason(p) or "")
        near = closest(p)
        if near is not None:
            verdict.add("closest #0", " ".join(p.commands[0]))
            for m in near["misses"]:
                value, limit = m["value"], m["limit"]
                verdict.add(f"  misses {CONSTRAINT_WORDS[m['constraint']]}",
                            f"{'none' if value is None else significant(value)} against "
                            f"{significant(limit)}", style="sub")
    if p.pareto:
        verdict.add("cost against latency", "Pareto front: #" + ", #".join(
            str(i) for i in p.pareto))
    if p.solved is not None:
        s = p.solved
        verdict.add(s.question, "no candidate" if s.answer is None else
                    f"{s.answer:,}" if isinstance(s.answer, int) else str(s.answer))
        if p.solve_command is not None:
            verdict.add("  reproduce", " ".join(p.solve_command), style="sub")
        elif s.candidate is not None:
            verdict.add("  candidate", f"#{s.candidate}", style="sub")
    return [table, verdict] if shown else [verdict]


def schemas() -> dict[str, Any]:
    """The JSON Schema of the plan document (scripts/build_schema.py adds it to schema.json)."""
    count = {"type": "integer", "minimum": 0}
    number = {"type": "number"}
    maybe_number = {"type": ["number", "null"]}
    maybe_count = {"type": ["integer", "null"]}

    def obj(properties: dict[str, Any], description: str = "") -> dict[str, Any]:
        out = {"type": "object", "properties": properties, "required": list(properties),
               "additionalProperties": False}
        if description:
            out["description"] = description
        return out

    argv = {"type": "array", "items": {"type": "string"}}
    candidate = obj({
        "gpu": {"type": "string"}, "gpus": count,
        "layout": obj({"tp": count, "pp": count, "ep": count, "dp": count}),
        "format": {"type": "string"}, "kv_dtype": {"type": "string"},
        "engine": {"type": "string"}, "concurrency": count, "max_concurrency": count,
        "ttft_s": number, "tpot_s": number, "tokens_per_s": number, "requests_per_s": number,
        "latency_s": number, "usd_per_hour": maybe_number,
        "usd_per_million_output_tokens": maybe_number,
        "limited_by": {"enum": ["memory", "compute", "bandwidth"]},
        "meets": {"type": "boolean"},
        "misses": {"type": "array", "items": {"enum": list(CONSTRAINTS)}},
        "command": argv}, "one layout served as its command's serve run serves it")
    miss = obj({"constraint": {"enum": list(CONSTRAINTS)}, "value": maybe_number,
                "limit": number})
    document = obj({
        "schema_version": {"const": SCHEMA_VERSION},
        "mode": {"const": "serve"},
        "model": obj({"name": {"type": "string"}, "origin": {"type": "string"},
                      "params": count}),
        "engine": obj({"name": {"type": "string"}, "version": {"type": "string"}}),
        "request": obj({"max_model_len": count, "prompt": count, "output": count,
                        "concurrency": maybe_count, "requests_per_s": maybe_number}),
        "constraints": obj({"max_ttft": maybe_number, "max_tpot": maybe_number,
                            "min_tokens_per_s": maybe_number, "budget": maybe_number,
                            "max_gpus": maybe_count}),
        "objective": obj({"asked": {"type": "string"}, "used": {"type": "string"},
                          "note": {"type": "string"}}),
        "formats": {"type": "array", "items": obj({"format": {"type": "string"},
                                                   "bits_per_weight": number})},
        "searched": count,
        "skipped": obj({"refused": count, "memory": count, "formats": {
            "type": "array", "items": obj({"format": {"type": "string"},
                                           "reason": {"type": "string"}})}}),
        "candidates": {"type": "array", "items": candidate},
        "best": maybe_count,
        "reason": {"type": ["string", "null"]},
        "closest": {"oneOf": [{"type": "null"}, obj({
            "candidate": count, "misses": {"type": "array", "items": miss}})]},
        "runner_up": {"oneOf": [{"type": "null"}, obj({"candidate": count,
                                                        "why": {"type": "string"}})]},
        "pareto": {"type": "array", "items": count},
        "solve": {"oneOf": [{"type": "null"}, obj({
            "question": {"type": "string"}, "answer": {"type": ["integer", "string", "null"]},
            "candidate": maybe_count, "command": {"oneOf": [{"type": "null"}, argv]}})]},
        "estimates": {"type": "string"},
    }, "the document of specsheet plan")
    return {"plan": document, "plan_train": train_schema(obj, argv)}


# ---- training ----------------------------------------------------------------------------------

TRAIN_ESTIMATES = ("days, gpu_hours and usd are train's estimates at the MFU (hardware FLOPs / "
                   "(GPUs x peak x MFU)); bytes_per_gpu is exact as train computes a step")


def _train_candidate(c: TrainCandidate, argv: tuple[str, ...]) -> dict[str, Any]:
    return {"gpu": c.gpu, "gpus": c.gpus,
            "layout": {"tp": c.tp, "pp": c.pp, "dp": c.dp, "zero": c.zero,
                       "recompute": c.recompute},
            "days": c.days, "gpu_hours": c.gpu_hours, "usd": c.usd,
            "usd_per_hour": c.usd_per_hour, "bytes_per_gpu": c.bytes_per_gpu,
            "capacity_bytes": c.capacity_bytes, "meets": c.meets, "misses": list(c.misses),
            "command": list(argv)}


def _train_reason(p: TrainPlanning) -> str | None:
    if p.best is not None:
        return None
    if not p.candidates and not p.searched and p.too_slow:
        return (f"every GPU count searched takes more than {p.most_days:g} days, even with "
                "every GPU busy and no recomputation")
    if not p.candidates:
        return "no count and layout searched holds a training step"
    return "no candidate meets every constraint; the closest misses " + ", ".join(
        TRAIN_WORDS[m] for m in p.candidates[0].misses)


TRAIN_WORDS = {"days": "the days", "budget": "US dollars an hour"}


def _train_figure(c: TrainCandidate, constraint: str) -> float | None:
    return c.days if constraint == "days" else c.usd_per_hour


def plan_train_document(p: TrainPlanning) -> dict[str, Any]:
    """The document of a training search."""
    limits = {"days": p.most_days, "budget": p.budget}
    closest_ = None
    if p.best is None and p.candidates:
        c = p.candidates[0]
        closest_ = {"candidate": 0,
                    "misses": [{"constraint": m, "value": _train_figure(c, m),
                                "limit": limits[m]} for m in c.misses]}
    solved = None
    if p.solved is not None:
        s = p.solved
        solved = {"question": s.question, "answer": s.answer, "candidate": s.candidate,
                  "command": None if s.candidate is None else list(p.commands[s.candidate])}
    note = ("cost needs a price per GPU-hour (none given): fewest GPUs instead"
            if p.asked == "cost" and p.objective != "cost" else
            {"cost": "the run's lowest cost", "gpus": "the fewest GPUs",
             "latency": "the fewest days", "throughput": "the fewest days"}[p.objective])
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "train",
        "model": {"name": p.model.name, "origin": p.model.origin, "params": p.params},
        "run": {"tokens_total": p.tokens_total, "seq_len": p.seq_len, "mfu": p.mfu},
        "constraints": {"days": p.most_days, "budget": p.budget, "max_gpus": p.max_gpus},
        "objective": {"asked": p.asked, "used": p.objective, "note": note},
        "searched": p.searched,
        "skipped": {"refused": p.refused, "memory": p.over_memory, "days": p.too_slow},
        "candidates": [_train_candidate(c, argv) for c, argv in zip(p.candidates, p.commands,
                                                                     strict=True)],
        "best": p.best,
        "reason": _train_reason(p),
        "closest": closest_,
        "solve": solved,
        "estimates": TRAIN_ESTIMATES,
    }


def plan_train_views(p: TrainPlanning, price_option: str) -> list[TableView]:
    """The training candidates best first (at most SHOWN), then the verdict."""
    from specsheet.views.table import TableView, usd_text

    shown = p.candidates[:SHOWN]
    table = TableView(
        title=f"{p.model.name}: {p.tokens_total:,} tokens of {p.seq_len:,}, {len(p.candidates):,} "
              f"training candidates whose step fits, best first by {p.objective}",
        headers=("#", "GPUs", "Layout", "Recompute", "Days", "GPU-hours", "$", "GB/GPU",
                 "Meets"),
        numeric=(True, False, False, False, True, True, True, True, False),
        optional=(False, False, False, False, False, True, False, True, False),
        caption=f"Days, GPU-hours and $ are estimates at mfu {p.mfu:g}; GB/GPU: the busiest "
                "GPU's step, exact as train computes it.")
    for i, c in enumerate(shown):
        layout = f"tp{c.tp} pp{c.pp} dp{c.dp} z{c.zero}"
        table.add(str(i), f"{c.gpus:,} x {c.gpu}", layout, c.recompute, f"{c.days:,.1f}",
                  f"{c.gpu_hours:,.0f}", "-" if c.usd is None else usd_text(c.usd, price_option),
                  f"{c.bytes_per_gpu / 1e9:,.1f}",
                  "yes" if c.meets else "no: " + ", ".join(c.misses))
    verdict = TableView(title="Verdict: " + ("best is #0" if p.best is not None
                                             else "no candidate meets every constraint"),
                        headers=("Figure", "Value"), numeric=(False, False))
    verdict.add("searched", f"{p.searched:,} training plans; {p.refused:,} layouts refused, "
                            f"{p.over_memory:,} whose step does not fit, {p.too_slow:,} GPU "
                            "counts too few for the days")
    if p.best is not None:
        verdict.add("reproduce #0", " ".join(p.commands[0]))
    else:
        verdict.add("reason", _train_reason(p) or "")
        if p.candidates:
            verdict.add("closest #0", " ".join(p.commands[0]))
    if p.solved is not None:
        verdict.add(p.solved.question, "no candidate" if p.solved.answer is None
                    else f"{p.solved.answer:,}")
    return [table, verdict] if shown else [verdict]


def train_schema(obj: Callable[..., dict[str, Any]], argv: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of the training search's document."""
    count = {"type": "integer", "minimum": 0}
    number = {"type": "number"}
    maybe_number = {"type": ["number", "null"]}
    candidate = obj({
        "gpu": {"type": "string"}, "gpus": count,
        "layout": obj({"tp": count, "pp": count, "dp": count, "zero": count,
                       "recompute": {"enum": ["none", "selective", "full"]}}),
        "days": number, "gpu_hours": number, "usd": maybe_number,
        "usd_per_hour": maybe_number, "bytes_per_gpu": count, "capacity_bytes": count,
        "meets": {"type": "boolean"},
        "misses": {"type": "array", "items": {"enum": ["days", "budget"]}},
        "command": argv}, "one training layout as its command's train run plans it")
    miss = obj({"constraint": {"enum": ["days", "budget"]}, "value": maybe_number,
                "limit": number})
    return obj({
        "schema_version": {"const": SCHEMA_VERSION},
        "mode": {"const": "train"},
        "model": obj({"name": {"type": "string"}, "origin": {"type": "string"},
                      "params": count}),
        "run": obj({"tokens_total": count, "seq_len": count, "mfu": number}),
        "constraints": obj({"days": maybe_number, "budget": maybe_number,
                            "max_gpus": {"type": ["integer", "null"]}}),
        "objective": obj({"asked": {"type": "string"}, "used": {"type": "string"},
                          "note": {"type": "string"}}),
        "searched": count,
        "skipped": obj({"refused": count, "memory": count, "days": count}),
        "candidates": {"type": "array", "items": candidate},
        "best": {"type": ["integer", "null"]}, "reason": {"type": ["string", "null"]},
        "closest": {"oneOf": [{"type": "null"}, obj({
            "candidate": count, "misses": {"type": "array", "items": miss}})]},
        "solve": {"oneOf": [{"type": "null"}, obj({
            "question": {"type": "string"}, "answer": {"type": ["integer", "null"]},
            "candidate": {"type": ["integer", "null"]},
            "command": {"oneOf": [{"type": "null"}, argv]}})]},
        "estimates": {"type": "string"},
    }, "the document of specsheet plan with a training search")
