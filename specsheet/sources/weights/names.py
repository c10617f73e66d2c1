"""Stored tensors mapped to specsheet's components, and quantized layouts counted as the
unquantized model's parameters.

Names are read by their parts, so that one set of rules covers the Hugging Face names of every
family (``model.layers.3.self_attn.q_proj.weight``, GPT-2's ``h.3.attn.c_attn.weight``,
GPT-NeoX's ``gpt_neox.layers.3.attention.query_key_value.weight``, OPT's
``model.decoder.layers.3.fc1.weight``, Mixtral's ``block_sparse_moe.experts.5.w1.weight``) and
GGUF's names (``blk.3.attn_q.weight``, ``token_embd.weight``, ``output.weight``). A name no rule
claims, a layer past the model's last (DeepSeek-V3's multi-token-prediction layer), a vision or
audio tower, and buffers that are not parameters (rotary ``inv_freq``, GPT-2's causal mask
``attn.bias``, DeepSeek-V3's ``e_score_correction_bias``, GGUF's ``rope_freqs``) go to
``other``.
"""

from __future__ import annotations

import re
from collections import Counter
from math import prod
from operator import getitem, itemgetter

from specsheet.compiled import NamedTuple
from specsheet.quant.stored import (
    OTHER,
    GroupKey,
    Named,
    NamedTensors,
    TensorGroup,
    TensorInfo,
    TensorRow,
    infos,
    row_name,
)

_LAYER = re.compile(r"(?:^|\.)(?:layers|layer|h|blocks|block|blk)\.(\d+)(?=\.|$)")
_PREFIXES = ("model.layers.", "blk.")  # where _LAYER's first match is the name's start
_TOWERS = {"vision_tower", "vision_model", "visual", "vision", "multi_modal_projector",
           "mm_projector", "audio_tower", "audio_model", "mtp", "speech_model"}
_BUFFER = re.compile(r"(?:inv_freq|masked_bias|e_score_correction_bias|(?:^|\.)(?:attn|attention)"
                     r"\.bias|(?:^|\.)exp_probs_b\.bias|^rope_freqs\.weight|_freqs_cis)$")
_TOKEN = {"embed_tokens", "wte", "word_embeddings", "embed_in", "token_embd", "tok_embeddings"}
_POSITION = {"wpe", "embed_positions", "position_embd", "position_embeddings"}
_PROJECTION = {"project_in", "project_out"}
_HEAD = {"lm_head", "embed_out"}
_ATTENTION = {"self_attn", "attn", "attention", "self_attention"}
_MLP = {"mlp", "ffn", "feed_forward", "block_sparse_moe", "moe", "experts", "shared_expert",
        "shared_experts", "fc1", "fc2"}


def layer_of(name: str) -> int | None:
    match = _LAYER.search(name)
    return int(match.group(1)) if match else None


def _layer_pattern(name: str) -> tuple[int | None, str]:
    """``layer_of(name)``, and the name with the layer's number written ``#``: at once for the
    names most checkpoints use (``model.layers.3.``, GGUF's ``blk.3.``), else by ``_LAYER``."""
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            start = len(prefix)
            end = name.find(".", start)
            digits = name[start:end] if end >= 0 else name[start:]
            if digits.isdecimal():  # what \d+ matches, followed by "." or the end
                return int(digits), f"{prefix}#{name[end:] if end >= 0 else ''}"
            break
    match = _LAYER.search(name)
    if match is None:
        return None, name
    return int(match.group(1)), f"{name[:match.start(1)]}#{name[match.end(1):]}"


def component_of(name: str, layers: int | None = None) -> tuple[str, int | None]:
    """The component of tensor ``name`` and its layer; ``layers``, when known, sends the
    layers past the model's last to ``other``."""
    layer = layer_of(name)
    if layer is not None and layers is not None and layer >= layers:
        return OTHER, layer
    return _kind(name, layer is not None), layer


def _kind(name: str, in_layer: bool) -> str:
    """The component by the parts of the name; the same for every layer's copy of a tensor
    (no rule reads the layer's number), so it is found once per name pattern."""
    if _BUFFER.search(name):
        return OTHER
    parts = name.lower().split(".")
    module = parts[:-1] if len(parts) > 1 else parts
    if any(p in _TOWERS for p in parts):
        return OTHER
    if any("norm" in p or p.startswith("ln") for p in module):
        return "norms"
    if not in_layer:
        if any(p in _TOKEN for p in module):
            return "token_embedding"
        if any(p in _POSITION for p in module):
            return "position_embedding"
        if any(p in _PROJECTION for p in module):
            return "embedding_projections"
        if any(p in _HEAD for p in module) or module == ["output"]:
            return "output_head"
        return OTHER
    if any(p in _ATTENTION or p.startswith("attn_") for p in module):
        return "attention"
    if any(p in _MLP or p.startswith("ffn_") for p in module):
        return "mlp"
    return OTHER


_SUFFIXES = ("_blocks", "_scales")  # gpt-oss's MXFP4 tensors beside their module's name


def _split(name: str) -> tuple[str, str]:
    """A tensor name as (module, what it stores): ``weight``, ``qweight``, ``weight.absmax``,
    gpt-oss's ``_blocks`` and ``_scales``."""
    if ".weight." in name:
        module, rest = name.split(".weight.", 1)
        return module, "weight." + rest
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    module, _, last = name.rpartition(".")
    return module, last


# what a quantized Linear stores beside its packed weight: no parameters of their own
_METADATA = {"qzeros", "scales", "g_idx", "SCB", "weight_format", "weight_scale",
             "weight_scale_inv", "input_scale", "weight_shape", "weight_global_scale",
             "input_global_scale", "weight_scale_2", "weight_zero_point", "weight_g_idx",
             "_scales", "k_scale", "v_scale"}


def _layout(stored: dict[str, TensorInfo]) -> tuple[str | None, str | None, int, int | None]:
    """The layout of one module's stored tensors: (layout, the tensor holding the values,
    the parameters it stands for, group size)."""
    if "qweight" in stored:
        qw = stored["qweight"]
        scales, zeros = stored.get("scales"), stored.get("qzeros")
        lead = prod(qw.shape[:-2])
        if len(qw.shape) < 2:
            return None, None, 0, None
        rows, cols = qw.shape[-2], qw.shape[-1]
        if scales is not None and len(scales.shape) >= 2 and scales.shape[-1] == cols:
            # GPTQ: packed along K, [K·b/32, N]; the bits from qzeros [groups, N·b/32]
            bits = 32 * zeros.shape[-1] // cols if zeros is not None and zeros.shape and cols else 4
            bits = bits if bits in (2, 3, 4, 8) else 4
            k = rows * 32 // bits
            groups = scales.shape[-2]
            return f"gptq-int{bits}", "qweight", lead * k * cols, -1 if groups == 1 else \
                k // groups if groups else None
        # AWQ: packed along N, [K, N/8]; scales [K/g, N]
        n = scales.shape[-1] if scales is not None and scales.shape else cols * 8
        groups = scales.shape[-2] if scales is not None and len(scales.shape) >= 2 else 0
        return "awq-int4", "qweight", lead * rows * n, rows // groups if groups else None
    if "weight_packed" in stored:
        wp = stored["weight_packed"]
        if wp.dtype == "I32":  # compressed-tensors pack-quantized: 8 int4 values per int32
            scale = stored.get("weight_scale")
            k = wp.shape[-1] * 8 if wp.shape else 0
            groups = scale.shape[-1] if scale is not None and scale.shape else 0
            return "w4a16", "weight_packed", wp.elements * 8, \
                (-1 if groups == 1 else k // groups) if groups else None
        nv = "weight_global_scale" in stored or (
            "weight_scale" in stored and stored["weight_scale"].dtype == "F8_E4M3")
        return ("nvfp4" if nv else "mxfp4"), "weight_packed", wp.elements * 2, None
    if "_blocks" in stored:  # gpt-oss: [..., K/32, 16] bytes of FP4 pairs, E8M0 _scales
        return "mxfp4", "_blocks", stored["_blocks"].elements * 2, None
    w = stored.get("weight")
    if w is None:
        return None, None, 0, None
    if "weight.absmax" in stored:
        nested = "weight.nested_absmax" in stored
        return ("bnb-nf4-dq" if nested else "bnb-nf4"), "weight", w.elements * 2, None
    if "SCB" in stored and w.dtype == "I8":
        return "bnb-int8", "weight", w.elements, None
    scale = stored.get("weight_scale", stored.get("weight_scale_inv"))
    if w.dtype == "I8" and scale is not None:
        return "w8a8", "weight", w.elements, None
    if w.dtype in ("F8_E4M3", "F8_E5M2"):
        # per tensor: a scale of [1] or []; per channel: [N, 1]; per 128 x 128 block: a 2-D
        # grid of scales (DeepSeek-V3's weight_scale_inv is always one)
        if "weight_scale_inv" in stored or (
                scale is not None and len(scale.shape) == 2 and len(w.shape) >= 2
                and (scale.shape[-1] != 1 or scale.shape[-2] != w.shape[-2])):
            return "fp8-block", "weight", w.elements, None
        if scale is not None and len(scale.shape) == 2:
            return "fp8-channel", "weight", w.elements, None
        return "fp8", "weight", w.elements, None
    if w.dtype == "U8" and scale is not None and scale.dtype == "F8_E4M3":  # ModelOpt NVFP4
        return "nvfp4", "weight", w.elements * 2, None
    return None, None, 0, None


class Layouts(NamedTuple):
    named: NamedTensors
    layouts: dict[str, int]  # quantized layout -> modules stored in it
    group_sizes: dict[int, int]  # group size -> modules (GPTQ, AWQ, w4a16)


def name_tensors(tensors: list[TensorRow], layers: int | None = None) -> Layouts:
    """Every tensor with its component, layer and the parameters it stands for. The names
    are unique (every reader checks).

    A checkpoint whose names differ by whole numbers alone (a layer's, an expert's) is named
    pattern by pattern (``_by_pattern``); any other is taken module by module (``_by_module``),
    with the same answer."""
    return _by_pattern(tensors, layers) or _by_module(tensors, layers)


# ASCII digits written "#", byte for byte: a name's pattern, as long as the name
_DIGITS = bytes.maketrans(b"0123456789", b"#" * 10)
_NO_LAYER = slice(0, 0)  # a name without a layer's number: its layer's text is ""
_DTYPE, _SHAPE, _NBYTES = itemgetter(1), itemgetter(2), itemgetter(3)  # a tensor's


def _by_pattern(tensors: list[TensorRow], layers: int | None) -> Layouts | None:
    """``name_tensors`` by name pattern, at C speed per tensor: each name with its digits
    written ``#`` (the names joined and translated as bytes), the tensors counted by (pattern,
    layer, dtype, shape, bytes), and the component, the parameters and each module's layout
    found once per pattern and layer.

    Names alike but for the digits of whole parts (a layer's, an expert's number) have the same
    component, since no rule reads such a part, and their layer's number in the same place.
    None (name them module by module) when a pattern's digits are in a part that also holds
    letters (GPT-2's ``ln_1``, Mixtral's ``w1``: a rule could read them) or in what a module
    stores, when a name has ``.weight.``, a gpt-oss suffix or no dot, or when the modules of
    one pattern and layer do not all store the same tensors alike."""
    if not tensors:
        return None
    names = list(map(row_name, tensors))
    patterns = "\n".join(names).encode("utf-8", "surrogatepass").translate(_DIGITS).decode(
        "utf-8", "surrogatepass").split("\n")
    if len(patterns) != len(names):  # a name with a line break
        return None
    examples = dict(zip(patterns, names, strict=True))  # a name of each pattern
    where: dict[str, tuple[slice, str, str]] = {}  # -> (its layer's text, module, stores)
    for pattern, name in examples.items():
        module, dot, stores = pattern.rpartition(".")
        if not dot or "#" in stores or ".weight." in pattern or pattern.endswith(_SUFFIXES) \
                or any("#" in part and part.strip("#") for part in module.split(".")):
            return None
        # the first match is in the same place in every name of the pattern: the names
        # differ in ASCII digits alone, which \d matches and nothing else in _LAYER does
        match = _LAYER.search(name)
        where[pattern] = (slice(match.start(1), match.end(1)) if match else _NO_LAYER,
                          module, stores)
    # one str for each pattern: the keys' comparisons are of objects, not of their text
    patterns = list(map({pattern: pattern for pattern in where}.__getitem__, patterns))
    slices = {pattern: found[0] for pattern, found in where.items()}
    layer_texts = map(getitem, names, map(slices.__getitem__, patterns))
    keys: list[GroupKey] = list(zip(patterns, layer_texts, map(_DTYPE, tensors),
                                    map(_SHAPE, tensors), map(_NBYTES, tensors), strict=True))
    counts = Counter(keys)  # in the order of each key's first tensor
    # the modules of each (pattern, layer): what they store -> (dtype, shape, bytes, tensors)
    modules: dict[tuple[str, str], dict[str, tuple[str, tuple[int, ...], int, int]]] = {}
    for key, count in counts.items():
        pattern, layer_text, dtype, shape, nbytes = key
        _, module, stores = where[pattern]
        stored = modules.setdefault((module, layer_text), {})
        if stores in stored:  # two kinds of one tensor among the pattern's modules
            return None
        stored[stores] = (dtype, shape, nbytes, count)
    held = 0  # modules, if each module of a pattern and layer stores the same tensors
    check = False  # whether the modules of a pattern and layer store more than one kind
    for stored in modules.values():
        counts_of = {count for _, _, _, count in stored.values()}
        if len(counts_of) > 1:
            return None
        held += counts_of.pop()
        check = check or len(stored) > 1
    # each name once: a module's tensors of one kind in a pattern and layer are as many as the
    # modules (an expert's weight in one and its scale in another: one of each, two modules),
    # and every module holds one of each when the modules are no more
    if check:  # each name's module: the name without its last part (which holds no digit:
        # every name of the pattern ends in it)
        last = {pattern: "." + stores for pattern, (_, _, stores) in where.items()}
        if len(set(map(str.removesuffix, names, map(last.__getitem__, patterns)))) != held:
            return None
    layouts: dict[str, int] = {}
    group_sizes: dict[int, int] = {}
    found: dict[tuple[str, str], tuple[str | None, str | None, int]] = {}
    for (module, layer_text), stored in modules.items():  # in the order of their first tensor
        layout, holder, count, group = _layout({
            stores: TensorInfo("", dtype, shape, nbytes, "", 0)
            for stores, (dtype, shape, nbytes, _) in stored.items()})
        found[module, layer_text] = layout, holder, count
        if layout is not None:
            n = next(iter(stored.values()))[3]
            layouts[layout] = layouts.get(layout, 0) + n
            if group is not None:
                group_sizes[group] = group_sizes.get(group, 0) + n
    kinds: dict[tuple[str, bool], str] = {}
    groups: dict[GroupKey, TensorGroup] = {}
    for key, count in counts.items():
        pattern, layer_text, dtype, shape, nbytes = key
        _, module, stores = where[pattern]
        layout, holder, params = found[module, layer_text]
        if layout is None:
            params, t_layout = prod(shape), None
        elif stores == holder:
            t_layout = layout
        elif stores in _METADATA or stores.startswith("weight."):
            params, t_layout = 0, layout
        else:
            params, t_layout = prod(shape), None
        layer = int(layer_text) if layer_text else None
        if layer is not None and layers is not None and layer >= layers:
            component = OTHER
        else:
            kind = (pattern, layer is not None)
            component = kinds.get(kind) or kinds.setdefault(
                kind, _kind(examples[pattern], layer is not None))
        groups[key] = TensorGroup(component, layer, dtype, shape, nbytes, params, t_layout,
                                  count)
    return Layouts(NamedTensors(tensors, keys, groups), layouts, group_sizes)


def _by_module(rows: list[TensorRow], layers: int | None) -> Layouts:
    """``name_tensors`` module by module.

    The tensors are taken module by module (a Linear's weight beside its scales): the layout
    and the layer once per module, the component once per name pattern (the name with its
    layer's number taken out: the same for every layer)."""
    tensors = infos(rows)
    modules: dict[str, dict[str, int]] = {}  # module -> what it stores -> the tensor's index
    joined = True  # every name is its module, ".", and what it stores
    for i, t in enumerate(tensors):
        name = t.name
        if ".weight." in name or name.endswith(_SUFFIXES):
            module, stores = _split(name)
            joined = joined and name == f"{module}.{stores}"
        else:  # what _split does with the rest, at once
            module, _, stores = name.rpartition(".")
        stored = modules.get(module)
        if stored is None:
            modules[module] = {stores: i}
        else:
            stored[stores] = i
    layouts: dict[str, int] = {}
    groups: dict[int, int] = {}
    kinds = _Kinds(layers)
    named: list[Named | None] = [None] * len(tensors)
    new = tuple.__new__  # Named(...) without Named._make's Python frame, once per tensor
    for module, indices in modules.items():
        stored_tensors = {stores: tensors[i] for stores, i in indices.items()}
        layout, holder, count, group = _layout(stored_tensors)
        if layout is not None:
            layouts[layout] = layouts.get(layout, 0) + 1
            if group is not None:
                groups[group] = groups.get(group, 0) + 1
        # the module's layer is its tensors' (a match in the module is a match in the name)
        layer, pattern = _layer_pattern(module)
        if layer is not None and layers is not None and layer >= layers:
            in_module: dict[str, str] | None = None
        elif layer is not None:
            in_module = kinds.inside.get(pattern)
            if in_module is None:
                in_module = kinds.inside[pattern] = {}
        for stores, i in indices.items():
            t = tensors[i]
            if layout is None:
                params, t_layout = t.elements, None
            elif stores == holder:
                params, t_layout = count, layout
            elif stores in _METADATA or stores.startswith("weight."):
                params, t_layout = 0, layout
            else:
                params, t_layout = t.elements, None
            if layer is None:  # the layer, if any, is in what it stores
                component, t_layer = kinds.of(t.name)
            elif in_module is None:
                component, t_layer = OTHER, layer
            else:
                component = in_module.get(stores) or in_module.setdefault(
                    stores, _kind(t.name, True))
                t_layer = layer
            named[i] = new(Named, (t, component, t_layer, params, t_layout))
    if joined and None not in named:
        return Layouts(NamedTensors.of(named), layouts, groups)  # type: ignore[arg-type]
    # names that repeat, or that two spellings make the same module's: one by one
    return Layouts(NamedTensors.of(_one_by_one(tensors, layers)), layouts, groups)


class _Kinds:
    """Components found once per name pattern."""

    def __init__(self, layers: int | None) -> None:
        self.layers = layers
        self.outside: dict[str, str] = {}  # name -> component, outside the layers
        # the module with its layer's number taken out -> what it stores -> component
        self.inside: dict[str, dict[str, str]] = {}
        self.patterns: dict[str, str] = {}  # the name with its layer's number taken out

    def of(self, name: str) -> tuple[str, int | None]:
        """``component_of(name, layers)``."""
        layer, pattern = _layer_pattern(name)
        if layer is None:
            known = self.outside.get(name)
            return known or self.outside.setdefault(name, _kind(name, False)), None
        if self.layers is not None and layer >= self.layers:
            return OTHER, layer
        known = self.patterns.get(pattern)
        return known or self.patterns.setdefault(pattern, _kind(name, True)), layer


def _one_by_one(tensors: list[TensorInfo], layers: int | None) -> list[Named]:
    """name_tensors' answer tensor by tensor, for names that do not split into modules
    cleanly."""
    modules: dict[str, dict[str, TensorInfo]] = {}
    for t in tensors:
        module, stores = _split(t.name)
        modules.setdefault(module, {})[stores] = t
    params: dict[str, tuple[int, str | None]] = {}  # tensor name -> (params, layout)
    for stored in modules.values():
        layout, holder, count, _ = _layout(stored)
        if layout is None:
            continue
        for stores, t in stored.items():
            if stores == holder:
                params[t.name] = (count, layout)
            elif stores in _METADATA or stores.startswith("weight."):
                params[t.name] = (0, layout)
    kinds = _Kinds(layers)
    named = []
    for t in tensors:
        component, layer = kinds.of(t.name)
        count, layout = params.get(t.name) or (t.elements, None)
        named.append(Named(t, component, layer, count, layout))
    return named
