"""A sweep's grid, and the one cache that makes a 1,000-point sweep cost little more than one
count.

A point's figures depend on four things, and each is computed once per value of what it
depends on, in ``SweepCache``:

- the model: once per value of the spec fields that are axes (read by the caller);
- the tokens-free part of the report (parameters, weights): once per model and formats;
- the KV cache and the FLOPs: at every point's tokens (``moved_to_tokens``);
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
from specsheet.errors import SpecError, TokensOverContext
from specsheet.figures import Axis, Point, Report, build_report
from specsheet.model.flops import attention_context_flops, ssm_forward_per_token
from specsheet.model.memory import DEFAULT_DTYPE, bytes_for, kv_elements_per_layer, kv_positions
from specsheet.model.spec import FIELD_DOCS, Model

if TYPE_CHECKING:
    from specsheet.plan.serving import ServePlan

S = TypeVar("S")


def moved_to_tokens(report: Report, tokens: int) -> Report:
    """``report`` for a request of ``tokens`` tokens: the same as ``build_report`` with that
    many, computing again only what depends on the tokens (the KV cache and the FLOPs)."""
    spec, model = report.model.spec, report.model
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        raise SpecError(f"expected a positive integer, got {tokens!r}", field="tokens",
                        value=tokens)
    if tokens > spec.context:
        raise TokensOverContext(
            f"{tokens:,} exceeds the context of {model.name} ({spec.context:,} tokens)",
            field="tokens", value=tokens)
    kv, flops = report.kv, report.flops
    # the terms of kv_cache and forward_flops that hold T; the rest is the model's
    kv = kv._replace(tokens=tokens, bytes_per_request=bytes_for(
        kv_positions(spec, tokens) * kv_elements_per_layer(spec), kv.dtype) + kv.state_bytes)
    flops = flops._replace(tokens=tokens, attention_context=attention_context_flops(spec, tokens),
                           ssm=ssm_forward_per_token(spec, tokens))
    return Report(report.model, report.params, report.dtype, report.weights, kv, flops,
                  report.flops_2n)


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
