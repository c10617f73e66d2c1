"""Training: FLOPs (exact, and the 6N, PaLM and Megatron estimates), GPU-hours, days and
dollars, and whether a step fits in each GPU's memory (``specsheet train``; docs/training.md).

    >>> import specsheet as s
    >>> run = s.train(s.load("gpt2-small"), zero=2, gpus=8, micro_batch=16)
    >>> run.plan.fits
    True
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from specsheet.errors import SpecError

if TYPE_CHECKING:
    from specsheet.model.spec import Model
    from specsheet.plan.training import TrainingPlan

DEFAULT_GPU = "h100-sxm"
DEFAULT_MFU = 0.40  # plan.training.DEFAULT_MFU, without importing the plan at start-up


class TrainRequest(NamedTuple):
    """A training run: the data, the GPUs and their layout, the memory recipe and fine-tuning.
    The defaults are the CLI's."""

    tokens_total: int | str | None = None  # 300B, 15.6T (default: 20 x parameters)
    seq_len: int | None = None  # default: the model's context
    micro_batch: int = 1  # sequences per GPU per step
    gpu: str = DEFAULT_GPU  # a catalog name or a hardware YAML file
    gpus: int | None = None  # = dp x tp x pp
    mfu: float = DEFAULT_MFU
    price: float | None = None  # US dollars per GPU-hour
    recompute: str = "none"  # none, selective, full
    attention: str = "full"  # full (every s x s score), causal (FlashAttention's half)
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    zero: int = 0  # ZeRO stage over the data-parallel ranks
    fsdp: bool = False  # the same as zero 3
    dp: int | None = None  # default: gpus / (tp x pp)
    tp: int = 1
    pp: int = 1
    sp: bool = False
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] | str | None = None  # q, k, v, o, gate, up, down, experts
    qlora: bool = False
    quant: str | None = None  # the frozen base's format with lora_rank


class Training(NamedTuple):
    """A training run planned: the model and the plan (FLOPs, time, memory per GPU)."""

    model: Model
    plan: TrainingPlan

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet train --json`` writes for the same inputs."""
        from specsheet.views.train import train_document

        return train_document(self.model, self.plan)


def train(model: Model, **options: Any) -> Training:
    """``model`` trained as ``options`` say (TrainRequest's fields: ``gpus=1024``,
    ``tokens_total="15.6T"``, ``zero=3``, ``lora_rank=16`` ...)."""
    unknown = sorted(set(options) - set(TrainRequest._fields))
    if unknown:
        from specsheet.errors import did_you_mean

        raise SpecError(f"unknown training option {unknown[0]!r}"
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
    if request.fsdp and request.zero not in (0, 3):
        raise SpecError(f"ZeRO stage 3 (what --fsdp means) contradicts --zero {request.zero}",
                        field="zero", value=request.zero)


def tokens_of(value: int | str | None) -> int | None:
    """A token count: an int, or text such as 300B, 15.6T, 2e12, 1,000,000 (B is a billion,
    as for parameters)."""
    if value is None or isinstance(value, int):
        return value
    from specsheet.units import parse_quantity

    try:
        return parse_quantity(value.removesuffix("tokens").strip(), "count", "tokens_total")
    except SpecError:
        raise SpecError(f"{value!r} is not a token count; expected a number with an optional "
                        "K, M, B (or G) or T: 300B, 15.6T, 2e12", field="tokens_total",
                        value=value) from None


def plan_train(model: Model, request: TrainRequest) -> Training:
    """The training plan of ``model`` under ``request``."""
    from specsheet.api.hardware import load_gpu
    from specsheet.plan.parallel import check_training_parallel
    from specsheet.plan.training import plan_training

    accelerator = load_gpu(request.gpu)
    layout = check_training_parallel(model.spec, request.gpus, request.dp, request.tp, request.pp,
                         request.sp, 3 if request.fsdp else request.zero)
    targets = request.lora_targets
    if isinstance(targets, str):
        targets = tuple(t.strip() for t in targets.split(","))
    if targets is not None and request.lora_rank is None:
        raise SpecError("given without --lora-rank", field="lora_targets")
    rank = request.lora_rank
    if rank is not None and rank < 1:
        raise SpecError(f"expected a rank of 1 or more, got {rank}", field="lora_rank",
                        value=rank)
    plan = plan_training(
        model.spec, accelerator, layout, seq_len=request.seq_len,
        micro_batch=request.micro_batch, tokens_total=tokens_of(request.tokens_total),
        precision=request.precision, optimizer=request.optimizer, recompute=request.recompute,
        attention=request.attention, mfu=request.mfu, price=request.price,
        lora_rank=0 if rank is None else rank,
        **({"lora_targets": targets} if targets else {}), qlora=request.qlora,
        base_format=request.quant)
    return Training(model, plan)
