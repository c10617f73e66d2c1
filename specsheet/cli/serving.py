"""The serving options shared by ``serve``, ``check`` and ``compare``, and the step that turns
them into plans: the GPU, the layout, the request shape, the efficiencies and the price."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from specsheet.cli.options import parse_tokens
from specsheet.errors import SpecError
from specsheet.sources import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from specsheet.figures import Point, Report
    from specsheet.plan.serving import Estimates, ServePlan

SERVE = "Serving (docs/serving.md)"
GpuOpt = Annotated[str | None, typer.Option(
    "--gpu", help="Accelerator: a built-in name (h100-sxm, h200, ...) or a hardware YAML file.",
    show_default=False, rich_help_panel=SERVE)]
GpusOpt = Annotated[int | None, typer.Option(
    "--gpus", help="GPUs in all [default: tp x pp, or 1].", show_default=False,
    rich_help_panel=SERVE)]
TpOpt = Annotated[int | None, typer.Option(
    "--tp", help="Tensor-parallel size [default: gpus / pp].", show_default=False,
    rich_help_panel=SERVE)]
PpOpt = Annotated[int | None, typer.Option(
    "--pp", help="Pipeline-parallel size [default: 1].", show_default=False,
    rich_help_panel=SERVE)]
EpOpt = Annotated[bool, typer.Option(
    "--ep", help="Expert parallelism (vLLM's --enable-expert-parallel): whole experts spread "
    "over the tp GPUs instead of every expert split.", rich_help_panel=SERVE)]
MaxModelLenOpt = Annotated[int | None, typer.Option(
    "--max-model-len", parser=parse_tokens, metavar="T",
    help="Tokens a request may reach, for memory: 8192 or 8k [default: the model's context].",
    show_default=False, rich_help_panel=SERVE)]
PromptOpt = Annotated[int, typer.Option(
    "--prompt", parser=parse_tokens, metavar="T",
    help="Prompt tokens of a request, for the estimates.",
    rich_help_panel=SERVE)]
OutputOpt = Annotated[int, typer.Option(
    "--output", parser=parse_tokens, metavar="T",
    help="Output tokens of a request, for the estimates.",
    rich_help_panel=SERVE)]
ConcurrencyOpt = Annotated[int | None, typer.Option(
    "--concurrency", min=1, help="Requests decoded at once, for the estimates [default: as "
    "many of prompt + output tokens as the KV pool holds, at most max-num-seqs].",
    show_default=False, rich_help_panel=SERVE)]
UtilizationOpt = Annotated[str, typer.Option(
    "--memory-utilization", help="Share of the GPU memory vLLM may use "
    "(gpu_memory_utilization).", rich_help_panel=SERVE)]
KvMemoryOpt = Annotated[str | None, typer.Option(
    "--kv-memory", help="The KV pool per GPU in bytes, e.g. 40GiB (vLLM's "
    "kv_cache_memory_bytes); the memory utilization is then not used.", show_default=False,
    rich_help_panel=SERVE)]
BatchedTokensOpt = Annotated[int | None, typer.Option(
    "--max-num-batched-tokens", min=1, help="vLLM's max_num_batched_tokens [default: 8,192 on "
    "a GPU of 70 GiB or more but an A100, else 2,048, as 'vllm serve'].", show_default=False,
    rich_help_panel=SERVE)]
MaxSeqsOpt = Annotated[int | None, typer.Option(
    "--max-num-seqs", min=1, help="vLLM's max_num_seqs [default: 1,024 on a GPU of 70 GiB or "
    "more but an A100, else 256].", show_default=False, rich_help_panel=SERVE)]
PriceOpt = Annotated[str | None, typer.Option(
    "--price", help="US dollars per GPU-hour, for the costs.", show_default=False,
    rich_help_panel=SERVE)]
MfuOpt = Annotated[float, typer.Option(
    "--mfu", help="Share of the peak FLOP/s reached (estimates).", rich_help_panel=SERVE)]
MbuOpt = Annotated[float, typer.Option(
    "--mbu", help="Share of the memory bandwidth reached (estimates).", rich_help_panel=SERVE)]
TokensPerWordOpt = Annotated[float | None, typer.Option(
    "--tokens-per-word", help="Tokens per word of your text, for the cost per word.",
    show_default=False, rich_help_panel=SERVE)]

TextOpt = Annotated[str | None, typer.Option(
    "--text", help="A UTF-8 text file: measure tokens per word with the model's own "
    "tokenizer.json (needs pip install 'specsheet[tokenizers]').", show_default=False,
    rich_help_panel=SERVE)]
TokenizerOpt = Annotated[str | None, typer.Option(
    "--tokenizer", help="The tokenizer.json for --text (or a folder holding one) [default: "
    "beside the model's config.json].", show_default=False, rich_help_panel=SERVE)]

DEFAULT_MFU = 0.5
DEFAULT_MBU = 0.8
DEFAULT_PROMPT = 1024
DEFAULT_OUTPUT = 256
# plan.serving.DEFAULT_MEMORY_UTILIZATION (vLLM's), without importing the plan at start-up
DEFAULT_UTILIZATION = "0.9"


class ServeOptions(NamedTuple):
    """What the serving options say, as typed."""

    gpu: str
    gpus: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: bool = False
    max_model_len: int | None = None
    prompt: int = DEFAULT_PROMPT
    output: int = DEFAULT_OUTPUT
    concurrency: int | None = None
    memory_utilization: str = DEFAULT_UTILIZATION
    kv_memory: str | None = None
    batched_tokens: int | None = None
    max_seqs: int | None = None
    price: str | None = None
    mfu: float = DEFAULT_MFU
    mbu: float = DEFAULT_MBU
    tokens_per_word: float | None = None
    group_size: int | None = None
    text: str | None = None
    tokenizer: str | None = None
    timeout: float = DEFAULT_TIMEOUT  # seconds the Hub may take to send a tokenizer.json


def _efficiency(value: float, option: str) -> float:
    if not (math.isfinite(value) and 0 < value <= 1):
        raise SpecError(f"option {option}: expected a share in (0, 1], got {value:g}")
    return value


def _price(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise SpecError(f"option --price: expected US dollars per GPU-hour (a number such as "
                        f"2.50), got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise SpecError(f"option --price: expected a number of 0 or more, got {text!r}")
    return value


def check_options(options: ServeOptions) -> None:
    """The options that need no model, checked before any model is read."""
    _efficiency(options.mfu, "--mfu")
    _efficiency(options.mbu, "--mbu")
    _price(options.price)
    if options.tokens_per_word is not None and not (
            math.isfinite(options.tokens_per_word) and options.tokens_per_word > 0):
        raise SpecError(f"option --tokens-per-word: expected a number above 0, got "
                        f"{options.tokens_per_word:g}")
    if options.text is not None and options.tokens_per_word is not None:
        raise SpecError("give --text (to measure tokens per word) or --tokens-per-word, not both")
    if options.tokenizer is not None and options.text is None:
        raise SpecError("option --tokenizer: used only with --text")


def plan_one(report: Report, options: ServeOptions
             ) -> tuple[ServePlan, Estimates | None, dict[str, float | None]]:
    """The plan of ``report``'s model under ``options``, its estimates (None when no request
    fits) and costs. Errors name the option."""
    from specsheet.cli.errors import option_quantity
    from specsheet.plan import serving
    from specsheet.sources.hardware import load_accelerator

    check_options(options)
    try:
        hardware = load_accelerator(options.gpu)
    except SpecError as e:
        raise SpecError(f"option --gpu: {e}") from None
    spec = report.model.spec
    try:
        layout = serving.check_parallel(spec, options.gpus, options.tp, options.pp, options.ep)
        utilization = serving.parse_utilization(options.memory_utilization)
    except SpecError as e:
        message = str(e)
        tp_option = "--tp" if options.tp is not None else "--gpus (tp = gpus / pp)"
        for name, option in (("gpus:", "--gpus"), ("tp:", tp_option), ("pp:", "--pp"),
                             ("ep:", "--ep"), ("memory-utilization:", "--memory-utilization")):
            if message.startswith(name):
                message = f"option {option}:{message[len(name):]}"
        raise SpecError(f"{message} ({report.model.name})") from None
    kv_memory = None if options.kv_memory is None else option_quantity(
        options.kv_memory, "bytes", "--kv-memory")
    max_len = options.max_model_len or spec.context
    if max_len > spec.context:
        raise SpecError(f"option --max-model-len: {max_len:,} exceeds the context of "
                        f"{report.model.name} ({spec.context:,} tokens); lower it or raise "
                        "the context with --context")
    request = serving.Request(
        max_model_len=max_len, prompt=options.prompt, output=options.output,
        batched_tokens=options.batched_tokens or serving.default_batched_tokens(hardware),
        max_seqs=options.max_seqs or serving.default_max_seqs(hardware))
    try:
        plan = serving.plan_serving(report, hardware, layout, request, utilization, kv_memory,
                                    options.group_size)
    except SpecError as e:
        message = str(e)
        if message.startswith("quant:"):
            message = "option --quant:" + message[len("quant:"):]
        raise SpecError(f"{message} (at tp {layout.tp})") from None
    return (plan, *_estimates(plan, options))


def _estimates(plan: ServePlan, options: ServeOptions
               ) -> tuple[Estimates | None, dict[str, float | None]]:
    """The estimates and costs of ``plan`` under ``options`` (None and no costs when no
    request fits)."""
    from specsheet.plan import serving

    report = plan.report
    concurrency = options.concurrency
    if concurrency is None:
        concurrency = min(plan.concurrency_at(options.prompt + options.output),
                          plan.request.max_seqs)
    if not plan.fits or not concurrency:
        return None, {}
    text = None
    if options.text is not None:
        from specsheet.cli.errors import with_advice
        from specsheet.sources.tokenizer import NoTokenizer, count_text, find_tokenizer

        try:
            counted = count_text(options.text, find_tokenizer(report.model, options.tokenizer,
                                                              options.timeout))
        except NoTokenizer as e:
            raise with_advice(e) from None
        text = (counted.tokens, counted.words)
    est = serving.estimate(plan, concurrency, options.mfu, options.mbu, _price(options.price),
                           options.tokens_per_word, text)
    return est, serving.costs(plan, est)


Served = tuple["ServePlan", "Estimates | None", dict[str, float | None]]


def plan_points(points: list[Point], options: ServeOptions) -> list[Served]:
    """``plan_one`` at every point of a sweep: requests of the point's tokens
    (``--max-model-len``), its batch decoded at once (``--concurrency``). Points that differ
    from the one before only in the tokens or the batch take its layout (the weights per GPU,
    the pool) and compute again only the blocks of a request and the estimates."""
    from specsheet.plan import serving

    served: list[Served] = []
    before: ServePlan | None = None
    # the estimates do not depend on the tokens a request may reach: by batch, for the layout
    estimates: dict[int, tuple[Estimates | None, dict[str, float | None]]] = {}
    for point in points:
        report = point.report
        at = options._replace(max_model_len=report.kv.tokens, concurrency=point.batch)
        base = None if before is None else before.report
        if base is not None and before is not None and report.model is base.model and \
                report.weights is base.weights and report.dtype == base.dtype and \
                report.kv.dtype == base.kv.dtype:
            plan = serving.at_max_model_len(before, report, report.kv.tokens)
            known = estimates.get(point.batch)
            if known is None or (known[0] is None) != (not plan.fits):
                known = estimates[point.batch] = _estimates(plan, at)
            served.append((plan, *known))
        else:
            served.append(plan_one(report, at))
            estimates = {point.batch: served[-1][1:]}
        before = served[-1][0]
    return served
