"""A training plan: FLOPs, tokens, time and cost, and the memory a training step takes per GPU.

Everything here is arithmetic on a spec and the choices of a run; nothing prints. Sources:

- FLOPs: model/flops.py (forward + backward, exact under the project's convention), with 6N
  (Kaplan et al. 2020), PaLM's 6N + 12 L H Q T (Chowdhery et al. 2022, appendix B) and
  Megatron's count (Narayanan et al. 2021) beside it as estimates.
- Model states: the ZeRO paper's accounting (Rajbhandari et al. 2020, section 3.1: mixed-precision
  Adam holds 2 + 2 + 12 bytes a parameter) and Megatron-LM's table for its distributed
  optimizer (bf16 parameters with fp32 gradients: 18 bytes, 6 + 12/d distributed).
- Optimizer states in bf16 (``optimizer_states``): the DeepSeek-V3 technical report, section
  3.3.3, "Low-Precision Optimizer States": AdamW's moments in BF16, the master weights and the
  gradients still in FP32 (4 + 2 + 2 bytes with the optimizer instead of 4 + 4 + 4).
- Activations: plan/activations.py (Korthikanti et al. 2022; FP8 caching, DeepSeek-V3 3.3.3).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted, shortened
from specsheet.hardware.catalog import Accelerator
from specsheet.model.flops import (
    TrainingFlops,
    depthwise_gradient_overcount,
    megatron_estimate,
    palm_estimate,
    six_n_estimate,
    training_flops,
)
from specsheet.model.params import ParamBreakdown, count_params
from specsheet.model.spec import ModelSpec
from specsheet.plan.activations import (
    ACTIVATION_CACHES,
    RECOMPUTE_MODULES,
    Activations,
    ActivationTerms,
    activation_terms,
    activations,
    check_cache,
    layer_activation_bytes,
)
from specsheet.plan.lora import (
    DEFAULT_LORA_TARGETS,
    LORA_TARGETS,
    Matrix,
    check_lora_targets,
    lora_params,
    model_matrices,
)
from specsheet.plan.parallel import Parallel
from specsheet.plan.schedules import (
    Traffic,
    bubble_fraction,
    held_stages,
    in_flight_layers,
    traffic,
)

if TYPE_CHECKING:
    from specsheet.plan.sharding import Cut
    from specsheet.quant.tensors import Tensor

__all__ = ["ACTIVATION_CACHES", "DEFAULT_LORA_TARGETS", "LORA_TARGETS", "RECOMPUTE_MODULES",
           "ActivationTerms", "Activations", "Matrix", "activation_terms", "activations",
           "check_lora_targets", "layer_activation_bytes", "lora_params",
           "model_matrices"]  # re-exported from plan.lora and plan.activations

PRECISIONS = ("bf16-mixed", "fp16-mixed", "bf16", "fp32")
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd-momentum", "adafactor")
OPTIMIZER_STATES = {"fp32": 4, "bf16": 2}  # bytes of one optimizer state value
QLORA_BASES = ("bnb-nf4", "bnb-nf4-dq")  # the 4-bit formats QLoRA trains on
CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022: about 20 tokens a parameter
DEFAULT_MFU = 0.40
# attention kernels for training: flash (FlashAttention / SDPA: no s x s activations, FLOPs
# counted without causal halving, the convention MFU uses), full (materialized scores),
# causal (a causal FlashAttention kernel: no s x s activations, half the score FLOPs counted)
TRAIN_ATTENTION = ("flash", "full", "causal")
ADAM_8BIT_BLOCK = 2048  # values that share one fp32 absmax (Dettmers et al. 2022, block-wise)


class Recipe(NamedTuple):
    """Bytes a trained parameter holds under a precision recipe."""

    precision: str
    weights: int  # the copy the forward runs on
    gradients: int  # gradients as they are kept (and reduced)
    master: int  # an fp32 master copy, kept with the optimizer (0 without one)
    state: int  # bytes of one optimizer state value (fp32: 4; pure bf16: 2)
    compute_dtype: str  # the element type of the matrix multiplications (the GPU's peak)


RECIPES: dict[str, Recipe] = {
    # Megatron's bf16 recipe: bf16 parameters, fp32 gradients (main_grad), fp32 master: 18 B
    "bf16-mixed": Recipe("bf16-mixed", 2, 4, 4, 4, "bf16"),
    # the ZeRO paper's mixed precision: fp16 parameters and gradients, fp32 master: 16 B
    "fp16-mixed": Recipe("fp16-mixed", 2, 2, 4, 4, "fp16"),
    # everything in bf16, no master copy (optimizer states in bf16 too)
    "bf16": Recipe("bf16", 2, 2, 0, 2, "bf16"),
    "fp32": Recipe("fp32", 4, 4, 0, 4, "fp32"),
}


# ---- model states ------------------------------------------------------------------------

def optimizer_bytes(recipe: Recipe, optimizer: str, params: int,
                    matrices: list[Matrix] | None = None, total_params: int = 0) -> int:
    """Optimizer states of ``params`` trained parameters, the fp32 master copy included.

    adamw: two states (m, v); sgd-momentum: one; adamw-8bit: two 8-bit states and an fp32
    absmax for every ADAM_8BIT_BLOCK values of each (block-wise, over the whole); adafactor
    (no momentum, as its default beta1 = None): a factored second moment, rows + columns of
    every matrix and every value of the vectors (``matrices`` and ``total_params`` give the
    shapes)."""
    master = recipe.master * params
    if optimizer == "adamw":
        return master + 2 * recipe.state * params
    if optimizer == "sgd-momentum":
        return master + recipe.state * params
    if optimizer == "adamw-8bit":
        return master + 2 * params + 2 * 4 * -(-params // ADAM_8BIT_BLOCK)
    if optimizer == "adafactor":
        if matrices is None:  # adapters: every LoRA matrix is factored the same way
            return master + recipe.state * params
        in_matrices = sum(m.in_features * m.out_features * m.copies for m in matrices)
        factored = sum((m.in_features + m.out_features) * m.copies for m in matrices)
        return master + recipe.state * (factored + total_params - in_matrices)
    raise SpecError(f"unknown optimizer {quoted(optimizer)}", field="optimizer", value=optimizer)


class ModelStates(NamedTuple):
    """Model states on one GPU, in bytes."""

    trainable_params: int  # parameters with gradients (all, or the LoRA adapters)
    frozen_bytes: int  # a LoRA base's weights (bf16 or quantized), on this GPU
    weights_bytes: int  # the frozen base and the trained weights, on this GPU
    gradients_bytes: int
    optimizer_bytes: int  # master weights and optimizer states


def _share(value: int, ranks: int) -> int:
    return -(-value // ranks)


def busiest_gpu_tensors(spec: ModelSpec, layout: Parallel, cut: Cut | None = None
                        ) -> tuple[Tensor, ...] | None:
    """The parameter tensors of the busiest GPU under tensor and pipeline parallelism, cut as
    serving cuts them (``plan.sharding``, vLLM's layers: column- and row-parallel matrices
    split, norms and routers whole, the embedding on the first stage and the head on the last,
    the vocabulary padded to 64); None without model parallelism (every GPU holds the whole
    model)."""
    if layout.tp * layout.pp * layout.ep == 1:
        return None
    if cut is None:
        from specsheet.plan.sharding import COMPUTED

        cut = COMPUTED
    stages = [cut.stage_tensors(spec, layout, stage) for stage in range(layout.pp)]
    # DualPipe: each GPU holds two stages, h and pp - 1 - h (two copies of the parameters)
    held = [tuple(t for i in gpu for t in stages[i]) for gpu in held_stages(layout)]
    return max(held, key=lambda tensors: sum(t.elements for t in tensors))


def model_states(spec: ModelSpec, params: ParamBreakdown, recipe: Recipe, optimizer: str,
                 layout: Parallel, lora_rank: int = 0,
                 lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS,
                 base_format: str = "bf16", cut: Cut | None = None) -> ModelStates:
    """Weights, gradients and optimizer states per GPU.

    Tensor and pipeline parallelism: the busiest GPU's parameters (``busiest_gpu_tensors``);
    ZeRO then shards over the dp ranks the optimizer states (stage 1), the gradients (2) and
    the weights (3, FSDP). Adafactor's factored states, and LoRA's adapters, are split in the
    proportion of the parameters. A LoRA run trains only the adapters; its frozen base is held
    in ``base_format`` (a dtype or a quantization format), the busiest GPU's tensors of it."""
    dp = layout.zero_ranks  # dp x cp, or the HSDP shard group
    held = busiest_gpu_tensors(spec, layout, cut)
    on_gpu = params.total if held is None else sum(t.elements for t in held)
    if layout.ep > 1 and not lora_rank and held is not None:
        return _expert_parallel_states(params, recipe, optimizer, layout, held, spec)
    if lora_rank:
        trained = lora_params(spec, lora_rank, lora_targets)
        trained_here = _share(trained, layout.tp * layout.pp)
        optimizer_here = optimizer_bytes(recipe, optimizer, trained_here)
        frozen = _frozen_bytes(spec, params, base_format, held, cut)
    else:
        trained = params.total
        trained_here = on_gpu
        if optimizer == "adafactor":
            whole = optimizer_bytes(recipe, optimizer, trained, model_matrices(spec),
                                    params.total)
            optimizer_here = -(-whole * on_gpu // params.total)
        else:
            optimizer_here = optimizer_bytes(recipe, optimizer, on_gpu)
        frozen = 0
    frozen = _share(frozen, dp if layout.zero >= 3 else 1)
    if layout.offload == "optimizer":
        optimizer_here = 0  # in host memory (DeepSpeed's offload_optimizer)
    return ModelStates(
        trainable_params=trained,
        frozen_bytes=frozen,
        weights_bytes=frozen + _share(recipe.weights * trained_here,
                                      dp if layout.zero >= 3 else 1),
        gradients_bytes=_share(recipe.gradients * trained_here, dp if layout.zero >= 2 else 1),
        optimizer_bytes=_share(optimizer_here, dp if layout.zero >= 1 else 1),
    )


def _expert_parallel_states(params: ParamBreakdown, recipe: Recipe, optimizer: str,
                            layout: Parallel, held: tuple[Tensor, ...],
                            spec: ModelSpec) -> ModelStates:
    """Full training under expert parallelism: the routed experts' weights, gradients and
    optimizer states sharded by ZeRO over the expert data-parallel ranks, the rest over dp x
    cp (Megatron Core's distributed optimizer, one instance a parameter group)."""
    experts = sum(t.elements for t in held if t.name.split(".")[2:3] and
                  t.name.split(".")[2].endswith("_exps"))
    dense = sum(t.elements for t in held) - experts
    totals = [0, 0, 0]
    for elements, ranks in ((dense, layout.zero_ranks), (experts, layout.expert_zero_ranks)):
        if optimizer == "adafactor":
            whole = optimizer_bytes(recipe, optimizer, params.total, model_matrices(spec),
                                    params.total)
            state = -(-whole * elements // params.total)
        else:
            state = optimizer_bytes(recipe, optimizer, elements)
        for i, (value, stage) in enumerate(((recipe.weights * elements, 3),
                                            (recipe.gradients * elements, 2), (state, 1))):
            totals[i] += _share(value, ranks if layout.zero >= stage else 1)
    if layout.offload == "optimizer":
        totals[2] = 0
    return ModelStates(trainable_params=params.total, frozen_bytes=0,
                       weights_bytes=totals[0], gradients_bytes=totals[1],
                       optimizer_bytes=totals[2])


# ---- the plan ----------------------------------------------------------------------------

class Time(NamedTuple):
    seconds: float
    gpu_hours: float
    days: float
    usd: float | None  # gpu_hours x price, when a price is given
    price: float | None  # dollars per GPU-hour


class Step(NamedTuple):
    """One optimizer step of one micro-batch on every data-parallel rank (no accumulation)."""

    tokens: int  # micro_batch x seq_len x dp (the tokens the step trains on)
    seconds: float  # model FLOPs of those tokens / (gpus x peak x MFU)
    tokens_per_second: float  # in total, over all the GPUs
    tokens_per_second_per_gpu: float


class TrainingPlan(NamedTuple):
    """Every figure of ``specsheet train``."""

    params: ParamBreakdown
    flops: TrainingFlops  # per token
    tokens_total: int | None  # None: a LoRA run given no data reports one step
    tokens_default: bool  # the Chinchilla-optimal 20 x N
    approx_6n: int  # per token
    approx_palm: int
    approx_megatron: int  # with recomputation when recompute is full (Megatron's form)
    accelerator: Accelerator
    layout: Parallel
    recipe: Recipe
    optimizer: str
    mfu: float
    peak_flops_per_s: int  # one GPU, the recipe's compute type
    time: Time | None  # None without a total
    step: Step
    micro_batches: int  # micro-batches a step (gradient accumulation; the pipeline's m)
    bubble: float  # the pipeline bubble over the ideal step time (an estimate)
    traffic: Traffic  # expert and context parallelism's bytes a GPU sends a step
    attention: str  # the kernel for memory: flash, full or causal
    micro_batch: int
    seq_len: int
    states: ModelStates
    activations: Activations
    lora_rank: int
    lora_targets: tuple[str, ...]
    qlora: bool
    base_format: str  # the frozen base's format with LoRA, else the recipe's weights
    assumptions: tuple[str, ...]
    optimizer_states: str = "fp32"  # the optimizer states' dtype (fp32, bf16)
    activation_cache: str = "bf16"  # how kept activations are stored (bf16, fp8)

    @property
    def total_model_flops(self) -> int | None:
        return None if self.tokens_total is None else self.flops.model * self.tokens_total

    @property
    def total_hardware_flops(self) -> int | None:
        return None if self.tokens_total is None else self.flops.hardware * self.tokens_total

    @property
    def static_bytes(self) -> int:
        """What does not grow with the micro-batch: weights, gradients, optimizer states."""
        s = self.states
        return s.weights_bytes + s.gradients_bytes + s.optimizer_bytes

    @property
    def total_bytes(self) -> int:
        return self.static_bytes + self.activations.total

    @property
    def capacity_bytes(self) -> int:
        return self.accelerator.memory_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes

    @property
    def max_micro_batch(self) -> int:
        """The largest micro-batch whose step fits (0: not even the model states fit)."""
        room = self.capacity_bytes - self.static_bytes
        return max(room, 0) // self.activations.per_sequence


def estimate_error(estimate: int, exact: int) -> float:
    """Relative error of an estimate, in percent."""
    return 100 * (estimate - exact) / exact


def estimate_errors(plan: TrainingPlan) -> dict[str, float]:
    """Each estimate's error against the exact figure it estimates: model FLOPs, except
    Megatron's with recomputation (``recompute="full"``), which counts the forward again and is
    set against the hardware FLOPs."""
    fl = plan.flops
    megatron_exact = fl.hardware if fl.recompute == "full" else fl.model
    return {"approx_6n": estimate_error(plan.approx_6n, fl.model),
            "approx_palm": estimate_error(plan.approx_palm, fl.model),
            "approx_megatron": estimate_error(plan.approx_megatron, megatron_exact)}


def plan_training(spec: ModelSpec, accelerator: Accelerator, layout: Parallel, *,
                  seq_len: int | None = None, micro_batch: int = 1,
                  tokens_total: int | None = None, precision: str = "bf16-mixed",
                  optimizer: str = "adamw", recompute: str = "none", attention: str = "full",
                  mfu: float = DEFAULT_MFU, price: float | None = None, lora_rank: int = 0,
                  lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS, qlora: bool = False,
                  base_format: str | None = None, micro_batches: int = 1,
                  recompute_modules: tuple[str, ...] = ("core_attn",),
                  optimizer_states: str | None = None,
                  activation_cache: str = "bf16", cut: Cut | None = None) -> TrainingPlan:
    """Plan training ``spec`` (see the module docstring). ``base_format``: the frozen base of a
    LoRA run, a dtype (bf16 by default) or a quantization format (QLoRA: bnb-nf4).
    ``optimizer_states``: the dtype of the optimizer's states (default: the precision
    recipe's); ``activation_cache``: bf16, or fp8 (plan/activations.py)."""
    from specsheet.errors import did_you_mean
    from specsheet.model.flops import RECOMPUTE

    for name, value, allowed in (("recompute", recompute, RECOMPUTE),
                                 ("attention", attention, TRAIN_ATTENTION)):
        if value not in allowed:
            raise SpecError(f"expected one of {', '.join(allowed)}, got {quoted(value)}"
                            f"{did_you_mean(value, allowed)}", field=name, value=value)
    if precision not in RECIPES:
        raise SpecError(f"unknown recipe {quoted(precision)}; expected one of "
                        f"{', '.join(PRECISIONS)}", field="precision", value=precision)
    if optimizer not in OPTIMIZERS:
        raise SpecError(f"unknown optimizer {quoted(optimizer)}; expected one of "
                        f"{', '.join(OPTIMIZERS)}", field="optimizer", value=optimizer)
    if not (isinstance(mfu, float | int) and math.isfinite(mfu) and 0 < mfu <= 1):
        raise SpecError(f"expected a fraction above 0 and at most 1, got {mfu}", field="mfu",
                        value=mfu)
    if price is not None and not (math.isfinite(price) and price >= 0):
        raise SpecError(f"expected dollars per GPU-hour, 0 or more, got {price}",
                        field="price", value=price)
    if micro_batch < 1:
        raise SpecError(f"expected 1 or more sequences, got {micro_batch}",
                        field="micro_batch", value=micro_batch)
    seq = spec.context if seq_len is None else seq_len
    if seq < 1:
        raise SpecError(f"expected a positive number of tokens, got {seq}", field="seq_len",
                        value=seq)
    if seq > spec.context:
        raise SpecError(f"{seq:,} exceeds the model's context ({spec.context:,} tokens)",
                        field="seq_len", value=seq)
    assumptions: list[str] = []
    for module in recompute_modules:
        if module not in RECOMPUTE_MODULES:
            raise SpecError(f"unknown module {quoted(module)}; expected some of "
                            f"{', '.join(RECOMPUTE_MODULES)}", field="recompute_modules",
                            value=module)
    if recompute_modules != ("core_attn",):
        if recompute != "selective":
            raise SpecError("modules to recompute are for selective recomputation",
                            field="recompute_modules", value=recompute_modules)
        if "mla_up_proj" in recompute_modules and not spec.latent_attention:
            raise SpecError("mla_up_proj is multi-head latent attention's; this model has none",
                            field="recompute_modules", value=recompute_modules)
        if "moe_act" in recompute_modules and not spec.experts:
            raise SpecError("moe_act is the routed experts'; this model has none",
                            field="recompute_modules", value=recompute_modules)
        assumptions.append(f"recompute: {', '.join(recompute_modules)} rebuilt in the "
                           "backward (Megatron Core's recompute_modules); the hardware FLOPs "
                           "count the attention core again, not the up-projections")
    if seq % layout.cp:
        raise SpecError(f"{layout.cp} context-parallel ranks do not divide the sequence of "
                        f"{seq:,} tokens", field="cp", value=layout.cp)
    if micro_batches < 1:
        raise SpecError(f"expected 1 or more micro-batches a step, got {micro_batches}",
                        field="grad_accum", value=micro_batches)
    if tokens_total is not None and tokens_total < 1:
        raise SpecError(f"expected a positive number of tokens, got {tokens_total}",
                        field="tokens_total", value=tokens_total)
    lora_targets = check_lora_targets(lora_targets)
    if qlora and not lora_rank:
        raise SpecError("QLoRA trains LoRA adapters on a 4-bit base; give a LoRA rank",
                        field="qlora", value=qlora)
    if lora_rank < 0:
        raise SpecError(f"expected a rank of 1 or more, got {lora_rank}", field="lora_rank",
                        value=lora_rank)
    if lora_rank == 0 and base_format is not None:
        raise SpecError(f"a frozen base in {shortened(base_format)} is for LoRA; give a LoRA "
                        "rank too (full training keeps the weights in the precision recipe)",
                        field="base_format", value=base_format)
    if qlora:
        base_format = base_format or "bnb-nf4"
        if base_format not in QLORA_BASES:
            raise SpecError(f"QLoRA needs a 4-bit base ({', '.join(QLORA_BASES)}), got "
                            f"{base_format}", field="qlora", value=base_format)
    check_cache(activation_cache)
    if optimizer_states is not None:
        if optimizer_states not in OPTIMIZER_STATES:
            raise SpecError(f"expected one of {', '.join(OPTIMIZER_STATES)}, got "
                            f"{quoted(optimizer_states)} (8-bit states are the adamw-8bit "
                            "optimizer's)", field="optimizer_states", value=optimizer_states)
        if optimizer == "adamw-8bit":
            raise SpecError("adamw-8bit keeps its own 8-bit states; a dtype for them is for "
                            "the other optimizers", field="optimizer_states",
                            value=optimizer_states)
    if layout.schedule == "dualpipe" and (micro_batches % 2 or micro_batches < 2 * layout.pp):
        raise SpecError(f"DualPipe feeds half the micro-batches from each end and needs an "
                        f"even number of them, at least 2 x pp = {2 * layout.pp}; got "
                        f"{micro_batches}", field="grad_accum", value=micro_batches)
    params = count_params(spec)
    recipe = RECIPES[precision]
    states_dtype = optimizer_states or ("fp32" if recipe.state == 4 else "bf16")
    if optimizer_states is not None and optimizer != "adamw-8bit":
        recipe = recipe._replace(state=OPTIMIZER_STATES[optimizer_states])
        if optimizer_states != ("fp32" if RECIPES[precision].state == 4 else "bf16"):
            assumptions.append(
                f"optimizer states: {optimizer}'s in {optimizer_states} ({recipe.state} bytes a "
                "value), the master weights and gradients as the precision recipe keeps them"
                + (" (DeepSeek-V3 report, section 3.3.3: BF16 AdamW moments, FP32 master "
                   "weights and gradients)" if optimizer_states == "bf16" else ""))
    if activation_cache == "fp8":
        assumptions.append(
            "activations: cached in FP8 for the Linear operators' backward, with an fp32 scale "
            "a 1 x 128 tile; the output projection's input in E5M6 (12 bits), the experts' "
            "SwiGLU inputs in FP8; norms' inputs, attention's q, k and v, router logits and a "
            "dense SwiGLU's inputs kept in 16 bits (DeepSeek-V3 report, section 3.3.3; an "
            "estimate of its widths, not a log)")
    if layout.schedule == "dualpipe":
        assumptions.append(
            "pipeline: DualPipe (DeepSeek-V3 report, section 3.2.1, Table 2): each GPU holds "
            "two stages, h and pp - 1 - h (two copies of their parameters, gradients and "
            "optimizer states), and PP + 1 chunks of activations at its peak")
    if lora_rank:
        base_format = base_format or "bf16"
        assumptions.append(f"LoRA: rank {lora_rank} on {', '.join(lora_targets)}; the base is "
                           f"frozen in {base_format}; adapters follow the {precision} recipe; "
                           "FLOPs are those of full training (a LoRA step skips the frozen "
                           "weights' gradients, about a third of them)")
    flops = training_flops(spec, seq, recompute, "causal" if attention == "causal" else "full")
    default_tokens = tokens_total is None and not lora_rank
    tokens: int | None = tokens_total
    if default_tokens:
        tokens = CHINCHILLA_TOKENS_PER_PARAM * params.total
        assumptions.append("tokens: the Chinchilla-optimal 20 x N (Hoffmann et al. 2022), N "
                           "the total parameters")
    elif tokens is None:
        assumptions.append("tokens: none given for this fine-tuning run, so one step is "
                           "reported (memory, time per step, tokens/s) and no total")
    n = params.active - params.embeddings
    peak = accelerator.peak(recipe.compute_dtype)
    rate = layout.gpus * peak * mfu  # model FLOP/s of the whole run
    step_tokens = micro_batch * micro_batches * seq * layout.dp
    step_seconds = flops.model * step_tokens / rate
    step = Step(tokens=step_tokens, seconds=step_seconds,
                tokens_per_second=step_tokens / step_seconds,
                tokens_per_second_per_gpu=step_tokens / step_seconds / layout.gpus)
    time = None
    if tokens is not None:
        seconds = flops.model * tokens / rate
        gpu_hours = seconds * layout.gpus / 3600
        time = Time(seconds=seconds, gpu_hours=gpu_hours, days=seconds / 86400,
                    usd=None if price is None else gpu_hours * price, price=price)
    flash = attention != "full"
    assumptions += [
        f"time: model FLOPs at {mfu:.0%} MFU of the {recipe.compute_dtype} dense peak"
        + (" (the default)" if mfu == DEFAULT_MFU else ""),
        "memory: the busiest GPU's parameters under tp x pp, cut as vLLM's layers cut them "
        "(vocabulary padded to 64); ZeRO shards over dp x cp"
        + (" (the experts' states over the expert data-parallel ranks)" if layout.ep > 1
           else "")
        + ("" if layout.pp == 1 else
           f"; activations of the {layout.schedule} schedule's busiest stage "
           f"({activations_held(spec, layout)} layers' worth in flight)"),
        "activations: Korthikanti et al. 2022, 16-bit values with dropout masks; "
        + {"flash": "attention runs a FlashAttention / SDPA kernel: no s x s scores are kept "
                    "(no 5 a s^2 term); its FLOPs are counted without causal halving, the "
                    "convention MFU is quoted in",
           "causal": "causal attention runs a FlashAttention kernel: no s^2 term, and half "
                     "the score FLOPs counted",
           "full": "full attention stores the s x s scores (the 5 a s^2 term)"}[attention],
        "not counted: temporary buffers, communication buckets, the allocator's fragmentation, "
        "the CUDA context",
    ]
    if flops.ssm_backward:
        over = depthwise_gradient_overcount(spec, seq)
        assumptions.append(
            "FLOPs: the backward of the state-space and gated DeltaNet layers as "
            "FlopCounterMode counts it in transformers' PyTorch path (training "
            f"{flops.model / flops.forward:.2f} x the forward), but for the depthwise "
            "convolutions' weight gradients, counted as the work they are: FlopCounterMode's "
            "formula ignores groups and counts each as a dense C x C convolution, which would "
            f"add {over / flops.model:.0%} to the model FLOPs")
    if spec.experts or spec.kv_heads != spec.heads or spec.mlp == "gated" \
            or spec.latent_attention:
        assumptions.append("activations: the terms for MoE, GQA, gated MLPs or MLA are "
                           "derived from Korthikanti's reasoning, not taken from the paper")
    return TrainingPlan(
        params=params, flops=flops, tokens_total=tokens, tokens_default=default_tokens,
        approx_6n=six_n_estimate(n), approx_palm=palm_estimate(spec, n, seq),
        approx_megatron=megatron_estimate(spec, seq, recompute == "full"),
        accelerator=accelerator, layout=layout, recipe=recipe, optimizer=optimizer, mfu=mfu,
        peak_flops_per_s=peak,
        time=time, step=step, micro_batches=micro_batches,
        bubble=bubble_fraction(layout, micro_batches),
        traffic=traffic(spec, layout, seq, micro_batch, micro_batches), attention=attention,
        micro_batch=micro_batch, seq_len=seq,
        states=model_states(spec, params, recipe, optimizer, layout, lora_rank, lora_targets,
                            base_format or "bf16", cut),
        activations=activations(spec, seq, micro_batch, layout, recompute, flash,
                                recompute_modules, activation_cache),
        optimizer_states=states_dtype, activation_cache=activation_cache,
        lora_rank=lora_rank, lora_targets=lora_targets if lora_rank else (), qlora=qlora,
        base_format=base_format or precision, assumptions=tuple(assumptions),
    )


def activations_held(spec: ModelSpec, layout: Parallel) -> str:
    """The layers' worth of activations in flight, as a person reads it (44, or 44.5)."""
    held = in_flight_layers(spec, layout)
    return f"{held.numerator}" if held.denominator == 1 else f"{float(held):.4g}"


def _frozen_bytes(spec: ModelSpec, params: ParamBreakdown, base_format: str,
                  held: tuple[Tensor, ...] | None, cut: Cut | None = None) -> int:
    """A LoRA base's bytes on one GPU (``held``: its tensors, None for the whole model): a
    plain dtype, or every tensor as a quantization format stores it."""
    from specsheet.model.memory import DTYPE_BITS, bytes_for

    if held is not None:
        if cut is None:
            from specsheet.plan.sharding import COMPUTED

            cut = COMPUTED
        plain = base_format in DTYPE_BITS
        return cut.stored_bytes(spec, held, base_format if plain else None,
                            None if plain else base_format, None)
    if base_format in DTYPE_BITS:
        return bytes_for(params.total, base_format)
    from specsheet.quant.layouts import quantized_bytes

    return quantized_bytes(spec, base_format, listed=False).weights_bytes
