"""Invariants over random specs (hypothesis)."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given
from hypothesis import strategies as st

from specsheet.model.flops import forward_flops
from specsheet.model.memory import DTYPE_BITS, bytes_for, kv_cache
from specsheet.model.params import count_params, mlp_weights
from specsheet.model.report import build_report
from specsheet.model.spec import MLP_KINDS, NORM_KINDS, POSITION_KINDS, Model, ModelSpec
from specsheet.views.documents import count_document as report_dict

sizes = st.integers(min_value=1, max_value=4096)


@st.composite
def specs(draw: st.DrawFn) -> ModelSpec:
    kv_heads = draw(st.integers(1, 16))
    heads = kv_heads * draw(st.integers(1, 8))
    layers = draw(st.integers(1, 200))
    extra: dict[str, object] = {}
    if draw(st.booleans()):  # mixture of experts
        experts = draw(st.integers(1, 64))
        extra.update(experts=experts, experts_per_token=draw(st.integers(1, experts)),
                     expert_d_ff=draw(st.integers(1, 4096)),
                     shared_d_ff=draw(st.integers(0, 4096)),
                     shared_expert_gate=draw(st.booleans()),
                     dense_layers=sorted(draw(st.sets(st.integers(0, layers - 1),
                                                      max_size=3))))
    if draw(st.booleans()):  # sliding windows
        extra.update(sliding_window=draw(st.integers(1, 8192)),
                     sliding_layers=sorted(draw(st.sets(st.integers(0, layers - 1),
                                                        min_size=1, max_size=8))))
    head_dim = draw(st.integers(1, 256))
    if draw(st.booleans()):  # multi-head latent attention
        rope = draw(st.integers(0, 64))
        kv_heads, head_dim = heads, rope + draw(st.integers(1, 192))
        extra.update(qk_rope_head_dim=rope, kv_lora_rank=draw(st.integers(1, 1024)),
                     q_lora_rank=draw(st.integers(0, 2048)))
    return ModelSpec.create(
        layers=layers,
        d_model=draw(sizes),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        d_ff=draw(st.integers(1, 65536)),
        vocab=draw(st.integers(1, 300_000)),
        context=draw(st.integers(1, 1 << 20)),
        mlp=draw(st.sampled_from(MLP_KINDS)),
        norm=draw(st.sampled_from(NORM_KINDS)),
        attn_bias=draw(st.booleans()),
        mlp_bias=draw(st.booleans()),
        positions=draw(st.sampled_from(POSITION_KINDS)),
        tied_embeddings=draw(st.booleans()),
        qk_norm=draw(st.sampled_from(("none", "head", "full"))),
        norms_per_block=draw(st.integers(0, 4)),
        embedding_dim=draw(sizes),
        head_bias=draw(st.booleans()),
        **extra,
    )


@given(specs())
def test_total_is_the_sum_of_components_and_blocks(spec: ModelSpec) -> None:
    p = count_params(spec)
    assert p.total == sum(p.components().values())
    assert p.norms >= spec.layers * p.block.norms
    assert p.moe.total == p.mlp
    assert 0 < p.active <= p.total
    all_used = spec.experts_per_token == spec.experts or spec.moe_layers == 0
    assert (p.active == p.total) == all_used
    assert p.attention == spec.layers * p.block.attention
    if not spec.experts:
        assert p.mlp == spec.layers * p.block.mlp
    assert all(isinstance(v, int) and v >= 0 for v in p.components().values())


@given(specs(), st.sampled_from(sorted(DTYPE_BITS)), st.sampled_from(sorted(DTYPE_BITS)))
def test_shares_add_to_one_and_figures_are_non_negative_integers(
    spec: ModelSpec, dtype: str, kv_dtype: str
) -> None:
    doc = report_dict(build_report(Model("m", spec, "test"), None, dtype, kv_dtype))
    assert math.isclose(sum(doc["params"]["shares"].values()), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(doc["params"]["block_shares"].values()), 1.0, rel_tol=1e-9)
    assert sum(doc["params"]["components"].values()) == doc["params"]["total"]
    assert sum(doc["flops"]["components"].values()) == doc["flops"]["forward_per_token"]
    for section in ("memory", "kv_cache"):
        for value in doc[section].values():
            assert isinstance(value, str) or (isinstance(value, int) and value >= 0)


@given(specs(), st.integers(1, 1 << 20), st.integers(1, 1 << 20))
def test_parameters_do_not_depend_on_tokens(spec: ModelSpec, t1: int, t2: int) -> None:
    r1 = build_report(Model("m", spec, "test"), min(t1, spec.context))
    r2 = build_report(Model("m", spec, "test"), min(t2, spec.context))
    assert r1.params == r2.params
    assert r1.weights_bytes == r2.weights_bytes


@given(specs(), st.integers(1, 1 << 16), st.sampled_from(sorted(DTYPE_BITS)))
def test_kv_cache_is_linear_in_tokens(spec: ModelSpec, tokens: int, dtype: str) -> None:
    """Linear in T up to the window (and beyond it without windows); int4 packs two values in
    a byte, so the request rounds up once, not per token."""
    if spec.sliding_layers:
        tokens = min(tokens, spec.sliding_window)
    one = kv_cache(spec, 1, dtype)
    many = kv_cache(spec, tokens, dtype)
    assert many.bytes_per_request == bytes_for(tokens * one.elements_per_token, dtype)
    if DTYPE_BITS[dtype] >= 8:
        assert many.bytes_per_request == tokens * one.bytes_per_request
    assert many.bytes_per_token == one.bytes_per_token


@given(specs(), st.integers(1, 1 << 16))
def test_only_the_attention_term_grows_with_context(spec: ModelSpec, tokens: int) -> None:
    base = forward_flops(spec, 1)
    at_t = forward_flops(spec, tokens)
    assert at_t.total - base.total == (tokens - 1) * base.attention_context
    assert at_t.attention_context == tokens * base.attention_context


@given(specs(), st.integers(1, 1 << 16))
def test_windows_only_ever_shrink_the_cache(spec: ModelSpec, tokens: int) -> None:
    windowed = kv_cache(spec, tokens, "bf16")
    full = kv_cache(dataclasses.replace(spec, sliding_window=0, sliding_layers=()), tokens,
                    "bf16")
    assert windowed.bytes_per_request <= full.bytes_per_request
    assert windowed.bytes_per_token == full.bytes_per_token
    if tokens <= spec.sliding_window or not spec.sliding_layers:
        assert windowed.bytes_per_request == full.bytes_per_request


@given(specs())
def test_a_token_uses_at_most_all_experts(spec: ModelSpec) -> None:
    """FLOPs of the MLPs: at most 2 x every MLP weight, at least 2 x the dense ones."""
    p = count_params(spec)
    mlp = forward_flops(spec, 1).mlp
    assert 2 * spec.dense_mlp_layers * mlp_weights(spec, spec.d_ff) <= mlp <= 2 * p.mlp
