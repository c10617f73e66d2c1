"""``specsheet explore``: the lessons' calculator in the terminal (a Textual app, an extra).

Textual is imported here only, when the command runs: no other command loads it."""

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from specsheet.api.spec import DEFAULT_DTYPE, REQUIRED_FIELDS, Model
from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    DTYPES,
    KV_DTYPE_OPT,
    TOKENS_OPT,
    complete_preset,
    reports,
)
from specsheet.errors import SpecError, quoted

if TYPE_CHECKING:
    from specsheet.cli.explore.app import ExploreApp

SETTINGS: dict[str, Any] = {}
INSTALL = "pip install 'specsheet[explore]'"
MISSING = f"explore needs Textual, an optional extra: {INSTALL}"
START = "gpt2-small"  # the lessons' worked example


@model_options
def explore(
    model: str | None = typer.Argument(
        None, help=f"Where to start: a preset name, a preset YAML file, a config.json or a "
                   f"model folder, or hf:ORG/NAME [default: {START}].",
        show_default=False, autocompletion=complete_preset),
    tokens: int | None = TOKENS_OPT,
    dtype: str | None = typer.Option(
        None, "--dtype", help=f"Weight element type: {DTYPES} [default: bf16].",
        show_default=False),
    kv_dtype: str = KV_DTYPE_OPT,
    output: str | None = typer.Option(
        None, "--output", "-o", help="The file ctrl+s saves the design to [default: NAME.yaml].",
        show_default=False),
    compare: str | None = typer.Option(
        None, "--compare", help="A preset to show beside the design, part by part (ctrl+b: "
                                "llama3-70b) [default: none].",
        show_default=False, autocompletion=complete_preset),
    gpu: str | None = typer.Option(
        None, "--gpu", help="Serve the design on this GPU (a catalog name): weights and KV per "
                            "GPU and the requests at once [default: none].", show_default=False),
    gpus: int = typer.Option(1, "--gpus", min=1, help="GPUs to serve on."),
    web: bool = typer.Option(
        False, "--web", help="Serve the explorer to a browser on 127.0.0.1 instead (the web "
                             "extra: pip install 'specsheet[web]')."),
    port: int = typer.Option(8770, "--port", min=1, max=65535, help="The port --web serves on."),
    print_: bool = typer.Option(
        False, "--print",
        help="Print the first screen's figures (the breakdown bar, the comparison, the "
             "serving view) as text and exit: no terminal, no Textual."),
    src: ModelSource = NO_SOURCE,
) -> None:
    """Design a model in the terminal and watch its figures follow every keystroke.

    Needs the explore extra (pip install 'specsheet[explore]'). Keys: left/right step a number
    (shift: ten steps), ctrl+b compares with llama3-70b, ctrl+s saves the design as a preset
    YAML file, ctrl+r goes back to the start, ctrl+q quits.
    Example: 'specsheet explore llama3-8b --tokens 8192'.
    """
    import importlib.util

    if print_ and web:
        raise SpecError("--print writes the first screen and exits; --web serves the explorer: "
                        "give one of them")
    if not print_ and importlib.util.find_spec("textual") is None:
        raise SpecError(MISSING)
    given = src.overrides()
    ref = model
    if model is None and not set(REQUIRED_FIELDS) <= set(given):
        ref = START  # without the five numbers, options edit the lessons' example
    (start,) = reports([ref], given, tokens, dtype, kv_dtype,
                       "lower --tokens or raise the context with --context", timeout=src.timeout)
    from specsheet.cli.errors import as_options

    with as_options():
        if compare is not None:
            load_preset(compare)
        if gpu is not None:
            load_gpu_named(gpu)
    if print_:
        print_first_screen(start.model, tokens, dtype, kv_dtype, compare, gpu, gpus)
        return
    if web:
        from specsheet.cli.explore.web import serve

        serve(sys.argv[sys.argv.index("explore"):] if "explore" in sys.argv else ["explore"],
              port)
        return
    if not (_is_terminal(0) and _is_terminal(1)) and not _in_browser():
        raise SpecError("explore is interactive: run it in a terminal ('specsheet count' "
                        "writes the figures to a pipe or a file)")
    gc.disable()  # until the first screen is drawn (the app enables it again): collecting
    # Textual's start-up objects was about a fifth of the time to that screen
    try:
        app = import_app()
    except ModuleNotFoundError as e:  # Textual there, but not whole
        if (e.name or "specsheet").startswith("specsheet"):
            raise
        raise SpecError(f"{MISSING} (No module named {quoted(e.name)})") from None
    app(start.model, tokens, dtype, kv_dtype, output, compare, gpu, gpus).run()


APP_KEY = "specsheet.cli.explore.app"  # its entry in compiled.IMPORTS


def import_app() -> "type[ExploreApp]":
    """The explorer's app class: Textual imported (about 0.1 s of CPU), its dataclasses' methods
    compiled once and kept (specsheet.compiled.kept_compiles), asyncio without ssl
    (``without_ssl``)."""
    from specsheet.compiled import IMPORTS, kept_compiles

    with kept_compiles(APP_KEY, IMPORTS), without_ssl():
        from specsheet.cli.explore.app import ExploreApp
    return ExploreApp


@contextmanager
def without_ssl() -> Iterator[None]:
    """Import asyncio (Textual's) without ssl: asyncio imports it for TLS connections, and
    loads OpenSSL with it (about 28 million instructions, 2% of the explorer's start), but
    takes it as optional (``try: import ssl except ImportError: ssl = None``, in base_events,
    selector_events and sslproto). The explorer's process opens no connection through asyncio
    (``--web``'s server runs in a process of its own, which does not come here; each of its
    tabs runs this explorer and talks to it through its streams). Outside the block ``import
    ssl`` works as ever (urllib's Hub requests import it themselves); asyncio's modules keep
    ``ssl = None``. Nothing is changed when ssl or asyncio is already imported."""
    if "ssl" in sys.modules or "asyncio" in sys.modules:
        yield
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # import ssl: ImportError
    try:
        yield
    finally:
        if "ssl" in sys.modules and sys.modules["ssl"] is None:
            del sys.modules["ssl"]


# the bar's fills where stdout takes ASCII only (render.text.to_ascii spells the others)
_ASCII_FILLS = str.maketrans({"▓": "=", "▚": "%", "▒": ":", "┃": "|"})


def print_first_screen(start: Model, tokens: int | None, dtype: str | None, kv_dtype: str,
                       compare: str | None, gpu: str | None, gpus: int) -> None:
    """What the explorer's first screen shows beside the form, as plain text on stdout: the
    design's breakdown bar, the comparison and the serving view, made by the explorer's own
    design and bars modules (Textual is not imported)."""
    from specsheet.api.count import load
    from specsheet.cli.explore import bars
    from specsheet.cli.explore.design import Design, report, serving
    from specsheet.cli.streams import ascii_only, terminal_width, write
    from specsheet.render.text import to_ascii

    dtype = dtype or DEFAULT_DTYPE
    model = Design(start).model()
    shown = report(model, tokens, dtype, kv_dtype)
    width = terminal_width()
    lines = bars.breakdown(shown, width)
    if compare is not None:
        other = report(load(compare), None, dtype, kv_dtype)
        lines += [[("", "")], *bars.comparison(shown, other, width)]
    if gpu is not None:
        at = shown.flops.tokens
        lines += [[("", "")], *bars.serving(serving(model, gpu, gpus, at, dtype, kv_dtype),
                                           gpu, gpus, at)]
    text = "".join("".join(run for run, _ in line).rstrip() + "\n" for line in lines)
    write(to_ascii(text).translate(_ASCII_FILLS) if ascii_only() else text)


def load_preset(name: str) -> None:
    """Refuse a compared model that is not a preset before the app starts."""
    from specsheet.api.count import load, presets

    if name not in presets():
        try:
            load(name)
        except SpecError as e:
            raise SpecError(str(e), field="compare", value=name) from None
        raise SpecError(f"{quoted(name)} is not a preset; the explorer compares with a preset "
                        "('specsheet presets' lists them)", field="compare", value=name)


def load_gpu_named(name: str) -> None:
    """Refuse an unknown GPU before the app starts."""
    from specsheet.api.hardware import load_gpu

    load_gpu(name)


def _in_browser() -> bool:
    """Run by ``explore --web`` for a browser tab: Textual's web driver is the terminal."""
    import os

    from specsheet.cli.explore.web import WEB_DRIVER

    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER


def _is_terminal(fd: int) -> bool:

    try:
        return os.isatty(fd)
    except OSError:
        return False
