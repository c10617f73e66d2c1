"""Every JSON document specsheet writes, and its schema version: the one place they are built.

Integers are exact; shares are fractions of 1 (floats). docs/json.md documents every key and
its unit, and ``schema.json`` beside this module (printed by ``specsheet schema``) is the JSON
Schema (draft 2020-12) that every document validates against.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specsheet.figures import Axis, Point, Report

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.plan.budgets import CheckResult
    from specsheet.sources.weights.checkpoint import Inspection

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema.json")


def _shares(parts: dict[str, int], whole: int) -> dict[str, float]:
    return {name: value / whole for name, value in parts.items()}


# sections already built, by the identity of what they were built from (kept alive beside them)
Shared = dict[tuple[Any, ...], tuple[tuple[object, ...], Any]]


def _once(shared: Shared | None, name: str, sources: tuple[object, ...],
          build: Callable[[], Any]) -> Any:
    """``build()``, or the section built before from the very same objects: reports that share
    a part (a sweep over the tokens shares everything but the KV cache and the FLOPs) share
    its section instead of building it again."""
    if shared is None:
        return build()
    key = (name, *map(id, sources))
    hit = shared.get(key)
    if hit is None:
        hit = shared[key] = (sources, build())
    return hit[1]


def count_document(report: Report, shared: Shared | None = None) -> dict[str, Any]:
    """The document of ``count``: every figure of one model. With ``shared``, sections built
    from the same parts as an earlier report's are that report's (the same dict)."""
    p, model = report.params, report.model
    return {
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "description": model.description,
        "origin": model.origin,
        "reference": model.reference,
        "published_total": model.published_total,
        "counted": model.counted,
        "spec": _once(shared, "spec", (model.spec,), model.spec.as_dict),
        "params": _once(shared, "params", (p,), lambda: _params_section(report)),
        "memory": _once(shared, "memory", (report.weights, p, report.dtype),
                        lambda: _memory_section(report)),
        "kv_cache": _kv_section(report),
        "flops": _flops_section(report),
    }


def _kv_section(report: Report) -> dict[str, Any]:
    kv, spec = report.kv, report.model.spec
    return {
        "tokens": kv.tokens,
        "dtype": kv.dtype,
        "elements_per_token": kv.elements_per_token,
        "bytes_per_token": kv.bytes_per_token,
        "bytes_per_request": kv.bytes_per_request,
        "sliding_window": spec.sliding_window,
        "sliding_layers": len(spec.sliding_layers),
    }


def _flops_section(report: Report) -> dict[str, Any]:
    fl = report.flops
    return {
        "tokens": fl.tokens,
        "forward_per_token": fl.total,
        "components": fl.parts(),
        "approx_2n_per_token": report.flops_2n,
        "approx_2n_error_percent": report.flops_2n_error,
    }


def _params_section(report: Report) -> dict[str, Any]:
    p = report.params
    block = p.block
    return {
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
    }


def _memory_section(report: Report) -> dict[str, Any]:
    p = report.params
    return {
        "format": report.weights.format,
        "dtype": report.dtype,
        "weights_bytes": report.weights_bytes,
        "bits_per_weight": report.weights_bytes * 8 / p.total,
        "overhead_bytes": report.weights.overhead_bytes,
        "by_component": report.weights.by_component,
        "tensor_types": report.weights.tensor_types,
        "lower_bound": report.weights.lower_bound,
    }


def compare_document(reports: list[Report]) -> dict[str, Any]:
    """The document of ``compare``: the models' documents in the order given."""
    return {"schema_version": SCHEMA_VERSION, "models": [count_document(r) for r in reports]}


def sweep_document(axes: list[Axis], points: list[Point], batch: int | None,
                   gpu: Accelerator | None) -> dict[str, Any]:
    """The document of ``sweep``: its axes, and each point's place on them with the document
    of ``count`` there. ``batch`` is the requests at once when it is not an axis (else None);
    ``gpu`` the accelerator whose memory the terminal's chart draws a line at."""
    shared: Shared = {}
    entries = []
    before: Report | None = None
    document: dict[str, Any] = {}
    for point in points:
        report = point.report
        if report is not before:  # points that differ only in the batch share their report
            document = _point_report(report, before, document, shared, gpu)
            before = report
        entries.append({"at": point.at, "report": document})
    return {
        "schema_version": SCHEMA_VERSION,
        "axes": [{"name": a.name, "option": a.option, "values": list(a.values)} for a in axes],
        "batch": batch,
        "gpu": None if gpu is None else {"name": gpu.name, "label": gpu.label,
                                         "memory_bytes": gpu.memory_bytes},
        "points": entries,
    }


def _point_report(report: Report, before: Report | None, document: dict[str, Any],
                  shared: Shared, gpu: Accelerator | None) -> dict[str, Any]:
    """The document of one point of a sweep: count's. A report that differs from the one
    ``before`` it (whose ``document`` it was) only in the tokens takes a copy of that document
    with the KV cache and FLOPs of its own.

    The hook for serving: once ``serve`` lands (plan/serving.py), a sweep given ``--gpu``
    takes serve's document here instead of count's (and the schema's ``sweep`` entry with
    it)."""
    if before is not None and report.model is before.model and \
            report.params is before.params and report.weights is before.weights and \
            report.dtype == before.dtype:
        moved = document.copy()
        moved["kv_cache"] = _kv_section(report)
        moved["flops"] = _flops_section(report)
        return moved
    return count_document(report, shared)


def check_entries(results: list[CheckResult]) -> list[dict[str, Any]]:
    """One entry per checked figure: its path, option, value, limit, margin and verdict."""
    return [
        {"figure": r.budget.name, "option": r.budget.option, "value": r.value,
         "limit": r.limit, "margin": r.margin, "ok": r.ok}
        for r in results
    ]


def check_document(checked: list[tuple[Report, list[CheckResult]]]) -> dict[str, Any]:
    """The document of ``check``: the verdict over every model, and each model's checks.

    One model keeps the single-model form (``checks`` and ``model`` at the top); several give
    ``models``: a list of ``{"ok", "checks", "model"}``.
    """
    entries = [{"ok": all(r.ok for r in results), "checks": check_entries(results),
                "model": count_document(report)} for report, results in checked]
    ok = all(entry["ok"] for entry in entries)
    if len(entries) == 1:
        return {"schema_version": SCHEMA_VERSION, "ok": ok, "checks": entries[0]["checks"],
                "model": entries[0]["model"]}
    return {"schema_version": SCHEMA_VERSION, "ok": ok, "models": entries}


def preset_entry(report: Report) -> dict[str, Any]:
    """One preset in the document of ``presets``."""
    model = report.model
    return {"name": model.name, "description": model.description,
            "reference": model.reference, "published_total": model.published_total,
            "total": report.params.total, "spec": model.spec.as_dict()}


def presets_document(reports: list[Report]) -> dict[str, Any]:
    """The document of ``presets``: every built-in preset with its spec and total."""
    return {"schema_version": SCHEMA_VERSION, "presets": [preset_entry(r) for r in reports]}


def schema_text() -> str:
    """The JSON Schema of every document, as shipped."""
    return SCHEMA_PATH.read_text(encoding="utf-8")


def inspect_document(inspection: Inspection) -> dict[str, Any]:
    """The document of ``inspect``: a checkpoint's tensors by component, their bytes, the
    quantization format they match, and the check against the config found beside them."""
    check = inspection.check
    checked: dict[str, Any] | None = None
    if check is not None:
        checked = {
            "config": check.config,
            "matches": check.matches,
            "components": {name: {"file": file, "computed": computed,
                                  "match": file == computed}
                           for name, (file, computed) in check.components.items()},
            "differences": [{"component": d.component, "layer": d.layer, "file": d.file,
                             "computed": d.computed, "tensors": d.tensors}
                            for d in check.differences],
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "format": inspection.format,
        "files": inspection.files,
        "tensors": len(inspection.named),
        "params": {"total": sum(inspection.params.values()),
                   "components": inspection.params},
        "bytes": {
            "data": inspection.data_bytes,
            "by_dtype": inspection.bytes_by_dtype,
            "by_component": inspection.bytes_by_component,
            "predicted": inspection.predicted_bytes,
            "predicted_matches": None if inspection.predicted_bytes is None
            else inspection.predicted_bytes == inspection.known_bytes,
        },
        "quant": inspection.quant,
        "quant_layouts": inspection.layouts,
        "group_size": inspection.group_size,
        "other_tensors": [n.tensor.name for n in inspection.named if n.component == "other"],
        "check": checked,
        "note": inspection.note,
    }
