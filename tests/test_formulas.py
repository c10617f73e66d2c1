"""The breakdown's symbolic formulas are a second encoding of the arithmetic: evaluate each one
with a model's numbers and it must give the count params.py gives, at every preset's size and at
other sizes."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from specsheet.model.params import count_params
from specsheet.model.spec import ModelSpec
from specsheet.sources.presets import preset_index
from specsheet.sources.resolve import load_preset
from specsheet.views.formulas import (
    attention_formula,
    layer_norm_formula,
    mlp_formula,
    norm_formula,
)


def evaluate(formula: str, spec: ModelSpec) -> int:
    """A formula such as ``2d² + 2d·k·d_h + d + 2k·d_h + d`` evaluated for ``spec``."""
    symbols = {"d": spec.d_model, "h": spec.heads, "k": spec.kv_heads, "d_h": spec.head_dim,
               "d_v": spec.v_head_dim, "f": spec.d_ff, "f_e": spec.expert_d_ff,
               "f_s": spec.shared_d_ff, "L": spec.layers}
    expression = formula.replace("²", "**2").replace("·", "*").replace("×", "*")
    expression = re.sub(r"(\d)([A-Za-z(])", r"\1*\2", expression)  # 4d -> 4*d
    assert re.fullmatch(r"[\w\s*+()]+", expression), formula
    value = eval(expression, {"__builtins__": {}}, symbols)  # noqa: S307 - our own formulas
    assert isinstance(value, int)
    return value


def sizes(spec: ModelSpec) -> list[ModelSpec]:
    """``spec`` and the same shape at other widths and depths."""
    variants = [spec]
    for factor in (2, 3):
        d = spec.d_model * factor
        variants.append(ModelSpec.create(**{
            **spec.as_dict(), "d_model": d, "embedding_dim": d, "layers": spec.layers + factor,
            "head_dim": spec.head_dim * factor, "v_head_dim": spec.v_head_dim * factor,
            "d_ff": spec.d_ff * factor,
            "expert_d_ff": spec.expert_d_ff * factor, "shared_d_ff": spec.shared_d_ff * factor,
        }))
    variants.append(replace(spec, d_ff=4 * spec.d_model))  # the 8d² + 5d form
    return variants


ODD = {  # shapes no preset has: value heads narrower than query heads, one bias kind only
    "odd-heads": ModelSpec.create(layers=4, d_model=256, heads=8, kv_heads=2, head_dim=40,
                                  v_head_dim=24, vocab=1000, context=128, mlp="gated",
                                  qkv_bias=True, o_bias=False, mlp_bias=False),
    "odd-bias": ModelSpec.create(layers=3, d_model=96, heads=4, kv_heads=2, vocab=500,
                                 context=64, qkv_bias=False, o_bias=True, norm="rmsnorm"),
}
# hybrids' mixers and their norms are checked against transformers in test_golden.py
SPECS = [(name, s) for name in preset_index() if not load_preset(name).spec.layer_types
         for s in sizes(load_preset(name).spec)]
SPECS += [(name, s) for name, spec in ODD.items() for s in sizes(spec)]
# MLA's attention formula names its matrices, and q/k and latent norms are named rather than
# spelled out: those counts are checked against transformers in test_golden.py instead.
SYMBOLIC_ATTENTION = [(n, s) for n, s in SPECS if not s.latent_attention]
SYMBOLIC_NORMS = [(n, s) for n, s in SPECS if not s.latent_attention and s.qk_norm == "none"]


@pytest.mark.parametrize(("name", "spec"), SYMBOLIC_ATTENTION,
                         ids=[n for n, _ in SYMBOLIC_ATTENTION])
def test_attention_formula(name: str, spec: ModelSpec) -> None:
    formula = attention_formula(spec)
    assert evaluate(formula, spec) == count_params(spec).block.attention, formula


@pytest.mark.parametrize(("name", "spec"), SPECS, ids=[n for n, _ in SPECS])
def test_mlp_formula(name: str, spec: ModelSpec) -> None:
    p = count_params(spec)
    if spec.experts:
        expert = mlp_formula(spec, "f_e")
        assert evaluate(expert, spec) == p.expert, expert
        if spec.shared_d_ff:
            shared = mlp_formula(spec, "f_s")
            gate = spec.d_model if spec.shared_expert_gate else 0
            assert (evaluate(shared, spec) + gate) * spec.moe_layers == p.moe.shared_experts
        if spec.dense_mlp_layers:
            assert evaluate(mlp_formula(spec), spec) * spec.dense_mlp_layers == p.moe.dense
    else:
        formula = mlp_formula(spec)
        assert evaluate(formula, spec) == p.block.mlp, formula


@pytest.mark.parametrize(("name", "spec"), SYMBOLIC_NORMS, ids=[n for n, _ in SYMBOLIC_NORMS])
def test_norm_formula(name: str, spec: ModelSpec) -> None:
    formula = norm_formula(spec)
    expected = count_params(spec).norms
    assert (0 if formula == "no parameters" else evaluate(formula, spec)) == expected, formula


@pytest.mark.parametrize(("name", "spec"), SYMBOLIC_NORMS, ids=[n for n, _ in SYMBOLIC_NORMS])
def test_layer_norm_formula(name: str, spec: ModelSpec) -> None:
    formula = layer_norm_formula(spec)
    expected = count_params(spec).block.norms
    assert (0 if formula == "no parameters" else evaluate(formula, spec)) == expected, formula


def test_the_cases_cover_every_kind_of_formula() -> None:
    assert len(SYMBOLIC_ATTENTION) > 100 and len(SYMBOLIC_NORMS) > 100
    assert {attention_formula(s).split(" + ")[0] for _, s in SYMBOLIC_ATTENTION} >= {
        "4d²", "2d²", "2d·h·d_h", "d·h·d_h"}


def test_the_seed_formulas_for_gpt2_small() -> None:
    spec = load_preset("gpt2-small").spec
    assert (attention_formula(spec), mlp_formula(spec), norm_formula(spec),
            layer_norm_formula(spec)) == ("4d² + 4d", "8d² + 5d", "(2L + 1) × 2d", "2 × 2d")
