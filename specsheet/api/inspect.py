"""Inspect a checkpoint (``specsheet inspect``): its headers read and its tensors named
(specsheet.sources.weights), then compared with the config found beside them
(specsheet.plan.inspection). Nothing here prints; bad input raises ``SpecError``.

    >>> import specsheet
    >>> result = specsheet.inspect("./Qwen3-0.6B")  # doctest: +SKIP
    >>> result.check.matches, result.params["attention"]  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from specsheet.api.collection import no_cyclic_collection
from specsheet.errors import SpecError
from specsheet.plan import MAX_WALKED_LAYERS
from specsheet.plan import inspection as _inspection
from specsheet.sources.weights.checkpoint import read_checkpoint


class Inspection(_inspection.Inspection):
    """A checkpoint's tensors by component, their bytes, the format they match, and the check
    against its config. Fields: ``format``, ``files``, ``tensors`` (every tensor with its
    component, held as groups of tensors alike: ``tensors.groups``), ``params``,
    ``bytes_by_dtype``, ``bytes_by_component``, ``data_bytes``, ``quant``, ``layouts``,
    ``group_size``, ``predicted_bytes``, ``check`` (None without a config), ``note`` (why
    there is no check); ``named``, the list of each tensor with its component, is made from
    ``tensors`` on each access."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``specsheet inspect REF --json`` writes."""
        from specsheet.views.inspect import inspect_document

        return inspect_document(self)


def inspect(ref: str) -> Inspection:
    """The checkpoint ``ref`` names (a .safetensors or .gguf file, a folder of them, a
    model.safetensors.index.json, hf:ORG/NAME in the local Hugging Face cache, or
    ORG/NAME[@REVISION][:FILE] on the Hub, its headers read by HTTP Range requests), read from
    its headers alone and checked against its config."""
    with no_cyclic_collection():
        checkpoint = read_checkpoint(ref)
        model = checkpoint.model
        if model is not None and model.spec.layers > MAX_WALKED_LAYERS:  # before any per layer
            raise SpecError(f"its config declares {model.spec.layers:,} layers; an inspection "
                            f"checks the tensors layer by layer and takes at most "
                            f"{MAX_WALKED_LAYERS:,} (count answers any number)", source=ref,
                            field="layers", value=model.spec.layers)
        return Inspection._make(_inspection.inspect_checkpoint(checkpoint))
