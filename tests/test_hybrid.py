"""Hybrid models: the per-request state of Mamba and gated DeltaNet layers beside the KV cache.

The goldens (tests/test_golden.py) check every figure against transformers; these tests check
properties that do not depend on how specsheet computes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specsheet.figures import build_report
from specsheet.model.memory import kv_cache
from specsheet.model.params import count_params
from specsheet.model.spec import ModelSpec
from specsheet.sources.resolve import load_file, load_preset
from specsheet.views.count import count_document

DATA = Path(__file__).resolve().parent / "data"
HYBRIDS = ("granite-4.0-h-tiny", "qwen3-next-80b-a3b", "falcon-h1-0.5b", "nemotron-h-8b",
           "jamba-1.5-mini", "mamba2-780m", "bamba-9b", "lfm2-1.2b")


@pytest.mark.parametrize("name", HYBRIDS)
def test_the_state_does_not_grow_with_the_request(name: str) -> None:
    spec = load_file(DATA / f"{name}.json").spec
    short, long = kv_cache(spec, 8, "bf16"), kv_cache(spec, 4096, "bf16")
    assert short.state_bytes == long.state_bytes > 0
    # the attention layers grow by their bytes per token, nothing else does
    assert long.bytes_per_request - short.bytes_per_request == \
        (4096 - 8) * short.bytes_per_token


def test_the_state_as_transformers_shapes_it() -> None:
    """Granite 4.0 H Tiny, from the tensors transformers' cache holds (1 x conv_dim x kernel in
    bf16 and 1 x heads x head_dim x N in float32 per Mamba-2 layer), written out by hand."""
    spec = load_file(DATA / "granite-4.0-h-tiny.json").spec
    conv_dim = 3072 + 2 * 1 * 128
    per_layer = conv_dim * 4 * 2 + 48 * 64 * 128 * 4
    assert kv_cache(spec, 1, "bf16").state_bytes == 36 * per_layer


def test_recurrent_states_stay_in_float32_whatever_the_cache_dtype() -> None:
    spec = load_file(DATA / "qwen3-next-80b-a3b.json").spec
    bf16, fp8 = kv_cache(spec, 8, "bf16"), kv_cache(spec, 8, "fp8")
    recurrent = 36 * 32 * 128 * 128 * 4
    conv = 36 * (2 * 16 * 128 + 32 * 128) * 4
    assert bf16.state_bytes == recurrent + 2 * conv
    assert fp8.state_bytes == recurrent + conv


def test_a_mamba2_layer_adds_its_mixer_and_its_state() -> None:
    """Turning one attention layer of a hybrid into a Mamba-2 layer moves one layer's
    attention into the state-space component and adds one layer's state."""
    base: dict[str, object] = {
        "layers": 4, "d_model": 64, "heads": 4, "vocab": 100, "context": 128, "mlp": "gated",
        "norm": "rmsnorm", "attn_bias": False, "mlp_bias": False, "positions": "none",
        "ssm_inner": 128, "ssm_state": 16, "ssm_conv": 4, "ssm_heads": 8, "ssm_groups": 2,
        "ssm_chunk": 32}
    two = ModelSpec.create(**base, layer_types=["mamba2", "attention", "mamba2", "attention"])
    three = ModelSpec.create(**base, layer_types=["mamba2", "mamba2", "mamba2", "attention"])
    p2, p3 = count_params(two), count_params(three)
    in_proj = 64 * (2 * 128 + 2 * 2 * 16 + 8)
    mixer = in_proj + 128 * 64 + (128 + 2 * 2 * 16) * 5 + 3 * 8  # conv with bias, A, D, dt
    assert p3.ssm - p2.ssm == mixer
    assert p2.attention - p3.attention == 4 * 64 * 64
    assert p3.norms - p2.norms == 128  # the gated RMSNorm over d_inner
    state = (128 + 2 * 2 * 16) * 4 * 2 + 128 * 16 * 4
    assert kv_cache(three, 8).state_bytes - kv_cache(two, 8).state_bytes == state
    assert kv_cache(two, 8).bytes_per_token - kv_cache(three, 8).bytes_per_token == 2 * 64 * 2


def test_pure_attention_models_have_no_state() -> None:
    document = count_document(build_report(load_preset("llama3-8b"), tokens=8))
    assert document["kv_cache"]["state_bytes"] == 0
    assert document["kv_cache"]["layers_by_kind"] == {"attention": 32}
    assert document["params"]["components"]["ssm"] == 0


def test_a_hybrid_document_says_what_its_layers_are() -> None:
    document = count_document(build_report(load_preset("granite-4.0-h-tiny"), tokens=8))
    assert document["kv_cache"]["layers_by_kind"] == {"mamba2": 36, "attention": 4}
    kv = document["kv_cache"]
    assert kv["bytes_per_request"] == 8 * kv["bytes_per_token"] + kv["state_bytes"]
    json.dumps(document)


def test_the_table_shows_state_and_kv_apart() -> None:
    from specsheet.views.count import summary_view

    report = build_report(load_preset("granite-4.0-h-tiny"), tokens=32768)
    rows = {row.cells[0].strip(): row.cells[2] for row in summary_view(report).rows}
    assert rows["Request memory (T = 32,768: KV + state; 36 mamba2, 4 attention)"] == \
        "326,017,024 B"
    assert rows["KV cache (bf16, 4 attention layers)"] == "268,435,456 B"
    assert rows["state, whatever T (convolutions bf16, recurrent fp32)"] == "57,581,568 B"
