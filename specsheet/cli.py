"""The ``specsheet`` command: parse options, build reports, hand them to a renderer.

Errors are turned into one stderr line and an exit code in one place, ``SpecsheetGroup.main``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from specsheet import __version__
from specsheet.errors import ExitCode, SpecError
from specsheet.memory import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.report import SCHEMA_VERSION, Report, build_report, compare_dict, report_dict
from specsheet.sources import resolve

CONVENTIONS = (
    "Parameters count every weight and bias (a tied output head once). FLOPs per token at "
    "context T: matrix multiplications only, a multiply-add is 2 FLOPs, each token attends to "
    "all T positions (no causal halving). Bytes in SI units (1 GB = 10^9 B)."
)


class SpecsheetGroup(TyperGroup):
    """Runs a command and turns every failure into one line on stderr and an exit code."""

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
    print(f"specsheet: error: {message}", file=sys.stderr)
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
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document (exact integers).")]

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


def _print_json(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")


def _reports(refs: list[str | None], overrides: dict[str, Any], tokens: int | None, dtype: str,
             kv_dtype: str) -> list[Report]:
    return [build_report(resolve(ref, overrides), tokens, dtype, kv_dtype) for ref in refs]


# ---- commands ----------------------------------------------------------------------------------

@app.command(epilog=CONVENTIONS)
def count(
    model: Annotated[str | None, typer.Argument(
        help="A preset name (see 'specsheet presets') or a preset YAML file. Leave out to give "
             "the five numbers as options.", show_default=False)] = None,
    tokens: TokensOpt = None,
    dtype: DtypeOpt = DEFAULT_DTYPE,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
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
) -> None:
    """Where one model's parameters live, its weight and KV-cache memory, and its FLOPs.

    Examples: 'specsheet count gpt2-small', 'specsheet count llama3-8b --tokens 32768
    --context 32768', 'specsheet count --layers 12 --d-model 768 --heads 12 --vocab 50257
    --context 1024'.
    """
    overrides = {
        name: value for name, value in {
            "layers": layers, "d_model": d_model, "heads": heads, "vocab": vocab,
            "context": context, "kv_heads": kv_heads, "head_dim": head_dim, "d_ff": d_ff,
            "mlp": mlp, "norm": norm, "attn_bias": attn_bias, "mlp_bias": mlp_bias,
            "positions": positions, "tied_embeddings": tied,
        }.items() if value is not None
    }
    (report,) = _reports([model], overrides, tokens, dtype, kv_dtype)
    if json_:
        _print_json(report_dict(report))
        return
    from specsheet.render_rich import print_views
    from specsheet.views import count_views

    print_views(count_views(report))


@app.command(epilog=CONVENTIONS)
def compare(
    models: Annotated[list[str], typer.Argument(
        help="Two or more preset names or preset YAML files.", show_default=False)],
    tokens: TokensOpt = None,
    dtype: DtypeOpt = DEFAULT_DTYPE,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    json_: JsonOpt = False,
) -> None:
    """Models side by side: every figure of count, with ratios to the first model.

    Example: 'specsheet compare llama3-8b llama3-70b'.
    """
    if len(models) < 2:
        raise SpecError("compare needs two or more models; use 'specsheet count' for one")
    reports = _reports(list(models), {}, tokens, dtype, kv_dtype)
    if json_:
        _print_json(compare_dict(reports))
        return
    from specsheet.render_rich import print_views
    from specsheet.views import compare_view

    print_views([compare_view(reports)])


@app.command()
def presets(json_: JsonOpt = False) -> None:
    """List the built-in presets: name, L, d, heads, KV heads, vocab, context, total."""
    from specsheet.presets import preset_index

    reports = _reports(list(preset_index()), {}, None, DEFAULT_DTYPE, DEFAULT_DTYPE)
    reports.sort(key=lambda r: (r.model.name.split("-")[0], r.params.total))
    if json_:
        _print_json({"schema_version": SCHEMA_VERSION,
                     "presets": [_preset_entry(r) for r in reports]})
        return
    from specsheet.render_rich import print_views
    from specsheet.views import presets_view

    print_views([presets_view(reports)])


def _preset_entry(report: Report) -> dict[str, Any]:
    model = report.model
    return {"name": model.name, "description": model.description,
            "reference": model.reference, "published_total": model.published_total,
            "total": report.params.total, "spec": model.spec.as_dict()}


def main() -> None:
    """Console-script entry point."""
    app()
