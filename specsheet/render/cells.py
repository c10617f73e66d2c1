"""The cells a text takes on a terminal, as rich counts them, without loading rich for the
characters specsheet writes itself (held to rich.cells by tests/test_render_plain.py)."""

from __future__ import annotations

# characters one cell wide beside ASCII's printable ones, as rich.cells counts them:
# specsheet's table, bar and chart characters
NARROW = frozenset(map(chr, range(32, 127))) | frozenset(
    "×²·↳…−─│└┤█▉▊▋▌▍▎▏░▒▓▁▂▃▄▅▆▇éèàöüñç≤≥≈±°µ—–’“”")


def cell_len(text: str) -> int:
    """The cells ``text`` takes, as rich counts them: its length when every character is
    one cell wide (without loading rich), else rich.cells.cell_len."""
    if text.isascii() and text.isprintable() or set(text) <= NARROW:
        return len(text)
    from rich.cells import cell_len as cells

    return cells(text)
