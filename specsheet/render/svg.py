"""A terminal's recorded lines as an SVG picture that every renderer draws alike.

rich's own export lays text out as a browser does (a web font from a CDN, runs of spaces inside
text, ``textLength``), which librsvg draws differently. Here every run of characters is a
``<text>`` at an explicit cell position (a space is never drawn: the next run starts where it
should), full and eighth blocks are rectangles, the font is a stack of monospace fonts installed
on the system (no web font, no external reference of any kind), and the colours are written
out on each element (no stylesheet).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

if TYPE_CHECKING:
    from rich.console import Console
    from rich.style import Style

FONTS = "'DejaVu Sans Mono', 'Liberation Mono', 'Noto Sans Mono', Menlo, Consolas, monospace"
FONT_SIZE = 14
CELL_WIDTH = 8.5  # px: DejaVu Sans Mono's advance is 0.602 em (8.43 px); a little room
LINE_HEIGHT = 17
MARGIN = 10
BACKGROUND = "#0c0c0c"
FOREGROUND = "#d9d9d9"
# blocks drawn as rectangles: (left, bottom) eighths of the cell they fill
_LOWER = " ▁▂▃▄▅▆▇█"
_LEFT = " ▏▎▍▌▋▊▉█"


def _block(char: str) -> tuple[float, float] | None:
    """The share of a cell's width and height that ``char`` fills, for a block character."""
    if char == "█":
        return 1.0, 1.0
    if char in _LOWER[1:8]:
        return 1.0, _LOWER.index(char) / 8
    if char in _LEFT[1:8]:
        return _LEFT.index(char) / 8, 1.0
    return None


def _colours(style: Style, theme: object) -> tuple[str, str | None, bool]:
    """Foreground, background (None: the picture's) and bold of ``style``."""
    from rich.terminal_theme import TerminalTheme

    assert isinstance(theme, TerminalTheme)
    fg = style.color.get_truecolor(theme).hex if style.color and not style.color.is_default \
        else FOREGROUND
    bg = style.bgcolor.get_truecolor(theme, foreground=False).hex \
        if style.bgcolor and not style.bgcolor.is_default else None
    if style.reverse:
        fg, bg = bg or BACKGROUND, fg
    if style.dim:
        fg = _dim(fg)
    return fg, bg, bool(style.bold)


def _dim(colour: str) -> str:
    """A colour halfway to the background."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    back = [int(BACKGROUND[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{(a + b) // 2:02x}" for a, b in zip(rgb, back, strict=True))


def _x(cell: int) -> str:
    return f"{MARGIN + cell * CELL_WIDTH:g}"


def _rectangles(blocks: list[tuple[int, int, float, float, str]]) -> list[str]:
    """Block characters as rectangles, a run of full-width blocks of one height and colour on
    a line as one (no seam between its cells)."""
    out: list[str] = []
    i = 0
    while i < len(blocks):
        top, cell, w, h, fg = blocks[i]
        j = i
        while (w == 1 and j + 1 < len(blocks) and blocks[j + 1][0] == top
               and blocks[j + 1][1] == blocks[j][1] + 1 and blocks[j + 1][3:] == (h, fg)):
            j += 1
            w = blocks[j][2]  # the last of the run may be a partial block
        out.append(f'<rect x="{_x(cell)}" y="{top + LINE_HEIGHT * (1 - h):g}" '
                   f'width="{CELL_WIDTH * (blocks[j][1] - cell + w):g}" '
                   f'height="{LINE_HEIGHT * h:g}" fill="{fg}" shape-rendering="crispEdges"/>')
        i = j + 1
    return out


def export_svg(console: Console, title: str, width: int) -> str:
    """The lines recorded on ``console`` as an SVG ``width`` cells wide (and clears them)."""
    from rich.cells import cell_len
    from rich.segment import Segment
    from rich.style import Style
    from rich.terminal_theme import SVG_EXPORT_THEME

    with console._record_buffer_lock:
        segments = list(Segment.filter_control(console._record_buffer))
        console._record_buffer.clear()
    lines = list(Segment.split_and_crop_lines(segments, length=width))
    body: list[str] = []
    blocks: list[tuple[int, int, float, float, str]] = []  # top, cell, width, height, fill
    for row, line in enumerate(lines):
        top = MARGIN + row * LINE_HEIGHT
        baseline = top + LINE_HEIGHT - 4
        cell = 0
        for text, style, _control in line:
            fg, bg, bold = _colours(style or Style(), SVG_EXPORT_THEME)
            length = cell_len(text)
            if bg is not None:
                body.append(f'<rect x="{_x(cell)}" y="{top}" width="{length * CELL_WIDTH:g}" '
                            f'height="{LINE_HEIGHT}" fill="{bg}"/>')
            weight = ' font-weight="bold"' if bold else ""
            run, start = "", cell
            for char in text + " ":  # a space, a block or the end ends a run of text
                block = _block(char)
                if char in " \n" or block is not None:
                    if run:
                        body.append(f'<text x="{_x(start)}" y="{baseline}" fill="{fg}"'
                                    f'{weight}>{escape(run)}</text>')
                    run = ""
                    if block is not None:
                        blocks.append((top, cell, *block, fg))
                else:
                    if not run:
                        start = cell
                    run += char
                cell += cell_len(char)
            cell -= 1  # the space that ended the last run
    body.extend(_rectangles(blocks))
    picture_width = math.ceil(2 * MARGIN + width * CELL_WIDTH)  # whole pixels
    height = 2 * MARGIN + len(lines) * LINE_HEIGHT
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{picture_width:g}" '
            f'height="{height}" viewBox="0 0 {picture_width:g} {height}" '
            f'font-family="{FONTS}" font-size="{FONT_SIZE}">\n'
            f"<title>{escape(title)}</title>\n"
            f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>\n'
            + "\n".join(body) + "\n</svg>\n")
