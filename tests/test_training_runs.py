"""Training as runs are laid out: context, expert and pipeline parallelism, HSDP, offload and
measured runs, each against an independent derivation; and the published runs of
tests/data/training_runs.yaml with their sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from specsheet.cli.app import app

runner = CliRunner()
RUNS = yaml.safe_load((Path(__file__).parent / "data" / "training_runs.yaml").read_text())
NAMED = {r["name"]: r for r in RUNS}


def run(*argv: str) -> Any:
    result = runner.invoke(app, ["train", *argv, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("case", RUNS, ids=[r["name"] for r in RUNS])
def test_published_runs(case: dict[str, Any]) -> None:
    doc = run(*case["args"])
    assert case["source"].startswith("https://")
    if "total_bytes" in case:
        assert doc["memory_per_gpu"]["total_bytes"] == case["total_bytes"]
    assert doc["fits"] is case["fits"]


def test_the_deepseek_layout_shows_what_would_fit() -> None:
    doc = run(*RUNS[0]["args"])
    assert doc["parallelism"]["ep"] == 64 and doc["parallelism"]["dp"] == 128
    assert {"change": "--recompute full", "fits": True} .items() <= next(
        s for s in doc["suggestions"] if s["change"] == "--recompute full").items()


def test_the_long_context_stage_is_memory_per_gpu_in_gb() -> None:
    doc = run(*NAMED["llama 3.1 405B long-context stage (128k, CP 16)"]["args"])
    assert doc["parallelism"]["gpus"] == 16384 and doc["parallelism"]["cp"] == 16
    assert doc["flops"]["seq_len"] == 131072
    assert 85e9 < doc["memory_per_gpu"]["total_bytes"] < 1e12


def test_deepseeks_recomputation_per_layer() -> None:
    base = RUNS[0]["args"]
    plain = run(*base)["memory_per_gpu"]["activations_per_layer_bytes"]
    recomputed = run(*RUNS[1]["args"])["memory_per_gpu"]["activations_per_layer_bytes"]
    s, d, heads, qk, v = 4096, 7168, 128, 192, 128
    # the norms' outputs (2 s d each, two norms) and MLA's q, k, v (2 s a (2 qk + v)) go
    assert plain - recomputed == 4 * s * d + 2 * s * heads * (2 * qk + v)


# ---- context parallelism ---------------------------------------------------------------------

def test_context_parallel_splits_the_sequence() -> None:
    cp = run("llama3-8b", "--gpus", "8", "--cp", "2", "--seq-len", "8k", "--zero", "1")
    whole = run("llama3-8b", "--gpus", "4", "--seq-len", "4k", "--zero", "1")
    # each rank keeps the activations of half the sequence
    assert cp["memory_per_gpu"]["activations_bytes"] == whole["memory_per_gpu"]["activations_bytes"]
    # ZeRO shards over dp x cp = 4 x 2 ranks
    n = cp["params"]["total"]
    assert cp["parallelism"]["dp"] == 4
    assert cp["memory_per_gpu"]["optimizer_bytes"] == -(-12 * n // 8)
    # the ring: K and V (1,024 wide each, bf16) of 4,096 tokens, 3 (cp - 1) passes, 32 layers
    assert cp["parallelism"]["ring_bytes_per_gpu"] == 4096 * 2 * 1024 * 2 * 32 * 3


# ---- expert parallelism ----------------------------------------------------------------------

def test_expert_parallel_shards_the_experts_and_their_states() -> None:
    doc = run("mixtral-8x7b", "--gpus", "8", "--ep", "8", "--zero", "1", "--seq-len", "4k")
    L, d, f, E, k = 32, 4096, 14336, 8, 2
    experts = L * E * 3 * d * f
    dense = doc["params"]["total"] - experts
    here = dense + experts // 8  # one expert a layer on each of the 8 GPUs
    mem = doc["memory_per_gpu"]
    assert mem["weights_bytes"] == 2 * here and mem["gradients_bytes"] == 4 * here
    # ZeRO-1: the dense states over the 8 data-parallel ranks; the experts' over the expert
    # data-parallel ranks, 8 x 1 / 8 = 1
    assert mem["optimizer_bytes"] == -(-12 * dense // 8) + 12 * experts // 8
    # all-to-all: 4,096 tokens x 32 layers x (dispatch + combine, forward + backward) x k x d
    # x 2 bytes, 7/8 of it leaving the GPU
    assert doc["parallelism"]["all_to_all_bytes_per_gpu"] == 4096 * L * 4 * k * d * 2 * 7 // 8


# ---- pipeline schedules ----------------------------------------------------------------------

def test_schedules_in_flight_activations_and_bubbles() -> None:
    base = ["llama3-8b", "--gpus", "4", "--pp", "4", "--seq-len", "4k", "--grad-accum", "8"]
    one = run(*base)
    inter = run(*base, "--schedule", "interleaved", "--vpp", "2")
    zb = run(*base, "--schedule", "zero-bubble")
    per_layer = one["memory_per_gpu"]["activations_per_layer_bytes"]
    assert one["memory_per_gpu"]["activations_bytes"] == 32 * per_layer  # pp x L / pp
    # Korthikanti et al. 2022, 4.2.3: L (1 + (p - 1) / (p v)) = 32 x 11 / 8 = 44 layers
    assert inter["memory_per_gpu"]["activations_bytes"] == 44 * per_layer
    assert zb["memory_per_gpu"]["activations_bytes"] == 32 * per_layer  # ZB-H1: 1F1B's
    assert one["parallelism"]["bubble_fraction"] == pytest.approx(3 / 8)
    assert inter["parallelism"]["bubble_fraction"] == pytest.approx(3 / 16)
    assert zb["parallelism"]["bubble_fraction"] == pytest.approx(1 / 8)
    assert one["step"]["tokens"] == 8 * 4096


def test_hsdp_and_offload() -> None:
    n = run("llama3-8b", "--gpus", "64", "--zero", "3")["params"]["total"]
    hsdp = run("llama3-8b", "--gpus", "64", "--zero", "3", "--shard-group", "8")
    assert hsdp["memory_per_gpu"]["weights_bytes"] == -(-2 * n // 8)
    off = run("llama3-8b", "--gpus", "8", "--zero", "2", "--offload", "optimizer")
    assert off["memory_per_gpu"]["optimizer_bytes"] == 0
    assert off["memory_per_gpu"]["weights_bytes"] == 2 * n


# ---- from a measured run -------------------------------------------------------------------

@pytest.mark.parametrize("per_gpu", [False, True])
def test_tokens_per_second_round_trips_through_mfu(per_gpu: bool) -> None:
    base = ["llama3-8b", "--gpus", "64", "--zero", "1", "--tokens-total", "1T", "--price", "2"]
    rate = 3000.0 if per_gpu else 500_000.0
    measured = run(*base, "--tokens-per-second", str(rate), *(["--per-gpu"] if per_gpu else []))
    mfu = measured["measured"]["mfu"]
    total = rate * 64 if per_gpu else rate
    peak = measured["hardware"]["peak_flops_per_s"]
    assert mfu == pytest.approx(measured["flops"]["per_token_model"] * total / (64 * peak))
    back = run(*base, "--mfu", repr(mfu))
    assert back["step"]["tokens_per_second"] == pytest.approx(total, rel=1e-12)
    assert back["time"]["seconds"] == pytest.approx(1e12 / total, rel=1e-12)
    assert measured["time"]["usd"] == pytest.approx(1e12 / total * 64 / 3600 * 2, rel=1e-12)


def test_a_measured_step_time() -> None:
    doc = run("llama3-8b", "--gpus", "8", "--zero", "3", "--step-time", "1.5")
    step = doc["step"]
    assert step["seconds"] == pytest.approx(1.5)
    assert doc["measured"]["tokens_per_second"] == pytest.approx(step["tokens"] / 1.5)
    assert any(a.startswith("MFU ") and "a step of 1.5 s" in a for a in doc["assumptions"])
