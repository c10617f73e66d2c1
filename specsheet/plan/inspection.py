"""A checkpoint against its config: the parameters of the unquantized model its tensors store,
their bytes, the quantization format they match, and the same figures computed from the config,
compared component by component and layer by layer.

Pure functions over a ``Checkpoint`` (specsheet.quant.stored), which
``specsheet.sources.weights`` reads from the headers; ``specsheet.api.inspect`` joins the two.
"""

from __future__ import annotations

import re

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError
from specsheet.model.params import COMPONENTS, count_params
from specsheet.model.spec import Model, ModelSpec
from specsheet.model.vision import TOWER_COMPONENTS, tower_tensors
from specsheet.quant.formats import FORMATS
from specsheet.quant.formats import GGUF_FILE_TYPES as _FILE_TYPES  # for a file without a spec
from specsheet.quant.layouts import gguf_types, model_tensors, quantized_bytes
from specsheet.quant.stored import (
    ALL_COMPONENTS,
    OTHER,
    Checkpoint,
    Format,
    Named,
    NamedTensors,
)

_UNQUANTIZED = {"F32": "fp32", "F16": "fp16", "BF16": "bf16"}
_BYTES = {"F32": 4, "F16": 2, "BF16": 2}
# llama.cpp's fused tensors: GPT-2's, GPT-NeoX's and Phi-3's q, k, v in one attn_qkv; Phi-3's
# gate and up in one ffn_up of twice the rows
_FUSED = {"attn_qkv": ("attn_q", "attn_k", "attn_v"), "ffn_up": ("ffn_gate",)}


class Difference(NamedTuple):
    """Where the file and the config disagree: a component in one layer (or outside them)."""

    component: str
    layer: int | None
    file: int  # parameters in the file
    computed: int  # parameters the config gives
    tensors: list[str]  # the tensors at fault, as far as they can be told


class Check(NamedTuple):
    """The file's parameters against the config's, by component and by layer."""

    config: str  # where the spec came from
    model: Model
    components: dict[str, tuple[int, int]]  # component -> (file, computed)
    differences: list[Difference]

    @property
    def matches(self) -> bool:
        return not self.differences and all(f == c for f, c in self.components.values())


class Inspection(NamedTuple):
    """A checkpoint's figures, and the check against its config when one was found."""

    format: Format
    files: list[str]
    tensors: NamedTensors  # every tensor with its component, by groups of tensors alike
    params: dict[str, int]  # by component, "other" last
    bytes_by_dtype: dict[str, int]  # largest first
    bytes_by_component: dict[str, int]
    data_bytes: int  # every tensor's bytes
    quant: str | None  # the quantization format the file matches
    layouts: dict[str, int]  # quantized layouts found -> modules
    group_size: int | None
    predicted_bytes: int | None  # specsheet's bytes of the tensors count knows
    check: Check | None
    note: str  # why there is no check, or ""

    @property
    def named(self) -> list[Named]:
        """Each tensor with its component, layer, parameters and layout, in the files' order
        (made anew from ``tensors`` on each access)."""
        return self.tensors.named()

    @property
    def known_bytes(self) -> int:
        """Bytes of every tensor but those in ``other``: what specsheet predicts."""
        return self.data_bytes - self.bytes_by_component[OTHER]


class _Tally(NamedTuple):
    """The sums of one pass over the tensors."""

    params: dict[str, int]  # by component, every component, "other" last
    by_component: dict[str, int]  # bytes
    by_pair: dict[tuple[str, str], int]  # (component, dtype) -> bytes
    by_group: dict[tuple[str, int | None], int]  # (component, layer) -> parameters
    vector_types: set[str]  # the dtypes of the 1-D norms
    embedding: str | None  # the dtype of the first token-embedding tensor


# where a wrapper's checkpoint holds its vision tower (transformers 5's save names first), and,
# for the projector alone, the module names at the wrapper's top
_TOWER_MODULES = ("model.vision_tower.", "vision_tower.", "model.visual.", "visual.",
                  "model.vision_model.", "vision_model.")
_PROJECTOR_MODULES = ("model.", "")


def _claim_tower(named: list[Named], spec: ModelSpec) -> tuple[list[Named], list[str]]:
    """``named`` with the tensors of the config's vision tower and projector moved from
    ``other`` to ``vision`` and ``projector`` (outside the blocks), found by transformers' name
    below the tower's module; and the tower's tensors at fault: those the config gives that the
    file lacks, and those shaped otherwise."""
    assert spec.vision is not None
    expected = {t.name: t for t in tower_tensors(spec.vision)}
    found: dict[str, str] = {}  # the config's name -> the file's
    at_fault: list[str] = []
    claimed = []
    for n in named:
        name = n.tensor.name
        short = None
        if n.component == OTHER:
            for prefix in _TOWER_MODULES:
                if name.startswith(prefix) and name[len(prefix):] in expected:
                    short = name[len(prefix):]
                    break
            else:
                for prefix in _PROJECTOR_MODULES:
                    rest = name[len(prefix):]
                    if name.startswith(prefix) and rest.startswith("multi_modal_projector.") \
                            and rest in expected:
                        short = rest
                        break
        if short is None:
            claimed.append(n)
            continue
        want = expected[short]
        found[short] = name
        if n.tensor.shape != want.shape:
            at_fault.append(f"{name} {list(n.tensor.shape)} (the config: {list(want.shape)})")
        claimed.append(n._replace(component=want.component, layer=None))
    module = next((v[: -len(k)] for k, v in found.items() if not k.startswith(
        "multi_modal_projector.")), "vision_tower.")
    at_fault += [f"{module}{k} is missing" for k in expected if k not in found]
    return claimed, at_fault


def _tally(named: NamedTensors, components: tuple[str, ...] = ALL_COMPONENTS) -> _Tally:
    """The sums of ``named``, gathered by (component, dtype, layer) over its groups of tensors
    alike and then summed into their pairs and groups (each key first found where its first
    tensor is)."""
    sums: dict[tuple[str, str, int | None], list[int]] = {}  # -> [parameters, bytes]
    vector_types: set[str] = set()
    embedding = None
    for component, layer, dtype, shape, nbytes, each, _, tensors in named.groups.values():
        key = (component, dtype, layer)
        found = sums.get(key)
        if found is None:
            sums[key] = [each * tensors, nbytes * tensors]
            if component == "token_embedding" and embedding is None:
                embedding = dtype
        else:
            found[0] += each * tensors
            found[1] += nbytes * tensors
        if component == "norms" and len(shape) == 1:
            vector_types.add(dtype)
    params = dict.fromkeys(components, 0)
    by_pair: dict[tuple[str, str], int] = {}
    by_group: dict[tuple[str, int | None], int] = {}
    for (component, dtype, layer), (count, nbytes) in sums.items():
        params[component] += count
        pair = (component, dtype)
        by_pair[pair] = by_pair.get(pair, 0) + nbytes
        group = (component, layer if component != OTHER else None)
        by_group[group] = by_group.get(group, 0) + count
    by_component = dict.fromkeys(components, 0)
    for (component, _), nbytes in by_pair.items():
        by_component[component] += nbytes
    return _Tally(params, by_component, by_pair, by_group, vector_types, embedding)


def inspect_checkpoint(checkpoint: Checkpoint) -> Inspection:
    """The figures of ``checkpoint``: parameters and bytes by component, bytes by element
    type, the format it matches (the most common quantized layout; for GGUF, the file type
    whose every tensor type is the file's), and, with a model, specsheet's bytes and the check."""
    named, model = checkpoint.named, checkpoint.model
    components: tuple[str, ...] = ALL_COMPONENTS
    at_fault: list[str] = []
    if model is not None and model.spec.vision is not None:  # a multimodal checkpoint
        claimed, at_fault = _claim_tower(named.named(), model.spec)
        named = NamedTensors.of(claimed)
        components = (*COMPONENTS, *TOWER_COMPONENTS, OTHER)
    tally = _tally(named, components)
    by_dtype: dict[str, int] = {}
    for (_, dtype), nbytes in tally.by_pair.items():
        by_dtype[dtype] = by_dtype.get(dtype, 0) + nbytes
    by_dtype = dict(sorted(by_dtype.items(), key=lambda kv: (-kv[1], kv[0])))
    groups, layouts = checkpoint.group_sizes, checkpoint.layouts
    group = max(groups, key=lambda g: groups[g]) if groups else None
    if checkpoint.format == "gguf":
        quant = _gguf_format(checkpoint.file_type, model, named)
    else:
        quant = max(layouts, key=lambda q: layouts[q]) if layouts else None
    inspection = Inspection(
        format=checkpoint.format, files=checkpoint.files, tensors=named, params=tally.params,
        bytes_by_dtype=by_dtype, bytes_by_component=tally.by_component,
        data_bytes=sum(tally.by_component.values()), quant=quant, layouts=layouts,
        group_size=group, predicted_bytes=None,
        check=_compare(model, named, tally, components, at_fault)
        if model is not None else None,
        note=checkpoint.note)
    if model is not None:
        inspection = inspection._replace(predicted_bytes=_predict(inspection, model, tally))
    return inspection


def _gguf_format(file_type: int | None, model: Model | None, tensors: NamedTensors
                 ) -> str | None:
    """The GGUF file type whose every tensor type is the file's (a fused tensor's type taken
    for each of its parts); without a spec, the one general.file_type names."""
    if model is None:
        return _FILE_TYPES.get(file_type) if file_type is not None else None
    types = {name: dtype for name, dtype, *_ in tensors.tensors}
    # a fused tensor stands for the parts a file without them holds
    for name, dtype, *_ in tensors.tensors:
        parts = name.split(".")
        if len(parts) == 4 and parts[0] == "blk" and parts[2] in _FUSED:
            for part in _FUSED[parts[2]]:
                types.setdefault(".".join((parts[0], parts[1], part, parts[3])), dtype)
    vectors = {types.get(t.name) for t in model_tensors(model.spec) if len(t.shape) == 1}
    for name, fmt in FORMATS.items():
        if fmt.family != "gguf":
            continue
        try:
            expected = gguf_types(model.spec, name.removeprefix("gguf-"))
        except SpecError:
            continue
        if all(types.get(t) == q or (q == "F32" and types.get(t) in vectors and
                                     types.get(t) in _UNQUANTIZED)
               for t, q in expected.items()):
            return name
    return None


def _predict(inspection: Inspection, model: Model, tally: _Tally) -> int | None:
    """specsheet's bytes for the tensors it knows: quantized_bytes of the matched format, or
    the parameters times the element size of an unquantized checkpoint of one float type."""
    spec = model.spec
    known = {dtype for component, dtype in tally.by_pair if component != OTHER}
    if inspection.quant is None:
        if len(known) == 1 and (dtype := next(iter(known))) in _BYTES:
            return count_params(spec).total * _BYTES[dtype]
        return None
    if len(inspection.layouts) > 1:
        return None
    unquantized = None
    vector_types = tally.vector_types
    if inspection.format == "gguf":
        if len(vector_types) == 1 and (t := next(iter(vector_types))) in ("F16", "BF16"):
            unquantized = _UNQUANTIZED[t]
    elif tally.embedding in _UNQUANTIZED:
        unquantized = _UNQUANTIZED[tally.embedding]
    group = inspection.group_size if FORMATS[inspection.quant].group_size else None
    try:
        return quantized_bytes(spec, inspection.quant, group, unquantized).weights_bytes
    except SpecError:
        return None


_LAYER_PART = re.compile(r"(?:^|\.)(?:layers|layer|h|blocks|block|blk)\.(\d+)(?=\.|$)")


def _pattern(name: str) -> str:
    """A tensor's name with its layer index written N, to compare the layers."""
    return _LAYER_PART.sub(lambda m: m.group(0).replace(m.group(1), "N"), name, count=1)


def _compare(model: Model, named: NamedTensors, tally: _Tally,
             names: tuple[str, ...] = ALL_COMPONENTS, tower_at_fault: list[str] | None = None
             ) -> Check:
    """The file's parameters against the config's: by component, and by component and layer,
    with the tensors at fault where a group differs (a vision tower's: ``tower_at_fault``)."""
    spec = model.spec
    computed = {**count_params(spec).components(), OTHER: 0}
    components = {c: (tally.params[c], computed[c]) for c in names}
    expected: dict[tuple[str, int | None], int] = {}
    for t in model_tensors(spec):
        expected[t.component, t.layer] = expected.get((t.component, t.layer), 0) + t.elements
    found = tally.by_group
    differing = [key for key in set(expected) | set(found)
                 if found.get(key, 0) != expected.get(key, 0)]
    groups: dict[tuple[str, int | None], list[Named]] = {}
    if differing:  # the tensors by group, to name those at fault
        for n in named.named():
            groups.setdefault((n.component, n.layer if n.component != OTHER else None),
                              []).append(n)
    tower = list(tower_at_fault or ())
    differences = [
        Difference(key[0], key[1], found.get(key, 0), expected.get(key, 0),
                   [t for t in tower if key[0] in TOWER_COMPONENTS] or _suspects(key, groups))
        for key in sorted(differing, key=lambda k: (names.index(k[0]),
                                                    -1 if k[1] is None else k[1]))]
    if tower and not any(d.component in TOWER_COMPONENTS for d in differences):
        # misshapen tensors whose elements add up all the same
        differences.append(Difference("vision", None, tally.params["vision"],
                                      computed["vision"], tower))
    return Check(model.origin, model, components, differences)


def _suspects(key: tuple[str, int | None], groups: dict[tuple[str, int | None], list[Named]]
              ) -> list[str]:
    """The tensors of a group that differs: those missing or shaped unlike the same tensor in
    most other layers; outside the layers (or without a consensus), the group's tensors."""
    component, layer = key
    mine = groups.get(key, [])
    if layer is not None:
        others = [g for (c, lay), g in groups.items()
                  if c == component and lay is not None and lay != layer]
        if others:
            seen: dict[tuple[str, tuple[int, ...]], int] = {}
            for group in others:
                for shape_key in {(_pattern(n.tensor.name), n.tensor.shape) for n in group}:
                    seen[shape_key] = seen.get(shape_key, 0) + 1
            usual = {k for k, v in seen.items() if 2 * v > len(others)}
            usual_names = dict(usual)
            have = {_pattern(n.tensor.name): n for n in mine}
            found = []
            for pattern, _shape in sorted(usual):
                if pattern not in have:
                    found.append(f"{pattern.replace('.N.', f'.{layer}.', 1)} is missing")
            for pattern, n in have.items():
                if (pattern, n.tensor.shape) not in usual:
                    usual_shape = usual_names.get(pattern)
                    if usual_shape is not None:
                        found.append(f"{n.tensor.name} {list(n.tensor.shape)} (the other "
                                     f"layers: {list(usual_shape)})")
                    else:
                        found.append(f"{n.tensor.name} {list(n.tensor.shape)} (not in the "
                                     "other layers)")
            if found:
                return found
    return [f"{n.tensor.name} {list(n.tensor.shape)}" for n in mine]
