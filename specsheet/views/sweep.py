"""``sweep``: a grid of points, count's (or serve's) document at each, and the table of a row
per point."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from specsheet.figures import Axis, Point, Report
from specsheet.views import SCHEMA_VERSION
from specsheet.views.count import count_document, flops_section, kv_section

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.views.table import TableView


def sweep_document(axes: list[Axis], points: list[Point], batch: int | None,
                   gpu: Accelerator | None,
                   served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
                   | None = None, *, options: Mapping[str, str]) -> dict[str, Any]:
    """The document of ``sweep``: its axes (each with the option it was given by,
    ``options[axis.name]``), and each point's place on them with the document of ``count``
    there, or with ``served`` (a plan per point, on ``gpu``) that of ``serve``. ``batch`` is
    the requests at once when it is not an axis (else None).

    Points share what does not move along the grid: a point on the report of the point before
    it (another batch) has that point's document, and one whose report differs only in the
    tokens shares its spec, parameters and memory sections (the same dicts, which
    render.text.to_json writes once)."""
    if served is not None:
        from specsheet.views.serve import serve_document  # a sweep on a GPU's alone

        entries = [{"at": point.at, "report": serve_document(*plan)}
                   for point, plan in zip(points, served, strict=True)]
    else:
        entries = []
        before: Report | None = None
        document: dict[str, Any] = {}
        for point in points:
            if point.report is not before:
                document = _point_report(point.report, before, document)
                before = point.report
            entries.append({"at": point.at, "report": document})
    return {
        "schema_version": SCHEMA_VERSION,
        "axes": [{"name": a.name, "option": options[a.name], "values": list(a.values)}
                 for a in axes],
        "batch": batch,
        "gpu": None if gpu is None else {"name": gpu.name, "label": gpu.label,
                                         "memory_bytes": gpu.memory_bytes},
        "points": entries,
    }


def schemas() -> dict[str, Any]:
    """The schema of ``sweep_document``: the axes, and at each point count's document (serve's
    on a GPU)."""
    from specsheet.views.schema import VERSION, obj, ref

    value = {"type": ["integer", "string", "null"]}
    axis = obj({"name": {"type": "string", "description": "tokens, batch, dtype, quant, "
                         "kv_dtype or a spec field"},
                "option": {"type": "string", "description": "the option that gave it"},
                "values": {"type": "array", "items": value, "minItems": 2,
                           "description": "in order; quant null: a plain dtype"}})
    gpu = obj({"name": {"type": "string"}, "label": {"type": "string"},
               "memory_bytes": {"type": "integer", "minimum": 1}},
              "the accelerator given, whose budget per GPU the chart draws a line at")
    point = obj({"at": {"type": "object", "additionalProperties": value,
                        "description": "the point's value on each axis, by axis name"},
                 "report": {"oneOf": [ref("count"), ref("serve")],
                            "description": "count's document at the point; on a GPU, "
                                           "serve's (max_model_len: the point's tokens, "
                                           "concurrency: its batch)"}})
    return {"sweep": obj({
        "schema_version": VERSION,
        "axes": {"type": "array", "items": axis, "minItems": 1, "maxItems": 2},
        "batch": {"type": ["integer", "null"], "minimum": 1,
                  "description": "requests at once (each with its KV cache); null when "
                                 "batch is an axis"},
        "gpu": {"oneOf": [gpu, {"type": "null"}]},
        "points": {"type": "array", "items": point, "minItems": 2,
                   "description": "the first axis varies fastest"},
    })}


def _point_report(report: Report, before: Report | None,
                  document: dict[str, Any]) -> dict[str, Any]:
    """Count's document at one point: a report on the same model, parameters and weights as
    the one ``before`` it (whose ``document`` it was), other tokens, takes a copy of that
    document with the KV cache and FLOPs of its own."""
    if before is not None and report.model is before.model and \
            report.params is before.params and report.weights is before.weights and \
            report.dtype == before.dtype:
        moved = document.copy()
        moved["kv_cache"] = kv_section(report)
        moved["flops"] = flops_section(report)
        return moved
    return count_document(report)


def sweep_view(axes: list[Axis], points: list[Point], gpu: Accelerator | None,
               served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
               | None, options: Mapping[str, str]) -> TableView:
    """A row per point: its place on each axis, then the figures that change from point to
    point, and always the memory the chart draws (weights, KV cache, their sum and the KV
    cache's share of it; with a GPU, the sum's share of its memory). With ``served`` (a plan
    per point), the memory of one GPU, the requests its pool holds and whether the batch fits.
    ``options``: how the reader asks for an output or sets an input, by its name (``json``,
    ``max_model_len``, ``concurrency``), for the caption."""
    from specsheet.units import exact, human_bytes, human_count, human_flops, percent
    from specsheet.views.table import TableView

    if served is not None:
        return _sweep_served_view(axes, points, served, options)
    from specsheet.views.charts import axis_label, axis_noun, value_text

    first = points[0]

    def changes(get: Callable[[Point], object]) -> bool:
        return any(get(p) != get(first) for p in points)

    columns: list[tuple[str, Callable[[Point], str], bool]] = []  # header, cell, optional
    def place(name: str) -> Callable[[Point], str]:
        return lambda p: value_text(p.at[name])

    for axis in axes:
        columns.append((axis_label(axis), place(axis.name), False))
    if "tokens" not in first.at and changes(lambda p: p.report.kv.tokens):
        columns.append(("Tokens T", lambda p: exact(p.report.kv.tokens), False))
    if changes(lambda p: p.report.params.total):
        columns.append(("Parameters", lambda p: human_count(p.report.params.total), False))
    columns += [
        ("Weights", lambda p: human_bytes(p.report.weights_bytes), False),
        ("KV cache", lambda p: human_bytes(p.kv_bytes), False),
        ("Weights + KV", lambda p: human_bytes(p.memory_bytes), False),
        ("KV share", lambda p: percent(p.kv_bytes, p.memory_bytes), False),
    ]
    if gpu is not None:
        columns.append((f"Of {gpu.name}", lambda p: percent(p.memory_bytes, gpu.memory_bytes),
                        False))
    if changes(lambda p: p.report.flops.total):
        columns.append(("FLOPs/token", lambda p: human_flops(p.report.flops.total), False))
    columns.append(("Weights + KV (B)", lambda p: exact(p.memory_bytes), True))
    names = " and ".join(axis_noun(a) for a in axes)
    view = TableView(
        title=f"{first.report.model.name}: {exact(len(points))} points over {names}",
        headers=tuple(c[0] for c in columns),
        numeric=tuple(i >= len(axes) or all(isinstance(v, int) for v in axes[i].values)
                      for i in range(len(columns))),
        optional=tuple(c[2] for c in columns),
    )
    for point in points:
        view.add(*(cell(point) for _, cell, _ in columns))
    batch = "each point's batch" if "batch" in first.at else f"batch {first.batch}"
    view.caption = (f"KV cache: {batch} × one request of T tokens ({first.report.kv.dtype}). "
                    "Sizes in SI units (1 GB = 10^9 bytes); "
                    f"{options['json']} has every figure of count at each point.")
    return view


def _sweep_served_view(axes: list[Axis], points: list[Point],
                       served: list[tuple[ServePlan, Estimates | None,
                                          dict[str, float | None]]],
                       options: Mapping[str, str]) -> TableView:
    """sweep_view on GPUs: per GPU of the stage that admits the fewest requests, the weights,
    the KV cache of one request and of the batch (whole blocks), the chart's stack against
    the budget, the requests of T tokens the pool holds, and whether the batch fits."""
    from specsheet.units import exact, human_bytes, human_count, percent
    from specsheet.views.charts import axis_label, axis_noun, value_text
    from specsheet.views.table import TableView

    first, plan0 = points[0], served[0][0]
    rows = list(zip(points, (plan for plan, _, _ in served), strict=True))

    def changes(get: Callable[[Point], object]) -> bool:
        return any(get(p) != get(first) for p in points)

    def place(name: str) -> Callable[[Point, ServePlan], str]:
        return lambda p, plan: value_text(p.at[name])

    def kv(p: Point, plan: ServePlan) -> int:
        return p.batch * plan.binding.kv_bytes_per_request

    def stack(p: Point, plan: ServePlan) -> int:
        s = plan.binding
        return s.weights_bytes + s.activation_bytes + s.overhead_bytes + kv(p, plan)

    batched = any(p.batch != 1 for p in points)
    columns: list[tuple[str, Callable[[Point, ServePlan], str], bool]] = [
        (axis_label(axis), place(axis.name), False) for axis in axes]
    if "tokens" not in first.at and changes(lambda p: p.report.kv.tokens):
        columns.append(("Tokens T", lambda p, plan: exact(p.report.kv.tokens), False))
    if changes(lambda p: p.report.params.total):
        columns.append(("Parameters", lambda p, plan: human_count(p.report.params.total),
                        False))
    columns += [
        ("Weights/GPU", lambda p, plan: human_bytes(plan.binding.weights_bytes), False),
        ("KV/request", lambda p, plan: human_bytes(plan.binding.kv_bytes_per_request), False),
    ]
    hybrid = any(plan.binding.state_bytes_per_request for _, plan in rows)
    if hybrid:
        columns.append(("State/request", lambda p, plan: human_bytes(
            plan.binding.state_bytes_per_request), True))
    if batched:
        columns.append(("KV of batch", lambda p, plan: human_bytes(kv(p, plan)), False))
    columns += [
        ("Of budget", lambda p, plan: percent(stack(p, plan), plan.binding.budget_bytes), False),
        ("Max requests", lambda p, plan: exact(plan.max_concurrency), False),
        ("Batch fits" if batched else "Fits",
         lambda p, plan: "yes" if plan.fits and p.batch <= plan.max_concurrency else "no",
         False),
        ("Weights + KV/GPU (B)",
         lambda p, plan: exact(plan.binding.weights_bytes + kv(p, plan)), True),
    ]
    names = " and ".join(axis_noun(a) for a in axes)
    layout, hw = plan0.layout, plan0.hardware
    where = f"{layout.gpus} x {hw.name}" + (f", tp {layout.tp}" if layout.tp > 1 else "") + (
        f", pp {layout.pp}" if layout.pp > 1 else "") + (
        f", ep {layout.ep}" if layout.ep > 1 else "")
    view = TableView(
        title=f"{first.report.model.name}: {exact(len(points))} points over {names}, on {where}",
        headers=tuple(c[0] for c in columns),
        numeric=tuple(i >= len(axes) or all(isinstance(v, int) for v in axes[i].values)
                      for i in range(len(columns))),
        optional=tuple(c[2] for c in columns),
    )
    for point, plan in rows:
        view.add(*(cell(point, plan) for _, cell, _ in columns))
    batch = "each point's batch" if "batch" in first.at else f"batch {first.batch}"
    stage = " of the pipeline stage that holds the fewest requests" if layout.pp > 1 else ""
    budget = (f"the memory ({human_bytes(plan0.binding.budget_bytes)}), with a KV pool given"
              if plan0.kv_memory_given else
              f"{float(plan0.utilization):g} x memory = {human_bytes(plan0.binding.budget_bytes)}")
    sizes = sorted({plan.binding.block_size for _, plan in rows})
    blocks = exact(sizes[0]) if len(sizes) == 1 else f"{exact(sizes[0])} to {exact(sizes[-1])}"
    state = (f", with each request's state (one page per state layer, in "
             f"{first.report.dtype or 'bf16'}, padded to a block as vLLM pads it; KV/request "
             "includes it)" if hybrid else "")
    view.caption = (
        f"Per GPU{stage}; KV cache in blocks of {blocks} tokens ({first.report.kv.dtype})"
        f"{state}, {batch} "
        f"× one request of T tokens. Of budget: weights, the batch's KV cache, the activation "
        f"peak and overhead (estimates) against {budget}. Max requests: requests of T tokens "
        "the KV pool holds (vLLM's maximum concurrency). Sizes in SI units (1 GB = 10^9 "
        f"bytes); {options['json']} has serve's document at each point "
        f"({options['max_model_len']} T, {options['concurrency']} the batch).")
    return view

