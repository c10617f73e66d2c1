"""``specsheet train``: training FLOPs against transformers' backward, the ZeRO paper's worked
example, Korthikanti et al.'s activation formulas, LoRA and QLoRA, and the command itself."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_properties import specs
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.hardware.catalog import builtin
from specsheet.model.flops import (
    depthwise_gradient_overcount,
    forward_flops,
    megatron_estimate,
    palm_estimate,
    ssm_backward_flops,
    training_flops,
)
from specsheet.model.params import count_params, mlp_weights, ssm_conv_channels
from specsheet.model.spec import ModelSpec
from specsheet.plan.parallel import Parallel, check_training_parallel
from specsheet.plan.training import (
    RECIPES,
    activation_terms,
    activations,
    layer_activation_bytes,
    lora_params,
    model_matrices,
    optimizer_bytes,
    plan_training,
)
from specsheet.sources.resolve import load_file, resolve

TESTS = Path(__file__).resolve().parent
GOLDENS = sorted((TESTS / "golden").glob("*.json"))
runner = CliRunner()


GPT3_FILE = str(TESTS / "data" / "models" / "gpt3-175b.yaml")  # no checkpoint, no preset


def load_preset(name: str) -> ModelSpec:
    return resolve(GPT3_FILE if name == "gpt3-175b" else name).spec


def run(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["train", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


# ---- FLOPs against transformers ----------------------------------------------------------

def test_every_golden_records_a_training_step() -> None:
    assert len(GOLDENS) >= 40
    assert all("train_flops_per_token" in json.loads(p.read_text()) for p in GOLDENS)


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_forward_and_backward_match_transformers(path: Path) -> None:
    """FlopCounterMode around a forward and ``.backward()`` in transformers: the backward is
    exactly twice the forward for every attention family, more for the hybrids (their
    state-space and gated DeltaNet layers), and specsheet's training count is the golden's
    (for Llama 4, less the unchosen experts transformers computes, three times; for the
    hybrids, less FlopCounterMode's count of each depthwise convolution's weight gradient as a
    dense C x C convolution, which is C - 1 times the work done)."""
    g = json.loads(path.read_text())
    spec = load_file(TESTS / "data" / f"{path.stem}.json").spec
    routed = g.get("flops_per_token_routed")
    for tokens, step in g["train_flops_per_token"].items():
        assert step["forward"] == g["flops_per_token"][tokens]  # training mode changes nothing
        ours = training_flops(spec, int(tokens))
        assert ours.forward == step["forward"] or routed
        if ours.ssm_backward:
            assert step["train"] > 3 * step["forward"]
        else:
            assert step["train"] == 3 * step["forward"]
        expected = step["train"]
        if routed:
            unchosen = 2 * spec.moe_layers * (spec.experts - spec.experts_per_token) * \
                mlp_weights(spec, spec.expert_d_ff)
            expected -= 3 * unchosen
        if ours.ssm_backward:
            expected -= depthwise_gradient_overcount(spec, int(tokens))
        assert ours.model == expected, f"T = {tokens}"


def _mm(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """FlopCounterMode's count of a (batched) matrix product: 2 x batch x m x k x n."""
    *batch, m, k = a
    return 2 * (batch[0] if batch else 1) * m * k * b[-1]


# one layer's backward at T = 8 as FlopCounterMode logged it, op by op (a TorchDispatchMode
# around transformers 5.24's PyTorch path, the shapes of each counted op's inputs); the
# convolution's backward is FlopCounterMode's own figure for aten.convolution_backward
LOGGED_BACKWARD = {
    # Jamba 1.5 Mini, a Mamba layer: out_proj, 8 steps of C·h (two products each), dt_proj,
    # x_proj, the convolution, in_proj
    ("jamba-1.5-mini", "mamba"): (
        [((4096, 8), (8, 8192)), ((8192, 4096), (4096, 8))]
        + 8 * [((1, 16, 8192), (1, 8192, 1)), ((1, 8192, 1), (1, 1, 16))]
        + [((8192, 8), (8, 256)), ((8, 8192), (8192, 256)), ((288, 8), (8, 8192)),
           ((8192, 288), (288, 8)), ((16384, 8), (8, 4096)), ((8, 16384), (16384, 4096))],
        5_906_300_928),
    # mamba2-780m, a Mamba-2 layer (one chunk of 256): out_proj, the chunked scan's einsums,
    # the convolution, in_proj
    ("mamba2-780m", "mamba2"): (
        [((1536, 8), (8, 3072)), ((8, 1536), (1536, 3072)),
         ((48, 128, 256), (48, 256, 256)), ((48, 128, 256), (48, 256, 64)),
         ((48, 2, 2), (48, 2, 8192)), ((48, 2, 8192), (48, 8192, 2)),
         ((48, 256, 256), (48, 256, 128)), ((48, 256, 256), (48, 256, 64)),
         ((48, 256, 64), (48, 64, 128)), ((48, 256, 64), (48, 64, 128)),
         ((48, 256, 64), (48, 64, 256)), ((48, 64, 128), (48, 128, 256)),
         ((6448, 8), (8, 1536)), ((8, 6448), (6448, 1536))],
        974_944_256),
}


@pytest.mark.parametrize(("name", "kind"), list(LOGGED_BACKWARD))
def test_a_state_space_layers_backward_op_by_op(name: str, kind: str) -> None:
    """A second formulation: one layer's backward summed from the operations FlopCounterMode
    counted, against ``ssm_backward_flops``. FlopCounterMode counts the depthwise
    convolution's weight gradient as a dense C x C convolution (its formula ignores groups):
    C x the forward, where the work is 1 x; specsheet counts the work."""
    spec = load_file(TESTS / "data" / f"{name}.json").spec
    products, conv_backward = LOGGED_BACKWARD[(name, kind)]
    channels = ssm_conv_channels(spec, kind)
    conv_forward = 2 * channels * 4 * (8 + 4 - 1)
    assert conv_backward == (1 + channels) * conv_forward
    assert ssm_backward_flops(spec, kind, 8) == sum(_mm(a, b) for a, b in products) + \
        2 * conv_forward


def test_hybrid_training_says_what_it_counts() -> None:
    """A model without MLPs trains (mamba2-780m: no MLP layer at all), and the output names the
    state-space backward and the share of FlopCounterMode's depthwise weight gradient."""
    doc = run(str(TESTS / "data" / "mamba2-780m.json"), "--seq-len", "128")
    golden = json.loads((TESTS / "golden" / "mamba2-780m.json").read_text())
    step = golden["train_flops_per_token"]["128"]
    over = depthwise_gradient_overcount(load_file(TESTS / "data" / "mamba2-780m.json").spec, 128)
    assert over > 0
    assert doc["flops"]["per_token_model"] == step["train"] - over
    assert doc["flops"]["ssm_backward_per_token"] > 0
    assert any("FlopCounterMode" in a and "groups" in a for a in doc["assumptions"])
    assert run("llama3-8b")["flops"]["ssm_backward_per_token"] == 0


def test_recomputation_and_causal_attention() -> None:
    spec = load_preset("llama3-8b")
    full = training_flops(spec, 4096)
    core = full.attention_core
    assert core == forward_flops(spec, 4096).attention_context
    assert training_flops(spec, 4096, "full").hardware == 4 * full.forward
    selective = training_flops(spec, 4096, "selective")
    assert selective.hardware == full.model + core and selective.model == full.model
    causal = training_flops(spec, 4096, attention="causal")
    # the lower triangle with its diagonal: (S + 1) / 2S of the dense scores
    assert Fraction(causal.attention_core, core) == Fraction(4097, 2 * 4096)
    assert causal.forward == full.forward - core + causal.attention_core


def test_estimates_follow_their_papers() -> None:
    """Megatron's closed forms (Narayanan et al. 2021, eq. in section 5.1) for a sequence of
    s tokens, and PaLM's 6N + 12 L H Q T, written independently of model/flops.py."""
    spec = load_preset("gpt3-175b")
    B, s, layer, h, V = 1, 2048, 96, 12288, 50257
    with_recompute = 96 * B * s * layer * h**2 * (1 + Fraction(s, 6 * h)
                                                  + Fraction(V, 16 * layer * h))
    without = 72 * B * s * layer * h**2 * (1 + Fraction(s, 6 * h) + Fraction(V, 12 * layer * h))
    assert megatron_estimate(spec, s, recompute=True) * s == with_recompute
    assert megatron_estimate(spec, s, recompute=False) * s == without
    n = 174_000_000_000
    assert palm_estimate(spec, n, s) == 6 * n + 12 * 96 * 96 * 128 * 2048
    # for GPT-3's shape (a 4h MLP, h x h attention, a tied head), Megatron's count without
    # recompute is exactly specsheet's: biases, norms and the position lookup are not matmuls
    assert megatron_estimate(spec, s, False) == training_flops(spec, s).model


# ---- model states: the ZeRO paper ----------------------------------------------------------

# 7.5 billion parameters exactly: 24 layers of 12 d^2 (d = 5,000) and a 60,000 x 5,000 table
ZERO_MODEL = ("--set", "layers=24", "--set", "d_model=5000", "--set", "heads=40",
              "--set", "vocab=60000", "--set", "context=2048", "--set", "norm=none",
              "--set", "attn_bias=false", "--set", "mlp_bias=false", "--set", "positions=none")


@pytest.mark.parametrize(("stage", "exact", "paper_gb"), [
    (0, 120_000_000_000, "120"), (1, 31_406_250_000, "31.4"), (2, 16_640_625_000, "16.6"),
    (3, 1_875_000_000, "1.9"),
])
def test_zero_papers_worked_example(stage: int, exact: int, paper_gb: str) -> None:
    """Rajbhandari et al. 2020, Figure 1: 7.5B parameters, mixed-precision Adam (K = 12),
    64 data-parallel GPUs: 120, 31.4, 16.6 and 1.9 GB of model states for stages 0 to 3."""
    doc = run(*ZERO_MODEL, "--gpus", "64", "--zero", str(stage), "--precision", "fp16-mixed")
    assert doc["params"]["total"] == 7_500_000_000
    memory = doc["memory_per_gpu"]
    states = memory["weights_bytes"] + memory["gradients_bytes"] + memory["optimizer_bytes"]
    assert states == exact
    assert f"{states / 1e9:.{len(paper_gb.partition('.')[2])}f}" == paper_gb


def test_fsdp_is_stage_3() -> None:
    assert run(*ZERO_MODEL, "--gpus", "64", "--fsdp")["memory_per_gpu"] == \
        run(*ZERO_MODEL, "--gpus", "64", "--zero", "3")["memory_per_gpu"]


def test_megatrons_distributed_optimizer_table() -> None:
    """Megatron-LM docs (distributed optimizer): bytes per parameter without / with it over d
    ranks: bf16 parameters with fp32 gradients 18 / 6 + 12/d; fp32 16 / 8 + 8/d."""
    spec = load_preset("gpt2-small")
    params = count_params(spec)
    n = params.total
    for precision, whole, kept, sharded in (("bf16-mixed", 18, 6, 12), ("fp32", 16, 8, 8)):
        for zero, dp in ((0, 1), (1, 4)):
            layout = Parallel(gpus=dp, dp=dp, tp=1, pp=1, sp=False, zero=zero)
            plan = plan_training(spec, builtin("h100-sxm"), layout, precision=precision)
            s = plan.states
            total = s.weights_bytes + s.gradients_bytes + s.optimizer_bytes
            assert total == (whole * n if zero == 0 else kept * n + -(-sharded * n // dp))


def test_tensor_parallel_ranks_hold_their_cut() -> None:
    """Llama 3 8B on tp = 8, written out: every block's q, k, v, o, gate, up and down cut 8
    ways (8 KV heads: one each), its two norms whole; the embedding and the head 128,256 / 8
    rows each; the final norm whole. bf16-mixed Adam: 2 + 4 + 12 bytes each."""
    spec = load_preset("llama3-8b")
    block = 4096 * 512 + 2 * 4096 * 128 + 512 * 4096 + 3 * 4096 * 1792 + 2 * 4096
    per_gpu = 32 * block + 2 * 16_032 * 4096 + 4096
    layout = check_training_parallel(spec, 8, None, 8, 1, False, 0)
    states = plan_training(spec, builtin("h100-sxm"), layout).states
    assert states.weights_bytes == 2 * per_gpu
    assert states.gradients_bytes == 4 * per_gpu and states.optimizer_bytes == 12 * per_gpu
    # two pipeline stages: the first holds the embedding, the last the head and final norm
    layout = check_training_parallel(spec, 16, None, 8, 2, False, 0)
    first = 16 * block + 16_032 * 4096
    assert plan_training(spec, builtin("h100-sxm"), layout).states.weights_bytes == \
        2 * max(first, 16 * block + 16_032 * 4096 + 4096)


def test_optimizers() -> None:
    recipe = RECIPES["bf16-mixed"]
    assert optimizer_bytes(recipe, "sgd-momentum", 1000) == 8000
    assert optimizer_bytes(recipe, "adamw-8bit", 4096) == 4 * 4096 + 2 * 4096 + 2 * 4 * 2
    assert optimizer_bytes(RECIPES["bf16"], "adamw", 1000) == 4000


def test_adafactor_factors_every_matrix() -> None:
    """A second formulation: the tensors quant/layouts.py lists for GGUF (tied head absent),
    each 2-D matrix factored into rows + columns, every other tensor kept whole."""
    from specsheet.quant.layouts import model_tensors

    for name in ("gpt2-small", "llama3-8b", "mixtral-8x7b", "deepseek-v2-lite"):
        spec = load_preset(name)
        n = count_params(spec).total
        factored = 0
        for t in model_tensors(spec):
            if len(t.shape) >= 2 and t.role != "norm":
                factored += t.matrices * (t.out_features + t.in_features)
            else:
                factored += t.elements
        recipe = RECIPES["fp32"]
        assert optimizer_bytes(recipe, "adafactor", n, model_matrices(spec), n) == 4 * factored


# ---- activations: Korthikanti et al. 2022 --------------------------------------------------

GPT3 = load_preset("gpt3-175b")
S, H, A = 2048, 12288, 96  # GPT-3 175B's sequence, hidden size and heads (b = 1)


@pytest.mark.parametrize("t", [1, 2, 4, 8])
@pytest.mark.parametrize(("form", "formula"), [
    # Korthikanti et al. 2022, equations 1 to 5 and section 5, per layer, b = 1
    ("tp", lambda t: S * H * (10 + Fraction(24, t) + Fraction(5 * A * S, H * t))),
    ("sp", lambda t: S * H * (Fraction(34, t) + Fraction(5 * A * S, H * t))),
    ("selective", lambda t: S * H * (10 + Fraction(24, t))),
    ("selective+sp", lambda t: S * H * Fraction(34, t)),
    ("full", lambda t: 2 * S * H),
    ("full+sp", lambda t: Fraction(2 * S * H, t)),
])
def test_korthikanti_forms_for_gpt3(form: str, formula: Any, t: int) -> None:
    terms = activation_terms(GPT3, S)
    if t == 1 and "sp" in form:
        return  # sequence parallelism needs tensor parallelism
    recompute = {"tp": "none", "sp": "none"}.get(form.removesuffix("+sp"),
                                                 form.removesuffix("+sp"))
    ours = layer_activation_bytes(terms, t, "sp" in form, recompute, flash=False)
    assert ours == formula(t)


def test_korthikanti_unparallel_form_and_flash() -> None:
    terms = activation_terms(GPT3, S)
    assert layer_activation_bytes(terms, 1, False, "none", False) == \
        S * H * (34 + Fraction(5 * A * S, H))
    # FlashAttention keeps no s x s scores: the selective form's memory
    assert layer_activation_bytes(terms, 8, True, "none", True) == S * H * Fraction(34, 8)


def test_activations_of_a_pipeline_and_a_micro_batch() -> None:
    layout = Parallel(gpus=64, dp=1, tp=8, pp=8, sp=True, zero=0)
    act = activations(GPT3, S, 2, layout, "selective", flash=False)
    assert act.per_sequence == 96 * S * H * 34 // 8  # L layers' worth on the first stage
    assert act.total == 2 * act.per_sequence


def test_a_layer_without_an_mlp_in_a_model_of_experts() -> None:
    """Mixtral with block 0 left without an MLP: that layer counts as a dense one (no experts,
    no router), which keeps less than a layer of 2 routed experts of the same width; before,
    the lookup of the dense kind failed (KeyError) in an all-MoE model. Through the CLI too."""
    mixtral = load_preset("mixtral-8x7b")
    bare = dataclasses.replace(mixtral, no_mlp_layers=(0,))
    layout = Parallel(gpus=8, tp=8, pp=1)
    less = activations(bare, 4096, 1, layout, "selective", flash=True)
    assert 0 < less.per_sequence < activations(mixtral, 4096, 1, layout, "selective",
                                               flash=True).per_sequence
    result = runner.invoke(app, ["train", "mixtral-8x7b", "--set", "no_mlp_layers=0", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["params"]["total"] == 46_702_792_704 - (
        8 * 3 * 4096 * 14336 + 8 * 4096)  # the preset's total less block 0's experts and router


def test_max_micro_batch_fits_and_one_more_does_not() -> None:
    spec = load_preset("llama3-8b")
    layout = check_training_parallel(spec, 8, None, 1, 1, False, 3)
    plan = plan_training(spec, builtin("h100-sxm"), layout, seq_len=2048, attention="causal")
    b = plan.max_micro_batch
    assert b >= 1
    bigger = plan_training(spec, builtin("h100-sxm"), layout, seq_len=2048,
                           attention="causal", micro_batch=b + 1)
    at_max = plan_training(spec, builtin("h100-sxm"), layout, seq_len=2048,
                           attention="causal", micro_batch=b)
    assert at_max.fits and not bigger.fits


# ---- LoRA and QLoRA ------------------------------------------------------------------------

def test_lora_parameters_match_peft() -> None:
    """peft's print_trainable_parameters for Llama 3 8B, r = 16 on every projection:
    41,943,040 (32 layers x 16 x (q 8192 + k 5120 + v 5120 + o 8192 + 3 x 18432))."""
    assert lora_params(load_preset("llama3-8b"), 16,
                       ("q", "k", "v", "o", "gate", "up", "down")) == 41_943_040
    assert lora_params(load_preset("llama3-8b"), 8, ("q", "v")) == 32 * 8 * (
        8192 + 5120)


def test_qlora_base_is_the_nf4_checkpoint() -> None:
    from specsheet.quant.layouts import quantized_bytes

    doc = run("llama3-8b", "--lora-rank", "16", "--qlora", "--seq-len", "2048")
    spec = load_preset("llama3-8b")
    assert doc["memory_per_gpu"]["frozen_bytes"] == quantized_bytes(spec, "bnb-nf4").weights_bytes
    assert doc["params"]["trainable"] == 41_943_040
    assert doc["memory_per_gpu"]["gradients_bytes"] == 4 * 41_943_040  # fp32 gradients
    assert doc["lora"] == {"rank": 16, "targets": ["q", "k", "v", "o", "gate", "up", "down",
                                                   "experts"],
                           "qlora": True, "base_format": "bnb-nf4"}


# ---- the command -------------------------------------------------------------------------

def test_document_has_the_issues_keys() -> None:
    doc = run("llama3.1-8b", "--tokens-total", "15.6T", "--seq-len", "8192", "--gpus", "8",
              "--price", "2.5")
    for key in ("per_token_model", "per_token_hardware", "total_model", "approx_6n_total",
                "approx_palm_total", "approx_megatron_total"):
        assert isinstance(doc["flops"][key], int)
    assert doc["tokens_total"] == 15_600_000_000_000
    assert set(doc["time"]) == {"seconds", "gpu_hours", "days", "usd"}
    assert doc["time"]["usd"] == pytest.approx(doc["time"]["gpu_hours"] * 2.5)
    for key in ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
                "total_bytes", "capacity_bytes"):
        assert isinstance(doc["memory_per_gpu"][key], int)
    assert isinstance(doc["fits"], bool) and isinstance(doc["max_micro_batch"], int)
    assert doc["assumptions"]


def test_default_tokens_are_chinchillas() -> None:
    doc = run("gpt2-small")
    assert doc["tokens_total"] == 20 * 124_439_808 and doc["tokens_default"]
    assert any("Chinchilla" in a for a in doc["assumptions"])


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_every_format(fmt: str) -> None:
    result = runner.invoke(app, ["train", "llama3-8b", "--seq-len", "4096", "--format", fmt,
                                 "--recompute", "selective", "--price", "2"])
    assert result.exit_code == 0, result.stderr
    assert "Megatron" in result.stdout or "megatron" in result.stdout


def test_the_schema_accepts_the_document() -> None:
    import jsonschema

    from specsheet.views.schema import schema_text

    schema = json.loads(schema_text())
    for args in (("llama3-8b",), ("deepseek-v3", "--lora-rank", "8", "--seq-len", "4096")):
        jsonschema.validate(run(*args), schema)


# ---- invariants over random specs ----------------------------------------------------------

@given(specs(), st.integers(1, 1 << 16), st.integers(1, 64))
def test_training_invariants(spec: ModelSpec, tokens: int, dp: int) -> None:
    # backward = 2 x forward; full recomputation runs the forward once more
    fwd = forward_flops(spec, tokens).total
    assert training_flops(spec, tokens).model == 3 * fwd
    assert training_flops(spec, tokens).ssm_backward == 0
    assert training_flops(spec, tokens, "full").hardware == 4 * fwd
    causal = training_flops(spec, tokens, attention="causal")
    assert causal.forward <= fwd and causal.model == 3 * causal.forward
    # a second formulation of the matrices (GGUF's tensor list: 2-D weights, stacked experts)
    from specsheet.quant.layouts import model_tensors

    roles = ("linear", "router", "shared_gate", "projection", "embedding", "head")
    tensors = [t for t in model_tensors(spec) if t.role in roles]
    matrices = model_matrices(spec)
    assert sum(m.in_features * m.out_features * m.copies for m in matrices) == \
        sum(t.elements for t in tensors)
    assert sum((m.in_features + m.out_features) * m.copies for m in matrices) == \
        sum(t.matrices * (t.in_features + t.out_features) for t in tensors)
    # ZeRO only ever removes memory, stage by stage, and shards exactly over dp
    params = count_params(spec)
    totals = []
    for zero in range(4):
        layout = Parallel(gpus=dp, dp=dp, tp=1, pp=1, sp=False, zero=zero)
        plan = plan_training(spec, builtin("h100-sxm"), layout, seq_len=min(tokens, spec.context))
        totals.append(plan.static_bytes)
        assert plan.activations.total == plan.activations.per_sequence
    assert totals == sorted(totals, reverse=True)
    assert totals[0] == 18 * params.total
    assert totals[3] == -(-2 * params.total // dp) + -(-4 * params.total // dp) + \
        -(-12 * params.total // dp)
    # LoRA's parameters are linear in the rank
    targets = ("q", "k", "v", "o", "gate", "up", "down", "experts")
    assert lora_params(spec, 4, targets) == 4 * lora_params(spec, 1, targets)
