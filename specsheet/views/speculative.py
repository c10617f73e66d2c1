"""Speculative decoding in ``serve``'s document and tables: the section that names the method,
the draft and what vLLM reserves for it (plan/speculative.py; docs/serving.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specsheet.plan.serving import ServePlan
    from specsheet.views.table import TableView


def speculative_section(plan: ServePlan) -> dict[str, Any] | None:
    """The method, the draft and its memory on the binding GPU (null without speculative
    decoding)."""
    draft = plan.request.draft
    if draft is None:
        return None
    s = plan.binding
    return {"method": draft.method, "draft": draft.name, "tokens": draft.tokens,
            "draft_layers": draft.layers, "draft_tp": plan.layout.tp if draft.layers else None,
            "draft_weights_bytes": s.draft_bytes,
            "draft_kv_bytes_per_token": s.draft_bytes_per_token,
            "draft_kv_bytes_per_block": s.draft_block_bytes,
            "lookahead_slots": draft.lookahead}


def speculative_schema() -> dict[str, Any]:
    """The schema of ``speculative_section``."""
    from specsheet.views.schema import obj

    count = {"type": "integer", "minimum": 0}
    return {"oneOf": [{"type": "null"}, obj({
        "method": {"enum": ["draft_model", "eagle", "eagle3", "mtp", "ngram"],
                   "description": "vLLM's speculative method"},
        "draft": {"type": ["string", "null"], "description": "the draft model's name; null "
                  "for ngram (no draft) and mtp (the checkpoint's own layers)"},
        "tokens": {"type": "integer", "minimum": 1,
                   "description": "num_speculative_tokens: tokens proposed a step"},
        "draft_layers": {**count, "description": "the draft's attention layers, each with "
                         "its KV in the target's blocks"},
        "draft_tp": {"type": ["integer", "null"], "minimum": 1,
                     "description": "the draft's tensor-parallel size (the target's); null "
                                    "without a draft"},
        "draft_weights_bytes": {**count, "description": "the draft's weights on one GPU, "
                                "among memory_per_gpu.buffers_bytes"},
        "draft_kv_bytes_per_token": {**count, "description": "one token in every draft layer "
                                     "on one GPU"},
        "draft_kv_bytes_per_block": {**count, "description": "the draft layers' pages in one "
                                     "block, added to the target's (kv_blocks)"},
        "lookahead_slots": {**count, "description": "num_lookahead_tokens: slots a running "
                            "request holds beyond its tokens, up to max_model_len (0 for "
                            "ngram)"},
    }, "Speculative decoding as vLLM reserves for it; null without.")]}


def draft_label(plan: ServePlan) -> str:
    """The memory table's name of the draft's weights."""
    draft = plan.request.draft
    assert draft is not None
    what = draft.name or ("MTP layers" if draft.method == "mtp" else draft.method)
    return f"Draft weights ({draft.method}: {what})"


def add_draft_rows(plan: ServePlan, fit: TableView) -> None:
    """The fit table's rows for the draft (nothing without speculative decoding)."""
    from specsheet.units import exact

    draft = plan.request.draft
    if draft is None:
        return
    s = plan.binding
    if draft.layers:
        fit.add(f"Draft KV per token ({exact(draft.layers)} layer"
                f"{'s' if draft.layers != 1 else ''})", f"{exact(s.draft_bytes_per_token)} B")
    else:
        fit.add(f"Draft ({draft.method})", "none: the request's own n-grams")
    fit.add(f"Lookahead slots a request ({exact(draft.tokens)} tokens a step)",
            exact(draft.lookahead))
