"""The render layer's plain table writer (render.terminal.plain_table) writes what rich writes
for the same table without colour: random tables (wide and narrow characters, empty cells,
sub and total rows, titles and footnotes that wrap) at 40, 80, 120 and 160 columns, and the
tables of real commands, compared with rich's own rendering of the same views."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specsheet.render.terminal import (
    _print_table,
    make_console,
    plain_table,
    print_views,
    render_views,
)
from specsheet.views.table import TableView


def rich_text(view: TableView, width: int) -> str:
    """The reference: rich lays the table out (as render_views did before plain_table)."""
    console = make_console(io.StringIO(), width, color=False)
    _print_table(console, view)
    return _stripped(console.file.getvalue())  # type: ignore[attr-defined]


def _stripped(text: str) -> str:
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


WORDS = ["a", "KV", "cache", "16.1 GB", "1,024", "日本語", "█▌", "", " ", "x" * 30, "é",
         "(bf16)", "--json", "Weights + KV", "0.1%", "tokens T", "ö̈"]
word = st.sampled_from(WORDS)
text = st.lists(word, max_size=30).map(" ".join)


@st.composite
def views(draw: st.DrawFn) -> TableView:
    columns = draw(st.integers(1, 8))
    numeric = tuple(draw(st.lists(st.booleans(), min_size=columns, max_size=columns)))
    headers = tuple(draw(st.lists(text, min_size=columns, max_size=columns)))
    view = TableView(draw(text), headers, numeric, caption=draw(text))
    for _ in range(draw(st.integers(0, 12))):
        cells = draw(st.lists(st.lists(word, max_size=4).map(" ".join), min_size=columns,
                              max_size=columns))
        view.add(*cells, style=draw(st.sampled_from(["", "", "sub", "total"])))
    return view


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(views(), st.sampled_from([40, 80, 120, 160]))
def test_random_tables(view: TableView, width: int) -> None:
    plain = plain_table(view, width)
    if plain is not None:
        assert _stripped(plain) == rich_text(view, width)


def test_random_tables_are_mostly_plain() -> None:
    """The comparison above is not vacuous: plain_table answers for many of those tables."""
    answered = []

    @settings(max_examples=200, deadline=None, database=None)
    @given(views())
    def count(view: TableView) -> None:
        answered.append(plain_table(view, 160) is not None)

    count()
    assert sum(answered) > len(answered) // 4


def test_refuses_what_rich_must_lay_out() -> None:
    view = TableView("title", ("name", "notes"), (False, False))
    view.add("a", "word " * 40)
    assert plain_table(view, 80) is None  # a text column rich would wrap
    assert plain_table(view, 250) is not None
    tabbed = TableView("ti\ttle", ("n",), (True,))
    assert plain_table(tabbed, 80) is None  # rich expands tabs
    long_word = TableView("x" * 90, ("n",), (True,))
    assert plain_table(long_word, 80) is None  # rich folds a word longer than the line


COMMANDS = [
    ["sweep", "llama3.1-8b", "--tokens", "128:128000:+128"],
    ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm"],
    ["presets"],
    ["hardware"],
    ["count", "deepseek-v3"],
    ["count", "gpt2-small", "--quant", "gguf-q4_k_m"],
    ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8"],
    ["compare", "llama3-8b", "llama3-70b", "mixtral-8x7b"],
    ["check", "llama3-8b", "--max-weights", "17GB"],
    ["train", "llama3-8b"],
    ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192"],
]


@pytest.mark.parametrize("width", [40, 80, 120, 160])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_commands(argv: list[str], width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every view a command renders, at each width with NO_COLOR: render_views (the plain
    writer where it answers) against print_views (rich for every table)."""
    import specsheet.render.terminal as terminal

    drawn: list[object] = []
    real = terminal.render_views

    def spy(views: list[object], *args: object, **kwargs: object) -> str:
        drawn.append(views)
        return real(views, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(terminal, "render_views", spy)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(width))
    from typer.testing import CliRunner

    from specsheet.cli.app import app

    result = CliRunner().invoke(app, argv)
    assert result.exit_code in (0, 1), result.output
    assert drawn, "the command drew no views"
    for views in drawn:
        console = make_console(io.StringIO(), width, color=False)
        print_views(console, views)  # type: ignore[arg-type]
        assert render_views(views, width) == _stripped(  # type: ignore[arg-type]
            console.file.getvalue())  # type: ignore[attr-defined]


def test_narrow_characters_are_one_cell_as_rich_counts_them() -> None:
    from rich.cells import cell_len

    from specsheet.render.cells import NARROW
    from specsheet.render.cells import cell_len as _cell_len

    assert all(cell_len(c) == 1 for c in NARROW)
    for text in ["", "abc", "日本語", "a\tb", "é×█", "ö̈", "\x1b[1m"]:
        assert _cell_len(text) == cell_len(text), text


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(0, 3), st.sampled_from([40, 80, 120, 160]),
       st.booleans(), text)
def test_random_charts(points: int, line: int, width: int, ascii_only: bool,
                       caption: str) -> None:
    """plain_chart against rich's print_chart: stacked columns, a line across, a caption."""
    from specsheet.render.charts import print_chart
    from specsheet.render.terminal import plain_chart
    from specsheet.views.charts import ChartView, Segment

    values = [(i * 7919) % 1000 * 10**9 for i in range(points)]
    segments = (Segment("weights (bf16)", tuple(values), "weights"),
                Segment("KV cache", tuple(v // 3 for v in values), "kv"))
    chart = ChartView(title="model: weights against tokens 日本" * line, axis="Tokens T",
                      ticks=tuple(f"{i * 128:,}" for i in range(points)), segments=segments,
                      format=lambda v: f"{v / 1e9:.1f} GB",
                      line=("GPU memory", max(values) // 2) if line else None,
                      caption=caption)
    plain = plain_chart(chart, width, ascii_only)
    console = make_console(io.StringIO(), width, color=False)
    print_chart(console, chart, ascii_only)
    if plain is not None:
        assert _stripped(plain) == _stripped(console.file.getvalue())  # type: ignore[attr-defined]
