"""``specsheet count``: one model's parameters, memory, KV cache and FLOPs."""

from typing import TYPE_CHECKING

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    CONVENTIONS,
    DTYPE_OPT,
    FORMAT_OPT,
    GROUP_SIZE_OPT,
    HTML_OPT,
    IMAGE_SIZE_OPT,
    IMAGES_OPT,
    JSON_OPT,
    KV_DTYPE_OPT,
    MODEL_ARG,
    QUANT_OPT,
    SVG_OPT,
    TOKENS_OPT,
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
    model: str | None = MODEL_ARG,
    tokens: int | None = TOKENS_OPT,
    quant: str | None = QUANT_OPT,
    group_size: int | None = GROUP_SIZE_OPT,
    dtype: str | None = DTYPE_OPT,
    kv_dtype: str = KV_DTYPE_OPT,
    images: int | None = IMAGES_OPT,
    image_size: str | None = IMAGE_SIZE_OPT,
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    svg: str | None = SVG_OPT,
    html: str | None = HTML_OPT,
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
