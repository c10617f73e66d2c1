"""Sweeps laid out as neutral charts: columns of stacked values against an axis, and a line
(a device's memory) across them. render/charts.py draws them with rich."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.figures import Axis, Point
from specsheet.units import exact, human_bytes

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan

    # a sweep's point served: serve's plan there, its estimates and costs (cli.serving.Served)
    Served = tuple[ServePlan, Estimates | None, dict[str, float | None]]

MAX_CHARTS = 8  # a two-axis sweep draws a chart per value of its second axis, this many at most


class Segment(NamedTuple):
    """One part of every column's stack, from the bottom: its name and a value per column."""

    label: str
    values: tuple[int, ...]
    fill: str = ""  # how it is drawn: weights, kv, state, reserved ("": by its place)


class ChartView:
    """Columns of stacked segments against an axis (one column per point, in order), with an
    optional horizontal line at a value. ``ticks`` name the columns; ``format`` writes a value
    for the vertical axis. A plain class, as TableView."""

    def __init__(self, title: str, axis: str, ticks: tuple[str, ...],
                 segments: tuple[Segment, ...], format: Callable[[int], str],
                 line: tuple[str, int] | None = None, caption: str = "") -> None:
        self.title = title
        self.axis = axis
        self.ticks = ticks
        self.segments = segments
        self.format = format
        self.line = line
        self.caption = caption

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(sum(column) for column in zip(*(s.values for s in self.segments),
                                                   strict=True))


def axis_label(axis: Axis) -> str:
    """An axis as a column header or a chart's horizontal axis."""
    return {"tokens": "Tokens T", "batch": "Batch", "dtype": "Weights dtype",
            "quant": "Quantization", "kv_dtype": "KV dtype"}.get(axis.name, axis.name)


def axis_noun(axis: Axis) -> str:
    """An axis in a sentence: tokens, batch, weights dtype, d_model."""
    if axis.name in ("dtype", "quant", "kv_dtype"):
        return axis_label(axis).lower()
    return axis.name


def value_text(value: int | str | None) -> str:
    """A value on an axis as a cell shows it: 131,072, bf16, none."""
    if value is None:
        return "none"
    return exact(value) if isinstance(value, int) else value


def short_text(axis: Axis, value: int | str | None) -> str:
    """A value as a chart's tick shows it, short: tokens in k as contexts are named (128k)."""
    if isinstance(value, int) and axis.name in ("tokens", "context") and value >= 1024 \
            and value % 1024 == 0:
        return f"{value // 2**20}M" if value % 2**20 == 0 else f"{value // 1024}k"
    if isinstance(value, int) and value >= 10_000:
        from specsheet.units import human_count

        return human_count(value)
    return value_text(value)


def memory_charts(axes: list[Axis], points: list[Point], gpu: Accelerator | None,
                  served: list[Served] | None = None) -> list[ChartView]:
    """Weights and KV cache stacked at each point of the first axis; a chart per value of the
    second axis (MAX_CHARTS at most); a line at the memory of ``gpu``. With ``served`` (a plan
    per point): per GPU, the weights, the batch's KV cache and the activation peak and overhead
    (estimates) against the budget (U x memory, or the memory with a given KV pool)."""
    x = axes[0]
    per_chart = len(x.values)
    memory = [_per_gpu(p, plan) for p, (plan, _, _) in zip(points, served, strict=True)] \
        if served is not None else [Memory(p.report.weights_bytes,
                                           p.batch * p.report.kv.kv_bytes, 0,
                                           p.batch * p.report.kv.state_bytes) for p in points]
    charts = []
    starts = range(0, len(points), per_chart)
    for start in starts[:MAX_CHARTS]:
        group = points[start:start + per_chart]
        parts = memory[start:start + per_chart]
        first = group[0]
        where = [f"{axis_noun(a)} {value_text(first.at[a.name])}" for a in axes[1:]]
        weights_label = f"weights ({first.report.weights.format})" if len(axes) == 1 or \
            axes[1].name not in ("dtype", "quant") else "weights"
        batch = "" if "batch" in first.at else f", batch {first.batch}"
        kv_label = f"KV cache ({first.report.kv.dtype}{batch})"
        segments: tuple[Segment, ...] = (
            Segment(weights_label, tuple(m.weights for m in parts), "weights"),
            Segment(kv_label, tuple(m.kv for m in parts), "kv"))
        if any(m.state for m in parts):
            kept = f"{first.report.dtype or 'bf16'}, as vLLM keeps it" if served is not None \
                else "recurrent in fp32, as transformers keeps it"
            segments += (Segment(f"state ({kept}{batch})", tuple(m.state for m in parts),
                                 "state"),)
        line = None if gpu is None else (f"{gpu.name} memory", gpu.memory_bytes)
        title = f"{first.report.model.name}: weights + KV cache"
        if served is not None:
            plan = served[start][0]
            layout = plan.layout
            title += (f" per GPU ({layout.gpus} x {plan.hardware.name}"
                      + (f", tp {layout.tp}" if layout.tp > 1 else "")
                      + (f", pp {layout.pp}" if layout.pp > 1 else "") + ")")
            segments += (Segment("activation + overhead (estimates)",
                                 tuple(m.reserved for m in parts), "reserved"),)
            budget = plan.binding.budget_bytes
            line = (f"{plan.hardware.name} memory" if plan.kv_memory_given else
                    f"budget ({float(plan.utilization):g} x {plan.hardware.name} memory)",
                    budget)
        chart = ChartView(
            title=f"{title} against {axis_noun(x)}" + (f" ({', '.join(where)})" if where else ""),
            axis=axis_label(x),
            ticks=tuple(short_text(x, p.at[x.name]) for p in group),
            segments=segments,
            format=human_bytes,
            line=line,
        )
        chart.caption = _crossing(x, group, parts)
        if served is not None:
            chart.caption += _fit(x, group, served[start:start + per_chart])
        charts.append(chart)
    if len(starts) > MAX_CHARTS:
        charts[-1].caption += (f" Charts for the first {MAX_CHARTS} of {len(starts)} values of "
                               f"{axis_noun(axes[1])}; the table has every point.")
    return charts


class Memory(NamedTuple):
    """What a chart stacks at a point: the weights, the batch's KV cache, a hybrid model's
    state (Mamba, gated DeltaNet), and (per GPU) the activation peak and runtime overhead,
    estimates."""

    weights: int
    kv: int
    reserved: int
    state: int = 0


def _per_gpu(point: Point, plan: ServePlan) -> Memory:
    """The memory of one GPU of the stage that admits the fewest requests: its weights, the
    batch's KV cache and state in whole blocks (as vLLM allocates them: the state in padded
    pages), the activation peak and overhead."""
    s = plan.binding
    return Memory(s.weights_bytes,
                  point.batch * (s.kv_bytes_per_request - s.state_bytes_per_request),
                  s.activation_bytes + s.overhead_bytes, point.batch * s.state_bytes_per_request)


def _crossing(axis: Axis, points: list[Point], memory: list[Memory]) -> str:
    """Where the KV cache first outgrows the weights, in words ("" when it never does, or
    does from the start)."""
    pairs = list(zip(points, memory, strict=True))
    for (before, was), (point, now) in zip(pairs, pairs[1:], strict=False):
        if was.kv <= was.weights < now.kv:
            return (f"The KV cache outgrows the weights between {axis_noun(axis)} "
                    f"{value_text(before.at[axis.name])} and {value_text(point.at[axis.name])}: "
                    f"{human_bytes(now.kv)} against {human_bytes(now.weights)}.")
    if memory and memory[0].kv > memory[0].weights:
        return "The KV cache is larger than the weights at every point."
    return "The KV cache stays below the weights at every point."


def _fit(axis: Axis, points: list[Point], served: list[Served]) -> str:
    """Where the batch stops fitting on the GPUs, in words."""
    def fits(point: Point, plan: ServePlan) -> bool:
        return plan.fits and point.batch <= plan.max_concurrency

    verdicts = [fits(p, plan) for p, (plan, _, _) in zip(points, served, strict=True)]
    if all(verdicts):
        return " The batch fits at every point."
    if not any(verdicts):
        return " The batch fits at no point."
    first = verdicts.index(False)
    at = value_text(points[first].at[axis.name])
    if first and not any(verdicts[first:]):
        return (f" The batch fits up to {axis_noun(axis)} "
                f"{value_text(points[first - 1].at[axis.name])}, not from {at} on.")
    return (f" The batch does not fit at {verdicts.count(False):,} of {len(points):,} points "
            f"(the first: {axis_noun(axis)} {at}).")
