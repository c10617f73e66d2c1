"""A Report gathers every figure for one model; ``report_dict`` is the JSON schema.

One Report feeds every renderer (table, JSON, CSV, Markdown), so they always agree.
"""

from typing import Any, NamedTuple

from specsheet.errors import SpecError
from specsheet.flops import ForwardFlops, forward_flops, two_n_estimate
from specsheet.memory import DEFAULT_DTYPE, KVCache, bytes_for, check_dtype, kv_cache
from specsheet.params import ParamBreakdown, count_params
from specsheet.spec import Model

SCHEMA_VERSION = 1


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
        raise SpecError(
            f"tokens: {t:,} exceeds the context of {model.name} ({spec.context:,} tokens); "
            "lower --tokens or raise the context with --context"
        )
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


def _shares(parts: dict[str, int], whole: int) -> dict[str, float]:
    return {name: value / whole for name, value in parts.items()}


def report_dict(report: Report) -> dict[str, Any]:
    """The JSON document of one model (schema_version 1). Integers are exact; shares are
    fractions of 1 (floats); the README documents every key and its unit."""
    p, kv, fl, model = report.params, report.kv, report.flops, report.model
    block = p.block
    return {
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "description": model.description,
        "origin": model.origin,
        "reference": model.reference,
        "published_total": model.published_total,
        "spec": model.spec.as_dict(),
        "params": {
            "total": p.total,
            "non_embedding": p.non_embedding,
            "active": p.active,
            "components": p.components(),
            "moe": p.moe._asdict(),
            "shares": _shares(p.components(), p.total),
            "per_block": {
                "attention": block.attention,
                "mlp": block.mlp,
                "norms": block.norms,
                "total": block.total,
            },
            # attention and MLP as fractions of their sum: a block's weights without its norms
            "block_shares": _shares(
                {"attention": block.attention, "mlp": block.mlp}, block.attention + block.mlp
            ),
        },
        "memory": {
            "dtype": report.dtype,
            "weights_bytes": report.weights_bytes,
        },
        "kv_cache": {
            "tokens": kv.tokens,
            "dtype": kv.dtype,
            "elements_per_token": kv.elements_per_token,
            "bytes_per_token": kv.bytes_per_token,
            "bytes_per_request": kv.bytes_per_request,
            "sliding_window": model.spec.sliding_window,
            "sliding_layers": len(model.spec.sliding_layers),
        },
        "flops": {
            "tokens": fl.tokens,
            "forward_per_token": fl.total,
            "components": fl.parts(),
            "approx_2n_per_token": report.flops_2n,
            "approx_2n_error_percent": report.flops_2n_error,
        },
    }


def compare_dict(reports: list[Report]) -> dict[str, Any]:
    """The JSON document of ``compare``: the models' documents in the order given."""
    return {"schema_version": SCHEMA_VERSION, "models": [report_dict(r) for r in reports]}
