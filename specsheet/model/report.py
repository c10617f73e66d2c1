"""A Report gathers every figure of one model: parameters, weight bytes, KV cache and FLOPs.

One Report feeds every document and table (views/), so JSON, CSV, Markdown and the terminal
always agree. No CLI words here: errors state facts, the CLI phrases the advice.
"""

from typing import NamedTuple

from specsheet.errors import SpecError, TokensOverContext
from specsheet.model.flops import ForwardFlops, forward_flops, two_n_estimate
from specsheet.model.memory import DEFAULT_DTYPE, KVCache, bytes_for, check_dtype, kv_cache
from specsheet.model.params import ParamBreakdown, count_params
from specsheet.model.spec import Model


class Report(NamedTuple):
    """Every figure of one model at context ``flops.tokens`` and the chosen dtypes."""

    model: Model
    params: ParamBreakdown
    dtype: str  # weight element type
    weights_bytes: int
    kv: KVCache
    flops: ForwardFlops
    flops_2n: int  # the 2N rule's estimate of flops.total (an approximation)

    @property
    def flops_2n_error(self) -> float:
        """Relative error of the 2N estimate against the exact count, in percent."""
        return 100 * (self.flops_2n - self.flops.total) / self.flops.total


def build_report(
    model: Model,
    tokens: int | None = None,
    dtype: str = DEFAULT_DTYPE,
    kv_dtype: str = DEFAULT_DTYPE,
) -> Report:
    """Compute every figure of ``model`` for a request of ``tokens`` tokens (default: context)."""
    check_dtype(dtype, "dtype")
    check_dtype(kv_dtype, "kv-dtype")
    spec = model.spec
    t = spec.context if tokens is None else tokens
    if isinstance(t, bool) or not isinstance(t, int) or t <= 0:
        raise SpecError(f"tokens: expected a positive integer, got {t!r}")
    if t > spec.context:
        raise TokensOverContext(
            f"tokens: {t:,} exceeds the context of {model.name} ({spec.context:,} tokens)")
    params = count_params(spec)
    return Report(
        model=model,
        params=params,
        dtype=dtype,
        weights_bytes=bytes_for(params.total, dtype),
        kv=kv_cache(spec, t, kv_dtype),
        flops=forward_flops(spec, t),
        flops_2n=two_n_estimate(params.active - params.embeddings),
    )
