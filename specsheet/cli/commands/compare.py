"""``specsheet compare``: models side by side, with ratios to the first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from specsheet.cli.options import (
    CONVENTIONS,
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
from specsheet.model.memory import DEFAULT_DTYPE
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.sources.fields import Overrides
from specsheet.views.documents import compare_document

if TYPE_CHECKING:
    from specsheet.views.tables import TableView

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
) -> None:
    """Models side by side: every figure of count, with ratios to the first model (one model
    gives one column, so a CI matrix can call it the same way for any number).

    Example: 'specsheet compare llama3-8b llama3-70b'.
    """
    output = output_format(fmt, json_)
    compared = reports(list(models), Overrides(), tokens, dtype, kv_dtype,
                       "lower --tokens to the smallest context of the models compared", quant,
                       group_size, timeout)
    document = compare_document(compared)

    def views() -> list[TableView]:
        from specsheet.views.tables import compare_view

        return [compare_view(compared)]

    emit(output, document, document["models"], views, svg=svg, html=html)
