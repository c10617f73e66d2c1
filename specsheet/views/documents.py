"""Every JSON document specsheet writes, and its schema version: the one place they are built.

Integers are exact; shares are fractions of 1 (floats). docs/json.md documents every key and
its unit, and ``schema.json`` beside this module (printed by ``specsheet schema``) is the JSON
Schema (draft 2020-12) that every document validates against.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from specsheet.figures import Report

if TYPE_CHECKING:
    from specsheet.plan.budgets import CheckResult
    from specsheet.sources.weights.checkpoint import Inspection

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema.json")


def _shares(parts: dict[str, int], whole: int) -> dict[str, float]:
    return {name: value / whole for name, value in parts.items()}


def count_document(report: Report) -> dict[str, Any]:
    """The document of ``count``: every figure of one model."""
    p, kv, fl, model = report.params, report.kv, report.flops, report.model
    block = p.block
    return {
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "description": model.description,
        "origin": model.origin,
        "reference": model.reference,
        "published_total": model.published_total,
        "counted": model.counted,
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
            "format": report.weights.format,
            "dtype": report.dtype,
            "weights_bytes": report.weights_bytes,
            "bits_per_weight": report.weights_bytes * 8 / p.total,
            "overhead_bytes": report.weights.overhead_bytes,
            "by_component": report.weights.by_component,
            "tensor_types": report.weights.tensor_types,
            "lower_bound": report.weights.lower_bound,
        },
        "kv_cache": {
            "tokens": kv.tokens,
            "dtype": kv.dtype,
            "elements_per_token": kv.elements_per_token,
            "bytes_per_token": kv.bytes_per_token,
            "bytes_per_request": kv.bytes_per_request,
            "state_bytes": kv.state_bytes,
            "layers_by_kind": model.spec.layers_by_kind,
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


def compare_document(reports: list[Report]) -> dict[str, Any]:
    """The document of ``compare``: the models' documents in the order given."""
    return {"schema_version": SCHEMA_VERSION, "models": [count_document(r) for r in reports]}


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
