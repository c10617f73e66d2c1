"""Charts that hide no part: every segment that is not zero at a point has a cell in that
point's column (render/charts.py), at every width, and the legend says the segments are scaled."""

from __future__ import annotations

import os
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from specsheet.render.charts import HEIGHT, SCALED, chart_lines
from specsheet.views.charts import ChartView, Segment

FILLS = "█▒▓"


def columns(lines: list[str], count: int) -> list[str]:
    """The plot's columns, each its characters from the top, read by the x-axis' corner."""
    corner = next(i for i, line in enumerate(lines) if "└" in line)
    plot = lines[corner - HEIGHT:corner]
    start = lines[corner].index("└") + 1
    span = len(lines[corner]) - start
    pitch = span // count
    return ["".join(row[start + j * pitch] if start + j * pitch < len(row) else " "
                    for row in plot) for j in range(count)]


def test_a_sweep_shows_every_part_at_every_point() -> None:
    """The issue's sweep: llama3.1-8b on an H100 from 1k to 128k tokens. The KV cache of 1k
    tokens (134 MB against 77 GB) and the activation slice at every point are not zero, so
    each column shows the weights, the KV cache and the estimates."""
    out = subprocess.run(["specsheet", "sweep", "llama3.1-8b", "--tokens", "1k:128k:x2",
                          "--gpu", "h100-sxm"], capture_output=True, text=True, check=True,
                         env={**os.environ, "COLUMNS": "100"}).stdout
    lines = out[out.index("weights + KV cache per GPU"):].splitlines()
    assert any(SCALED in line for line in lines)  # the legend says so
    for ticks, column in zip(("1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"),
                             columns(lines, 8), strict=True):
        assert {"█", "▒", "▓"} <= set(column), (ticks, column)
        assert column.count("█") == 3  # 16.1 GB of 77.0 GB: 3.3 of 16 cells at every point


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**9),
                                 st.integers(0, 10**6)), min_size=1, max_size=40),
       width=st.integers(40, 200))
def test_every_part_that_is_not_zero_has_a_cell(values: list[tuple[int, int, int]],
                                                width: int) -> None:
    segments = tuple(Segment(name, tuple(v[k] for v in values), fill)
                     for k, (name, fill) in enumerate((("weights", "weights"), ("kv", "kv"),
                                                        ("reserved", "reserved"))))
    chart = ChartView("t", "x", tuple(str(i) for i in range(len(values))), segments, str)
    lines = [line.plain for line in chart_lines(chart, width)]
    room = width - max(len(str(0)), len(str(max(chart.totals + (1,))))) - 2
    if len(values) > room:  # columns of several points: tested by the sweep above
        return
    for point, column in zip(values, columns(lines, len(values)), strict=True):
        for fill, value in zip(FILLS, point, strict=True):
            assert (fill in column) == bool(value), (point, column)


WORDS = st.lists(st.sampled_from(["weights", "KV", "cache", "(bf16,", "batch", "1)", "76.4 GB",
                                  "h100-sxm", "日本語", "meta-llama/Llama-3.1-405B-Instruct",
                                  "x" * 70]), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(width=st.integers(30, 160), title=WORDS, axis=WORDS, label=WORDS, line=WORDS)
def test_no_word_of_a_chart_is_cropped(width: int, title: str, axis: str, label: str,
                                        line: str) -> None:
    """Every line within the width (in cells, as rich counts them: 日本語 takes 6), and every
    word of the title, the axis, the legend and the note on scaling shown: wrapped, never
    cropped at the edge; a figure kept with its unit."""
    from rich.cells import cell_len

    chart = ChartView(title, axis, ("1k", "2k"), (Segment(label, (5, 7), "weights"),),
                      lambda v: f"{v} GB", line=(line, 6))
    lines = [text.plain for text in chart_lines(chart, width)]
    assert all(cell_len(text) <= width for text in lines), [t for t in lines
                                                             if cell_len(t) > width]
    shown = "".join("".join(lines).split())
    for text in (title, axis, label, f"{line}: 6 GB", SCALED):
        assert "".join(text.split()) in shown, text
    if cell_len("76.4 GB") <= width - 9:
        assert not any(text.rstrip().endswith("76.4") for text in lines)
