"""Sweeps laid out as neutral charts: columns of stacked values against an axis, and a line
(a device's memory) across them. render/charts.py draws them with rich."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from specsheet.figures import Axis, Point
from specsheet.units import exact, human_bytes

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator

MAX_CHARTS = 8  # a two-axis sweep draws a chart per value of its second axis, this many at most


class Segment(NamedTuple):
    """One part of every column's stack, from the bottom: its name and a value per column."""

    label: str
    values: tuple[int, ...]


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


def memory_charts(axes: list[Axis], points: list[Point], gpu: Accelerator | None
                  ) -> list[ChartView]:
    """Weights and KV cache stacked at each point of the first axis; a chart per value of the
    second axis (MAX_CHARTS at most); a line at the memory of ``gpu``."""
    x = axes[0]
    per_chart = len(x.values)
    groups = [points[i:i + per_chart] for i in range(0, len(points), per_chart)]
    charts = []
    for group in groups[:MAX_CHARTS]:
        first = group[0]
        where = [f"{axis_noun(a)} {value_text(first.at[a.name])}" for a in axes[1:]]
        weights_label = f"weights ({first.report.weights.format})" if len(axes) == 1 or \
            axes[1].name not in ("dtype", "quant") else "weights"
        batch = "" if "batch" in first.at else f", batch {first.batch}"
        kv_label = f"KV cache ({first.report.kv.dtype}{batch})"
        chart = ChartView(
            title=f"{first.report.model.name}: weights + KV cache against "
                  f"{axis_noun(x)}" + (f" ({', '.join(where)})" if where else ""),
            axis=axis_label(x),
            ticks=tuple(short_text(x, p.at[x.name]) for p in group),
            segments=(Segment(weights_label, tuple(p.report.weights_bytes for p in group)),
                      Segment(kv_label, tuple(p.kv_bytes for p in group))),
            format=human_bytes,
            line=None if gpu is None else (f"{gpu.name} memory", gpu.memory_bytes),
        )
        chart.caption = _crossing(x, group)
        charts.append(chart)
    if len(groups) > MAX_CHARTS:
        charts[-1].caption += (f" Charts for the first {MAX_CHARTS} of {len(groups)} values of "
                               f"{axis_noun(axes[1])}; the table has every point.")
    return charts


def _crossing(axis: Axis, points: list[Point]) -> str:
    """Where the KV cache first outgrows the weights, in words ("" when it never does, or
    does from the start)."""
    for before, point in zip(points, points[1:], strict=False):
        if before.kv_bytes <= before.report.weights_bytes < point.kv_bytes:
            weights = point.report.weights_bytes
            return (f"The KV cache outgrows the weights between {axis_noun(axis)} "
                    f"{value_text(before.at[axis.name])} and {value_text(point.at[axis.name])}: "
                    f"{human_bytes(point.kv_bytes)} against {human_bytes(weights)}.")
    if points and points[0].kv_bytes > points[0].report.weights_bytes:
        return "The KV cache is larger than the weights at every point."
    return "The KV cache stays below the weights at every point."
