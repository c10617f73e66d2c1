"""``specsheet sweep``: one model's figures along one or two axes (tokens, batch, dtypes,
quantization formats, any spec field), as a table, a chart, JSON or CSV.

The model is read once (once per value of a spec-field axis); a point on the tokens axis
computes only its KV cache and FLOPs again (plan/sweep.py), and points that share a part
share its JSON section, so a sweep of 1,000 points costs little more than one count.
"""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.api.defaults import DEFAULT_UTILIZATION
from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.errors import as_options, option_series
from specsheet.cli.options import (
    ATTN_BIAS_OPT,
    CONVENTIONS,
    FORMAT_OPT,
    GROUP_SIZE_OPT,
    HF_OPT,
    HTML_OPT,
    JSON_OPT,
    MLP_BIAS_OPT,
    MODEL_ARG,
    OPTION_NAMES,
    SPEC,
    SVG_OPT,
    TIED_OPT,
    TIMEOUT_OPT,
    checked_timeout,
    emit,
    option_errors,
    output_format,
    overrides,
    say_notes,
    settings_given,
    source,
)
from specsheet.cli.serving import (
    EP_OPT,
    GPU_OPT,
    GPUS_OPT,
    KV_MEMORY_OPT,
    PP_OPT,
    TP_OPT,
    UTILIZATION_OPT,
)
from specsheet.errors import SpecError, quoted
from specsheet.figures import Axis
from specsheet.sources.fields import SPEC_FIELDS, Overrides
from specsheet.units import QuantityKind

if TYPE_CHECKING:
    from specsheet.api.serve import ServeRequest
    from specsheet.views.charts import ChartView
    from specsheet.views.table import TableView

SETTINGS = {"epilog": CONVENTIONS}

SERIES = ("a range START:STOP:xFACTOR or START:STOP:+STEP, a comma list, or one value")
TOKENS_SERIES: str | None = typer.Option(
    None, "--tokens", "-t", metavar="SERIES", help=f"Tokens T in a request: {SERIES}; k = 1,024 "
    "(1k:128k:x2) [default: the model's context].", show_default=False)
BATCH_SERIES: str | None = typer.Option(
    None, "--batch", "-b", metavar="SERIES", help="Requests at once, each with its KV cache "
    "[default: 1].", show_default=False)
QUANT_LIST: str | None = typer.Option(
    None, "--quant", "-q", metavar="LIST", help="Quantization formats, comma-separated (none: a "
    "plain dtype); see count --help.", show_default=False)
DTYPE_LIST: str | None = typer.Option(
    None, "--dtype", metavar="LIST", help="Weight element types, comma-separated (bf16,fp8) "
    "[default: bf16].", show_default=False)
KV_DTYPE_LIST: str = typer.Option(
    DEFAULT_DTYPE, "--kv-dtype", metavar="LIST", help="KV-cache element types, comma-separated.")
SET_SERIES: list[str] | None = typer.Option(
    None, "--set", metavar="FIELD=VALUES", help="Set any spec field, or sweep it with a series: "
    "--set experts_per_token=1,2,4 (repeatable; a layer list such as sliding_layers=0,2,4, or "
    "layer_types, is one value; docs/models.md lists the fields).", show_default=False)


def _field(help: str) -> Any:
    return typer.Option(None, metavar="SERIES", help=f"{help}.", rich_help_panel=SPEC,
                        show_default=False)


def _choices(help: str) -> Any:
    return typer.Option(None, metavar="LIST", help=f"{help}, comma-separated.",
                        rich_help_panel=SPEC, show_default=False)


# the choice fields whose option takes a list of names (the rest: --set FIELD=VALUES)
CHOICES = ("mlp", "norm", "positions")


def sweep(
    model: str | None = MODEL_ARG,
    hf: str | None = HF_OPT,
    tokens: str | None = TOKENS_SERIES,
    batch: str | None = BATCH_SERIES,
    quant: str | None = QUANT_LIST,
    group_size: int | None = GROUP_SIZE_OPT,
    dtype: str | None = DTYPE_LIST,
    kv_dtype: str = KV_DTYPE_LIST,
    gpu: str | None = GPU_OPT,
    gpus: int | None = GPUS_OPT,
    tp: int | None = TP_OPT,
    pp: int | None = PP_OPT,
    ep: bool = EP_OPT,
    memory_utilization: str = UTILIZATION_OPT,
    kv_memory: str | None = KV_MEMORY_OPT,
    fmt: str | None = FORMAT_OPT,
    timeout: float = TIMEOUT_OPT,
    json_: bool = JSON_OPT,
    svg: str | None = SVG_OPT,
    html: str | None = HTML_OPT,
    layers: str | None = _field("Layers L"),
    d_model: str | None = _field("Hidden size d"),
    heads: str | None = _field("Attention heads h"),
    vocab: str | None = _field("Vocabulary size V"),
    context: str | None = _field("Context length n_max (k = 1,024)"),
    kv_heads: str | None = _field("Key/value heads"),
    head_dim: str | None = _field("Head size"),
    d_ff: str | None = typer.Option(
        None, "--d-ff", metavar="SERIES", help="MLP width.", rich_help_panel=SPEC,
        show_default=False),
    mlp: str | None = _choices("MLP kinds: plain, gated"),
    norm: str | None = _choices("Norms: layernorm, rmsnorm, none"),
    positions: str | None = _choices("Positions: learned, rotary, alibi, none"),
    attn_bias: bool | None = ATTN_BIAS_OPT,
    mlp_bias: bool | None = MLP_BIAS_OPT,
    tied: bool | None = TIED_OPT,
    settings: list[str] | None = SET_SERIES,
) -> None:
    """One model's memory and compute along one or two axes: the tokens, the batch, weight or
    KV dtypes, quantization formats, or any spec field. A row per point, a chart of weights +
    KV cache, or every point's count document with --json. With --gpu, each point is serve's
    plan for requests of T tokens (--max-model-len) and the batch at once (--concurrency):
    weights and KV per GPU against the GPU's budget, and serve's document with --json.

    Examples: 'specsheet sweep llama3.1-8b --tokens 1k:128k:x2 --gpu h100-sxm',
    'specsheet sweep gpt2-small --d-model 768:3072:x2 --layers 12,24,48 --json',
    'specsheet sweep llama3-8b --quant none,gptq-int4,gguf-q4_k_m --batch 1,8,32'.
    """
    output = output_format(fmt, json_)
    timeout = checked_timeout(timeout)
    request = _serve_request(gpu, gpus, tp, pp, ep, memory_utilization, kv_memory)
    named = {"layers": layers, "d_model": d_model, "heads": heads, "vocab": vocab,
             "context": context, "kv_heads": kv_heads, "head_dim": head_dim, "d_ff": d_ff,
             "mlp": mlp, "norm": norm, "positions": positions}
    candidates, fixed, by_set = _axes(tokens, batch, quant, dtype, kv_dtype, named, settings,
                                      {"attn_bias": attn_bias, "mlp_bias": mlp_bias,
                                       "tied": tied})
    from specsheet.api.sweep import order_axes

    axes = order_axes(candidates, by_set)
    if gpu is not None:
        from specsheet.api.hardware import load_gpu

        with as_options():
            load_gpu(gpu)
    single = {a.name: a.values[0] for a in candidates if len(a.values) == 1}
    tokens_axis = any(a.name == "tokens" for a in axes)
    advice = ("lower the stop of --tokens or raise the context with --context" if tokens_axis
              else "lower --tokens or raise the context with --context")
    # The cyclic collector paused through the grid, the document and its text: a sweep of
    # 1,000 points makes some 100,000 small objects that hold no cycles (api.collection).
    from specsheet.api.collection import no_cyclic_collection

    with no_cyclic_collection():
        _swept(model, hf, axes, single, fixed, group_size, timeout, by_set, advice, gpu,
               request, tp, output, svg, html)


def _swept(model: str | None, hf: str | None, axes: list[Axis], single: dict[str, Any],
           fixed: Overrides, group_size: int | None, timeout: float, by_set: set[str],
           advice: str, gpu: str | None, request: "ServeRequest | None", tp: int | None,
           output: str, svg: str | None, html: str | None) -> None:
    """The grid of ``sweep``, its document and its output (the options as ``sweep`` read
    them)."""
    from specsheet.api.sweep import finish, grid

    notes: list[str] = []
    try:
        with option_errors(advice):
            points = grid(source(model, hf), axes, single, fixed, group_size, timeout, notes,
                          by_set)
    finally:
        say_notes(notes)
    with as_options({"tp": "option --gpus (tp = gpus / pp)"} if tp is None else None):
        result = finish(axes, points, gpu, request, group_size, by_set)
    document = result.to_dict()
    accelerator = result.gpu
    served = None if result.served is None else [(s.plan, s.estimates, s.costs)
                                                 for s in result.served]

    def views() -> "list[TableView | ChartView]":
        from specsheet.views.charts import memory_charts
        from specsheet.views.sweep import sweep_view

        return [sweep_view(axes, points, accelerator, served, OPTION_NAMES),
                *memory_charts(axes, points, accelerator, served)]

    rows = [{"at": point["at"], "batch": p.batch, **point["report"]}
            for point, p in zip(document["points"], points, strict=True)] \
        if output == "csv" else []
    emit(output, document, rows, views, svg=svg, html=html, lines_of="points")


def _names(text: str, option: str) -> list[str]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise SpecError(f"option {option}: {quoted(text)} has an empty value; expected names "
                        "separated by commas")
    return list(dict.fromkeys(items))


def _axes(tokens: str | None, batch: str | None, quant: str | None, dtype: str | None,
          kv_dtype: str, named: dict[str, str | None], settings: list[str] | None,
          flags: dict[str, bool | None]) -> tuple[list[Axis], Overrides, set[str]]:
    """Every option that may be an axis with its values (one value: fixed), the spec
    overrides that are fixed (the flags, layer lists and layer_types, and --set of one value),
    and the spec fields given a series by --set."""
    axes = []
    by_set = set()
    if tokens is not None:
        axes.append(Axis("tokens", tuple(option_series(tokens, "tokens", "--tokens"))))
    axes.append(Axis("batch", tuple(option_series(batch, "count", "--batch")) if batch
                     else (1,)))
    for name, text in named.items():
        if text is None:
            continue
        option = f"--{name.replace('_', '-')}"
        if name in CHOICES:
            axes.append(Axis(name, tuple(_names(text, option))))
        else:
            kind: QuantityKind = "tokens" if name == "context" else "count"
            axes.append(Axis(name, tuple(option_series(text, kind, option))))
    fixed_settings = []
    for setting in settings or []:
        name, sep, text = setting.partition("=")
        name = name.strip().replace("-", "_")
        doc = SPEC_FIELDS.get(name)
        if not sep or doc is None or doc.type in ("layers", "kinds") or ("," not in text and
                                                              ":" not in text):
            fixed_settings.append(setting)  # parse_settings checks it, as count does
            continue
        option = f"--set {name}"
        if doc.type in ("int", "count"):
            values = option_series(text, "count", option, minimum=1 if doc.type == "int" else 0)
        else:
            values = [settings_given([f"{name}={item}"])[name] for item in _names(text, option)]
        axes.append(Axis(name, tuple(values)))
        by_set.add(name)
    given = [a.name for a in axes if a.name in SPEC_FIELDS]
    repeated = {name for name in given if given.count(name) > 1}
    if repeated:
        name = sorted(repeated)[0]
        raise SpecError(f"field {name} is given twice (its option and --set); give it once")
    axes.append(Axis("dtype", tuple(_names(dtype, "--dtype")) if dtype else (None,)))
    axes.append(Axis("quant", tuple(None if q == "none" else q
                                    for q in _names(quant, "--quant")) if quant else (None,)))
    axes.append(Axis("kv_dtype", tuple(_names(kv_dtype, "--kv-dtype"))))
    return axes, overrides(fixed_settings, flags), by_set


def _serve_request(gpu: str | None, gpus: int | None, tp: int | None, pp: int | None,
                   ep: bool, memory_utilization: str, kv_memory: str | None
                   ) -> "ServeRequest | None":
    """serve's request at every point (the tokens and the batch are the point's), or None
    without --gpu; a layout or memory option without --gpu is an error."""
    if gpu is None:
        given = [option for option, value in (
            ("--gpus", gpus), ("--tp", tp), ("--pp", pp), ("--ep", ep or None),
            ("--memory-utilization",
             None if memory_utilization == DEFAULT_UTILIZATION else memory_utilization),
            ("--kv-memory", kv_memory)) if value is not None]
        if given:
            raise SpecError(f"option {given[0]}: plans serving, which needs --gpu (an "
                            "accelerator such as h100-sxm, or a hardware YAML file)")
        return None
    from specsheet.api.serve import ServeRequest, check_request

    request = ServeRequest(gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep,
                           memory_utilization=memory_utilization, kv_memory=kv_memory)
    with as_options():
        check_request(request)
    return request
