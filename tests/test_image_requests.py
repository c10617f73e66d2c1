"""Images in a request (``--images N --image-size WxH``): their tokens in the KV cache, the FLOPs,
serve's prompt and vLLM's encoder cache; the options where users meet them (real processes at
80 columns, pipes that close early)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from commands import shell, specsheet

import specsheet as api
from specsheet.api.count import report
from specsheet.model.images import ImageProcessor
from specsheet.sources.resolve import load_file

DATA = Path(__file__).resolve().parent / "data"
GEMMA3 = DATA / "gemma-3-4b.json"  # google/gemma-3-4b-it's config.json
MISTRAL3 = DATA / "multimodal" / "mistral-small-3.1-24b.json"
QWEN = ImageProcessor("qwen2_vl", patch_size=14, merge_size=2, min_pixels=3136,
                      max_pixels=12_845_056)


def test_image_tokens_join_the_request_like_text() -> None:
    """Two native Gemma 3 images beside 1,000 tokens of text hold the KV cache and FLOPs of a
    1,516-token text request: 2 x (256 soft tokens + begin + end)."""
    model = load_file(GEMMA3)
    with_images = report(model, 1000, images=2)
    text = report(model, 1516)
    assert with_images.images is not None and with_images.images.tokens == 516
    assert with_images.kv == text.kv
    assert with_images.flops == text.flops
    assert with_images.text_tokens == 1000


def test_without_tokens_the_text_fills_the_context_beside_the_images() -> None:
    r = report(load_file(MISTRAL3), images=1)
    # Mistral Small 3.1's native 1,540 x 1,540: 55 rows of 55 [IMG] and a break (3,080)
    assert (r.kv.tokens, r.text_tokens) == (131072, 131072 - 3080)


def test_the_processor_comes_from_the_config() -> None:
    gemma = load_file(GEMMA3).images
    assert gemma is not None
    assert (gemma.family, gemma.patch_size, gemma.image_size, gemma.soft_tokens) == (
        "gemma3", 14, 896, 256)
    mistral = load_file(MISTRAL3).images
    assert mistral is not None
    assert (mistral.family, mistral.patch_size, mistral.merge_size, mistral.image_size) == (
        "pixtral", 14, 2, 1540)
    assert load_file(DATA / "llama-3.1-8b.json").images is None


def test_count_document_and_table() -> None:
    result = specsheet("count", str(GEMMA3), "--images", "2", "--image-size", "1280x720",
                       "--tokens", "1000", "--json")
    assert result.returncode == 0, result.stderr
    images = json.loads(result.stdout)["images"]
    assert {k: images[k] for k in ("count", "width", "height", "size_source",
                                   "tokens_per_image", "tokens", "text_tokens")} == {
        "count": 2, "width": 1280, "height": 720, "size_source": "option",
        "tokens_per_image": 258, "tokens": 516, "text_tokens": 1000}
    assert json.loads(result.stdout)["kv_cache"]["tokens"] == 1516


def test_a_text_only_request_has_no_images_section() -> None:
    document = json.loads(specsheet("count", str(GEMMA3), "--json").stdout)
    assert "images" not in document


def test_serve_adds_the_images_to_the_prompt_and_sizes_the_encoder_cache() -> None:
    served = api.serve(load_file(MISTRAL3), "h100-sxm", images=2, image_size="1024x768")
    # 1024 x 768 fits under 1,540: 28 x 37 merged patches of 28 px, a break a row: 28 x 38
    entry = served.to_dict()["images"]
    assert entry["tokens_per_image"] == 28 * 38
    assert served.plan.request.prompt == 1024 + 2 * 28 * 38
    # vLLM's cache: max(max_num_batched_tokens 8,192 on an H100, the largest image's 3,025)
    assert entry["encoder_cache"] == {"size": 8192, "compute_budget": 8192,
                                      "max_tokens_per_item": 3025,
                                      "request_embeddings": 2 * 28 * 37,
                                      "images_held": 8192 // (28 * 37)}


def test_the_encoder_cache_grows_to_the_largest_image() -> None:
    # Qwen2.5-VL's largest image, 3,584 x 3,584 at max_pixels, gives 16,384 embeddings: more
    # than the 2,048 batched tokens of an L4, so the cache takes 16,384
    model = load_file(DATA / "qwen2.5-7b.json")._replace(images=QWEN)
    served = api.serve(model, "l4", images=1, image_size="640x480", quant="awq-int4",
                       max_model_len=8192)
    cache = served.to_dict()["images"]["encoder_cache"]
    assert (cache["size"], cache["compute_budget"], cache["max_tokens_per_item"]) == (
        16384, 16384, 16384)
    assert cache["request_embeddings"] == 391  # transformers' 640 x 480 (the goldens)


def test_a_processor_without_a_native_size_needs_one() -> None:
    model = load_file(DATA / "qwen2.5-7b.json")._replace(images=QWEN)
    with pytest.raises(api.SpecError, match="has no native size: give the images' size"):
        report(model, images=1)


@pytest.mark.parametrize("command", [
    ["count", str(GEMMA3), "--images", "3", "--image-size", "3000x1000"],
    ["serve", str(MISTRAL3), "--gpu", "h100-sxm", "--images", "2", "--image-size", "1024x768"],
], ids=["count", "serve"])
def test_the_image_rows_at_80_columns(command: list[str]) -> None:
    result = specsheet(*command, COLUMNS="80")
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "Image tokens" in result.stdout
    assert ("774" if command[0] == "count" else "2,128") in result.stdout
    assert "…" not in result.stdout


@pytest.mark.parametrize("fmt", ["", "--json", "--format csv"])
def test_a_reader_that_stops_after_one_line(fmt: str) -> None:
    result = shell(f"specsheet count {GEMMA3} --images 2 {fmt} | head -1; "
                   "echo \"codes ${PIPESTATUS[*]}\"")
    assert result.stdout.decode().splitlines()[-1] == "codes 0 0"
    assert result.stderr == b""


def test_serve_prefill_counts_the_encoder() -> None:
    """Two 1024 x 768 images on Mistral Small 3.1: the estimate's prefill FLOPs are the
    prompt's forward (text and image tokens) plus the encoder's, each image's held to
    FlopCounterMode at 784 x 1036 (tests/data/images/encoder_flops.json)."""
    from specsheet.model.flops import forward_flops

    model = load_file(MISTRAL3)
    served = api.serve(model, "h100-sxm", images=2, image_size="1024x768")
    prompt = served.plan.request.prompt
    assert served.estimates is not None
    assert served.estimates.prefill_flops == (prompt * forward_flops(model.spec, prompt).total
                                              + 2 * 5_104_198_615_040)
    assert served.to_dict()["images"]["encoder_flops"] == 2 * 5_104_198_615_040


def test_an_encoder_not_modelled_counts_no_flops() -> None:
    # Qwen2.5-VL's processor on a Gemma 3 tower: the formula is not that tower's
    model = load_file(GEMMA3)._replace(images=QWEN)
    images = report(model, 1000, images=1, image_size="640x480").images
    assert images is not None and images.encoder_flops is None
