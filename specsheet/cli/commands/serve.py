"""``specsheet serve``: does a model fit on these GPUs, how many requests at once, how fast and at
what cost (docs/serving.md)."""

from typing import TYPE_CHECKING, Any

from specsheet.cli.model_source import NO_SOURCE, ModelSource, model_options
from specsheet.cli.options import (
    DTYPE_OPT,
    FORMAT_OPT,
    GROUP_SIZE_OPT,
    HTML_OPT,
    IMAGE_SIZE_OPT,
    IMAGES_OPT,
    JSON_OPT,
    KV_DTYPE_OPT,
    MODEL_ARG,
    OPTION_NAMES,
    QUANT_OPT,
    SVG_OPT,
    emit,
    output_format,
    reports,
)
from specsheet.cli.serving import (
    ALLOW_LONG_CONTEXT_OPT,
    BATCHED_TOKENS_OPT,
    BLOCK_SIZE_OPT,
    CONCURRENCY_OPT,
    DCP_OPT,
    DP_OPT,
    DRAFT_OPT,
    EP_OPT,
    GPU_OPT,
    GPUS_OPT,
    KV_MEMORY_OPT,
    KV_OFFLOAD_OPT,
    MAMBA_CACHE_MODE_OPT,
    MAX_LORA_RANK_OPT,
    MAX_LORAS_OPT,
    MAX_MODEL_LEN_OPT,
    MAX_SEQS_OPT,
    MBU_OPT,
    MFU_OPT,
    MOE_KERNEL_OPT,
    OUTPUT_OPT,
    PP_OPT,
    PREFIX_CACHING_OPT,
    PRICE_OPT,
    PROMPT_OPT,
    SPECULATIVE_METHOD_OPT,
    SPECULATIVE_TOKENS_OPT,
    TEXT_OPT,
    TOKENIZER_OPT,
    TOKENS_PER_WORD_OPT,
    TP_OPT,
    UTILIZATION_OPT,
    VLLM_LOG_OPT,
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
    model: str | None = MODEL_ARG,
    gpu: str | None = GPU_OPT,
    gpus: int | None = GPUS_OPT,
    tp: int | None = TP_OPT,
    pp: int | None = PP_OPT,
    ep: bool = EP_OPT,
    dp: int | None = DP_OPT,
    dcp: int | None = DCP_OPT,
    max_loras: int | None = MAX_LORAS_OPT,
    max_lora_rank: int | None = MAX_LORA_RANK_OPT,
    enable_prefix_caching: bool = PREFIX_CACHING_OPT,
    mamba_cache_mode: str | None = MAMBA_CACHE_MODE_OPT,
    kv_offload: str | None = KV_OFFLOAD_OPT,
    draft: str | None = DRAFT_OPT,
    speculative_tokens: int | None = SPECULATIVE_TOKENS_OPT,
    speculative_method: str | None = SPECULATIVE_METHOD_OPT,
    max_model_len: int | None = MAX_MODEL_LEN_OPT,
    prompt: int | None = PROMPT_OPT,
    output: int | None = OUTPUT_OPT,
    images: int | None = IMAGES_OPT,
    image_size: str | None = IMAGE_SIZE_OPT,
    concurrency: int | None = CONCURRENCY_OPT,
    memory_utilization: str = UTILIZATION_OPT,
    kv_memory: str | None = KV_MEMORY_OPT,
    max_num_batched_tokens: int | None = BATCHED_TOKENS_OPT,
    max_num_seqs: int | None = MAX_SEQS_OPT,
    price: str | None = PRICE_OPT,
    mfu: float = MFU_OPT,
    mbu: float = MBU_OPT,
    tokens_per_word: float | None = TOKENS_PER_WORD_OPT,
    text: str | None = TEXT_OPT,
    tokenizer: str | None = TOKENIZER_OPT,
    moe_kernel: str | None = MOE_KERNEL_OPT,
    allow_long_context: bool = ALLOW_LONG_CONTEXT_OPT,
    vllm_log: str | None = VLLM_LOG_OPT,
    block_size: int | None = BLOCK_SIZE_OPT,
    quant: str | None = QUANT_OPT,
    group_size: int | None = GROUP_SIZE_OPT,
    dtype: str | None = DTYPE_OPT,
    kv_dtype: str = KV_DTYPE_OPT,
    fmt: str | None = FORMAT_OPT,
    json_: bool = JSON_OPT,
    svg: str | None = SVG_OPT,
    html: str | None = HTML_OPT,
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
