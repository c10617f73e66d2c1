"""``specsheet explore``: the Textual app driven through its pilot, the design beneath it, and
the command without the extra. Textual is a hard import: the test extra installs it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import textual  # noqa: F401 - the test extra installs it; a missing Textual fails here
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Input, Static
from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app as cli
from specsheet.cli.explore.app import ExploreApp
from specsheet.cli.explore.design import (
    NUMBER_FIELDS,
    Design,
    parse_number,
    parse_tokens,
    report,
    save,
)
from specsheet.errors import SpecError
from specsheet.units import exact

GPT2_SMALL = 124_439_808  # the published total of the released checkpoint
GPT2_SMALL_24 = 209_494_272  # 12 more blocks of 7,087,872 (count's "One layer")
GPT2 = specsheet.load("gpt2-small")


def pilot(app: ExploreApp, steps: Callable[[Any], Awaitable[None]]) -> None:
    """Run ``app`` headless and take ``steps`` with its pilot, once the whole form is mounted
    (the details and the request follow the first screen)."""
    async def run() -> None:
        async with app.run_test(size=(120, 32)) as p:
            await p.pause()
            await steps(p)

    asyncio.run(run())


def shown(app: ExploreApp, widget: str) -> str:
    """The text a Static of the app shows (a picture: as last drawn, at the pane's width)."""
    return str(app.query_one(f"#{widget}", Static).content)


def test_typing_a_value_changes_the_total_to_the_exact_figure() -> None:
    app = ExploreApp(specsheet.load("gpt2-small"))
    expected = specsheet.report(specsheet.load("gpt2-small", layers=24)).params.total
    assert expected == GPT2_SMALL_24

    async def steps(p: Any) -> None:
        assert app.report.params.total == GPT2_SMALL
        app.query_one("#layers").focus()  # focus selects the field's text: typing replaces it
        await p.press("2", "4")
        await p.pause()
        assert app.report.params.total == expected
        assert f"where the {exact(expected)} parameters live" in shown(app, "tables")
        assert app.query_one("#d_ff").placeholder == "3072"  # derived: 4 x d

        await p.press("x")  # no model: the message, and the last good figures
        await p.pause()
        assert app.error == "layers: expected a positive integer, got '24x'"
        assert "layers: expected a positive integer, got '24x'" in shown(app, "status")
        assert app.report.params.total == expected
        assert exact(expected) in shown(app, "tables")

    pilot(app, steps)


def test_pick_gpt2_small_then_save_and_count_reads_the_same_figures(tmp_path: Path) -> None:
    saved = tmp_path / "design.yaml"
    app = ExploreApp(specsheet.load("gpt2-medium"), tokens=512, output=str(saved))

    async def steps(p: Any) -> None:
        assert app.report.params.total == 354_823_168
        app.query_one("#preset").focus()
        await p.press("enter", "down", "enter")  # the picker, sorted: gpt2-medium, gpt2-small
        await p.pause()
        assert app.model.name == "gpt2-small"
        assert app.report.params.total == GPT2_SMALL
        assert "where the 124,439,808 parameters live" in shown(app, "tables")
        assert app.query_one("#layers").value == "12"
        await p.press("ctrl+s")
        await p.pause()
        assert app.saved == str(saved)
        assert f"wrote {saved}" in shown(app, "status")

    pilot(app, steps)
    result = CliRunner().invoke(cli, ["count", str(saved), "--tokens", "512", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    expected = app.report.to_dict()
    assert document["params"]["total"] == GPT2_SMALL
    assert document["origin"] == str(saved)
    assert {**document, "origin": ""} == {**expected, "origin": ""}
    assert saved.read_text(encoding="utf-8").startswith(
        "# gpt2-small: written by specsheet explore from preset gpt2-small\n")
    assert [p.name for p in tmp_path.iterdir()] == ["design.yaml"]  # no temporary file left


# ---- the design, without Textual ---------------------------------------------------------------

def test_an_edited_design_is_renamed_and_loses_the_published_total(tmp_path: Path) -> None:
    design = Design(specsheet.load("llama3-8b"))
    assert not design.edited and design.model().published_total == 8_030_261_248
    assert design.set("kv_heads", 4)
    assert not design.set("kv_heads", 4)  # the same value again changes nothing
    model = design.model()
    assert model.name == "llama3-8b-edited" and model.published_total is None
    expected = specsheet.report(specsheet.load("llama3-8b", kv_heads=4))
    # 32 layers lose the k and v projections of 4 heads of 128
    assert specsheet.report(model).params.total == expected.params.total \
        == 8_030_261_248 - 32 * 2 * (8 - 4) * 128 * 4096
    assert specsheet.report(model).kv.bytes_per_token == 131_072 // 2  # kv_heads 8 -> 4

    design.set("d_ff", None)  # an empty field: derived again, 4 x d
    assert design.model().spec.d_ff == 4 * 4096
    design.name = "mine"
    save(design.model(), str(tmp_path / "mine.yaml"))
    reread = specsheet.load(str(tmp_path / "mine.yaml"))
    assert reread.name == "mine" and reread.spec == design.model().spec


def test_turning_experts_off_drops_the_fields_that_need_them() -> None:
    design = Design(specsheet.load("mixtral-8x7b"))
    design.set("experts", 0)
    assert design.model().spec.experts == 0 and "expert_d_ff" not in design.fields


@pytest.mark.parametrize(("name", "text", "message"), [
    ("layers", "", "layers: required; one of the five numbers"),
    ("d_ff", "1.5", "d_ff: expected a positive integer, got '1.5'"),
    ("experts", "-1", "experts: expected an integer of 0 or more, got '-1'"),
    ("vocab", "５", "vocab: expected a positive integer, got '５'"),
    ("layers", "9" * 5000, "layers: an integer of more than 100 digits is beyond any model"),
])
def test_what_a_field_refuses(name: str, text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_number(name, text)


@settings(max_examples=max(settings.default.max_examples // 5, 10))  # a fifth: 40 by default
@given(name=st.sampled_from(NUMBER_FIELDS), text=st.text(max_size=12) | st.integers(
    min_value=0, max_value=10**30).map(str), tokens=st.text(max_size=6))
def test_whatever_is_typed_the_design_gives_figures_or_a_spec_error(name: str, text: str,
                                                                    tokens: str) -> None:
    design = Design(GPT2)
    try:
        design.set(name, parse_number(name, text))
        report(design.model(), parse_tokens(tokens))
    except SpecError as e:
        assert str(e) and "\n" not in str(e)


def test_a_field_reads_separators_and_empty_means_derived() -> None:
    assert parse_number("vocab", "50,257") == 50_257
    assert parse_number("vocab", "128_256") == 128_256
    assert parse_number("d_ff", " ") is None


def test_saving_to_a_folder_that_does_not_exist_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="does not exist"):
        save(specsheet.load("gpt2-small"), str(tmp_path / "no" / "such.yaml"))
    assert list(tmp_path.iterdir()) == []


# ---- the command -------------------------------------------------------------------------------

def run_specsheet(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nfrom specsheet.cli.app import main\nimport sys\n" \
           f"sys.argv = ['specsheet', *{list(args)!r}]\nmain()\n"
    root = str(Path(specsheet.__file__).parent.parent)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": root})


def test_without_the_extra_one_line_with_the_install_command_and_exit_2() -> None:
    result = run_specsheet("explore", "gpt2-small",
                           prelude="import sys\nsys.modules['textual'] = None  # not installed")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == ("specsheet: error: explore needs Textual, an optional extra: "
                             "pip install 'specsheet[explore]'\n")


def test_without_a_terminal_it_says_so_and_exits_2() -> None:
    result = run_specsheet("explore", "gpt2-small")
    assert (result.returncode, result.stdout) == (2, "")
    assert "explore is interactive: run it in a terminal" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["no-such-model"], "unknown preset 'no-such-model'"),
    (["gpt2-small", "--tokens", "2048"], "lower --tokens or raise the context with --context"),
    (["gpt2-small", "--kv-heads", "5"], "option --kv-heads: 5 does not divide heads 12"),
    (["--dtype", "fp12"], "option --dtype: unknown dtype 'fp12'"),
])
def test_bad_options_fail_before_the_app_starts(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["explore", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr


# ---- sliders, the breakdown bar, compare and serving ----------------------------------------

def test_left_and_right_step_a_field_and_shift_steps_ten_times() -> None:
    from specsheet.cli.explore.design import STEPS, stepped

    assert stepped("layers", "12", 1) == "13"
    assert stepped("layers", "12", -10) == "2"
    assert stepped("layers", "3", -10) == "1"  # never below 1
    assert stepped("experts", "1", -1) == "0"  # a field that may be off goes to 0
    assert stepped("d_model", "768", 1) == str(768 + STEPS["d_model"])
    assert stepped("tokens", "8", 10) == "88"
    assert stepped("vocab", "50,257", 1) == "50321"
    assert stepped("layers", "x", 1) == "2"  # not a number: from the lowest


def test_focus_starts_on_layers_and_the_arrows_step_it() -> None:
    app = ExploreApp(specsheet.load("gpt2-small"))

    async def steps(p: Any) -> None:
        await p.pause()
        assert app.focused is app.query_one("#layers")
        assert str(app.query_one("#label-layers").render()) == "> layers L"
        await p.press("right", "right")
        await p.pause()
        assert app.report.params.total == GPT2_SMALL + 2 * 7_087_872
        await p.press("shift+left")
        await p.pause()
        assert app.query_one("#layers").value == "4"
        assert app.report.params.total == GPT2_SMALL - 8 * 7_087_872
        await p.press("tab")  # the mark follows the focus
        await p.pause()
        assert str(app.query_one("#label-d_model").render()) == "> d_model d"
        assert str(app.query_one("#label-layers").render()) == "layers L"
        await p.press("shift+right")
        await p.pause()
        assert app.query_one("#d_model").value == str(768 + 640)

    pilot(app, steps)


def test_the_first_frame_has_the_five_numbers_and_the_figures_the_rest_follows() -> None:
    """The first frame shows the figures at the pane's width (no second layout to learn it) and
    the five numbers; the details and the request are built and mounted after it, filled as the
    design is then; Python's collector, off while Textual started, is on again."""
    import gc

    app = ExploreApp(specsheet.load("gpt2-small"))
    first: dict[str, Any] = {}
    mount_later = app._mount_later

    async def after_first_frame() -> None:
        first["breakdown"] = shown(app, "breakdown")
        first["tables"] = shown(app, "tables")
        first["details"] = len(app.query_one("#details").children)
        await mount_later()
        first["mounted"] = True

    app._mount_later = after_first_frame  # type: ignore[method-assign]
    gc.disable()  # as the command does before it imports Textual

    async def steps(p: Any) -> None:
        for _ in range(500):  # on a busy machine the rest may follow the first pause
            if "mounted" in first:
                break
            await p.pause(0.01)
        assert first["breakdown"].splitlines()[1] == f"total {exact(GPT2_SMALL)} parameters"
        assert f"where the {exact(GPT2_SMALL)} parameters live" in first["tables"]
        assert first["details"] == 0  # the pictures were drawn (AtWidth draws as it is laid out)
        assert [w.id for w in app.query("#details Input")] == list(NUMBER_FIELDS[5:])
        assert app.query_one("#d_ff", Input).placeholder == "3072"
        assert app.query_one("#compare").is_mounted and app.focused is app.query_one("#layers")
        assert gc.isenabled()

    try:
        pilot(app, steps)
    finally:
        gc.enable()


class TextualDefaults(ExploreApp):
    """The explorer with Textual's own default screen and styling: every restyle made."""

    def get_default_screen(self) -> Screen[None]:
        return App.get_default_screen(self)

    def update_styles(self, node: DOMNode, animate: bool = True) -> None:
        App.update_styles(self, node, animate)


def _pictures(app: ExploreApp, width: int) -> tuple[set[str], list[str]]:
    """The screen's classes at the first frame, and the screen as a picture once the form is
    mounted, after keys, after a resize across the breakpoint, in the preset list (the cursor
    not blinking: a picture at any moment is the same)."""
    taken: list[str] = []
    classes: set[str] = set()
    mount_later = app._mount_later

    async def after_first_frame() -> None:
        classes.update(app.screen.classes)
        await mount_later()
        classes.add("(mounted)")

    app._mount_later = after_first_frame  # type: ignore[method-assign]

    async def run() -> None:
        async with app.run_test(size=(width, 40)) as p:
            for _ in range(500):  # on a busy machine the rest may follow the first pause
                if "(mounted)" in classes:
                    break
                await p.pause(0.01)
            for field in app.query(Input).results(Input):
                field.cursor_blink = False
            await p.pause()
            taken.append(app.export_screenshot())
            await p.press("right", "tab", "3", "tab")
            await p.pause()
            taken.append(app.export_screenshot())
            await p.resize_terminal(200 - width, 40)
            await p.pause()
            taken.append(app.export_screenshot())
            app.query_one("#preset").focus()
            await p.press("enter", "down")
            await p.pause()
            taken.append(app.export_screenshot())

    asyncio.run(run())
    return classes - {"(mounted)"}, taken


@pytest.mark.parametrize("width", [80, 120])
def test_the_restyles_spared_before_the_first_frame_change_nothing_on_screen(width: int) -> None:
    """The explorer's screen has its breakpoint class from the start, styles no widget before it
    is mounted and does not style them all again as it is first shown: what it shows is what
    Textual's defaults show, at the first frame, after keys and focus moves, across a resize
    that changes the breakpoint and in the preset list."""
    classes, ours = _pictures(ExploreApp(specsheet.load("gpt2-small")), width)
    _, theirs = _pictures(TextualDefaults(specsheet.load("gpt2-small")), width)
    assert classes == {"-narrow" if width < 100 else "-wide"}
    assert len(ours) == 4
    assert ours == theirs


def test_a_switch_says_on_or_off_in_words() -> None:
    app = ExploreApp(specsheet.load("gpt2-small"))

    async def steps(p: Any) -> None:
        box = app.query_one("#tied_embeddings")
        assert str(box.label) == "tied output head: on"
        box.focus()
        await p.press("space")
        await p.pause()
        assert str(box.label) == "tied output head: off"
        assert app.report.params.output_head == 50_257 * 768  # the head is a matrix again
        assert "░ output head" in shown(app, "breakdown")

    pilot(app, steps)


@pytest.mark.parametrize("width", [60, 80, 110, 160])
def test_the_breakdown_bar_at_every_width_down_to_60_columns(width: int) -> None:
    app = ExploreApp(specsheet.load("gpt2-small"))

    async def run() -> None:
        async with app.run_test(size=(width, 40)) as p:
            await p.pause()
            text = shown(app, "breakdown").splitlines()
            bar = text[2]
            assert text[1].startswith("total 124,439,808")
            assert set(bar) <= {"█", "▓", "▒", "┃"} and len(bar) >= 10
            assert all(bar.count(c) >= 1 for c in "█▓▒┃")  # norms: 38,400 still get a cell
            assert [line.split()[1:3] for line in text[3:7]] == [
                ["embeddings", "31.6%"], ["attention", "22.8%"], ["MLP", "45.5%"],
                ["norms", "<0.1%"]]
            assert max(len(line) for line in text) <= app.query_one(
                "#figures").scrollable_content_region.width

    asyncio.run(run())


def test_the_pictures_are_drawn_again_at_the_new_width_when_the_terminal_is_resized() -> None:
    app = ExploreApp(specsheet.load("gpt2-small"))

    async def run() -> None:
        async with app.run_test(size=(160, 40)) as p:
            await p.pause()
            for size in (80, 110):
                await p.resize_terminal(size, 40)
                await p.pause()
                width = app.query_one("#figures").scrollable_content_region.width
                bar = shown(app, "breakdown").splitlines()[2]
                assert len(bar) == width  # the bar fills the pane
                assert max(len(line) for line in shown(app, "tables").splitlines()) <= width

    asyncio.run(run())


def test_the_bar_gives_every_part_with_parameters_a_cell_and_fills_its_width() -> None:
    from specsheet.cli.explore.bars import cells

    values = {"a": 10**12, "b": 1, "c": 0, "d": 3 * 10**11}
    for width in range(3, 200):
        got = cells(values, width)
        assert sum(got.values()) == width
        assert got["b"] >= 1 and got["c"] == 0
    assert cells(values, 40) == {"a": 30, "b": 1, "c": 0, "d": 9}  # 39 cells, 30.0 and 9.0


def test_compare_gpt2_small_with_llama3_70b_embedding_shares() -> None:
    """The lesson: 31.6% of GPT-2 small is its embeddings (token 50,257 x 768 and position
    1,024 x 768; the head is tied); about 3% of Llama 3 70B, counting its untied output head,
    a second 128,256 x 8,192 table (each alone is 1.5%)."""
    gpt2 = (50_257 * 768 + 1_024 * 768) / GPT2_SMALL
    llama_total = specsheet.report(specsheet.load("llama3-70b")).params.total
    llama = 2 * 128_256 * 8_192 / llama_total
    assert (f"{100 * gpt2:.1f}%", f"{100 * llama:.1f}%") == ("31.6%", "3.0%")
    app = ExploreApp(specsheet.load("gpt2-small"))

    async def steps(p: Any) -> None:
        assert not app.query_one("#compare-view").display
        await p.press("ctrl+b")
        await p.pause()
        lines = shown(app, "compare-view").splitlines()
        assert lines[:2] == ["A gpt2-small", "  124,439,808"]
        assert lines[3:5] == ["B llama3-70b", f"  {llama_total:,}"]
        rows = {line[2:17].strip(): line[17:].split() for line in lines[7:]}
        assert rows["embeddings"] == ["31.6%", "1.5%", "x26.7"]
        assert rows["output head"] == ["0.0%", "1.5%", "-"]
        assert rows["embeddings+head"] == ["31.6%", "3.0%", "x53.4"]
        assert rows["total"] == ["100.0%", "100.0%", f"x{round(llama_total / GPT2_SMALL)}"]
        await p.press("ctrl+b")
        await p.pause()
        assert not app.query_one("#compare-view").display

    pilot(app, steps)


def test_the_serving_view_follows_the_design() -> None:
    """Llama 3 70B on 8 H100s holds 170 requests of 8,192 tokens (api.serve's docstring); on 4,
    each GPU holds 2 of the 8 key/value heads, and 4 heads halve each request's KV per GPU (at
    tp 8 they would not: vLLM keeps at least one key/value head on every GPU)."""
    llama = specsheet.load("llama3-70b")
    assert specsheet.serve(llama, gpu="h100-sxm", gpus=8).max_concurrency == 170
    on4 = specsheet.serve(llama, gpu="h100-sxm", gpus=4).plan.binding
    fewer = specsheet.serve(specsheet.load("llama3-70b", kv_heads=4), gpu="h100-sxm",
                            gpus=4).plan.binding
    assert on4.kv_bytes_per_request == 8_192 * 80 * 2 * (8 // 4) * 128 * 2  # T L (k, v) h d 2B
    assert fewer.kv_bytes_per_request == on4.kv_bytes_per_request // 2
    app = ExploreApp(llama, gpu="h100-sxm", gpus=8)

    async def steps(p: Any) -> None:
        await p.pause()
        text = shown(app, "serving")
        assert "served on 8 x h100-sxm\n  requests of T = 8,192" in text
        assert "at once           170" in text
        app.query_one("#gpus").focus()
        await p.press("shift+left")  # 8 - 10: one GPU at least, whose 80 GB the weights pass
        await p.pause()
        assert "served on 1 x h100-sxm" in shown(app, "serving")
        assert "the weights do not fit" in shown(app, "serving")
        await p.press("right", "right", "right")
        await p.pause()
        assert f"at once     {on4.num_blocks // 512:>9,}" in shown(app, "serving")
        app.query_one("#kv_heads").focus()
        await p.press("left", "left", "left", "left")  # 8 -> 4 key/value heads
        await p.pause()
        assert "KV/request     336 MB" in shown(app, "serving")
        assert f"at once     {fewer.max_concurrency:>9,}" in shown(app, "serving")

    pilot(app, steps)


def test_web_without_its_extra_one_line_with_the_install_command_and_exit_2() -> None:
    result = run_specsheet("explore", "gpt2-small", "--web", "--port", "8799",
                           prelude="import sys\nsys.modules['textual_serve'] = None")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("specsheet: error: explore --web needs textual-serve, an optional "
                             "extra: pip install 'specsheet[web]'\n")


def test_each_tab_runs_explore_without_web_and_port() -> None:
    from specsheet.cli.explore.web import app_command, local_template

    command = app_command(["explore", "llama3-8b", "--web", "--port", "9000", "--tokens", "8"])
    assert command.endswith("-m specsheet explore llama3-8b --tokens 8")
    assert app_command(["explore", "--port=9000", "--web"]).endswith("-m specsheet explore")
    import textual_serve

    with __import__("tempfile").TemporaryDirectory() as folder:
        page = (local_template(Path(textual_serve.__file__).parent / "templates", Path(folder))
                / "app_index.html").read_text(encoding="utf-8")
    assert "googleapis" not in page and "{{ config.static.url }}js/textual.js" in page
