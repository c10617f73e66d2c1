"""``specsheet serve``: does a model fit on these GPUs, how many requests at once, how fast and at
what cost (docs/serving.md)."""

from typing import TYPE_CHECKING, Any

from specsheet.api.defaults import (
    DEFAULT_MBU,
    DEFAULT_MFU,
    DEFAULT_UTILIZATION,
)
from specsheet.api.spec import DEFAULT_DTYPE
from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    OPTION_NAMES,
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
    emit,
    output_format,
    reports,
)
from specsheet.cli.serving import (
    AllowLongContextOpt,
    BatchedTokensOpt,
    BlockSizeOpt,
    ConcurrencyOpt,
    DcpOpt,
    DpOpt,
    DraftOpt,
    EpOpt,
    GpuOpt,
    GpusOpt,
    KvMemoryOpt,
    KvOffloadOpt,
    MambaCacheModeOpt,
    MaxLoraRankOpt,
    MaxLorasOpt,
    MaxModelLenOpt,
    MaxSeqsOpt,
    MbuOpt,
    MfuOpt,
    MoeKernelOpt,
    OutputOpt,
    PpOpt,
    PrefixCachingOpt,
    PriceOpt,
    PromptOpt,
    SpeculativeMethodOpt,
    SpeculativeTokensOpt,
    TextOpt,
    TokenizerOpt,
    TokensPerWordOpt,
    TpOpt,
    UtilizationOpt,
    VllmLogOpt,
)
from specsheet.errors import SpecError, quoted

if TYPE_CHECKING:
    from specsheet.views.table import TableView

SETTINGS: dict[str, Any] = {
    "epilog": "Exact: weights, activation-free KV blocks and the pool's concurrency as vLLM "
              "computes them. Estimates (labelled): the activation peak, the runtime overhead, "
              "and the roofline times and costs, an upper bound on speed. Exit 0 also when the "
              "model does not fit (fits: false); 'specsheet check --gpu' exits 1 then."}


@model_options
def serve(
    model: ModelArg = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    tp: TpOpt = None,
    pp: PpOpt = None,
    ep: EpOpt = False,
    dp: DpOpt = None,
    dcp: DcpOpt = None,
    max_loras: MaxLorasOpt = None,
    max_lora_rank: MaxLoraRankOpt = None,
    enable_prefix_caching: PrefixCachingOpt = False,
    mamba_cache_mode: MambaCacheModeOpt = None,
    kv_offload: KvOffloadOpt = None,
    draft: DraftOpt = None,
    speculative_tokens: SpeculativeTokensOpt = None,
    speculative_method: SpeculativeMethodOpt = None,
    max_model_len: MaxModelLenOpt = None,
    prompt: PromptOpt = None,
    output: OutputOpt = None,
    images: ImagesOpt = None,
    image_size: ImageSizeOpt = None,
    concurrency: ConcurrencyOpt = None,
    memory_utilization: UtilizationOpt = DEFAULT_UTILIZATION,
    kv_memory: KvMemoryOpt = None,
    max_num_batched_tokens: BatchedTokensOpt = None,
    max_num_seqs: MaxSeqsOpt = None,
    price: PriceOpt = None,
    mfu: MfuOpt = DEFAULT_MFU,
    mbu: MbuOpt = DEFAULT_MBU,
    tokens_per_word: TokensPerWordOpt = None,
    text: TextOpt = None,
    tokenizer: TokenizerOpt = None,
    moe_kernel: MoeKernelOpt = None,
    allow_long_context: AllowLongContextOpt = False,
    vllm_log: VllmLogOpt = None,
    block_size: BlockSizeOpt = None,
    quant: QuantOpt = None,
    group_size: GroupSizeOpt = None,
    dtype: DtypeOpt = None,
    kv_dtype: KvDtypeOpt = DEFAULT_DTYPE,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    src: ModelSource = NO_SOURCE,
) -> None:
    """Does a model fit on these GPUs, how many requests of max-model-len at once, how fast and
    at what cost.

    Example: 'specsheet serve llama3-70b --gpu h100-sxm --gpus 8 --price 2.50'.
    """
    from specsheet.api.serve import ServeRequest, check_request, kv_dtype_of, plan_serve
    from specsheet.cli.errors import as_options

    output_fmt = output_format(fmt, json_)
    if gpu is None:
        raise SpecError("serve needs --gpu: a built-in accelerator (h100-sxm, h200, ...) or a "
                        "hardware YAML file")
    request = ServeRequest(
        gpu=gpu, gpus=gpus, tp=tp, pp=pp, ep=ep, max_model_len=max_model_len, prompt=prompt,
        output=output, concurrency=concurrency, memory_utilization=memory_utilization,
        kv_memory=kv_memory, max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs, price=price, mfu=mfu, mbu=mbu,
        tokens_per_word=tokens_per_word, text=text, tokenizer=tokenizer, timeout=src.timeout,
        moe_kernel=moe_kernel, allow_long_context=allow_long_context, vllm_log=vllm_log,
        block_size=block_size, kv_layout=kv_dtype_of(kv_dtype)[1], dp=dp, dcp=dcp,
        max_loras=max_loras, max_lora_rank=max_lora_rank,
        enable_prefix_caching=enable_prefix_caching, mamba_cache_mode=mamba_cache_mode,
        kv_offload=kv_offload, images=images, image_size=image_size, draft=draft,
        speculative_tokens=speculative_tokens, speculative_method=speculative_method)
    kv_dtype = kv_dtype_of(kv_dtype)[0]
    with as_options(_LABELS if tp is None else None):
        check_request(request)
        (report,) = reports([src.ref(model)], src.overrides(), None, dtype, kv_dtype,
                            "raise the context with --set context=N", quant, group_size,
                            src.timeout)
        served = plan_serve(report, request, group_size)
    unread = served.plan.calibration_unreadable
    if unread:
        from specsheet.cli import streams

        streams.say(f"specsheet: note: {vllm_log}: {len(unread)} line"
                    f"{'s' if len(unread) > 1 else ''} naming a figure could not be read, "
                    f"the first: {quoted(unread[0])}")
    document = served.to_dict()

    def views() -> "list[TableView]":
        from specsheet.views.serve import serve_views

        ways: tuple[int | None, int | None] = (None, None)
        if not served.fits:  # a "no" says what would make it "yes"
            from specsheet.api.serve import to_fit

            found = to_fit(report, request, served, group_size)
            ways = (found.gpus, found.max_model_len)
        return serve_views(*served, OPTION_NAMES, ways)

    emit(output_fmt, document, [document], views, svg=svg, html=html,
         inputs={"--mfu": mfu, "--mbu": mbu, "--price": price,
                 "--tokens-per-word": tokens_per_word})


# without --tp, tp is gpus / pp: an error about tp names --gpus
_LABELS = {"tp": "option --gpus (tp = gpus / pp)"}
