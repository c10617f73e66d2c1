"""The explorer's pictures as plain text, without Textual: the breakdown bar of a model's
parameters at any width (a cell for every part that has parameters, the shares in numbers below
it), two models compared part by part, and a model served on a GPU.

Every figure comes from the report or the serving plan the api made; here they are only laid out.
A part is told by its fill character as well as its colour, so the bar reads without colour.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple

from specsheet.api import count as api
from specsheet.units import exact, human_bytes, human_count, percent
from specsheet.views.table import cells

if TYPE_CHECKING:  # the serving view's plan: imported by the api when a GPU is picked
    from specsheet.api.serve import Serving


class Part(NamedTuple):
    name: str
    fill: str  # the bar's character for this part
    style: str  # its colour (a Rich style), never the only sign
    components: tuple[str, ...]  # the report's components it adds up


PARTS: tuple[Part, ...] = (
    Part("embeddings", "█", "bright_cyan",
         ("token_embedding", "position_embedding", "embedding_projections")),
    Part("attention", "▓", "bright_magenta", ("attention",)),
    Part("state-space", "▚", "bright_yellow", ("ssm",)),
    Part("MLP", "▒", "bright_green", ("mlp",)),
    Part("norms", "┃", "bright_red", ("norms",)),
    Part("output head", "░", "bright_blue", ("output_head",)),
)
MIN_BAR = 10  # the narrowest bar drawn


def parts(report: api.Report) -> dict[str, int]:
    """The report's parameters by the bar's parts, in the bar's order."""
    components = report.params.components()
    return {part.name: sum(components[c] for c in part.components) for part in PARTS}


def share(value: int, whole: int) -> str:
    """A share as count's table prints it (units.percent): one decimal, <0.1% for a small part."""
    return percent(value, whole) if whole else "0.0%"


def bar_line(values: dict[str, int], width: int) -> list[tuple[str, str]]:
    """The bar as (text, style) runs."""
    n = cells(values, width)
    by_name = {part.name: part for part in PARTS}
    return [(by_name[name].fill * n[name], by_name[name].style) for name in values if n[name]]


def breakdown(report: api.Report, width: int) -> list[list[tuple[str, str]]]:
    """The breakdown bar at ``width`` columns: a title, the bar, then a line for each part with
    parameters (its character, name, share and, if it fits, its count)."""
    values = parts(report)
    total = sum(values.values())
    bar = max(MIN_BAR, width)
    lines: list[list[tuple[str, str]]] = [
        [(report.model.name, "bold")],
        [(f"total {exact(total)}" + (" parameters" if width >= 28 else ""), "bold")],
        bar_line(values, bar),
    ]
    by_name = {part.name: part for part in PARTS}
    for name, value in values.items():
        if not value:
            continue
        part = by_name[name]
        label = f" {name:<11} {share(value, total):>6}"
        count = f"  {exact(value):>15}"
        if 2 + len(label) + len(count) > width:
            count = f"  {human_count(value)}" if 2 + len(label) + 8 <= width else ""
        lines.append([(part.fill, part.style), (label + count, "")])
    if not report.params.output_head:
        lines.append([("  output head: tied, 0", "dim")])
    if width >= 36:
        lines.append([("  a part with parameters gets a cell", "dim")])
    return lines


def ratio(b: int, a: int) -> str:
    """b / a as 'x1,234' or 'x0.5'; '-' where a is zero."""
    if not a:
        return "-" if b else "="
    r = Fraction(b, a)
    if r >= 100:
        return f"x{round(r):,}"
    return f"x{float(r):.3g}"


def comparison(left: api.Report, right: api.Report,
               width: int) -> list[list[tuple[str, str]]]:
    """Two models' bars, one above the other at the same width, then each part's share in both
    and the ratio of their parameters (right / left). "embeddings+head" adds an untied output
    head (a second V x d table) to the embeddings: the lessons' embedding share."""
    lines: list[list[tuple[str, str]]] = []
    bar = max(MIN_BAR, width)
    a, b = parts(left), parts(right)
    ta, tb = sum(a.values()), sum(b.values())
    for key, report, values in (("A", left, a), ("B", right, b)):
        lines.append([(f"{key} {report.model.name}", "bold")])
        lines.append([(f"  {exact(sum(values.values()))}", "bold")])
        lines.append(bar_line(values, bar))
    if width >= 38:
        lines.append([(f"  {'part':<15}{'A':>7} {'B':>7} {'B/A':>6}", "bold")])
    rows = [(name, a[name], b[name]) for name in a if a[name] or b[name]]
    rows.append(("embeddings+head", a["embeddings"] + a["output head"],
                 b["embeddings"] + b["output head"]))
    rows.append(("total", ta, tb))
    by_name = {part.name: part for part in PARTS}
    for name, va, vb in rows:
        mark = by_name[name].fill if name in by_name else " "
        style = by_name[name].style if name in by_name else ""
        if width >= 38:
            text = f" {name:<15}{share(va, ta):>7} {share(vb, tb):>7} {ratio(vb, va):>6}"
            lines.append([(mark, style), (text, "")])
        else:  # a narrow pane: the figures under the name
            lines.append([(mark, style), (f" {name}", "")])
            lines.append([(f"  A {share(va, ta)}  B {share(vb, tb)}  {ratio(vb, va)}", "")])
    lines.append([("  shares of each total;", "dim")])
    lines.append([("  B/A: parameters", "dim")])
    return lines


def serving(served: Serving, gpu: str, gpus: int, tokens: int) -> list[list[tuple[str, str]]]:
    """Weights and the KV pool on one GPU of the stage that admits the fewest requests, and the
    requests of ``tokens`` tokens the pool holds at once (vLLM's layout, specsheet serve)."""
    plan = served.plan
    s = plan.binding
    used = s.weights_bytes + s.kv_pool_bytes
    lines: list[list[tuple[str, str]]] = [
        [(f"served on {gpus} x {gpu}", "bold")],
        [(f"  requests of T = {exact(tokens)}", "")],
        [(f"  weights/GPU {human_bytes(s.weights_bytes):>9}", "")],
        [(f"  KV pool/GPU {human_bytes(s.kv_pool_bytes):>9}", "")],
        [(f"  GPU memory  {human_bytes(s.capacity_bytes):>9}", "")],
        [(f"  in use      {share(used, s.capacity_bytes):>9}", "")],
        [(f"  KV/request  {human_bytes(s.kv_bytes_per_request):>9}", "")],
    ]
    if not s.weights_fit:
        lines.append([("  the weights do not fit:", "bold red")])
        lines.append([("  add GPUs or quantize", "bold red")])
    else:
        lines.append([(f"  at once     {exact(plan.max_concurrency):>9}", "bold")])
    return lines
