"""Load a model, compute its report, read it as the CLI's JSON document (``specsheet count``).

Nothing here prints or exits; bad input raises ``SpecError`` (a ValueError) whose message is
the line the CLI prints.

    >>> import specsheet
    >>> r = specsheet.report(specsheet.load("llama3-8b"), tokens=8192)
    >>> r.params.total, r.kv.bytes_per_request
    (8030261248, 1073741824)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specsheet import figures as _figures
from specsheet.model.memory import DEFAULT_DTYPE, DTYPE_BITS
from specsheet.model.spec import Model
from specsheet.sources.resolve import resolve

if TYPE_CHECKING:
    from specsheet.model.images import Images

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
           group_size: int | None = None, images: int | None = None,
           image_size: str | tuple[int, int] | None = None) -> Report:
    """Every figure of ``model`` for a request of ``tokens`` tokens (default: its context), the
    KV cache in ``kv_dtype``, and the weights in ``quant`` (a quantization format such as
    ``gguf-q4_k_m`` or ``awq-int4``, with ``group_size`` where it has one) or else in ``dtype``
    (default bf16; with ``quant``, the type of the tensors the format leaves unquantized).

    ``images`` images of ``image_size`` (``"1024x768"`` or (width, height); default: the
    model's native size) add their tokens to the request: ``tokens`` counts the text (default:
    the context less the images' tokens)."""
    pictures = images_of(model, images, image_size)
    return Report._make(_figures.build_report(model, tokens, dtype, kv_dtype, quant, group_size,
                                              pictures))


def images_of(model: Model, images: int | None,
              image_size: str | tuple[int, int] | None) -> Images | None:
    """The images of a request to ``model`` (None: none). A size without images is refused:
    it would change nothing, and is more likely a forgotten count than a wish."""
    from specsheet.errors import SpecError

    if images is None:
        if image_size is not None:
            raise SpecError("used only with --images", field="image_size", value=image_size)
        return None
    from specsheet.model.images import parse_size, request_images  # a request with images alone

    size = parse_size(image_size) if isinstance(image_size, str) else image_size
    if model.images is None and model.origin.startswith("preset "):
        raise SpecError(f"the preset {model.name} describes a language model alone, without a "
                        "vision tower; give the checkpoint's config.json (a file or ORG/NAME) "
                        "to count images", field="images", value=images)
    return request_images(model.images, model.name, images, size, model.spec.vision)


def presets() -> list[str]:
    """The names of the built-in presets, sorted."""
    from specsheet.sources.presets import preset_index

    return list(preset_index())
