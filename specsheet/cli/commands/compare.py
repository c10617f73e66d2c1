"""``specsheet compare``: models side by side, with ratios to the first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from specsheet.api.serve import (
    DEFAULT_MBU,
    DEFAULT_MFU,
    DEFAULT_UTILIZATION,
)
from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.options import (
    CONVENTIONS,
    OPTION_NAMES,
    DtypeOpt,
    FormatOpt,
    GroupSizeOpt,
    HtmlOpt,
    JsonOpt,
    KvDtypeOpt,
    QuantOpt,
    SvgOpt,
    TimeoutOpt,
    TokensOpt,
    complete_preset,
    emit,
    output_format,
    reports,
)
from specsheet.cli.serving import (
    EpOpt,
    GpuOpt,
    GpusOpt,
    MbuOpt,
    MfuOpt,
    OutputOpt,
    PpOpt,
    PriceOpt,
    PromptOpt,
    TextOpt,
    TokensPerWordOpt,
    TpOpt,
    UtilizationOpt,
)
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import Overrides

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS = {"epilog": CONVENTIONS}


def compare(
    models: Annotated[list[str], typer.Argument(
        help="One or more models: preset names, preset YAML files, config.json files or "
             "folders, hf:ORG/NAME.", show_default=False,
        autocompletion=complete_preset)],
    tokens: TokensOpt = None,
    quant: QuantOpt = None,
    group_size: GroupSizeOpt = None,
    dtype: DtypeOpt = None,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    fmt: FormatOpt = None,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    json_: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    tp: TpOpt = None,
    pp: PpOpt = None,
    ep: EpOpt = False,
    prompt: PromptOpt = None,
    output_tokens: OutputOpt = None,
    memory_utilization: UtilizationOpt = DEFAULT_UTILIZATION,
    price: PriceOpt = None,
    mfu: MfuOpt = DEFAULT_MFU,
    mbu: MbuOpt = DEFAULT_MBU,
    tokens_per_word: TokensPerWordOpt = None,
    text: TextOpt = None,
) -> None:
    """Models side by side: every figure of count, with ratios to the first model (one model
    gives one column, so a CI matrix can call it the same way for any number).

    With --gpu, each model served on those GPUs too (its own context as max-model-len):
    'specsheet compare llama3-8b mistral-7b --gpu h100-sxm --price 2.5'.

    Example: 'specsheet compare llama3-8b llama3-70b'.
    """
    from specsheet.api.compare import compare
    from specsheet.api.serve import ServeRequest, check_request
    from specsheet.cli.errors import as_options

    output = output_format(fmt, json_)
    request = None
    if gpu is not None:
        request = ServeRequest(gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep, prompt=prompt,
                               output=output_tokens, memory_utilization=memory_utilization,
                               price=price, mfu=mfu, mbu=mbu, tokens_per_word=tokens_per_word,
                               text=text, timeout=timeout)
        with as_options():
            check_request(request)
    compared = reports(list(models), Overrides(), tokens, dtype, kv_dtype,
                       "lower --tokens to the smallest context of the models compared", quant,
                       group_size, timeout)
    with as_options({"tp": "option --gpus (tp = gpus / pp)"} if tp is None else None):
        result = compare(compared, request, group_size)
    document = result.to_dict()

    def views() -> list[TableView]:
        from specsheet.views.compare import compare_view

        return [compare_view(compared, None if result.served is None
                             else [(s.plan, s.estimates, s.costs) for s in result.served],
                             OPTION_NAMES)]

    emit(output, document, document["models"], views, svg=svg, html=html)
