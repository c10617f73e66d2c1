"""Neutral tables of text, shared by the rich and Markdown renderers, and the cells they hold:
TableView, Row, share and stacked bars, layers, seconds and dollars in words."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Literal, TypeVar

from specsheet.compiled import NamedTuple
from specsheet.units import exact

K = TypeVar("K", bound=Hashable)
RowStyle = Literal["", "sub", "total"]


class Row(NamedTuple):
    cells: tuple[str, ...]
    style: RowStyle = ""  # sub: a detail of the row above; total: a closing sum


class TableView:
    """A titled table of text cells, filled row by row; numeric columns are right-justified.
    ``optional`` columns repeat what another column says (a readable form beside the exact
    integer, a bar beside a share): a narrow terminal may leave them out.

    A plain class: creating a dataclass costs start-up time on every run.
    """

    def __init__(self, title: str, headers: tuple[str, ...], numeric: tuple[bool, ...],
                 caption: str = "", optional: tuple[bool, ...] | None = None) -> None:
        self.title = title
        self.headers = headers
        self.numeric = numeric
        self.caption = caption
        self.optional = optional or tuple(False for _ in headers)
        self.rows: list[Row] = []
        # sentences of the caption that describe one column, by its header: a copy without
        # that column leaves them out (a footnote never describes a column that was dropped)
        self.column_notes: dict[str, str] = {}

    @property
    def footnote(self) -> str:
        """The caption and the notes of the columns shown."""
        notes = [note for header, note in self.column_notes.items() if header in self.headers]
        return " ".join([self.caption, *notes]).strip()

    def add(self, *cells: str, style: RowStyle = "") -> None:
        self.rows.append(Row(tuple(cells), style))

    def without_optional(self) -> TableView:
        """A copy without the optional columns."""
        keep = [i for i, optional in enumerate(self.optional) if not optional]
        copy = TableView(self.title, tuple(self.headers[i] for i in keep),
                         tuple(self.numeric[i] for i in keep), self.caption)
        copy.column_notes = self.column_notes
        for row in self.rows:
            copy.add(*(row.cells[i] for i in keep), style=row.style)
        return copy


_BLOCKS = " ▏▎▍▌▋▊▉█"


def cells(values: Mapping[K, int], width: int) -> dict[K, int]:
    """Cells of a ``width``-cell bar for each value: every non-zero value gets at least one, the
    rest go by the largest remainder of its exact share, so the cells always add up to
    ``width`` (or to the number of non-zero parts, when that is more)."""
    whole = sum(values.values())
    nonzero = [name for name, v in values.items() if v]
    out = dict.fromkeys(values, 0)
    if not whole:
        return out
    for name in nonzero:
        out[name] = 1
    spare = width - len(nonzero)
    if spare <= 0:
        return out
    # the cells past the first, shared in proportion to what each value asks beyond its cell
    asks = {name: max(Fraction(0), Fraction(values[name] * width, whole) - 1)
            for name in nonzero}
    asked = sum(asks.values())
    if not asked:
        return out
    shares = {name: asks[name] * spare / asked for name in nonzero}
    for name in nonzero:
        out[name] += int(shares[name])
    left = width - sum(out.values())
    for name in sorted(nonzero, key=lambda n: (-(shares[n] - int(shares[n])), nonzero.index(n))):
        if left <= 0:
            break
        out[name] += 1
        left -= 1
    return out


def share_bar(part: int, whole: int, width: int = 16) -> str:
    """A bar of ``width`` characters filled in proportion to part / whole (eighths)."""
    eighths = round(8 * width * part / whole) if whole else 0
    full, rest = divmod(eighths, 8)
    return ("█" * full + (_BLOCKS[rest] if rest else "")).ljust(width)


def stacked_bar(start: int, end: int, whole: int, width: int = 24) -> str:
    """The part from ``start`` to ``end`` of ``whole`` as a segment of a ``width``-character bar
    (the parts before it shaded light), so that the rows of a table stack into one bar, also
    where a renderer trims the spaces of a cell (Markdown)."""
    first = round(width * start / whole) if whole else 0
    last = round(width * end / whole) if whole else 0
    if end > start:  # a part too small for a character still shows one
        first = min(first, width - 1)
        last = max(last, first + 1)
    return ("░" * first + "█" * max(0, last - first)).ljust(width)


def describe_layers(indices: tuple[int, ...], layers: int) -> str:
    """Layer indices in words: "all 32 layers", "21 of 42 layers (0, 2, 4, ..., 40)",
    "22 of 26 layers (all but 5, 11, 17, 23)"."""
    if len(indices) == layers:
        return f"all {layers} layers"

    def listed(values: list[int]) -> str:
        if len(values) <= 4:
            return ", ".join(map(str, values))
        return f"{', '.join(map(str, values[:3]))}, ..., {values[-1]}"

    others = sorted(set(range(layers)) - set(indices)) if layers <= 100_000 else []
    if others and len(others) < len(indices):
        return f"{len(indices)} of {layers} layers (all but {listed(others)})"
    return f"{len(indices)} of {layers} layers ({listed(list(indices))})"


def layers_text(n: int) -> str:
    return f"{n} layer" if n == 1 else f"{n} layers"


def seconds_text(value: float) -> str:
    """Seconds with two decimals from 1 s as rounded, else three significant digits of ms or
    µs: 1.00 s (of 0.9996 s, not 1e+03 ms), 32.2 ms, 7.8 ms, 512 µs."""
    if value >= 0.9995:
        return f"{value:,.2f} s"
    if value >= 0.9995e-3:
        text = f"{value * 1e3:.3g}"  # 1e+03 only where value x 1e3 rounds up to 999.5
        return f"{value:,.2f} s" if "e+" in text else f"{text} ms"
    text = f"{value * 1e6:.3g}"
    return f"{value * 1e3:.3g} ms" if "e+" in text else f"{text} µs"


def usd_text(value: float | None, price: str) -> str:
    """Dollars, or what to give (``price``: the option that sets the price) without a price."""
    if value is None:
        return f"- (give {price})"
    if value <= 0:
        return "$0"
    rounded = float(f"{value:.3g}")
    if rounded >= 1:
        return f"${value:,.2f}"
    # three significant digits as rounded ($0.100 of 0.09996, not $0.1000; $1.00 of 0.9996),
    # never $0.0000 for a cost that is not nothing
    decimals = 2 - math.floor(math.log10(rounded))
    return f"${value:.{decimals}f}" if decimals <= 12 else f"${value:.2e}"


def fits_with(ways: Sequence[str]) -> str:
    """The ways that make a "no" a "yes", as a table's caption says them: "It fits with A, B,
    or C." ("" for none)."""
    if not ways:
        return ""
    return f"It fits with {', '.join(ways[:-1])}, or {ways[-1]}." if len(ways) > 1 \
        else f"It fits with {ways[0]}."


def blocks_text(count: int) -> str:
    return f"{exact(count)} block{'' if count == 1 else 's'}"

