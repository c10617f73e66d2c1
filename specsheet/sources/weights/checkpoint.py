"""A checkpoint read: its headers (files.py), every tensor named with its component
(names.py), and the model its config describes (config.json in the folder, or a GGUF file's
own metadata). The comparison of the two is a question asked of the model:
``specsheet.plan.inspection``."""

from __future__ import annotations

from specsheet.errors import quoted
from specsheet.model.spec import Model
from specsheet.quant.stored import Checkpoint
from specsheet.sources.weights.files import WeightFiles, read_weights
from specsheet.sources.weights.names import name_tensors


def read_checkpoint(ref: str) -> Checkpoint:
    """Read the headers of ``ref`` (a file, folder, index.json or hf:ORG/NAME), name its
    tensors, and load the config found beside them."""
    weights = read_weights(ref)
    model, note = _config(weights)
    mapped = name_tensors(weights.tensors, model.spec.layers if model is not None else None)
    file_type = weights.metadata.get("general.file_type") if weights.format == "gguf" else None
    return Checkpoint(
        format=weights.format, files=[str(p) for p in weights.files], named=mapped.named,
        layouts=mapped.layouts, group_sizes=mapped.group_sizes,
        file_type=file_type if isinstance(file_type, int) else None, model=model, note=note)


def _config(weights: WeightFiles) -> tuple[Model | None, str]:
    """The model the checkpoint's config describes, or None and why not."""
    from specsheet.sources.resolve import load_file, model_from_hf_config

    if weights.format == "gguf":
        from specsheet.sources.weights.gguf_config import hf_config_from_gguf

        origin = f"{weights.files[0]} (GGUF metadata)"
        config = hf_config_from_gguf(weights.metadata, {name for name, *_ in weights.tensors},
                                     origin)
        if config is None:
            arch = weights.metadata.get("general.architecture")
            return None, f"GGUF architecture {quoted(arch)}: specsheet does not read its metadata"
        name = weights.metadata.get("general.name")
        name = name if isinstance(name, str) and name else weights.files[0].stem
        return model_from_hf_config(config, origin, name), ""
    path = weights.folder / "config.json"
    if not path.is_file():
        return None, f"no config.json in {weights.folder}"
    return load_file(path), ""
