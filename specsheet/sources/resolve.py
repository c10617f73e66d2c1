"""Turning a model reference into a Model: a preset name, a file or folder, ``ORG/NAME`` or
``hf:ORG/NAME`` (the local Hugging Face cache, else the Hub), or the options alone.

Everything here raises SpecError with one line naming the file, field or value at fault.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specsheet.errors import SpecError, did_you_mean, quoted
from specsheet.model.spec import REQUIRED_FIELDS, Model
from specsheet.sources import DEFAULT_TIMEOUT, FILE_SUFFIXES
from specsheet.sources.fields import build_spec, model_from_mapping, spelled
from specsheet.sources.presets import preset_index
from specsheet.sources.settings import check_overrides

if TYPE_CHECKING:
    from specsheet.quant.stored import TensorInfo
    from specsheet.sources.hub import HubReference

# keys that only a Hugging Face config.json has
HF_KEYS = {"architectures", "hidden_size", "num_hidden_layers", "n_embd", "n_layer",
           "vocab_size", "num_attention_heads"}


def looks_like_path(ref: str) -> bool:
    """True when ``ref`` names a file rather than a preset."""
    return "/" in ref or "\\" in ref or ref.endswith(FILE_SUFFIXES) or os.path.exists(ref)


def model_from_hf_config(data: Mapping[str, Any], origin: str, name: str,
                         overrides: Mapping[str, Any] | None = None) -> Model:
    """Build a Model from a Hugging Face config.json mapping, then apply ``overrides``."""
    from specsheet.sources.hf_config.families import fields_from_hf_config

    fields, family, note = fields_from_hf_config(data, origin)
    spec = build_spec(fields, origin, overrides)
    towers = [kind for kind in ("vision", "audio") if isinstance(data.get(f"{kind}_config"), dict)
              and not (kind == "vision" and spec.vision is not None)]
    notes = [note] if note else []
    if spec.vision is not None:
        notes.append(f"{spec.vision.encoder} vision tower and projector counted")
    if towers:
        notes.append(f"{' and '.join(towers)} tower{'s' if len(towers) > 1 else ''} not counted")
    description = ", ".join([f"{family} config.json", *notes])
    from specsheet.sources.hf_config.families import draft_vocab_of, mtp_layers_of
    from specsheet.sources.hf_config.images import image_processor_of
    from specsheet.sources.hf_config.quantization import shipped_of

    return Model(name=name, spec=spec, origin=origin, description=description,
                 counted="language model only" if towers else "whole model",
                 shipped=shipped_of(data, spec, origin) if not overrides else None,
                 images=image_processor_of(data, origin),
                 mtp_layers=mtp_layers_of(data, origin), draft_vocab=draft_vocab_of(data, origin))


def load_file(path: Path, overrides: Mapping[str, Any] | None = None) -> Model:
    """Load a preset YAML file, a config.json, or a model folder holding a config.json."""
    from specsheet.sources.files import parse_json, parse_yaml, read_text
    from specsheet.sources.hf_config.families import is_hf_config

    if path.is_dir() and (path / "config.json").is_file():
        path = path / "config.json"
    text = read_text(path)
    origin = str(path)
    data = parse_json(text, origin) if path.suffix == ".json" else parse_yaml(text, origin)
    if isinstance(data, dict) and not is_hf_config(data) and HF_KEYS & set(data):
        raise SpecError("missing key 'model_type': a Hugging Face config.json names "
                        "its model family there", source=origin)
    if is_hf_config(data):
        assert isinstance(data, dict)
        name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
        return model_from_hf_config(data, origin, _short_name(data, name), overrides)
    return model_from_mapping(data, origin, overrides, default_name=path.stem)


def _short_name(data: Mapping[str, Any], fallback: str) -> str:
    """A model's name from its config's ``_name_or_path`` (org/name), else ``fallback``."""
    named = data.get("_name_or_path")
    if isinstance(named, str) and named.strip("/"):
        return named.strip("/").rsplit("/", 1)[-1]
    return fallback


def preset_built_from(ref: HubReference) -> str | None:
    """The shipped preset built from ``ref``'s config.json (its source names the repository and
    the revision, main), or None."""
    if ref.revision not in (None, "main"):
        return None
    for name, entry in preset_index().items():
        source = str(entry.get("source", "")) if isinstance(entry, Mapping) else ""
        if source.lower() == f"{HUB_URL}{ref.repo_id}/blob/main/config.json".lower():
            return name
    return None


HUB_URL = "https://huggingface.co/"


def load_hub(ref: HubReference, overrides: Mapping[str, Any] | None = None,
             timeout: float = DEFAULT_TIMEOUT, notes: list[str] | None = None) -> Model:
    """Load ORG/NAME's config.json from the local Hugging Face cache, else from the Hub (which
    puts it in the cache). Offline first: when the Hub cannot be reached or HF_HUB_OFFLINE is
    set, a name a shipped preset was built from answers from the preset (a line in ``notes``
    says so)."""
    from specsheet.sources.files import parse_json, read_text
    from specsheet.sources.hf_config.families import is_hf_config
    from specsheet.sources.hub import hub_config
    from specsheet.sources.hub_settings import HubUnreachable, offline

    try:
        path = hub_config(ref, timeout)
    except HubUnreachable:
        preset = preset_built_from(ref)
        if preset is None:
            raise
        if notes is not None:
            why = "HF_HUB_OFFLINE is set" if offline() else "the Hub cannot be reached"
            notes.append(f"{ref.repo_id}: {why}; answered from the shipped preset {preset}, "
                         "built from its config.json at main")
        return load_preset(preset, overrides)
    data = parse_json(read_text(path), str(path))
    if not is_hf_config(data):
        raise SpecError("expected a Hugging Face config.json with a model_type",
                        source=str(path))
    assert isinstance(data, dict)
    return model_from_hf_config(data, str(path), ref.repo_id.split("/")[1], overrides)


def hub_reference(text: str) -> HubReference:
    """What follows ``hf:``: ORG/NAME or ORG/NAME@REVISION, else SpecError."""
    from specsheet.sources.hub import parse_reference

    ref = parse_reference(text)
    if ref is None:
        raise SpecError("expected a Hugging Face repository, ORG/NAME or "
                        "ORG/NAME@REVISION (e.g. meta-llama/Llama-3.1-8B)", source=text)
    return ref


def load_preset(name: str, overrides: Mapping[str, Any] | None = None,
                shipped: bool = True) -> Model:
    """Load a built-in preset by name; ``shipped`` False leaves out the format its checkpoint
    ships in (``model_from_mapping``)."""
    index = preset_index()
    if name not in index:
        raise SpecError(f"unknown preset {quoted(name)}{did_you_mean(name, index)}; "
                        "'specsheet presets' lists them, or give a path to a preset YAML file")
    return model_from_mapping(index[name], f"preset {name}", overrides, shipped=shipped)


def resolve(ref: str | None, overrides: Mapping[str, Any] | None = None,
            notes: list[str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> Model:
    """A Model from a preset name, a file path (preset YAML, config.json or a folder holding
    one), ``ORG/NAME[@REVISION]``, or (``ref`` None) the overrides.

    The order: a bare name that is a preset is the preset, even when a path of that name
    exists (a line saying so is added to ``notes``; ``./NAME`` reads the path); then a path
    that exists; then ``ORG/NAME`` from the local Hugging Face cache, else the Hub (waiting at
    most ``timeout`` seconds for it). ``hf:ORG/NAME`` skips the first two."""
    check_overrides(overrides or {})
    if ref is None:
        given: Mapping[str, Any] = overrides if overrides is not None else {}
        missing = [spelled(given, name) for name in REQUIRED_FIELDS if name not in given]
        if missing:
            five = ", ".join(spelled(given, name) for name in REQUIRED_FIELDS)
            raise SpecError(f"missing {', '.join(missing)}: give a model (a preset name or "
                            f"file), or all five of {five}")
        return model_from_mapping({}, "options", overrides)
    if not ref:  # not the current folder, as Path("") would read it: a variable left unset
        raise SpecError("expected a model: a preset name ('specsheet presets' lists them), a "
                        "preset or config file, a model folder, or ORG/NAME; got an empty name",
                        value=ref)
    if ref.startswith("hf:"):
        return load_hub(hub_reference(ref[3:]), overrides, timeout, notes)
    if ref in preset_index():
        if notes is not None and os.path.exists(ref):  # no Path made for each preset
            notes.append(f"'{ref}' is read as the preset of that name; a path of that name "
                         f"exists too: write ./{ref} to read it")
        return load_preset(ref, overrides)
    # (os.path's tests: a name too long for a path is no file, where pathlib's raise)
    if "/" in ref and not os.path.exists(ref):  # ORG/NAME: the cache, else the Hub
        from specsheet.sources.hub import parse_reference

        hub = parse_reference(ref)
        if hub is not None:
            return load_hub(hub, overrides, timeout, notes)
    if looks_like_path(ref):
        if ref.endswith(WEIGHT_SUFFIXES) and os.path.isfile(ref):
            return load_weights(Path(ref), overrides)
        return load_file(Path(ref), overrides)
    return load_preset(ref, overrides)


def load_weights(path: Path, overrides: Mapping[str, Any] | None = None) -> Model:
    """The model a weights file describes, its headers read (never its data): a GGUF file's
    metadata as llama.cpp's converter writes it, its tensors' own types as the format; or the
    config.json beside a safetensors file or a sharded checkpoint's index (as ``inspect`` reads
    them, sources/weights/checkpoint.py)."""
    from specsheet.quant.stored import infos
    from specsheet.sources.weights.files import read_weights

    weights = read_weights(str(path))
    if weights.format != "gguf":
        config = weights.folder / "config.json"
        if not config.is_file():
            raise SpecError(f"no config.json beside it in {weights.folder}; give the "
                            "config.json, a preset or the five numbers", source=str(path))
        return load_file(config, overrides)
    from specsheet.sources.weights.gguf_config import hf_config_from_gguf

    origin = f"{path} (GGUF metadata)"
    data = hf_config_from_gguf(weights.metadata, {name for name, *_ in weights.tensors}, origin)
    if data is None:
        arch = weights.metadata.get("general.architecture")
        raise SpecError(f"GGUF architecture {quoted(arch)}: specsheet does not read its metadata",
                        source=str(path))
    name = weights.metadata.get("general.name")
    model = model_from_hf_config(data, origin, name if isinstance(name, str) and name
                                 else path.stem, overrides)
    return model if overrides else as_stored(model, infos(weights.tensors),
                                             weights.metadata.get("general.file_type"))


def as_stored(model: Model, tensors: list[TensorInfo], file_type: object) -> Model:
    """``model`` (a GGUF file's metadata) with the file's own tensor types as its shipped
    format, so that its weights are the file's bytes; where the file's tensors are not the
    model's, the model as its metadata gives it, in a plain dtype, and its description says
    why."""
    from specsheet.model.spec import Shipped
    from specsheet.quant.formats import GGUF_FILE_TYPES
    from specsheet.sources.weights.gguf_types import file_types

    found = file_types(model.spec, tensors)
    if found.problem:
        return model._replace(description=f"{model.description}; weights not as the file "
                              f"holds them: {found.problem}")
    named = GGUF_FILE_TYPES.get(file_type) if isinstance(file_type, int) else None
    fmt = found.mixture or named or "gguf-f16"
    description = model.description + ("" if found.mixture else
                                       "; tensor types as the file holds them (no "
                                       "llama-quantize file type gives them all)")
    return model._replace(shipped=Shipped(fmt, "gguf", file_types=found.types),
                          description=description)


# weights files that are a model source (their headers read): GGUF's metadata, or the config.json
# beside a safetensors file or a sharded checkpoint's index
WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".safetensors.index.json")
