"""Multimodal checkpoints: the vision tower and projector against transformers' own
AutoModelForImageTextToText (tests/golden/multimodal, from scripts/make_goldens.py
--multimodal on the meta device), the whole checkpoint and the language model in count and
serve, and a config whose encoder specsheet does not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.model.params import count_params
from specsheet.model.vision import tower_tensors
from specsheet.sources.resolve import load_file

runner = CliRunner()
TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
GOLDENS = sorted((TESTS / "golden" / "multimodal").glob("*.json"))
# the modules transformers holds the tower in, before the names model/vision.py lists
PREFIXES = ("model.vision_tower.", "model.visual.", "vision_model.", "model.", "")


def golden(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def test_at_least_six_wrappers_and_their_sources() -> None:
    families = {json.loads((DATA / golden(p)["config"]).read_text())["model_type"]
                for p in GOLDENS}
    assert len(GOLDENS) >= 6
    assert families == {"gemma3", "llama4", "llava", "mistral3", "qwen2_5_vl", "qwen3_vl"}
    sources = json.loads((DATA / "sources.json").read_text())
    assert {golden(p)["config"].removesuffix(".json") for p in GOLDENS} <= set(sources)


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_whole_checkpoint_matches_transformers(path: Path) -> None:
    g = golden(path)
    params = count_params(load_file(DATA / g["config"]).spec)
    assert params.total == g["total"]
    assert (params.vision, params.projector, params.language_model) == (
        g["components"]["vision"], g["components"]["projector"], g["language_model"])
    assert params.language_model == params.total - params.vision - params.projector


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_tower_tensors_are_transformers_own(path: Path) -> None:
    """Every tensor of the tower and projector, by name and shape, as transformers builds it."""
    g = golden(path)
    tower = load_file(DATA / g["config"]).spec.vision
    assert tower is not None
    ours = {t.name: list(t.shape) for t in tower_tensors(tower)}
    theirs = {}
    for name, shape in g["tower_tensors"].items():
        short = next(name.removeprefix(p) for p in PREFIXES
                     if name.startswith(p) and name.removeprefix(p) in ours)
        theirs[short] = shape
    assert theirs == ours


def test_published_totals() -> None:
    """The totals the model pages state: Gemma 3 27B 27,432,406,640, Qwen2.5-VL-7B
    8,292,166,656, LLaVA-1.5-7B 7,063,427,072, Qwen3-VL-8B 8,767,123,696 (the Hub's
    safetensors counts; tests/data/sources.json cites the last three)."""
    totals = {name: count_params(load_file(DATA / "multimodal" / f"{name}.json").spec).total
              for name in ("gemma-3-27b", "qwen2.5-vl-7b", "llava-1.5-7b", "qwen3-vl-8b")}
    assert totals == {"gemma-3-27b": 27_432_406_640, "qwen2.5-vl-7b": 8_292_166_656,
                      "llava-1.5-7b": 7_063_427_072, "qwen3-vl-8b": 8_767_123_696}


def test_a_wrapper_with_flat_text_keys() -> None:
    """Qwen2.5-VL writes its text model's keys at the top level, beside vision_config."""
    spec = load_file(DATA / "multimodal" / "qwen2.5-vl-7b.json").spec
    assert (spec.layers, spec.d_model, spec.heads, spec.kv_heads, spec.vocab) == (
        28, 3584, 28, 4, 152064)
    assert spec.qkv_bias and not spec.tied_embeddings
    assert spec.vision is not None and spec.vision.encoder == "qwen2_5_vl"
    assert spec.vision.full_attention_layers == (7, 15, 23, 31)


def run_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_count_shows_the_whole_checkpoint_and_the_language_model() -> None:
    doc = run_json("count", str(DATA / "multimodal" / "gemma-3-27b.json"))
    params = doc["params"]
    assert (params["total"], params["language_model"]) == (27_432_406_640, 27_009_346_304)
    assert params["components"]["vision"] == 416_866_032
    assert params["components"]["projector"] == 5376 * 1152 + 1152
    assert doc["counted"] == "whole model"
    # bf16: 2 bytes a parameter, the tower included
    assert doc["memory"]["weights_bytes"] == 2 * 27_432_406_640
    assert doc["memory"]["by_component"]["vision"] == 2 * 416_866_032
    text = runner.invoke(app, ["count", str(DATA / "multimodal" / "gemma-3-27b.json")]).stdout
    assert "Language model" in text and "Vision tower, 27 layers" in text


def test_a_text_only_document_has_no_tower_keys() -> None:
    params = run_json("count", "llama3-8b")["params"]
    assert "language_model" not in params
    assert "vision" not in params["components"]


def siglip_share(tp: int) -> int:
    """Gemma 3's SigLIP tower (27 layers, 1152 wide, MLP 4304, 14 x 14 patches of 896 x 896)
    and projector on one of tp GPUs: q, k, v and fc1 (weights and biases) split by rows,
    out_proj and fc2 by columns with their biases whole; norms, the patch convolution, the
    position table and the projector whole."""
    w, f = 1152, 4304
    layer = (3 * (w * w + w) + (f * w + f)) // tp + (w * w + f * w) // tp + 2 * w + 4 * w
    outside = w * 3 * 14 * 14 + w + 64 * 64 * w + 2 * w
    projector = w * 5376 + w
    return 27 * layer + outside + projector


def test_serve_holds_the_vision_tower_on_every_gpu() -> None:
    assert siglip_share(1) == 416_866_032 + 6_194_304
    path = DATA / "multimodal" / "gemma-3-27b.json"
    one = run_json("serve", str(path), "--gpu", "h100-sxm", "--gpus", "1")
    assert one["memory_per_gpu"]["weights_bytes"] == 2 * 27_432_406_640
    two = run_json("serve", str(path), "--gpu", "h100-sxm", "--gpus", "2")
    # the language model's share: the same config without its vision_config
    text = json.loads(path.read_text())
    del text["vision_config"]
    alone = DATA.parent / ".text-only-gemma-3-27b.json"
    alone.write_text(json.dumps(text))
    try:
        language = run_json("serve", str(alone), "--gpu", "h100-sxm", "--gpus", "2")
    finally:
        alone.unlink()
    assert two["memory_per_gpu"]["weights_bytes"] == \
        language["memory_per_gpu"]["weights_bytes"] + 2 * siglip_share(2)


def test_serve_builds_llava_up_to_its_feature_layer() -> None:
    """vLLM's llava.py builds CLIP only up to vision_feature_layer (-2: 23 of LLaVA-1.5's 24
    layers) and without its post-norm; the checkpoint's last layer is never loaded."""
    clip_layer = 4 * (1024 * 1024 + 1024) + (4096 * 1024 + 4096) + (1024 * 4096 + 1024) + \
        4 * 1024
    assert clip_layer == 12_596_224
    doc = run_json("serve", str(DATA / "multimodal" / "llava-1.5-7b.json"), "--gpu",
                   "h100-sxm", "--gpus", "1")
    assert doc["memory_per_gpu"]["weights_bytes"] == 2 * (7_063_427_072 - clip_layer - 2 * 1024)


def test_serve_at_pp_2_holds_the_tower_on_both_stages() -> None:
    """The wrapper builds its vision tower on every pipeline stage (no stage check in vLLM's
    gemma3_mm.py): each stage holds the 423,060,336 tower and projector parameters."""
    path = DATA / "multimodal" / "gemma-3-27b.json"
    text = json.loads(path.read_text())
    del text["vision_config"]
    alone = DATA.parent / ".text-only-gemma-3-27b-pp.json"
    alone.write_text(json.dumps(text))
    try:
        language = run_json("serve", str(alone), "--gpu", "h100-sxm", "--tp", "1", "--pp", "2")
    finally:
        alone.unlink()
    whole = run_json("serve", str(path), "--gpu", "h100-sxm", "--tp", "1", "--pp", "2")
    assert whole["memory_per_gpu"]["weights_bytes"] == \
        language["memory_per_gpu"]["weights_bytes"] + 2 * 423_060_336


def gemma3_4b_mmproj(alignment: int) -> int:
    """Gemma 3 4B's mmproj file as convert_hf_to_gguf.py --mmproj writes it (default outtype
    f16): matrices F16, vectors F32, the patch and position embeddings F32 (Gemma 3's
    tensor_force_quant), the input projection F16; each tensor padded to the buffer's
    alignment (CUDA 128, the host 32). SigLIP: 27 layers, 1152 wide, MLP 4304, 14 x 14 patches,
    64 x 64 positions; the projector 1152 x 2560."""
    def pad(n: int) -> int:
        return -(-n // alignment) * alignment

    w, f = 1152, 4304
    layer = 4 * pad(w * w * 2) + 2 * pad(f * w * 2) + 9 * pad(w * 4) + pad(f * 4)
    outside = pad(w * 3 * 14 * 14 * 4) + pad(w * 4) + pad(64 * 64 * w * 4) + 2 * pad(w * 4)
    projector = pad(w * 2560 * 2) + pad(w * 4)
    return 27 * layer + outside + projector


def test_fit_places_the_mmproj_file_as_llama_cpp_does() -> None:
    """The mmproj goes to the first GPU (--mmproj-offload, llama.cpp's default), or the host
    with --no-mmproj-offload; the model file's tensors do not move."""
    path = str(DATA / "gemma-3-4b.json")
    on_gpu = run_json("fit", path, "--quant", "gguf-q4_k_m", "--gpu", "rtx-4090")
    assert on_gpu["mmproj"] == {"bytes": gemma3_4b_mmproj(128), "device": "CUDA0"}
    assert gemma3_4b_mmproj(128) == 851_227_776
    assert "--mmproj" in on_gpu["command"] and "--no-mmproj-offload" not in on_gpu["command"]
    on_host = run_json("fit", path, "--quant", "gguf-q4_k_m", "--gpu", "rtx-4090",
                       "--no-mmproj-offload")
    assert on_host["mmproj"] == {"bytes": gemma3_4b_mmproj(32), "device": "CPU"}
    assert "--no-mmproj-offload" in on_host["command"]
    gpu, host = on_gpu["devices"][0], on_host["devices"][0]
    assert gpu["model_bytes"] - host["model_bytes"] == gemma3_4b_mmproj(128)
    assert on_host["host"]["model_bytes"] - on_gpu["host"]["model_bytes"] == \
        gemma3_4b_mmproj(32)


def test_a_text_model_has_no_mmproj() -> None:
    doc = run_json("fit", "llama3-8b", "--gpu", "rtx-4090")
    assert "mmproj" not in doc and "--mmproj" not in doc["command"]


def gemma3_4b_checkpoint(folder: Path) -> tuple[Path, dict[str, Any]]:
    """Gemma 3 4B as a safetensors file (a sparse one: the header and zeros): the vision tower
    and projector under transformers' own names and shapes (the golden's, from
    AutoModelForImageTextToText), the language model under model.language_model."""
    import dataclasses

    from checkpoints import write_checkpoint

    from specsheet.quant.tensors import model_tensors

    config = json.loads((DATA / "gemma-3-4b.json").read_text())
    g = golden(TESTS / "golden" / "multimodal" / "gemma-3-4b.json")
    shapes = {name: ("BF16", tuple(shape)) for name, shape in g["tower_tensors"].items()}
    text = dataclasses.replace(load_file(DATA / "gemma-3-4b.json").spec, vision=None)
    shapes.update({f"model.language_model.{t.name}": ("BF16", t.shape)
                   for t in model_tensors(text)})
    return write_checkpoint(folder, config, shapes), shapes


def inspect_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["inspect", *args, "--json"])
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    doc: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, doc


def test_inspect_checks_the_tower_against_the_config(tmp_path: Path) -> None:
    folder, _ = gemma3_4b_checkpoint(tmp_path / "gemma")
    code, doc = inspect_json(str(folder), "--check")
    assert code == 0, doc["check"]["differences"]
    components = doc["params"]["components"]
    assert (components["vision"], components["projector"]) == (416_866_032, 2_950_272)
    assert doc["params"]["total"] == 4_300_079_472 and components["other"] == 0
    assert doc["check"]["components"]["vision"] == {
        "file": 416_866_032, "computed": 416_866_032, "match": True}
    assert doc["bytes"]["predicted_matches"] is True


def test_inspect_names_a_missing_and_a_misshapen_tower_tensor(tmp_path: Path) -> None:
    from checkpoints import write_checkpoint

    folder, shapes = gemma3_4b_checkpoint(tmp_path / "gemma")
    config = json.loads((folder / "config.json").read_text())
    missing = "model.vision_tower.encoder.layers.3.mlp.fc1.weight"
    del shapes[missing]
    code, doc = inspect_json(str(write_checkpoint(tmp_path / "cut", config, shapes)), "--check")
    assert code == 1
    (difference,) = doc["check"]["differences"]
    assert (difference["component"], difference["layer"]) == ("vision", None)
    assert difference["tensors"] == [f"{missing} is missing"]
    shapes[missing] = ("BF16", (4304, 1152))
    table = "model.vision_tower.embeddings.position_embedding.weight"
    shapes[table] = ("BF16", (4097, 1152))
    code, doc = inspect_json(str(write_checkpoint(tmp_path / "wide", config, shapes)),
                             "--check")
    assert code == 1
    (difference,) = doc["check"]["differences"]
    assert difference["tensors"] == [f"{table} [4097, 1152] (the config: [4096, 1152])"]


def test_serve_refuses_a_tp_that_does_not_divide_the_tower() -> None:
    """vLLM's SigLIP divides its 16 heads by tp (siglip.py: divide(num_heads, tp_size))."""
    result = runner.invoke(app, ["serve", str(DATA / "multimodal" / "gemma-3-27b.json"),
                                 "--gpu", "h100-sxm", "--gpus", "32"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "32 does not divide the vision tower's 16 heads; tp values that work: 1, 2, 4, 8, " \
        "16" in result.stderr
