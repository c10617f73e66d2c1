"""Models side by side, with ratios to the first, and with a GPU each one served
(``specsheet compare``).

    >>> import specsheet as s
    >>> c = s.compare([s.report(s.load(m), tokens=8192) for m in ("llama3-8b", "llama3-70b")])
    >>> [r.params.total for r in c.reports]
    [8030261248, 70553706496]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specsheet.compiled import NamedTuple

if TYPE_CHECKING:
    from specsheet.api.serve import ServeRequest, Serving
    from specsheet.figures import Report


class Compared(NamedTuple):
    """The models' reports, and with a GPU each served."""

    reports: list[Report]
    served: list[Serving] | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet compare --json`` writes for the same inputs."""
        from specsheet.views.compare import compare_document

        return compare_document(self.reports, None if self.served is None
                                else [tuple(s) for s in self.served])  # type: ignore[misc]


def at_one_length(reports: Sequence[Report]) -> tuple[list[Report], int]:
    """``reports`` moved to one request length, the shortest context among them (each was
    built at its own), and that length: models compare only at the same tokens."""
    from specsheet.figures import moved_to_tokens

    tokens = min(r.model.spec.context for r in reports)
    return [r if r.flops.tokens == tokens else moved_to_tokens(r, tokens) for r in reports], tokens


def compare(reports: Sequence[Report], serving: ServeRequest | None = None,
            group_size: int | None = None) -> Compared:
    """``reports`` side by side; with ``serving`` every one served as asked (at the
    request's max_model_len, by default each report's tokens, so the serving rows are at the
    length the figures are)."""
    if serving is None:
        return Compared(list(reports), None)
    from specsheet.api.serve import plan_serve

    if serving.max_model_len is None and reports:
        serving = serving._replace(max_model_len=min(r.flops.tokens for r in reports))
    return Compared(list(reports), [plan_serve(r, serving, group_size) for r in reports])
