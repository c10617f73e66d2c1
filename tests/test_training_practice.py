"""``specsheet train`` as runs are set up: FlashAttention's memory by default, LoRA reported as
one step, the defaults named, and when a step does not fit, the changes that would (each
checked by planning it again through the CLI)."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app

runner = CliRunner()


def run(*argv: str) -> Any:
    result = runner.invoke(app, ["train", *argv, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# ---- 1. defaults that match practice ---------------------------------------------------------

README_QLORA = ("llama3-8b", "--lora-rank", "16", "--qlora", "--gpu", "rtx-4090",
                "--seq-len", "4k")


def test_the_readmes_qlora_example_fits_by_default() -> None:
    doc = run(*README_QLORA)
    s, h, L, V = 4096, 4096, 32, 128256
    # LoRA r (in + out) on q, k, v, o, gate, up, down of 32 layers (k and v 1,024 wide)
    adapters = 16 * ((h + h) + 2 * (h + 1024) + (h + h) + 2 * (h + 14336) + (14336 + h)) * L
    assert doc["params"]["trainable"] == adapters == 41_943_040
    mem = doc["memory_per_gpu"]
    assert mem["gradients_bytes"] == 4 * adapters  # fp32 gradients (bf16-mixed)
    assert mem["optimizer_bytes"] == 12 * adapters  # fp32 master, m and v
    # gradient checkpointing (peft's default for QLoRA): each layer keeps its input, 2 s h;
    # the head keeps the final norm's input (2 s h) and fp32 logits (4 s V)
    assert mem["activations_bytes"] == L * 2 * s * h + 2 * s * h + 4 * s * V == 3_208_642_560
    assert mem["frozen_bytes"] == 6_027_780_128  # bnb-nf4, as `count --quant bnb-nf4` stores it
    assert mem["total_bytes"] == 9_991_397_408 and doc["fits"]
    assert doc["flops"]["recompute"] == "full" and doc["attention"] == "flash"
    # no data given: one step, no total, no Chinchilla
    assert doc["tokens_total"] is None and doc["time"] is None and not doc["tokens_default"]
    step = doc["step"]
    assert step["tokens"] == s
    peak = doc["hardware"]["peak_flops_per_s"]
    assert step["seconds"] == pytest.approx(doc["flops"]["per_token_model"] * s / (peak * 0.4))
    assert step["tokens_per_second"] == pytest.approx(s / step["seconds"])
    assert doc["suggestions"] == []
    assert any(a.startswith("defaults: micro-batch 1") and "recompute full" in a
               for a in doc["assumptions"])


def test_the_readmes_qlora_example_as_a_table() -> None:
    result = runner.invoke(app, ["train", *README_QLORA])
    assert result.exit_code == 0, result.stderr
    assert "training on one step of sequence length 4,096" in result.stdout
    assert "9,991,397,408 B" in result.stdout and "(fits)" in result.stdout
    assert "Chinchilla" not in result.stdout


def test_a_bare_run_is_a_plan_a_practitioner_recognises() -> None:
    doc = run("llama3.1-8b")
    assert doc["flops"]["seq_len"] == 8192  # the context (128k) capped at 8k
    assert doc["parallelism"]["gpus"] == 8 and doc["parallelism"]["zero"] == 3
    mem = doc["memory_per_gpu"]
    n = doc["params"]["total"]
    assert mem["weights_bytes"] == -(-2 * n // 8)  # ZeRO-3: bf16 weights over 8 ranks
    assert mem["optimizer_bytes"] == -(-12 * n // 8)
    assert 50e9 < mem["total_bytes"] < 80e9 and doc["fits"]  # GB, not TB
    defaults = doc["assumptions"][0]
    for named in ("sequence length 8,192", "micro-batch 1", "recompute none", "attention flash",
                  "8 GPUs (one node) with ZeRO-3"):
        assert named in defaults


def test_a_model_one_gpu_holds_stays_on_one_gpu() -> None:
    doc = run("gpt2-small")
    assert doc["parallelism"]["gpus"] == 1 and doc["fits"]
    assert "1 GPU, no ZeRO" in doc["assumptions"][0]


def test_attention_full_keeps_the_scores_and_flash_drops_them() -> None:
    s, a = 1024, 12  # gpt2-small, one layer: 5 a s^2 bytes of scores
    flash = run("gpt2-small", "--seq-len", "1k")["memory_per_gpu"]
    full = run("gpt2-small", "--seq-len", "1k", "--attention", "full")["memory_per_gpu"]
    assert full["activations_per_layer_bytes"] - flash["activations_per_layer_bytes"] \
        == 5 * a * s * s
    # the FLOP convention is the same for both: no causal halving
    assert run("gpt2-small", "--seq-len", "1k")["flops"]["per_token_model"] == \
        run("gpt2-small", "--seq-len", "1k", "--attention", "full")["flops"]["per_token_model"]


def test_epochs_over_a_dataset() -> None:
    doc = run("llama3-8b", "--lora-rank", "8", "--epochs", "3", "--dataset-tokens", "50M")
    assert doc["tokens_total"] == 150_000_000 and doc["time"] is not None


# ---- 2. when a step does not fit, what would ---------------------------------------------

GRID = [
    "llama3-8b --gpus 1",
    "llama3-8b --gpus 8 --zero 1 --micro-batch 4",
    "llama3-70b --gpus 64 --tp 8 --seq-len 8k --attention full",
    "llama3.1-70b",
    "llama3-8b --lora-rank 16 --gpu rtx-4090 --recompute none",
    "mixtral-8x7b --gpus 16 --zero 2",
    "gpt2-xl --gpu rtx-4090 --seq-len 1k --micro-batch 8",
    # a published recipe applied (DeepSeek-V3's): --recompute full drops its modules
    "deepseek-v3 --gpus 2048 --pp 16 --ep 64 --zero 1 --micro-batch 2",
    # DualPipe: --pp 8 takes its default of 2 x pp micro-batches
    "llama3-8b --gpus 8 --pp 4 --schedule dualpipe --gpu rtx-4090 --seq-len 4k --zero 1",
    "llama3-8b --gpus 1 --optimizer-states bf16 --activation-cache fp8",
    # no change fits on these 8 GPUs: ZeRO-3 and full recomputation on more copies of them
    "llama3-70b --gpu h100-sxm --gpus 8",
    "llama3-8b --gpu rtx-4090 --gpus 1 --seq-len 4k",
    "llama3-8b --gpu h100-sxm --gpus 64",  # ZeRO-2 holds it alone
]


@pytest.mark.parametrize("argv", GRID)
def test_every_suggestion_is_a_plan_run_with_that_change(argv: str) -> None:
    doc = run(*shlex.split(argv))
    assert not doc["fits"]
    suggestions = doc["suggestions"]
    assert any(s["fits"] for s in suggestions), suggestions
    assert [s["fits"] for s in suggestions] == sorted((s["fits"] for s in suggestions),
                                                      reverse=True)
    for s in suggestions:
        changed = run(*shlex.split(argv), *shlex.split(s["change"]))
        assert changed["memory_per_gpu"]["total_bytes"] == s["bytes_per_gpu"], s
        assert changed["fits"] == s["fits"]
        assert s["bytes_per_gpu"] < doc["memory_per_gpu"]["total_bytes"]


@pytest.mark.parametrize(("argv", "change", "fewer"), [
    ("llama3-70b --gpu h100-sxm --gpus 8", "--zero 3 --recompute full --gpus 24", "--gpus 16"),
    ("llama3.1-405b --gpu h100-sxm --gpus 8", "--zero 3 --recompute full --gpus 160",
     "--gpus 152"),
    ("deepseek-v3 --gpu h100-sxm --gpus 64", "--zero 3 --recompute full --gpus 128", "--gpus 64"),
])
def test_when_nothing_fits_here_the_fewest_copies_of_these_gpus(argv: str, change: str,
                                                                 fewer: str) -> None:
    """No change fits on the run's GPUs: ZeRO-3 with full recomputation on the fewest copies
    of them (whole nodes of 8) that hold the step; one copy fewer does not."""
    doc = run(*shlex.split(argv))
    assert not any(s["fits"] for s in doc["suggestions"][1:])
    first = doc["suggestions"][0]
    assert (first["change"], first["fits"]) == (change, True)
    one_fewer = run(*shlex.split(argv), *shlex.split(change), *shlex.split(fewer))
    assert not one_fewer["fits"]


def test_every_zero_stage_up_is_a_change_of_its_own() -> None:
    """On 64 H100s llama3-8b's step (187 GB a GPU) is held by ZeRO-2 (gradients sharded too:
    61.0 GB) or ZeRO-3 alone, not by ZeRO-1 (92.6 GB): each stage up is suggested, not only
    the next, so a stage that fits is said without a recomputation that costs compute."""
    doc = run("llama3-8b", "--gpu", "h100-sxm", "--gpus", "64")
    said = {s["change"]: (s["bytes_per_gpu"], s["fits"]) for s in doc["suggestions"]}
    assert said["--zero 1"] == (92_611_748_608, False)
    assert said["--zero 2"][1] and said["--zero 3"][1]
    assert said["--zero 3"][0] < said["--zero 2"][0] < said["--zero 1"][0]


def test_more_gpus_are_not_suggested_for_a_given_dp() -> None:
    """--dp fixes the data-parallel ranks: nothing adds GPUs to them."""
    doc = run("llama3-70b", "--gpu", "h100-sxm", "--gpus", "8", "--dp", "8")
    assert not any("--gpus" in s["change"] for s in doc["suggestions"])


def test_the_suggestions_table() -> None:
    result = runner.invoke(app, ["train", "llama3-8b", "--gpus", "1"])
    assert result.exit_code == 0, result.stderr
    assert "what would make the step fit" in result.stdout
    assert "--optimizer adamw-8bit" in result.stdout or "--recompute full" in result.stdout


def test_a_step_that_fits_suggests_nothing() -> None:
    assert run("gpt2-small")["suggestions"] == []
