"""Budgets and checks, keyed by figure: does each figure stay within its limit?

A budget is a figure of a Report (``Budget.name``: its JSON path, ``params.total``), a serving
check a figure of a serve plan (``ServeCheck.figure``: ``max_concurrency``), a local check a
figure of a placement on a machine (``LocalCheck.figure``: ``max_ctx``). Limits are keyed by
those names; which option or file key set a limit is the caller's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from specsheet.compiled import NamedTuple
from specsheet.figures import Report
from specsheet.units import QuantityKind

if TYPE_CHECKING:  # the plan's types only: a check without a GPU never imports the serving plan
    from specsheet.plan.local import LocalFit
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan


class Budget(NamedTuple):
    """A figure of a Report that can be limited."""

    name: str  # the figure's JSON path in the count document
    label: str  # how the figure reads in a table
    kind: QuantityKind  # how its limit is written
    figure: Callable[[Report], int]


BUDGETS: tuple[Budget, ...] = (
    Budget("params.total", "Parameters", "count", lambda r: r.params.total),
    Budget("memory.weights_bytes", "Weights", "bytes", lambda r: r.weights_bytes),
    Budget("kv_cache.bytes_per_request", "KV cache per request", "bytes",
           lambda r: r.kv.bytes_per_request),
    Budget("flops.forward_per_token", "Forward FLOPs per token", "count",
           lambda r: r.flops.total),
)
BUDGETS_BY_NAME = {b.name: b for b in BUDGETS}


class CheckResult(NamedTuple):
    budget: Budget
    value: int  # the model's figure
    limit: int  # the largest value that holds

    @property
    def ok(self) -> bool:
        """A figure equal to its limit holds."""
        return self.value <= self.limit

    @property
    def margin(self) -> int:
        """Headroom: limit - value (negative when the limit is exceeded)."""
        return self.limit - self.value


def run_checks(report: Report, limits: dict[str, int]) -> list[CheckResult]:
    """Check ``report`` against ``limits`` (by budget name), in the order of BUDGETS."""
    return [CheckResult(b, b.figure(report), limits[b.name]) for b in BUDGETS
            if b.name in limits]


class ServeCheck(NamedTuple):
    """One serving limit: the figure, its limit and the verdict."""

    figure: str  # the figure's JSON path in the serve entry
    label: str
    value: float | int | bool | None  # None: no estimate (nothing fits)
    limit: float | int | bool
    ok: bool
    bound: Literal["fits", "min", "max"]  # the model fits; value >= limit; value <= limit


def serve_checks(plan: ServePlan, est: Estimates | None, min_concurrency: int | None = None,
                 max_ttft: float | None = None,
                 min_tokens_per_s: float | None = None) -> list[ServeCheck]:
    """The model fits (always checked), and each limit given: at least ``min_concurrency``
    requests of max_model_len at once, a time to first token of at most ``max_ttft`` seconds,
    at least ``min_tokens_per_s`` tokens/s per request (estimates; no estimate fails)."""
    checks = [ServeCheck("fits", "Fits", plan.fits, True, plan.fits, "fits")]
    if min_concurrency is not None:
        checks.append(ServeCheck("max_concurrency", "Requests of max-model-len at once",
                                 plan.max_concurrency, min_concurrency,
                                 plan.max_concurrency >= min_concurrency, "min"))
    if max_ttft is not None:
        ttft = None if est is None else est.prefill_s
        checks.append(ServeCheck("estimates.prefill_s", "Time to first token, s (estimate)",
                                 ttft, max_ttft, ttft is not None and ttft <= max_ttft, "max"))
    if min_tokens_per_s is not None:
        rate = None if est is None else est.tokens_per_s_per_request
        checks.append(ServeCheck("estimates.tokens_per_s_per_request",
                                 "Tokens/s per request (estimate)", rate, min_tokens_per_s,
                                 rate is not None and rate >= min_tokens_per_s, "min"))
    return checks


class LocalCheck(NamedTuple):
    """One limit of ``specsheet check --engine``: the figure (max_ctx, layers.on_gpu), its
    value (None: nothing fits), the limit (a least value) and the verdict."""

    figure: str
    value: int | None
    limit: int
    ok: bool


def local_checks(fit: LocalFit, min_ctx: int | None, min_gpu_layers: int | None
                 ) -> list[LocalCheck]:
    """The placement against the least context and the fewest GPU layers asked for."""
    checks = []
    if min_ctx is not None:
        value = fit.max_ctx
        checks.append(LocalCheck("max_ctx", value, min_ctx, value is not None and
                                 value >= min_ctx))
    if min_gpu_layers is not None:
        on_gpu = fit.placement.on_gpu if fit.placement.fits_estimate else None
        checks.append(LocalCheck("layers.on_gpu", on_gpu, min_gpu_layers,
                                 on_gpu is not None and on_gpu >= min_gpu_layers))
    return checks
