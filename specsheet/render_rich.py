"""Rich tables for a terminal or a log. The only module that imports rich."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from specsheet.views import TableView

if TYPE_CHECKING:
    from rich.console import Console

LOG_WIDTH = 160  # without a terminal: wide enough for a compare of four models


def stdout_console() -> Console:
    """A console on stdout. Colour follows rich (a terminal, NO_COLOR, FORCE_COLOR); without
    a terminal and without COLUMNS, tables get LOG_WIDTH columns instead of rich's 80."""
    from rich.console import Console

    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = LOG_WIDTH
    return Console(width=width, highlight=False, soft_wrap=False)


def print_views(views: list[TableView], console: Console | None = None) -> None:
    """Print each view as a rich table."""
    from rich import box
    from rich.table import Table

    console = console or stdout_console()
    for view in views:
        table = Table(title=view.title, caption=view.caption or None, box=box.SIMPLE_HEAD,
                      title_justify="left", caption_justify="left", title_style="bold")
        for header, numeric in zip(view.headers, view.numeric, strict=True):
            table.add_column(header, justify="right" if numeric else "left",
                             no_wrap=numeric)
        for row in view.rows:
            style = {"sub": "dim", "total": "bold"}.get(row.style)
            table.add_row(*row.cells, style=style, end_section=row.style == "total")
        console.print(table)
