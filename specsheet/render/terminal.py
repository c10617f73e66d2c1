"""Tables (and, through render/charts.py, charts) for a terminal or a log, rendered with rich.
render/ is the only package that imports rich.

No figure is ever cropped: the label column and every number keep their full width; a table
that cannot fit the width is laid out stacked instead (a block per row: the label, then each
column's value on a line of its own). The caller decides width, colour and whether the stream
can take Unicode; nothing here reads the environment or writes to a stream.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from specsheet.render.text import to_ascii
from specsheet.views.table import TableView

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from specsheet.views.charts import ChartView

_BAR_CHARS = frozenset(" █▉▊▋▌▍▎▏░#+.")
def _is_bar(cell: str) -> bool:
    return bool(cell.strip()) and set(cell) <= _BAR_CHARS


def render_views(views: Sequence[TableView | ChartView], width: int, color: bool = False,
                 ascii_only: bool = False) -> str:
    """Each view as a rich table (or stacked, when the table cannot fit ``width``) or a chart,
    as text."""

    console = make_console(io.StringIO(), width, color)
    print_views(console, views, ascii_only)
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    text = "".join(line.rstrip() + "\n" for line in text.splitlines())
    return text.replace("─", "-") if ascii_only else text


def make_console(file: IO[str], width: int, color: bool, record: bool = False) -> Console:
    """A console that writes to ``file`` at ``width`` and reads nothing from the environment."""
    from rich.console import Console

    return Console(file=file, width=width, force_terminal=color,
                   color_system="truecolor" if record else "standard" if color else None,
                   no_color=not color, highlight=False, soft_wrap=False, emoji=False,
                   legacy_windows=False, record=record, _environ={})


def print_views(console: Console, views: Sequence[TableView | ChartView],
                ascii_only: bool = False, picture: bool = False) -> None:
    """Each view on ``console``, at its width: tables as tables (stacked when one cannot fit),
    charts as charts. Titles and footnotes wrap at the console's width, or for a ``picture``
    (which keeps no empty margin) at the table's."""
    width = console.width
    for index, view in enumerate(views):
        previous = views[index - 1] if index else None
        if isinstance(previous, TableView) and previous.footnote:
            console.print()  # a caption ends without the table's blank line
        if not isinstance(view, TableView):
            from specsheet.render.charts import print_chart

            print_chart(console, view, ascii_only)
            continue
        if ascii_only:
            view = _ascii_view(view)
        narrow = view.without_optional()
        if min_width(view) <= width:
            _print_table(console, view, picture)
        elif min_width(narrow) <= width:
            _print_table(console, narrow, picture)
        else:
            _print_stacked(console, view)


def _ascii_view(view: TableView) -> TableView:
    """A copy of ``view`` with every text in ASCII renderings, before layout (so that widths
    are measured on what is printed)."""
    copy = TableView(to_ascii(view.title), tuple(map(to_ascii, view.headers)), view.numeric,
                     to_ascii(view.caption), view.optional)
    copy.column_notes = {to_ascii(h): to_ascii(n) for h, n in view.column_notes.items()}
    for row in view.rows:
        copy.add(*map(to_ascii, row.cells), style=row.style)
    return copy


def min_width(view: TableView) -> int:
    """The narrowest the table of ``view`` prints without cutting a cell: the label column and
    the numeric columns whole, text columns down to their longest word; each cell carries a
    one-space gap, and the table a one-space edge on each side."""
    from rich.cells import cell_len

    widths = []
    for index, numeric in enumerate(view.numeric):
        cells = [view.headers[index], *(row.cells[index] for row in view.rows)]
        if numeric or index == 0:
            widths.append(max(cell_len(c) for c in cells))
        else:
            widths.append(max((cell_len(w) for c in cells for w in c.split()), default=0))
    return sum(w + 1 for w in widths) + (len(widths) - 1) + 2


def _cell(text: str, numeric: bool) -> Text:
    from rich.text import Text

    return Text(" " + text if numeric else text + " ")


def _print_table(console: Console, view: TableView, picture: bool = False) -> None:
    """The table, its title above and its footnote below, each wrapped at the terminal's width
    (not the table's, which may be half of it); in a ``picture``, at the table's."""
    from rich.text import Text

    table = _table(view)
    if picture:
        table.title, table.caption = Text(view.title, style="bold"), Text(view.footnote) \
            if view.footnote else None
        table.title_justify = table.caption_justify = "left"
        console.print(table)
        return
    console.print(Text(view.title, style="bold"), overflow="fold")
    console.print(table)
    if view.footnote:
        console.print(Text(view.footnote), overflow="fold")


def _table(view: TableView) -> Table:
    from rich import box
    from rich.table import Table

    # Cells are Text, never markup: a "[" in a model name prints as itself. Cells carry their
    # own one-space gap (rich's cell padding costs a renderable per cell). The label column
    # and numeric columns never wrap; text columns (formulas, notes) wrap at word boundaries.
    table = Table(box=box.SIMPLE_HEAD, padding=0, pad_edge=False, collapse_padding=True)
    for index, (header, numeric) in enumerate(zip(view.headers, view.numeric, strict=True)):
        table.add_column(_cell(header, numeric), justify="right" if numeric else "left",
                         no_wrap=numeric or index == 0, overflow="fold")
    for row in view.rows:
        style = {"sub": "dim", "total": "bold"}.get(row.style)
        table.add_row(*(_cell(c, n) for c, n in zip(row.cells, view.numeric, strict=True)),
                      style=style, end_section=row.style == "total")
    return table


def _print_stacked(console: Console, view: TableView) -> None:
    """A block per row: the row's label, then ``header: value`` for each other cell (bars,
    which repeat the share beside them, are left out)."""
    from rich.text import Text

    lines = [Text(view.title, style="bold"), Text("")]
    for row in view.rows:
        label = row.cells[0]
        style = {"sub": "dim", "total": "bold"}.get(row.style, "")
        lines.append(Text(label.rstrip() or "-", style=style))
        indent = " " * (len(label) - len(label.lstrip()) + 4)
        for header, cell in zip(view.headers[1:], row.cells[1:], strict=True):
            if not cell.strip() or _is_bar(cell):
                continue
            name = f"{header}: " if header.strip() else ""
            lines.append(Text(f"{indent}{name}{cell.strip()}", style=style))
    if view.footnote:
        lines += [Text(""), Text(view.footnote)]
    for line in lines:
        console.print(line, overflow="fold", crop=False)
    console.print()
