"""Goldens for image tokens (tests/data/images/tokens.json), from transformers' own processors.

A developer tool, run by hand in the scratch virtual environment that computes the other
goldens (torch, transformers and Pillow never become dependencies of specsheet or its tests):

    /tmp/hf/bin/pip install pillow
    /tmp/hf/bin/python scripts/make_image_tokens.py

Each family's real processor class is built locally (no network) from the values its published
``preprocessor_config.json`` and ``processor_config.json`` hold (written out in PUBLISHED below,
with the repository they come from), with a word-level tokenizer whose vocabulary holds the
special tokens the processor inserts (the real tokenizer is not needed: the processor writes
the image's tokens as special-token strings, each one id). It is run on a blank RGB image of
each size in SIZES, and the ids of its ``input_ids`` are counted: the image's placeholder token
(the positions the vision encoder's output fills) and the special tokens around it. The prompt
is the placeholder alone, so every id counted belongs to the image. Pillow's backend of each
image processor is used (``*ImageProcessorPil``): its resizing arithmetic is the same code as
the torchvision backend's, and torchvision is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import transformers
from PIL import Image
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit
from transformers import PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "images" / "tokens.json"

# (width, height) in pixels: landscape, portrait, square, tiny, and one past each processor's
# largest input
SIZES = ((640, 480), (1280, 720), (896, 896), (480, 1000), (3000, 1000), (100, 40),
         (4000, 3000))

# the published processor settings, as each repository's files write them
PUBLISHED: dict[str, dict[str, Any]] = {
    "gemma3": {
        "repo": "google/gemma-3-4b-it",
        # preprocessor_config.json (its do_pan_and_scan and pan_and_scan_* are null: the
        # processor's images_kwargs defaults apply)
        "image_processor": {"size": {"height": 896, "width": 896}, "resample": 2,
                            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
        "processor": {"image_seq_length": 256},  # processor_config.json
        "special": {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                    "image_token": "<image_soft_token>"},
    },
    "qwen2_vl": {
        "repo": "Qwen/Qwen2.5-VL-7B-Instruct",
        "image_processor": {"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14,
                            "temporal_patch_size": 2, "merge_size": 2},
        "processor": {},
        "special": {"image_token": "<|image_pad|>", "vision_start_token": "<|vision_start|>",
                    "vision_end_token": "<|vision_end|>", "video_token": "<|video_pad|>"},
    },
    "pixtral": {
        "repo": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
        "image_processor": {"size": {"longest_edge": 1540},
                            "patch_size": {"height": 14, "width": 14}, "resample": 3},
        "processor": {"patch_size": 14, "spatial_merge_size": 2},  # processor_config.json
        "special": {"image_token": "[IMG]", "image_break_token": "[IMG_BREAK]",
                    "image_end_token": "[IMG_END]"},
    },
}


def tokenizer(special: dict[str, str]) -> PreTrainedTokenizerFast:
    """A word-level tokenizer that knows the special tokens (and nothing else but <unk>)."""
    vocab = {"<unk>": 0, **{token: i + 1 for i, token in enumerate(special.values())}}
    model = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>",
                                  extra_special_tokens=dict(special))
    tok.add_special_tokens({"additional_special_tokens": list(special.values())})
    return tok


def processor(family: str, pan_and_scan: bool = False) -> tuple[Any, str, dict[str, int]]:
    """The family's processor, the prompt that holds one image, and the ids to count."""
    pub = PUBLISHED[family]
    tok = tokenizer(pub["special"])
    ids = {name: tok.convert_tokens_to_ids(token) for name, token in pub["special"].items()}
    if family == "gemma3":
        from transformers.models.gemma3.image_processing_pil_gemma3 import (
            Gemma3ImageProcessorPil,
        )

        proc = transformers.Gemma3Processor(
            image_processor=Gemma3ImageProcessorPil(**pub["image_processor"]),
            tokenizer=tok, **pub["processor"])
        return proc, pub["special"]["boi_token"], ids
    if family == "qwen2_vl":
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
            Qwen2VLImageProcessorPil,
        )

        # its video processor needs torchvision and is never read on the image path: the
        # argument check that would refuse None is skipped for it alone
        from transformers.processing_utils import ProcessorMixin

        check = ProcessorMixin.check_argument_for_proper_class

        def lenient(self: Any, name: str, arg: Any) -> Any:
            return None if name == "video_processor" and arg is None else check(self, name, arg)

        ProcessorMixin.check_argument_for_proper_class = lenient  # type: ignore[method-assign]
        proc = transformers.Qwen2_5_VLProcessor(
            image_processor=Qwen2VLImageProcessorPil(**pub["image_processor"]),
            tokenizer=tok, video_processor=None)
        prompt = "<|vision_start|><|image_pad|><|vision_end|>"
        return proc, prompt, ids
    # the module's own class (transformers' lazy top level swaps in a placeholder that asks for
    # torchvision); the processor imports one function from the torchvision image processor's
    # module, get_resize_output_image_size, whose code the Pillow module holds line for line,
    # so that module stands in for it
    import sys
    import types

    from transformers.models.pixtral import image_processing_pil_pixtral as pil

    stand_in = types.ModuleType("transformers.models.pixtral.image_processing_pixtral")
    stand_in.get_resize_output_image_size = pil.get_resize_output_image_size  # type: ignore
    sys.modules.setdefault(stand_in.__name__, stand_in)
    from transformers.models.pixtral.processing_pixtral import PixtralProcessor

    proc = PixtralProcessor(
        image_processor=pil.PixtralImageProcessorPil(**pub["image_processor"]), tokenizer=tok,
        **pub["processor"])
    return proc, "[IMG]", ids


def count(family: str, size: tuple[int, int], pan_and_scan: bool = False) -> dict[str, int]:
    proc, prompt, ids = processor(family, pan_and_scan)
    image = Image.new("RGB", size)
    # pan-and-scan as a request turns it on (vLLM's mm_processor_kwargs), its other settings
    # the processor's defaults (Gemma3Processor.images_kwargs)
    extra = {"do_pan_and_scan": True} if pan_and_scan else {}
    out = proc(images=[image], text=prompt, **extra)
    input_ids = list(out["input_ids"][0])
    counted = {name: input_ids.count(i) for name, i in ids.items()}
    counted.pop("video_token", None)
    counted["total"] = len(input_ids)
    if counted["total"] != sum(v for k, v in counted.items() if k != "total") and not (
            family == "gemma3" and pan_and_scan):
        raise SystemExit(f"{family} {size}: ids other than the image's: {input_ids[:20]}")
    if family == "gemma3":
        # the crops beside the whole image: one begin-of-image token each (the processor drops
        # its num_crops output, an unused input of the model)
        counted["crops"] = counted["boi_token"] - 1
    return counted


def main() -> None:
    import PIL
    import tokenizers

    cases = []
    for family in PUBLISHED:
        for size in SIZES:
            cases.append({"family": family, "width": size[0], "height": size[1],
                          "pan_and_scan": False, "counts": count(family, size)})
        if family == "gemma3":
            for size in SIZES:
                cases.append({"family": family, "width": size[0], "height": size[1],
                              "pan_and_scan": True, "counts": count(family, size, True)})
    document = {
        "about": "Tokens one image takes, counted in the input_ids of transformers' processors "
                 "(scripts/make_image_tokens.py); total is every id of the prompt (the image's "
                 "placeholder alone), and with Gemma 3's pan-and-scan it also holds the words "
                 "of the sentence the processor writes around the crops, which specsheet does "
                 "not count",
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "pillow": PIL.__version__,
        "published": {family: {"repo": pub["repo"], "image_processor": pub["image_processor"],
                               "processor": pub["processor"]}
                      for family, pub in PUBLISHED.items()},
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases, transformers {transformers.__version__})")




# ---- the vision encoder's FLOPs (``--encoder``) -------------------------------------------------

ENCODER_OUT = ROOT / "tests" / "data" / "images" / "encoder_flops.json"
# config -> the processed image sizes (height, width) its encoder is run at: each a size the
# processor produces (multiples of 28 for Qwen and Mistral 3; Gemma 3's one 896 x 896)
ENCODER_CASES = {
    "gemma-3-4b.json": [(896, 896)],
    "multimodal/mistral-small-3.1-24b.json": [(784, 1036), (1540, 1540), (56, 112)],
    "multimodal/qwen2.5-vl-7b.json": [(56, 112), (280, 280), (168, 448), (476, 644)],
}


def encoder_flops(config_path: str, height: int, width: int) -> int:
    """FlopCounterMode's count of ``get_image_features`` (the encoder and the projector) on
    one image of ``height`` x ``width`` as the processor feeds it, on the meta device."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoConfig, AutoModelForImageTextToText

    data = json.loads((ROOT / "tests" / "data" / config_path).read_text())
    config = AutoConfig.for_model(**data)
    vision = config.vision_config
    kwargs: dict[str, Any] = {}
    if data["model_type"] in ("qwen2_5_vl", "qwen2_vl"):
        # Qwen's encoder reads the grid's values (its windows, cu_seqlens), which meta tensors
        # have none of: the vision model alone is built on the CPU, its memory left
        # uninitialised (to_empty: the values do not change the FLOPs), in float32, with eager
        # attention (FlopCounterMode has no formula for the CPU's fused attention kernel and
        # would count none)
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
            Qwen2_5_VisionTransformerPretrainedModel,
        )

        with torch.device("meta"):
            visual = Qwen2_5_VisionTransformerPretrainedModel._from_config(
                vision, attn_implementation="eager")
        visual = visual.to_empty(device="cpu").float()
        patch, temporal = vision.patch_size, vision.temporal_patch_size
        grid = torch.tensor([(1, height // patch, width // patch)])
        pixels = torch.zeros(int(grid.prod()), 3 * temporal * patch * patch)
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            visual(pixels, grid_thw=grid)  # get_image_features: this, then a split
        return int(counter.get_total_flops())
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    pixels = torch.zeros(1, 3, height, width, dtype=torch.bfloat16, device="meta")
    if data["model_type"] == "mistral3":
        # as a list: the encoder slices by its values, which a meta tensor has none of
        kwargs["image_sizes"] = [[height, width]]
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        if data["model_type"] == "mistral3":
            # get_image_features' two calls (vision_feature_layer -1), without the split of
            # its output that follows them, which reads values a meta tensor has none of
            inner = model.model
            out = inner.vision_tower(pixels, image_sizes=kwargs["image_sizes"],
                                     output_hidden_states=True, return_dict=True)
            inner.multi_modal_projector(out.hidden_states[-1].squeeze(0),
                                        kwargs["image_sizes"])
        else:
            model.model.get_image_features(pixels, **kwargs)
    return int(counter.get_total_flops())


def encoder_main() -> None:
    import torch

    cases = []
    for config_path, sizes in ENCODER_CASES.items():
        for height, width in sizes:
            flops = encoder_flops(config_path, height, width)
            print(config_path, height, width, flops)
            cases.append({"config": config_path, "height": height, "width": width,
                          "flops": flops})
    document = {
        "about": "FLOPs of get_image_features (vision encoder and projector) on one image of "
                 "height x width as the processor feeds it: torch.utils.flop_counter."
                 "FlopCounterMode on the meta device (scripts/make_image_tokens.py --encoder)",
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "cases": cases,
    }
    ENCODER_OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {ENCODER_OUT}")


if __name__ == "__main__":
    import sys

    encoder_main() if sys.argv[1:2] == ["--encoder"] else main()
