"""Training: FLOPs (exact, and the 6N, PaLM and Megatron estimates), GPU-hours, days and
dollars, and whether a step fits in each GPU's memory (``specsheet train``; docs/training.md).

    >>> import specsheet as s
    >>> run = s.train(s.load("gpt2-small"), zero=2, gpus=8, micro_batch=16)
    >>> run.plan.fits
    True
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted

if TYPE_CHECKING:
    from specsheet.model.spec import Model, ModelSpec
    from specsheet.plan.sharding import Cut
    from specsheet.plan.training import TrainingPlan

DEFAULT_GPU = "h100-sxm"
DEFAULT_MFU = 0.40  # plan.training.DEFAULT_MFU, without importing the plan at start-up
DEFAULT_SEQ_CAP = 8192  # the default sequence: the model's context, at most 8k (Llama 3's)
NODE_GPUS = 8  # one node: the layout a full run defaults to when one GPU cannot hold it


class TrainRequest(NamedTuple):
    """A training run: the data, the GPUs and their layout, the memory recipe and fine-tuning.
    The defaults are the CLI's."""

    tokens_total: int | str | None = None  # 300B, 15.6T (default: 20 x parameters; LoRA: none)
    seq_len: int | None = None  # default: the model's context, at most 8,192
    micro_batch: int = 1  # sequences per GPU per step
    gpu: str | None = None  # a catalog name or a hardware YAML file (default: h100-sxm, or
    # the GPU of the model's training recipe)
    gpus: int | None = None  # = dp x tp x pp
    mfu: float = DEFAULT_MFU
    price: float | None = None  # US dollars per GPU-hour
    recompute: str | None = None  # none, selective, full (default: none; full with LoRA)
    recompute_modules: tuple[str, ...] | str | None = None  # selective: core_attn (default),
    # layernorm, mla_up_proj, moe_act (Megatron Core's recompute_modules)
    attention: str = "flash"  # flash (no s x s scores), full (every score), causal
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    zero: int | None = None  # ZeRO stage over the data-parallel ranks (default: 0, or 3
    # on one node when one GPU cannot hold a full run and no layout is given)
    fsdp: bool = False  # the same as zero 3
    dp: int | None = None  # default: gpus / (tp x pp)
    tp: int = 1
    pp: int = 1
    sp: bool = False
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] | str | None = None  # q, k, v, o, gate, up, down, experts
    qlora: bool = False
    quant: str | None = None  # the frozen base's format with lora_rank
    epochs: float | None = None  # with dataset_tokens: tokens_total = epochs x dataset_tokens
    dataset_tokens: int | str | None = None
    cp: int = 1  # context-parallel ranks (gpus = dp x tp x pp x cp)
    ep: int = 1  # expert-parallel ranks, within dp x cp x tp
    vpp: int = 1  # virtual pipeline stages a GPU (schedule interleaved)
    schedule: str | None = None  # 1f1b (default), interleaved, zero-bubble, dualpipe
    shard_group: int | None = None  # HSDP: ZeRO shards within groups of this many ranks
    offload: str = "none"  # none, optimizer (its states in host memory)
    grad_accum: int | None = None  # micro-batches a step (default: pp, 1 without a pipeline)
    step_time: float | None = None  # a measured step, seconds: the MFU it implies
    tokens_per_second: float | None = None  # a measured rate: the MFU it implies
    per_gpu: bool = False  # tokens_per_second is per GPU (else for the whole run)
    optimizer_states: str | None = None  # fp32, bf16 (default: the precision recipe's)
    activation_cache: str | None = None  # bf16 (default), fp8 (DeepSeek-V3's FP8 caching)
    recipe: str | None = None  # none: no training recipe; a preset's name: its recipe
    # (default: the model's own, as its preset's training section gives it)


class Suggestion(NamedTuple):
    """A change that makes a step that does not fit smaller, checked by planning it."""

    change: str  # the change in the CLI's words ("--recompute full")
    fields: dict[str, Any]  # the request's fields it changes
    bytes_per_gpu: int
    fits: bool

    def to_dict(self) -> dict[str, Any]:
        return {"change": self.change, "bytes_per_gpu": self.bytes_per_gpu, "fits": self.fits}


# the CLI's words for a request field (cli/errors.py maps fields to options for errors)
_WORDS = {"recompute": "--recompute", "micro_batch": "--micro-batch", "zero": "--zero",
          "tp": "--tp", "pp": "--pp", "optimizer": "--optimizer", "qlora": "--qlora",
          "gpus": "--gpus", "dp": "--dp", "cp": "--cp", "seq_len": "--seq-len",
          "recompute_modules": "--recompute-modules", "schedule": "--schedule",
          "optimizer_states": "--optimizer-states", "activation_cache": "--activation-cache",
          "grad_accum": "--grad-accum"}
# what a training recipe may set: each a request field whose option overrides it
RECIPE_FIELDS = ("gpu", "seq_len", "schedule", "recompute", "recompute_modules",
                 "optimizer_states", "activation_cache")
RECIPE_META = ("source", "cite")
# the most copies of a run's GPUs that a suggestion adds GPUs up to (_more_gpus)
MAX_SUGGESTED_COPIES = 1024


def spell(fields: dict[str, Any]) -> str:
    """A request change in the CLI's words: ``{"recompute": "full"}`` -> ``--recompute full``."""
    words = []
    for name, value in fields.items():
        words.append(_WORDS[name] if value is True else f"{_WORDS[name]} {value}")
    return " ".join(words)


class Training(NamedTuple):
    """A training run planned: the model and the plan (FLOPs, time, memory per GPU)."""

    model: Model
    plan: TrainingPlan
    suggestions: tuple[Suggestion, ...] = ()  # when the step does not fit: what would
    measured: dict[str, Any] | None = None  # a measured step time or rate, and its MFU
    recipe: dict[str, Any] | None = None  # the training recipe applied (RecipeUse.to_dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet train --json`` writes for the same inputs."""
        from specsheet.views.train import train_document

        return train_document(self.model, self.plan,
                              [s.to_dict() for s in self.suggestions], self.measured,
                              self.recipe)


def train(model: Model, **options: Any) -> Training:
    """``model`` trained as ``options`` say (TrainRequest's fields: ``gpus=1024``,
    ``tokens_total="15.6T"``, ``zero=3``, ``lora_rank=16`` ...)."""
    unknown = sorted(set(options) - set(TrainRequest._fields))
    if unknown:
        from specsheet.errors import did_you_mean

        raise SpecError(f"unknown training option {quoted(unknown[0])}"
                        f"{did_you_mean(unknown[0], TrainRequest._fields)}", field=unknown[0])
    request = TrainRequest(**options)
    check_request(request)
    return plan_train(model, request)


def check_request(request: TrainRequest) -> None:
    """The settings that need no model, checked before any model is read."""
    for name in ("mfu", "price"):
        value = getattr(request, name)
        if value is not None and not math.isfinite(value):
            raise SpecError(f"expected a finite number, got {value}", field=name, value=value)
    tokens_of(request.tokens_total)
    tokens_of(request.dataset_tokens, "dataset_tokens")
    if (request.epochs is None) != (request.dataset_tokens is None):
        field = "epochs" if request.epochs is None else "dataset_tokens"
        raise SpecError("epochs and dataset tokens go together (tokens = epochs x dataset "
                        "tokens)", field=field)
    if request.epochs is not None:
        if not (math.isfinite(request.epochs) and request.epochs > 0):
            raise SpecError(f"expected a positive number of epochs, got {request.epochs}",
                            field="epochs", value=request.epochs)
        if request.tokens_total is not None:
            raise SpecError("give the tokens in total or as epochs x dataset tokens, not both",
                            field="tokens_total", value=request.tokens_total)
    if request.fsdp and request.zero not in (None, 0, 3):
        raise SpecError(f"ZeRO stage 3 (what --fsdp means) contradicts --zero {request.zero}",
                        field="zero", value=request.zero)


def tokens_of(value: int | str | None, field: str = "tokens_total") -> int | None:
    """A token count: an int, or text such as 300B, 15.6T, 2e12, 1,000,000 (B is a billion,
    as for parameters)."""
    if value is None or isinstance(value, int):
        return value
    from specsheet.units import parse_quantity

    try:
        return parse_quantity(value.removesuffix("tokens").strip(), "count", field)
    except SpecError:
        raise SpecError(f"{quoted(value)} is not a token count; expected a number with an optional "
                        "K, M, B (or G) or T: 300B, 15.6T, 2e12", field=field,
                        value=value) from None


def _tokens(request: TrainRequest) -> int | None:
    if request.epochs is not None:
        dataset = tokens_of(request.dataset_tokens, "dataset_tokens") or 0
        return max(1, round(request.epochs * dataset))
    return tokens_of(request.tokens_total)


def _layout_given(request: TrainRequest) -> bool:
    return not (request.gpus is None and request.dp is None and request.zero is None
                and not request.fsdp and request.tp == 1 and request.pp == 1
                and request.cp == 1 and request.ep == 1)


class RecipeUse(NamedTuple):
    """A training recipe as one run used it: what it set, what an option overrode, and what
    did not apply to the run (and why)."""

    name: str  # whose recipe: the model's preset
    source: str  # where the recipe is published (a URL)
    cite: str  # the sections it rests on
    applied: dict[str, Any]
    overridden: dict[str, Any]  # the recipe's value of each field an option set
    not_applied: dict[str, str]  # field: why it does not apply to this run

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "cite": self.cite,
                "applied": self.applied, "overridden": self.overridden,
                "not_applied": self.not_applied}

    def assumption(self) -> str:
        words = ", ".join(f"{_KEYS.get(k, k)} {v}" for k, v in self.applied.items()) or "nothing"
        text = f"recipe: {self.cite} ({self.source}): {words}"
        if self.overridden:
            text += "; overridden by the options given: " + ", ".join(
                f"{_KEYS.get(k, k)} (the recipe's {v})" for k, v in self.overridden.items())
        if self.not_applied:
            text += "; not applied: " + ", ".join(
                f"{_KEYS.get(k, k)} ({why})" for k, why in self.not_applied.items())
        return text + "; recipe none turns it off"


_KEYS = {"seq_len": "sequence length", "recompute_modules": "recompute modules",
         "optimizer_states": "optimizer states", "activation_cache": "activation cache"}


def recipe_items(model: Model, name: str | None) -> tuple[str, dict[str, Any]]:
    """The training recipe ``name`` names (None: the model's own), as its preset writes it."""
    if name is None:
        return model.name, dict(model.training)
    from specsheet.sources.presets import preset_index

    index = preset_index()
    have = [n for n, entry in index.items() if entry.get("training")]
    if name not in have:
        raise SpecError(f"no training recipe {quoted(name)}; expected none or a preset with one: "
                        f"{', '.join(have)}", field="recipe", value=name)
    return name, dict(index[name]["training"])


def apply_recipe(model: Model, request: TrainRequest) -> tuple[TrainRequest, RecipeUse | None]:
    """``request`` with the training recipe's items filled in where no option set them (an
    option overrides its item); items that do not fit the run are left out, with the reason:
    a schedule without a pipeline, recompute modules without selective recomputation. A LoRA
    run takes no pre-training recipe."""
    if request.recipe == "none":
        return request, None
    name, items = recipe_items(model, request.recipe)
    if not items:
        return request, None
    meta = {key: str(items.pop(key, "")) for key in RECIPE_META}
    fields: dict[str, Any] = {}
    overridden: dict[str, Any] = {}
    not_applied: dict[str, str] = {}
    same: dict[str, Any] = {}
    for key, value in list(items.items()):
        if key not in RECIPE_FIELDS:
            from specsheet.errors import did_you_mean

            raise SpecError(f"unknown training recipe item {quoted(key)}"
                            f"{did_you_mean(key, RECIPE_FIELDS)}; the items are "
                            f"{', '.join(RECIPE_FIELDS)}", field="recipe", value=key)
        if isinstance(value, list | tuple):
            items[key] = value = ",".join(map(str, value))
        given = getattr(request, key)
        if given is not None:
            if given != value:
                overridden[key] = value
            else:
                same[key] = value  # given as the recipe has it
        elif request.lora_rank:
            not_applied[key] = "a pre-training recipe; this is a LoRA run"
        else:
            fields[key] = value
    if "schedule" in fields and request.pp == 1:
        not_applied["schedule"] = "the layout has no pipeline (pp 1)"
        del fields["schedule"]
    recompute = request.recompute if request.recompute is not None else fields.get("recompute")
    if "recompute_modules" in fields and recompute != "selective":
        not_applied["recompute_modules"] = f"recompute is {recompute or 'none'}, not selective"
        del fields["recompute_modules"]
    applied = {key: value for key, value in items.items() if key in fields or key in same}
    use = RecipeUse(name, meta["source"], meta["cite"] or f"{name}'s training recipe",
                    applied, overridden, not_applied)
    return request._replace(**fields), use


def default_grad_accum(request: TrainRequest) -> int:
    """Micro-batches a step by default: pp, the fewest that fill a pipeline; DualPipe's
    fewest, 2 x pp (its dualpipe.py asserts num_chunks >= 2 x num_ranks)."""
    return 2 * request.pp if request.schedule == "dualpipe" else request.pp


def resolved(model: Model, request: TrainRequest) -> TrainRequest:
    """The request with its defaults filled in as the plan uses them: the sequence (the
    model's context, at most 8,192), recompute (full with LoRA, as peft's
    prepare_model_for_kbit_training turns gradient checkpointing on; else none), ZeRO 0."""
    seq = request.seq_len if request.seq_len is not None \
        else min(model.spec.context, DEFAULT_SEQ_CAP)
    recompute = request.recompute if request.recompute is not None \
        else "full" if request.lora_rank else "none"
    return request._replace(seq_len=seq, recompute=recompute,
                            zero=3 if request.fsdp else request.zero or 0, fsdp=False,
                            grad_accum=request.grad_accum or default_grad_accum(request))


def _modules(value: tuple[str, ...] | str | None) -> tuple[str, ...]:
    if value is None:
        return ("core_attn",)
    if isinstance(value, str):
        value = tuple(m.strip() for m in value.split(","))
    return tuple(dict.fromkeys(value))


def _plan(model: Model, request: TrainRequest, cut: Cut | None = None) -> TrainingPlan:
    """The plan of a resolved request (``cut``: a plan search's cache of the stages' tensors,
    plan.search.KeptCut)."""
    from specsheet.api.hardware import load_gpu
    from specsheet.plan.lora import DEFAULT_LORA_TARGETS
    from specsheet.plan.parallel import check_training_parallel
    from specsheet.plan.training import plan_training

    accelerator = load_gpu(request.gpu or DEFAULT_GPU)
    layout = check_training_parallel(
        model.spec, request.gpus, request.dp, request.tp, request.pp, request.sp,
        request.zero or 0, cp=request.cp, ep=request.ep, vpp=request.vpp,
        schedule=request.schedule or "1f1b", shard_group=request.shard_group,
        offload=request.offload)
    targets = request.lora_targets
    if isinstance(targets, str):
        targets = tuple(t.strip() for t in targets.split(","))
    if targets is not None and request.lora_rank is None:
        raise SpecError("given without --lora-rank", field="lora_targets")
    rank = request.lora_rank
    if rank is not None and rank < 1:
        raise SpecError(f"expected a rank of 1 or more, got {rank}", field="lora_rank",
                        value=rank)
    return plan_training(
        model.spec, accelerator, layout, seq_len=request.seq_len,
        micro_batch=request.micro_batch, tokens_total=_tokens(request),
        precision=request.precision, optimizer=request.optimizer,
        recompute=request.recompute or "none", attention=request.attention, mfu=request.mfu,
        price=request.price, lora_rank=0 if rank is None else rank,
        lora_targets=targets or DEFAULT_LORA_TARGETS, qlora=request.qlora,
        base_format=_base(model, request), micro_batches=request.grad_accum or 1,
        recompute_modules=_modules(request.recompute_modules),
        optimizer_states=request.optimizer_states,
        activation_cache=request.activation_cache or "bf16", cut=cut)


def _base(model: Model, request: TrainRequest) -> str | None:
    """The frozen base's format: the one asked for; none (the unquantized model) as the
    default dtype; else a LoRA base (not QLoRA's, which is 4-bit by its own rule) in the
    format the checkpoint ships in (its config's quantization_config)."""
    if request.quant == "none":
        return None
    if request.quant is None and request.lora_rank and not request.qlora \
            and model.shipped is not None:
        return model.shipped.format
    return request.quant


def plan_train(model: Model, request: TrainRequest) -> Training:
    """The training plan of ``model`` under ``request``, its defaults named in the plan's
    assumptions, and when the step does not fit, the changes that would make it fit."""
    from specsheet.plan import check_walked

    check_walked(model.spec.layers, model.name, "a training plan")  # before any per layer
    given, recipe = apply_recipe(model, request)
    run = resolved(model, given)
    plan = _plan(model, run)
    auto = False
    if not plan.fits and not _layout_given(request) and not request.lora_rank:
        node = _plan(model, run._replace(gpus=NODE_GPUS, zero=3))
        auto, run, plan = True, run._replace(gpus=NODE_GPUS, zero=3), node
    defaults = []
    if given.seq_len is None:
        defaults.append(f"sequence length {run.seq_len:,} (the model's context, at most "
                        f"{DEFAULT_SEQ_CAP:,})")
    defaults.append(f"micro-batch {run.micro_batch}"
                    + (" (the default)" if request.micro_batch == 1 else ""))
    if given.recompute is None:
        defaults.append("recompute full (gradient checkpointing, as peft turns it on for "
                        "LoRA and QLoRA)" if run.recompute == "full"
                        else "recompute none")
    if request.attention == "flash":
        defaults.append("attention flash")
    if request.grad_accum is None and run.pp > 1:
        defaults.append(f"{run.grad_accum} micro-batches a step (2 x pp, the fewest DualPipe "
                        "takes)" if run.schedule == "dualpipe" else
                        f"{run.grad_accum} micro-batches a step (pp, the fewest that fill the "
                        "pipeline)")
    if auto:
        defaults.append(f"{NODE_GPUS} GPUs (one node) with ZeRO-3 (FSDP), as one GPU "
                        "cannot hold the step")
    elif not _layout_given(request):
        defaults.append("1 GPU, no ZeRO")
    plan = plan._replace(assumptions=(
        *((recipe.assumption(),) if recipe else ()), "defaults: " + ", ".join(defaults),
        *plan.assumptions))
    measured = None
    if request.step_time is not None or request.tokens_per_second is not None:
        measured, plan = _measured(model, run, plan, request)
    suggestions = () if plan.fits else suggest(model, run, plan, auto, given,
                                               recipe.applied if recipe else None)
    return Training(model, plan, suggestions, measured,
                    recipe.to_dict() if recipe else None)


def _measured(model: Model, run: TrainRequest, plan: TrainingPlan,
              request: TrainRequest) -> tuple[dict[str, Any], TrainingPlan]:
    """The MFU a measured step time or rate implies (model FLOPs over the GPUs' dense peak),
    and the plan again at that MFU: its total time and cost at the measured rate."""
    if request.step_time is not None and request.tokens_per_second is not None:
        raise SpecError("give a step time or a rate, not both", field="tokens_per_second",
                        value=request.tokens_per_second)
    layout = plan.layout
    capacity = layout.gpus * plan.peak_flops_per_s  # FLOP/s at 100% MFU
    if request.step_time is not None:
        seconds = request.step_time
        if not (math.isfinite(seconds) and seconds > 0):
            raise SpecError(f"expected a positive number of seconds, got {seconds}",
                            field="step_time", value=seconds)
        rate = plan.step.tokens / seconds
        field, value = "step_time", seconds
    else:
        value = request.tokens_per_second or 0.0
        if not (math.isfinite(value) and value > 0):
            raise SpecError(f"expected a positive number of tokens a second, got {value}",
                            field="tokens_per_second", value=value)
        rate = value * layout.gpus if request.per_gpu else value
        field = "tokens_per_second"
    mfu = plan.flops.model * rate / capacity
    if mfu > 1:
        raise SpecError(f"{value:,} implies {mfu:.0%} MFU: more model FLOPs than the "
                        f"{layout.gpus} GPUs' dense peak", field=field, value=value)
    again = _plan(model, run._replace(mfu=mfu))
    after = 2 if plan.assumptions[0].startswith("recipe:") else 1  # after the defaults
    basis = ("a step of " f"{request.step_time:,} s" if request.step_time is not None else
             f"{value:,} tokens/s " + ("per GPU" if request.per_gpu else "in total"))
    again = again._replace(assumptions=(
        *plan.assumptions[:after], f"MFU {mfu:.1%}: implied by the measured {basis} "
        f"({rate:,.0f} tokens/s in total, {rate / layout.gpus:,.0f} per GPU)",
        *plan.assumptions[after:]))
    return ({"step_time": request.step_time, "tokens_per_second": rate,
             "tokens_per_second_per_gpu": rate / layout.gpus, "given": field,
             "per_gpu": request.per_gpu if field == "tokens_per_second" else None,
             "mfu": mfu}, again)


def _candidates(spec: ModelSpec, run: TrainRequest,
                plan: TrainingPlan) -> list[dict[str, Any]]:
    """Single changes that shrink a step, cheapest first."""
    layout = plan.layout
    out: list[dict[str, Any]] = []
    if run.recompute == "none":
        out.append({"recompute": "selective"})
    if run.recompute != "full" and run.recompute_modules is None:
        modules = ["core_attn", "layernorm"]  # the modules that apply to this model
        if spec.latent_attention:
            modules.append("mla_up_proj")
        if spec.experts:
            modules.append("moe_act")
        out.append({"recompute": "selective", "recompute_modules": ",".join(modules)})
    if run.recompute != "full":
        out.append({"recompute": "full"})
    if run.micro_batch > 1:
        out.append({"micro_batch": 1})
    if layout.dp > 1:  # each stage up: ZeRO-2 often holds a step without ZeRO-3's gathers
        out += [{"zero": stage} for stage in range((run.zero or 0) + 1, 4)]
    if run.optimizer == "adamw":
        out.append({"optimizer": "adamw-8bit"})
    if run.lora_rank and not run.qlora and run.quant is None:
        out.append({"qlora": True})
    out.append({"tp": layout.tp * 2})
    out.append({"pp": layout.pp * 2})
    if run.seq_len and run.seq_len % (layout.cp * 2) == 0:
        out.append({"cp": layout.cp * 2})
    if (run.zero or 0) and run.dp is None:
        out.append({"gpus": layout.gpus * 2})  # twice the data-parallel ranks sharding
    return out


def _derived(fields: dict[str, Any], run: TrainRequest, given: TrainRequest | None,
             recipe: dict[str, Any] | None) -> dict[str, Any]:
    """What a change implies without being spelled, as the CLI derives it when the change is
    given: the recipe's recompute modules go with a recompute other than selective; the
    default micro-batches a step follow a new pp."""
    extra: dict[str, Any] = {}
    if recipe and "recompute_modules" in recipe and fields.get("recompute", "selective") \
            != "selective" and "recompute_modules" not in fields:
        extra["recompute_modules"] = None
    if "pp" in fields and given is not None and given.grad_accum is None:
        extra["grad_accum"] = default_grad_accum(run._replace(pp=fields["pp"]))
    return extra


def suggest(model: Model, run: TrainRequest, plan: TrainingPlan, auto: bool = False,
            given: TrainRequest | None = None,
            recipe: dict[str, Any] | None = None) -> tuple[Suggestion, ...]:
    """The single changes to ``run`` that shrink its step (each planned), those that fit
    first; when none fits, the smallest set of them, applied in turn, that does. ``given``:
    the request as given (with its recipe), ``recipe``: the recipe's items it applied."""
    keep_gpus = run.gpus is not None
    found: list[Suggestion] = []
    tried: list[tuple[dict[str, Any], TrainingPlan]] = []
    for change in _candidates(model.spec, run, plan):
        fields = dict(change)
        if {"tp", "pp", "cp"} & fields.keys():
            if not keep_gpus:
                fields["dp"] = plan.layout.dp  # more GPUs, the data-parallel ranks kept
            elif plan.layout.dp % 2:
                fields["gpus"] = plan.layout.gpus * 2  # dp cannot halve: twice the GPUs
        try:
            changed = _plan(model, run._replace(**fields, **_derived(fields, run, given,
                                                                     recipe)))
        except SpecError:
            continue
        if changed.total_bytes >= plan.total_bytes:
            continue
        tried.append((fields, changed))
    for fields, changed in tried:
        found.append(_suggestion(fields, changed, auto, run))
    if not any(s.fits for s in found):
        combined: dict[str, Any] = {}
        current = plan
        for fields, _ in tried:
            attempt = {**combined, **fields}
            if "recompute" in fields and "recompute_modules" not in fields:
                attempt.pop("recompute_modules", None)  # full recomputation replaces them
            try:
                changed = _plan(model, run._replace(**attempt, **_derived(attempt, run, given,
                                                                          recipe)))
            except SpecError:
                continue
            if changed.total_bytes < current.total_bytes:
                combined, current = attempt, changed
            if current.fits:
                combined, current = _pruned(model, run, combined, current, given, recipe)
                found.append(_suggestion(combined, current, auto, run))
                break
    if not any(s.fits for s in found) and run.dp is None:
        grown = _more_gpus(model, run, plan, given, recipe)
        if grown is not None:
            found.append(_suggestion(*grown, auto, run))
    return tuple(sorted(found, key=lambda s: not s.fits))


def _more_gpus(model: Model, run: TrainRequest, plan: TrainingPlan,
               given: TrainRequest | None = None, recipe: dict[str, Any] | None = None
               ) -> tuple[dict[str, Any], TrainingPlan] | None:
    """When no change fits on these GPUs: ZeRO-3 with full recomputation (the usual recipe of a
    model too large for its GPUs) on the fewest copies of the run's GPUs that fit (8, 16, 24
    for a node of 8: more data-parallel ranks, each rank's tp x pp x cp kept), and then
    without what it still fits without. Memory per GPU only falls as data-parallel ranks are
    added (the weights, gradients and optimizer states are sharded over them), so the fewest
    copies are found by doubling, then bisecting. None when even ``MAX_SUGGESTED_COPIES``
    copies do not hold the step."""
    fields: dict[str, Any] = {"zero": 3}
    if run.recompute != "full":
        fields["recompute"] = "full"
    gpus = plan.layout.gpus

    def at(copies: int) -> TrainingPlan | None:
        attempt = {**fields, **({"gpus": copies * gpus} if copies > 1 else {})}
        try:
            return _plan(model, run._replace(**attempt, **_derived(attempt, run, given,
                                                                   recipe)))
        except SpecError:
            return None

    low, high = 0, 1  # copies: low does not fit (0 stands for none tried), high is tried
    fitting = at(high)
    while fitting is None or not fitting.fits:
        low, high = high, high * 2
        if high > MAX_SUGGESTED_COPIES:
            return None
        fitting = at(high)
    while high - low > 1:
        middle = (low + high) // 2
        tried = at(middle)
        if tried is not None and tried.fits:
            high, fitting = middle, tried
        else:
            low = middle
    if high > 1:
        fields["gpus"] = high * gpus
    return _pruned(model, run, fields, fitting, given, recipe)


def _pruned(model: Model, run: TrainRequest, combined: dict[str, Any],
            current: TrainingPlan, given: TrainRequest | None = None,
            recipe: dict[str, Any] | None = None) -> tuple[dict[str, Any], TrainingPlan]:
    """``combined`` without the changes it still fits without (the first kept first)."""
    for name in list(reversed(combined)):
        if name == "dp":
            continue
        fewer = {k: v for k, v in combined.items()
                 if k != name and not (name in ("tp", "pp", "cp") and k == "dp"
                                       and not {"tp", "pp", "cp"} - {name} & combined.keys())}
        try:
            plan = _plan(model, run._replace(**fewer, **_derived(fewer, run, given, recipe)))
        except SpecError:
            continue
        if plan.fits:
            combined, current = fewer, plan
    return combined, current


def _suggestion(fields: dict[str, Any], changed: TrainingPlan, auto: bool,
                run: TrainRequest) -> Suggestion:
    # a default layout chosen for the run is spelled out, so the change reproduces the plan
    spelled = {**({"gpus": run.gpus, "zero": run.zero} if auto else {}), **fields}
    return Suggestion(spell(spelled), fields, changed.total_bytes, changed.fits)
