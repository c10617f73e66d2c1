"""The ``specsheet`` command: parse options, build reports, hand them to a renderer.

Errors are turned into one stderr line and an exit code in one place, ``SpecsheetGroup.main``.
"""

import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from specsheet import __version__
from specsheet.errors import ExitCode, SpecError, did_you_mean
from specsheet.memory import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.report import SCHEMA_VERSION, Report, build_report, compare_dict, report_dict
from specsheet.sources import resolve

if TYPE_CHECKING:
    from specsheet.views import TableView

CONVENTIONS = (
    "Parameters count every weight and bias (a tied output head once). FLOPs per token at "
    "context T: matrix multiplications only, a multiply-add is 2 FLOPs, each token attends to "
    "all T positions (no causal halving). Bytes in SI units (1 GB = 10^9 B)."
)


_COMMANDS: dict[str, tuple[Callable[..., None], dict[str, Any]]] = {}


def command(**settings: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register a subcommand. typer builds it only when it runs (or a help lists it), so one
    invocation does not pay for the options of every other command."""
    def register(function: Callable[..., None]) -> Callable[..., None]:
        _COMMANDS[function.__name__] = (function, settings)
        return function
    return register


@cache
def _build(name: str) -> Any:
    """The click command of subcommand ``name``, built by typer once per process."""
    function, settings = _COMMANDS[name]
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                         rich_markup_mode=None)
    single.command(name=name, **settings)(function)
    return typer.main.get_command(single)


class SpecsheetGroup(TyperGroup):
    """The ``specsheet`` group: builds subcommands lazily, and turns every failure into one
    line on stderr and an exit code."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in _COMMANDS:
            raise SpecError(f"unknown command '{cmd_name}'{did_you_mean(cmd_name, _COMMANDS)}; "
                            f"the commands are {', '.join(_COMMANDS)}")
        return _build(cmd_name)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        try:
            code = super().main(args=args, prog_name=prog_name or "specsheet",
                                complete_var=complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        except SpecError as e:
            code = _fail(str(e))
        except typer.Abort:
            code = _fail("aborted")
        except BrokenPipeError:  # the reader went away (specsheet ... | head): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = ExitCode.OK
        except Exception as e:  # click's usage errors, bundled inside typer
            if not hasattr(e, "format_message"):
                raise
            if type(e).__name__ == "NoArgsIsHelpError":  # bare 'specsheet': the help, on stderr
                print(e.format_message(), file=sys.stderr)
                return _exit(ExitCode.BAD_INPUT, standalone_mode)
            ctx = getattr(e, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            code = _fail(f"{e.format_message()}{hint}", getattr(e, "exit_code", ExitCode.BAD_INPUT))
        return _exit(code if isinstance(code, int) else ExitCode.OK, standalone_mode)


def _exit(code: int, standalone_mode: bool) -> int:
    if not standalone_mode:
        return code
    sys.exit(code)


def _fail(message: str, code: int = ExitCode.BAD_INPUT) -> int:
    """Print ``message`` as one line on stderr (white space folded) and return ``code``."""
    print(f"specsheet: error: {' '.join(message.split())}", file=sys.stderr)
    return code


app = typer.Typer(
    cls=SpecsheetGroup,
    help="Exact parameter, memory, KV-cache and FLOP spec sheets for decoder-only transformers.",
    epilog=CONVENTIONS,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"specsheet {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Exact spec sheets for decoder-only transformer language models."""


# ---- shared options ------------------------------------------------------------------------

DTYPES = ", ".join(DTYPE_BITS)
TokensOpt = Annotated[int | None, typer.Option(
    "--tokens", "-t", min=1, help="Tokens T in a request, for the KV cache and FLOPs "
    "[default: the model's context].")]
DtypeOpt = Annotated[str, typer.Option("--dtype", help=f"Weight element type: {DTYPES}.")]
KvDtypeOpt = Annotated[str, typer.Option("--kv-dtype", help=f"KV-cache element type: {DTYPES}.")]
JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Short for --format json: one JSON document, exact integers.")]

SPEC = "Spec (overrides a preset's value)"
LayersOpt = Annotated[int | None, typer.Option(help="Layers L.", rich_help_panel=SPEC)]
DModelOpt = Annotated[int | None, typer.Option(help="Hidden size d.", rich_help_panel=SPEC)]
HeadsOpt = Annotated[int | None, typer.Option(help="Attention heads h.", rich_help_panel=SPEC)]
VocabOpt = Annotated[int | None, typer.Option(help="Vocabulary size V.", rich_help_panel=SPEC)]
ContextOpt = Annotated[int | None, typer.Option(help="Context length n_max.", rich_help_panel=SPEC)]
KvHeadsOpt = Annotated[int | None, typer.Option(help="Key/value heads [default: heads].")]
HeadDimOpt = Annotated[int | None, typer.Option(help="Head size [default: d / heads].")]
DffOpt = Annotated[int | None, typer.Option("--d-ff", help="MLP width [default: 4 x d].")]
MlpOpt = Annotated[str | None, typer.Option(help="MLP kind: plain (2 matrices) or gated "
                                                 "(3, SwiGLU) [default: plain].")]
NormOpt = Annotated[str | None, typer.Option(help="Norm: layernorm, rmsnorm or none "
                                                  "[default: layernorm].")]
AttnBiasOpt = Annotated[bool | None, typer.Option("--attn-bias/--no-attn-bias",
                                                  help="Attention biases [default: yes].")]
MlpBiasOpt = Annotated[bool | None, typer.Option("--mlp-bias/--no-mlp-bias",
                                                 help="MLP biases [default: yes].")]
PositionsOpt = Annotated[str | None, typer.Option(help="Positions: learned, rotary or none "
                                                       "[default: learned].")]
TiedOpt = Annotated[bool | None, typer.Option("--tied/--untied",
                                              help="Output head tied to the token embedding "
                                                   "[default: tied].")]


FORMATS = ("table", "json", "csv", "markdown")
FormatOpt = Annotated[str | None, typer.Option(
    "--format", "-f", help="Output: table (default), json, csv or markdown.",
    show_default=False)]


def _format(fmt: str | None, json_: bool) -> str:
    """The output format from --format and its short form --json."""
    if fmt is not None and fmt not in FORMATS:
        raise SpecError(f"option --format: unknown format {fmt!r}{did_you_mean(fmt, FORMATS)}; "
                        f"expected one of {', '.join(FORMATS)}")
    if json_ and fmt not in (None, "json"):
        raise SpecError(f"--json contradicts --format {fmt}; give one of them")
    return "json" if json_ else fmt or "table"


def _emit(fmt: str, document: dict[str, Any], rows: list[dict[str, Any]],
          views: "Callable[[], list[TableView]]") -> None:
    """Write the command's result to stdout in ``fmt``; everything is computed beforehand."""
    if fmt == "table":
        from specsheet.render_rich import print_views

        print_views(views())
        return
    from specsheet import formats

    if fmt == "json":
        text = formats.to_json(document)
    elif fmt == "csv":
        text = formats.to_csv([formats.flatten(row) for row in rows])
    else:
        text = formats.to_markdown(views())
    sys.stdout.write(text)


def _reports(refs: list[str | None], overrides: dict[str, Any], tokens: int | None, dtype: str,
             kv_dtype: str) -> list[Report]:
    return [build_report(resolve(ref, overrides), tokens, dtype, kv_dtype) for ref in refs]


def _overrides(settings: list[str] | None, **options: Any) -> dict[str, Any]:
    """The spec fields that options set: ``--set FIELD=VALUE`` first, then the named options."""
    from specsheet.sources import parse_settings

    fields = {"tied": "tied_embeddings"}
    named = {fields.get(name, name): value for name, value in options.items()
             if value is not None}
    return {**parse_settings(settings or []), **named}


def _source(model: str | None, hf: str | None) -> str | None:
    """The model reference: MODEL, or ``hf:ORG/NAME`` for --hf."""
    if hf is None:
        return model
    if model is not None:
        raise SpecError(f"give MODEL ({model}) or --hf ({hf}), not both")
    return f"hf:{hf}"


# ---- commands ----------------------------------------------------------------------------------

def _complete_preset(incomplete: str) -> list[str]:
    """Shell completion for a model argument: the preset names that start with ``incomplete``."""
    from specsheet.presets import preset_index

    return [name for name in preset_index() if name.startswith(incomplete)]


ModelArg = Annotated[str | None, typer.Argument(
    help="A preset name (see 'specsheet presets'), a preset YAML file, a config.json or a model "
         "folder holding one, or hf:ORG/NAME. Leave out to give the five numbers as options.",
    show_default=False, autocompletion=_complete_preset)]
HfOpt = Annotated[str | None, typer.Option(
    "--hf", help="Read ORG/NAME's config.json from the local Hugging Face cache (never the "
    "network).", show_default=False)]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Set any spec field, e.g. --set experts=8 --set sliding_layers=0,2,4 "
    "(repeatable; see the README's preset fields).", show_default=False)]


@command(epilog=CONVENTIONS)
def count(
    model: ModelArg = None,
    hf: HfOpt = None,
    tokens: TokensOpt = None,
    dtype: DtypeOpt = DEFAULT_DTYPE,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    layers: LayersOpt = None,
    d_model: DModelOpt = None,
    heads: HeadsOpt = None,
    vocab: VocabOpt = None,
    context: ContextOpt = None,
    kv_heads: KvHeadsOpt = None,
    head_dim: HeadDimOpt = None,
    d_ff: DffOpt = None,
    mlp: MlpOpt = None,
    norm: NormOpt = None,
    attn_bias: AttnBiasOpt = None,
    mlp_bias: MlpBiasOpt = None,
    positions: PositionsOpt = None,
    tied: TiedOpt = None,
    settings: SetOpt = None,
) -> None:
    """Where one model's parameters live, its weight and KV-cache memory, and its FLOPs.

    Examples: 'specsheet count gpt2-small', 'specsheet count llama3-8b --tokens 32768
    --context 32768', 'specsheet count --layers 12 --d-model 768 --heads 12 --vocab 50257
    --context 1024'.
    """
    output = _format(fmt, json_)
    overrides = _overrides(
        settings, layers=layers, d_model=d_model, heads=heads, vocab=vocab, context=context,
        kv_heads=kv_heads, head_dim=head_dim, d_ff=d_ff, mlp=mlp, norm=norm,
        attn_bias=attn_bias, mlp_bias=mlp_bias, positions=positions, tied=tied)
    (report,) = _reports([_source(model, hf)], overrides, tokens, dtype, kv_dtype)
    document = report_dict(report)

    def views() -> "list[TableView]":
        from specsheet.views import count_views

        return count_views(report)

    _emit(output, document, [document], views)


@command(epilog=CONVENTIONS)
def compare(
    models: Annotated[list[str], typer.Argument(
        help="Two or more preset names or preset YAML files.", show_default=False,
        autocompletion=_complete_preset)],
    tokens: TokensOpt = None,
    dtype: DtypeOpt = DEFAULT_DTYPE,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Models side by side: every figure of count, with ratios to the first model.

    Example: 'specsheet compare llama3-8b llama3-70b'.
    """
    output = _format(fmt, json_)
    if len(models) < 2:
        raise SpecError("compare needs two or more models; use 'specsheet count' for one")
    reports = _reports(list(models), {}, tokens, dtype, kv_dtype)
    document = compare_dict(reports)

    def views() -> "list[TableView]":
        from specsheet.views import compare_view

        return [compare_view(reports)]

    _emit(output, document, document["models"], views)


@command()
def convert(
    model: Annotated[str, typer.Argument(
        help="A config.json, a model folder, hf:ORG/NAME, a preset name or a preset file.",
        show_default=False, autocompletion=_complete_preset)],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the preset to this file instead of stdout.",
        show_default=False)] = None,
) -> None:
    """Write a model as a preset YAML file, to keep and edit.

    Example: 'specsheet convert ./Llama-3.1-8B/config.json -o llama31.yaml'.
    """
    from specsheet.convert import to_yaml

    text = to_yaml(resolve(model))
    if output is None:
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise SpecError(f"{output}: cannot write: {e.strerror}") from None
    print(f"wrote {output}", file=sys.stderr)


@command()
def presets(fmt: FormatOpt = None, json_: JsonOpt = False) -> None:
    """List the built-in presets: name, L, d, heads, KV heads, vocab, context, total."""
    from specsheet.presets import preset_index

    output = _format(fmt, json_)
    reports = _reports(list(preset_index()), {}, None, DEFAULT_DTYPE, DEFAULT_DTYPE)
    reports.sort(key=lambda r: (r.model.name.split("-")[0], r.params.total))
    entries = [_preset_entry(r) for r in reports]

    def views() -> "list[TableView]":
        from specsheet.views import presets_view

        return [presets_view(reports)]

    _emit(output, {"schema_version": SCHEMA_VERSION, "presets": entries}, entries, views)


def _preset_entry(report: Report) -> dict[str, Any]:
    model = report.model
    return {"name": model.name, "description": model.description,
            "reference": model.reference, "published_total": model.published_total,
            "total": report.params.total, "spec": model.spec.as_dict()}


LIMITS = "Limits (exit 1 when one is exceeded; equal holds)"


@command(epilog="Quantities: integers, 1.5e9, SI suffixes k, M, G (B for a billion "
             "parameters), T; bytes also KB, MB, GB, TB (SI) and KiB, MiB, GiB, TiB (binary). "
             "Exit codes: 0 within every limit, 1 a limit exceeded, 2 bad input.")
def check(
    model: ModelArg = None,
    hf: HfOpt = None,
    max_params: Annotated[str | None, typer.Option(
        help="Most parameters, e.g. 8B.", rich_help_panel=LIMITS)] = None,
    max_weights: Annotated[str | None, typer.Option(
        help="Most weight bytes in --dtype, e.g. 16GB.", rich_help_panel=LIMITS)] = None,
    max_kv: Annotated[str | None, typer.Option(
        help="Most KV-cache bytes for one request of --tokens, e.g. 1GiB.",
        rich_help_panel=LIMITS)] = None,
    max_flops: Annotated[str | None, typer.Option(
        help="Most forward FLOPs per token at --tokens, e.g. 20G.",
        rich_help_panel=LIMITS)] = None,
    tokens: TokensOpt = None,
    dtype: DtypeOpt = DEFAULT_DTYPE,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    layers: LayersOpt = None,
    d_model: DModelOpt = None,
    heads: HeadsOpt = None,
    vocab: VocabOpt = None,
    context: ContextOpt = None,
    kv_heads: KvHeadsOpt = None,
    head_dim: HeadDimOpt = None,
    d_ff: DffOpt = None,
    mlp: MlpOpt = None,
    norm: NormOpt = None,
    attn_bias: AttnBiasOpt = None,
    mlp_bias: MlpBiasOpt = None,
    positions: PositionsOpt = None,
    tied: TiedOpt = None,
    settings: SetOpt = None,
) -> None:
    """Check a model against budgets: exit 0 when every limit holds, 1 when one is exceeded.

    Example: 'specsheet check llama3-8b --tokens 8192 --max-weights 17GB --max-kv 1GiB'.
    """
    from specsheet.budgets import BUDGETS_BY_OPTION, check_dict, run_checks
    from specsheet.quantities import parse_quantity

    output = _format(fmt, json_)
    given = {"--max-params": max_params, "--max-weights": max_weights, "--max-kv": max_kv,
             "--max-flops": max_flops}
    limits = {option: parse_quantity(text, BUDGETS_BY_OPTION[option].kind, option)
              for option, text in given.items() if text is not None}
    if not limits:
        raise SpecError(f"check needs at least one limit: {', '.join(given)}")
    overrides = _overrides(
        settings, layers=layers, d_model=d_model, heads=heads, vocab=vocab, context=context,
        kv_heads=kv_heads, head_dim=head_dim, d_ff=d_ff, mlp=mlp, norm=norm,
        attn_bias=attn_bias, mlp_bias=mlp_bias, positions=positions, tied=tied)
    (report,) = _reports([_source(model, hf)], overrides, tokens, dtype, kv_dtype)
    results = run_checks(report, limits)
    document = check_dict(report, results)

    def views() -> "list[TableView]":
        from specsheet.views import check_view

        return [check_view(report, results)]

    rows = [{"name": report.model.name, **check} for check in document["checks"]]
    _emit(output, document, rows, views)
    if not document["ok"]:
        raise typer.Exit(ExitCode.CHECK_FAILED)


def main() -> None:
    """Console-script entry point (``specsheet`` and ``python -m specsheet``).

    It flushes stdout and stderr and leaves with ``os._exit``: a short-lived command gains
    nothing from tearing the interpreter down, which costs about 10 ms once typer is loaded.
    Nothing here registers atexit handlers or leaves files open for writing.
    """
    code: int = ExitCode.OK
    try:
        app()
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)
