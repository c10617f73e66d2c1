"""Tables (and, through render/charts.py, charts) for a terminal or a log, rendered with rich.
render/ is the only package that imports rich.

The render layer's one optimisation for terminals: without colour, a table whose cells fit
the width whole, and a chart, are written as text by ``plain_table`` and ``plain_chart``,
the very text rich writes for them (held to rich's own output over random tables and charts
and every command's views at 40 to 160 columns by tests/test_render_plain.py); whatever
they cannot answer (colour, a text column to wrap, a stacked table, a picture) goes to rich.

No figure is ever cropped: the label column and every number keep their full width; a table
that cannot fit the width is laid out stacked instead (a block per row: the label, then each
column's value on a line of its own). The caller decides width, colour and whether the stream
can take Unicode; nothing here reads the environment or writes to a stream.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from specsheet.render.cells import cell_len as _cell_len
from specsheet.render.text import to_ascii
from specsheet.views.table import TableView

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from specsheet.views.charts import ChartView

_WORD = re.compile(r"\s*\S+\s*")  # a word and the spaces around it, as rich/_wrap.py finds it
_BAR_CHARS = frozenset(" █▉▊▋▌▍▎▏░#+.")
def _is_bar(cell: str) -> bool:
    return bool(cell.strip()) and set(cell) <= _BAR_CHARS


def render_views(views: Sequence[TableView | ChartView], width: int, color: bool = False,
                 ascii_only: bool = False) -> str:
    """Each view as a rich table (or stacked, when the table cannot fit ``width``) or a chart,
    as text. Without colour, a table whose columns fit ``width`` whole is written by
    ``plain_table``, the text rich writes for it (``tests/test_render_plain.py``); rich is
    loaded only for what else there is."""
    file = io.StringIO()
    made: list[Console] = []

    def console() -> Console:
        if not made:
            made.append(make_console(file, width, color))
        return made[0]

    _print_views(console, width, views, ascii_only, plain=None if color else file.write)
    text = file.getvalue()
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
    _print_views(lambda: console, console.width, views, ascii_only, picture)


def _print_views(console: Callable[[], Console], width: int,
                 views: Sequence[TableView | ChartView], ascii_only: bool = False,
                 picture: bool = False, plain: Callable[[str], object] | None = None) -> None:
    """``print_views`` on the console ``console()`` gives; with ``plain``, a table that
    ``plain_table`` writes goes to ``plain`` instead (which must write where the console
    does)."""
    for index, view in enumerate(views):
        previous = views[index - 1] if index else None
        if isinstance(previous, TableView) and previous.footnote:
            if plain is None:
                console().print()  # a caption ends without the table's blank line
            else:
                plain("\n")
        if not isinstance(view, TableView):
            from specsheet.render.charts import print_chart

            text = plain_chart(view, width, ascii_only) if plain is not None else None
            if text is not None:
                assert plain is not None
                plain(text)
            else:
                print_chart(console(), view, ascii_only)
            continue
        if ascii_only:
            view = _ascii_view(view)
        narrow = view.without_optional()
        if min_width(view) <= width:
            shown: TableView | None = view
        elif min_width(narrow) <= width:
            shown = narrow
        else:
            shown = None
        if shown is None:
            _print_stacked(console(), view)
            continue
        text = plain_table(shown, width) if plain is not None else None
        if text is not None:
            assert plain is not None
            plain(text)
        else:
            _print_table(console(), shown, picture)


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
    cell_len = _cell_len
    widths = []
    for index, numeric in enumerate(view.numeric):
        cells = [view.headers[index], *(row.cells[index] for row in view.rows)]
        if numeric or index == 0:
            widths.append(max(cell_len(c) for c in cells))
        else:
            widths.append(max((cell_len(w) for c in cells for w in c.split()), default=0))
    return sum(w + 1 for w in widths) + (len(widths) - 1) + 2


def plain_table(view: TableView, width: int) -> str | None:
    """The text rich prints for ``view`` (``_print_table`` on a console of ``width`` without
    colour): the title, the table, the footnote. None when rich has to lay it out: a table
    wider than ``width`` at its cells' full widths (rich would wrap its text columns), a
    word of the title or footnote longer than ``width``, or a text holding a tab or another
    character that is not printable.

    Rich sizes each column to its widest cell (at least 1) when the table fits; a numeric
    cell is right-justified (rstripped, then padded on the left), any other padded on the
    right; the SIMPLE_HEAD box has a blank edge line above and below, a one-space edge and
    divider, a rule of "─" under the header and a blank line after a total that is not the
    last row; a title or footnote wraps as rich wraps words (``rich._wrap.divide_line``)."""
    cell_len = _cell_len
    texts = [view.title, view.footnote, *view.headers]
    for row in view.rows:
        texts += row.cells
    if not all(t.isprintable() for t in texts):
        return None
    numeric = view.numeric
    columns = [[_cell_text(h, n) for h, n in zip(view.headers, numeric, strict=True)]]
    columns += ([_cell_text(c, n) for c, n in zip(row.cells, numeric, strict=True)]
                for row in view.rows)
    widths = [max(1, max(map(cell_len, column))) for column in zip(*columns, strict=True)]
    if sum(widths) + len(widths) + 1 > width:
        return None
    title, footnote = _wrapped(view.title, width), _wrapped(view.footnote, width)
    if title is None or footnote is None:
        return None
    lines = [*title, ""]
    last = len(columns) - 1
    for index, cells in enumerate(columns):
        line = [" "]
        for cell, w, n in zip(cells, widths, numeric, strict=True):
            if n:
                cell = cell.rstrip()
                line += (" " * (w - cell_len(cell)), cell, " ")
            else:
                line += (cell, " " * (w - cell_len(cell)), " ")
        lines.append("".join(line))
        if index == 0:
            lines.append(" " + "─" * (sum(widths) + len(widths) - 1))
        elif index < last and view.rows[index - 1].style == "total":
            lines.append("")
    lines.append("")
    if view.footnote:
        lines += footnote
    return "\n".join(lines) + "\n"


def plain_chart(chart: ChartView, width: int, ascii_only: bool = False) -> str | None:
    """The text rich prints for ``chart`` (``charts.print_chart`` on a console of ``width``
    without colour): each line cropped at ``width`` (rich crops a line it does not wrap), the
    caption wrapped as rich wraps words, a blank line. None when a line wider than ``width``
    holds a character that is not one cell wide, or the caption cannot be wrapped here."""
    from specsheet.render.charts import chart_spans

    lines = []
    for spans in chart_spans(chart, width, ascii_only):
        line = "".join(piece for piece, _ in spans)
        if len(line) > width:
            if _cell_len(line) != len(line):
                return None
            line = line[:width]
        lines.append(line)
    if chart.caption:
        caption = _wrapped(chart.caption, width)
        if caption is None:
            return None
        lines += caption
    return "\n".join(lines) + "\n\n"


def _wrapped(text: str, width: int) -> list[str] | None:
    """``text``'s lines as rich wraps a Text at ``width`` (rich/_wrap.py's divide_line, no
    word folded), each line's trailing spaces kept for the caller to strip; None when a word
    is longer than ``width`` (rich folds it)."""
    cell_len = _cell_len
    lines = []
    for line in text.split("\n"):
        start = offset = 0
        for word in _WORD.finditer(line):
            length = cell_len(word.group().rstrip())
            if length > width:
                return None
            if width - offset >= length:
                offset += cell_len(word.group())
            elif offset and word.start():
                lines.append(line[start:word.start()])
                start, offset = word.start(), cell_len(word.group())
        lines.append(line[start:])
    return lines


def _cell_text(text: str, numeric: bool) -> str:
    """A cell with its one-space gap: before a number, after any other text."""
    return " " + text if numeric else text + " "


def _cell(text: str, numeric: bool) -> Text:
    from rich.text import Text

    return Text(_cell_text(text, numeric))


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
