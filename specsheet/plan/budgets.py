"""Budget checks: does each figure of a Report stay within its limit?"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from specsheet.figures import Report
from specsheet.units import QuantityKind


class Budget(NamedTuple):
    """A figure that ``specsheet check`` can limit."""

    name: str  # the figure's JSON path
    option: str  # the command-line option that sets its limit
    label: str  # how the figure reads in a table
    kind: QuantityKind  # how its limit is written
    figure: Callable[[Report], int]


BUDGETS: tuple[Budget, ...] = (
    Budget("params.total", "--max-params", "Parameters", "count", lambda r: r.params.total),
    Budget("memory.weights_bytes", "--max-weights", "Weights", "bytes",
           lambda r: r.weights_bytes),
    Budget("kv_cache.bytes_per_request", "--max-kv", "KV cache per request", "bytes",
           lambda r: r.kv.bytes_per_request),
    Budget("flops.forward_per_token", "--max-flops", "Forward FLOPs per token", "count",
           lambda r: r.flops.total),
)
BUDGETS_BY_OPTION = {b.option: b for b in BUDGETS}


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
    """Check ``report`` against ``limits`` (by option), in the order of BUDGETS."""
    return [CheckResult(b, b.figure(report), limits[b.option]) for b in BUDGETS
            if b.option in limits]
