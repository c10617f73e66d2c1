"""Load a model, compute its report, read it as the CLI's JSON document (``specsheet count``).

Nothing here prints or exits; bad input raises ``SpecError`` (a ValueError) whose message is
the line the CLI prints.

    >>> import specsheet
    >>> r = specsheet.report(specsheet.load("llama3-8b"), tokens=8192)
    >>> r.params.total, r.kv.bytes_per_request
    (8030261248, 1073741824)
"""

from __future__ import annotations

from typing import Any

from specsheet import figures as _figures
from specsheet.model.memory import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.model.spec import Model
from specsheet.sources.resolve import resolve

__all__ = ["DEFAULT_DTYPE", "DTYPE_BITS", "Model", "Report", "load", "presets", "report"]


class Report(_figures.Report):
    """Every figure of one model (parameters, weight bytes, KV cache, FLOPs) at one context.

    Fields: ``model``, ``params`` (ParamBreakdown), ``dtype``, ``weights_bytes``, ``kv``
    (KVCache), ``flops`` (ForwardFlops), ``flops_2n`` (the 2N estimate).
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet count --json`` writes for the same inputs."""
        from specsheet.views.count import count_document

        return count_document(self)


def load(ref: str | None = None, **overrides: Any) -> Model:
    """A model from a preset name, a preset YAML file, a config.json or a model folder holding
    one, a weights file (a .gguf file, its tensors' own types as the shipped format; a
    .safetensors file or model.safetensors.index.json beside a config.json), or
    ``hf:ORG/NAME`` (the local Hugging Face cache); ``overrides`` set spec fields
    (``layers=48``, ``kv_heads=8``, ``attn_bias=False``) and win over the source's values.
    With ``ref`` None, the overrides must give the five numbers."""
    from specsheet.sources.settings import check_fields

    return resolve(ref, check_fields(overrides))


def report(model: Model, tokens: int | None = None, dtype: str | None = None,
           kv_dtype: str = DEFAULT_DTYPE, quant: str | None = None,
           group_size: int | None = None) -> Report:
    """Every figure of ``model`` for a request of ``tokens`` tokens (default: its context), the
    KV cache in ``kv_dtype``, and the weights in ``quant`` (a quantization format such as
    ``gguf-q4_k_m`` or ``awq-int4``, with ``group_size`` where it has one) or else in ``dtype``
    (default bf16; with ``quant``, the type of the tensors the format leaves unquantized)."""
    return Report._make(_figures.build_report(model, tokens, dtype, kv_dtype, quant, group_size))


def presets() -> list[str]:
    """The names of the built-in presets, sorted."""
    from specsheet.sources.presets import preset_index

    return list(preset_index())
