"""``check``: the verdict on each figure's limit (and each serving limit), its document and its
tables. The document names each limit's option as the caller spells it (``options``, by the
figure's path); nothing here knows an option's name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.figures import Report
from specsheet.views import SCHEMA_VERSION
from specsheet.views.count import count_document
from specsheet.views.serve import serve_entry

if TYPE_CHECKING:
    from specsheet.plan.budgets import CheckResult, ServeCheck
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.views.table import TableView


def check_entries(results: list[CheckResult], options: Mapping[str, str]
                  ) -> list[dict[str, Any]]:
    """One entry per checked figure: its path, option (``options[path]``), value, limit,
    margin and verdict."""
    return [
        {"figure": r.budget.name, "option": options[r.budget.name], "value": r.value,
         "limit": r.limit, "margin": r.margin, "ok": r.ok}
        for r in results
    ]


def serve_check_entries(results: list[ServeCheck], options: Mapping[str, str]
                        ) -> list[dict[str, Any]]:
    """One entry per serving limit: its path in the serve entry, option (``options[path]``),
    value, limit, verdict (a value of null: no estimate, nothing fits)."""
    return [{"figure": r.figure, "option": options[r.figure], "value": r.value, "limit": r.limit,
             "ok": r.ok} for r in results]


def check_document(checked: list[tuple[Report, list[CheckResult]]],
                   served: list[tuple[ServePlan, Estimates | None, dict[str, float | None],
                                      list[ServeCheck]]] | None = None, *,
                   options: Mapping[str, str]) -> dict[str, Any]:
    """The document of ``check``: the verdict over every model, and each model's checks.

    One model keeps the single-model form (``checks`` and ``model`` at the top); several give
    ``models``: a list of ``{"ok", "checks", "model"}``. On a GPU each also holds ``serve``
    (the serve entry, with ``checks`` of the serving limits). ``options``: the option that
    sets each figure's limit, by the figure's path (``params.total``, ``max_concurrency``).
    """
    entries: list[dict[str, Any]] = [
        {"ok": all(r.ok for r in results), "checks": check_entries(results, options),
         "model": count_document(report)} for report, results in checked]
    for entry, (plan, est, costs, results) in zip(entries, served or [], strict=False):
        entry["serve"] = {**serve_entry(plan, est, costs),
                          "checks": serve_check_entries(results, options)}
        entry["ok"] = entry["ok"] and all(r.ok for r in results)
    ok = all(entry["ok"] for entry in entries)
    # every failing check at the top, whichever produced it (a size limit or a serving one)
    failed = [{"model": entry["model"]["name"], **check}
              for entry in entries
              for check in [*entry["checks"], *entry.get("serve", {}).get("checks", [])]
              if not check["ok"]]
    if len(entries) == 1:
        single = {"schema_version": SCHEMA_VERSION, "ok": ok, "failed": failed,
                  "checks": entries[0]["checks"], "model": entries[0]["model"]}
        if "serve" in entries[0]:
            single["serve"] = entries[0]["serve"]
        return single
    return {"schema_version": SCHEMA_VERSION, "ok": ok, "failed": failed, "models": entries}



def schemas() -> dict[str, Any]:
    """The schema of ``check_document``: one model (``check``) or several (``check_many``),
    their entries, and the serve entry with its serving limits (``serve_checked``)."""
    from specsheet.views.schema import VERSION, obj, optional, ref
    from specsheet.views.serve import schemas as serve_schemas

    checks = {"type": "array", "items": ref("check_entry"),
              "description": "the size limits (empty when only serving limits are given)"}
    scalar = {"type": ["number", "boolean", "null"]}
    failed = {"type": "array", "description": "every failing check of every model, size limits "
              "and serving limits alike (empty when ok)", "items": optional(obj({
                  "model": {"type": "string"}, "figure": {"type": "string"},
                  "option": {"type": "string"}, "value": scalar, "limit": scalar,
                  "margin": {"type": "integer"}, "ok": {"type": "boolean"}}), "margin")}
    serve_checked = obj({**serve_schemas()["serve_entry"]["properties"], "checks": {
        "type": "array", "items": obj({
            "figure": {"type": "string"}, "option": {"type": "string"}, "value": scalar,
            "limit": scalar, "ok": {"type": "boolean"}})}},
        "The serve entry with the serving limits of check on a GPU (fits always checked).")
    return {
        "check_entry": obj({
            "figure": {"type": "string"}, "option": {"type": "string"},
            "value": {"type": "integer"}, "limit": {"type": "integer"},
            "margin": {"type": "integer"}, "ok": {"type": "boolean"},
        }),
        "check": optional(obj({"schema_version": VERSION, "ok": {"type": "boolean"},
                               "failed": failed, "checks": checks, "model": ref("count"),
                               "serve": ref("serve_checked")}), "serve"),
        "check_many": obj({"schema_version": VERSION, "ok": {"type": "boolean"},
                           "failed": failed,
                           "models": {"type": "array", "minItems": 2, "items": optional(obj({
                               "ok": {"type": "boolean"}, "checks": checks,
                               "model": ref("count"), "serve": ref("serve_checked")}),
                               "serve")}}),
        "serve_checked": serve_checked,
    }


def check_view(report: Report, results: list[CheckResult]) -> TableView:
    """Each checked figure with its limit, the margin left and the verdict."""
    from specsheet.units import exact, human_bytes, human_count, human_flops, percent
    from specsheet.views.table import TableView

    failed = sum(not r.ok for r in results)
    verdict = "all within budget" if not failed else f"{failed} over budget"
    view = TableView(
        title=f"{report.model.name} at T = {exact(report.kv.tokens)}: {verdict}",
        headers=("Figure", "Value", "Limit", "Margin", "Verdict", "Exact value", "Exact limit"),
        numeric=(False, True, True, True, False, True, True),
        optional=(False, True, True, True, False, False, False),
    )
    for r in results:
        human = human_bytes if r.budget.kind == "bytes" else human_count
        if r.budget.name == "flops.forward_per_token":
            human = human_flops
        label = r.budget.label
        if r.budget.name == "memory.weights_bytes":
            label += f" ({report.weights.format})"
        elif r.budget.name == "kv_cache.bytes_per_request":
            label += f" ({report.kv.dtype})"
        margin = f"{'+' if r.margin >= 0 else '-'}{human(abs(r.margin))}"
        margin += f" ({percent(r.margin, r.limit)})" if r.limit else ""
        view.add(label, human(r.value), human(r.limit), margin, "ok" if r.ok else "OVER",
                 exact(r.value), exact(r.limit))
    view.caption = "A figure equal to its limit is within budget."
    view.column_notes = {"Margin": "Margin = limit - value."}
    return view


def serve_check_view(plan: ServePlan, est: Estimates | None, costs: dict[str, float | None],
                     results: list[ServeCheck]) -> TableView:
    """The serving limits of ``check`` on a GPU: each figure, its limit and the verdict."""
    from specsheet.units import exact, significant
    from specsheet.views.table import TableView

    failed = sum(not r.ok for r in results)
    layout = plan.layout
    view = TableView(
        title=f"{plan.report.model.name} on {layout.gpus} x {plan.hardware.name} "
              f"(tp {layout.tp}, pp {layout.pp}): "
              f"{'all limits hold' if not failed else f'{failed} over budget'}",
        headers=("Figure", "Value", "Limit", "Verdict"),
        numeric=(False, True, True, False))

    def cell(value: float | int | bool | None) -> str:
        if value is None:
            return "- (does not fit)"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, int):
            return exact(value)
        return significant(value)

    for r in results:
        limit = cell(r.limit)
        if r.bound == "min":
            limit = f">= {limit}"
        elif r.bound == "max":
            limit = f"<= {limit}"
        view.add(r.label, cell(r.value), limit, "ok" if r.ok else "OVER")
    view.caption = (f"At max-model-len {exact(plan.request.max_model_len)}; time and speed "
                    "are roofline estimates (docs/serving.md).")
    return view

