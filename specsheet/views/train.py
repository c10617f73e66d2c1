"""``train``: the FLOPs, time and memory of training one model: its document and its tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.views import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.model.spec import Model
    from specsheet.plan.training import TrainingPlan
    from specsheet.views.table import TableView


def train_document(model: Model, plan: TrainingPlan,
                   suggestions: list[dict[str, Any]] | None = None,
                   measured: dict[str, Any] | None = None,
                   recipe: dict[str, Any] | None = None) -> dict[str, Any]:
    """The document of ``train``: FLOPs per token and in total (exact, and three estimates),
    time and cost, one step, the memory of a step on one GPU, and when it does not fit, the
    changes that would (``suggestions``, spelled by the api); ``recipe``: the training recipe
    the run took (the api's RecipeUse)."""
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
        flops[f"{name}_total"] = None if tokens is None else per_token * tokens
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
        "time": None if plan.time is None else {
            "seconds": plan.time.seconds, "gpu_hours": plan.time.gpu_hours,
            "days": plan.time.days, "usd": plan.time.usd},
        "step": {"tokens": plan.step.tokens, "seconds": plan.step.seconds,
                 "tokens_per_second": plan.step.tokens_per_second,
                 "tokens_per_second_per_gpu": plan.step.tokens_per_second_per_gpu},
        "attention": plan.attention,
        "parallelism": {"gpus": layout.gpus, "dp": layout.dp, "tp": layout.tp,
                        "pp": layout.pp, "sp": layout.sp, "zero": layout.zero,
                        "cp": layout.cp, "ep": layout.ep, "vpp": layout.vpp,
                        "schedule": layout.schedule, "shard_group": layout.shard_group,
                        "offload": layout.offload, "micro_batches": plan.micro_batches,
                        "bubble_fraction": plan.bubble,
                        "all_to_all_bytes_per_gpu": plan.traffic.all_to_all_bytes,
                        "ring_bytes_per_gpu": plan.traffic.ring_bytes},
        "measured": measured,
        "precision": plan.recipe.precision,
        "optimizer": plan.optimizer,
        "optimizer_states": plan.optimizer_states,
        "activation_cache": plan.activation_cache,
        "recipe": recipe,
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
        "suggestions": list(suggestions or []),
        "assumptions": list(plan.assumptions),
    }



def schemas() -> dict[str, Any]:
    """The schema of ``train_document``."""
    from specsheet.model.flops import ATTENTION, RECOMPUTE
    from specsheet.plan.parallel import OFFLOADS, SCHEDULES
    from specsheet.plan.training import (
        ACTIVATION_CACHES,
        LORA_TARGETS,
        OPTIMIZER_STATES,
        OPTIMIZERS,
        PRECISIONS,
        TRAIN_ATTENTION,
    )
    from specsheet.views.schema import VERSION, obj, ref

    count = {"type": "integer", "minimum": 0}
    positive = {"type": "integer", "minimum": 1}
    flops: dict[str, Any] = {
        "seq_len": positive,
        "attention": {"enum": list(ATTENTION)},
        "recompute": {"enum": list(RECOMPUTE)},
        **dict.fromkeys(("forward_per_token", "backward_per_token", "ssm_backward_per_token",
                         "recomputed_per_token",
                         "attention_core_per_token", "per_token_model", "per_token_hardware",
                         ), count),
        **dict.fromkeys(("total_model", "total_hardware"), {"type": ["integer", "null"],
                                                            "minimum": 0}),
    }
    for name in ("approx_6n", "approx_palm", "approx_megatron"):
        flops[f"{name}_per_token"] = count
        flops[f"{name}_total"] = {"type": ["integer", "null"], "minimum": 0}
        flops[f"{name}_error_percent"] = {"type": "number"}
    return {"train": obj({
        "schema_version": VERSION,
        "name": {"type": "string"},
        "origin": {"type": "string"},
        "spec": ref("spec"),
        "params": obj({"total": positive, "active": positive, "non_embedding": count,
                       "trainable": positive}, "Parameters; trainable: all, or LoRA's."),
        "flops": obj(flops, "Training FLOPs per token at seq_len and in total (model: forward "
                            "+ backward; hardware: + recomputation), and three estimates."),
        "tokens_total": {"type": ["integer", "null"], "minimum": 1,
                         "description": "null: a fine-tuning run given no data (one step)"},
        "tokens_default": {"type": "boolean",
                           "description": "tokens_total is the Chinchilla-optimal 20 x N"},
        "hardware": obj({"gpu": {"type": "string"}, "label": {"type": "string"},
                         "gpus": positive, "dtype": {"type": "string"},
                         "peak_flops_per_s": positive,
                         "mfu": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}),
        "time": {"oneOf": [{"type": "null"}, obj(
            {"seconds": {"type": "number"}, "gpu_hours": {"type": "number"},
             "days": {"type": "number"}, "usd": {"type": ["number", "null"]}},
            "Wall-clock and GPU time at the MFU; usd with a price.")]},
        "step": obj({"tokens": positive, "seconds": {"type": "number"},
                     "tokens_per_second": {"type": "number"},
                     "tokens_per_second_per_gpu": {"type": "number"}},
                    "One step: a micro-batch on every data-parallel rank, at the MFU."),
        "attention": {"enum": list(TRAIN_ATTENTION)},
        "parallelism": obj({"gpus": positive, "dp": positive, "tp": positive, "pp": positive,
                            "sp": {"type": "boolean"},
                            "zero": {"type": "integer", "minimum": 0, "maximum": 3},
                            "cp": positive, "ep": positive, "vpp": positive,
                            "schedule": {"enum": list(SCHEDULES)}, "shard_group": count,
                            "offload": {"enum": list(OFFLOADS)}, "micro_batches": positive,
                            "bubble_fraction": {"type": "number", "minimum": 0},
                            "all_to_all_bytes_per_gpu": count, "ring_bytes_per_gpu": count},
                           "The layout; bubble and traffic a step are estimates."),
        "measured": {"oneOf": [{"type": "null"}, obj({
            "step_time": {"type": ["number", "null"]}, "tokens_per_second": {"type": "number"},
            "tokens_per_second_per_gpu": {"type": "number"},
            "given": {"enum": ["step_time", "tokens_per_second"]},
            "per_gpu": {"type": ["boolean", "null"]},
            "mfu": {"type": "number"}}, "A measured step time or rate and the MFU it implies.")]},
        "precision": {"enum": list(PRECISIONS)},
        "optimizer": {"enum": list(OPTIMIZERS)},
        "optimizer_states": {"enum": list(OPTIMIZER_STATES),
                             "description": "the dtype of the optimizer's state values"},
        "activation_cache": {"enum": list(ACTIVATION_CACHES),
                             "description": "how kept activations are stored"},
        "recipe": {"oneOf": [{"type": "null"}, obj({
            "name": {"type": "string"}, "source": {"type": "string"},
            "cite": {"type": "string"},
            "applied": {"type": "object"}, "overridden": {"type": "object"},
            "not_applied": {"type": "object", "additionalProperties": {"type": "string"}}},
            "The model's published training recipe: what it set, what an option overrode, "
            "and what did not apply to the run (and why).")]},
        "lora": {"oneOf": [{"type": "null"}, obj({
            "rank": positive,
            "targets": {"type": "array", "items": {"enum": list(LORA_TARGETS)}},
            "qlora": {"type": "boolean"}, "base_format": {"type": "string"}})]},
        "memory_per_gpu": obj({
            **dict.fromkeys(("weights_bytes", "frozen_bytes", "gradients_bytes", "optimizer_bytes",
                             "activations_bytes", "activations_per_sequence_bytes",
                             "activations_per_layer_bytes", "total_bytes", "capacity_bytes"),
                            count),
            "activations_form": {"type": "string"},
            "micro_batch": positive,
        }, "One GPU's memory for a training step, in bytes."),
        "fits": {"type": "boolean"},
        "max_micro_batch": count,
        "suggestions": {"type": "array", "items": obj(
            {"change": {"type": "string"}, "bytes_per_gpu": count, "fits": {"type": "boolean"}},
            "A change in the CLI's words and the step's bytes per GPU with it, planned.")},
        "assumptions": {"type": "array", "items": {"type": "string"}},
    })}


def train_views(model: Model, plan: TrainingPlan,
                suggestions: tuple[Any, ...] = ()) -> list[TableView]:
    """``train``: FLOPs and time, then memory per GPU, then what would fit when it does not
    (``suggestions``: the api's, each with ``change``, ``bytes_per_gpu`` and ``fits``)."""
    views = [_train_compute_view(model, plan), _train_memory_view(model, plan)]
    if suggestions:
        views.append(_suggestions_view(model, plan, suggestions))
    return views


def _suggestions_view(model: Model, plan: TrainingPlan,
                      suggestions: tuple[Any, ...]) -> TableView:
    from specsheet.units import exact, human_bytes
    from specsheet.views.table import TableView

    view = TableView(title=f"{model.name}: what would make the step fit",
                     headers=("Change", "Per GPU", "Fits"), numeric=(False, True, False))
    for s in suggestions:
        view.add(s.change, human_bytes(s.bytes_per_gpu), "yes" if s.fits else "no")
    view.caption = (f"Each change planned by the same arithmetic; the step now takes "
                    f"{human_bytes(plan.total_bytes)} of {human_bytes(plan.capacity_bytes)} "
                    f"({exact(plan.total_bytes)} B).")
    return view


def _train_compute_view(model: Model, plan: TrainingPlan) -> TableView:
    from specsheet.plan.training import estimate_errors
    from specsheet.units import exact, human_count, human_flops, human_si, signed_percent
    from specsheet.views.table import TableView

    fl, tokens, layout = plan.flops, plan.tokens_total, plan.layout
    errors = estimate_errors(plan)
    on = "one step" if tokens is None else f"{human_count(tokens)} tokens"
    view = TableView(
        title=f"{model.name}: training on {on} of sequence length {exact(fl.tokens)}",
        headers=("Figure", "Value", "Exact"), numeric=(False, True, True),
        optional=(False, True, False))
    view.add("Training FLOPs per token (model: forward + backward)", human_flops(fl.model),
             exact(fl.model))
    kinds = model.spec.layers_by_kind
    attention = f" ({fl.attention} attention)" if {"attention", "hybrid"} & kinds.keys() else ""
    view.add(f"  forward{attention}", human_flops(fl.forward), exact(fl.forward), style="sub")
    if fl.ssm_backward:
        extra = ", and gated DeltaNet's own terms" if "linear_attention" in kinds else ""
        view.add(f"  backward (2 x forward{extra})",
                 human_flops(fl.backward), exact(fl.backward), style="sub")
        view.add("    of which state-space and DeltaNet layers", human_flops(fl.ssm_backward),
                 exact(fl.ssm_backward), style="sub")
    else:
        view.add("  backward (2 x forward)", human_flops(fl.backward), exact(fl.backward),
                 style="sub")
    if fl.recomputed:
        view.add(f"  recomputed ({fl.recompute}; hardware only)", human_flops(fl.recomputed),
                 exact(fl.recomputed), style="sub")
        view.add("  hardware FLOPs per token", human_flops(fl.hardware), exact(fl.hardware),
                 style="sub")
    step = plan.step
    view.add(f"Step: micro-batch {plan.micro_batch} x {exact(plan.seq_len)} tokens x dp "
             f"{layout.dp}", human_count(step.tokens), exact(step.tokens))
    view.add(f"  time per step at {plan.mfu:.0%} MFU", "", f"{step.seconds:,.3f} s",
             style="sub")
    view.add("  tokens/s, all GPUs (per GPU)", human_count(round(step.tokens_per_second)),
             f"{step.tokens_per_second:,.0f} ({step.tokens_per_second_per_gpu:,.0f})",
             style="sub")
    if tokens is None or plan.total_model_flops is None or plan.time is None:
        view.caption = ("FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs; MFU "
                        "counts model FLOPs, never recomputation. "
                        + "; ".join(plan.assumptions) + ".")
        return view
    default = " (20 x N, Chinchilla)" if plan.tokens_default else ""
    view.add(f"Tokens{default}", human_count(tokens), exact(tokens))
    view.add("Training FLOPs, total (model)", human_flops(plan.total_model_flops),
             exact(plan.total_model_flops))
    if fl.recomputed and plan.total_hardware_flops is not None:
        view.add("  hardware, with recomputation", human_flops(plan.total_hardware_flops),
                 exact(plan.total_hardware_flops), style="sub")
    megatron = "Megatron, full recompute; of hardware FLOPs" if fl.recompute == "full" \
        else "Megatron"
    for name, label, per_token in (("approx_6n", "6N, Kaplan", plan.approx_6n),
                                   ("approx_palm", "6N + 12 L H Q T, PaLM", plan.approx_palm),
                                   ("approx_megatron", megatron, plan.approx_megatron)):
        error = signed_percent(errors[name])
        view.add(f"  {label} (estimate, {error})", human_flops(per_token * tokens),
                 exact(per_token * tokens), style="sub")
    acc = plan.accelerator
    hours = plan.time.gpu_hours
    view.add(f"GPU-hours on {acc.name} at {plan.mfu:.0%} MFU", human_count(round(hours)),
             f"{hours:,.0f}")
    view.add(f"  peak ({plan.recipe.compute_dtype}, dense)",
             human_si(plan.peak_flops_per_s, "FLOP/s"), exact(plan.peak_flops_per_s),
             style="sub")
    plural = "s" if layout.gpus != 1 else ""
    view.add(f"  days on {exact(layout.gpus)} GPU{plural}", "", f"{plan.time.days:,.1f}",
             style="sub")
    if plan.time.usd is not None:
        view.add(f"  cost at ${plan.time.price:,.2f} per GPU-hour", "",
                 f"${plan.time.usd:,.0f}", style="sub")
    view.caption = ("FLOPs: matrix multiplications only, a multiply-add is 2 FLOPs; MFU counts "
                    "model FLOPs, never recomputation. " + "; ".join(plan.assumptions) + ".")
    return view


def _train_memory_view(model: Model, plan: TrainingPlan) -> TableView:
    from specsheet.units import exact, human_bytes, human_count
    from specsheet.views.table import TableView

    layout, states, act = plan.layout, plan.states, plan.activations
    parts = [f"dp {layout.dp}", f"tp {layout.tp}", f"pp {layout.pp}"]
    if layout.cp > 1:
        parts.append(f"cp {layout.cp}")
    if layout.ep > 1:
        parts.append(f"ep {layout.ep}")
    if layout.sp:
        parts.append("sp")
    if layout.zero:
        parts.append(f"ZeRO-{layout.zero}" + (f" in groups of {layout.shard_group}"
                                               if layout.shard_group else ""))
    if layout.schedule == "dualpipe":
        parts.append("DualPipe")
    kept = [plan.recipe.precision, plan.optimizer]
    if plan.optimizer_states == "bf16" and plan.recipe.master:
        kept.append("bf16 states")
    if plan.activation_cache == "fp8":
        kept.append("fp8 activations")
    view = TableView(
        title=f"{model.name}: memory per GPU ({', '.join(parts)}; {', '.join(kept)})",
        headers=("Figure", "Value", "Exact"), numeric=(False, True, True),
        optional=(False, True, False))
    if plan.lora_rank:
        view.add(f"LoRA rank {plan.lora_rank} ({', '.join(plan.lora_targets)}): trainable "
                 "parameters", human_count(states.trainable_params),
                 exact(states.trainable_params))
        view.add(f"Frozen base ({plan.base_format})", human_bytes(states.frozen_bytes),
                 f"{exact(states.frozen_bytes)} B")
        view.add("Adapter weights", human_bytes(states.weights_bytes - states.frozen_bytes),
                 f"{exact(states.weights_bytes - states.frozen_bytes)} B")
    else:
        view.add("Weights", human_bytes(states.weights_bytes), f"{exact(states.weights_bytes)} B")
    view.add("Gradients", human_bytes(states.gradients_bytes),
             f"{exact(states.gradients_bytes)} B")
    offloaded = ", in host memory" if layout.offload == "optimizer" else ""
    view.add(f"Optimizer states (with master weights{offloaded})",
             human_bytes(states.optimizer_bytes), f"{exact(states.optimizer_bytes)} B")
    view.add(f"Activations (micro-batch {exact(act.micro_batch)}, {act.form})",
             human_bytes(act.total), f"{exact(act.total)} B")
    view.add("  per layer, one sequence", human_bytes(act.per_layer),
             f"{exact(act.per_layer)} B", style="sub")
    view.add("Total", human_bytes(plan.total_bytes), f"{exact(plan.total_bytes)} B",
             style="total")
    verdict = "fits" if plan.fits else "DOES NOT FIT"
    view.add(f"  {plan.accelerator.label} holds ({verdict})", human_bytes(plan.capacity_bytes),
             f"{exact(plan.capacity_bytes)} B", style="sub")
    view.add("  largest micro-batch that fits", exact(plan.max_micro_batch), "", style="sub")
    if layout.pp > 1:
        view.add(f"Pipeline bubble ({layout.schedule}, {plan.micro_batches} micro-batches; "
                 "estimate)", f"{plan.bubble:.1%}", "")
    if plan.traffic.all_to_all_bytes:
        view.add("Expert all-to-all a step, sent per GPU (estimate)",
                 human_bytes(plan.traffic.all_to_all_bytes),
                 f"{exact(plan.traffic.all_to_all_bytes)} B")
    if plan.traffic.ring_bytes:
        view.add("Context-parallel ring a step, sent per GPU (estimate)",
                 human_bytes(plan.traffic.ring_bytes), f"{exact(plan.traffic.ring_bytes)} B")
    view.caption = "Sizes in SI units (1 GB = 10^9 bytes)."
    return view

