"""``specsheet compare``: models side by side, with ratios to the first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

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
    DEFAULT_MBU,
    DEFAULT_MFU,
    DEFAULT_OUTPUT,
    DEFAULT_PROMPT,
    DEFAULT_UTILIZATION,
    EpOpt,
    GpuOpt,
    GpusOpt,
    MbuOpt,
    MfuOpt,
    OutputOpt,
    PpOpt,
    PriceOpt,
    PromptOpt,
    ServeOptions,
    TextOpt,
    TokensPerWordOpt,
    TpOpt,
    UtilizationOpt,
    check_options,
)
from specsheet.model.memory import DEFAULT_DTYPE
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import Overrides
from specsheet.views.compare import compare_document

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
    prompt: PromptOpt = DEFAULT_PROMPT,
    output_tokens: OutputOpt = DEFAULT_OUTPUT,
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
    output = output_format(fmt, json_)
    options = None
    if gpu is not None:
        options = ServeOptions(gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep, prompt=prompt,
                               output=output_tokens, memory_utilization=memory_utilization,
                               price=price, mfu=mfu, mbu=mbu, tokens_per_word=tokens_per_word,
                               group_size=group_size, text=text,
                               timeout=timeout)
        check_options(options)
    compared = reports(list(models), Overrides(), tokens, dtype, kv_dtype,
                       "lower --tokens to the smallest context of the models compared", quant,
                       group_size, timeout)
    served = None
    if options is not None:
        from specsheet.cli.serving import plan_one

        served = [plan_one(report, options) for report in compared]
    document = compare_document(compared, served)

    def views() -> list[TableView]:
        from specsheet.views.compare import compare_view

        return [compare_view(compared, served, OPTION_NAMES)]

    emit(output, document, document["models"], views, svg=svg, html=html)
