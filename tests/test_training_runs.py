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


# ---- DeepSeek-V3 as its report set it up: DualPipe, FP8 caching, bf16 states, its recipe -----

DEEPSEEK = ("deepseek-v3", "--gpus", "2048", "--tp", "1", "--pp", "16", "--ep", "64",
            "--zero", "1", "--seq-len", "4k")


def test_the_plain_deepseek_command_fits_the_h800_by_its_recipe() -> None:
    doc = run(*DEEPSEEK)
    assert doc["hardware"]["gpu"] == "h800" and doc["fits"]
    assert doc["memory_per_gpu"]["total_bytes"] == 66_978_652_608 < 80 * 10**9
    assert doc["parallelism"]["schedule"] == "dualpipe"
    assert doc["parallelism"]["micro_batches"] == 32  # 2 x pp, the fewest DualPipe takes
    assert doc["optimizer_states"] == "bf16" and doc["activation_cache"] == "fp8"
    recipe = doc["recipe"]
    assert recipe["source"] == "https://arxiv.org/abs/2412.19437"
    assert recipe["applied"] == {
        "gpu": "h800", "seq_len": 4096, "schedule": "dualpipe", "recompute": "selective",
        "recompute_modules": "layernorm,mla_up_proj,moe_act", "optimizer_states": "bf16",
        "activation_cache": "fp8"}
    assert recipe["overridden"] == {} and recipe["not_applied"] == {}
    assert doc["assumptions"][0].startswith("recipe: DeepSeek-V3 technical report, sections")


def test_the_recipe_is_off_with_none_and_yields_to_each_option() -> None:
    off = run(*DEEPSEEK, "--recipe", "none")
    assert off["recipe"] is None and off["hardware"]["gpu"] == "h100-sxm"
    assert off["parallelism"]["schedule"] == "1f1b" and not off["fits"]
    assert off["memory_per_gpu"]["total_bytes"] == 96_907_307_520
    mine = run(*DEEPSEEK, "--gpu", "h100-sxm", "--schedule", "1f1b", "--activation-cache",
               "bf16")
    assert mine["recipe"]["overridden"] == {"gpu": "h800", "schedule": "dualpipe",
                                            "activation_cache": "fp8"}
    assert mine["hardware"]["gpu"] == "h100-sxm" and mine["activation_cache"] == "bf16"
    assert mine["optimizer_states"] == "bf16"  # the items not overridden still apply
    full = run(*DEEPSEEK, "--recompute", "full")  # the recipe's modules need selective
    assert full["recipe"]["not_applied"] == {
        "recompute_modules": "recompute is full, not selective"}
    bare = run("deepseek-v3")  # no pipeline: the schedule does not apply, the rest does
    assert bare["recipe"]["not_applied"] == {"schedule": "the layout has no pipeline (pp 1)"}
    assert bare["flops"]["seq_len"] == 4096 and bare["hardware"]["gpu"] == "h800"
    lora = run("deepseek-v3", "--lora-rank", "8", "--gpus", "64", "--zero", "3")
    assert lora["recipe"]["applied"] == {} and lora["hardware"]["gpu"] == "h100-sxm"
    other = run("qwen3-30b-a3b", "--recipe", "deepseek-v3", "--recompute-modules",
                "core_attn,layernorm,moe_act")  # a recipe by name, on another model
    assert other["activation_cache"] == "fp8" and other["hardware"]["gpu"] == "h800"


def test_fp8_caching_by_the_reports_widths() -> None:
    """Section 3.3.3, the widths written out: a Linear's input in FP8 (1 byte, an fp32 scale
    a 1 x 128 tile), the output projection's input in E5M6 (1.5 bytes), the experts' SwiGLU
    inputs in FP8; norms' inputs, q k v, router logits and a dense SwiGLU's inputs as kept."""
    from specsheet import load
    from specsheet.plan.activations import activation_terms

    def scales(values: int) -> int:
        return 4 * -(-values // 128)

    # Llama 3 8B, a dense layer, nothing recomputed, one sequence of 4,096 tokens
    spec, s = load("llama3-8b").spec, 4096
    d, q, kv, f = 4096, 4096, 1024, 14336
    bf16 = s * (10 * d + 2 * (q + 2 * kv) + 2 * q + 6 * f)  # Korthikanti's, GQA and SwiGLU
    fp8 = s * (4 * d + (d + scales(d)) * 2 + 2 * d  # norm inputs; attn, MLP inputs; masks
               + 2 * (q + 2 * kv)  # q, k, v: the attention operator's
               + q * 3 // 2 + scales(q)  # the output projection's input, E5M6
               + 2 * 2 * f + f + scales(f))  # gate and up (a dense SwiGLU's), their product
    for cache, want in (("bf16", bf16), ("fp8", fp8)):
        t = activation_terms(spec, s, cache=cache)
        assert t.outside_tp + t.inside_tp == want
    # DeepSeek-V3, an MoE layer, its recipe's recomputation: norms' outputs, MLA's q, k, v and
    # the routed experts' SwiGLU outputs rebuilt
    spec = load("deepseek-v3").spec
    d, latents, rope, o, width, shared, experts = 7168, 1536 + 512, 64, 128 * 128, \
        8 * 2048 + 2048, 2048, 256
    moe = s * (4 * d + 2 * d  # norm inputs, masks
               + latents + scales(latents) + 2 * rope  # latents in FP8, the rotary key kept
               + o * 3 // 2 + scales(o)  # E5M6
               + 2 * width + scales(2 * width)  # the experts' SwiGLU inputs, FP8 (3.3.3 (2))
               + shared + scales(shared)  # the shared expert's SwiGLU output (down's input)
               + 4 * experts)  # the router's fp32 logits
    t = activation_terms(spec, s, moe_layer=True, modules=("layernorm", "mla_up_proj",
                                                            "moe_act"), cache="fp8")
    assert t.outside_tp + t.inside_tp == moe == 4096 * 111_488


def test_dualpipe_two_stages_and_pp_plus_one_chunks() -> None:
    """Table 2 of the report and dualpipe.py: rank h holds stages h and pp - 1 - h, pp - h
    micro-batches of the first and h + 1 of the second; its bubble (PP/2 - 1)(F&B + B - 3W)
    with F = W = t, B = 2t, F&B = 3t, over the ideal 3 t m."""
    one = ("llama3-8b", "--gpus", "4", "--pp", "4", "--seq-len", "2k")
    plain = run(*one)
    dual = run(*one, "--schedule", "dualpipe")
    layer = plain["memory_per_gpu"]["activations_per_layer_bytes"]
    s, d, V, L = 2048, 4096, 128256, 32
    head = 2 * s * d + 4 * s * V  # the final norm's input and the fp32 logits, on stage 3
    assert plain["memory_per_gpu"]["activations_bytes"] == 4 * (L // 4) * layer  # 1F1B: pp x
    # rank 0: stage 0 four times, stage 3 (with the head) once; rank 1: 3 and 2 times
    assert dual["memory_per_gpu"]["activations_bytes"] == max(
        (4 + 1) * 8 * layer + head, (3 + 2) * 8 * layer)
    block = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    embedding = V * d
    # two copies: stages 0 and 3 on rank 0, the embedding, the head and the final norm with them
    assert dual["memory_per_gpu"]["weights_bytes"] == 2 * (16 * block + 2 * embedding + d)
    assert dual["parallelism"]["micro_batches"] == 8
    assert dual["parallelism"]["bubble_fraction"] == pytest.approx((4 / 2 - 1) * 2 / (3 * 8))


def test_deepseeks_dualpipe_peak() -> None:
    """The plain command's activations, the busiest rank by the DualPipe schedule: vLLM's
    partition of 61 layers over 16 stages gives stages of 3, 3, 4 x 13, 3 layers, the first 3
    layers dense; rank 0 holds stage 0 (three dense layers) 16 times and stage 15 (three MoE
    layers and the head) once, ranks 2 to 7 two 4-layer MoE stages, 68 layers in all."""
    from specsheet import load
    from specsheet.plan.activations import activation_terms

    spec, s = load("deepseek-v3").spec, 4096
    modules = ("layernorm", "mla_up_proj", "moe_act")

    def layer(moe: bool) -> int:
        t = activation_terms(spec, s, moe, modules, "fp8")
        return t.outside_tp + t.inside_tp

    head = 2 * s * 7168 + 4 * s * 129280
    doc = run(*DEEPSEEK)
    assert doc["memory_per_gpu"]["activations_bytes"] == max(
        16 * 3 * layer(False) + 3 * layer(True) + head, 68 * layer(True))


def test_bf16_optimizer_states() -> None:
    """Section 3.3.3: AdamW's moments in BF16, the master weights in FP32: 4 + 2 + 2 bytes a
    parameter with the optimizer, not 4 + 4 + 4."""
    base = ("llama3.2-1b", "--gpu", "h100-sxm")
    n = run(*base)["params"]["total"]
    assert run(*base)["memory_per_gpu"]["optimizer_bytes"] == 12 * n
    assert run(*base, "--optimizer-states", "bf16")["memory_per_gpu"]["optimizer_bytes"] \
        == 8 * n
    assert run(*base, "--precision", "bf16", "--optimizer-states", "fp32")[
        "memory_per_gpu"]["optimizer_bytes"] == 8 * n  # pure bf16: no master, fp32 m and v
