"""Every JSON document specsheet writes, and its schema version: the one place they are built.

Integers are exact; shares are fractions of 1 (floats). docs/json.md documents every key and
its unit, and ``schema.json`` beside this module (printed by ``specsheet schema``) is the JSON
Schema (draft 2020-12) that every document validates against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specsheet.figures import Axis, Point, Report

if TYPE_CHECKING:
    from specsheet.hardware.catalog import Accelerator
    from specsheet.model.spec import Model
    from specsheet.plan.budgets import CheckResult, ServeCheck
    from specsheet.plan.inspection import Inspection
    from specsheet.plan.roofline import Estimates
    from specsheet.plan.serving import ServePlan
    from specsheet.plan.training import TrainingPlan

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
        "state_bytes": kv.state_bytes,
        "layers_by_kind": spec.layers_by_kind,
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


def compare_document(reports: list[Report],
                     served: list[tuple[ServePlan, Estimates | None,
                                        dict[str, float | None]]] | None = None
                     ) -> dict[str, Any]:
    """The document of ``compare``: the models' documents in the order given; with --gpu,
    ``serve``: each model's serve entry in the same order."""
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION,
                                "models": [count_document(r) for r in reports]}
    if served is not None:
        document["serve"] = [serve_entry(*entry) for entry in served]
    return document


def sweep_document(axes: list[Axis], points: list[Point], batch: int | None,
                   gpu: Accelerator | None,
                   served: list[tuple[ServePlan, Estimates | None, dict[str, float | None]]]
                   | None = None) -> dict[str, Any]:
    """The document of ``sweep``: its axes, and each point's place on them with the document
    of ``count`` there, or with ``served`` (a plan per point, on ``gpu``) that of ``serve``.
    ``batch`` is the requests at once when it is not an axis (else None)."""
    shared: Shared = {}
    entries = []
    before: Report | None = None
    document: dict[str, Any] = {}
    for i, point in enumerate(points):
        report = point.report
        if served is not None:
            document = serve_document(*served[i], shared)
        elif report is not before:  # points that differ only in the batch share their report
            document = _point_report(report, before, document, shared)
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
                  shared: Shared) -> dict[str, Any]:
    """The document of one point of a sweep without a GPU: count's. A report that differs
    from the one ``before`` it (whose ``document`` it was) only in the tokens takes a copy of
    that document with the KV cache and FLOPs of its own."""
    if before is not None and report.model is before.model and \
            report.params is before.params and report.weights is before.weights and \
            report.dtype == before.dtype:
        moved = document.copy()
        moved["kv_cache"] = _kv_section(report)
        moved["flops"] = _flops_section(report)
        return moved
    return count_document(report, shared)


def check_entries(results: list[CheckResult], options: Mapping[str, str]
                  ) -> list[dict[str, Any]]:
    """One entry per checked figure: its path, option (``options`` by figure), value, limit,
    margin and verdict."""
    return [
        {"figure": r.budget.name, "option": options[r.budget.name], "value": r.value,
         "limit": r.limit, "margin": r.margin, "ok": r.ok}
        for r in results
    ]


def serve_check_entries(results: list[ServeCheck], options: Mapping[str, str]
                        ) -> list[dict[str, Any]]:
    """One entry per serving limit: its path in the serve entry, option (``options`` by figure),
    value, limit, verdict (a value of null: no estimate, nothing fits)."""
    return [{"figure": r.figure, "option": options[r.figure], "value": r.value, "limit": r.limit,
             "ok": r.ok} for r in results]


def check_document(checked: list[tuple[Report, list[CheckResult]]],
                   served: list[tuple[ServePlan, Estimates | None, dict[str, float | None],
                                      list[ServeCheck]]] | None = None, *,
                   options: Mapping[str, str]) -> dict[str, Any]:
    """The document of ``check``: the verdict over every model, and each model's checks.

    One model keeps the single-model form (``checks`` and ``model`` at the top); several give
    ``models``: a list of ``{"ok", "checks", "model"}``. With --gpu each also holds ``serve``
    (the serve entry, with ``checks`` of the serving limits).
    """
    entries: list[dict[str, Any]] = [
        {"ok": all(r.ok for r in results), "checks": check_entries(results, options),
         "model": count_document(report)} for report, results in checked]
    for entry, (plan, est, costs, results) in zip(entries, served or [], strict=False):
        entry["serve"] = {**serve_entry(plan, est, costs),
                          "checks": serve_check_entries(results, options)}
        entry["ok"] = entry["ok"] and all(r.ok for r in results)
    ok = all(entry["ok"] for entry in entries)
    if len(entries) == 1:
        single = {"schema_version": SCHEMA_VERSION, "ok": ok, "checks": entries[0]["checks"],
                  "model": entries[0]["model"]}
        if "serve" in entries[0]:
            single["serve"] = entries[0]["serve"]
        return single
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


def accelerator_entry(accelerator: Accelerator) -> dict[str, Any]:
    """One accelerator as every document shows it: each figure an exact integer in base units
    (bytes, bytes per second, dense FLOP per second by element type, widest first), its
    sources by field, and the notes."""
    from specsheet.hardware.catalog import PEAK_DTYPES

    peaks = accelerator.peak_flops_per_s
    return {
        "name": accelerator.name,
        "label": accelerator.label,
        "vendor": accelerator.vendor,
        "memory_bytes": accelerator.memory_bytes,
        "bandwidth_bytes_per_s": accelerator.bandwidth_bytes_per_s,
        "peak_flops_per_s": {dtype: peaks[dtype] for dtype in PEAK_DTYPES if dtype in peaks},
        "interconnect": accelerator.interconnect,
        "interconnect_bytes_per_s": accelerator.interconnect_bytes_per_s,
        "sources": dict(accelerator.sources),
        "notes": accelerator.notes,
    }


def hardware_document(accelerators: list[Accelerator]) -> dict[str, Any]:
    """The document of ``hardware``: every built-in accelerator."""
    return {"schema_version": SCHEMA_VERSION,
            "accelerators": [accelerator_entry(a) for a in accelerators]}


def accelerator_document(accelerator: Accelerator) -> dict[str, Any]:
    """The document of ``hardware NAME``: one accelerator, built-in or from a file."""
    return {"schema_version": SCHEMA_VERSION, "accelerator": accelerator_entry(accelerator)}


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


def train_document(model: Model, plan: TrainingPlan) -> dict[str, Any]:
    """The document of ``train``: FLOPs per token and in total (exact, and three estimates),
    time and cost, and the memory of a step on one GPU."""
    from specsheet.plan.training import estimate_errors

    fl, layout, states, act = plan.flops, plan.layout, plan.states, plan.activations
    tokens = plan.tokens_total
    errors = estimate_errors(plan)
    estimates = {"approx_6n": plan.approx_6n, "approx_palm": plan.approx_palm,
                 "approx_megatron": plan.approx_megatron}
    flops: dict[str, Any] = {
        "seq_len": fl.tokens,
        "attention": fl.attention,
        "recompute": fl.recompute,
        "forward_per_token": fl.forward,
        "backward_per_token": fl.backward,
        "ssm_backward_per_token": fl.ssm_backward,
        "recomputed_per_token": fl.recomputed,
        "attention_core_per_token": fl.attention_core,
        "per_token_model": fl.model,
        "per_token_hardware": fl.hardware,
        "total_model": plan.total_model_flops,
        "total_hardware": plan.total_hardware_flops,
    }
    for name, per_token in estimates.items():
        flops[f"{name}_per_token"] = per_token
        flops[f"{name}_total"] = per_token * tokens
        flops[f"{name}_error_percent"] = errors[name]
    acc = plan.accelerator
    return {
        "schema_version": SCHEMA_VERSION,
        "name": model.name,
        "origin": model.origin,
        "spec": model.spec.as_dict(),
        "params": {"total": plan.params.total, "active": plan.params.active,
                   "non_embedding": plan.params.non_embedding,
                   "trainable": states.trainable_params},
        "flops": flops,
        "tokens_total": tokens,
        "tokens_default": plan.tokens_default,
        "hardware": {"gpu": acc.name, "label": acc.label, "gpus": layout.gpus,
                     "dtype": plan.recipe.compute_dtype,
                     "peak_flops_per_s": plan.peak_flops_per_s, "mfu": plan.mfu},
        "time": {"seconds": plan.time.seconds, "gpu_hours": plan.time.gpu_hours,
                 "days": plan.time.days, "usd": plan.time.usd},
        "parallelism": {"gpus": layout.gpus, "dp": layout.dp, "tp": layout.tp,
                        "pp": layout.pp, "sp": layout.sp, "zero": layout.zero},
        "precision": plan.recipe.precision,
        "optimizer": plan.optimizer,
        "lora": {"rank": plan.lora_rank, "targets": list(plan.lora_targets),
                 "qlora": plan.qlora, "base_format": plan.base_format}
        if plan.lora_rank else None,
        "memory_per_gpu": {
            "weights_bytes": states.weights_bytes,
            "frozen_bytes": states.frozen_bytes,
            "gradients_bytes": states.gradients_bytes,
            "optimizer_bytes": states.optimizer_bytes,
            "activations_bytes": act.total,
            "activations_per_sequence_bytes": act.per_sequence,
            "activations_per_layer_bytes": act.per_layer,
            "activations_form": act.form,
            "micro_batch": plan.micro_batch,
            "total_bytes": plan.total_bytes,
            "capacity_bytes": plan.capacity_bytes,
        },
        "fits": plan.fits,
        "max_micro_batch": plan.max_micro_batch,
        "assumptions": list(plan.assumptions),
    }


def serve_entry(plan: ServePlan, est: Estimates | None, costs: dict[str, float | None],
                shared: Shared | None = None) -> dict[str, Any]:
    """The figures of serving one model (without the schema version): exact memory per GPU of
    the binding pipeline stage, the fit, and the roofline estimates (null when nothing fits).
    With ``shared``, sections built from the same objects as an earlier plan's are that
    plan's (a sweep's points on one layout share the model, the hardware, the layout and the
    estimates)."""
    report, hw, layout = plan.report, plan.hardware, plan.layout
    return {
        "model": _once(shared, "serve.model", (report.model, report.weights, report.dtype,
                                               report.kv.dtype),
                       lambda: {"name": report.model.name, "origin": report.model.origin,
                                "format": report.weights.format, "dtype": report.dtype,
                                "kv_dtype": report.kv.dtype}),
        "hardware": _once(shared, "serve.hardware", (hw,),
                          lambda: {"name": hw.name, "label": hw.label,
                                   "memory_bytes": hw.memory_bytes,
                                   "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
                                   "peak_flops_per_s": dict(hw.peak_flops_per_s),
                                   "interconnect_bytes_per_s": hw.interconnect_bytes_per_s}),
        "parallel": _once(shared, "serve.parallel", (layout,),
                          lambda: {"gpus": layout.gpus, "tp": layout.tp, "pp": layout.pp,
                                   "ep": layout.ep}),
        **_serve_memory(plan),
        "estimates": None if est is None else _once(
            shared, "serve.estimates", (est, costs, plan.request.prompt, plan.request.output),
            lambda: _estimates_section(plan, est, costs)),
    }


def _estimates_section(plan: ServePlan, est: Estimates,
                       costs: dict[str, float | None]) -> dict[str, Any]:
    """The roofline estimates of a serve entry, with the costs and their assumptions."""
    from specsheet.plan.roofline import assumptions

    request = plan.request
    return {
        "concurrency": est.concurrency,
        "prompt_tokens": request.prompt,
        "output_tokens": request.output,
        "compute_dtype": est.compute_dtype,
        "peak_flops_per_s": est.peak_flops_per_s,
        "mfu": est.mfu,
        "mbu": est.mbu,
        "prefill_s": est.prefill_s,
        "prefill_compute_s": est.prefill_compute_s,
        "prefill_allreduce_s": est.prefill_allreduce_s,
        "decode_context": est.decode_context,
        "decode_step_s": est.decode_step_s,
        "decode_bytes_per_step": est.decode_bytes,
        "decode_flops_per_step": est.decode_flops,
        "experts_touched": est.experts_touched,
        "tokens_per_s_per_request": est.tokens_per_s_per_request,
        "tokens_per_s_total": est.tokens_per_s_total,
        "tokens_per_s_end_to_end": est.tokens_per_s_end_to_end(request.output),
        "usd_per_gpu_hour": est.price,
        "tokens_per_word": est.tokens_per_word,
        "text_tokens": est.text_tokens,
        "text_words": est.text_words,
        **costs,
        "assumptions": assumptions(plan, est),
    }


def _serve_memory(plan: ServePlan) -> dict[str, Any]:
    """The sections of a serve entry that change with the tokens of a request."""
    request, s = plan.request, plan.binding
    return {
        "request": {"max_model_len": request.max_model_len,
                    "max_num_batched_tokens": request.batched_tokens,
                    "max_num_seqs": request.max_seqs,
                    "memory_utilization": None if plan.kv_memory_given
                    else float(plan.utilization)},
        "memory_per_gpu": {
            "stage": s.stage,
            "layers": s.layers,
            "capacity_bytes": s.capacity_bytes,
            "budget_bytes": s.budget_bytes,
            "weights_bytes": s.weights_bytes,
            "activation_bytes": s.activation_bytes,
            "overhead_bytes": s.overhead_bytes,
            "kv_pool_bytes": s.kv_pool_bytes,
            "kv_pool_given": plan.kv_memory_given,
            "kv_bytes_per_token": s.kv_bytes_per_token,
            "kv_bytes_per_request": s.kv_bytes_per_request,
            "state_bytes_per_request": s.state_bytes_per_request,
        },
        "kv_blocks": {
            "block_size": s.block_size,
            "page_bytes": s.page_bytes,
            "state_page_bytes": s.state_page_bytes,
            "groups": [{"window": g.window, "layers": g.layers, "state": g.state}
                       for g in s.groups],
            "layers_per_group": s.layers_per_group,
            "num_blocks": s.num_blocks,
            "blocks_per_request": s.blocks_per_request,
            "vllm_max_concurrency": plan.vllm_max_concurrency,
        },
        "stages": [{"stage": st.stage, "layers": st.layers, "weights_bytes": st.weights_bytes,
                    "activation_bytes": st.activation_bytes, "kv_pool_bytes": st.kv_pool_bytes,
                    "num_blocks": st.num_blocks, "max_concurrency": st.max_concurrency}
                   for st in plan.stages],
        "fits": plan.fits,
        "max_concurrency": plan.max_concurrency,
        "max_context": plan.max_context,
    }


def serve_document(plan: ServePlan, est: Estimates | None, costs: dict[str, float | None],
                   shared: Shared | None = None) -> dict[str, Any]:
    """The document of ``serve`` (``shared``: as in ``serve_entry``)."""
    return {"schema_version": SCHEMA_VERSION, **serve_entry(plan, est, costs, shared)}
