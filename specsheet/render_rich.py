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
    """A console on stdout.

    Styles only on a terminal, or where FORCE_COLOR is set; never where NO_COLOR is set (it
    wins over FORCE_COLOR). Without a terminal and without COLUMNS, tables get LOG_WIDTH
    columns instead of rich's 80, so a CI log shows them whole.
    """
    from rich.console import Console

    width = None
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = LOG_WIDTH
    force_terminal = False if os.environ.get("NO_COLOR") else None
    return Console(width=width, highlight=False, soft_wrap=False, force_terminal=force_terminal)


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
