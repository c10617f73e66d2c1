"""``train``: the FLOPs, time and memory of training one model: its document and its tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet.views.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from specsheet.model.spec import Model
    from specsheet.plan.training import TrainingPlan
    from specsheet.views.table import TableView


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



def schemas() -> dict[str, Any]:
    """The schema of ``train_document``."""
    from specsheet.model.flops import ATTENTION, RECOMPUTE
    from specsheet.plan.training import LORA_TARGETS, OPTIMIZERS, PRECISIONS
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
                         "total_model", "total_hardware"), count),
    }
    for name in ("approx_6n", "approx_palm", "approx_megatron"):
        flops[f"{name}_per_token"] = count
        flops[f"{name}_total"] = count
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
        "tokens_total": positive,
        "tokens_default": {"type": "boolean",
                           "description": "tokens_total is the Chinchilla-optimal 20 x N"},
        "hardware": obj({"gpu": {"type": "string"}, "label": {"type": "string"},
                         "gpus": positive, "dtype": {"type": "string"},
                         "peak_flops_per_s": positive,
                         "mfu": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}),
        "time": obj({"seconds": {"type": "number"}, "gpu_hours": {"type": "number"},
                     "days": {"type": "number"}, "usd": {"type": ["number", "null"]}},
                    "Wall-clock and GPU time at the MFU; usd with a price."),
        "parallelism": obj({"gpus": positive, "dp": positive, "tp": positive, "pp": positive,
                            "sp": {"type": "boolean"},
                            "zero": {"type": "integer", "minimum": 0, "maximum": 3}}),
        "precision": {"enum": list(PRECISIONS)},
        "optimizer": {"enum": list(OPTIMIZERS)},
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
        "assumptions": {"type": "array", "items": {"type": "string"}},
    })}


def train_views(model: Model, plan: TrainingPlan) -> list[TableView]:
    """``train``: FLOPs and time, then memory per GPU."""
    return [_train_compute_view(model, plan), _train_memory_view(model, plan)]


def _train_compute_view(model: Model, plan: TrainingPlan) -> TableView:
    from specsheet.plan.training import estimate_errors
    from specsheet.units import exact, human_count, human_flops, human_si, signed_percent
    from specsheet.views.table import TableView

    fl, tokens, layout = plan.flops, plan.tokens_total, plan.layout
    errors = estimate_errors(plan)
    view = TableView(
        title=f"{model.name}: training on {human_count(tokens)} tokens of sequence length "
              f"{exact(fl.tokens)}",
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
    default = " (20 x N, Chinchilla)" if plan.tokens_default else ""
    view.add(f"Tokens{default}", human_count(tokens), exact(tokens))
    view.add("Training FLOPs, total (model)", human_flops(plan.total_model_flops),
             exact(plan.total_model_flops))
    if fl.recomputed:
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
    if layout.sp:
        parts.append("sp")
    if layout.zero:
        parts.append(f"ZeRO-{layout.zero}")
    view = TableView(
        title=f"{model.name}: memory per GPU ({', '.join(parts)}; {plan.recipe.precision}, "
              f"{plan.optimizer})",
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
    view.add("Optimizer states (with master weights)", human_bytes(states.optimizer_bytes),
             f"{exact(states.optimizer_bytes)} B")
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
    view.caption = "Sizes in SI units (1 GB = 10^9 bytes)."
    return view

