"""Roofline estimates of serving: time to first token, decode speed and costs (upper bounds).

Prefill is compute-bound: P x forward FLOPs per token / (tp x peak x MFU), plus two ring
all-reduces of the activations per layer over the interconnect. A decode step is the slower of
reading the weights and the KV cache (bytes / (bandwidth x MBU)) and computing (FLOPs / (tp x
peak x MFU)). docs/serving.md has every formula; ``assumptions`` states them in words.
"""

from __future__ import annotations

import math

from specsheet.compiled import NamedTuple
from specsheet.figures import Report
from specsheet.model.flops import forward_flops
from specsheet.model.spec import ModelSpec
from specsheet.plan.kv_blocks import attention_layers, state_layers
from specsheet.plan.parallel import pp_partition
from specsheet.plan.serving import ACTIVATION_BYTES, OVERHEAD_BYTES, ServePlan

COMPUTE_DTYPE = {"fp8": "fp8", "fp8-channel": "fp8", "fp8-block": "fp8", "w8a8": "int8",
                 "nvfp4": "fp4"}


def compute_dtype(report: Report) -> str:
    """The element type the matrix multiplications run in: fp8 for fp8 checkpoints, int8 for
    w8a8, fp4 for nvfp4; weight-only formats compute in 16 bits."""
    if report.weights.quantized:
        return COMPUTE_DTYPE.get(report.weights.format, "bf16")
    dtype = report.dtype or "bf16"
    return dtype if dtype in ("fp32", "fp16", "bf16", "fp8") else "bf16"


def experts_touched(spec: ModelSpec, tokens: int) -> float:
    """The share of a layer's routed experts that ``tokens`` tokens reach when each picks k of E
    uniformly: 1 - (1 - k/E)^C (1 for a dense model)."""
    if not spec.experts:
        return 1.0
    return 1 - (1 - spec.experts_per_token / spec.experts) ** tokens


class Estimates(NamedTuple):
    """Roofline estimates (upper bounds on speed) of one request shape at ``concurrency``."""

    concurrency: int
    compute_dtype: str
    peak_flops_per_s: int
    mfu: float
    mbu: float
    prefill_flops: int
    prefill_compute_s: float
    prefill_allreduce_s: float
    decode_context: int
    decode_bytes: float  # bytes read per step, all stages
    decode_flops: int  # FLOPs per step, all GPUs
    decode_step_s: float
    experts_touched: float
    price: float | None
    tokens_per_word: float | None
    text_tokens: int | None = None  # with a measured ratio: the text's tokens and words
    text_words: int | None = None

    @property
    def prefill_s(self) -> float:
        return self.prefill_compute_s + self.prefill_allreduce_s

    @property
    def tokens_per_s_per_request(self) -> float:
        return 1 / self.decode_step_s

    @property
    def tokens_per_s_total(self) -> float:
        return self.concurrency / self.decode_step_s

    def tokens_per_s_end_to_end(self, output: int) -> float:
        """Output tokens/s of C requests served from start to end, prefills included (as an
        offline benchmark counts them): C x O / (C x prefill + O x decode step)."""
        return self.concurrency * output / (self.concurrency * self.prefill_s
                                            + output * self.decode_step_s)


def estimate(plan: ServePlan, concurrency: int, mfu: float, mbu: float,
             price: float | None = None, tokens_per_word: float | None = None,
             text: tuple[int, int] | None = None) -> Estimates:
    """Roofline estimates for the plan's request shape (docs/serving.md has every formula)."""
    report, hw, layout = plan.report, plan.hardware, plan.layout
    spec = report.model.spec
    p, o = plan.request.prompt, plan.request.output
    dtype = compute_dtype(report)
    peak = hw.peak(dtype)
    tp = layout.tp
    prefill_flops = p * forward_flops(spec, p).total
    images = plan.request.images
    if images is not None and images.encoder_flops:  # the vision encoder, sharded as the LM
        prefill_flops += images.encoder_flops
    compute = prefill_flops / (tp * peak * mfu)
    allreduce = 0.0
    if tp > 1 and hw.interconnect_bytes_per_s:
        message = p * spec.d_model * ACTIVATION_BYTES
        allreduce = (2 * spec.layers * 2 * (tp - 1) / tp * message
                     / hw.interconnect_bytes_per_s)
    context = p + o // 2
    share = experts_touched(spec, concurrency)
    weights_read = sum(s.weights_bytes - s.expert_bytes + share * s.expert_bytes
                       for s in plan.stages)
    windowed = set(spec.sliding_layers)
    kv_read = 0
    for s, layers in zip(plan.stages, pp_partition(spec.layers, layout.pp), strict=True):
        positions = sum(min(context, spec.sliding_window) if i in windowed else context
                        for i in attention_layers(spec, layers))
        states = state_layers(spec, layers) * s.state_page_bytes
        kv_read += concurrency * (positions * s.kv_read_per_token + states)
    decode_bytes = weights_read + kv_read
    decode_flops = concurrency * forward_flops(spec, context).total
    step = max(decode_bytes / (hw.bandwidth_bytes_per_s * mbu),
               decode_flops / (tp * peak * mfu))
    return Estimates(concurrency=concurrency, compute_dtype=dtype, peak_flops_per_s=peak,
                     mfu=mfu, mbu=mbu, prefill_flops=prefill_flops, prefill_compute_s=compute,
                     prefill_allreduce_s=allreduce, decode_context=context,
                     decode_bytes=decode_bytes, decode_flops=decode_flops, decode_step_s=step,
                     experts_touched=share, price=price,
                     tokens_per_word=text[0] / text[1] if text else tokens_per_word,
                     text_tokens=text[0] if text else None, text_words=text[1] if text else None)


def costs(plan: ServePlan, est: Estimates) -> dict[str, float | None]:
    """Costs at the price per GPU-hour: per request (its prefill alone, plus its 1/C share of
    O decode steps), per million output tokens (at the total decode rate), per million input
    tokens (at the prefill rate), and per million output words (x tokens per word)."""
    if est.price is None:
        return {"usd_per_request": None, "usd_per_million_output_tokens": None,
                "usd_per_million_input_tokens": None, "usd_per_million_output_words": None}
    # one engine's GPUs (tp x pp): the estimates are one engine's; dp engines cost and serve
    # dp times as much
    per_second = plan.layout.gpus // plan.layout.dp * est.price / 3600
    request = per_second * (est.prefill_s + plan.request.output * est.decode_step_s
                            / est.concurrency)
    # no tokens at all in a second (a step that never ends): infinite, which the caller refuses
    output = per_second / est.tokens_per_s_total * 1e6 if est.tokens_per_s_total else math.inf
    prompt = per_second * est.prefill_s / plan.request.prompt * 1e6
    words = output * est.tokens_per_word if est.tokens_per_word is not None else None
    return {"usd_per_request": request, "usd_per_million_output_tokens": output,
            "usd_per_million_input_tokens": prompt, "usd_per_million_output_words": words}


def speed_wording(mfu: float, mbu: float) -> str:
    """What the speed figures are: an upper bound only at mfu = mbu = 1, else an estimate."""
    if mfu == 1 and mbu == 1:
        return ("roofline: an upper bound on speed; real kernels, scheduling and communication "
                "are slower")
    return f"roofline: an estimate at mfu {mfu:g}, mbu {mbu:g}"


def assumptions(plan: ServePlan, est: Estimates) -> list[str]:
    """The estimates' assumptions, in words (docs/serving.md has the formulas)."""
    spec = plan.report.model.spec
    notes = [
        speed_wording(est.mfu, est.mbu),
        f"prefill: {plan.request.prompt:,} prompt tokens x forward FLOPs per token / (tp x "
        f"{est.compute_dtype} peak x mfu {est.mfu:g}), every token attending to all prompt "
        "tokens, plus 2 ring all-reduces of the activations per layer over the interconnect",
        f"decode step: max(bytes read / (bandwidth x mbu {est.mbu:g}), FLOPs / (tp x peak x "
        f"mfu)) at {est.concurrency:,} requests of {est.decode_context:,} tokens (prompt + "
        "half the output)",
        "pipeline stages run one after another for a token (one batch in flight)",
        f"activation peak (estimate): max_num_batched_tokens {plan.request.batched_tokens:,} "
        "x (2 x d + the widest layer intermediate on a GPU) x 2 bytes, plus the sampler's fp32 "
        "logits on the last stage",
        f"runtime overhead (estimate): {OVERHEAD_BYTES:,} bytes (1 GiB) per GPU for the CUDA "
        "context, NCCL buffers and CUDA graphs",
    ]
    if spec.experts:
        notes.append(f"experts read per step: E x (1 - (1 - k/E)^C) per layer under uniform "
                     f"routing: {est.experts_touched:.1%} of the routed experts at C = "
                     f"{est.concurrency:,}")
    if est.concurrency > plan.concurrency_at(plan.request.prompt + plan.request.output):
        notes.append(f"concurrency {est.concurrency:,} exceeds the requests of this shape "
                     "the KV pool holds")
    return notes
