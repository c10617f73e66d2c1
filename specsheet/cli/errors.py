"""The CLI's words for what the library names, once: a field -> the option the user typed.

The library raises ``SpecError(message, field=...)`` with the field it is about (an argument of
the api such as ``tp`` or ``seq_len``, a spec field such as ``kv_heads``) and records where an
override came from (``sources.fields.Given``); only this module knows how the command line
spells either: ``FIELD_OPTIONS`` (the options not spelled ``--FIELD-WITH-DASHES``), ``FLAGS`` (a
boolean field's pair of flags), ``NAMING`` (an override by ``--set FIELD=VALUE``, a named option
or a sweep's point), ``as_option`` / ``as_option_error`` / ``as_options`` (an error re-said of
its option). No message is parsed: the field is read, the message kept whole
(``SpecError.worded`` spells the other inputs a message mentions).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from specsheet.errors import NoTokenizer, SpecError, TokensOverContext
from specsheet.sources.fields import FieldError, Given, Overrides

if TYPE_CHECKING:
    from specsheet.units import QuantityKind

# the library's fields (the api's argument names) by the options that set them; a field
# missing here is --FIELD-WITH-DASHES
FIELD_OPTIONS: dict[str, str] = {
    # serving: the accelerator, the layout, the pool, the request, the estimates
    "gpu": "--gpu",
    "compare": "--compare",  # explore's model beside the design
    "gpus": "--gpus",
    "tp": "--tp",
    "pp": "--pp",
    "ep": "--ep",
    "dcp": "--dcp",
    "max_loras": "--max-loras",
    "max_lora_rank": "--max-lora-rank",
    "enable_prefix_caching": "--enable-prefix-caching",
    "mamba_cache_mode": "--mamba-cache-mode",
    "kv_offload": "--kv-offload",
    "draft": "--draft",
    "speculative_tokens": "--speculative-tokens",
    "speculative_method": "--speculative-method",
    "memory_utilization": "--memory-utilization",
    "kv_memory": "--kv-memory",
    "max_model_len": "--tokens",  # vLLM's --max-model-len is an alias of it
    "prompt": "--prompt",
    "output": "--output",
    "concurrency": "--concurrency",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "max_num_seqs": "--max-num-seqs",
    "mbu": "--mbu",
    "tokens_per_word": "--tokens-per-word",
    "text": "--text",
    "tokenizer": "--tokenizer",
    "images": "--images",
    "image_size": "--image-size",
    # training
    "dp": "--dp",
    "sp": "--sp",
    "zero": "--zero",
    "mfu": "--mfu",
    "block_size": "--block-size",
    "vllm_log": "--vllm-log",
    "allow_long_context": "--allow-long-context",
    "moe_kernel": "--moe-kernel",
    "price": "--price",
    "tokens_total": "--tokens-total",
    "epochs": "--epochs",
    "dataset_tokens": "--dataset-tokens",
    "cp": "--cp",
    "vpp": "--vpp",
    "schedule": "--schedule",
    "shard_group": "--shard-group",
    "offload": "--offload",
    "step_time": "--step-time",
    "grad_accum": "--grad-accum",
    "recompute_modules": "--recompute-modules",
    "optimizer_states": "--optimizer-states",
    "activation_cache": "--activation-cache",
    "recipe": "--recipe",
    "tokens_per_second": "--tokens-per-second",
    "seq_len": "--tokens",  # --seq-len is an alias of it
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
    "group size": "--group-size",  # as quant.layouts names it
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
    "kv_bits": "--kv-bits",
    "kv_group_size": "--kv-group-size",
    "host_bandwidth": "--host-bandwidth",
    "min_ctx": "--min-ctx",
    "min_gpu_layers": "--min-gpu-layers",
}


# boolean fields, by the flag that sets them true and the one that sets them false
FLAGS: dict[str, tuple[str, str]] = {
    "tied_embeddings": ("--tied", "--untied"),
    "attn_bias": ("--attn-bias", "--no-attn-bias"),
    "mlp_bias": ("--mlp-bias", "--no-mlp-bias"),
}
SET_OPTION = "--set"  # FIELD=VALUE for any spec field


def option_of(field: str, value: object = True) -> str:
    """The option that gives ``field`` (a flag: the one that gives ``value``)."""
    if field in FLAGS:
        return FLAGS[field][0 if value else 1]
    return FIELD_OPTIONS.get(field, "--" + field.replace("_", "-"))


def option_label(field: str, value: object = True) -> str:
    """How an error names the option of ``field``: ``option --kv-heads``."""
    return f"option {option_of(field, value)}"


class CliNaming:
    """The CLI's ``sources.fields.Naming``: an override named by the option that gave it."""

    def label(self, field: str, given: Given, value: object) -> str:
        """``option --kv-heads``, ``option --set kv_heads=64``; a sweep's point adds
        ``(at VALUE)``."""
        words = (f"option {SET_OPTION} {given.text}" if given.how == "setting"
                 else option_label(field, value))
        return words if given.at is None else f"{words} (at {given.at})"

    def spelled(self, field: str) -> str:
        """``--d-model`` for d_model."""
        return option_of(field)


NAMING = CliNaming()


def given_by_options(values: dict[str, Any] | None = None,
                     origins: dict[str, Given] | None = None) -> Overrides:
    """Overrides the command line gave, named by its options."""
    return Overrides(values, origins, NAMING)


def as_option(e: SpecError, option: str | None = None) -> SpecError:
    """``e`` with its field named as the option that gave it (``option`` when given, else
    the option of ``e.field``)."""
    label = f"option {option}" if option is not None else option_label(e.field or "", e.value)
    return FieldError(e.message, field=e.field or "", value=e.value, source=e.source,
                      label=label)


def of_set(e: SpecError) -> SpecError:
    """An error in a ``--set FIELD=VALUE``: ``option --set: field 'layers': ...``."""
    if isinstance(e, FieldError):
        return FieldError(e.message, field=e.field or "", value=e.value,
                          source=f"option {SET_OPTION}", label=e.label)
    return SpecError(e.message, field=e.field, value=e.value, source=f"option {SET_OPTION}")


def is_unclaimed(e: SpecError, fields: tuple[str, ...] = ()) -> bool:
    """True when ``e`` is about an input field that no source or label names yet (one of
    ``fields``, when given): the CLI names its option."""
    return (e.field is not None and e.source is None and not isinstance(e, FieldError)
            and (not fields or e.field in fields))


def _field_of(option: str) -> str:
    return option.removeprefix("--").replace("-", "_").replace(" ", "_")


def option_quantity(text: str, kind: QuantityKind, option: str) -> int:
    """``units.parse_quantity`` of the text of ``option`` (``--kv-memory``); errors name it."""
    from specsheet.units import parse_quantity

    try:
        return parse_quantity(text, kind, _field_of(option))
    except SpecError as e:
        raise as_option(e, option) from None


def option_seconds(text: str | None, option: str) -> float | None:
    """``units.parse_seconds`` of the text of ``option`` (``--max-ttft``), if given; errors
    name it."""
    from specsheet.units import parse_seconds

    if text is None:
        return None
    try:
        return parse_seconds(text, _field_of(option))
    except SpecError as e:
        raise as_option(e, option) from None


def option_series(text: str, kind: QuantityKind, option: str, minimum: int = 1) -> list[int]:
    """``units.parse_series`` of the text of ``option`` (``--layers``, ``--set experts``);
    errors name it."""
    from specsheet.units import parse_series

    try:
        return parse_series(text, kind, _field_of(option), minimum=minimum)
    except SpecError as e:
        raise as_option(e, option) from None


# what the CLI adds to a NoTokenizer, by the inputs that would give a tokenizer
TOKENIZER_ADVICE: dict[tuple[str, ...], str] = {
    ("tokenizer",): " or give --tokenizer PATH",
    ("tokenizer", "tokens_per_word"): "; give --tokenizer PATH, or --tokens-per-word",
    ("tokens_per_word",): " (or give --tokens-per-word)",
}


def with_advice(e: NoTokenizer) -> SpecError:
    """``e`` with the options that would give a tokenizer (--tokenizer, --tokens-per-word)."""
    return SpecError(e.message + TOKENIZER_ADVICE.get(e.wants, ""), field=e.field,
                     value=e.value, source=e.source)


def as_option_error(e: SpecError, labels: Mapping[str, str] | None = None,
                    fields: Collection[str] = FIELD_OPTIONS) -> SpecError:
    """``e`` as the CLI prints it: ``option --tp: message`` when an option sets its field
    (``labels`` name a field otherwise for this command, e.g. ``{"zero": "option --fsdp"}``),
    and the other inputs the message mentions spelled as options too (``SpecError.worded``).
    An error from a file (its ``source`` set) keeps its field's name; an error that names no
    option is left as it is. ``fields``: the fields this command sets by options."""
    field, label = e.field, None
    if field is not None and e.source is None and not isinstance(e, FieldError):
        label = (labels or {}).get(field)
        if label is None and field in fields:
            label = f"option {FIELD_OPTIONS[field]}"
    if label is None and e.worded(option_of) == e.message:
        return e
    return SpecError(e.line(label, option_of), value=e.value)


@contextmanager
def as_options(labels: Mapping[str, str] | None = None, advice: str | None = None,
               fields: Collection[str] = FIELD_OPTIONS) -> Iterator[None]:
    """Errors raised inside, in the words of the options (``as_option_error``); a request
    beyond a model's context gets ``advice`` after it."""
    try:
        yield
    except TokensOverContext as e:
        if advice is None:
            raise
        raise SpecError(f"{e}; {advice}") from None
    except NoTokenizer as e:
        raise with_advice(e) from None
    except SpecError as e:
        named = as_option_error(e, labels, fields)
        if named is e:
            raise
        raise named from None
