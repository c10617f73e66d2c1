"""The command line's words for the library's errors, in one place: an error about a field
names the option the user typed (``option --tp: ...``). The library raises ``SpecError`` with
its ``field``; nothing here reads a message."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from specsheet.errors import SpecError, TokensOverContext

# the library's argument -> the option that sets it, where the two are not spelled alike
# (a field missing here is --FIELD with hyphens: max_model_len -> --max-model-len)
_SPELLED = {"group_size": "--group-size", "batched_tokens": "--max-num-batched-tokens",
            "max_seqs": "--max-num-seqs"}
# the arguments that are options of some command (a spec field is not: its errors are worded
# where the field entered, sources/fields.py)
OPTION_FIELDS = frozenset((
    "gpu", "gpus", "tp", "pp", "ep", "dp", "sp", "zero", "max_model_len", "prompt", "output",
    "concurrency", "memory_utilization", "kv_memory", "max_num_batched_tokens",
    "max_num_seqs", "price", "mfu", "mbu", "tokens_per_word", "text", "tokenizer", "quant",
    "group_size", "dtype", "kv_dtype", "timeout", "tokens", "tokens_total", "seq_len",
    "micro_batch", "precision", "optimizer", "recompute", "attention", "lora_rank",
    "lora_targets", "qlora", "batch"))


def option(field: str) -> str:
    """The option that sets ``field``: ``--max-model-len`` for max_model_len."""
    return _SPELLED.get(field, "--" + field.replace("_", "-"))


@contextmanager
def as_options(labels: Mapping[str, str] | None = None, advice: str | None = None
               ) -> Iterator[None]:
    """Errors raised inside, in the words of the options: an error about an option's field
    reads ``option --tp: ...`` (``labels`` names a field otherwise for this command, e.g.
    ``{"zero": "option --fsdp"}``); a request beyond a model's context gets ``advice``."""
    try:
        yield
    except TokensOverContext as e:
        if advice is None:
            raise
        raise SpecError(f"{e}; {advice}") from None
    except SpecError as e:
        field = e.field
        if field is None or e.source is not None:
            raise
        if labels and field in labels:
            raise SpecError(e.line(labels[field])) from None
        if field in OPTION_FIELDS:
            raise SpecError(e.line(f"option {option(field)}")) from None
        raise
