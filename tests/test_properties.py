"""Invariants over random specs (hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from specsheet.figures import build_report
from specsheet.model.flops import forward_flops
from specsheet.model.memory import DTYPE_BITS, bytes_for, kv_cache
from specsheet.model.params import count_params, mlp_weights
from specsheet.model.spec import MLP_KINDS, NORM_KINDS, POSITION_KINDS, Model, ModelSpec
from specsheet.quant.layouts import model_tensors
from specsheet.views.count import count_document as report_dict

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
                     expert_bias=draw(st.booleans()), router_bias=draw(st.booleans()),
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
        attention_sinks=draw(st.booleans()),
        qk_norm=draw(st.sampled_from(("none", "head", "full"))),
        norms_per_block=draw(st.integers(0, 4)),
        embedding_dim=draw(sizes),
        head_bias=draw(st.booleans()),
        **extra,
    )



def check_a_tensor_by_tensor_count_agrees(spec: ModelSpec) -> None:
    """A second formulation written differently: quant.layouts lists every tensor of the model
    by name and shape (as a checkpoint stores them); their elements add up, component by
    component, to params.py's formulas."""
    p = count_params(spec)
    by_component = dict.fromkeys(p.components(), 0)
    for tensor in model_tensors(spec):
        by_component[tensor.component] += tensor.elements
    assert by_component == p.components()


def check_one_more_layer_adds_exactly_one_block(spec: ModelSpec) -> None:
    """params(L + 1) - params(L) = one layer: the new layer is of the kind the last ones are
    (an MoE layer in an MoE model: the dense layers are listed, the new index is not)."""
    p = count_params(spec)
    deeper = count_params(dataclasses.replace(spec, layers=spec.layers + 1))
    assert deeper.total - p.total == p.block.total
    unused = (spec.experts - spec.experts_per_token) * p.expert if spec.experts else 0
    assert deeper.active - p.active == p.block.total - unused


def check_active_parameters(spec: ModelSpec) -> None:
    p = count_params(spec)
    assert 0 < p.active <= p.total
    all_used = spec.experts_per_token == spec.experts or spec.moe_layers == 0
    assert (p.active == p.total) == all_used


def check_more_vocabulary_adds_rows_to_the_tables(spec: ModelSpec, more: int) -> None:
    """V + n tokens: n more rows of e values in the embedding, and in an untied head (plus n
    biases with a head bias); nothing else moves."""
    p = count_params(spec)
    bigger = count_params(dataclasses.replace(spec, vocab=spec.vocab + more))
    rows = more * spec.embedding_dim
    head = (0 if spec.tied_embeddings else rows) + (more if spec.head_bias else 0)
    assert bigger.total - p.total == rows + head
    assert bigger.attention == p.attention and bigger.mlp == p.mlp


def check_plain_dtypes_store_their_bits_per_weight(spec: ModelSpec, dtype: str,
                                                   kv_dtype: str) -> None:
    """A plain dtype stores bits x parameters / 8 bytes, less than a byte of rounding, all of
    it in one element type; the cache figures are non-negative integers."""
    doc = report_dict(build_report(Model("m", spec, "test"), None, dtype, kv_dtype))
    total, stored = doc["params"]["total"], doc["memory"]["weights_bytes"]
    assert 0 <= stored * 8 - total * DTYPE_BITS[dtype] < 8
    assert list(doc["memory"]["tensor_types"].values()) == [stored]
    for name, value in doc["kv_cache"].items():
        if name == "layers_by_kind":
            assert sum(value.values()) == spec.layers
            continue
        assert isinstance(value, str) or (isinstance(value, int) and value >= 0)


def check_parameters_do_not_depend_on_tokens(spec: ModelSpec, t1: int, t2: int) -> None:
    r1 = build_report(Model("m", spec, "test"), min(t1, spec.context))
    r2 = build_report(Model("m", spec, "test"), min(t2, spec.context))
    assert r1.params == r2.params
    assert r1.weights_bytes == r2.weights_bytes


def check_kv_cache_is_linear_in_tokens(spec: ModelSpec, tokens: int, dtype: str) -> None:
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


def check_only_the_attention_term_grows_with_context(spec: ModelSpec, tokens: int) -> None:
    base = forward_flops(spec, 1)
    at_t = forward_flops(spec, tokens)
    assert at_t.total - base.total == (tokens - 1) * base.attention_context
    assert at_t.attention_context == tokens * base.attention_context


def check_windows_only_ever_shrink_the_cache(spec: ModelSpec, tokens: int) -> None:
    windowed = kv_cache(spec, tokens, "bf16")
    full = kv_cache(dataclasses.replace(spec, sliding_window=0, sliding_layers=()), tokens,
                    "bf16")
    assert windowed.bytes_per_request <= full.bytes_per_request
    assert windowed.bytes_per_token == full.bytes_per_token
    if tokens <= spec.sliding_window or not spec.sliding_layers:
        assert windowed.bytes_per_request == full.bytes_per_request


def check_a_token_uses_at_most_all_experts(spec: ModelSpec) -> None:
    """FLOPs of the MLPs: at most 2 x every MLP weight, at least 2 x the dense ones."""
    p = count_params(spec)
    mlp = forward_flops(spec, 1).mlp
    assert 2 * spec.dense_mlp_layers * mlp_weights(spec, spec.d_ff) <= mlp <= 2 * p.mlp


# Each test draws its specs once and checks several independent facts about them (generating a
# spec costs more than checking one).

@given(specs())
def test_how_the_count_is_built(spec: ModelSpec) -> None:
    check_a_tensor_by_tensor_count_agrees(spec)
    check_one_more_layer_adds_exactly_one_block(spec)
    check_active_parameters(spec)
    check_a_token_uses_at_most_all_experts(spec)


@given(specs(), st.integers(1, 1000), st.sampled_from(sorted(DTYPE_BITS)),
       st.sampled_from(sorted(DTYPE_BITS)))
def test_vocabulary_and_dtypes(spec: ModelSpec, more: int, dtype: str, kv_dtype: str) -> None:
    check_more_vocabulary_adds_rows_to_the_tables(spec, more)
    check_plain_dtypes_store_their_bits_per_weight(spec, dtype, kv_dtype)


@given(specs(), st.integers(1, 1 << 20), st.integers(1, 1 << 16),
       st.sampled_from(sorted(DTYPE_BITS)))
def test_what_the_context_moves(spec: ModelSpec, t1: int, tokens: int, dtype: str) -> None:
    check_parameters_do_not_depend_on_tokens(spec, t1, tokens)
    check_kv_cache_is_linear_in_tokens(spec, tokens, dtype)
    check_only_the_attention_term_grows_with_context(spec, tokens)
    check_windows_only_ever_shrink_the_cache(spec, tokens)
