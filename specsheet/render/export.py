"""What the terminal shows, as an SVG picture or an HTML page (rich's console export).

The views are drawn in colour on a recording console at ``width`` cells, then exported at the
width of the widest line drawn, so that a picture has no empty margin on the right.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from specsheet.views.charts import ChartView
    from specsheet.views.table import TableView

ExportKind = Literal["svg", "html"]


def export(views: Sequence[TableView | ChartView], kind: ExportKind, width: int,
           title: str = "specsheet") -> str:
    """``views`` drawn as the terminal draws them, as the text of an SVG or HTML file."""

    from rich.cells import cell_len

    from specsheet.render.terminal import make_console, print_views

    console = make_console(io.StringIO(), width, color=True, record=True)
    print_views(console, views, picture=True)
    drawn = console.export_text(clear=False, styles=False)
    console.width = max([cell_len(line.rstrip()) for line in drawn.splitlines()] + [1])
    if kind == "svg":  # every run of text at its cell, system fonts, nothing external
        from specsheet.render.svg import export_svg

        return export_svg(console, title, console.width)
    return console.export_html(inline_styles=True, clear=True)
