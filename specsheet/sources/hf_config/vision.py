"""A multimodal wrapper's vision tower, read from its config.json (``vision_config`` and the
wrapper's own keys), with the defaults of transformers 5.x's configuration classes.

``WRAPPER_ENCODERS`` names, for each wrapper specsheet counts whole, the encoders transformers
builds for it: a ``vision_config`` whose ``model_type`` is another encoder is refused with its
name (Gemma 3 and LLaVA build whatever vision model the config names; specsheet counts the ones
listed). The text keys of a wrapper that writes them at the top level (Qwen2.5-VL's
files) are read as its text model's (``FLAT_TEXT``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.errors import SpecError, quoted
from specsheet.sources.hf_config.reader import HFConfig, key_error

if TYPE_CHECKING:
    from specsheet.model.vision import VisionTower

_SIGLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
           "num_attention_heads": 12, "num_channels": 3, "image_size": 224, "patch_size": 16,
           "vision_use_head": True}
_CLIP = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
         "num_attention_heads": 12, "num_channels": 3, "image_size": 224, "patch_size": 32}
_PIXTRAL = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
            "num_attention_heads": 16, "num_channels": 3, "image_size": 1024, "patch_size": 16,
            "head_dim": 64}
_QWEN2_5 = {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "num_heads": 16,
            "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
            "temporal_patch_size": 2, "window_size": 112, "out_hidden_size": 3584,
            "fullatt_block_indexes": [7, 15, 23, 31]}
_QWEN3 = {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "num_heads": 16,
          "in_channels": 3, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
          "out_hidden_size": 3584, "num_position_embeddings": 2304,
          "deepstack_visual_indexes": [8, 16, 24]}
_LLAMA4 = {"hidden_size": 768, "num_hidden_layers": 34, "num_attention_heads": 16,
           "num_channels": 3, "intermediate_size": 5632, "vision_output_dim": 7680,
           "image_size": 448, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
           "projector_input_dim": 4096, "projector_output_dim": 4096}
_IDEFICS3 = {"hidden_size": 1152, "intermediate_size": 3072, "num_hidden_layers": 12,
             "num_attention_heads": 16, "num_channels": 3, "image_size": 224, "patch_size": 32}

# the vision_config model_types transformers builds for each wrapper, with their defaults;
# the first is the wrapper's default (a vision_config without model_type)
WRAPPER_ENCODERS: dict[str, dict[str, dict[str, Any]]] = {
    "gemma3": {"siglip_vision_model": _SIGLIP},
    "llava": {"clip_vision_model": _CLIP, "siglip_vision_model": _SIGLIP},
    "mistral3": {"pixtral": _PIXTRAL},
    "qwen2_5_vl": {"qwen2_5_vl": _QWEN2_5},
    "qwen3_vl": {"qwen3_vl": _QWEN3},
    "llama4": {"llama4_vision_model": _LLAMA4},
}
# wrappers whose vision sub-config class is fixed: transformers reads any vision_config as it,
# whatever model_type the file writes there
_FIXED = {"qwen2_5_vl", "qwen3_vl", "llama4", "mistral3"}
_ENCODER_OF = {"siglip_vision_model": "siglip", "clip_vision_model": "clip",
               "pixtral": "pixtral", "qwen2_5_vl": "qwen2_5_vl", "qwen3_vl": "qwen3_vl",
               "llama4_vision_model": "llama4"}
# the wrapper's own keys and their defaults (transformers' wrapper configuration classes)
_WRAPPER_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3": {"mm_tokens_per_image": 256},
    "llava": {"multimodal_projector_bias": True, "vision_feature_layer": -2},
    "mistral3": {"multimodal_projector_bias": False, "spatial_merge_size": 2,
                 "vision_feature_layer": -1},
}
# the wrapper configuration class's tie_word_embeddings, which transformers 5.x ties the output
# head by (not the text config's): Mistral3Config's is true, so a Mistral 3 file that leaves
# the key out is built with a tied head
_WRAPPER_TIE = {"gemma3": True, "llava": False, "mistral3": True, "qwen2_5_vl": False,
                "qwen3_vl": False, "llama4": False}
# wrappers that may write their text model's keys at the top level: the text model_type
FLAT_TEXT = {"qwen2_5_vl": "qwen2_5_vl_text"}


def wrapper_tie(wrapper: Mapping[str, Any], text: Mapping[str, Any],
                text_default: object) -> bool | None:
    """Whether transformers ties the output head of the wrapper ``wrapper`` (its own key, else
    its class's default; LLaVA also takes a true tie of its text config), or None for a
    wrapper whose tie specsheet reads from the text config as before."""
    kind = wrapper.get("model_type")
    if kind not in _WRAPPER_TIE:
        return None
    tie = wrapper.get("tie_word_embeddings")
    tie = _WRAPPER_TIE[str(kind)] if not isinstance(tie, bool) else tie
    if kind == "llava" and not tie:  # LlavaConfig.__post_init__
        text_tie = text.get("tie_word_embeddings", text_default)
        tie = text_tie if isinstance(text_tie, bool) else tie
    return tie


def _feature_layer(top: HFConfig, layers: int) -> int:
    """vision_feature_layer as vLLM's llava.py reads it: an index from the end (-1, -2) kept,
    or the layers up to it (a positive index); a list of them, the deepest."""
    value = top.data.get("vision_feature_layer")
    if isinstance(value, int) and not isinstance(value, bool) and -layers <= value <= layers:
        return value
    if isinstance(value, list) and value and all(
            isinstance(v, int) and not isinstance(v, bool) and -layers <= v <= layers
            for v in value):
        return int(max(v + layers + 1 if v < 0 else v for v in value))
    raise key_error("vision_feature_layer", f"expected a layer index of the {layers}-layer "
                    "encoder (-1 the last) or a list of them, got "
                    f"{quoted(value)}", source=top.origin)


def _ratio_merge(c: HFConfig) -> int:
    """Llama 4's pixel_shuffle_ratio (0.5) as patches merged per side (2)."""
    ratio = c.data.get("pixel_shuffle_ratio")
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1 \
            or (1 / ratio) != int(1 / ratio):
        raise key_error("pixel_shuffle_ratio", "expected 1 / an integer (0.5), got "
                                               f"{quoted(ratio)}",
                        source=c.origin)
    return int(1 / ratio)


def vision_tower(data: Mapping[str, Any], d_model: int, origin: str) -> VisionTower | None:
    """The vision tower of the wrapper ``data`` (a config.json mapping) whose language model is
    ``d_model`` wide, or None for a model without one that specsheet reads (a text model, a
    wrapper whose vision_config is absent). Raises SpecError naming an encoder that specsheet
    does not count."""
    wrapper = data.get("model_type")
    vision = data.get("vision_config")
    if wrapper not in WRAPPER_ENCODERS or vision is None:
        return None
    where = f"{origin} (vision_config)"
    if not isinstance(vision, dict):
        raise key_error("vision_config", f"expected a mapping of the vision tower's keys, got "
                        f"{type(vision).__name__}", source=origin)
    known = WRAPPER_ENCODERS[wrapper]
    kind = next(iter(known)) if wrapper in _FIXED else vision.get("model_type", next(iter(known)))
    if kind not in known:
        raise SpecError(f"model_type {quoted(kind)} is not an encoder specsheet counts "
                        f"for a '{wrapper}' model (it reads {', '.join(known)}); the vision tower "
                        "cannot be counted, so no figure of the whole checkpoint is given",
                        field="vision_config", value=kind, source=origin)
    from specsheet.model.vision import VisionTower  # imported by a wrapper's file only

    c = HFConfig({**vision, "model_type": kind}, where, known[kind])
    top = HFConfig(data, origin, _WRAPPER_DEFAULTS.get(str(wrapper), {}))
    encoder = _ENCODER_OF[kind]
    if encoder in ("qwen2_5_vl", "qwen3_vl"):
        qwen3 = encoder == "qwen3_vl"
        return VisionTower(
            encoder=encoder, projector=encoder, layers=c.integer("depth"),  # type: ignore[arg-type]
            width=c.integer("hidden_size"), heads=c.integer("num_heads"),
            mlp_width=c.integer("intermediate_size"), patch=c.integer("patch_size"),
            image_size=0, out_width=c.integer("out_hidden_size"),
            channels=c.integer(("in_channels", "in_chans")),
            temporal_patch=c.integer("temporal_patch_size"),
            merge=c.integer("spatial_merge_size"),
            position_rows=c.integer("num_position_embeddings") if qwen3 else 0,
            full_attention_layers=() if qwen3 else tuple(c.integers("fullatt_block_indexes")),
            window=0 if qwen3 else c.integer("window_size"),
            deepstack_layers=tuple(c.integers("deepstack_visual_indexes")) if qwen3 else ())
    common: dict[str, Any] = {
        "layers": c.integer("num_hidden_layers"), "width": c.integer("hidden_size"),
        "heads": c.integer("num_attention_heads"), "mlp_width": c.integer("intermediate_size"),
        "patch": c.integer("patch_size"), "image_size": c.integer("image_size"),
        "channels": c.integer("num_channels"), "out_width": d_model}
    if encoder == "llama4":
        return VisionTower(encoder="llama4", projector="llama4", merge=_ratio_merge(c),
                           projector_width=c.integer("vision_output_dim"),
                           adapter_in=c.integer("projector_input_dim"),
                           adapter_out=c.integer("projector_output_dim"), **common)
    if encoder == "pixtral":
        return VisionTower(encoder="pixtral", projector="mistral3",
                           head_dim=c.integer("head_dim"),
                           feature_layer=_feature_layer(top, common["layers"]),
                           merge=top.integer("spatial_merge_size"),
                           projector_bias=top.flag("multimodal_projector_bias"), **common)
    if wrapper == "gemma3":
        return VisionTower(encoder="siglip", projector="gemma3", head=c.flag("vision_use_head"),
                           tokens_per_image=top.integer("mm_tokens_per_image"), **common)
    # llava: CLIP or SigLIP, then two Linears
    return VisionTower(encoder=encoder, projector="llava",  # type: ignore[arg-type]
                       head=encoder == "siglip" and c.flag("vision_use_head"),
                       projector_bias=top.flag("multimodal_projector_bias"),
                       feature_layer=_feature_layer(top, common["layers"]), **common)
