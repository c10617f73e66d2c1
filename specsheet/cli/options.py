"""Options shared by several commands, defined once, and the steps every computing command takes:
pick the output format, gather the spec overrides, build the reports, write the result.

An option is written in typer's default style, ``gpu: str | None = GPU_OPT``: the constant is
the ``typer.Option`` (its default first), declared with the type of the value it gives, so
mypy checks each parameter against it. Not ``Annotated[str | None, typer.Option(...)]``:
building that alias takes ``typing`` about 10 us, each run, for every option a command's
imports define, and typer copies its ``OptionInfo`` twice where it copies a default once
(docs/performance.md, the sixteenth round)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import typer

from specsheet.api.spec import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.cli.errors import as_options, given_by_options, of_set
from specsheet.errors import SpecError, did_you_mean, quoted, shortened
from specsheet.figures import Report, build_report
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import Given, Overrides
from specsheet.sources.resolve import resolve

if TYPE_CHECKING:
    from specsheet.api.spec import Model
    from specsheet.views.charts import ChartView
    from specsheet.views.table import TableView

CONVENTIONS = (
    "Parameters count every weight and bias (a tied output head once). FLOPs per token at "
    "context T: matrix multiplications only, a multiply-add is 2 FLOPs, each token attends to "
    "all T positions (no causal halving). Bytes in SI units (1 GB = 10^9 B)."
)

DTYPES = ", ".join(DTYPE_BITS)
# how the reader asks for an output or sets an input, by the name views use for it (a table's
# advice or caption names the option; views and render know no option's name)
OPTION_NAMES = {"json": "--json", "price": "--price", "quant": "--quant",
                "max_model_len": "--tokens", "concurrency": "--concurrency", "gpus": "--gpus",
                "n_gpu_layers": "--n-gpu-layers", "cache_type_k": "--cache-type-k",
                "cache_type_v": "--cache-type-v", "host_memory": "--host-memory",
                "ctx": "--ctx", "gpu": "--gpu"}


class BadValue(typer.BadParameter):
    """An option's value refused by specsheet's own parser. Its message says the value back
    short (``errors.quoted``), so the error line keeps the message whole; click's own messages
    say a value back in full and are cut at the line's boundary (``cli/app.py``)."""


def parse_tokens(text: str | int) -> int:
    """A number of tokens (``--tokens``, ``--seq-len``, ...): an integer, or a quantity with k
    or M as context lengths are named (``32k`` = 32,768; units.parse_quantity, imported only
    then). An option's default arrives as the int it is."""
    if isinstance(text, int):
        return text
    text = text.strip()
    if text.isascii() and text.isdigit():
        tokens = int(text)
    else:
        from specsheet.units import parse_quantity

        try:
            tokens = parse_quantity(text, "tokens", "tokens")
        except SpecError as e:
            raise BadValue(e.message) from None
    if tokens < 1:
        raise BadValue(f"expected a number of tokens above 0, got {quoted(text)}")
    return tokens


TOKENS_OPT: int | None = typer.Option(
    None, "--tokens", "-t", parser=parse_tokens, metavar="T", help="Tokens T in a request, for the "
    "KV cache and FLOPs: 8192, or 8k (k = 1,024) [default: the model's context; with "
    "--images, the context less the images' tokens].")
IMAGES_OPT: int | None = typer.Option(
    None, "--images", min=1, metavar="N", help="Images in a request (a multimodal model): their "
    "tokens, as the model's processor counts them, join the request's KV cache and FLOPs, "
    "beside --tokens of text.", show_default=False)
IMAGE_SIZE_OPT: str | None = typer.Option(
    None, "--image-size", metavar="WxH", help="The images' size in pixels, such as 1024x768 (with "
    "--images) [default: the model's native resolution].", show_default=False)
DTYPE_OPT: str | None = typer.Option(
    None, "--dtype",
    help=f"Weight element type: {DTYPES} [default: bf16]; with --quant, the type of "
    "the tensors the format leaves unquantized [default: the format's own].",
    show_default=False)
# the names of specsheet.quant.formats.FORMATS (a test keeps them equal), written out so that
# building the option does not import the quantization tables
QUANT_FORMATS = ("gptq-int4, gptq-int8, awq-int4, bnb-nf4, bnb-nf4-dq, bnb-int8, fp8, "
                 "fp8-channel, fp8-block, w4a16, w8a8, mxfp4, nvfp4, gguf-f16, gguf-q8_0, "
                 "gguf-q6_k, gguf-q5_k_m, gguf-q4_k_m, gguf-q4_0, gguf-q3_k_m, gguf-q2_k, "
                 "gguf-iq4_xs")
QUANT_OPT: str | None = typer.Option(
    None, "--quant", "-q",
    help=f"Store the weights as a quantized checkpoint does, every tensor and "
    f"its scales counted: {QUANT_FORMATS} (docs/quantization.md).", show_default=False)
GROUP_SIZE_OPT: int | None = typer.Option(
    None, "--group-size", help="Values that share a scale, for gptq-*, awq-int4 and w4a16 "
    "[default: 128; -1: one group per row].", show_default=False)
KV_DTYPE_OPT: str = typer.Option(
    DEFAULT_DTYPE, "--kv-dtype", help=f"KV-cache element type: {DTYPES}.")
JSON_OPT: bool = typer.Option(
    False, "--json", help="Short for --format json: one JSON document, exact integers.")

SPEC = "Spec (overrides a preset's value)"
LAYERS_OPT: int | None = typer.Option(None, help="Layers L.", rich_help_panel=SPEC)
D_MODEL_OPT: int | None = typer.Option(None, help="Hidden size d.", rich_help_panel=SPEC)
HEADS_OPT: int | None = typer.Option(None, help="Attention heads h.", rich_help_panel=SPEC)
VOCAB_OPT: int | None = typer.Option(None, help="Vocabulary size V.", rich_help_panel=SPEC)
CONTEXT_OPT: int | None = typer.Option(None, help="Context length n_max.", rich_help_panel=SPEC)
KV_HEADS_OPT: int | None = typer.Option(None, help="Key/value heads [default: heads].")
HEAD_DIM_OPT: int | None = typer.Option(None, help="Head size [default: d / heads].")
DFF_OPT: int | None = typer.Option(None, "--d-ff", help="MLP width [default: 4 x d].")
MLP_OPT: str | None = typer.Option(
    None, help="MLP kind: plain (2 matrices) or gated (3, SwiGLU) [default: plain].")
NORM_OPT: str | None = typer.Option(
    None, help="Norm: layernorm, rmsnorm or none [default: layernorm].")
ATTN_BIAS_OPT: bool | None = typer.Option(
    None, "--attn-bias/--no-attn-bias", help="Attention biases [default: yes].")
MLP_BIAS_OPT: bool | None = typer.Option(
    None, "--mlp-bias/--no-mlp-bias", help="MLP biases [default: yes].")
POSITIONS_OPT: str | None = typer.Option(
    None, help="Positions: learned, rotary or none [default: learned].")
TIED_OPT: bool | None = typer.Option(
    None, "--tied/--untied", help="Output head tied to the token embedding [default: tied].")

SVG_OPT: str | None = typer.Option(
    None, "--svg", metavar="FILE",
    help="Also write what the terminal shows (the tables and charts, in "
    "colour) as an SVG picture to FILE, whole or not at all.", show_default=False)
HTML_OPT: str | None = typer.Option(
    None, "--html", metavar="FILE",
    help="Also write what the terminal shows as an HTML page to FILE, "
    "whole or not at all.", show_default=False)

FORMATS = ("table", "json", "csv", "markdown")
FORMAT_OPT: str | None = typer.Option(
    None, "--format", "-f", help="Output: table (default), json, csv or markdown.",
    show_default=False)


def complete_preset(incomplete: str) -> list[str]:
    """Shell completion for a model argument: the preset names that start with ``incomplete``."""
    from specsheet.sources.presets import preset_index

    return [name for name in preset_index() if name.startswith(incomplete)]


# typer reads a completion function's type hints while it builds a command, compiling each
# annotation's text (this module's annotations are text): as objects, ~0.2 ms less a build
complete_preset.__annotations__ = {"incomplete": str, "return": list[str]}


MODEL_ARG: str | None = typer.Argument(
    None,
    help="A preset name (see 'specsheet presets'), a preset YAML file, a config.json or a model "
         "folder holding one, a .gguf or .safetensors file (its header), or ORG/NAME[@REVISION] "
         "on the Hugging Face Hub (read from the local cache when it is there). Leave out to "
         "give the five numbers as options.",
    show_default=False, autocompletion=complete_preset)
HF_OPT: str | None = typer.Option(
    None, "--hf", help="ORG/NAME[@REVISION] on the Hugging Face Hub, never a preset or a path: the "
    "local cache, else the Hub (docs/hub.md).", show_default=False)
TIMEOUT_OPT: float = typer.Option(
    DEFAULT_TIMEOUT, "--timeout", help="Seconds to wait for the Hugging Face Hub before giving up.")
SET_OPT: list[str] | None = typer.Option(
    None, "--set", help="Set any spec field, e.g. --set experts=8 --set sliding_layers=0,2,4 "
    "(repeatable; see docs/models.md for the fields).", show_default=False)


def output_format(fmt: str | None, json_: bool) -> str:
    """The output format from --format and its short form --json."""
    if fmt is not None and fmt not in FORMATS:
        raise SpecError("option --format: unknown format "
                        f"{quoted(fmt)}{did_you_mean(fmt, FORMATS)}; "
                        f"expected one of {', '.join(FORMATS)}")
    if json_ and fmt not in (None, "json"):
        raise SpecError(f"--json contradicts --format {fmt}; give one of them")
    return "json" if json_ else fmt or "table"


def emit(fmt: str, document: dict[str, Any], rows: list[dict[str, Any]],
         views: Callable[[], Sequence[TableView | ChartView]], svg: str | None = None,
         html: str | None = None, lines_of: str | None = None,
         inputs: dict[str, object] | None = None) -> None:
    """Write the command's result to stdout in ``fmt``; everything is computed beforehand.

    ``svg`` and ``html`` name files to write the table views to as well (--svg, --html), each
    whole or not at all, before anything goes to stdout: a file that cannot be written is bad
    input (exit 2) with an empty stdout. ``lines_of``: a key of ``document`` whose list JSON
    writes an item per line (a sweep's points).

    A document holding a number that is not finite (an estimate divided by a share of 5e-324)
    is bad input, never ``Infinity`` in JSON nor an internal error in a table: the line names
    the figure and ``inputs``, the command's real-valued options as the user gave them. The
    JSON and CSV writers refuse such a number themselves; ``rows`` hold every leaf of the
    items of ``lines_of`` (a sweep's rows are its points), so CSV checks those as it writes
    them, and the rest of the document first."""
    from specsheet.cli import streams

    if svg is not None or html is not None or fmt not in ("json", "csv"):
        not_finite(document, inputs or {})
    elif fmt == "csv":  # the rest in the writer
        not_finite(document if lines_of is None else
                   {key: value for key, value in document.items() if key != lines_of},
                   inputs or {})

    shown: list[TableView | ChartView] = []

    def drawn() -> list[TableView | ChartView]:
        if not shown:
            shown.extend(views())
        return shown

    exports: list[tuple[Literal["svg", "html"], str]] = []
    if svg is not None:
        exports.append(("svg", svg))
    if html is not None:
        exports.append(("html", html))
    if exports:
        from specsheet.cli.files import check_writable, write_whole
        from specsheet.render.export import export

        for kind, path in exports:  # every file's folder first: none is written if one fails
            check_writable(path, f"--{kind}")
        title = drawn()[0].title if drawn() else "specsheet"
        for kind, path in exports:
            write_whole(path, export(drawn(), kind, streams.terminal_width(), title))
    pieces: list[str]  # the text, written in turn (a sweep's megabytes are never one string)
    if fmt == "table":
        from specsheet.render.terminal import render_views

        pieces = [render_views(drawn(), streams.terminal_width(), streams.use_color(),
                               streams.ascii_only())]
    elif fmt in ("json", "csv"):
        from specsheet.render.text import csv_pieces, json_pieces

        try:
            pieces = json_pieces(document, lines_of) if fmt == "json" else csv_pieces(rows)
        except ValueError:  # a number that is not finite: name it and the inputs
            not_finite(document, inputs or {})
            raise
    else:
        from specsheet.render.text import to_ascii, to_markdown

        out = to_markdown(drawn())
        pieces = [to_ascii(out) if streams.ascii_only() else out]
    for piece in pieces:
        streams.write(piece)


def _non_finite(document: Any) -> tuple[str, float] | None:
    """The path and value of the first float in ``document`` that is not finite, or None. A
    section that several points share (a sweep's) is walked once; the paths are spelled only
    for a document that holds such a float (``_finite``, a walk without them, first)."""
    if _finite(document, set()):
        return None
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return path, value
            continue
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        stack.extend((f"{path}.{key}" if path else str(key), item)
                     for key, item in reversed(list(items))
                     if isinstance(item, (float, dict, list)))
    return None


def _finite(value: Any, seen: set[int]) -> bool:
    """Every float in ``value`` (a dict or list) is finite; ``seen``: the ids of the sections
    walked already. A walk with a stack, the exact types tested first (a sweep's document holds
    some ten thousand numbers)."""
    isfinite = math.isfinite
    stack = [value]
    while stack:
        section = stack.pop()
        for item in section.values() if isinstance(section, dict) else section:
            kind = type(item)
            if kind is float:
                if not isfinite(item):
                    return False
            elif kind is dict or kind is list:
                if id(item) not in seen:
                    seen.add(id(item))
                    stack.append(item)
            elif kind is int or kind is str or kind is bool or item is None:
                continue
            elif isinstance(item, float):
                if not isfinite(item):
                    return False
            elif isinstance(item, (dict, list)) and id(item) not in seen:
                seen.add(id(item))
                stack.append(item)
    return True


def not_finite(document: dict[str, Any], inputs: dict[str, object]) -> None:
    """Refuse a document that holds NaN or an infinity, naming the figure and the inputs that
    can carry a result there (``inputs``: option -> value as given, None when not given)."""
    found = _non_finite(document)
    if found is None:
        return
    path, value = found
    given = {option: given for option, given in inputs.items() if given is not None}
    extreme = {option: given for option, given in given.items() if _extreme(given)}
    named = ", ".join(f"{option} {given!r}" if isinstance(given, float) else f"{option} {given}"
                      for option, given in (extreme or given).items())
    raise SpecError(f"{path} comes out {'not a number' if math.isnan(value) else 'infinite'}"
                    f"{f' with {named}' if named else ''}: give values nearer real ones (an "
                    "efficiency far from 0, a price far below 10^308)")


def _extreme(value: object) -> bool:
    """A value given as an option that no real efficiency, price or ratio comes near."""
    try:
        number = abs(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return number != 0 and not 1e-100 < number < 1e100


def reports(refs: list[str | None], given: Overrides, tokens: int | None, dtype: str | None,
            kv_dtype: str, advice: str, quant: str | None = None,
            group_size: int | None = None, timeout: float = DEFAULT_TIMEOUT,
            images: int | None = None, image_size: str | None = None,
            shortest: bool = False) -> list[Report]:
    """A Report of each model (with ``images`` of ``image_size`` in its request); a request
    beyond a model's context gets ``advice``. Notes on how a name was read go to stderr.

    ``shortest`` (compare's one length): with no ``tokens``, every report at the shortest
    context among the models, the models read first (what ``api.compare.at_one_length``
    makes of reports built at their own contexts, without building them twice)."""
    timeout = checked_timeout(timeout)
    notes: list[str] = []
    try:
        with option_errors(advice):
            models: Iterable[Model] = (resolve(ref, given, notes, timeout) for ref in refs)
            if shortest and tokens is None and len(refs) > 1:
                models = list(models)
                tokens = min(model.spec.context for model in models)
            built = []
            for model in models:
                pictures = None
                if images is not None or image_size is not None:
                    from specsheet.api.count import images_of

                    pictures = images_of(model, images, image_size)
                built.append(build_report(model, tokens, dtype, kv_dtype, quant, group_size,
                                          pictures))
            return built
    finally:
        say_notes(notes)


def say_notes(notes: list[str]) -> None:
    """Notes on how a name was read, each once, on stderr."""
    from specsheet.cli import streams

    for note in dict.fromkeys(notes):
        streams.say(f"specsheet: note: {note}")


@contextmanager
def option_errors(advice: str) -> Iterator[None]:
    """Errors of the arithmetic, which names its arguments, in the words of the options the
    user typed; a request beyond a model's context gets ``advice``."""
    with as_options(advice=advice, fields=ARGUMENT_FIELDS):
        yield


# the arguments of the arithmetic that commands take as options of the same names
# (the quantization layouts name the group size "group size", as their messages always have)
ARGUMENT_FIELDS = ("quant", "group_size", "group size", "timeout", "dtype", "kv_dtype", "images",
                   "image_size")


# the parameters of a command that name spec fields (tied is tied_embeddings)
SPEC_OPTIONS = ("layers", "d_model", "heads", "vocab", "context", "kv_heads", "head_dim", "d_ff",
                "mlp", "norm", "attn_bias", "mlp_bias", "positions", "tied")


def checked_timeout(seconds: float) -> float:
    """``--timeout``, checked whether or not the Hub is asked (a preset never asks it)."""
    if not (seconds > 0 and math.isfinite(seconds)):
        raise SpecError(f"option --timeout: expected a number of seconds above 0, got {seconds}")
    return seconds


def overrides(settings: list[str] | None, parameters: dict[str, Any]) -> Overrides:
    """The spec fields that a command's options set (from its ``parameters``, by the names in
    SPEC_OPTIONS), each labelled with the option that set it: ``--set FIELD=VALUE`` first,
    then the named options (which win)."""
    given = settings_given(settings) if settings else given_by_options()
    for name in SPEC_OPTIONS:
        value = parameters.get(name)
        if value is None:
            continue
        field = "tied_embeddings" if name == "tied" else name
        given[field] = value
        given.origins[field] = Given("option")
    return given


def settings_given(settings: list[str]) -> Overrides:
    """The fields ``--set FIELD=VALUE`` gives, named by the CLI; errors name ``--set``."""
    from specsheet.sources.settings import parse_settings

    try:
        parsed = parse_settings(settings)
    except SpecError as e:
        raise of_set(e) from None
    return given_by_options(parsed, parsed.origins)


def source(model: str | None, hf: str | None) -> str | None:
    """The model reference: MODEL, or ``hf:ORG/NAME`` for --hf."""
    if hf is None:
        return model
    if model is not None:
        raise SpecError(f"give MODEL ({shortened(model)}) or --hf ({shortened(hf)}), not both")
    return f"hf:{hf}"
