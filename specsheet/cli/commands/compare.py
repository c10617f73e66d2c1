"""``specsheet compare``: models side by side, with ratios to the first."""

from typing import TYPE_CHECKING

import typer

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    CONVENTIONS,
    DTYPE_OPT,
    FORMAT_OPT,
    GROUP_SIZE_OPT,
    HTML_OPT,
    JSON_OPT,
    KV_DTYPE_OPT,
    OPTION_NAMES,
    QUANT_OPT,
    SVG_OPT,
    complete_preset,
    emit,
    output_format,
    reports,
)
from specsheet.cli.serving import (
    EP_OPT,
    GPU_OPT,
    GPUS_OPT,
    MAX_MODEL_LEN_OPT,
    MBU_OPT,
    MFU_OPT,
    OUTPUT_OPT,
    PP_OPT,
    PRICE_OPT,
    PROMPT_OPT,
    TEXT_OPT,
    TOKENIZER_OPT,
    TOKENS_PER_WORD_OPT,
    TP_OPT,
    UTILIZATION_OPT,
)

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS = {"epilog": CONVENTIONS}


@model_options
def compare(
    models: list[str] | None = typer.Argument(
        None, help="One or more models: preset names, preset YAML files, config.json files or "
                   "folders, ORG/NAME[@REVISION] or hf:ORG/NAME. Leave out to give the five "
                   "numbers as options.", show_default=False,
        autocompletion=complete_preset),
    tokens: int | None = MAX_MODEL_LEN_OPT,
    quant: str | None = QUANT_OPT,
    group_size: int | None = GROUP_SIZE_OPT,
    dtype: str | None = DTYPE_OPT,
    kv_dtype: str = KV_DTYPE_OPT,
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    svg: str | None = SVG_OPT,
    html: str | None = HTML_OPT,
    gpu: str | None = GPU_OPT,
    gpus: int | None = GPUS_OPT,
    tp: int | None = TP_OPT,
    pp: int | None = PP_OPT,
    ep: bool = EP_OPT,
    prompt: int | None = PROMPT_OPT,
    output_tokens: int | None = OUTPUT_OPT,
    memory_utilization: str = UTILIZATION_OPT,
    price: str | None = PRICE_OPT,
    mfu: float = MFU_OPT,
    mbu: float = MBU_OPT,
    tokens_per_word: float | None = TOKENS_PER_WORD_OPT,
    text: str | None = TEXT_OPT,
    tokenizer: str | None = TOKENIZER_OPT,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Models side by side: every figure of count, with ratios to the first model (one model
    gives one column, so a CI matrix can call it the same way for any number).

    Every model at the same --tokens [default: the shortest context among them, said on
    stderr]. With --gpu, each model served on those GPUs too, at the same --tokens:
    'specsheet compare llama3-8b mistral-7b --gpu h100-sxm --price 2.5'.

    Example: 'specsheet compare llama3-8b llama3-70b'.
    """
    from specsheet.api.compare import compare
    from specsheet.cli.errors import as_options

    output = output_format(fmt, json_)
    request = None
    if gpu is not None:
        from specsheet.api.serve import ServeRequest, check_request

        request = ServeRequest(gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep, max_model_len=tokens,
                               prompt=prompt,
                               output=output_tokens, memory_utilization=memory_utilization,
                               price=price, mfu=mfu, mbu=mbu, tokens_per_word=tokens_per_word,
                               text=text, tokenizer=tokenizer,
                               timeout=src.timeout)
        with as_options():
            check_request(request)
    # every model at one length, by default the shortest context (the table's caption says so)
    compared = reports(src.refs(models), src.overrides(), tokens, dtype, kv_dtype,
                       "lower --tokens to the smallest context of the models compared", quant,
                       group_size, src.timeout, shortest=True)
    with as_options({"tp": "option --gpus (tp = gpus / pp)"} if tp is None else None):
        result = compare(compared, request, group_size)
    document = result.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.compare import compare_view

        return [compare_view(compared, None if result.served is None
                             else [(s.plan, s.estimates, s.costs) for s in result.served],
                             OPTION_NAMES)]

    # a CSV row a model, its serving plan beside it (serve.*), so --gpu loses nothing
    rows = document["models"] if "serve" not in document else [
        {**m, "serve": s} for m, s in zip(document["models"], document["serve"], strict=True)]
    emit(output, document, rows, views, svg=svg, html=html,
         inputs={"--mfu": mfu, "--mbu": mbu, "--price": price,
                 "--tokens-per-word": tokens_per_word})
