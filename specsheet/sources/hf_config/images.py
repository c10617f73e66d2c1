"""A multimodal config.json's image processor: the values model/images.py counts tokens with.

config.json holds the encoder's patch, merge and native size (``vision_config``, and Gemma 3's
``mm_tokens_per_image``); what it lacks is the preprocessor's, taken as the published
``preprocessor_config.json`` writes it, or where that writes null as transformers' processor
class defaults it. Each value's origin is kept in ``ImageProcessor.sources``:

- gemma3: patch_size, image_size from vision_config (absent: SiglipVisionConfig's 16 and 224,
  siglip/configuration_siglip.py), mm_tokens_per_image (absent: Gemma3Config's 256); pan-and-scan
  is off, as Gemma3Processor.images_kwargs sets it (google/gemma-3-*'s preprocessor_config.json
  writes do_pan_and_scan null).
- qwen2_5_vl, qwen2_vl: patch_size and spatial_merge_size from vision_config (absent: 14 and 2,
  Qwen2_5_VLVisionConfig / Qwen2VLVisionConfig); min_pixels 3,136 and max_pixels 12,845,056 from
  the published preprocessor_config.json of Qwen/Qwen2.5-VL-7B-Instruct and
  Qwen/Qwen2-VL-7B-Instruct (transformers' Qwen2VLImageProcessor would default max_pixels to
  1,003,520, but the repositories set it).
- mistral3: patch_size and image_size from vision_config (absent: Mistral3Config's 14 and
  1,540), spatial_merge_size from the top level (absent: 2); Pixtral's processor takes the
  longest edge from preprocessor_config.json's size.longest_edge, which
  mistralai/Mistral-Small-3.1-24B-Instruct-2503 sets to image_size (1,540).
- llava with a pixtral vision_config (mistral-community/pixtral-12b): as mistral3, no merge
  (PixtralVisionConfig's defaults 16 and 1,024 where absent).

Any other config with a vision_config has a tower whose tokens specsheet does not count yet:
its processor is named by the model_type, and counting its images is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specsheet.errors import quoted
from specsheet.sources.hf_config.reader import key_error

if TYPE_CHECKING:
    from specsheet.model.images import ImageProcessor

QWEN_PREPROCESSOR = "Qwen/Qwen2.5-VL-7B-Instruct's preprocessor_config.json"


def _int(config: Mapping[str, Any], key: str, default: int, where: str, origin: str,
         sources: list[tuple[str, str]], name: str, default_from: str) -> int:
    value = config.get(key)
    if value is None:
        sources.append((name, f"{default_from} (absent from config.json)"))
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise key_error(f"{where}{key}", f"expected a positive integer, got {quoted(value)}",
                        source=origin, value=value)
    sources.append((name, f"config.json {where}{key}"))
    return value


def image_processor_of(data: Mapping[str, Any], origin: str) -> ImageProcessor | None:
    """The image processor of a config.json with a ``vision_config`` (None without one)."""
    vision = data.get("vision_config")
    if not isinstance(vision, dict):
        return None
    from specsheet.model.images import ImageProcessor  # imported by a multimodal file only

    model_type = str(data.get("model_type"))
    sources: list[tuple[str, str]] = []

    def get(config: Mapping[str, Any], key: str, default: int, default_from: str,
            name: str | None = None) -> int:
        where = "vision_config." if config is vision else ""
        return _int(config, key, default, where, origin, sources, name or key, default_from)

    if model_type == "gemma3":
        patch = get(vision, "patch_size", 16, "SiglipVisionConfig's default")
        side = get(vision, "image_size", 224, "SiglipVisionConfig's default")
        soft = get(data, "mm_tokens_per_image", 256, "Gemma3Config's default", "soft_tokens")
        sources.append(("pan_and_scan", "off: Gemma3Processor.images_kwargs (the published "
                        "preprocessor_config.json writes do_pan_and_scan null)"))
        return ImageProcessor("gemma3", patch_size=patch, image_size=side, soft_tokens=soft,
                              sources=tuple(sources))
    if model_type in ("qwen2_5_vl", "qwen2_vl"):
        patch = get(vision, "patch_size", 14, "the vision config's default")
        merge = get(vision, "spatial_merge_size", 2, "the vision config's default",
                    "merge_size")
        sources += [("min_pixels", QWEN_PREPROCESSOR), ("max_pixels", QWEN_PREPROCESSOR)]
        return ImageProcessor("qwen2_vl", patch_size=patch, merge_size=merge,
                              min_pixels=3136, max_pixels=12_845_056, sources=tuple(sources))
    pixtral = model_type == "llava" and vision.get("model_type") == "pixtral"
    if model_type == "mistral3" or pixtral:
        owner = "PixtralVisionConfig's default" if pixtral else "Mistral3Config's default"
        patch = get(vision, "patch_size", 16 if pixtral else 14, owner)
        side = get(vision, "image_size", 1024 if pixtral else 1540, owner)
        merge = 1
        if not pixtral:
            merge = get(data, "spatial_merge_size", 2, "Mistral3Config's default",
                        "merge_size")
        sources.append(("longest_edge", "vision_config.image_size (preprocessor_config.json's "
                        "size.longest_edge is the same)"))
        return ImageProcessor("pixtral", patch_size=patch, merge_size=merge, image_size=side,
                              sources=tuple(sources))
    return ImageProcessor(model_type, patch_size=0)
