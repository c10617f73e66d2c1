"""Budgets: does each model stay within every limit, and with a GPU, does it serve as asked
(``specsheet check``; exit 1 in the CLI when a limit is exceeded).

    >>> import specsheet as s
    >>> s.check([s.report(s.load("llama3-8b"))], {"memory.weights_bytes": 16 * 10**9}).ok
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from specsheet.api.serve import ServeRequest, Serving, plan_serve
from specsheet.compiled import NamedTuple

if TYPE_CHECKING:
    from specsheet.figures import Report
    from specsheet.plan.budgets import CheckResult, ServeCheck

# how the CLI's JSON document names the option that set each limit (the figure's own name is
# the key)
LIMIT_OPTIONS = {
    "params.total": "--max-params", "memory.weights_bytes": "--max-weights",
    "kv_cache.bytes_per_request": "--max-kv", "flops.forward_per_token": "--max-flops",
    "fits": "--gpu", "max_concurrency": "--min-concurrency", "estimates.prefill_s": "--max-ttft",
    "estimates.tokens_per_s_per_request": "--min-tokens-per-s",
}


def limit_kinds() -> dict[str, str]:
    """How each limit is written, by figure: ``count`` or ``bytes`` (units.parse_quantity)."""
    from specsheet.plan.budgets import BUDGETS

    return {b.name: b.kind for b in BUDGETS}


class ServeLimits(NamedTuple):
    """The serving limits: fewest requests of max_model_len at once, most seconds to the first
    token, fewest tokens/s per request (the last two are roofline estimates)."""

    min_concurrency: int | None = None
    max_ttft: float | None = None
    min_tokens_per_s: float | None = None


class Checked(NamedTuple):
    """Each model's checks, and with a GPU its serving plan and the serving checks."""

    checked: list[tuple[Report, list[CheckResult]]]
    served: list[tuple[Serving, list[ServeCheck]]]

    @property
    def ok(self) -> bool:
        """Every limit holds (a figure equal to its limit holds) and every model fits."""
        return all(r.ok for _, results in self.checked for r in results) and all(
            c.ok for _, checks in self.served for c in checks)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet check --json`` writes for the same inputs."""
        from specsheet.views.check import check_document

        return check_document(self.checked, [(*s, checks) for s, checks in self.served],
                              options=LIMIT_OPTIONS)


def check(reports: Sequence[Report], limits: Mapping[str, int],
          serving: ServeRequest | None = None, serve_limits: ServeLimits = ServeLimits(),
          group_size: int | None = None) -> Checked:
    """``reports`` against ``limits`` (by figure: ``params.total``, ``memory.weights_bytes``,
    ``kv_cache.bytes_per_request``, ``flops.forward_per_token``), and with ``serving`` each
    model served as asked, against ``serve_limits``."""
    from specsheet.plan.budgets import run_checks, serve_checks

    checked = [(report, run_checks(report, dict(limits))) for report in reports]
    served = []
    if serving is not None:
        for report in reports:
            plan = plan_serve(report, serving, group_size)
            served.append((plan, serve_checks(plan.plan, plan.estimates, *serve_limits)))
    return Checked(checked, served)
