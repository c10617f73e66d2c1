"""``specsheet check``: budgets for CI; exit 0 when every limit holds, 1 when one is exceeded."""

from typing import TYPE_CHECKING, Any

import typer

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    DTYPE_OPT,
    FORMAT_OPT,
    GROUP_SIZE_OPT,
    JSON_OPT,
    KV_DTYPE_OPT,
    QUANT_OPT,
    complete_preset,
    emit,
    output_format,
    parse_tokens,
    reports,
)
from specsheet.cli.serving import (
    CONCURRENCY_OPT,
    EP_OPT,
    GPU_OPT,
    GPUS_OPT,
    KV_MEMORY_OPT,
    MAX_MODEL_LEN_OPT,
    MBU_OPT,
    MFU_OPT,
    OUTPUT_OPT,
    PP_OPT,
    PROMPT_OPT,
    SERVE,
    TP_OPT,
    UTILIZATION_OPT,
)
from specsheet.errors import ExitCode, SpecError

if TYPE_CHECKING:
    from specsheet.views.table import TableView

LIMITS = "Limits (exit 1 when one is exceeded; equal holds)"
SETTINGS: dict[str, Any] = {
    "epilog": "Quantities: integers (1,024 and 1_024 too), 1.5e9, SI suffixes k, K, M, G (B for "
              "a billion parameters), T, P; bytes also KB, MB, GB, TB (SI) and Ki, Mi, Gi, Ti, "
              "KiB, MiB, GiB, TiB (binary); a unit may follow (16 GB, 20 GFLOP). Exit codes: 0 "
              "within every limit, 1 a limit exceeded, 2 bad input."}


@model_options
def check(
    models: list[str] | None = typer.Argument(
        None,
        help="One or more models (preset names, files, folders, hf:ORG/NAME); each is checked "
             "against every limit. Leave out to give the five numbers as options.",
        show_default=False, autocompletion=complete_preset),
    max_params: str | None = typer.Option(
        None, help="Most parameters, e.g. 8B.", rich_help_panel=LIMITS),
    max_weights: str | None = typer.Option(
        None, help="Most weight bytes in --dtype, e.g. 16GB.", rich_help_panel=LIMITS),
    max_kv: str | None = typer.Option(
        None, help="Most KV-cache bytes for one request of --tokens, e.g. 1GiB.",
        rich_help_panel=LIMITS),
    max_flops: str | None = typer.Option(
        None, help="Most forward FLOPs per token at --tokens, e.g. 20G.",
        rich_help_panel=LIMITS),
    min_concurrency: int | None = typer.Option(
        None, help="With --gpu: fewest requests of --tokens the KV pool must hold at once.",
        rich_help_panel=LIMITS, show_default=False),
    max_ttft: str | None = typer.Option(
        None, "--max-ttft",
        help="With --gpu: most seconds to the first token of a --prompt request "
        "(a roofline estimate), e.g. 0.5 or 500ms.", rich_help_panel=LIMITS,
        show_default=False),
    min_tokens_per_s: float | None = typer.Option(
        None, "--min-tokens-per-s", help="With --gpu: fewest output tokens/s per request at "
        "--concurrency (a roofline estimate).", rich_help_panel=LIMITS,
        show_default=False),
    min_ctx: int | None = typer.Option(
        None, "--min-ctx", parser=parse_tokens, metavar="T",
        help="With --engine: the least context "
        "that must fit at the placement (8192, 32k).", rich_help_panel=LIMITS,
        show_default=False),
    min_gpu_layers: int | None = typer.Option(
        None, "--min-gpu-layers",
        help="With --engine: the fewest layers that must fit on the GPUs.",
        rich_help_panel=LIMITS, show_default=False),
    engine: str | None = typer.Option(
        None, "--engine", help="llama.cpp or ollama: check a local placement as 'specsheet fit' "
        "makes it, on the GPUs --gpu names (NAME[,NAME...]).", show_default=False),
    gpu: str | None = GPU_OPT,
    gpus: int | None = GPUS_OPT,
    tp: int | None = TP_OPT,
    pp: int | None = PP_OPT,
    ep: bool = EP_OPT,
    tokens: int | None = MAX_MODEL_LEN_OPT,
    prompt: int | None = PROMPT_OPT,
    output_tokens: int | None = OUTPUT_OPT,
    concurrency: int | None = CONCURRENCY_OPT,
    memory_utilization: str = UTILIZATION_OPT,
    kv_memory: str | None = KV_MEMORY_OPT,
    mfu: float = MFU_OPT,
    mbu: float = MBU_OPT,
    quant: str | None = QUANT_OPT,
    group_size: int | None = GROUP_SIZE_OPT,
    dtype: str | None = DTYPE_OPT,
    kv_dtype: str = KV_DTYPE_OPT,
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Check models against budgets: exit 0 when every limit holds, 1 when one is exceeded.

    Example: 'specsheet check llama3-8b --tokens 8192 --max-weights 17GB --max-kv 1GiB'.
    """
    from specsheet.api.check import LIMIT_OPTIONS, ServeLimits, check, limit_kinds
    from specsheet.api.serve import ServeRequest, check_request
    from specsheet.cli.errors import as_options, option_quantity, option_seconds
    from specsheet.views.check import check_entries, serve_check_entries

    output = output_format(fmt, json_)
    if engine is not None or min_ctx is not None or min_gpu_layers is not None:
        if engine is None:
            raise SpecError("options --min-ctx and --min-gpu-layers need --engine")
        others = (max_params, max_weights, max_kv, max_flops, min_concurrency, max_ttft,
                  min_tokens_per_s, gpus, tp, pp, concurrency, kv_memory)
        if any(v is not None for v in others):
            raise SpecError("with --engine, check takes --gpu, --quant, --min-ctx and "
                            "--min-gpu-layers")
        from specsheet.cli.local import local_check

        local_check(src, list(models or []), engine, gpu, quant, min_ctx, min_gpu_layers,
                    output)
        return
    given = {"params.total": max_params, "memory.weights_bytes": max_weights,
             "kv_cache.bytes_per_request": max_kv, "flops.forward_per_token": max_flops}
    kinds = limit_kinds()
    limits = {name: option_quantity(text, kinds[name], LIMIT_OPTIONS[name])  # type: ignore[arg-type]
              for name, text in given.items() if text is not None}
    serve_limits = ServeLimits(min_concurrency, option_seconds(max_ttft, "--max-ttft"),
                               min_tokens_per_s)
    for name, value in serve_limits._asdict().items():
        if value is not None:
            option = f"--{name.replace('_', '-')}"
            if gpu is None:
                raise SpecError(f"option {option}: a serving limit needs --gpu")
            if not (value > 0 and value != float("inf")):
                raise SpecError(f"option {option}: expected a number above 0, got {value:g}")
    request = None
    if gpu is not None:
        request = ServeRequest(gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep,
                               max_model_len=tokens, prompt=prompt, output=output_tokens,
                               concurrency=concurrency, memory_utilization=memory_utilization,
                               kv_memory=kv_memory, mfu=mfu, mbu=mbu)
        with as_options():
            check_request(request)
    elif any(v is not None for v in (gpus, tp, pp, concurrency, kv_memory)):
        raise SpecError(f"the options of the '{SERVE}' panel need --gpu")
    if not limits and request is None:
        options = ", ".join(LIMIT_OPTIONS[name] for name in given)
        raise SpecError(f"check needs at least one limit: {options}, or --gpu "
                        f"(with {', '.join(LIMIT_OPTIONS[n] for n in _SERVE_LIMITS)})")
    computed = reports(src.refs(models), src.overrides(), tokens, dtype, kv_dtype,
                       "lower --tokens or raise the context with --context", quant, group_size,
                       src.timeout)
    with as_options(_LABELS if tp is None else None):
        checked = check(computed, limits, request, serve_limits, group_size)
    document = checked.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.check import check_view, serve_check_view

        tables = []
        for index, (report, results) in enumerate(checked.checked):
            if results:
                tables.append(check_view(report, results))
            if checked.served:
                served, serve_results = checked.served[index]
                tables.append(serve_check_view(*served, serve_results))
        return tables

    rows = [{"name": report.model.name, **entry}
            for report, results in checked.checked
            for entry in check_entries(results, LIMIT_OPTIONS)]
    rows += [{"name": served.plan.report.model.name, **entry}
             for served, results in checked.served
             for entry in serve_check_entries(results, LIMIT_OPTIONS)]
    emit(output, document, rows, views, inputs={"--mfu": mfu, "--mbu": mbu})
    if not document["ok"]:
        raise typer.Exit(ExitCode.CHECK_FAILED)


_SERVE_LIMITS = ("max_concurrency", "estimates.prefill_s", "estimates.tokens_per_s_per_request")
# without --tp, tp is gpus / pp: an error about tp names --gpus
_LABELS = {"tp": "option --gpus (tp = gpus / pp)"}
