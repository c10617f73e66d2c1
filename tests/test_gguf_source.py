"""A GGUF file as a model on every command (issue 23, item 6): its metadata as the config, its
tensors' own GGML types as the format. count's weight bytes and serve's weights per GPU are
the file's tensor data as ``inspect`` tallies it from the header (the bytes the file holds,
not a rule's), and the parameters are inspect's, on the eleven GGUF files test_inspect.py
writes with gguf.GGUFWriter from transformers' tensors, and on a file whose types no
llama-quantize file type gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.quant.layouts import gguf_types, quantized_bytes
from tests.checkpoints import write_gguf
from tests.test_inspect import GGUF_CASES, gguf_file

runner = CliRunner()


def run_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def file_bytes(path: Path) -> int:
    """Every tensor's data bytes as the file's header gives them, read by gguf-py."""
    import gguf

    return sum(int(t.n_bytes) for t in gguf.GGUFReader(path).tensors)


@pytest.mark.parametrize(("name", "arch", "ftype"), GGUF_CASES,
                         ids=[f"{n}-{f}" for n, _, f in GGUF_CASES])
def test_count_and_serve_on_a_gguf_file_equal_inspect(name: str, arch: str, ftype: str,
                                                      tmp_path: Path) -> None:
    path, spec = gguf_file(tmp_path, name, arch, ftype)
    inspected = run_json("inspect", str(path))
    counted = run_json("count", str(path))
    served = run_json("serve", str(path), "--gpu", "h100-sxm")
    assert counted["memory"]["weights_bytes"] == inspected["bytes"]["data"] == file_bytes(path)
    assert served["memory_per_gpu"]["weights_bytes"] == inspected["bytes"]["data"]
    assert counted["memory"]["tensor_types"] == inspected["bytes"]["by_dtype"]
    assert counted["params"]["total"] == sum(inspected["params"]["components"].values())
    assert counted["memory"]["format_source"] == "config"
    assert counted["memory"]["format"] == served["model"]["format"] == f"gguf-{ftype}"


# rows of 64 cut in two are whole Q8_0 blocks (DeepSeek-V2-Lite made small has rows of 32,
# which tp 2 cannot cut in any block format: serve refuses it, file or config alike)
TP_CASES = [c for c in GGUF_CASES if c[2] in ("q8_0", "f16") and c[0] != "deepseek-v2-lite"]


@pytest.mark.parametrize(("name", "arch", "ftype"), TP_CASES,
                         ids=[f"{n}-{f}" for n, _, f in TP_CASES])
def test_serve_cuts_a_gguf_files_tensors_in_their_own_types(name: str, arch: str, ftype: str,
                                                            tmp_path: Path) -> None:
    """Under --tp 2 each GPU holds its share of every tensor in the file's type: for a file
    of llama-quantize's rule, what serve gives the same config.json (transformers' small
    config) in that format."""
    from tests.checkpoints import transformers_checkpoint

    path, _ = gguf_file(tmp_path, name, arch, ftype)
    config, _ = transformers_checkpoint(name)
    (tmp_path / "config.json").write_text(json.dumps(config))
    per_gpu = run_json("serve", str(path), "--gpu", "h100-sxm", "--tp", "2")
    ruled = run_json("serve", str(tmp_path / "config.json"), "--quant", f"gguf-{ftype}",
                     "--gpu", "h100-sxm", "--tp", "2")
    weights = per_gpu["memory_per_gpu"]["weights_bytes"]
    assert weights == ruled["memory_per_gpu"]["weights_bytes"]
    assert weights < file_bytes(path)


def test_a_file_of_types_no_rule_gives_is_counted_as_it_is(tmp_path: Path) -> None:
    """Llama 3.2 1B made small in Q8_0 with its embedding in Q4_0 and one down projection in
    F16, as a hand-made mixture (llama-quantize's --tensor-type) writes it: count and serve
    give the file's bytes, which differ from the Q8_0 rule's."""
    config_file, spec = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    types = gguf_types(spec, "q8_0")
    types["token_embd.weight"] = "Q4_0"
    types["blk.0.ffn_down.weight"] = "F16"
    path = write_gguf(tmp_path / "mixed.gguf", "llama", spec, types)
    counted = run_json("count", str(path))
    served = run_json("serve", str(path), "--gpu", "h100-sxm")
    weights = counted["memory"]["weights_bytes"]
    assert weights == served["memory_per_gpu"]["weights_bytes"] == file_bytes(path)
    assert weights == run_json("inspect", str(path))["bytes"]["data"]
    assert weights != quantized_bytes(spec, "gguf-q8_0").weights_bytes
    assert counted["memory"]["tensor_types"]["Q4_0"] == spec.vocab * spec.d_model // 32 * 18
    assert "no llama-quantize file type gives them all" in counted["description"]
    assert file_bytes(config_file) == quantized_bytes(spec, "gguf-q8_0").weights_bytes


def test_settings_read_a_gguf_file_by_its_metadata(tmp_path: Path) -> None:
    """With --set the file is a config, no longer a checkpoint: weights in bf16 by default."""
    path, spec = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    counted = run_json("count", str(path), "--set", "layers=1")
    assert counted["memory"]["format"] == "bf16"
    assert counted["spec"]["layers"] == 1


def test_a_file_whose_tensors_are_not_its_metadatas_model(tmp_path: Path) -> None:
    """A tensor the metadata's model has not (llama.cpp's rope_freqs): the weights are not
    the file's, and the description says so."""
    path, spec = gguf_file(tmp_path, "llama-3.2-1b", "llama", "q8_0")
    from specsheet.quant.tensors import model_tensors

    shapes = {t.name: t.shape for t in model_tensors(spec)}
    types = gguf_types(spec, "q8_0")
    shapes["rope_freqs.weight"] = (spec.head_dim // 2,)
    types["rope_freqs.weight"] = "F32"
    extra = write_gguf(tmp_path / "rope.gguf", "llama", spec, types, tensors=shapes)
    counted = run_json("count", str(extra))
    assert counted["memory"]["format"] == "bf16"
    assert counted["description"].endswith("weights not as the file holds them: it holds "
                                           "rope_freqs.weight, which its metadata's model "
                                           "has not")


# ---- the contract where users are: real processes, pipes that close early, 80 columns --------

def _sources(tmp_path: Path) -> dict[str, str]:
    """A GGUF file, and a sharded safetensors checkpoint's index beside its config.json."""
    from tests.checkpoints import transformers_checkpoint, write_checkpoint

    path, _ = gguf_file(tmp_path, "qwen3-30b-a3b", "qwen3moe", "q4_k_m")
    config, shapes = transformers_checkpoint("qwen3-30b-a3b", dtype="BF16")
    folder = write_checkpoint(tmp_path / "qwen3", config, shapes, shards=2)
    return {"gguf": str(path), "index": str(folder / "model.safetensors.index.json")}


CONTRACT = [["count"], ["serve", "--gpu", "h100-sxm"], ["fit", "--gpu", "rtx-4090"],
            ["inspect"]]


@pytest.mark.parametrize("kind", ["gguf", "index"])
@pytest.mark.parametrize("command", CONTRACT, ids=lambda c: c[0])
def test_a_weights_source_in_a_pipe_and_at_80_columns(command: list[str], kind: str,
                                                      tmp_path: Path) -> None:
    """`specsheet CMD FILE | head -1` under pipefail exits 0 0 with nothing on stderr, and the
    table at 80 columns of a Windows code page is in that code page (a tiny model's prefill
    takes 0.7 \u00b5s, and cp1252 has the micro sign) and no wider."""
    import subprocess

    from tests.commands import SPECSHEET, clean_env, shell

    args = [command[0], _sources(tmp_path)[kind], *command[1:]]
    piped = shell(f"specsheet {' '.join(args)} | head -1; echo \"codes ${{PIPESTATUS[*]}}\"")
    assert piped.stdout.decode().splitlines()[-1] == "codes 0 0", piped.stderr
    assert piped.stderr == b""
    result = subprocess.run([*SPECSHEET, *args], capture_output=True, timeout=60,
                            env=clean_env(COLUMNS="80", PYTHONIOENCODING="cp1252"), check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("cp1252").splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) > 5
