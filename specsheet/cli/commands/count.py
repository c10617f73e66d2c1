"""``specsheet count``: one model's parameters, memory, KV cache and FLOPs."""

from typing import TYPE_CHECKING

from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    CONVENTIONS,
    DtypeOpt,
    FormatOpt,
    GroupSizeOpt,
    HtmlOpt,
    ImageSizeOpt,
    ImagesOpt,
    JsonOpt,
    KvDtypeOpt,
    ModelArg,
    QuantOpt,
    SvgOpt,
    TokensOpt,
    emit,
    output_format,
    reports,
)
from specsheet.views.count import count_document

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS = {"epilog": CONVENTIONS}


@model_options
def count(
    model: ModelArg = None,
    tokens: TokensOpt = None,
    quant: QuantOpt = None,
    group_size: GroupSizeOpt = None,
    dtype: DtypeOpt = None,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    images: ImagesOpt = None,
    image_size: ImageSizeOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Where one model's parameters live, its weight and KV-cache memory, and its FLOPs.

    Examples: 'specsheet count gpt2-small', 'specsheet count llama3-8b --tokens 32768
    --context 32768', 'specsheet count --layers 12 --d-model 768 --heads 12 --vocab 50257
    --context 1024'.
    """
    output = output_format(fmt, json_)
    (report,) = reports([src.ref(model)], src.overrides(), tokens, dtype, kv_dtype,
                        "lower --tokens or raise the context with --context", quant, group_size,
                        src.timeout, images, image_size)
    document = count_document(report)

    def views() -> "list[TableView]":
        from specsheet.views.count import count_views

        return count_views(report)

    emit(output, document, [document], views, svg=svg, html=html)
