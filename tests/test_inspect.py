"""specsheet inspect: checkpoints of many families, their tensors as transformers saves them
(tests/data/shapes, written by scripts/make_shapes.py) and, for GGUF, as llama.cpp's converter
names them; written by the real writers (safetensors, gguf.GGUFWriter) or by hand, read from
their headers; every component matches count and --check exits 0; tampered copies exit 1 naming
the tensor; huge sparse files answer from their headers alone."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from math import prod
from pathlib import Path
from typing import Any

import gguf
import pytest
from checkpoints import (
    awq,
    fp8_block,
    gguf_shapes,
    gptq,
    hf_tensors,
    safetensors_header,
    save_with_safetensors,
    small_config,
    spec_of,
    stored_shapes,
    transformers_checkpoint,
    write_checkpoint,
    write_gguf,
    write_safetensors,
)
from commands import ROOT, clean_env
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.errors import SpecError
from specsheet.model.params import count_params
from specsheet.quant.layouts import gguf_types, quantized_bytes
from specsheet.quant.stored import infos
from specsheet.sources.weights.files import read_weights
from specsheet.sources.weights.gguf import SkippedArray, read_gguf
from specsheet.sources.weights.safetensors import read_safetensors

runner = CliRunner()


def inspect(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["inspect", *args, "--json"])
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr, result.exception)
    assert result.stderr == ""
    document: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, document


def count_components(path: Path) -> dict[str, int]:
    result = runner.invoke(app, ["count", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    components: dict[str, int] = json.loads(result.stdout)["params"]["components"]
    return components


def assert_matches_count(folder: Path, document: dict[str, Any]) -> None:
    """Every component of the file is count's figure, nothing is left over, and the check
    says so."""
    expected = {**count_components(folder), "other": 0}
    assert document["params"]["components"] == expected
    assert document["check"]["matches"] is True
    assert document["check"]["differences"] == []
    assert all(c["match"] for c in document["check"]["components"].values())


# ---- safetensors: fourteen families, dense and MoE, as transformers saves them ----------------

FAMILIES = [
    "llama-3.2-1b", "qwen2.5-0.5b", "qwen3-0.6b", "gemma-2-2b", "mistral-7b-v0.1",
    "mixtral-8x7b", "qwen3-30b-a3b", "qwen1.5-moe-a2.7b", "deepseek-v2-lite", "gpt2",
    "pythia-160m", "phi-3-mini-4k", "olmo-2-7b", "starcoder2-3b",
]


@pytest.mark.parametrize("name", FAMILIES)
def test_the_stored_shapes_are_of_the_configs_in_tests_data(name: str) -> None:
    """tests/data/shapes/NAME.json was built from today's tests/data/NAME.json, made small."""
    data = stored_shapes(name)
    assert data["config"] == small_config(name)
    assert data["transformers"] and data["torch"] and data["tensors"]


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_checkpoint_matches_count(name: str, tmp_path: Path) -> None:
    # in BF16 throughout, as the published checkpoints are (transformers keeps DeepSeek-V2's
    # router in F32)
    config, shapes = transformers_checkpoint(name, dtype="BF16")
    folder = write_checkpoint(tmp_path / name, config, shapes)
    code, document = inspect(str(folder), "--check")
    assert code == 0
    assert_matches_count(folder, document)
    assert document["format"] == "safetensors"
    assert document["tensors"] == len(shapes)
    # every parameter transformers' model holds, tied matrices once
    assert document["params"]["total"] == sum(prod(s) for _, s in shapes.values())
    assert document["quant"] is None
    # BF16 throughout: 2 bytes a parameter, and specsheet predicts exactly that
    assert document["bytes"]["data"] == 2 * document["params"]["total"]
    assert document["bytes"]["by_dtype"] == {"BF16": document["bytes"]["data"]}
    assert document["bytes"]["predicted_matches"] is True


def test_the_safetensors_package_writes_what_inspect_reads(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen2.5-0.5b", dtype="F16")
    folder = tmp_path / "qwen"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    save_with_safetensors(folder / "model.safetensors", shapes)
    code, document = inspect(str(folder), "--check")
    assert code == 0
    assert_matches_count(folder, document)
    header = read_safetensors(folder / "model.safetensors")
    assert {t.name: (t.dtype, t.shape) for t in infos(header.tensors)} == shapes
    assert header.metadata == {"format": "numpy"} or isinstance(header.metadata, dict)


def test_a_sharded_checkpoint_by_its_index(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen3-30b-a3b")
    folder = write_checkpoint(tmp_path / "moe", config, shapes, shards=3)
    for ref in (folder, folder / "model.safetensors.index.json"):
        code, document = inspect(str(ref), "--check")
        assert code == 0
        assert len(document["files"]) == 3
        assert_matches_count(folder, document)


def test_a_tensor_in_two_shards_of_an_index_is_refused(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen3-0.6b")
    folder = write_checkpoint(tmp_path / "twice", config, shapes, shards=2)
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    norm = "model.norm.weight"  # in one shard by the index; written into the other one too
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    home = index["weight_map"][norm]
    other = second if home == first else first
    header = json.loads((folder / other).read_bytes()[8:8 + int.from_bytes(
        (folder / other).read_bytes()[:8], "little")])
    header.pop("__metadata__", None)
    kept = {n: (e["dtype"], tuple(e["shape"])) for n, e in header.items()}
    write_safetensors(folder / other, {**kept, norm: shapes[norm]})
    result = CliRunner().invoke(app, ["inspect", str(folder), "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"tensor {norm!r} is in both {folder / first} and {folder / second}" in result.stderr


def test_an_index_that_maps_a_tensor_to_the_wrong_shard_is_refused(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen3-0.6b")
    folder = write_checkpoint(tmp_path / "wrong", config, shapes, shards=2)
    path = folder / "model.safetensors.index.json"
    index = json.loads(path.read_text())
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    norm = "model.norm.weight"
    home = index["weight_map"][norm]
    wrong = second if home == first else first
    index["weight_map"][norm] = wrong
    path.write_text(json.dumps(index))
    result = CliRunner().invoke(app, ["inspect", str(path), "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"maps tensor {norm!r} to {wrong}, but {home} holds it" in result.stderr


@pytest.mark.parametrize("weight_map", [
    None, ["model.norm.weight"], {"model.norm.weight": ["model.safetensors"]},
    {"model.norm.weight": {"file": "model.safetensors"}}, {"model.norm.weight": 1},
])
def test_an_index_without_a_weight_map_of_names_to_files_is_refused(weight_map: object,
                                                                     tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors.index.json"
    path.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    result = CliRunner().invoke(app, ["inspect", str(path), "--json"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"specsheet: error: {path}: expected a mapping with a "
                             "weight_map of tensor names to shard files\n")


def test_a_single_file_finds_the_config_beside_it(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("llama-3.2-1b")
    folder = write_checkpoint(tmp_path / "m", config, shapes)
    code, document = inspect(str(folder / "model.safetensors"), "--check")
    assert code == 0 and document["check"]["config"] == str(folder / "config.json")


# ---- quantized layouts ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "layout", "quant"), [
    ("llama-3.2-1b", "gptq", "gptq-int4"), ("qwen3-30b-a3b", "gptq", "gptq-int4"),
    ("qwen2.5-0.5b", "awq", "awq-int4"), ("mixtral-8x7b", "awq", "awq-int4"),
    ("qwen3-0.6b", "fp8", "fp8-block"), ("deepseek-v2-lite", "fp8", "fp8-block"),
])
def test_quantized_checkpoints_count_the_unquantized_model(name: str, layout: str, quant: str,
                                                           tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint(name, dtype="BF16")  # the router too
    spec = spec_of(config)
    group = 32
    stored = {"gptq": lambda: gptq(shapes, group), "awq": lambda: awq(shapes, group),
              "fp8": lambda: fp8_block(shapes)}[layout]()
    folder = write_checkpoint(tmp_path / name, config, stored)
    code, document = inspect(str(folder), "--check")
    assert code == 0
    assert_matches_count(folder, document)
    assert document["params"]["total"] == count_params(spec).total
    assert document["quant"] == quant
    predicted = quantized_bytes(spec, quant, group if layout != "fp8" else None,
                                "fp16" if layout != "fp8" else "bf16").weights_bytes
    assert document["bytes"]["predicted"] == predicted
    assert document["bytes"]["data"] == predicted
    assert document["bytes"]["predicted_matches"] is True


def test_a_gptq_qweight_of_k_over_8_by_n_int32_is_k_by_n_parameters(tmp_path: Path) -> None:
    shapes = {"model.layers.0.self_attn.q_proj.qweight": ("I32", (512, 4096)),
              "model.layers.0.self_attn.q_proj.qzeros": ("I32", (32, 512)),
              "model.layers.0.self_attn.q_proj.scales": ("F16", (32, 4096)),
              "model.layers.0.self_attn.q_proj.g_idx": ("I32", (4096,))}
    path = write_safetensors(tmp_path / "one.safetensors", shapes)
    code, document = inspect(str(path))
    assert code == 0
    assert document["params"]["components"]["attention"] == 4096 * 4096
    assert document["quant"] == "gptq-int4" and document["group_size"] == 128
    assert document["check"] is None and "no config.json" in document["note"]


@pytest.mark.parametrize(("stored", "quant", "params"), [
    ({"w.weight": ("U8", (2048, 1)), "w.weight.absmax": ("F32", (64,)),
      "w.weight.quant_map": ("F32", (16,)),
      "w.weight.quant_state.bitsandbytes__nf4": ("U8", (90,))}, "bnb-nf4", 4096),
    ({"w.weight": ("I8", (64, 64)), "w.SCB": ("F32", (64,)), "w.weight_format": ("U8", ())},
     "bnb-int8", 4096),
    ({"w.weight_packed": ("I32", (64, 8)), "w.weight_scale": ("BF16", (64, 1)),
      "w.weight_shape": ("I64", (2,))}, "w4a16", 4096),
    ({"w.weight_packed": ("U8", (64, 32)), "w.weight_scale": ("U8", (64, 2))}, "mxfp4", 4096),
    ({"w.weight_packed": ("U8", (64, 32)), "w.weight_scale": ("F8_E4M3", (64, 4)),
      "w.weight_global_scale": ("F32", (1,)), "w.input_global_scale": ("F32", (1,))},
     "nvfp4", 4096),
    ({"w.weight": ("F8_E4M3", (64, 64)), "w.weight_scale": ("F32", (1,)),
      "w.input_scale": ("F32", (1,))}, "fp8", 4096),
    ({"w.weight": ("F8_E4M3", (64, 64)), "w.weight_scale": ("F32", (64, 1))}, "fp8-channel",
     4096),
    ({"w.weight": ("I8", (64, 64)), "w.weight_scale": ("BF16", (64, 1))}, "w8a8", 4096),
    ({"e.gate_up_proj_blocks": ("U8", (4, 128, 2, 16)),
      "e.gate_up_proj_scales": ("U8", (4, 128, 2))}, "mxfp4", 4 * 128 * 64),
])
def test_every_layout_is_recognized(stored: dict[str, tuple[str, tuple[int, ...]]], quant: str,
                                    params: int, tmp_path: Path) -> None:
    named = {f"model.layers.0.mlp.{k}": v for k, v in stored.items()}
    path = write_safetensors(tmp_path / "one.safetensors", named)
    _, document = inspect(str(path))
    assert document["quant"] == quant
    assert document["params"]["components"]["mlp"] == params


# ---- GGUF ----------------------------------------------------------------------------------

GGUF_CASES = [  # (config, GGUF architecture, file type)
    ("llama-3.2-1b", "llama", "f16"), ("llama-3.2-1b", "llama", "q8_0"),
    ("mistral-7b-v0.1", "llama", "q4_k_m"), ("qwen3-30b-a3b", "qwen3moe", "q4_k_m"),
    ("qwen2.5-0.5b", "qwen2", "q8_0"), ("gpt2", "gpt2", "q8_0"),
    ("deepseek-v2-lite", "deepseek2", "q8_0"), ("phi-3-mini-4k", "phi3", "q8_0"),
    ("pythia-160m", "gptneox", "q8_0"), ("gemma-2-2b", "gemma2", "q8_0"),
    ("mixtral-8x7b", "llama", "q8_0"),
]


def gguf_file(tmp_path: Path, name: str, arch: str, ftype: str, **kw: Any) -> tuple[Path, Any]:
    """transformers' tensors of NAME (rows of 256 for the k-quants) as llama.cpp names them, in
    the GGML types of ``ftype``, with the metadata llama.cpp's converter writes."""
    config, shapes = transformers_checkpoint(name, wide=ftype == "q4_k_m")
    spec = spec_of(config)
    extra = {}
    if arch == "deepseek2":
        extra = {"attention.kv_lora_rank": spec.kv_lora_rank,
                 "attention.q_lora_rank": spec.q_lora_rank,
                 "rope.dimension_count": spec.qk_rope_head_dim,
                 "expert_shared_count": spec.shared_d_ff // spec.expert_d_ff,
                 "leading_dense_block_count": len(spec.dense_layers)}
    if arch == "qwen2moe":
        extra = {"expert_shared_feed_forward_length": spec.shared_d_ff}
    types = gguf_types(spec, ftype)
    tensors = gguf_shapes(arch, shapes, spec.layers)
    for fused in [t for t in tensors if ".attn_qkv." in t]:  # GPT-2's c_attn: q, k, v's type
        (types[fused],) = {types[fused.replace("attn_qkv", p)]
                           for p in ("attn_q", "attn_k", "attn_v")}
    path = write_gguf(tmp_path / f"{name}-{ftype}.gguf", arch, spec, types, extra=extra,
                      tensors=tensors, **kw)
    return path, spec


@pytest.mark.parametrize(("name", "arch", "ftype"), GGUF_CASES,
                         ids=[f"{n}-{f}" for n, _, f in GGUF_CASES])
def test_a_gguf_file_checks_against_its_own_metadata(name: str, arch: str, ftype: str,
                                                     tmp_path: Path) -> None:
    path, spec = gguf_file(tmp_path, name, arch, ftype)
    code, document = inspect(str(path), "--check")
    assert code == 0, document["check"]
    assert document["format"] == "gguf"
    assert document["params"]["components"] == {**count_params(spec).components(), "other": 0}
    assert document["check"]["matches"]
    assert document["quant"] == f"gguf-{ftype}"
    assert document["bytes"]["data"] == quantized_bytes(spec, f"gguf-{ftype}").weights_bytes
    assert document["bytes"]["predicted_matches"] is True


@pytest.mark.parametrize(("name", "arch", "ftype"), GGUF_CASES,
                         ids=[f"{n}-{f}" for n, _, f in GGUF_CASES])
def test_the_gguf_reader_agrees_with_gguf_py(name: str, arch: str, ftype: str,
                                             tmp_path: Path) -> None:
    path, _ = gguf_file(tmp_path, name, arch, ftype, vocab_tokens=300)
    mine = read_gguf(path)
    theirs = gguf.GGUFReader(path)
    assert mine.data_offset == theirs.data_offset
    assert mine.alignment == theirs.alignment
    assert [(t.name, t.shape, t.dtype, t.nbytes, mine.data_offset + t.begin)
            for t in mine.tensors] == [
        (t.name, tuple(reversed([int(n) for n in t.shape])), t.tensor_type.name,
         int(t.n_bytes), int(t.data_offset)) for t in theirs.tensors]
    fields = {k: f for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert list(mine.metadata) == list(fields)
    for key, field in fields.items():
        value = mine.metadata[key]
        if isinstance(value, SkippedArray):
            assert value.length == len(field.data)
        else:
            assert value == field.contents(), key


def test_a_gguf_vocabulary_from_the_token_list(tmp_path: Path) -> None:
    path, spec = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0", vocab_tokens=256)
    code, document = inspect(str(path), "--check")
    assert code == 0
    assert document["params"]["components"]["token_embedding"] == 256 * spec.d_model


# ---- tampered copies -------------------------------------------------------------------------

def test_a_missing_tensor_is_named(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("llama-3.2-1b")
    del shapes["model.layers.1.self_attn.k_proj.weight"]
    folder = write_checkpoint(tmp_path / "m", config, shapes)
    code, document = inspect(str(folder), "--check")
    assert code == 1
    assert not document["check"]["matches"]
    assert not document["check"]["components"]["attention"]["match"]
    (difference,) = document["check"]["differences"]
    assert difference["component"] == "attention" and difference["layer"] == 1
    assert difference["tensors"] == ["model.layers.1.self_attn.k_proj.weight is missing"]
    table = runner.invoke(app, ["inspect", str(folder), "--check"])
    assert table.exit_code == 1
    assert "model.layers.1.self_attn.k_proj.weight is missing" in table.stdout
    assert "DIFFERS" in table.stdout


def test_a_changed_shape_is_named(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("qwen3-30b-a3b")
    name = "model.layers.0.mlp.experts.3.down_proj.weight"
    shapes[name] = ("BF16", (64, 16))
    folder = write_checkpoint(tmp_path / "m", config, shapes)
    code, document = inspect(str(folder), "--check")
    assert code == 1
    (difference,) = document["check"]["differences"]
    assert difference["component"] == "mlp" and difference["layer"] == 0
    assert difference["tensors"] == [f"{name} [64, 16] (the other layers: [64, 32])"]


def test_a_gguf_without_a_tensor(tmp_path: Path) -> None:
    path, spec = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    header = read_gguf(path)
    import gguf as g

    reader = g.GGUFReader(path)
    w = g.GGUFWriter(str(tmp_path / "cut.gguf"), "llama")
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        w.add_key_value(key, field.contents(), field.types[0],
                        field.types[-1] if field.types[0] == g.GGUFValueType.ARRAY else None)
    for t in reader.tensors:
        if t.name != "blk.1.attn_k.weight":
            w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert len(header.tensors) == len(read_gguf(tmp_path / "cut.gguf").tensors) + 1
    code, document = inspect(str(tmp_path / "cut.gguf"), "--check")
    assert code == 1
    (difference,) = document["check"]["differences"]
    assert difference["tensors"] == ["blk.1.attn_k.weight is missing"]


def test_what_count_does_not_include_is_other(tmp_path: Path) -> None:
    """A multi-token-prediction layer past the last, a vision tower and a rotary buffer."""
    config, shapes = transformers_checkpoint("llama-3.2-1b")
    shapes["model.layers.2.self_attn.q_proj.weight"] = ("BF16", (64, 64))  # layer 2 of 2
    shapes["vision_tower.encoder.layers.0.mlp.fc1.weight"] = ("BF16", (32, 32))
    shapes["model.layers.0.self_attn.rotary_emb.inv_freq"] = ("F32", (8,))
    folder = write_checkpoint(tmp_path / "m", config, shapes)
    code, document = inspect(str(folder), "--check")
    assert code == 1
    assert document["params"]["components"]["other"] == 64 * 64 + 32 * 32 + 8
    assert sorted(document["other_tensors"]) == sorted([
        "model.layers.2.self_attn.q_proj.weight",
        "vision_tower.encoder.layers.0.mlp.fc1.weight",
        "model.layers.0.self_attn.rotary_emb.inv_freq"])
    assert [d["component"] for d in document["check"]["differences"]] == ["other"]
    assert document["check"]["components"]["attention"]["match"]
    # without --check the same file exits 0
    assert inspect(str(folder))[0] == 0


# ---- headers only -----------------------------------------------------------------------------

def _bytes_read() -> int | None:
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return None
    return int(next(line for line in text.splitlines() if line.startswith("rchar:")).split()[1])


@pytest.mark.parametrize("kind", ["safetensors", "gguf"])
def test_a_sparse_16_gb_file_answers_from_its_header(kind: str, tmp_path: Path) -> None:
    size = 16 * 10**9
    if kind == "safetensors":
        config = small_config("llama-3.2-1b")
        config.update(hidden_size=8192, vocab_size=size // (2 * 8192) // 64 * 64,
                      num_hidden_layers=1, intermediate_size=8192, head_dim=128,
                      num_attention_heads=64, num_key_value_heads=8)
        path = tmp_path / "model.safetensors"
        head, data = safetensors_header(hf_tensors("llama", spec_of(config)))
        path.write_bytes(head)
        os.truncate(path, len(head) + data)
        (tmp_path / "config.json").write_text(json.dumps(config))
    else:  # Llama 3.1 8B in F16: 16 GB of data after a real header
        from specsheet.api.count import load

        spec = load("llama3.1-8b").spec
        path = write_gguf(tmp_path / "big.gguf", "llama", spec, gguf_types(spec, "f16"),
                          vocab_tokens=1000, data=False)
    assert path.stat().st_size > size
    assert path.stat().st_blocks * 512 < 10**8  # sparse: nothing on disk
    before = _bytes_read()
    start = time.perf_counter()
    result = runner.invoke(app, ["inspect", str(path), "--json"])
    elapsed = time.perf_counter() - start
    after = _bytes_read()
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes"]["data"] >= size
    assert elapsed < 5
    if before is not None and after is not None:
        assert after - before < 20 * 10**6  # the header and the Python it imports


# ---- the real process, and the command's own errors --------------------------------------------

def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m specsheet`` of this checkout (the installed command may be another's)."""
    return subprocess.run([sys.executable, "-m", "specsheet", *args], capture_output=True,
                          text=True, env=clean_env(PYTHONPATH=str(ROOT)), timeout=60,
                          check=False)


def test_the_process_exits_1_on_a_difference_and_0_on_none(tmp_path: Path) -> None:
    config, shapes = transformers_checkpoint("gemma-2-2b")
    folder = write_checkpoint(tmp_path / "ok", config, shapes)
    ok = run("inspect", str(folder), "--check")
    assert ok.returncode == 0, ok.stderr
    shutil.copytree(folder, tmp_path / "bad")
    del shapes["model.layers.0.post_feedforward_layernorm.weight"]
    write_checkpoint(tmp_path / "bad", config, shapes)
    bad = run("inspect", str(tmp_path / "bad"), "--check", "--format", "markdown")
    assert bad.returncode == 1 and bad.stderr == ""
    assert "model.layers.0.post_feedforward_layernorm.weight is missing" in bad.stdout


def test_check_without_a_config_is_bad_input(tmp_path: Path) -> None:
    path = write_safetensors(tmp_path / "w.safetensors", {"a.weight": ("F32", (4, 4))})
    result = runner.invoke(app, ["inspect", str(path), "--check"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--check needs a config to compare with: no config.json in" in result.stderr


def test_hf_cache_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, shapes = transformers_checkpoint("qwen3-0.6b")
    repo = tmp_path / "models--Qwen--Qwen3-0.6B"
    snapshot = repo / "snapshots" / "abc123"
    write_checkpoint(snapshot, config, shapes)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, document = inspect("hf:Qwen/Qwen3-0.6B", "--check")
    assert code == 0 and document["files"] == [str(snapshot / "model.safetensors")]


def test_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\xff" * 8 + b"{}")
    with pytest.raises(SpecError, match="x.safetensors: header length"):
        read_safetensors(path)


# ---- fuzz: the two header parsers end in a result or a SpecError, never anything else -------

def _parse(parser: Any, content: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz"
        path.write_bytes(content)
        try:
            header = parser(path)
        except SpecError as e:
            assert "\n" not in str(e) and str(path) in str(e)
            return
        assert sum(t.nbytes for t in infos(header.tensors)) <= len(content)


_DTYPES = st.sampled_from(["F32", "BF16", "I32", "U8", "F4", "F12", "", "bf16"])
_SHAPES = st.lists(st.integers(-2, 2**40) | st.floats() | st.booleans() | st.none(),
                   max_size=4) | st.integers() | st.none() | st.text(max_size=3)
_OFFSETS = st.lists(st.integers(-2, 2**20) | st.none(), min_size=0, max_size=3)
_ENTRIES = st.fixed_dictionaries({"dtype": _DTYPES, "shape": _SHAPES,
                                  "data_offsets": _OFFSETS}) | st.integers() | st.text()


@given(header=st.dictionaries(st.text(max_size=8), _ENTRIES, max_size=5),
       slack=st.integers(-16, 64), data=st.integers(0, 256), raw=st.binary(max_size=64),
       use_raw=st.booleans())
def test_fuzz_the_safetensors_header(header: dict[str, Any], slack: int, data: int, raw: bytes,
                                     use_raw: bool) -> None:
    text = raw if use_raw else json.dumps(header).encode()
    length = max(len(text) + slack, 0)
    _parse(read_safetensors, length.to_bytes(8, "little") + text + bytes(data))


def _header_file(path: Path, entries: list[tuple[str, Any]], data: int,
                 metadata: dict[str, Any] | None = None) -> Path:
    header: dict[str, Any] = {"__metadata__": metadata} if metadata is not None else {}
    header.update(entries)
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + bytes(data))
    return path


def _read(path: Path) -> list[tuple[str, str, tuple[int, ...], int, int]] | str:
    """The tensors of ``path`` (name, dtype, shape, bytes, begin), or the fault the reader
    names, without the file's name."""
    try:
        tensors = read_safetensors(path).tensors
    except SpecError as e:
        return str(e).split(": ", 1)[1]
    return [(t.name, t.dtype, t.shape, t.nbytes, t.begin) for t in infos(tensors)]


def test_a_shape_equal_to_one_read_before_but_not_of_integers_is_refused(tmp_path: Path) -> None:
    # the reader checks a dtype's shape once; True == 1 and 2.0 == 2 must not pass for it
    for good, bad in (([2, 3], [2.0, 3]), ([1, 3], [True, 3]), ([0, 3], [False, 3]),
                      ([2, 3], ["2", 3])):
        entries = [("a", {"dtype": "F32", "shape": good, "data_offsets": [0, 4 * prod(good)]}),
                   ("b", {"dtype": "F32", "shape": bad, "data_offsets": [4 * prod(good),
                                                                          8 * prod(good)]})]
        fault = _read(_header_file(tmp_path / "x.safetensors", entries, 8 * prod(good)))
        assert fault == f"tensor 'b': shape {bad!r} is not a list of integers of 0 or more", bad
    entries = [("a", {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}),
               ("b", {"dtype": "F32", "shape": [2, 3], "data_offsets": [False, 24]})]
    assert _read(_header_file(tmp_path / "x.safetensors", entries, 48)) == \
        "tensor 'b': data_offsets [False, 24] is not [begin, end] with 0 <= begin <= end"
    entries = [("a", {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}),
               ("b", {"dtype": "BF16", "shape": [2, 3], "data_offsets": [24, 48]})]
    assert _read(_header_file(tmp_path / "x.safetensors", entries, 48)) == \
        "tensor 'b': BF16 [2, 3] takes 12 bytes but its data_offsets hold 24"
    # a number with a fraction elsewhere (metadata is read, not checked): as before
    entries = [("a", {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}),
               ("b", {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 48]})]
    assert _read(_header_file(tmp_path / "x.safetensors", entries, 48, {"x": 1.5})) == [
        ("a", "F32", (2, 3), 24, 0), ("b", "F32", (2, 3), 24, 24)]


def test_the_files_of_a_checkpoint_share_the_shapes_checked_but_not_for_floats(
        tmp_path: Path) -> None:
    # a folder's files are read with one record of the shapes checked: a later file's tensor
    # of a shape checked before shares its tuple, and one of floats equal to it is refused
    good = [("a", {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})]
    _header_file(tmp_path / "1.safetensors", good, 24)
    _header_file(tmp_path / "2.safetensors",
                 [("b", {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})], 24)
    first, second = infos(read_weights(str(tmp_path)).tensors)
    assert second.shape == (2, 3) and second.shape is first.shape
    for bad in ([2.0, 3], [2, 3.0]):
        _header_file(tmp_path / "2.safetensors",
                     [("b", {"dtype": "F32", "shape": bad, "data_offsets": [0, 24]})], 24)
        with pytest.raises(SpecError, match=r"2\.safetensors: tensor 'b': shape \[2"):
            read_weights(str(tmp_path))


# shapes alike in value (True == 1, 2.0 == 2) and not, the right number of bytes most often
_POOL = st.sampled_from([[2, 3], [1, 3], [0, 3], [True, 3], [False, 3], [2.0, 3], ["2", 3]])


@given(entries=st.lists(st.tuples(st.sampled_from(["F32", "BF16"]), _POOL,
                                  st.sampled_from([0, 0, 0, -1, 1])), min_size=2, max_size=8))
@example(entries=[("F32", [2, 3], 0), ("BF16", [2, 3], 0), ("F32", [2.0, 3], 0)])
@example(entries=[("F32", [1, 3], 0), ("F32", [True, 3], 0)])
@example(entries=[("F32", [0, 3], 0), ("F32", [False, 3], 0)])
def test_a_header_reads_as_its_entries_read_alone(entries: list[tuple[str, list[Any], int]]
                                                  ) -> None:
    """Each entry read in a file of its own (where no shape was read before it) against the
    whole header: the same tensors, or the fault of the first entry refused alone."""
    bits = {"F32": 32, "BF16": 16}
    header, begin = [], 0
    for i, (dtype, shape, slack) in enumerate(entries):
        try:
            size = bits[dtype] * prod(shape) // 8 + slack
        except TypeError:
            size = 4
        size = max(int(size), 0)
        header.append((f"t{i}", {"dtype": dtype, "shape": shape,
                                 "data_offsets": [begin, begin + size]}))
        begin += size
    with tempfile.TemporaryDirectory() as folder:
        whole = _read(_header_file(Path(folder) / "whole", header, begin))
        alone = [_read(_header_file(Path(folder) / "one", [entry], begin)) for entry in header]
    faults = [one for one in alone if isinstance(one, str)]
    if faults:
        assert whole == faults[0]
    else:
        assert whole == [t for one in alone for t in one]


def _small_gguf() -> bytes:
    folder = Path(tempfile.mkdtemp())
    config = small_config("llama-3.2-1b")
    config.update(num_hidden_layers=1, vocab_size=32)
    spec = spec_of(config)
    path = write_gguf(folder / "small.gguf", "llama", spec, gguf_types(spec, "q8_0"),
                      vocab_tokens=32)
    content = path.read_bytes()
    shutil.rmtree(folder)
    return content


SMALL_GGUF = _small_gguf()


@given(edits=st.lists(st.tuples(st.integers(0, len(SMALL_GGUF) - 1), st.integers(0, 255)),
                      max_size=8),
       cut=st.integers(0, len(SMALL_GGUF)), tail=st.binary(max_size=200),
       counts=st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)),
       mode=st.sampled_from(["edit", "random"]))
def test_fuzz_the_gguf_header(edits: list[tuple[int, int]], cut: int, tail: bytes,
                              counts: tuple[int, int], mode: str) -> None:
    if mode == "edit":  # a real file with bytes changed and cut short
        content = bytearray(SMALL_GGUF)
        for at, value in edits:
            content[at] = value
        content = content[:max(cut, 24)] if edits else content[:cut]
    else:  # a valid start and anything after it
        content = bytearray(b"GGUF" + struct.pack("<IQQ", 3, *counts) + tail)
    _parse(read_gguf, bytes(content))


def test_documents_validate_against_the_schema(tmp_path: Path) -> None:
    import jsonschema

    from specsheet.views.schema import schema_text

    validator = jsonschema.Draft202012Validator(json.loads(schema_text()))
    config, shapes = transformers_checkpoint("llama-3.2-1b")
    folder = write_checkpoint(tmp_path / "ok", config, shapes)
    validator.validate(inspect(str(folder))[1])
    del shapes["model.layers.0.mlp.up_proj.weight"]
    validator.validate(inspect(str(write_checkpoint(tmp_path / "bad", config, shapes)))[1])
    alone = write_safetensors(tmp_path / "alone.safetensors", shapes)
    assert inspect(str(alone))[1]["check"] is None  # no config beside it
    validator.validate(inspect(str(alone))[1])
    path, _ = gguf_file(tmp_path, "qwen3-30b-a3b", "qwen3moe", "q4_k_m")
    validator.validate(inspect(str(path))[1])


# ---- the library: specsheet.inspect ---------------------------------------------------------

def test_the_library_gives_the_cli_document(tmp_path: Path) -> None:
    import specsheet

    config, shapes = transformers_checkpoint("qwen3-30b-a3b")
    folder = write_checkpoint(tmp_path / "moe", config, shapes, shards=2)
    alone = write_safetensors(tmp_path / "alone.safetensors", shapes)
    path, _ = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    for ref in (folder, alone, path):
        result = specsheet.inspect(str(ref))
        assert result.to_dict() == inspect(str(ref))[1]
    assert specsheet.inspect(str(folder)).check is not None
