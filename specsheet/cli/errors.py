"""Errors as the user typed them: a library error's ``field`` named as the option that set it.

The library raises ``SpecError(message, field=...)`` with the field it is about (an argument of
the api such as ``tp`` or ``seq_len``); this module is the one place that knows which option
sets each field, so that ``tp: 3 does not divide ...`` reaches the terminal as
``option --tp: 3 does not divide ...``. No message is parsed: the field is read, the message
kept whole (``SpecError.worded`` spells the other inputs a message mentions).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from specsheet.errors import SpecError, TokensOverContext

# the library's fields (the api's argument names) by the options that set them
FIELD_OPTIONS: dict[str, str] = {
    # serving: the accelerator, the layout, the pool, the request, the estimates
    "gpu": "--gpu",
    "gpus": "--gpus",
    "tp": "--tp",
    "pp": "--pp",
    "ep": "--ep",
    "memory_utilization": "--memory-utilization",
    "kv_memory": "--kv-memory",
    "max_model_len": "--max-model-len",
    "prompt": "--prompt",
    "output": "--output",
    "concurrency": "--concurrency",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "max_num_seqs": "--max-num-seqs",
    "mbu": "--mbu",
    "tokens_per_word": "--tokens-per-word",
    "text": "--text",
    "tokenizer": "--tokenizer",
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
    # the weights, the KV cache, the request
    "quant": "--quant",
    "group_size": "--group-size",
    "dtype": "--dtype",
    "kv_dtype": "--kv-dtype",
    "tokens": "--tokens",
    "batch": "--batch",
    "timeout": "--timeout",
    # fit: llama.cpp's settings and the machine
    "ctx": "--ctx",
    "parallel": "--parallel",
    "cache_type_k": "--cache-type-k",
    "cache_type_v": "--cache-type-v",
    "flash_attn": "--flash-attn",
    "tensor_split": "--tensor-split",
    "split_mode": "--split-mode",
    "host_memory": "--host-memory",
    "n_gpu_layers": "--n-gpu-layers",
    "n_cpu_moe": "--n-cpu-moe",
    "n_ubatch": "--ubatch-size",
    "output_rule": "--output-rule",
    "engine": "--engine",
    "override_tensor": "--override-tensor",
    "wired_limit_mb": "--wired-limit",
    "host_bandwidth": "--host-bandwidth",
    "min_ctx": "--min-ctx",
    "min_gpu_layers": "--min-gpu-layers",
}


def option(field: str) -> str:
    """The option that sets ``field`` (``--max-model-len`` for max_model_len)."""
    return FIELD_OPTIONS.get(field, "--" + field.replace("_", "-"))


def as_option_error(e: SpecError, labels: Mapping[str, str] | None = None) -> SpecError:
    """``e`` as the CLI prints it: ``option --tp: message`` when an option sets its field
    (``labels`` name a field otherwise for this command, e.g. ``{"zero": "option --fsdp"}``);
    the other inputs the message mentions spelled as options too. An error from a file (its
    ``source`` set) or about a field no option sets is left as it is."""
    field = e.field
    if field is None or e.source is not None:
        return e
    label = (labels or {}).get(field)
    if label is None:
        if field not in FIELD_OPTIONS:
            return e
        label = f"option {FIELD_OPTIONS[field]}"
    return SpecError(e.line(label, option), value=e.value)


@contextmanager
def as_options(labels: Mapping[str, str] | None = None, advice: str | None = None
               ) -> Iterator[None]:
    """Errors raised inside, in the words of the options (``as_option_error``); a request
    beyond a model's context gets ``advice`` after it."""
    try:
        yield
    except TokensOverContext as e:
        if advice is None:
            raise
        raise SpecError(f"{e}; {advice}") from None
    except SpecError as e:
        named = as_option_error(e, labels)
        if named is e:
            raise
        raise named from None
