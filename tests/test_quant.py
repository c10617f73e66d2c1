"""Quantized weight storage (specsheet.quant) against published figures and hand-worked layouts.

Published figures: llama.cpp's tools/quantize/README.md (github.com/ggml-org/llama.cpp) lists,
for meta-llama/Llama-3.1-8B, bits/weight and size (GiB) per quant type. llama-quantize prints
them as total_size_new x 8 / ml.n_elements (src/llama-quant.cpp): every tensor of the file over
every element of the file, token_embd and output included. A Llama 3.1 GGUF also holds
rope_freqs.weight (64 F32 values, not a parameter of the model), so the test checks both
denominators: they agree to the four published decimals.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsheet.errors import SpecError
from specsheet.model.params import COMPONENTS, count_params
from specsheet.model.spec import ModelSpec
from specsheet.plan.allocator import tail_bytes
from specsheet.plan.parallel import Parallel
from specsheet.plan.sharding import held_bytes, stage_tensors, stage_tensors_alike, stored_bytes
from specsheet.quant import FORMATS, gguf_types, model_tensors, quantized_bytes
from specsheet.quant.layouts import nf4_quant_state_bytes
from specsheet.quant.modules import keeper, kept
from specsheet.quant.tensors import block_kinds, model_tensors_alike
from specsheet.sources.presets import preset_index
from specsheet.sources.resolve import load_preset

# hybrids (Mamba, gated DeltaNet layers) have no quantized layout yet: quantized_bytes refuses them
PRESETS = sorted(n for n in preset_index() if not load_preset(n).spec.layer_types)
LLAMA31_8B = load_preset("llama3.1-8b").spec
ROPE_FREQS = 64  # rope_freqs.weight of a Llama 3.1 GGUF: head_dim / 2 F32 values

# tools/quantize/README.md, "meta-llama/Llama-3.1-8B": quant type -> (bits/weight, size GiB)
LLAMA_CPP_TABLE = {
    "gguf-f16": ("16.0005", "14.96"),
    "gguf-q8_0": ("8.5008", "7.95"),
    "gguf-q6_k": ("6.5633", "6.14"),
    "gguf-q5_k_m": ("5.7036", "5.33"),
    "gguf-q4_k_m": ("4.8944", "4.58"),
    "gguf-q2_k": ("3.1593", "2.95"),
    "gguf-iq4_xs": ("4.4597", "4.17"),
}


def _spec(**fields: object) -> ModelSpec:
    return ModelSpec.create(**fields)


# ---- published figures ---------------------------------------------------------------------

@pytest.mark.parametrize("fmt", sorted(LLAMA_CPP_TABLE))
def test_llama31_8b_bits_per_weight_is_llama_cpps_table(fmt: str) -> None:
    bpw, gib = LLAMA_CPP_TABLE[fmt]
    q = quantized_bytes(LLAMA31_8B, fmt)
    assert f"{q.bits_per_weight:.4f}" == bpw  # weights_bytes x 8 / params.total
    # llama.cpp's own denominator: the file's elements, rope_freqs (F32) included
    file_bpw = (q.weights_bytes + 4 * ROPE_FREQS) * 8 / (q.params + ROPE_FREQS)
    assert f"{file_bpw:.4f}" == bpw
    assert f"{q.weights_bytes / 2**30:.2f}" == gib


def test_the_acceptance_figures_of_the_issue() -> None:
    assert round(quantized_bytes(LLAMA31_8B, "gguf-q4_k_m").bits_per_weight, 4) == 4.8944
    assert round(quantized_bytes(LLAMA31_8B, "gguf-q8_0").bits_per_weight, 4) == 8.5008


def test_llama31_8b_q4_k_m_exact_bytes_by_hand() -> None:
    d, f, kv, v, layers = 4096, 14336, 1024, 128256, 32
    q4k, q6k = 144, 210  # bytes per 256 values (ggml-common.h block_q4_K, block_q6_K)
    more_bits = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}  # use_more_bits(i, 32)
    total = v * d // 256 * q4k + v * d // 256 * q6k  # token_embd Q4_K, output Q6_K
    for i in range(layers):
        big = q6k if i in more_bits else q4k
        total += (2 * d * d + d * kv + 2 * d * f) // 256 * q4k  # q, o, k, gate, up
        total += d * kv // 256 * big + d * f // 256 * big  # attn_v, ffn_down
        total += 2 * d * 4  # two RMSNorms, F32
    total += d * 4  # output_norm
    q = quantized_bytes(LLAMA31_8B, "gguf-q4_k_m")
    assert q.weights_bytes == total == 4_912_898_048
    types = gguf_types(LLAMA31_8B, "q4_k_m")
    assert {i for i in range(layers) if types[f"blk.{i}.attn_v.weight"] == "Q6_K"} == more_bits
    assert {i for i in range(layers) if types[f"blk.{i}.ffn_down.weight"] == "Q6_K"} == more_bits
    assert types["output.weight"] == "Q6_K" and types["token_embd.weight"] == "Q4_K"
    assert types["blk.0.attn_norm.weight"] == "F32"


def test_llama31_8b_awq_is_the_5_73_gb_of_the_issue() -> None:
    """The issue: 'the AWQ INT4 checkpoint 5.73 GB' for Llama 3.1 8B."""
    linear = 1_342_177_280 + 5_637_144_576  # attention and MLP weights (REFERENCE.md, llama3-8b)
    expected = (linear // 2  # qweight: 8 int4 in an int32
                + linear // 128 * 2  # scales: one fp16 per group of 128 inputs
                + linear // 128 // 8 * 4  # qzeros: 8 int4 zero points in an int32, per group
                + 2 * 525_336_576 * 2  # embed_tokens and lm_head, fp16
                + 266_240 * 2)  # norms, fp16
    q = quantized_bytes(LLAMA31_8B, "awq-int4")
    assert q.weights_bytes == expected == 5_727_854_592
    assert f"{q.weights_bytes / 1e9:.2f}" == "5.73"


# ---- one Linear by hand --------------------------------------------------------------------

def _q_proj(fmt: str, **kwargs: object) -> dict[str, tuple[str, tuple[int, ...], int]]:
    q = quantized_bytes(LLAMA31_8B, fmt, **kwargs)
    return {s.name.removeprefix("blk.0.attn_q."): (s.dtype, s.shape, s.nbytes)
            for s in q.tensors if s.name.startswith("blk.0.attn_q.")}


def test_gptq_int4_q_proj_by_hand() -> None:
    # q_proj of Llama 3.1 8B: 4096 inputs (K), 4096 outputs (N), group 128 -> 32 groups
    assert _q_proj("gptq-int4") == {
        "qweight": ("I32", (512, 4096), 4096 * 4096 // 8 * 4),  # 8 int4 per int32: 8,388,608
        "qzeros": ("I32", (32, 512), 32 * 4096 // 8 * 4),  # 65,536
        "scales": ("F16", (32, 4096), 32 * 4096 * 2),  # 262,144
        "g_idx": ("I32", (4096,), 4096 * 4),  # 16,384
    }


def test_gptq_int8_packs_four_in_an_int32() -> None:
    shapes = _q_proj("gptq-int8")
    assert shapes["qweight"] == ("I32", (1024, 4096), 4096 * 4096)
    assert shapes["qzeros"] == ("I32", (32, 1024), 32 * 4096)


def test_awq_int4_q_proj_by_hand() -> None:
    assert _q_proj("awq-int4") == {
        "qweight": ("I32", (4096, 512), 4096 * 4096 // 8 * 4),
        "qzeros": ("I32", (32, 512), 32 * 4096 // 8 * 4),
        "scales": ("F16", (32, 4096), 32 * 4096 * 2),
    }


def test_group_size_minus_one_is_one_group_per_row() -> None:
    per_row = _q_proj("gptq-int4", group_size=-1)
    assert per_row["scales"] == ("F16", (1, 4096), 4096 * 2)
    assert per_row["qzeros"] == ("I32", (1, 512), 512 * 4)
    assert _q_proj("awq-int4", group_size=-1)["scales"] == ("F16", (1, 4096), 4096 * 2)
    assert _q_proj("w4a16", group_size=-1)["weight_scale"] == ("BF16", (4096, 1), 4096 * 2)
    assert (quantized_bytes(LLAMA31_8B, "gptq-int4", group_size=-1).weights_bytes
            < quantized_bytes(LLAMA31_8B, "gptq-int4").weights_bytes
            < quantized_bytes(LLAMA31_8B, "gptq-int4", group_size=32).weights_bytes)


def test_other_formats_q_proj_by_hand() -> None:
    n = k = 4096
    assert _q_proj("w4a16") == {"weight_packed": ("I32", (n, k // 8), n * k // 2),
                                "weight_scale": ("BF16", (n, k // 128), n * k // 128 * 2),
                                "weight_shape": ("I64", (2,), 16)}
    assert _q_proj("mxfp4") == {"weight_packed": ("U8", (n, k // 2), n * k // 2),
                                "weight_scale": ("U8", (n, k // 32), n * k // 32)}
    assert _q_proj("nvfp4") == {"weight_packed": ("U8", (n, k // 2), n * k // 2),
                                "weight_scale": ("F8_E4M3", (n, k // 16), n * k // 16),
                                "weight_global_scale": ("F32", (1,), 4),
                                "input_global_scale": ("F32", (1,), 4)}
    assert _q_proj("fp8-block")["weight_scale"] == ("F32", (32, 32), 32 * 32 * 4)
    assert _q_proj("fp8-channel")["weight_scale"] == ("F32", (n, 1), n * 4)
    assert _q_proj("bnb-int8") == {"weight": ("I8", (n, k), n * k), "SCB": ("F32", (n,), n * 4),
                                   "weight_format": ("U8", (), 1)}
    nf4 = _q_proj("bnb-nf4")
    assert nf4["weight"] == ("U8", (n * k // 2, 1), n * k // 2)
    assert nf4["weight.absmax"] == ("F32", (n * k // 64,), n * k // 64 * 4)
    dq = _q_proj("bnb-nf4-dq")
    assert dq["weight.absmax"] == ("U8", (n * k // 64,), n * k // 64)
    assert dq["weight.nested_absmax"] == ("F32", (n * k // 64 // 256,), n * k // 64 // 256 * 4)
    assert dq["weight.nested_quant_map"] == ("F32", (256,), 1024)


def test_nf4_quant_state_is_the_json_bitsandbytes_writes() -> None:
    # QuantState.as_dict(packed=True): json.dumps of the non-tensor items, UTF-8
    plain = {"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [4096, 14336]}
    assert nf4_quant_state_bytes(4096, 14336, "BF16", nested=False) == len(json.dumps(plain))
    # nested_offset is offset.item() of a float32 mean, e.g. 0.0234 as float32; its repr has
    # 19 or 20 characters depending on the value: the code counts 20
    offset = struct.unpack("f", struct.pack("f", 0.0234))[0]
    assert repr(offset) == "0.023399999365210533"
    nested = {**plain, "nested_blocksize": 256, "nested_dtype": "float32",
              "nested_offset": offset}
    assert nf4_quant_state_bytes(4096, 14336, "BF16", nested=True) == len(json.dumps(nested))


# ---- which tensors stay unquantized ---------------------------------------------------------

def test_gptq_and_awq_keep_embeddings_head_and_norms_in_fp16() -> None:
    for fmt in ("gptq-int4", "awq-int4"):
        q = quantized_bytes(LLAMA31_8B, fmt)
        assert q.by_component["token_embedding"] == 128256 * 4096 * 2
        assert q.by_component["output_head"] == 128256 * 4096 * 2
        assert q.by_component["norms"] == 266_240 * 2
        assert quantized_bytes(LLAMA31_8B, fmt, dtype_unquantized="fp32").by_component[
            "output_head"] == 128256 * 4096 * 4


def test_routers_stay_unquantized_except_under_bitsandbytes() -> None:
    spec = load_preset("mixtral-8x7b").spec
    for fmt in ("gptq-int4", "awq-int4", "w4a16", "fp8", "nvfp4", "mxfp4"):
        routers = [s for s in quantized_bytes(spec, fmt).tensors if "ffn_gate_inp" in s.name]
        assert {(s.dtype, s.shape) for s in routers} == {(FORMATS[fmt].unquantized, (8, 4096))}
    bnb = [s for s in quantized_bytes(spec, "bnb-nf4").tensors if "ffn_gate_inp" in s.name]
    assert {s.dtype for s in bnb} == {"U8", "F32"}  # transformers converts every nn.Linear
    assert gguf_types(spec, "q4_k_m")["blk.0.ffn_gate_inp.weight"] == "F32"


def test_gguf_eight_experts_and_70b_rules() -> None:
    mixtral = gguf_types(load_preset("mixtral-8x7b").spec, "q4_k_m")
    assert {mixtral[f"blk.{i}.attn_v.weight"] for i in range(32)} == {"Q8_0"}
    assert {mixtral[f"blk.{i}.attn_k.weight"] for i in range(32)} == {"Q8_0"}
    assert {mixtral[f"blk.{i}.attn_output.weight"] for i in range(32)} == {"Q5_K"}
    assert mixtral["blk.0.ffn_down_exps.weight"] == "Q6_K"  # layer 0 < 32/8
    assert mixtral["blk.4.ffn_down_exps.weight"] == "Q4_K"
    llama70 = gguf_types(load_preset("llama3-70b").spec, "q4_k_m")
    # 80 layers, n/8 = 10: layers 10, 11 are not use_more_bits; the 70B rule makes Q4_K Q5_K
    assert llama70["blk.10.attn_v.weight"] == "Q5_K"
    assert llama70["blk.12.attn_v.weight"] == "Q6_K"
    assert llama70["blk.10.ffn_down.weight"] == "Q4_K"  # the 70B rule is for attn_v only
    llama8 = gguf_types(LLAMA31_8B, "q3_k_m")
    assert [llama8[f"blk.{i}.attn_v.weight"] for i in range(3)] == ["Q5_K", "Q5_K", "Q4_K"]
    assert llama8["blk.1.ffn_down.weight"] == "Q5_K" and llama8["blk.2.ffn_down.weight"] == "Q4_K"


def test_gguf_fallbacks_when_rows_are_not_whole_blocks() -> None:
    qwen = load_preset("qwen2.5-0.5b").spec  # d = 896 = 3.5 x 256, tied embeddings
    types = gguf_types(qwen, "q4_k_m")
    assert types["blk.0.attn_q.weight"] == "Q5_0"  # Q4_K -> Q5_0
    assert types["token_embd.weight"] == "Q8_0"  # tied: output rules, 896 % 256 -> Q8_0
    assert types["blk.0.ffn_down.weight"] == "Q6_K"  # 4864 = 19 x 256 inputs: no fallback
    assert gguf_types(qwen, "q6_k")["blk.5.attn_k.weight"] == "Q8_0"  # Q6_K -> Q8_0
    assert gguf_types(qwen, "q2_k")["blk.5.attn_q.weight"] == "Q4_0"  # Q2_K -> Q4_0
    assert gguf_types(qwen, "iq4_xs")["blk.5.attn_q.weight"] == "IQ4_NL"
    # rows of 80 fit no block of 32 either: F16; the embedding rows (256) still quantize
    odd = _spec(layers=2, d_model=80, heads=5, vocab=512, context=64, embedding_dim=256,
                d_ff=320, tied_embeddings=False)
    odd_types = gguf_types(odd, "q4_k_m")
    assert odd_types["blk.0.attn_q.weight"] == "F16"
    assert odd_types["blk.0.ffn_down.weight"] == "Q5_0"  # 320 inputs: Q4_K -> Q5_0
    assert odd_types["token_embd.weight"] == "Q4_K" and odd_types["output.weight"] == "Q6_K"
    tiny = load_preset("tiny").spec  # d = 16, tied: the output rules pick Q8_0, which fails
    with pytest.raises(SpecError, match="no fallback"):
        quantized_bytes(tiny, "gguf-q4_k_m")


def test_gguf_tied_and_untied_heads() -> None:
    tied = gguf_types(load_preset("llama3.2-1b").spec, "q4_k_m")
    assert "output.weight" not in tied and tied["token_embd.weight"] == "Q6_K"
    assert gguf_types(LLAMA31_8B, "q8_0")["output.weight"] == "Q8_0"
    assert gguf_types(load_preset("gpt2-small").spec, "q4_k_m")["position_embd.weight"] == "F32"


# ---- invariants over every preset -----------------------------------------------------------

@pytest.mark.parametrize("name", PRESETS)
def test_tensors_add_up_to_the_parameter_count(name: str) -> None:
    spec = load_preset(name).spec
    params = count_params(spec)
    by_component = dict.fromkeys(COMPONENTS, 0)
    for t in model_tensors(spec):
        by_component[t.component] += t.elements
    assert sum(by_component.values()) == params.total
    assert by_component == params.components()


ALWAYS_STORABLE = ("gpt2-small", "llama2-7b", "llama3-8b", "llama3.1-8b", "llama3.1-70b",
                   "mistral-7b", "mixtral-8x7b", "qwen3-8b", "qwen3-30b-a3b", "gemma2-9b")


@pytest.mark.parametrize("name", PRESETS)
def test_every_format_holds_at_least_its_nominal_bits(name: str) -> None:
    spec = load_preset(name).spec
    total = count_params(spec).total
    for fmt in FORMATS.values():
        try:
            q = quantized_bytes(spec, fmt.name)
        except SpecError as error:  # a row the toolchain cannot pack, as its own code refuses
            assert name not in ALWAYS_STORABLE, (fmt.name, str(error))
            assert "not a multiple of" in str(error) or "no fallback" in str(error)
            continue
        assert q.weights_bytes * 8 >= total * fmt.bits, fmt.name
        assert q.weights_bytes == sum(q.by_component.values()) == sum(q.tensor_types.values())
        assert 0 <= q.overhead_bytes < q.weights_bytes
        assert list(q.by_component) == list(COMPONENTS)


MONOTONE = (
    ("gguf-q2_k", "gguf-q3_k_m", "gguf-q4_k_m", "gguf-q5_k_m", "gguf-q6_k", "gguf-q8_0",
     "gguf-f16"),
    ("gguf-q4_0", "gguf-q8_0"),
    ("gptq-int4", "gptq-int8"),
    ("bnb-nf4-dq", "bnb-nf4", "bnb-int8"),
    ("w4a16", "w8a8"),
    ("mxfp4", "nvfp4", "fp8"),
)


@pytest.mark.parametrize("name", ["gpt2-small", "llama3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b",
                                  "deepseek-v2-lite", "gemma2-9b", "phi3-mini"])
def test_bytes_grow_with_bits(name: str) -> None:
    spec = load_preset(name).spec
    for chain in MONOTONE:
        if spec.experts:  # mxfp4 quantizes only the experts of an MoE model, as gpt-oss does
            chain = tuple(fmt for fmt in chain if fmt != "mxfp4")
        sizes = [quantized_bytes(spec, fmt).weights_bytes for fmt in chain]
        assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), chain


SAFETENSORS_FORMATS = [f for f in FORMATS if not f.startswith("gguf-")]


@settings(max_examples=25, deadline=None)
@given(layers=st.integers(1, 6), width=st.sampled_from([256, 512, 1024]),
       fmt=st.sampled_from(SAFETENSORS_FORMATS))
def test_a_layer_adds_the_same_bytes_each_time(layers: int, width: int, fmt: str) -> None:
    def size(n: int) -> int:
        spec = _spec(layers=n, d_model=width, heads=width // 64, vocab=1024, context=64,
                     mlp="gated", norm="rmsnorm", attn_bias=False, mlp_bias=False,
                     positions="rotary", d_ff=4 * width, tied_embeddings=False)
        return quantized_bytes(spec, fmt).weights_bytes

    assert size(layers + 2) - size(layers + 1) == size(layers + 1) - size(layers) > 0


# the totals a report keeps (listed=False: each kind of tensor stored once) are the list's:
# every preset, every safetensors format, with layer-by-layer keep entries, the router's
# score-correction bias, an unquantized dtype and one group per row; a refusal names the same
# tensor
TOTALS_CASES: list[dict[str, Any]] = [
    {},
    {"keep": (r"re:model\.layers\.[02]\.", "lm_head", "model.layers.*.mlp.gate")},
    {"keep": ("layers.1.", "shared_expert"), "match": "substring", "score_bias": True},
    {"dtype_unquantized": "fp32", "score_bias": True},
    # lists no layer number can tell apart (quant.modules.layer_blind): blocks listed by kind
    {"keep": ("model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
              "lm_head"), "score_bias": True},
    {"keep": ("shared_expert", "lm_head", "q_proj"), "match": "substring"},
]


@pytest.mark.parametrize("fmt", SAFETENSORS_FORMATS)
def test_the_totals_alone_are_the_lists_totals(fmt: str) -> None:
    group = {"group_size": -1} if FORMATS[fmt].group_size is not None else {}
    stored = 0
    for name in PRESETS:
        spec = load_preset(name).spec
        for case in TOTALS_CASES + ([{**TOTALS_CASES[0], **group}] if group else []):
            try:
                listed = quantized_bytes(spec, fmt, **case)
            except SpecError as error:
                with pytest.raises(SpecError) as alone:
                    quantized_bytes(spec, fmt, listed=False, **case)
                assert str(alone.value) == str(error)
                continue
            totals = quantized_bytes(spec, fmt, listed=False, **case)
            assert totals == listed._replace(tensors=()), (name, case)
            assert list(totals.by_component) == list(listed.by_component)
            assert list(totals.tensor_types) == list(listed.tensor_types)
            stored += 1
    assert stored > len(PRESETS)  # most presets store in most formats


# model_tensors_alike lists each kind of block once: counted by how many each stands for, its
# tensors are model_tensors' (shape, component, role and the order of first shapes), for every
# preset (hybrids with their layer types, MoE with dense layers, layers without an MLP) and
# for random mixes of layer types, dense and MLP-less layers
def _unnamed(t: Any) -> tuple[Any, ...]:
    return (t.shape, t.component, t.role)


def _alike_matches(spec: ModelSpec) -> None:
    _stands_for(model_tensors(spec), model_tensors_alike(spec))


def _stands_for(listed: tuple[Any, ...], alike: Sequence[tuple[Any, int]]) -> None:
    counted: dict[tuple[Any, ...], int] = {}
    for t, n in alike:
        counted[_unnamed(t)] = counted.get(_unnamed(t), 0) + n
    every: dict[tuple[Any, ...], int] = {}
    for t in listed:
        every[_unnamed(t)] = every.get(_unnamed(t), 0) + 1
    assert counted == every
    assert list(dict.fromkeys(_unnamed(t) for t, _ in alike)) == list(every)
    assert sum(n for _, n in alike) == len(listed)
    assert {t.name for t, _ in alike} <= {t.name for t in listed}


@pytest.mark.parametrize("name", PRESETS)
def test_blocks_alike_stand_for_every_block(name: str) -> None:
    _alike_matches(load_preset(name).spec)


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from(["attention", "mamba2", "hybrid"]), min_size=1,
                      max_size=9),
       dense=st.sets(st.integers(0, 8)), no_mlp=st.sets(st.integers(0, 8)))
def test_blocks_alike_stand_for_every_block_in_any_mix(kinds: list[str], dense: set[int],
                                                        no_mlp: set[int]) -> None:
    base = load_preset("granite-4.0-h-tiny").spec
    layers = len(kinds)
    spec = dataclasses.replace(base, layers=layers, layer_types=tuple(kinds),
                               dense_layers=tuple(sorted(i for i in dense if i < layers)),
                               no_mlp_layers=tuple(sorted(i for i in no_mlp - dense
                                                          if i < layers)))
    _alike_matches(spec)
    assert sum(block_kinds(spec).values()) == layers
    assert len(block_kinds(spec)) <= 12  # 3 types x MLP or not x dense or routed


# sharding.stage_tensors_alike stands for stage_tensors on one GPU of every stage: the same
# tensors cut the same way (counted by how many each stands for), their bytes in a dtype and
# the caching allocator's tails alike, for every preset (hybrids, MoE, MLA, vision towers)
# under tensor, pipeline and expert parallelism, stages of unequal length among them
STAGE_LAYOUTS = [Parallel(1, 1, 1), Parallel(2, 2, 1), Parallel(4, 1, 4), Parallel(6, 2, 3),
                 Parallel(8, 8, 1, ep=8), Parallel(16, 4, 4, ep=4)]


@pytest.mark.parametrize("name", sorted(preset_index()))
def test_a_stage_alike_stands_for_its_tensors(name: str) -> None:
    spec = load_preset(name).spec
    for layout in STAGE_LAYOUTS:
        for stage in range(layout.pp if layout.pp <= spec.layers else 0):
            listed = stage_tensors(spec, layout, stage)
            alike = stage_tensors_alike(spec, layout, stage)
            _stands_for(listed, alike)
            for dtype in ("bf16", "fp32", "int4"):
                assert held_bytes(alike, dtype) == stored_bytes(spec, listed, dtype, None, None)
                assert tail_bytes(alike, dtype) == tail_bytes(((t, 1) for t in listed), dtype)


# keeper (each entry's test made once) answers as kept (quant/modules.py) for every tensor:
# the lists checkpoints ship (gpt-oss's globs, DeepSeek's, AWQ's substrings), regular
# expressions good and bad, globs with ? and [], parents and whole names
KEEP_LISTS: list[tuple[tuple[str, ...], str]] = [
    (("model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"),
     "exact"),
    (("lm_head", "model.layers.0", "model.layers.1.mlp.experts", "model.layers.3.mlp"), "exact"),
    ((r"re:model\.layers\.[13]\.", "re:.*shared_expert", "re:(", "re:lm_hea", "re:^"), "exact"),
    (("model.layers.?.mlp.*", "model.layers.[02].self_attn.*_proj", "*embed*", "*.gate"), "exact"),
    (("visual", "lm_head", "layers.1.", "shared_expert", "experts", "q_proj", "re:.*gate$"),
     "substring"),
    (("model.layers", "model.layers.1", "model.layers.10", "self_attn", "model.layers.0.mlp.gate"),
     "exact"),
]


@pytest.mark.parametrize("name", ["gpt-oss-20b", "deepseek-v2-lite", "qwen1.5-moe-a2.7b",
                                  "llama3-8b", "gpt2-small"])
def test_keeper_answers_as_kept(name: str) -> None:
    spec = load_preset(name).spec
    tensors = model_tensors(spec)
    covered = 0
    for keep, match in KEEP_LISTS:
        test = keeper(keep, match)
        answers = [test(t) for t in tensors]
        assert answers == [kept(t, keep, match) for t in tensors], (keep, match)
        covered += sum(answers)
    assert 0 < covered < len(tensors) * len(KEEP_LISTS)


# layer_blind's claim: a list it passes covers a module in one layer exactly when it covers
# the same module in any other layer (layer numbers of one digit or several); the lists drawn
# hold globs, ?, [], digits and re: too, which it must refuse when they tell layers apart
ENTRY_PARTS = ["model", "layers", "self_attn", "mlp", "experts", "gate", "q_proj", "lm_head",
               "*", ".", "_", "s", "a", "?", "[0-2]", "1", "re:"]


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(st.lists(st.sampled_from(ENTRY_PARTS), min_size=1, max_size=6)
                        .map("".join), min_size=1, max_size=3),
       match=st.sampled_from(["exact", "substring"]),
       module=st.sampled_from(["self_attn.q_proj", "mlp.gate", "mlp.experts.gate_up_proj",
                               "block_sparse_moe.experts.w1"]),
       layers=st.lists(st.integers(0, 200), min_size=2, max_size=4))
def test_a_layer_blind_list_covers_every_layer_alike(entries: list[str], match: str,
                                                     module: str, layers: list[int]) -> None:
    from specsheet.quant.modules import _covers, layer_blind

    keep = tuple(entries)
    answers = {any(_covers(e, f"model.layers.{n}.{module}", match) for e in keep)
               for n in layers}
    assert len(answers) == 1 or not layer_blind(keep)


def test_layer_blind_refuses_what_can_tell_layers_apart() -> None:
    from specsheet.quant.modules import layer_blind

    assert layer_blind(("model.layers.*.self_attn", "lm_head"))
    for entry in ("model.layers.1", "model.layers.?.mlp", "model.layers.[02].mlp",
                  "re:.*gate$", "layers.1."):
        assert not layer_blind((entry,)), entry


# ---- bad input --------------------------------------------------------------------------------

def test_bad_input_names_the_problem() -> None:
    with pytest.raises(SpecError, match="did you mean 'gguf-q4_k_m'"):
        quantized_bytes(LLAMA31_8B, "gguf-q4_km")
    with pytest.raises(SpecError, match="fixed block"):
        quantized_bytes(LLAMA31_8B, "bnb-nf4", group_size=64)
    with pytest.raises(SpecError, match="group size"):
        quantized_bytes(LLAMA31_8B, "gptq-int4", group_size=0)
    with pytest.raises(SpecError, match="dtype"):
        quantized_bytes(LLAMA31_8B, "gptq-int4", dtype_unquantized="int4")
    with pytest.raises(SpecError, match="not a multiple of 384"):
        quantized_bytes(LLAMA31_8B, "awq-int4", group_size=384)
