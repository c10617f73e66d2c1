"""Everything the CLI can do, the library can do: each result's ``to_dict()`` equals the CLI's
``--json`` document for the same inputs, over a grid of presets and options."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.api.check import ServeLimits
from specsheet.api.serve import ServeRequest
from specsheet.cli.app import app

runner = CliRunner()


def cli_json(*argv: str) -> Any:
    result = runner.invoke(app, [*argv, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def same(document: dict[str, Any]) -> Any:
    """The document as a JSON reader sees it (tuples as lists)."""
    return json.loads(json.dumps(document))


SERVE = [
    ("llama3-70b", {"gpu": "h100-sxm", "gpus": 8}, []),
    ("llama3-8b", {"gpu": "a100-80gb-sxm", "max_model_len": 4096, "price": 1.5},
     ["--max-model-len", "4096", "--price", "1.5"]),
    ("mixtral-8x7b", {"gpu": "h100-sxm", "tp": 2, "ep": True, "kv_memory": "20GB"},
     ["--tp", "2", "--ep", "--kv-memory", "20GB"]),
    ("granite-4.0-h-tiny", {"gpu": "h100-sxm", "kv_memory": 40 * 2**30,
                            "max_model_len": 131072},
     ["--kv-memory", "40GiB", "--max-model-len", "128k"]),
    ("gpt2-small", {"gpu": "rtx-4090", "concurrency": 4, "mfu": 0.3, "mbu": 0.6},
     ["--concurrency", "4", "--mfu", "0.3", "--mbu", "0.6"]),
]


@pytest.mark.parametrize(("model", "options", "argv"), SERVE, ids=[c[0] for c in SERVE])
def test_serve(model: str, options: dict[str, Any], argv: list[str]) -> None:
    gpu = options.pop("gpu")
    layout = [] if "gpus" not in options else ["--gpus", str(options["gpus"])]
    expected = cli_json("serve", model, "--gpu", gpu, *layout, *argv)
    assert same(specsheet.serve(specsheet.load(model), gpu, **options).to_dict()) == expected


def test_serve_quantized() -> None:
    expected = cli_json("serve", "llama3.1-70b", "--gpu", "l40s", "--gpus", "2",
                        "--quant", "awq-int4")
    served = specsheet.serve(specsheet.load("llama3.1-70b"), "l40s", gpus=2, quant="awq-int4")
    assert same(served.to_dict()) == expected


TRAIN = [
    ("gpt2-small", {"zero": 2, "gpus": 8, "micro_batch": 16},
     ["--zero", "2", "--gpus", "8", "--micro-batch", "16"]),
    ("llama3.1-8b", {"tokens_total": "15.6T", "gpus": 1024, "tp": 2},
     ["--tokens-total", "15.6T", "--gpus", "1024", "--tp", "2"]),
    ("llama3-8b", {"lora_rank": 16, "qlora": True, "seq_len": 4096, "gpu": "rtx-4090"},
     ["--lora-rank", "16", "--qlora", "--seq-len", "4k", "--gpu", "rtx-4090"]),
    ("mixtral-8x7b", {"fsdp": True, "gpus": 64, "recompute": "full", "price": 2.0},
     ["--fsdp", "--gpus", "64", "--recompute", "full", "--price", "2"]),
    ("mixtral-8x7b", {"gpus": 32, "pp": 4, "ep": 8, "cp": 2, "zero": 1, "seq_len": 4096,
                      "schedule": "interleaved", "vpp": 2, "tokens_per_second": 2000.0,
                      "per_gpu": True},
     ["--gpus", "32", "--pp", "4", "--ep", "8", "--cp", "2", "--zero", "1", "--seq-len", "4k",
      "--schedule", "interleaved", "--vpp", "2", "--tokens-per-second", "2000", "--per-gpu"]),
    ("llama3-8b", {"gpus": 1}, ["--gpus", "1"]),  # with suggestions
]


@pytest.mark.parametrize(("model", "options", "argv"), TRAIN, ids=[c[0] for c in TRAIN])
def test_train(model: str, options: dict[str, Any], argv: list[str]) -> None:
    expected = cli_json("train", model, *argv)
    assert same(specsheet.train(specsheet.load(model), **options).to_dict()) == expected


SWEEP = [
    ("gpt2-small", {"tokens": [256, 512, 1024]}, ["--tokens", "256,512,1024"]),
    ("llama3.1-8b", {"tokens": [1024, 8192, 131072], "gpu": "h100-sxm"},
     ["--tokens", "1k,8k,128k", "--gpu", "h100-sxm"]),
    ("llama3-8b", {"quant": [None, "gptq-int4", "gguf-q4_k_m"], "batch": [1, 8]},
     ["--quant", "none,gptq-int4,gguf-q4_k_m", "--batch", "1,8"]),
    ("gpt2-small", {"fields": {"layers": [12, 24, 48]}}, ["--layers", "12,24,48"]),
]


@pytest.mark.parametrize(("model", "options", "argv"), SWEEP,
                         ids=[f"{c[0]}-{'-'.join(c[1])}" for c in SWEEP])
def test_sweep(model: str, options: dict[str, Any], argv: list[str]) -> None:
    expected = cli_json("sweep", model, *argv)
    assert same(specsheet.sweep(model, **options).to_dict()) == expected


def test_check_with_limits_and_a_gpu() -> None:
    expected = cli_json("check", "llama3-8b", "llama3-70b", "--max-weights", "16GB",
                        "--gpu", "h100-sxm", "--min-concurrency", "10")
    reports = [specsheet.report(specsheet.load(m)) for m in ("llama3-8b", "llama3-70b")]
    checked = specsheet.check(reports, {"memory.weights_bytes": 16 * 10**9},
                              ServeRequest("h100-sxm"), ServeLimits(min_concurrency=10))
    assert same(checked.to_dict()) == expected
    assert checked.ok is expected["ok"] is False


def test_compare_served() -> None:
    expected = cli_json("compare", "llama3-8b", "mistral-7b", "--tokens", "8k",
                        "--gpu", "h100-sxm", "--price", "2.5")
    reports = [specsheet.report(specsheet.load(m), tokens=8192)
               for m in ("llama3-8b", "mistral-7b")]
    compared = specsheet.compare(reports, ServeRequest("h100-sxm", price=2.5))
    assert same(compared.to_dict()) == expected


def test_an_unknown_option_is_named() -> None:
    with pytest.raises(specsheet.SpecError, match=r"unknown serving option 'gpu_count'") as e:
        specsheet.serve(specsheet.load("llama3-8b"), "h100-sxm", gpu_count=2)
    assert e.value.field == "gpu_count"
    with pytest.raises(specsheet.SpecError, match=r"did you mean 'micro_batch'"):
        specsheet.train(specsheet.load("llama3-8b"), micro_batches=2)


def test_errors_name_the_argument_in_the_library_and_the_option_in_the_cli() -> None:
    with pytest.raises(specsheet.SpecError) as e:
        specsheet.serve(specsheet.load("llama3-70b"), "h100-sxm", tp=3)
    assert e.value.field == "tp" and str(e.value).startswith("tp: 3 does not divide")
    result = runner.invoke(app, ["serve", "llama3-70b", "--gpu", "h100-sxm", "--tp", "3"])
    assert result.exit_code == 2
    assert result.stderr.startswith("specsheet: error: option --tp: 3 does not divide")


FIT = [
    ("llama3-8b", {"gpu": ("rtx-4090",), "ctx": 8192}, ["--gpu", "rtx-4090", "--ctx", "8192"]),
    ("qwen3-30b-a3b", {"gpu": ("rtx-4090", "rtx-3090"), "ctx": 32768, "n_cpu_moe": 4,
                       "cache_type_k": "q8_0", "cache_type_v": "q8_0"},
     ["--gpu", "rtx-4090,rtx-3090", "--ctx", "32k", "--n-cpu-moe", "4", "-ctk", "q8_0", "-ctv",
      "q8_0"]),
    ("mistral-7b", {"gpu": ("apple-m3-max",), "ctx": "auto", "engine": "ollama"},
     ["--gpu", "apple-m3-max", "--ctx", "auto", "--engine", "ollama"]),
]


@pytest.mark.parametrize(("model", "options", "argv"), FIT, ids=[c[0] for c in FIT])
def test_fit(model: str, options: dict[str, Any], argv: list[str]) -> None:
    expected = cli_json("fit", model, *argv)
    assert same(specsheet.fit(model, specsheet.FitRequest(**options)).to_dict()) == expected
