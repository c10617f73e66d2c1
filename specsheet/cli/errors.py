"""Errors as the user typed them: a library error's ``field`` named as the option that set it.

The library raises ``SpecError(message, field=...)`` with the field it is about (an argument of
the plan such as ``tp`` or ``seq_len``); this module is the one place that knows which option
sets each field, so that ``tp: 3 does not divide ...`` reaches the terminal as
``option --tp: 3 does not divide ...``. No message is parsed: the field is read, the message
kept whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from specsheet.errors import SpecError

# the library's fields (the plan's argument names) by the options that set them
FIELD_OPTIONS: dict[str, str] = {
    # serving: the layout, the pool, the request, the estimates
    "gpu": "--gpu",
    "gpus": "--gpus",
    "tp": "--tp",
    "pp": "--pp",
    "ep": "--ep",
    "memory_utilization": "--memory-utilization",
    "kv_memory": "--kv-memory",
    "max_model_len": "--max-model-len",
    "mbu": "--mbu",
    # training
    "dp": "--dp",
    "sp": "--sp",
    "zero": "--zero",
    "mfu": "--mfu",
    "price": "--price",
    "tokens_total": "--tokens-total",
    "seq_len": "--seq-len",
    "micro_batch": "--micro-batch",
    "precision": "--precision",
    "optimizer": "--optimizer",
    "recompute": "--recompute",
    "attention": "--attention",
    "lora_rank": "--lora-rank",
    "lora_targets": "--lora-targets",
    "qlora": "--qlora",
    "base_format": "--quant",  # train's frozen LoRA base
    # the weights' format
    "quant": "--quant",
}


def as_option_error(e: SpecError, suffix: str = "", **labels: str) -> SpecError:
    """``e`` as the CLI prints it: ``option --tp: message`` when its field is set by an option
    (``labels`` name a field otherwise for this command, e.g. ``zero="--fsdp"``), else its own
    line; ``suffix`` follows the message (`` (llama3-8b)``). A tp that does not divide names
    ``--ep`` as what splits experts instead."""
    from specsheet.plan.parallel import TensorParallelError

    message = e.reason("--ep") if isinstance(e, TensorParallelError) else e.message
    option = None if e.field is None else labels.get(e.field, FIELD_OPTIONS.get(e.field))
    label = e.field if option is None else f"option {option}"
    return SpecError(SpecError(message, field=label, source=e.source).line() + suffix,
                     value=e.value)


@contextmanager
def options_named(suffix: str = "", **labels: str) -> Iterator[None]:
    """Raise a SpecError of the block as ``as_option_error`` names it."""
    try:
        yield
    except SpecError as e:
        raise as_option_error(e, suffix, **labels) from None
