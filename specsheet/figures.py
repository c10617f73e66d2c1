"""A Report gathers every figure of one model: parameters, weight bytes (in a dtype or a
quantized format), KV cache and FLOPs.

One Report feeds every document and table (views/), so JSON, CSV, Markdown and the terminal
always agree. No CLI words here: errors state facts, the CLI phrases the advice.
"""

from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, TokensOverContext, quoted
from specsheet.model.flops import (
    ForwardFlops,
    attention_context_flops,
    forward_flops,
    ssm_forward_per_token,
    two_n_estimate,
)
from specsheet.model.memory import (
    DEFAULT_DTYPE,
    KVCache,
    bytes_for,
    check_dtype,
    kv_cache,
    kv_elements_per_layer,
    kv_positions,
)
from specsheet.model.params import ParamBreakdown, count_params
from specsheet.model.spec import Model

if TYPE_CHECKING:  # a request's images: model/images.py, imported when it has some
    from specsheet.model.images import Images

# safetensors' names for the plain element types
TENSOR_TYPE = {"fp32": "F32", "fp16": "F16", "bf16": "BF16", "fp8": "F8_E4M3", "int8": "I8",
               "int4": "I4"}


# vLLM's --kv-cache-dtype names for specsheet's (vllm/config/cache.py CacheDType): both fp8
# formats store one byte a value with a per-tensor scale, as specsheet's fp8 does
VLLM_KV_DTYPES = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}


class Weights(NamedTuple):
    """The bytes the weights take in one storage format.

    ``format`` is a quantization format (gguf-q4_k_m, awq-int4, ...) or a plain dtype. A plain
    dtype stores every parameter in it: ``lower_bound`` for int4, which counts half a byte per
    parameter and no scales or zero points. ``by_component`` rounds each component up to whole
    bytes; ``weights_bytes`` rounds the total once."""

    format: str
    weights_bytes: int  # every stored tensor, all metadata included
    overhead_bytes: int  # scales, zero points, indices, global scales
    by_component: dict[str, int]  # bytes by params.COMPONENTS key
    tensor_types: dict[str, int]  # bytes by stored element type (BF16, Q4_K, I32, ...)
    quantized: bool  # a quantization format rather than a plain dtype
    lower_bound: bool  # int4 without its metadata: a lower bound, not a checkpoint's size
    # where the format came from: "config" (the checkpoint as it ships), "option", "default"
    source: str = "default"
    group_size: int | None = None  # the group the format was stored with (None: its default)
    keep: tuple[str, ...] = ()  # modules the checkpoint's config leaves unquantized
    match: str = "exact"  # how keep's entries match (quant/modules.py)
    router_score_bias: bool = False  # the checkpoint stores Shipped.router_score_bias
    file_types: tuple[tuple[str, str], ...] = ()  # a GGUF file's own types (Shipped.file_types)


def plain_weights(params: ParamBreakdown, dtype: str, source: str = "default") -> Weights:
    """Every parameter in ``dtype``."""
    total = bytes_for(params.total, dtype)
    return Weights(format=dtype, weights_bytes=total, overhead_bytes=0,
                   by_component={k: bytes_for(v, dtype) for k, v in params.components().items()},
                   tensor_types={TENSOR_TYPE[dtype]: total}, quantized=False,
                   lower_bound=dtype == "int4", source=source)


class Report(NamedTuple):
    """Every figure of one model at context ``flops.tokens`` and the chosen formats."""

    model: Model
    params: ParamBreakdown
    dtype: str | None  # the weights' dtype; with a format, the unquantized tensors' (or None)
    weights: Weights
    kv: KVCache
    flops: ForwardFlops
    flops_2n: int  # the 2N rule's estimate of flops.total (an approximation)
    # the request's images (None: text only); their tokens are in kv.tokens and flops.tokens
    images: "Images | None" = None

    @property
    def text_tokens(self) -> int:
        """The request's tokens that are not images'."""
        return self.kv.tokens - (self.images.tokens if self.images else 0)

    @property
    def weights_bytes(self) -> int:
        """Every stored weight tensor in bytes, metadata included."""
        return self.weights.weights_bytes

    @property
    def flops_2n_error(self) -> float:
        """Relative error of the 2N estimate against the exact count, in percent."""
        total = self.flops.total
        return 100 * (self.flops_2n - total) / total


def build_report(
    model: Model,
    tokens: int | None = None,
    dtype: str | None = None,
    kv_dtype: str = DEFAULT_DTYPE,
    quant: str | None = None,
    group_size: int | None = None,
    images: "Images | None" = None,
) -> Report:
    """Compute every figure of ``model`` for a request of ``tokens`` tokens (default: context).

    Weights are in ``quant`` (a quantization format, its unquantized tensors in ``dtype`` or the
    format's usual type) or else in ``dtype`` (default bf16). ``images`` add their tokens to the
    request's (default: the context less theirs), in the KV cache and the forward's FLOPs."""
    if dtype is not None:
        check_dtype(dtype, "dtype")
    kv_dtype = VLLM_KV_DTYPES.get(kv_dtype, kv_dtype)
    check_dtype(kv_dtype, "kv_dtype")
    spec = model.spec
    pictured = images.tokens if images else 0
    if images is not None and pictured >= spec.context:
        raise SpecError(
            f"{images.number:,} image{'s' if images.number > 1 else ''} of "
            f"{images.each.tokens:,} tokens take {pictured:,} tokens, the whole context of "
            f"{model.name} ({spec.context:,} tokens) or more", field="images",
            value=images.number)
    t = spec.context - pictured if tokens is None else tokens
    if isinstance(t, bool) or not isinstance(t, int) or t <= 0:
        raise SpecError(f"expected a positive integer, got {quoted(t)}", field="tokens", value=t)
    if t + pictured > spec.context:
        also = f" + {pictured:,} image tokens" if pictured else ""
        raise TokensOverContext(
            f"{t:,}{also} exceeds the context of {model.name} ({spec.context:,} tokens)",
            field="tokens", value=t)
    t += pictured
    params = count_params(spec)
    source = "option"
    keep: tuple[str, ...] = ()
    match = "exact"
    file_types: tuple[tuple[str, str], ...] = ()
    shipped = model.shipped
    if quant is None and dtype is None and group_size is None and shipped is not None:
        # no format asked for: the checkpoint as it ships
        quant, group_size, keep, match = (shipped.format, shipped.group_size, shipped.keep,
                                          shipped.match)
        file_types = shipped.file_types
        source = "config"
    elif quant == "none":  # the unquantized model
        quant = None
    elif quant is None:  # bf16 asked for on a model that ships unquantized is the default
        source = "option" if dtype not in (None, DEFAULT_DTYPE) or shipped else "default"
    if quant is None:
        if group_size is not None:
            raise SpecError("a group size needs a quantization format", field="group_size",
                            value=group_size)
        weights = plain_weights(params, dtype or DEFAULT_DTYPE, source)
    else:
        from specsheet.quant.layouts import quantized_bytes  # only with a format: ~15 ms

        score_bias = source == "config" and shipped is not None and shipped.router_score_bias
        stored = quantized_bytes(spec, quant, group_size, dtype, keep=keep, match=match,
                                 score_bias=score_bias,
                                 file_types=dict(file_types) if file_types else None,
                                 listed=False)  # a report keeps the totals alone
        weights = Weights(format=stored.format, weights_bytes=stored.weights_bytes,
                          overhead_bytes=stored.overhead_bytes,
                          by_component=stored.by_component, tensor_types=stored.tensor_types,
                          quantized=True, lower_bound=False, source=source,
                          group_size=group_size, keep=keep, match=match,
                          router_score_bias=score_bias, file_types=file_types)
    return Report(
        model=model,
        params=params,
        dtype=dtype if quant is not None else dtype or DEFAULT_DTYPE,
        weights=weights,
        kv=kv_cache(spec, t, kv_dtype),
        flops=forward_flops(spec, t),
        # the 2N rule of the language model: a text token never runs the vision tower
        flops_2n=two_n_estimate(params.active - params.towers - params.embeddings),
        images=images,
    )


def moved_to_tokens(report: Report, tokens: int) -> Report:
    """``report`` for a request of ``tokens`` tokens: the same as ``build_report`` with that
    many, computing again only what depends on the tokens (the KV cache and the FLOPs)."""
    spec, model = report.model.spec, report.model
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        raise SpecError(f"expected a positive integer, got {quoted(tokens)}", field="tokens",
                        value=tokens)
    if tokens > spec.context:
        raise TokensOverContext(
            f"{tokens:,} exceeds the context of {model.name} ({spec.context:,} tokens)",
            field="tokens", value=tokens)
    kv, flops = report.kv, report.flops
    # the terms of kv_cache and forward_flops that hold T; the rest is the model's (each tuple
    # made as _replace makes it, without its pass over the keywords: a sweep moves 1,000)
    kv = KVCache._make((tokens, kv.dtype, kv.elements_per_token, kv.bytes_per_token, bytes_for(
        kv_positions(spec, tokens) * kv_elements_per_layer(spec), kv.dtype) + kv.state_bytes,
        *kv[5:]))
    flops = ForwardFlops._make((tokens, flops.attention_projections,
                                attention_context_flops(spec, tokens),
                                ssm_forward_per_token(spec, tokens), *flops[4:]))
    return Report(report.model, report.params, report.dtype, report.weights, kv, flops,
                  report.flops_2n)


class Axis(NamedTuple):
    """One axis of a sweep: a figure's input and the values it takes, in order."""

    name: str  # tokens, batch, dtype, quant, kv_dtype, or a spec field (d_model, layers, ...)
    values: tuple[int | str | None, ...]  # quant None: weights in a plain dtype


class Point(NamedTuple):
    """One point of a sweep: where it is on each axis, and the report there."""

    at: dict[str, int | str | None]  # axis name -> value
    report: Report
    batch: int  # requests served at once, each of report.kv.tokens tokens

    @property
    def kv_bytes(self) -> int:
        """The KV cache of every request in the batch."""
        return self.batch * self.report.kv.bytes_per_request

    @property
    def memory_bytes(self) -> int:
        """Weights and the KV cache of the batch."""
        return self.report.weights_bytes + self.kv_bytes
