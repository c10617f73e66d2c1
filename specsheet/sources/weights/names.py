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
from math import prod

from specsheet.compiled import NamedTuple
from specsheet.quant.stored import OTHER, Named, TensorInfo

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
            bits = 32 * zeros.shape[-1] // cols if zeros is not None and cols else 4
            bits = bits if bits in (2, 3, 4, 8) else 4
            k = rows * 32 // bits
            groups = scales.shape[-2]
            return f"gptq-int{bits}", "qweight", lead * k * cols, -1 if groups == 1 else \
                k // groups if groups else None
        # AWQ: packed along N, [K, N/8]; scales [K/g, N]
        n = scales.shape[-1] if scales is not None else cols * 8
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
    named: list[Named]
    layouts: dict[str, int]  # quantized layout -> modules stored in it
    group_sizes: dict[int, int]  # group size -> modules (GPTQ, AWQ, w4a16)


def name_tensors(tensors: list[TensorInfo], layers: int | None = None) -> Layouts:
    """Every tensor with its component, layer and the parameters it stands for.

    The tensors are taken module by module (a Linear's weight beside its scales): the layout
    and the layer once per module, the component once per name pattern (the name with its
    layer's number taken out: the same for every layer)."""
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
        return Layouts(named, layouts, groups)  # type: ignore[arg-type]  # every one is Named
    # names that repeat, or that two spellings make the same module's: one by one
    return Layouts(_one_by_one(tensors, layers), layouts, groups)


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
