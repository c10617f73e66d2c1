"""Speculative decoding for ``serve`` and ``plan``: the draft, method and tokens checked and
loaded as vLLM's SpeculativeConfig takes them (plan/speculative.py; docs/serving.md,
"Speculative decoding")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError

if TYPE_CHECKING:
    from specsheet.figures import Report
    from specsheet.plan.parallel import Parallel
    from specsheet.plan.speculative import Draft


class Speculative(NamedTuple):
    """A request's speculative settings, as ServeRequest and PlanRequest carry them."""

    draft: str | None = None  # a preset, config.json, folder or Hub repository
    speculative_tokens: int | None = None
    speculative_method: str | None = None


def check_speculation(given: Speculative) -> str | None:
    """The method, after the checks that need no model (None: no speculative decoding)."""
    from specsheet.plan.speculative import check_method

    if given == Speculative():
        return None
    return check_method(given.speculative_method, given.speculative_tokens,
                        given.draft is not None, given.draft)


def draft_of(report: Report, given: Speculative, layout: Parallel,
             timeout: float | None = None) -> Draft | None:
    """The draft of ``given`` for ``report``'s model on ``layout``, loaded and checked
    (None without speculative decoding)."""
    from specsheet.plan.speculative import Draft, check_draft, mtp_tokens

    method = check_speculation(given)
    if method is None:
        return None
    model = report.model
    tokens = given.speculative_tokens
    if method == "mtp":
        draft = Draft(method, mtp_tokens(tokens, model.mtp_layers, model.name),
                      mtp_layers=model.mtp_layers)
    elif method == "ngram":
        assert tokens is not None
        draft = Draft(method, tokens)
    else:
        assert tokens is not None and given.draft is not None
        draft = _load(given.draft, method, tokens, report, timeout)
    check_draft(model.spec, draft, layout, model.name)
    return draft


def _load(ref: str, method: str, tokens: int, report: Report, timeout: float | None) -> Draft:
    """The draft model ``ref`` as vLLM loads it: in the target's dtype; a draft model in its
    own shipped format."""
    from specsheet.api.count import report as report_of
    from specsheet.plan.speculative import Draft
    from specsheet.sources import DEFAULT_TIMEOUT
    from specsheet.sources.resolve import resolve

    try:
        model = resolve(ref, None, timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
    except SpecError as e:
        if e.source is None:
            e.field = e.field or "draft"
        else:  # the message names the file
            e.context += " (the draft model)"
        raise
    dtype = report.dtype
    quant = group = None
    if method == "draft_model" and model.shipped is not None:
        drafted = report_of(model, None, dtype, report.kv.dtype)
        if drafted.weights.quantized:
            quant, group = drafted.weights.format, drafted.weights.group_size
    return Draft(method, tokens, name=model.name, spec=model.spec, dtype=dtype, quant=quant,
                 group_size=group, draft_vocab=model.draft_vocab)
