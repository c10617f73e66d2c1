"""Image tokens: the positions one image takes in a request, as each family's processor counts
them.

A multimodal model's processor turns an image into placeholder tokens, which the vision
encoder's output replaces (its *embeddings*, one per placeholder), and special tokens around
them (begin and end of the image, a break after each row). Both sit in the prompt: they take KV
cache and prefill like text. The formulas follow transformers 5.24.0 (the files named on each
function, under ``src/transformers/models/``); tests/data/images/tokens.json holds the counts
transformers' own processors give (scripts/make_image_tokens.py) and tests/test_images.py holds
these functions to them.

Sizes are (width, height) in pixels, as a person writes them; the processors take (height,
width). The resizing arithmetic is the processors' own, floating-point where theirs is (Qwen2-VL's
``smart_resize`` rounds half to even and takes a square root, Pixtral divides by a float
ratio), so that the sizes come out as they do: these are exact emulations, not estimates.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, get_args

from specsheet.compiled import NamedTuple
from specsheet.errors import SpecError, quoted

if TYPE_CHECKING:
    from specsheet.model.vision import VisionTower

ImageFamily = Literal["gemma3", "qwen2_vl", "pixtral"]
IMAGE_FAMILIES: tuple[str, ...] = get_args(ImageFamily)

# Pillow refuses to open an image of more than twice Image.MAX_IMAGE_PIXELS (89,478,485) pixels
# (PIL/Image.py, _decompression_bomb_check: DecompressionBombError), so no processor sees one
MAX_IMAGE_PIXELS = 2 * 89_478_485
# Qwen2-VL's smart_resize refuses an aspect ratio over 200
MAX_ASPECT_RATIO = 200


class PanAndScan(NamedTuple):
    """Gemma 3's pan-and-scan: crops of a long image beside the whole one. The defaults are
    Gemma3Processor.images_kwargs (gemma3/processing_gemma3.py), which apply where
    preprocessor_config.json writes null, as Google's does."""

    min_crop_size: int = 256  # pan_and_scan_min_crop_size: the smallest side of a crop
    max_crops: int = 4  # pan_and_scan_max_num_crops
    min_ratio: float = 1.2  # pan_and_scan_min_ratio_to_activate: the long side / the short


class ImageProcessor(NamedTuple):
    """What a model's processor needs to count an image's tokens, and where each value came
    from (``sources``: parameter -> the config key or the processor default it was read as).

    ``family`` picks the formula: gemma3 (a fixed number of soft tokens per image or crop),
    qwen2_vl (Qwen2-VL and Qwen2.5-VL: patches of a resized image, merged 2 x 2), pixtral
    (Pixtral and Mistral 3: a row of merged patches and a break per row)."""

    family: str  # an IMAGE_FAMILIES name
    patch_size: int  # the vision encoder's patch side, in pixels
    merge_size: int = 1  # patches merged into one token along each side (Qwen, Mistral 3: 2)
    image_size: int = 0  # the encoder's input side (Gemma 3, Pixtral's largest); 0: any
    soft_tokens: int = 0  # gemma3: mm_tokens_per_image, the embeddings of one image or crop
    min_pixels: int = 0  # qwen2_vl: the fewest pixels smart_resize leaves
    max_pixels: int = 0  # qwen2_vl: the most pixels smart_resize leaves
    pan_and_scan: PanAndScan | None = None  # gemma3 with do_pan_and_scan (off by default)
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def native(self) -> tuple[int, int] | None:
        """The size an image is taken at when none is given: the encoder's square input (Gemma
        3, Pixtral), or None where the processor has no single size (Qwen2-VL resizes any)."""
        return (self.image_size, self.image_size) if self.image_size else None


class ImageTokens(NamedTuple):
    """The tokens of one image of ``width`` x ``height`` pixels."""

    width: int
    height: int
    resized_width: int  # the image (each crop) as the encoder takes it
    resized_height: int
    crops: int  # Gemma 3's pan-and-scan crops beside the whole image (0: none)
    patches: int  # the encoder's input patches, all crops together
    embeddings: int  # placeholder tokens the encoder's output fills (vLLM's encoder embeds)
    special: int  # the tokens around them: begin and end of image, row breaks

    @property
    def tokens(self) -> int:
        """Every token of the image in the prompt."""
        return self.embeddings + self.special


def check_size(width: object, height: object) -> tuple[int, int]:
    """A size in pixels, both sides positive integers, no larger than Pillow opens."""
    for value in (width, height):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError(f"expected a positive number of pixels, got {quoted(value)}",
                            field="image_size", value=value)
    assert isinstance(width, int) and isinstance(height, int)
    if width * height > MAX_IMAGE_PIXELS:
        raise SpecError(f"{width:,} x {height:,} is {width * height:,} pixels, more than "
                        f"Pillow opens ({MAX_IMAGE_PIXELS:,}, twice Image.MAX_IMAGE_PIXELS); "
                        "no processor sees such an image", field="image_size",
                        value=f"{width}x{height}")
    return width, height


def image_tokens(processor: ImageProcessor, width: int, height: int) -> ImageTokens:
    """The tokens of one ``width`` x ``height`` image under ``processor``'s family."""
    width, height = check_size(width, height)
    if processor.family == "gemma3":
        return gemma3_tokens(processor, width, height)
    if processor.family == "qwen2_vl":
        return qwen2_vl_tokens(processor, width, height)
    if processor.family == "pixtral":
        return pixtral_tokens(processor, width, height)
    raise SpecError(f"specsheet does not count the image tokens of {processor.family}'s "
                    f"processor yet (it counts {', '.join(IMAGE_FAMILIES)})", field="images",
                    value=processor.family)


def pan_and_scan_crops(settings: PanAndScan, width: int, height: int) -> int:
    """The crops Gemma 3's pan-and-scan cuts a ``width`` x ``height`` image into (0: none).

    gemma3/image_processing_gemma3.py, ``pan_and_scan_batched`` (the Pillow backend's
    ``pan_and_scan`` is the same): along the long side, n = round-half-up(long / short),
    at most floor(long / min_crop_size), then clamped to [2, max_crops]; none when the ratio is
    under min_ratio or a crop's short side, ceil(side / n), is under min_crop_size."""
    long, short = (width, height) if width >= height else (height, width)
    if long / short < settings.min_ratio:  # the processor's float comparison
        return 0
    n = min((2 * long + short) // (2 * short), long // settings.min_crop_size)
    n = min(settings.max_crops, max(2, n))
    crop_long = -(-long // n)
    if min(crop_long, short) < settings.min_crop_size:
        return 0
    return n


def gemma3_tokens(processor: ImageProcessor, width: int, height: int) -> ImageTokens:
    """Gemma 3: every image (and every pan-and-scan crop) is resized to image_size x image_size
    and becomes ``mm_tokens_per_image`` soft tokens between <start_of_image> and <end_of_image>.

    gemma3/processing_gemma3.py: ``full_image_sequence`` is "\\n\\n" + boi + 256 x
    <image_soft_token> + eoi + "\\n\\n", once for the image and once per crop. The two "\\n\\n"
    pieces are text, one token each in Gemma 3's tokenizer unless they merge with newlines the
    prompt puts beside them, and pan-and-scan adds a sentence ("Here is the original image ...
    and here are some crops to help you see better"); specsheet counts neither (they depend on
    the text around the image), only the soft tokens and the two special tokens of each."""
    crops = (pan_and_scan_crops(processor.pan_and_scan, width, height)
             if processor.pan_and_scan else 0)
    pieces = 1 + crops
    side = processor.image_size
    return ImageTokens(width, height, side, side, crops,
                       pieces * (side // processor.patch_size) ** 2,
                       pieces * processor.soft_tokens, 2 * pieces)


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int
                 ) -> tuple[int, int]:
    """Qwen2-VL's resize: both sides multiples of ``factor`` (patch x merge, 28), the area
    within [min_pixels, max_pixels], the aspect ratio kept as nearly as may be. Returns
    (height, width) as the processor does.

    qwen2_vl/image_processing_qwen2_vl.py, ``smart_resize``, line for line (Python's round()
    rounds half to even, as the processor's does)."""
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise SpecError(f"an aspect ratio of {max(height, width) / min(height, width):.4g}, "
                        f"over the {MAX_ASPECT_RATIO} Qwen2-VL's processor accepts",
                        field="image_size", value=f"{width}x{height}")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def qwen2_vl_tokens(processor: ImageProcessor, width: int, height: int) -> ImageTokens:
    """Qwen2-VL and Qwen2.5-VL: the image is resized by ``smart_resize`` to multiples of
    patch x merge (28), cut into (h / 14) x (w / 14) patches (one temporal patch: an image is
    its own two frames), and each 2 x 2 of them merges into one <|image_pad|> token, between
    <|vision_start|> and <|vision_end|>: (h / 14)(w / 14) / 4 + 2 tokens.

    qwen2_vl/image_processing_qwen2_vl.py (``smart_resize``, ``image_grid_thw``),
    qwen2_5_vl/processing_qwen2_5_vl.py (``replace_image_token``: grid_thw.prod() // merge^2
    pad tokens; vision_start and vision_end come with the chat template's placeholder)."""
    patch, merge = processor.patch_size, processor.merge_size
    h, w = smart_resize(height, width, patch * merge, processor.min_pixels,
                        processor.max_pixels)
    patches = (h // patch) * (w // patch)
    return ImageTokens(width, height, w, h, 0, patches, patches // merge**2, 2)


def pixtral_resize(height: int, width: int, longest_edge: int, patch: int) -> tuple[int, int]:
    """Pixtral's resize: scaled down (never up) to fit ``longest_edge``, each side flooring,
    then rounded up to a multiple of ``patch`` (patch x spatial merge). Returns (height, width).

    pixtral/image_processing_pixtral.py, ``get_resize_output_image_size`` and
    ``_num_image_tokens``."""
    ratio = max(height / longest_edge, width / longest_edge)
    if ratio > 1:
        height = int(math.floor(height / ratio))
        width = int(math.floor(width / ratio))
    if height < 1 or width < 1:
        raise SpecError(f"{'height' if height < 1 else 'width'} scales to 0 pixels when the "
                        f"longest side is brought to {longest_edge:,}; the processor cannot "
                        "resize to that", field="image_size")
    rows = (height - 1) // patch + 1
    cols = (width - 1) // patch + 1
    return rows * patch, cols * patch


def pixtral_tokens(processor: ImageProcessor, width: int, height: int) -> ImageTokens:
    """Pixtral and Mistral 3: the image, resized by ``pixtral_resize`` to at most image_size on
    its longest side, becomes rows x cols merged patches of (patch x merge) pixels: each row is
    cols [IMG] tokens and an [IMG_BREAK], the last row's break an [IMG_END]: rows x (cols + 1)
    tokens.

    pixtral/processing_pixtral.py, ``replace_image_token`` (the image processor is given patch
    x spatial_merge_size as its patch, ``_process_images``)."""
    patch = processor.patch_size * processor.merge_size
    h, w = pixtral_resize(height, width, processor.image_size, patch)
    rows, cols = h // patch, w // patch
    return ImageTokens(width, height, w, h, 0,
                       (h // processor.patch_size) * (w // processor.patch_size),
                       rows * cols, rows)


def max_embeddings(processor: ImageProcessor) -> int:
    """The most embeddings one image gives (vLLM's max_tokens_per_mm_item, which the encoder
    cache is never smaller than): the largest image each processor produces, as vLLM's
    ``get_image_size_with_most_features`` takes it. Gemma 3 (pan-and-scan off): the soft tokens
    of one image; Qwen2-VL: a square of max_pixels (smart_resize of a 9,999,999-pixel square);
    Pixtral: a square of image_size."""
    if processor.family == "gemma3":
        return processor.soft_tokens
    side = 9_999_999 if processor.family == "qwen2_vl" else processor.image_size
    if processor.family == "qwen2_vl":
        patch, merge = processor.patch_size, processor.merge_size
        h, w = smart_resize(side, side, patch * merge, processor.min_pixels,
                            processor.max_pixels)
        return (h // patch) * (w // patch) // merge**2
    return pixtral_tokens(processor, side, side).embeddings


class Images(NamedTuple):
    """The images of one request: ``number`` of them, each ``each`` (one size for all)."""

    number: int  # images in the request
    each: ImageTokens
    processor: ImageProcessor
    size_given: bool  # the size was given (else the processor's native size)
    # the vision encoder's and projector's FLOPs for one image (None: not counted for this
    # encoder, or no tower described)
    each_encoder_flops: int | None = None

    @property
    def encoder_flops(self) -> int | None:
        """The encoder's FLOPs for every image of the request (None: not counted)."""
        each = self.each_encoder_flops
        return None if each is None else self.number * each

    @property
    def tokens(self) -> int:
        """Every image token of the request: number x each image's tokens."""
        return self.number * self.each.tokens

    @property
    def embeddings(self) -> int:
        """The encoder's embeddings of the request (what vLLM's encoder cache holds)."""
        return self.number * self.each.embeddings


def request_images(processor: ImageProcessor | None, model: str, count: object,
                   size: tuple[int, int] | None, tower: VisionTower | None = None) -> Images:
    """``count`` images of ``size`` (width, height; default: the processor's native size) in a
    request to ``model``. Refused: a count that is not a positive integer, a model without a
    vision tower, a processor specsheet does not count, a size the processor refuses, and no
    size where the processor has no native one (Qwen2-VL)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SpecError(f"expected a positive number of images, got {quoted(count)}",
                        field="images", value=count)
    if processor is None:
        raise SpecError(f"{model} has no vision tower: it takes text only", field="images",
                        value=count)
    if processor.family not in IMAGE_FAMILIES:
        image_tokens(processor, 1, 1)  # refuses, naming the processor
    given = size is not None
    if size is None:
        size = processor.native
        if size is None:
            raise SpecError(f"{model}'s processor ({processor.family}) resizes any image and "
                            "has no native size: give the images' size", field="image_size")
    each = image_tokens(processor, *size)
    flops = encoder_flops(tower, processor, each) if tower is not None else None
    return Images(count, each, processor, given, flops)


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` in pixels (``1024x768``) as (width, height)."""
    parts = text.strip().lower().split("x")
    if len(parts) == 2 and all(p.strip().isascii() and p.strip().isdigit()
                               and len(p.strip()) <= 12 for p in parts):
        width, height = int(parts[0]), int(parts[1])
        return check_size(width, height)
    raise SpecError(f"expected WIDTHxHEIGHT in pixels, such as 1024x768, got {quoted(text)}",
                    field="image_size", value=text)


# the encoder each image family's formula is written for
ENCODER_OF = {"gemma3": "siglip", "qwen2_vl": "qwen2_5_vl", "pixtral": "pixtral"}


def _window_sides(units: int, window: int) -> list[int]:
    """Qwen2.5-VL's windows along one side, in merge units: whole windows from the top-left,
    the remainder last (get_window_index pads at the end and drops the padding)."""
    return [window] * (units // window) + ([units % window] if units % window else [])


def encoder_flops(tower: VisionTower, processor: ImageProcessor, image: ImageTokens
                  ) -> int | None:
    """The FLOPs of the vision encoder and the projector on one image (``get_image_features``:
    matrix multiplications and convolutions, a multiply-add 2 FLOPs, as FlopCounterMode counts
    them; tests/data/images/encoder_flops.json holds its counts). None for an encoder this does
    not model (CLIP, Qwen3-VL, Llama 4, SigLIP's pooling head).

    With P patches of width w, heads x head_dim = a, MLP width f, L blocks, d the language
    model's width, every patch embedding a convolution of c x k^2 (k: the patch, x 2 frames for
    Qwen): 2 P w c k^2; each block 2 P w (3a) + 2 P a w (q, k, v, o) + 2 P w f x (2, 3 gated)
    (the MLP) + 4 n^2 a for each group of n patches attending to each other (QK^T and AV);
    then the projector:

    - SigLIP (Gemma 3, modeling_siglip.py): P = (image_size / patch)^2, all attending to all;
      Gemma3MultiModalProjector pools them to mm_tokens_per_image S and projects: 2 S w d. Per
      image and per pan-and-scan crop.
    - Pixtral (Mistral 3, modeling_pixtral.py, modeling_mistral3.py): P = (h / 14)(w / 14) of
      the resized image, all attending to all (one image); the patch merger 2 (P / 4)(4 w) w,
      then two Linears 2 (P / 4) w d + 2 (P / 4) d^2.
    - Qwen2.5-VL (modeling_qwen2_5_vl.py): P = (h / 14)(w / 14); the blocks of
      fullatt_block_indexes attend over all P, the others within windows of window_size
      pixels (window / patch / merge merge units a side, whole from the top-left, the
      remainder last), each of its patches; the merger 2 (P / 4)(4 w)^2 + 2 (P / 4)(4 w) d.
    """
    if ENCODER_OF.get(processor.family) != tower.encoder or tower.head:
        return None
    w, f, d = tower.width, tower.mlp_width, tower.out_width
    a = tower.heads * (tower.head_dim or w // tower.heads)
    k = tower.patch
    if tower.encoder == "siglip":
        pieces, per_side = 1 + image.crops, tower.image_size // k
        rows = cols = per_side
    else:
        pieces, rows, cols = 1, image.resized_height // k, image.resized_width // k
    p = rows * cols
    gated = 3 if tower.encoder in ("pixtral", "qwen2_5_vl") else 2
    embed = 2 * p * w * tower.channels * tower.temporal_patch * k * k
    linear = 2 * p * w * 3 * a + 2 * p * a * w + gated * 2 * p * w * f
    full = 4 * p * p * a
    if tower.encoder == "qwen2_5_vl":
        m = tower.merge
        side = tower.window // k // m
        windowed = sum(4 * (r * c * m * m) ** 2 * a
                       for r in _window_sides(rows // m, side)
                       for c in _window_sides(cols // m, side))
        whole = len(tower.full_attention_layers)
        attention = whole * full + (tower.layers - whole) * windowed
        merged = p // (m * m)
        projector = 2 * merged * (m * m * w) ** 2 + 2 * merged * m * m * w * d
    else:
        attention = tower.layers * full
        if tower.encoder == "siglip":
            projector = 2 * processor.soft_tokens * w * d
        else:
            m = tower.merge
            merged = p // (m * m)
            projector = (2 * merged * m * m * w * w + 2 * merged * w * d + 2 * merged * d * d)
    return pieces * (embed + tower.layers * linear + attention + projector)
