"""``specsheet count``: one model's parameters, memory, KV cache and FLOPs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.options import (
    CONVENTIONS,
    AttnBiasOpt,
    ContextOpt,
    DffOpt,
    DModelOpt,
    DtypeOpt,
    FormatOpt,
    GroupSizeOpt,
    HeadDimOpt,
    HeadsOpt,
    HfOpt,
    HtmlOpt,
    JsonOpt,
    KvDtypeOpt,
    KvHeadsOpt,
    LayersOpt,
    MlpBiasOpt,
    MlpOpt,
    ModelArg,
    NormOpt,
    PositionsOpt,
    QuantOpt,
    SetOpt,
    SvgOpt,
    TiedOpt,
    TimeoutOpt,
    TokensOpt,
    VocabOpt,
    emit,
    output_format,
    overrides,
    reports,
    source,
)
from specsheet.sources import DEFAULT_TIMEOUT
from specsheet.views.count import count_document

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS = {"epilog": CONVENTIONS}


def count(
    model: ModelArg = None,
    hf: HfOpt = None,
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
    output = output_format(fmt, json_)
    given = overrides(settings, locals())
    (report,) = reports([source(model, hf)], given, tokens, dtype, kv_dtype,
                        "lower --tokens or raise the context with --context", quant, group_size,
                        timeout)
    document = count_document(report)

    def views() -> list[TableView]:
        from specsheet.views.count import count_views

        return count_views(report)

    emit(output, document, [document], views, svg=svg, html=html)
