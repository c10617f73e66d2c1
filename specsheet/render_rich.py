"""Rich tables for a terminal or a log. The only module that imports rich."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from specsheet.views import TableView

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

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
    return Console(width=width, highlight=False, soft_wrap=False, emoji=False,
                   force_terminal=force_terminal)


def _cell(text: str, numeric: bool) -> Text:
    from rich.text import Text

    return Text(" " + text if numeric else text + " ")


def print_views(views: list[TableView], console: Console | None = None) -> None:
    """Print each view as a rich table."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console = console or stdout_console()
    for view in views:
        # Cells are Text, never markup: a "[" in a model name prints as itself. Cells carry
        # their own one-space gap (rich's cell padding costs a renderable per cell).
        table = Table(title=Text(view.title, style="bold"), box=box.SIMPLE_HEAD,
                      caption=Text(view.caption) if view.caption else None,
                      title_justify="left", caption_justify="left", padding=0,
                      pad_edge=False, collapse_padding=True)
        for header, numeric in zip(view.headers, view.numeric, strict=True):
            table.add_column(_cell(header, numeric), justify="right" if numeric else "left",
                             no_wrap=numeric)
        for row in view.rows:
            style = {"sub": "dim", "total": "bold"}.get(row.style)
            table.add_row(*(_cell(c, n) for c, n in zip(row.cells, view.numeric, strict=True)),
                          style=style, end_section=row.style == "total")
        console.print(table)
