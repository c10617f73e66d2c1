"""Charts drawn with rich's own primitives (styled Text, a character per cell): columns of
stacked segments, eighth blocks at the top of each column, and a line across at a value.

Nothing here reads the environment: the console decides colour; ``ascii_only`` draws with
ASCII characters. Each segment has a character of its own as well as a colour, so a chart
reads the same without colour (NO_COLOR, a log, an SVG printed in grey).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from specsheet.render.cells import cell_len

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from specsheet.views.charts import ChartView

HEIGHT = 16  # rows of the plot
_EIGHTHS = " ▁▂▃▄▅▆▇█"
# per segment: the full cell, whether the top cell shows eighths, the style; a segment is
# drawn by its fill (weights, KV, a hybrid's state, the reserved estimates), else by its place
_SEGMENTS = (("█", True, "cyan"), ("▒", False, "magenta"), ("▓", False, "yellow"))
_ASCII_SEGMENTS = (("#", False, "cyan"), ("=", False, "magenta"), ("%", False, "yellow"))
_FILLS = {"weights": ("█", True, "cyan"), "kv": ("▒", False, "magenta"),
          "state": ("░", False, "green"), "reserved": ("▓", False, "yellow")}
_ASCII_FILLS = {"weights": ("#", False, "cyan"), "kv": ("=", False, "magenta"),
                "state": ("~", False, "green"), "reserved": ("%", False, "yellow")}
_LINE_STYLE = "bold red"


def print_chart(console: Console, chart: ChartView, ascii_only: bool = False) -> None:
    """``chart`` on ``console``: title, plot, tick labels, legend, caption, a blank line."""
    from rich.text import Text

    for line in chart_lines(chart, console.width, ascii_only):
        console.print(line, overflow="crop", no_wrap=True, crop=False)
    if chart.caption:
        console.print(Text(chart.caption), overflow="fold")
    console.print()


def _columns(count: int, room: int) -> tuple[int, int, list[list[int]]]:
    """Column width, gap, and the points each column stands for: a column per point when
    they fit (up to 7 cells wide, a cell of gap), else a cell per column, each the points of
    an equal slice of the axis."""
    if count <= room // 2:
        width = max(1, min(7, room // count - 1))
        return width, 1, [[i] for i in range(count)]
    if count <= room:
        return 1, 0, [[i] for i in range(count)]
    return 1, 0, [list(range(j * count // room, (j + 1) * count // room)) for j in range(room)]


Spans = list[tuple[str, str]]  # a line: (text, style) pieces, the first's style the line's


def chart_lines(chart: ChartView, width: int, ascii_only: bool = False) -> list[Text]:
    """The lines of ``chart`` at ``width`` cells."""
    from rich.text import Text

    lines = []
    for spans in chart_spans(chart, width, ascii_only):
        text = Text(spans[0][0], style=spans[0][1])
        for piece, style in spans[1:]:
            text.append(piece, style=style)
        lines.append(text)
    return lines


def chart_spans(chart: ChartView, width: int, ascii_only: bool = False) -> list[Spans]:
    """The lines of ``chart`` at ``width`` cells, as styled pieces of text."""
    places, fills = (_ASCII_SEGMENTS, _ASCII_FILLS) if ascii_only else (_SEGMENTS, _FILLS)
    segments = tuple(fills.get(s.fill) or places[k % len(places)]
                     for k, s in enumerate(chart.segments))
    line_char, axis_char, corner, tick = ("-", "|", "+", "|") if ascii_only else \
        ("─", "│", "└", "┤")
    totals = chart.totals
    top = max([*totals, chart.line[1] if chart.line else 0, 1])
    labels = {HEIGHT - 1: chart.format(top), 0: chart.format(0)}
    line_row = None
    if chart.line is not None:
        line_row = min(HEIGHT - 1, chart.line[1] * HEIGHT // top)
        labels[line_row] = chart.format(chart.line[1])
    label_width = max(len(text) for text in labels.values())
    room = max(1, width - label_width - 2)
    cell, gap, slices = _columns(len(totals), room)
    # per column: the point it shows (the largest total of its slice) and its stack, a segment
    # index per cell from the bottom: whole cells, at least one for a segment that is not zero
    shown = [max(s, key=lambda i: totals[i]) for s in slices]
    stacks = [_stack([segment.values[i] for segment in chart.segments], top) for i in shown]
    lines: list[Spans] = _wrapped(chart.title, 0, width, "bold")
    for row in range(HEIGHT - 1, -1, -1):
        text: Spans = [(labels.get(row, "").rjust(label_width) + " ", "")]
        text.append((tick if row in labels else axis_char, "dim"))
        for stack in stacks:
            char, style = (segments[stack[row]][0], segments[stack[row]][2]) \
                if row < len(stack) else (" ", "")
            if row == line_row and char == " ":
                char, style = line_char, _LINE_STYLE
            text.append((char * cell, style))
            text.append(((line_char if row == line_row else " ") * gap,
                         _LINE_STYLE if row == line_row else ""))
        lines.append(text)
    span = len(stacks) * (cell + gap)
    lines.append([(" " * label_width + " " + corner + line_char * span, "dim")])
    # a column of several points is named by the first of them, the last column by its last
    named = [s[0] for s in slices[:-1]] + [slices[-1][-1]]
    lines.append([(" " * (label_width + 2) + _ticks(chart.ticks, named, cell + gap, span), "")])
    indent = label_width + 2
    lines += _wrapped(chart.axis, indent, width, "dim")
    keys = [(segments[k][0] * 2, segments[k][2], segment.label)
            for k, segment in enumerate(chart.segments)]
    if chart.line is not None:
        keys.append((line_char * 2, _LINE_STYLE,
                     f"{chart.line[0]}: {chart.format(chart.line[1])}"))
    legend: Spans = [(" " * indent, "")]
    for sample, style, label in keys:  # on one line when it fits, else a line for each
        length = sum(cell_len(piece) for piece, _ in legend)
        if length + len(sample) + cell_len(label) + 1 > width and \
                "".join(piece for piece, _ in legend).strip():
            lines.append(_rstripped(legend))
            legend = [(" " * indent, "")]
        if indent + len(sample) + 1 + cell_len(label) > width:  # its label wrapped
            first, *rest = _wrapped(label, indent + len(sample) + 1, width, "")
            label_start = first[0][0].lstrip()
            lines.append([(" " * indent, ""), (sample, style), (f" {label_start}", "")])
            lines += rest
            continue
        legend.append((sample, style))
        legend.append((f" {label}   ", ""))
    if "".join(piece for piece, _ in legend).strip():
        lines.append(_rstripped(legend))
    lines += _wrapped(SCALED, indent, width, "dim")
    return lines


def _wrapped(text: str, indent: int, width: int, style: str) -> list[Spans]:
    """``text`` in lines of ``width`` cells at most, each after ``indent`` spaces, broken
    between words, a figure kept with its unit (76.4 GB), a word wider than the room broken
    where the room ends: a chart's words are never cropped at the terminal's edge."""
    room = max(1, width - indent)
    lines: list[str] = []
    line = ""
    for word in re.sub(r"(?<=\d) (?=[A-Za-zµ])", "\x00", text).split():
        word = word.replace("\x00", " ")
        joined = f"{line} {word}" if line else word
        if cell_len(joined) <= room:
            line = joined
            continue
        if line:
            lines.append(line)
        while cell_len(word) > room:  # a word wider than the room: as much as fits, and on
            cut = 1
            while cut < len(word) and cell_len(word[:cut + 1]) <= room:
                cut += 1
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    lines.append(line)
    return [[(" " * indent + line, style)] for line in lines]


def _rstripped(spans: Spans) -> Spans:
    """``spans`` without the whitespace they end with (as rich's Text.rstrip), the pieces
    left empty dropped (the first kept)."""
    spans = list(spans)
    while spans:
        piece, style = spans[-1]
        stripped = piece.rstrip()
        if stripped or len(spans) == 1:
            spans[-1] = (stripped, style)
            break
        spans.pop()
    return spans


SCALED = "segments scaled to whole cells: a part that is not zero gets at least one"


def _stack(values: list[int], top: int) -> list[int]:
    """A column's cells from the bottom, each the index of its segment: each segment its own
    share of HEIGHT cells for ``top`` (rounded, so a part that is the same at every point is
    drawn the same), at least one for a segment that is not zero; a column past HEIGHT loses
    cells from its largest segment."""
    n = [max(1, (2 * v * HEIGHT + top) // (2 * top)) if v else 0 for v in values]
    while sum(n) > HEIGHT and max(n) > 1:
        n[n.index(max(n))] -= 1
    return [k for k in range(len(values)) for _ in range(n[k])]


def _ticks(ticks: tuple[str, ...], named: list[int], pitch: int, span: int) -> str:
    """Tick labels under their columns, within ``span`` cells: the first and the last always
    (the last ends at the plot's edge when it cannot start under its column), and between them
    each label that leaves two spaces on either side, from the left."""
    out = [" "] * span
    columns = len(named)
    last = ticks[named[-1]]
    last_start = max(0, min((columns - 1) * pitch, span - len(last)))
    free = 0
    for j in range(columns - 1):
        label = ticks[named[j]]
        start = j * pitch
        if start < free or (j and start + len(label) + 2 > last_start):
            continue
        out[start:start + len(label)] = label
        free = start + len(label) + 2
    if last_start >= free or columns == 1:
        out[last_start:last_start + len(last)] = last
    return "".join(out)[:span].rstrip()
