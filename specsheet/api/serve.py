"""Serving: does a model fit on these GPUs as vLLM lays it out, how many requests at once, how
fast and at what cost (``specsheet serve``; docs/serving.md).

    >>> import specsheet as s
    >>> s.serve(s.load("llama3-70b"), gpu="h100-sxm", gpus=8).max_concurrency
    170
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from specsheet.api.defaults import (
    DEFAULT_MBU,
    DEFAULT_MFU,
    DEFAULT_OUTPUT,
    DEFAULT_PROMPT,
    DEFAULT_UTILIZATION,
)
from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted
from specsheet.plan import MAX_WALKED_LAYERS as MAX_PLANNED_LAYERS
from specsheet.sources import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from specsheet.figures import Report
    from specsheet.model.spec import Model
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.plan.sharding import Cut



class ServeRequest(NamedTuple):
    """What to serve and how: the GPU (a catalog name or a hardware YAML file), the layout, the
    request shape, vLLM's settings, the efficiencies and the price. The defaults are the CLI's."""

    gpu: str
    gpus: int | None = None  # default: tp x pp, or 1
    tp: int | None = None  # default: gpus / pp
    pp: int | None = None  # default: 1
    ep: bool = False  # vLLM's --enable-expert-parallel
    max_model_len: int | None = None  # tokens a request may reach (default: the context)
    prompt: int | None = None  # default: 1,024, less when the model's context is shorter
    output: int | None = None  # default: 256, less when the model's context is shorter
    concurrency: int | None = None  # default: as many requests as the pool holds, <= max_seqs
    memory_utilization: str | float = DEFAULT_UTILIZATION
    kv_memory: int | str | None = None  # the KV pool per GPU in bytes (kv_cache_memory_bytes)
    max_num_batched_tokens: int | None = None  # default: as 'vllm serve' picks for the GPU
    max_num_seqs: int | None = None  # default: as 'vllm serve' picks for the GPU
    price: float | str | None = None  # US dollars per GPU-hour
    mfu: float = DEFAULT_MFU
    mbu: float = DEFAULT_MBU
    tokens_per_word: float | None = None
    text: str | None = None  # a UTF-8 file: tokens per word with the model's tokenizer
    tokenizer: str | None = None  # the tokenizer.json for text (default: beside the config)
    timeout: float = DEFAULT_TIMEOUT  # seconds the Hub may take to send a tokenizer.json
    moe_kernel: str | None = None  # vLLM's MXFP4 MoE kernel: marlin, triton, flashinfer
    allow_long_context: bool = False  # vLLM's VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
    vllm_log: str | None = None  # a vLLM start-up log: calibrate against its figures
    block_size: int | None = None  # vLLM's --block-size (default: as the backend forces it)
    kv_layout: str | None = None  # a cache layout beyond its dtype: fp8_ds_mla (kv_dtype_of)
    dp: int | None = None  # data-parallel engines (default 1); with ep, EP size = tp x dp
    dcp: int | None = None  # decode context parallelism: a request's KV over dcp tp ranks
    max_loras: int | None = None  # LoRA slots vLLM preallocates (--enable-lora --max-loras)
    max_lora_rank: int | None = None  # their rank (default 16 with max_loras)
    enable_prefix_caching: bool = False  # vLLM's --enable-prefix-caching (off for hybrids)
    mamba_cache_mode: str | None = None  # none, align, all (default: as vLLM picks it)
    kv_offload: int | str | None = None  # bytes of CPU KV offload (--kv-offloading-size)
    images: int | None = None  # images in a request: their tokens join the prompt's
    image_size: str | tuple[int, int] | None = None  # WxH (default: the model's native size)
    # speculative decoding (api/speculative.py): a draft model (a preset, config.json, folder
    # or Hub repository), the tokens it proposes a step, and vLLM's method (draft_model,
    # eagle, eagle3, mtp, ngram; default draft_model with a draft)
    draft: str | None = None
    speculative_tokens: int | None = None
    speculative_method: str | None = None


class Serving(NamedTuple):
    """A model served on GPUs: the plan (exact memory arithmetic), its roofline estimates (None
    when no request fits) and costs."""

    plan: ServePlan
    estimates: Estimates | None
    costs: dict[str, float | None]

    @property
    def max_concurrency(self) -> int:
        """Requests of max_model_len tokens the KV pool holds at once."""
        return self.plan.max_concurrency

    @property
    def fits(self) -> bool:
        """The weights and one request of max_model_len fit on every GPU."""
        return self.plan.fits

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet serve --json`` writes for the same inputs."""
        from specsheet.views.serve import serve_document

        return serve_document(self.plan, self.estimates, self.costs)


def serve(model: Model, gpu: str, *, dtype: str | None = None, kv_dtype: str = "bf16",
          quant: str | None = None, group_size: int | None = None, **options: Any) -> Serving:
    """``model`` served on ``gpu`` as vLLM lays it out; ``options`` are ServeRequest's fields
    (``gpus=8``, ``tp=4``, ``max_model_len=8192``, ``price=2.5`` ...), the weights in ``quant``
    or ``dtype`` and the KV cache in ``kv_dtype`` as ``report`` takes them."""
    from specsheet.api.count import report

    request = request_of(gpu, options)
    kv_dtype, layout = kv_dtype_of(kv_dtype)
    request = request._replace(kv_layout=layout) if layout else request
    check_request(request)
    return plan_serve(report(model, None, dtype, kv_dtype, quant, group_size), request,
                      group_size)


def kv_dtype_of(kv_dtype: str) -> tuple[str, str | None]:
    """vLLM's --kv-cache-dtype as an element type and a layout: fp8_ds_mla (DeepSeek V3.2's
    656-byte token, plan/kv_blocks.py) is fp8 values in its own layout; the others are plain."""
    from specsheet.plan.kv_blocks import FP8_DS_MLA

    return ("fp8", FP8_DS_MLA) if kv_dtype == FP8_DS_MLA else (kv_dtype, None)


def request_of(gpu: str, options: dict[str, Any]) -> ServeRequest:
    """A ServeRequest from keyword arguments; an unknown one is a SpecError naming it."""
    unknown = sorted(set(options) - set(ServeRequest._fields))
    if unknown:
        from specsheet.errors import did_you_mean

        raise SpecError(f"unknown serving option {quoted(unknown[0])}"
                        f"{did_you_mean(unknown[0], ServeRequest._fields)}", field=unknown[0])
    return ServeRequest(gpu, **options)


def _share(value: float, field: str) -> float:
    if not (math.isfinite(value) and 0 < value <= 1):
        raise SpecError(f"expected a share in (0, 1], got {value:g}", field=field, value=value)
    return value


def _price(price: float | str | None) -> float | None:
    if price is None:
        return None
    if isinstance(price, str):
        try:
            value = float(price.strip().removeprefix("$"))
        except ValueError:
            raise SpecError(f"expected US dollars per GPU-hour (a number such as 2.50), got "
                            f"{quoted(price)}", field="price", value=price) from None
    else:
        value = float(price)
    if not (math.isfinite(value) and value >= 0):
        raise SpecError(f"expected a number of 0 or more, got {quoted(price)}", field="price",
                        value=price)
    return value


def check_request(request: ServeRequest) -> None:
    """The settings that need no model, checked before any model is read."""
    from specsheet.plan.kv_blocks import MAMBA_CACHE_MODES
    from specsheet.plan.vllm_layout import check_moe_kernel

    check_moe_kernel(request.moe_kernel)
    mode = request.mamba_cache_mode
    if mode is not None and mode not in MAMBA_CACHE_MODES:
        raise SpecError(f"unknown mamba cache mode {quoted(mode)}; expected one of "
                        f"{', '.join(MAMBA_CACHE_MODES)}", field="mamba_cache_mode", value=mode)
    _kv_offload(request.kv_offload)
    if _speculates(request):
        from specsheet.api.speculative import check_speculation

        check_speculation(_speculative(request))
    block = request.block_size
    if block is not None and (isinstance(block, bool) or not isinstance(block, int)
                              or block < 1 or block % 16):
        raise SpecError(f"expected a positive multiple of 16 tokens, got {quoted(block)}",
                        field="block_size", value=block)
    _share(request.mfu, "mfu")
    _share(request.mbu, "mbu")
    _price(request.price)
    words = request.tokens_per_word
    if words is not None and not (math.isfinite(words) and words > 0):
        raise SpecError(f"expected a number above 0, got {words:g}", field="tokens_per_word",
                        value=words)
    if request.text is not None and words is not None:
        raise SpecError("give --text (to measure tokens per word) or --tokens-per-word, not "
                        "both")
    if request.tokenizer is not None and request.text is None:
        raise SpecError("used only with --text", field="tokenizer")




def plan_serve(report: Report, request: ServeRequest, group_size: int | None = None,
               cut: Cut | None = None) -> Serving:
    """The plan of ``report``'s model under ``request``, its estimates and costs; with a vLLM
    log, planned with the log's measured terms and compared with it figure by figure.
    ``cut``: a plan search's cache of the stages' tensors and bytes (plan.search.KeptCut)."""
    if request.vllm_log is not None:
        from specsheet.api.calibrate import calibrated

        served: Serving = calibrated(report, request, group_size, _plan_serve)
        return served
    return _plan_serve(report, request, group_size, cut=cut)


def _plan_serve(report: Report, request: ServeRequest, group_size: int | None = None,
                measured: Any = None, cut: Cut | None = None) -> Serving:
    from specsheet.api.hardware import load_gpu
    from specsheet.plan import serving
    from specsheet.plan.kv_blocks import mamba_cache_mode
    from specsheet.plan.parallel import check_parallel

    check_request(request)
    hardware = load_gpu(request.gpu)
    spec = report.model.spec
    if spec.layers > MAX_PLANNED_LAYERS:  # before any list of layers is built
        raise SpecError(f"{report.model.name} has {spec.layers:,} layers; a serving plan walks "
                        f"the layers one by one and takes at most {MAX_PLANNED_LAYERS:,} (count "
                        "answers any number)", field="layers", value=spec.layers)
    try:
        layout = check_parallel(spec, request.gpus, request.tp, request.pp, request.ep,
                                request.dp, request.dcp)
        utilization = _utilization(request.memory_utilization)
    except SpecError as e:
        e.context += f" ({report.model.name})"
        raise
    kv_memory = _kv_memory(request.kv_memory)
    max_len = request.max_model_len or spec.context
    if max_len > spec.context:
        if not request.allow_long_context:
            raise SpecError(f"{max_len:,} exceeds the context of {report.model.name} "
                            f"({spec.context:,} tokens), which vLLM refuses; lower it, or "
                            "serve past the context with --allow-long-context (vLLM's "
                            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)", field="max_model_len",
                            value=max_len)
        report = _long_context(report, max_len)
    images = None
    if request.images is not None or request.image_size is not None:  # imported only then
        from specsheet.api.count import images_of

        images = images_of(report.model, request.images, request.image_size)
    pictured = images.tokens if images else 0
    prompt, output = request_shape(request, max_len, pictured)
    plan_request = serving.Request(
        max_model_len=max_len, prompt=prompt + pictured, output=output, images=images,
        batched_tokens=request.max_num_batched_tokens or serving.default_batched_tokens(hardware),
        max_seqs=request.max_num_seqs or serving.default_max_seqs(hardware),
        moe_kernel=request.moe_kernel, block_size=request.block_size,
        kv_layout=request.kv_layout, max_loras=_lora(request)[0],
        max_lora_rank=_lora(request)[1], prefix_caching=request.enable_prefix_caching,
        mamba_cache_mode=mamba_cache_mode(spec, request.enable_prefix_caching,
                                          request.mamba_cache_mode),
        kv_offload=_kv_offload(request.kv_offload), draft=_draft(report, request, layout))
    try:
        plan = serving.plan_serving(report, hardware, layout, plan_request, utilization,
                                    kv_memory, group_size, measured, cut)
    except SpecError as e:
        e.context += f" (at tp {layout.tp})"
        raise
    return Serving(plan, *estimates_of(plan, request))


def _speculates(request: ServeRequest) -> bool:
    """Whether ``request`` asks for speculative decoding (api/speculative.py, imported only
    then)."""
    return (request.draft, request.speculative_tokens, request.speculative_method) != (
        None, None, None)


def _speculative(request: ServeRequest) -> Any:
    from specsheet.api.speculative import Speculative

    return Speculative(request.draft, request.speculative_tokens, request.speculative_method)


def _draft(report: Report, request: ServeRequest, layout: Any) -> Any:
    if not _speculates(request):
        return None
    from specsheet.api.speculative import draft_of

    return draft_of(report, _speculative(request), layout, request.timeout)


def _lora(request: ServeRequest) -> tuple[int, int]:
    """(max_loras, max_lora_rank): LoRA on when either is given, vLLM's defaults 1 and 16."""
    from specsheet.plan.vllm_layout import DEFAULT_MAX_LORA_RANK

    for field in ("max_loras", "max_lora_rank"):
        value = getattr(request, field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise SpecError(f"expected a positive integer, got {quoted(value)}", field=field,
                            value=value)
    if request.max_loras is None and request.max_lora_rank is None:
        return 0, DEFAULT_MAX_LORA_RANK
    return request.max_loras or 1, request.max_lora_rank or DEFAULT_MAX_LORA_RANK


def request_shape(request: ServeRequest, max_len: int, pictured: int = 0) -> tuple[int, int]:
    """The prompt (its text) and output of a request: as given, or the defaults (1,024 + 256)
    shortened to fit ``max_len`` beside ``pictured`` image tokens; a request longer than
    ``max_len`` is refused, as vLLM refuses it."""
    output = request.output
    if output is None:
        output = min(DEFAULT_OUTPUT, max(1, max_len // 4))
    prompt = request.prompt
    if prompt is None:
        prompt = max(1, min(DEFAULT_PROMPT, max_len - output - pictured))
    for name, value in (("prompt", prompt), ("output", output)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError("expected a positive number of tokens, got "
                            f"{quoted(value)}", field=name,
                            value=value)
    if prompt + pictured + output > max_len:
        images = f" + {pictured:,} image" if pictured else ""
        raise SpecError(f"a request of {prompt:,} prompt{images} + {output:,} output tokens "
                        f"exceeds max_model_len {max_len:,}, which vLLM refuses; shorten it or "
                        "raise max_model_len", field="prompt", value=prompt)
    return prompt, output


def _long_context(report: Report, max_len: int) -> Report:
    """``report`` with its model's context raised to ``max_len`` (vLLM's
    VLLM_ALLOW_LONG_MAX_MODEL_LEN: the positions past the trained context are the user's
    risk; the memory is what it is)."""
    import dataclasses

    from specsheet.figures import build_report

    model = report.model
    longer = model._replace(spec=dataclasses.replace(model.spec, context=max_len))
    w = report.weights
    given = w.source == "option"  # else the shipped format or the default, found again
    quant = w.format if w.quantized and given else None
    if given and not w.quantized and model.shipped is not None:
        quant = "none"
    rebuilt = build_report(longer, None, report.dtype if given else None, report.kv.dtype,
                           quant, w.group_size if given else None)
    return type(report)._make(rebuilt)


def _utilization(value: str | float) -> Any:
    from specsheet.plan import serving

    return serving.parse_utilization(value if isinstance(value, str) else repr(value))


def _kv_offload(value: int | str | None) -> int:
    """--kv-offload's bytes (0: off); vLLM's --kv-offloading-size is the same in GiB."""
    if value is None:
        return 0
    if isinstance(value, str):
        from specsheet.units import parse_quantity

        value = parse_quantity(value, "bytes", "kv_offload")
    if value < 1:
        raise SpecError(f"expected a positive number of bytes, got {quoted(value)}",
                        field="kv_offload", value=value)
    return value


def _kv_memory(value: int | str | None) -> int | None:
    if value is None or isinstance(value, int):
        return value
    from specsheet.units import parse_quantity

    return parse_quantity(value, "bytes", "kv_memory")


def estimates_of(plan: ServePlan, request: ServeRequest
                 ) -> tuple[Estimates | None, dict[str, float | None]]:
    """The estimates and costs of ``plan`` under ``request`` (None and no costs when no request
    fits)."""
    from specsheet.plan import roofline

    concurrency = request.concurrency
    if concurrency is None:
        concurrency = min(plan.concurrency_at(plan.request.prompt + plan.request.output),
                          plan.request.max_seqs)
    if not plan.fits or not concurrency:
        return None, {}
    text = None
    if request.text is not None:
        from specsheet.sources.tokenizer import count_text, find_tokenizer

        counted = count_text(request.text, find_tokenizer(plan.report.model, request.tokenizer,
                                                          request.timeout))
        text = (counted.tokens, counted.words)
    est = roofline.estimate(plan, concurrency, request.mfu, request.mbu, _price(request.price),
                            request.tokens_per_word, text)
    return est, roofline.costs(plan, est)


MOST_GPUS = 64  # the most GPUs to_fit tries: eight nodes of eight


class ToFit(NamedTuple):
    """What makes a plan that does not fit fit, each found by planning it again: the fewest
    GPUs (``gpus``, tp = gpus as serve lays them out when neither tp nor pp is given) and the
    longest max_model_len on these GPUs (``max_model_len``). None where there is none: a
    layout given, no count up to MOST_GPUS, weights over a GPU's budget, a vLLM log."""

    gpus: int | None
    max_model_len: int | None


def to_fit(report: Report, request: ServeRequest, served: Serving,
           group_size: int | None = None) -> ToFit:
    """What would make ``served`` (``report``'s model under ``request``, not fitting) fit.

    The fewest GPUs: each count above the plan's, at most MOST_GPUS, that check_request takes
    (tp must divide the heads), planned with the request otherwise unchanged; the first that
    fits. The longest max_model_len: the plan's longest request alone (``max_context``) when
    every stage holds its weights, kept only if the plan at that length fits (vLLM refuses a
    max_model_len whose request the pool cannot hold)."""
    if served.plan.fits or request.vllm_log is not None:
        return ToFit(None, None)
    gpus = None
    if request.tp is None and request.pp is None:
        for n in range(served.plan.layout.gpus + 1, MOST_GPUS + 1):
            trial = request._replace(gpus=n)
            try:
                check_request(trial)
                fits = plan_serve(report, trial, group_size).fits
            except SpecError:  # a count this model cannot be laid out on
                continue
            if fits:
                gpus = n
                break
    longest = None
    if all(s.weights_fit for s in served.plan.stages) and served.plan.max_context > 0:
        trial = request._replace(max_model_len=served.plan.max_context)
        try:
            if plan_serve(report, trial, group_size).fits:
                longest = served.plan.max_context
        except SpecError:  # shorter than the prompt and output asked for
            pass
    return ToFit(gpus, longest)
