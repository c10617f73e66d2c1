"""The explorer: a Textual app over a Design. The form on the left sets spec fields; the tables on
the right are count's (views.count, rendered by render.terminal) and follow every keystroke.

Only ``specsheet explore`` imports this module (Textual costs about 0.3 s of CPU to import).
A field that makes no model shows the SpecError's line and keeps the last good figures.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.events import DescendantFocus, ScreenResume
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Label, Select, Static

from specsheet.api import count as api
from specsheet.api.spec import DEFAULT_DTYPE, REQUIRED_FIELDS, Model, ModelSpec
from specsheet.cli.explore import bars
from specsheet.cli.explore.design import (
    CHOICE_FIELDS,
    DOCS,
    DTYPES,
    NUMBER_FIELDS,
    STEPS,
    SWITCH_FIELDS,
    Design,
    gpu_names,
    parse_number,
    parse_tokens,
    report,
    save,
    serving,
    stepped,
)
from specsheet.errors import SpecError

if TYPE_CHECKING:  # the switches: imported as the details are made, after the first frame
    from textual.widgets import Checkbox

W = TypeVar("W", bound=Widget)

LABELS = {
    "layers": "layers L", "d_model": "d_model d", "heads": "heads h", "vocab": "vocab V",
    "context": "context n_max", "kv_heads": "kv heads", "head_dim": "head dim",
    "d_ff": "d_ff", "experts": "experts", "experts_per_token": "experts/token",
    "expert_d_ff": "expert d_ff", "shared_d_ff": "shared d_ff",
    "sliding_window": "sliding window", "mlp": "MLP", "norm": "norm", "positions": "positions",
    "qk_norm": "q/k norm", "tied_embeddings": "tied output head", "qkv_bias": "q, k, v bias",
    "o_bias": "output bias", "mlp_bias": "MLP bias",
}


COMPARE = "llama3-70b"  # the lessons' other model ("Compare the breakdown bar for GPT-2 small
# with Llama 3 70B")


class NumberInput(Input):
    """A number field that works as a slider: left and right step it by its unit, shift+left and
    shift+right by ten units; typing still replaces it (its text is selected as it is entered).
    An empty field (derived) steps from the value shown dimmed."""

    BINDINGS = [
        Binding("left", "step(-1)", "step down"),
        Binding("right", "step(1)", "step up (shift: x10)"),
        Binding("shift+left", "step(-10)", "10 steps down", show=False),
        Binding("shift+right", "step(10)", "10 steps up", show=False),
    ]

    def action_step(self, times: int) -> None:
        name = self.id or ""
        self.value = stepped(name, self.value or self.placeholder, times)
        self.cursor_position = len(self.value)


def _number(name: str, value: str, placeholder: str, help: str = "") -> NumberInput:
    return NumberInput(value, placeholder, id=name, compact=True,
                       tooltip=f"{help} (left/right: {STEPS[name]:,} a step)".strip())


def switch_label(name: str, on: bool) -> str:
    """A switch's label with its state in words: never a colour alone."""
    return f"{LABELS[name]}: {'on' if on else 'off'}"


def _choice(name: str, choices: tuple[str, ...], value: str, help: str) -> Select[str]:
    return Select([(c, c) for c in choices], id=name, value=value, allow_blank=False,
                  compact=True, tooltip=help)


def _lines(lines: list[list[tuple[str, str]]]) -> Text:
    """Styled runs, line by line, as one Rich text."""
    return Text("\n").join(Text.assemble(*line) for line in lines)


class AtWidth:
    """A picture drawn at the width Textual gives it, on every frame (a Rich renderable): the
    first frame shows the figures at the pane's width without waiting for a layout to learn it.
    ``str()`` is the text last drawn."""

    def __init__(self, draw: Callable[[int], Text]) -> None:
        self.draw = draw
        self.drawn: tuple[int, Text] | None = None

    def at(self, width: int) -> Text:
        if self.drawn is None or self.drawn[0] != width:
            self.drawn = (width, self.draw(width))
        return self.drawn[1]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.at(options.max_width)

    def __str__(self) -> str:
        return "" if self.drawn is None else self.drawn[1].plain


BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # a narrow terminal: a narrow form


class FormScreen(Screen[None]):
    """The explorer's screen: Textual's default screen, made with the breakpoint class of the
    terminal's width and styled once before its first frame.

    Textual's default screen gets its breakpoint class at its first resize, after the first
    frame: the class changes, every widget is styled again and the screen laid out and painted
    again (at a narrow width the first frame has the wide form). Made with it, the resize
    changes no class. And as it is first shown (resumed), Textual styles every widget on it
    again, which the widgets styled as they were mounted a moment before: the first resume
    does not (a later one, after a screen above it closes, does)."""

    def __init__(self, width: int) -> None:
        classes = [name for at, name in sorted(BREAKPOINTS) if width >= at]
        super().__init__(id="_default", classes=classes[-1] if classes else None)
        self.resumed = False

    def on_screen_resume(self, event: ScreenResume) -> None:
        # called before Textual's own handler (Screen._on_screen_resume), which reads this
        if not self.resumed:
            event.refresh_styles = False
        self.resumed = True


class ExploreApp(App[None]):
    """``specsheet explore``: design a model and watch its figures."""

    TITLE = "specsheet explore"
    AUTO_FOCUS = "#layers"  # the first model field (focused as the screen mounts: no restyle
    # of the form for a focus that moves on at once)
    HORIZONTAL_BREAKPOINTS = BREAKPOINTS
    CSS = """
    #form { width: 34; border-right: solid $primary; padding: 0 1; }
    .-narrow #form { width: 30; }
    .-narrow #fields, .-narrow #details, .-narrow #request { grid-columns: 14 1fr; }
    Input:focus, Select:focus > SelectCurrent, Checkbox:focus {
        background: $accent; color: $text; text-style: bold; }
    .focused-label { text-style: bold reverse; }
    #fields, #details, #request {
        grid-size: 2; grid-columns: 16 1fr; grid-rows: 1; height: auto; }
    .wide { column-span: 2; }
    .heading { text-style: bold; }
    #extra { height: auto; }
    #request { margin: 1 0 0 0; }
    #figures { padding: 0 1; scrollbar-gutter: stable; }
    #status { height: auto; margin: 0 0 1 0; }
    #breakdown, #compare-view, #serving { height: auto; margin: 0 0 1 0; }
    #status.error { color: $error; text-style: bold; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save preset"),
        Binding("ctrl+r", "reset", "Reset"),
        Binding("ctrl+b", "compare", "Compare"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, start: Model, tokens: int | None = None, dtype: str | None = None,
                 kv_dtype: str = DEFAULT_DTYPE, output: str | None = None,
                 compare: str | None = None, gpu: str | None = None, gpus: int = 1) -> None:
        super().__init__()
        self.compare = compare or ""  # the preset shown beside the design ("": none)
        self.compare_report: api.Report | None = None
        self.gpu = gpu or ""  # the GPU the serving view plans on ("": none)
        self.gpus = gpus
        self.design = Design(start)
        self.tokens = tokens  # None: the model's context
        self.dtype = dtype or DEFAULT_DTYPE
        self.kv_dtype = kv_dtype
        self.output = output or ""
        self.bad: dict[str, str] = {}  # fields whose text is not a value, and why
        self.error = ""  # why the design shows the last good figures, if it does
        self.note = ""  # what the last key did (a file saved)
        self.saved = ""  # the file last saved
        self.shown: api.Report | None = None  # the report drawn
        self.model = start
        self.report: api.Report = report(start, tokens, self.dtype, kv_dtype)

    # ---- layout ------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return FormScreen(self.size.width)

    def update_styles(self, node: DOMNode, animate: bool = True) -> None:
        """Textual's, for widgets on the screen only: a widget not mounted yet is styled as it
        is mounted, so the classes its constructor sets (Input's compact and valid ones,
        Select's) need no styling before (13 of the first screen's widgets, styled twice)."""
        if isinstance(node, Widget) and not node.is_attached:
            return
        super().update_styles(node, animate)

    def compose(self) -> ComposeResult:
        spec, given = self.design.start.spec, self.design.fields
        presets = api.presets()
        start = self.design.start.name if self.design.start.name in presets else Select.NULL
        yield Header()
        with Horizontal():
            with VerticalScroll(id="form"):
                with Grid(id="fields"):
                    yield Label("preset")
                    yield Select([(p, p) for p in presets], id="preset", prompt="pick a preset",
                                 value=start, compact=True)
                    yield Label("name")
                    yield Input(id="name", compact=True)
                    yield Label("save to")
                    yield Input(self.output, id="output", compact=True)
                    yield Label("The five numbers, then the details", classes="wide heading")
                    for name in NUMBER_FIELDS[:len(REQUIRED_FIELDS)]:  # given: text, derived:
                        yield Label(LABELS[name], id=f"label-{name}")  # placeholders
                        yield _number(name, str(given[name]) if name in given else "",
                                      str(getattr(spec, name)), DOCS[name].help)
                yield Grid(id="details")  # filled once the first screen is drawn
                yield Static("", id="extra", markup=False)
                yield Grid(id="request")  # so is this
            with VerticalScroll(id="figures"):
                yield Static("", id="status", markup=False)
                yield Static("", id="breakdown", markup=False)
                yield Static("", id="serving", markup=False)
                yield Static("", id="compare-view", markup=False)
                yield Static("", id="tables", markup=False)
        yield Footer()

    def _details(self) -> list[Widget]:
        """The form's details: the numbers after the five, the choices and the switches, as the
        design is when they are made."""
        from textual.widgets import Checkbox  # here: the first frame has no switch

        spec, given = self.model.spec, self.design.fields
        widgets: list[Widget] = []
        for name in NUMBER_FIELDS[len(REQUIRED_FIELDS):]:
            widgets += [Label(LABELS[name], id=f"label-{name}"),
                        _number(name, str(given[name]) if name in given else "",
                                str(getattr(spec, name)), DOCS[name].help)]
        for name in CHOICE_FIELDS:
            widgets += [Label(LABELS[name], id=f"label-{name}"),
                        _choice(name, DOCS[name].choices, getattr(spec, name), DOCS[name].help)]
        widgets += [Checkbox(switch_label(name, getattr(spec, name)), getattr(spec, name),
                             id=name, compact=True, tooltip=DOCS[name].help, classes="wide")
                    for name in SWITCH_FIELDS]
        return widgets

    def _request(self) -> list[Widget]:
        """The request (tokens and dtypes), the GPU served on and the model compared with."""
        presets = api.presets()
        return [
            Label("A request", classes="wide heading"),
            Label("tokens T", id="label-tokens"),
            _number("tokens", "" if self.tokens is None else str(self.tokens), "the context",
                    "the sequence length"),
            Label("weights dtype", id="label-dtype"),
            _choice("dtype", DTYPES, self.dtype, "the weights' element type"),
            Label("KV dtype", id="label-kv_dtype"),
            _choice("kv_dtype", DTYPES, self.kv_dtype, "the KV cache's element type"),
            Label("Serve and compare", classes="wide heading"),
            Label("GPU", id="label-gpu"),
            Select([(g, g) for g in gpu_names()], id="gpu", prompt="none",
                   value=self.gpu or Select.NULL, compact=True),
            Label("GPUs", id="label-gpus"),
            _number("gpus", str(self.gpus), "1", "GPUs to serve on"),
            Label("compare with", id="label-compare"),
            Select([(p, p) for p in presets], id="compare", prompt="none",
                   value=self.compare or Select.NULL, compact=True),
        ]

    def on_mount(self) -> None:
        self._recompute_aside()
        self._refresh_derived()
        self._show()  # drawn at the pane's width on the first frame (AtWidth)
        self.call_after_refresh(self._mount_later)

    async def _mount_later(self) -> None:
        """The rest of the form, once the first screen is drawn: that screen waits for the five
        numbers and the figures alone (keys typed meanwhile go to the focused field).
        Python's garbage collector, off while the command started the app, is on again."""
        gc.enable()
        await self.query_one("#details", Grid).mount_all(self._details())
        await self.query_one("#request", Grid).mount_all(self._request())
        self._refresh_derived()

    # ---- the form ----------------------------------------------------------------------------

    def _by_id(self, selector: str, kind: type[W]) -> list[W]:
        """The widget of this id, if it is mounted (the details may not be yet): Textual's
        search by id, not a query matching the selector against every widget (the placeholders
        set as the app mounts made thirteen such queries before the first frame)."""
        try:
            return [self.query_one(selector, kind)]
        except NoMatches:
            return []

    def _fill_form(self) -> None:
        """Show the design's fields: given values in the inputs, derived ones as placeholders;
        choices and switches as the model has them. Nothing here changes the design."""
        from textual.widgets import Checkbox

        spec, given = self.model.spec, self.design.fields
        with self.prevent(Input.Changed, Select.Changed, Checkbox.Changed):
            for name in NUMBER_FIELDS:
                for field in self._by_id(f"#{name}", Input):
                    field.value = str(given[name]) if name in given else ""
                    field.placeholder = str(getattr(spec, name))
            self._fill_choices(spec)
            self.query_one("#name", Input).value = self.design.name
        self._refresh_derived()

    def _fill_choices(self, spec: ModelSpec) -> None:
        """The choice and switch fields as ``spec`` has them (a switch says on or off)."""
        from textual.widgets import Checkbox

        for name in CHOICE_FIELDS:
            for select in self._by_id(f"#{name}", Select):
                select.value = getattr(spec, name)
        for name in SWITCH_FIELDS:
            for box in self._by_id(f"#{name}", Checkbox):
                box.value = getattr(spec, name)
                box.label = switch_label(name, box.value)

    def _refresh_derived(self) -> None:
        """What follows from the last good model: placeholders of derived numbers, the automatic
        name and file, the fields the form has no input for."""
        spec = self.model.spec
        for name in NUMBER_FIELDS:
            for field in self._by_id(f"#{name}", Input):  # the details: once mounted
                field.placeholder = str(getattr(spec, name))
        self.query_one("#name", Input).placeholder = self.design.auto_name
        self.query_one("#output", Input).placeholder = f"{self.model.name}.yaml"
        extra = self.design.extra_fields()
        kept = self.query_one("#extra", Static)
        kept.update("kept: " + ", ".join(f"{k}={v}" for k, v in extra.items()))
        kept.display = bool(extra)

    def on_input_changed(self, event: Input.Changed) -> None:
        name = event.input.id or ""
        if name == "output":
            self.output = event.value
            return
        changed = True
        try:
            if name == "name":
                self.design.name = event.value.strip()
            elif name == "tokens":
                changed = self.tokens != (tokens := parse_tokens(event.value))
                self.tokens = tokens
            elif name == "gpus":
                gpus = parse_tokens(event.value) or 1
                changed, self.gpus = gpus != self.gpus, gpus
            elif name in NUMBER_FIELDS:
                changed = self.design.set(name, parse_number(name, event.value))
        except SpecError as e:
            self.bad[name] = str(e)
            self._recompute()
            return
        if self.bad.pop(name, None) is not None or changed or self.error:
            self._recompute()

    def on_select_changed(self, event: Select.Changed) -> None:
        name, value = event.select.id or "", event.value
        if name in ("gpu", "compare"):
            chosen = "" if value is Select.NULL else str(value)
            if chosen != getattr(self, name):
                setattr(self, name, chosen)
                self._recompute_aside()
                self._show(force=True)
            return
        if value is Select.NULL:
            return
        if name == "preset":
            if value != self.design.start.name or self.design.edited:
                try:
                    self._restart(api.load(str(value)))
                except SpecError as e:  # a preset is always a model; say so if one is not
                    self.error = str(e)
                    self._show()
            return
        if name == "dtype" and value != self.dtype:
            self.dtype = str(value)
        elif name == "kv_dtype" and value != self.kv_dtype:
            self.kv_dtype = str(value)
        elif not (name in CHOICE_FIELDS and value != getattr(self.model.spec, name)
                  and self.design.set(name, value)):
            return  # a choice shows the model's value: showing it again gives nothing
        self._recompute()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        name = event.checkbox.id or ""
        if name in SWITCH_FIELDS:
            event.checkbox.label = switch_label(name, event.value)
        if (name in SWITCH_FIELDS and event.value != getattr(self.model.spec, name)
                and self.design.set(name, event.value)):
            self._recompute()

    # ---- figures -----------------------------------------------------------------------------

    def _recompute(self) -> None:
        """Build the design's model and report; keep the last good ones while a field is not
        a number or the design makes no model, and say why."""
        self.note = ""
        if self.bad:
            self.error = next(iter(self.bad.values()))
            self._show()
            return
        try:
            self.model = self.design.model()
            self._refresh_derived()  # the form follows the model even if the request fails
            self.report = report(self.model, self.tokens, self.dtype, self.kv_dtype)
            self.error = ""
        except SpecError as e:
            self.error = str(e)
        self._recompute_aside()
        self._show()

    def _recompute_aside(self) -> None:
        """The model compared with, and the design served on the GPU (when one is picked)."""
        try:
            self.compare_report = (report(api.load(self.compare), None, self.dtype,
                                          self.kv_dtype) if self.compare else None)
        except SpecError:  # a preset is always a model
            self.compare_report = None
        self.served_lines: list[list[tuple[str, str]]] = []
        if self.gpu:
            tokens = self.report.flops.tokens
            try:
                served = serving(self.model, self.gpu, self.gpus, tokens, self.dtype,
                                 self.kv_dtype)
                self.served_lines = bars.serving(served, self.gpu, self.gpus, tokens)
            except SpecError as e:
                self.served_lines = [[(f"serving on {self.gpu}: {e}", "bold red")]]

    def _show(self, force: bool = False) -> None:
        """The status line, the breakdown bar (and the comparison, the serving view) and
        count's two tables of the last good report, each drawn at the pane's width."""
        from specsheet.render.terminal import render_views
        from specsheet.views.count import count_views

        status = self.query_one("#status", Static)
        if self.error:
            status.update(f"{self.error} (the figures are the last good design's)")
            status.add_class("error")
        else:
            status.update(self.note or f"{self.model.name}: {self.model.origin}")
            status.remove_class("error")
        if not force and self.shown is self.report:  # a key that changes no figure
            return  # draws nothing again
        self.shown = report = self.report
        self.query_one("#breakdown", Static).update(
            AtWidth(lambda width: _lines(bars.breakdown(report, width))))
        compared = self.query_one("#compare-view", Static)
        compared.display = (other := self.compare_report) is not None
        if other is not None:
            compared.update(AtWidth(lambda width: _lines(bars.comparison(report, other, width))))
        served = self.query_one("#serving", Static)
        served.display = bool(self.served_lines)
        served.update(_lines(self.served_lines))
        views = count_views(report)  # a narrow pane: count's stacked tables
        self.query_one("#tables", Static).update(
            AtWidth(lambda width: Text(render_views(views, width))))

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """The focused field's label is marked too: the focus ring without colour."""
        for label in self.query(".focused-label").results(Label):
            label.remove_class("focused-label")
            label.update(str(label.content).removeprefix("> "))
        name = event.widget.id or ""
        for marked in self._by_id(f"#label-{name}", Label):
            marked.add_class("focused-label")
            marked.update("> " + str(marked.content))

    # ---- keys --------------------------------------------------------------------------------

    def _restart(self, start: Model) -> None:
        self.design.restart(start)
        self.bad = {}
        self._recompute()
        self._fill_form()

    def action_compare(self) -> None:
        """Compare the design with the lessons' other model, or stop comparing."""
        for select in self._by_id("#compare", Select):
            select.value = Select.NULL if self.compare else COMPARE

    def action_reset(self) -> None:
        """Back to where the design started."""
        self._restart(self.design.start)

    def action_save(self) -> None:
        """Write the design as a preset YAML file; not while a field makes no model."""
        status = self.query_one("#status", Static)
        if self.error:
            status.update(f"not saved: {self.error}")
            return
        path = self.output.strip() or f"{self.model.name}.yaml"
        try:
            save(self.model, path)
        except SpecError as e:
            status.update(f"not saved: {e}")
            status.add_class("error")
            return
        self.saved = path
        self.note = f"wrote {path}; 'specsheet count {path}' reads it"
        self._show()
