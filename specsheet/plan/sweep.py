"""A sweep's grid, and the one cache that makes a 1,000-point sweep cost little more than one
count.

A point's figures depend on four things, and each is computed once per value of what it
depends on, in ``SweepCache``:

- the model: once per value of the spec fields that are axes (read by the caller);
- the tokens-free part of the report (parameters, weights): once per model and formats;
- the KV cache and the FLOPs: at every point's tokens (``figures.moved_to_tokens``);
- with a GPU, the layout (weights per GPU, the pool): once per tokens-free report; the blocks
  of a request at every point's tokens (``moved_to_max_model_len``); the estimates once per
  layout and batch.

Everything here is exact: a moved report or plan equals the one computed from scratch
(tests/test_sweep.py checks every point against ``count`` and ``serve``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import product
from typing import TYPE_CHECKING, Any, TypeVar

from specsheet.compiled import NamedTuple
from specsheet.figures import Axis, Point, Report, build_report, moved_to_tokens
from specsheet.model.memory import DEFAULT_DTYPE
from specsheet.model.spec import FIELD_DOCS, Model

if TYPE_CHECKING:
    from specsheet.plan.serving import ServePlan

S = TypeVar("S")


def moved_to_max_model_len(plan: ServePlan, report: Report, max_model_len: int) -> ServePlan:
    """``plan`` for ``report`` (the same model, weights and KV dtype as the plan's, at other
    tokens) and requests of ``max_model_len`` tokens: the same as ``plan_serving`` with them,
    computing again only the blocks a request holds."""
    # imported here: a sweep without a GPU never lays out (and loads none of the serving plan)
    from specsheet.plan.kv_blocks import group_blocks, kv_block_size
    from specsheet.plan.serving import over_context

    spec = report.model.spec
    if max_model_len > spec.context:
        raise over_context(report, max_model_len)
    request = plan.request._replace(max_model_len=max_model_len)
    block = request.block_size or kv_block_size(spec, plan.hardware, plan.layout.tp,
                                                report.kv.dtype, report.dtype or "bf16",
                                                max_model_len)
    stages = tuple(s._replace(block_size=block, blocks_per_request=sum(
        group_blocks(g, max_model_len, request.batched_tokens, block)
        for g in s.groups)) for s in plan.stages)
    return plan._replace(report=report, request=request, stages=stages)


def same_layout(report: Report, before: Report) -> bool:
    """``report`` lays out on GPUs as ``before`` does: the same model, weights and dtypes."""
    return report.model is before.model and report.weights is before.weights and \
        report.dtype == before.dtype and report.kv.dtype == before.kv.dtype


class SweepCache(NamedTuple):
    """The grid's cache: models by the values of the spec fields that are axes, tokens-free
    reports by model and formats (the values of the axes other than tokens and batch). On a
    GPU, serve_grid keeps each layout for the points after it, and its caller the estimates by
    layout and batch."""

    models: dict[tuple[Any, ...], Model]
    reports: dict[tuple[Any, ...], Report]

    @classmethod
    def new(cls) -> SweepCache:
        return cls({}, {})


def grid(axes: list[Axis], single: Mapping[str, Any],
         model_of: Callable[[Mapping[str, Any]], Model], group_size: int | None = None,
         cache: SweepCache | None = None) -> list[Point]:
    """Every point, the first axis varying fastest. ``model_of(at)`` reads the model at a
    point (``at``: the point's values, only the spec fields matter), once per value of the
    spec fields that are axes."""
    cache = cache or SweepCache.new()
    batch = single.get("batch", 1)
    tokens_axis = any(a.name == "tokens" for a in axes)
    names = [a.name for a in axes]
    fields = [i for i, a in enumerate(axes) if a.name in _SPEC_FIELDS]
    others = [i for i, name in enumerate(names) if name not in ("tokens", "batch")]
    make = Point._make
    points = []
    for combination in product(*(a.values for a in reversed(axes))):
        values = combination[::-1]  # the first axis varies fastest
        at = dict(zip(names, values, strict=True))
        key = tuple([values[i] for i in others]) if others else ()
        base = cache.reports.get(key)
        if base is None:
            where = {**single, **at}
            model_key = tuple(values[i] for i in fields)
            model = cache.models.get(model_key)
            if model is None:
                model = cache.models[model_key] = model_of(at)
            base = cache.reports[key] = build_report(
                model, None if tokens_axis else where.get("tokens"), where.get("dtype"),
                where.get("kv_dtype", DEFAULT_DTYPE), where.get("quant"), group_size)
        moved = moved_to_tokens(base, int(at["tokens"] or 0)) if tokens_axis else base
        points.append(make((at, moved, int(at.get("batch", batch)))))
    return points


_SPEC_FIELDS = frozenset(f.name for f in FIELD_DOCS)


def serve_grid(points: list[Point], plan_of: Callable[[Point], S],
               plan: Callable[[S], ServePlan], moved: Callable[[S, ServePlan, Point], S]
               ) -> list[S]:
    """Serving at every point: ``plan_of(point)`` plans a point from scratch (its layout, pool
    and estimates); a point whose report lays out as the one before it takes that layout:
    ``moved(start, plan, point)``, with ``start`` the point that laid it out and ``plan`` its
    plan moved to this point's tokens."""
    served: list[S] = []
    start: S | None = None
    for point in points:
        if start is not None and same_layout(point.report, plan(served[-1]).report):
            at = moved_to_max_model_len(plan(served[-1]), point.report, point.report.kv.tokens)
            served.append(moved(start, at, point))
        else:
            start = plan_of(point)
            served.append(start)
    return served
