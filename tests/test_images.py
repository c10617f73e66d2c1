"""Image tokens against transformers' processors (tests/data/images/tokens.json, written by
scripts/make_image_tokens.py with the transformers version it names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specsheet.errors import SpecError
from specsheet.model.images import (
    ImageProcessor,
    PanAndScan,
    image_tokens,
    max_embeddings,
)

GOLDEN: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent / "data" / "images" / "tokens.json").read_text())


def published(family: str, pan_and_scan: bool = False) -> ImageProcessor:
    """The processor as its published files set it (the golden's own record of them)."""
    pub = GOLDEN["published"][family]
    image, proc = pub["image_processor"], pub["processor"]
    if family == "gemma3":
        return ImageProcessor("gemma3", patch_size=14, image_size=image["size"]["height"],
                              soft_tokens=proc["image_seq_length"],
                              pan_and_scan=PanAndScan() if pan_and_scan else None)
    if family == "qwen2_vl":
        return ImageProcessor("qwen2_vl", patch_size=image["patch_size"],
                              merge_size=image["merge_size"], min_pixels=image["min_pixels"],
                              max_pixels=image["max_pixels"])
    return ImageProcessor("pixtral", patch_size=proc["patch_size"],
                          merge_size=proc["spatial_merge_size"],
                          image_size=image["size"]["longest_edge"])


CASES = [pytest.param(c, id=f"{c['family']}-{c['width']}x{c['height']}"
                      f"{'-pan-and-scan' if c['pan_and_scan'] else ''}")
         for c in GOLDEN["cases"]]

# the ids that are the image's placeholders; the others are the special tokens around them
PLACEHOLDER = "image_token"


def test_goldens_name_their_transformers_and_cover_three_families_at_three_sizes() -> None:
    assert GOLDEN["transformers"] == "5.24.0"
    for family in ("gemma3", "qwen2_vl", "pixtral"):
        sizes = {(c["width"], c["height"]) for c in GOLDEN["cases"] if c["family"] == family}
        assert len(sizes) >= 3


@pytest.mark.parametrize("case", CASES)
def test_image_tokens_equal_the_processors(case: dict[str, Any]) -> None:
    counts = case["counts"]
    got = image_tokens(published(case["family"], case["pan_and_scan"]), case["width"],
                       case["height"])
    special = sum(v for k, v in counts.items() if k not in (PLACEHOLDER, "total", "crops"))
    assert (got.embeddings, got.special) == (counts[PLACEHOLDER], special)
    if case["family"] == "gemma3":
        assert got.crops == counts["crops"]
    else:  # the prompt held the image alone: every id is the image's
        assert got.tokens == counts["total"]


def test_pan_and_scan_adds_whole_images_of_soft_tokens() -> None:
    # 3000 x 1000: round(3) = 3 crops of 1000 x 1000, each 256 soft tokens and its own
    # begin and end, beside the whole image (the goldens hold 1,024 soft tokens)
    got = image_tokens(published("gemma3", True), 3000, 1000)
    assert (got.crops, got.embeddings, got.special, got.tokens) == (3, 1024, 8, 1032)


def test_qwen_at_the_processors_limits() -> None:
    qwen = published("qwen2_vl")
    # 100 x 40 rounds to 112 x 28 = 3,136 pixels, exactly min_pixels (not under it): kept
    assert image_tokens(qwen, 100, 40)[2:4] == (112, 28)
    # 50 x 40 rounds to 56 x 28, under min_pixels: scaled up by sqrt(3136 / 2000), ceilings
    assert image_tokens(qwen, 50, 40)[2:4] == (84, 56)
    # vLLM's largest image: a square of max_pixels 12,845,056 = 3,584^2: 256^2 / 4 embeddings
    assert max_embeddings(qwen) == 16384
    with pytest.raises(SpecError, match="aspect ratio of 201"):
        image_tokens(qwen, 201 * 28, 28)


def test_pixtral_largest_image() -> None:
    # Mistral Small 3.1: 1,540 / 28 = 55 rows of 55 [IMG] and a break: 3,080 tokens
    pix = published("pixtral")
    got = image_tokens(pix, 1540, 1540)
    assert (got.embeddings, got.special, got.tokens) == (3025, 55, 3080)
    assert max_embeddings(pix) == 3025
    with pytest.raises(SpecError, match="height scales to 0 pixels"):
        image_tokens(pix, 100_000, 1)


@pytest.mark.parametrize("size", [(0, 10), (10, -1), (True, 10)])
def test_sizes_that_are_not_pixels(size: tuple[Any, Any]) -> None:
    with pytest.raises(SpecError, match="expected a positive number of pixels"):
        image_tokens(published("gemma3"), *size)


def test_more_pixels_than_pillow_opens() -> None:
    with pytest.raises(SpecError, match="more than Pillow opens"):
        image_tokens(published("gemma3"), 20_000, 10_000)


ENCODER: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent / "data" / "images" / "encoder_flops.json").read_text())


@pytest.mark.parametrize("case", ENCODER["cases"],
                         ids=lambda c: f"{c['config']}-{c['width']}x{c['height']}")
def test_encoder_flops_equal_flop_counter_mode(case: dict[str, Any]) -> None:
    """The vision encoder and projector on one image, against FlopCounterMode around
    transformers' own modules (scripts/make_image_tokens.py --encoder); the sizes are ones the
    processor produces, so the image is taken as it is."""
    from specsheet.model.images import encoder_flops
    from specsheet.sources.resolve import load_file

    model = load_file(Path(__file__).resolve().parent / "data" / case["config"])
    assert model.images is not None and model.spec.vision is not None
    image = image_tokens(model.images, case["width"], case["height"])
    assert (image.resized_width, image.resized_height) == (case["width"], case["height"])
    assert encoder_flops(model.spec.vision, model.images, image) == case["flops"]


def test_encoder_flops_of_pan_and_scan_crops_are_whole_images() -> None:
    from specsheet.model.images import encoder_flops
    from specsheet.sources.resolve import load_file

    model = load_file(Path(__file__).resolve().parent / "data" / "gemma-3-4b.json")
    assert model.images is not None and model.spec.vision is not None
    one = ENCODER["cases"][0]["flops"]  # Gemma 3 4B at 896 x 896
    cropped = model.images._replace(pan_and_scan=PanAndScan())
    image = image_tokens(cropped, 3000, 1000)
    assert encoder_flops(model.spec.vision, cropped, image) == 4 * one
