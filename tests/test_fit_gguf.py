"""specsheet fit on a .gguf file: its own tensor types and offsets (the mapped host buffer is
the file's byte range), and a 150,000-token vocabulary's (its speed: bench/fit.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from checkpoints import write_gguf
from commands import SPECSHEET, clean_env
from typer.testing import CliRunner

import specsheet
from specsheet.api.fit import FitRequest, fit
from specsheet.cli.app import app
from specsheet.quant.layouts import gguf_types

runner = CliRunner()


@pytest.fixture(scope="module")
def qwen_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Qwen2.5 0.5B in Q8_0 with its 151,936-token vocabulary (the header, the data sparse)."""
    spec = specsheet.load("qwen2.5-0.5b").spec
    path = tmp_path_factory.mktemp("gguf") / "qwen2.5-0.5b-q8_0.gguf"
    return write_gguf(path, "qwen2", spec, gguf_types(spec, "q8_0"), vocab_tokens=spec.vocab,
                      data=False)


def test_a_file_places_its_own_tensors(qwen_file: Path) -> None:
    result = runner.invoke(app, ["fit", str(qwen_file), "--gpu", "rtx-4090", "--ctx", "8192",
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["quant"] == "file" and doc["file"] == str(qwen_file)
    same = fit("qwen2.5-0.5b", FitRequest(gpu=("rtx-4090",), ctx=8192, quant="gguf-q8_0"))
    assert doc["devices"][0]["model_bytes"] == same.placement.devices[0].model_bytes
    assert doc["devices"][0]["kv_bytes"] == 8192 * 24 * 2 * (2 * 64) * 2
    # tied: the host keeps token_embd (its file range), the GPU a copy as the output layer
    embedding = 151936 * 896 // 32 * 34
    assert doc["host"]["model_bytes"] == embedding
    assert doc["command"][:3] == ["llama-server", "-m", str(qwen_file)]


def test_a_partial_placement_maps_a_file_range(qwen_file: Path) -> None:
    """With blocks on the host the mapped buffer spans the file from the first host tensor to
    the end of the last: whatever lies between (here nothing else) is counted."""
    some = fit(str(qwen_file), FitRequest(gpu=("rtx-4090",), ctx=4096, n_gpu_layers=13))
    none = fit(str(qwen_file), FitRequest(gpu=("rtx-4090",), ctx=4096, n_gpu_layers=25))
    assert some.placement.host.layers == 12 and none.placement.host.layers == 0
    assert some.placement.host.model_bytes > none.placement.host.model_bytes


def test_a_file_with_a_format_is_bad_input(qwen_file: Path) -> None:
    result = runner.invoke(app, ["fit", str(qwen_file), "--quant", "gguf-q4_k_m"])
    assert result.exit_code == 2
    assert "a .gguf file holds its own tensor types" in result.stderr


def test_fit_on_a_150k_vocabulary_file_answers(qwen_file: Path) -> None:
    """The header read (its 151,936 tokens skipped, not built), every tensor placed, the
    searches for the GPU layers and max_ctx, the document and the tables, in process and as a
    real process. How fast is bench/fit.py's to measure (target 0.5 s), not a test's."""
    from specsheet.views.fit import fit_views

    got = fit(str(qwen_file), FitRequest(gpu=("rtx-4090",)))
    assert got.placement.on_gpu == 25 and got.max_ctx == 32768  # every layer; the model's ctx
    assert got.to_dict()["layers"]["on_gpu"] == 25 and fit_views(got)
    result = subprocess.run([*SPECSHEET, "fit", str(qwen_file), "--gpu", "rtx-4090"],
                            capture_output=True, env=clean_env(COLUMNS="100"), timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert b"25/25 layers" in result.stdout


def _mla_file(path: Path) -> Path:
    """A two-block DeepSeek-V2-Lite-shaped GGUF as convert_hf_to_gguf.py writes MLA since PR
    #12801: one KV head, key_length kv_lora_rank + rope (576), value_length kv_lora_rank (512),
    the head sizes in key_length_mla / value_length_mla, attn_k_b and attn_v_b (header only)."""
    import math
    import os

    import gguf
    import numpy as np

    w = gguf.GGUFWriter(str(path), "deepseek2")
    layers, d, heads, vocab = 2, 2048, 16, 102400
    w.add_block_count(layers)
    w.add_context_length(163840)
    w.add_embedding_length(d)
    w.add_feed_forward_length(10944)
    w.add_head_count(heads)
    w.add_head_count_kv(1)
    w.add_key_length(512 + 64)
    w.add_value_length(512)
    w.add_key_length_mla(192)
    w.add_value_length_mla(128)
    w.add_rope_dimension_count(64)
    w.add_kv_lora_rank(512)
    w.add_vocab_size(vocab)
    w.add_leading_dense_block_count(layers)
    w.add_expert_count(64)
    w.add_expert_used_count(6)
    w.add_expert_feed_forward_length(1408)
    w.add_expert_shared_count(2)
    w.add_file_type(1)
    end = 0
    f32, f16 = gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16

    def tensor(name: str, shape: tuple[int, ...], kind: gguf.GGMLQuantizationType = f16) -> None:
        nonlocal end
        block, size = gguf.GGML_QUANT_SIZES[kind]
        nbytes = math.prod(shape) // block * size
        w.add_tensor_info(name, shape, np.dtype(np.float32), nbytes, raw_dtype=kind)
        end += w.ggml_pad(nbytes, w.data_alignment)

    tensor("token_embd.weight", (vocab, d))
    tensor("output_norm.weight", (d,), f32)
    tensor("output.weight", (vocab, d))
    for i in range(layers):
        b = f"blk.{i}."
        for name, shape in (("attn_q", (heads * 192, d)), ("attn_kv_a_mqa", (576, d)),
                            ("attn_k_b", (heads, 512, 128)), ("attn_v_b", (heads, 128, 512)),
                            ("attn_output", (d, heads * 128)), ("ffn_gate", (10944, d)),
                            ("ffn_up", (10944, d)), ("ffn_down", (d, 10944))):
            tensor(f"{b}{name}.weight", shape)
        for name, width in (("attn_norm", d), ("attn_kv_a_norm", 512), ("ffn_norm", d)):
            tensor(f"{b}{name}.weight", (width,), f32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    os.truncate(path, w.ggml_pad(path.stat().st_size, w.data_alignment) + end)
    return path


def test_an_mla_file_of_the_current_conversion_caches_one_head(tmp_path: Path) -> None:
    """attn_k_b in the file: each block caches kv_lora_rank + rope = 576 K values and 512 V
    values a token, one head (llama-hparams.cpp is_mla, n_embd_k_gqa with n_head_kv 1)."""
    path = _mla_file(tmp_path / "deepseek-v2-lite-mla.gguf")
    got = fit(str(path), FitRequest(gpu=("rtx-4090",), ctx=4096, n_gpu_layers=3))
    assert got.placement.devices[0].kv_bytes == 4096 * 2 * (576 + 512) * 2


def test_a_file_that_does_not_fit_is_told_memory_not_a_format(qwen_file: Path) -> None:
    """A .gguf file holds its own types: the way to fit is memory, never --quant."""
    from specsheet.api.fit_ways import fit_ways

    request = FitRequest(host_memory=100 << 20)
    placed = fit(str(qwen_file), request)
    assert not placed.placement.fits
    ways = fit_ways(str(qwen_file), request, placed)
    assert ways.quant is None and ways.host_memory == 1 << 30
    assert fit(str(qwen_file), request._replace(host_memory=1 << 30)).placement.fits_estimate
    result = runner.invoke(app, ["fit", str(qwen_file), "--host-memory", "100MiB"])
    assert result.exit_code == 0 and "It fits with --host-memory 1GiB." in result.stdout
