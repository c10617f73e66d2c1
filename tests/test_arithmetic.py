"""The arithmetic against the reference figures and the seeds' worked examples."""

from __future__ import annotations

import pytest
from reference import (
    FLOPS,
    GPT2_SMALL_BF16_BYTES,
    GPT2_SMALL_BLOCK,
    KV_AT_1024,
    KV_PER_TOKEN,
    LLAMA3_8B_KV_AT_8192,
    PARAMS,
)

from specsheet.figures import build_report
from specsheet.model.flops import forward_flops, two_n_estimate
from specsheet.model.memory import bytes_for, kv_cache
from specsheet.model.params import count_params
from specsheet.model.spec import ModelSpec
from specsheet.sources.resolve import load_preset


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_components_and_total_match_reference(name: str) -> None:
    params = count_params(load_preset(name).spec)
    token, position, attention, mlp, norms, head, total = PARAMS[name]
    assert params.components() == {
        "token_embedding": token, "position_embedding": position, "embedding_projections": 0,
        "attention": attention, "ssm": 0, "mlp": mlp, "norms": norms, "output_head": head}
    assert params.total == params.active == total


@pytest.mark.parametrize("name", sorted(FLOPS))
@pytest.mark.parametrize("tokens", [1, 8, 1024])
def test_forward_flops_per_token_match_reference(name: str, tokens: int) -> None:
    assert forward_flops(load_preset(name).spec, tokens).total == FLOPS[name][tokens]


@pytest.mark.parametrize("name", sorted(KV_PER_TOKEN))
def test_kv_cache_bytes_match_reference(name: str) -> None:
    kv = kv_cache(load_preset(name).spec, 1024, "bf16")
    assert kv.bytes_per_token == KV_PER_TOKEN[name]
    assert kv.bytes_per_request == KV_AT_1024[name]


def test_llama3_8b_full_context_kv_cache() -> None:
    report = build_report(load_preset("llama3-8b"))
    assert report.kv.tokens == 8192
    assert report.kv.bytes_per_request == LLAMA3_8B_KV_AT_8192


def test_gpt2_small_per_block_figures_and_shares() -> None:
    params = count_params(load_preset("gpt2-small").spec)
    block = params.block
    assert (block.attention, block.mlp, block.norms, block.total) == GPT2_SMALL_BLOCK
    assert params.non_embedding == 85_056_000  # "without embeddings 85.1M" (seed 000)
    assert round(100 * params.embeddings / params.total, 1) == 31.6
    assert round(100 * params.attention / params.total, 1) == 22.8
    assert round(100 * params.mlp / params.total, 1) == 45.5
    assert round(100 * block.attention / (block.attention + block.mlp), 1) == 33.3
    assert round(100 * block.mlp / (block.attention + block.mlp), 1) == 66.7
    assert 100 * params.norms / params.total < 0.1


def test_gpt2_small_bf16_weights() -> None:
    assert build_report(load_preset("gpt2-small")).weights_bytes == GPT2_SMALL_BF16_BYTES


def test_tiny_model_seed_003() -> None:
    spec = load_preset("tiny").spec
    assert count_params(spec).total == 7_680
    flops = forward_flops(spec, 8)
    assert flops.total == 14_336
    assert flops.total * 8 == 114_688 == 2 * 57_344  # multiply-adds of the 8-token forward
    # the seed's parts, per 8-token forward in multiply-adds
    assert (flops.attention_projections + flops.mlp) * 8 // 2 == 49_152
    assert flops.logits * 8 // 2 == 4_096
    assert flops.attention_context * 8 // 2 == 4_096


def test_seed_003_count_params_function() -> None:
    """The seed's count_params(d, layers, vocab, max_len, ...) for GPT-2 small and tiny."""
    def seed(d: int, layers: int, vocab: int, max_len: int, bias: bool = True,
             layernorm: bool = True) -> int:
        d_ff = 4 * d
        attn = 4 * d * d + (4 * d if bias else 0)
        mlp = 2 * d * d_ff + ((d_ff + d) if bias else 0)
        norms = 4 * d if layernorm else 0
        return (vocab * d + max_len * d + layers * (attn + mlp + norms)
                + (2 * d if layernorm else 0))

    assert count_params(load_preset("gpt2-small").spec).total == seed(768, 12, 50257, 1024)
    assert count_params(load_preset("tiny").spec).total == seed(16, 2, 32, 64, False, False)


def test_grouped_query_attention_shrinks_k_and_v_only() -> None:
    mha = ModelSpec.create(layers=1, d_model=64, heads=8, vocab=10, context=4, attn_bias=False)
    gqa = ModelSpec.create(layers=1, d_model=64, heads=8, kv_heads=2, vocab=10, context=4,
                           attn_bias=False)
    # q and o stay d x d; k and v shrink from d x d to d x (2 x 8)
    assert count_params(mha).attention - count_params(gqa).attention == 2 * 64 * (64 - 16)
    # the attention over the context uses the query heads in both
    assert forward_flops(mha, 4).attention_context == forward_flops(gqa, 4).attention_context


def test_head_dim_independent_of_d_model() -> None:
    spec = ModelSpec.create(layers=2, d_model=100, heads=3, head_dim=40, vocab=7, context=5,
                            attn_bias=False, mlp_bias=False, norm="none", positions="none")
    # q: 100 x 120, k and v: 100 x 120, o: 120 x 100
    assert count_params(spec).block.attention == 4 * 100 * 120
    assert forward_flops(spec, 5).attention_context == 4 * 5 * 2 * 3 * 40


def test_gated_mlp_with_biases_and_untied_head() -> None:
    spec = ModelSpec.create(layers=3, d_model=8, heads=2, d_ff=20, vocab=11, context=6,
                            mlp="gated", norm="rmsnorm", tied_embeddings=False)
    params = count_params(spec)
    assert params.block.mlp == 3 * 8 * 20 + 2 * 20 + 8
    assert params.norms == (2 * 3 + 1) * 8
    assert params.output_head == params.token_embedding == 11 * 8


@pytest.mark.parametrize(("dtype", "expected"), [
    ("fp32", 4 * 7), ("fp16", 2 * 7), ("bf16", 2 * 7), ("fp8", 7), ("int8", 7), ("int4", 4),
])
def test_bytes_per_dtype_round_up_to_whole_bytes(dtype: str, expected: int) -> None:
    assert bytes_for(7, dtype) == expected


def test_two_n_rule_is_twice_the_non_embedding_parameters() -> None:
    report = build_report(load_preset("llama3-8b"), tokens=1)
    assert report.flops_2n == two_n_estimate(report.params.non_embedding) == 15_009_849_344
    assert abs(report.flops_2n_error) < 0.001  # the head is in N: 2N is close at T = 1
