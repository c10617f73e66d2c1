"""specsheet against transformers: the goldens of scripts/make_goldens.py for real configs.

Each tests/data/NAME.json is a published config.json; tests/golden/NAME.json holds what
transformers' own model class gives for it (parameters by component, active parameters, the KV
cache, FLOPs of T-token forwards). Regenerate with scripts/make_goldens.py in a scratch venv.

tests/data/sources.json names where each config comes from: the model's repository and
config.json URL, and in `note` the public copy it was taken from (for gated or unreachable
files: a copy kept by another project, at a named commit) or, for a config built from a model
card's numbers, the sources of those numbers and what was changed.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from specsheet.figures import build_report
from specsheet.model.memory import kv_cache
from specsheet.model.params import count_params, mlp_weights
from specsheet.model.spec import Model
from specsheet.sources.resolve import load_file

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
GOLDENS = sorted((TESTS / "golden").glob("*.json"))
SOURCES: dict[str, Any] = json.loads((DATA / "sources.json").read_text())


def golden(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def test_every_config_has_a_golden_and_a_source() -> None:
    configs = {p.stem for p in DATA.glob("*.json")} - {"sources"}
    assert configs == {p.stem for p in GOLDENS}
    multimodal = {f"multimodal/{p.stem}" for p in (DATA / "multimodal").glob("*.json")}
    assert configs | multimodal == set(SOURCES)
    assert len(configs) >= 30
    families = {json.loads((DATA / f"{name}.json").read_text()).get("model_type")
                for name in configs}
    assert len(families) >= 21  # gemma3 wraps gemma3_text


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_parameters_match_transformers(path: Path) -> None:
    g = golden(path)
    spec = load_file(DATA / f"{path.stem}.json").spec
    # a wrapper's goldens here are its language model's (AutoModelForCausalLM of text_config);
    # test_multimodal.py checks the whole checkpoint
    params = count_params(dataclasses.replace(spec, vision=None))
    assert params.total == g["total"]
    assert params.components() == {k: g["components"].get(k, 0) for k in params.components()}
    assert params.moe._asdict() == g["moe"]
    assert params.active == g["active"]


def assert_cache_and_flops(model: Model, g: dict[str, Any]) -> None:
    """FLOPs per token at each golden T, KV bytes per token, and the request past a window."""
    routed = g.get("flops_per_token_routed")
    for tokens, flops in g["flops_per_token"].items():
        report = build_report(model, tokens=int(tokens))
        if routed:  # transformers runs every expert (Llama 4): the difference is exactly the
            # matrix multiplications of the experts a token does not choose
            spec = model.spec
            unchosen = 2 * spec.moe_layers * (spec.experts - spec.experts_per_token) * \
                mlp_weights(spec, spec.expert_d_ff)
            assert flops - routed[tokens] == unchosen
            flops = routed[tokens]
        assert report.flops.total == flops, f"T = {tokens}"
        assert report.kv.bytes_per_token == g["kv_bytes_per_token_bf16"]
    beyond = g.get("kv_beyond_window")
    if beyond:
        kv = kv_cache(model.spec, beyond["tokens"], "bf16")
        assert kv.bytes_per_request == beyond["bytes_bf16"]
        assert len(model.spec.sliding_layers) == beyond["windowed_layers"]
    assert_state(model, g)


def assert_state(model: Model, g: dict[str, Any]) -> None:
    """The state of Mamba and gated DeltaNet layers, and the request's memory (keys, values and
    states) at each length the golden read transformers' cache at: bf16 keys, values and
    convolution states, float32 recurrent states."""
    state = g.get("state", {"conv_elements": 0, "recurrent_elements": 0, "bytes": 0})
    kv = kv_cache(model.spec, 8, "bf16")
    assert kv.conv_state_elements == state["conv_elements"]
    assert kv.recurrent_state_elements == state["recurrent_elements"]
    assert kv.state_bytes == state["bytes"]
    for tokens, held in g.get("request_bytes", {}).items():
        assert kv_cache(model.spec, int(tokens), "bf16").bytes_per_request == held, tokens


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_kv_cache_and_flops_match_transformers(path: Path) -> None:
    assert_cache_and_flops(load_file(DATA / f"{path.stem}.json"), golden(path))


@pytest.mark.parametrize("name", sorted(n for n, s in SOURCES.items() if s["published_total"]))
def test_published_totals_confirm_the_configs(name: str) -> None:
    """Where the publisher's count is known, transformers' count of our copy of the config
    equals it: evidence that the copy is faithful."""
    assert golden(TESTS / "golden" / f"{name}.json")["total"] == SOURCES[name]["published_total"]


REFERENCE_POINTS = {  # from the issue, computed by transformers' own classes
    "mixtral-8x7b": (46_702_792_704, 12_879_925_248),
    "llama-3.1-405b": (405_853_388_800, 405_853_388_800),
    "deepseek-v3": (671_026_404_352, None),
    "gemma-2-9b": (9_241_705_984, 9_241_705_984),
    "qwen2.5-7b": (7_615_616_512, 7_615_616_512),
}


@pytest.mark.parametrize("name", sorted(REFERENCE_POINTS))
def test_reference_points(name: str) -> None:
    total, active = REFERENCE_POINTS[name]
    params = count_params(load_file(DATA / f"{name}.json").spec)
    assert params.total == total
    if active is not None:
        assert params.active == active


def test_deepseek_v3_caches_its_latent() -> None:
    spec = load_file(DATA / "deepseek-v3.json").spec
    assert kv_cache(spec, 1, "bf16").bytes_per_token == 70_272  # 61 x (512 + 64) x 2


DEFAULTS = sorted((TESTS / "golden" / "defaults").glob("*.json"))


@pytest.mark.parametrize("path", DEFAULTS, ids=lambda p: p.stem)
def test_absent_keys_take_the_defaults_transformers_applies(path: Path, tmp_path: Path) -> None:
    """A config.json of nothing but a model_type: specsheet applies the same defaults as
    transformers' configuration class of that family."""
    g = golden(path)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": path.stem}))
    model = load_file(config)
    params = count_params(dataclasses.replace(model.spec, vision=None))  # the text golden
    assert params.total == g["total"]
    assert params.components() == {k: g["components"].get(k, 0) for k in params.components()}
    assert params.active == g["active"]
    assert_cache_and_flops(model, g)


def test_every_family_has_a_defaults_golden() -> None:
    from specsheet.sources.hf_config.families import FAMILIES

    # deepseek_v2's configuration class leaves num_experts_per_tok unset: transformers cannot
    # build it without that key, and specsheet asks for it; nor dots1's (n_routed_experts and
    # n_shared_experts default to None)
    # hunyuan_v1_dense (head_dim defaults to None) and dbrx (its attention configuration has no
    # rope_theta) cannot be built from their defaults alone either; kimi_k2 has no configuration
    # class in transformers (it is read as deepseek_v3, as its auto_map says); granitemoehybrid's
    # defaults make every layer Mamba-2, which transformers 5.24 cannot run (its cache asks an
    # attention layer for the sequence length), nor bamba's (no attn_layer_indices: no attention
    # layer); nemotron_h's default blocks include MoE blocks, which specsheet does not support
    # yet; qwen2_5_vl_text and qwen3_vl_text, the language models of Qwen2.5-VL and Qwen3-VL,
    # have no causal-LM class (tests/golden/multimodal builds them inside their wrappers)
    assert {p.stem for p in DEFAULTS} == set(FAMILIES) - {
        "deepseek_v2", "hunyuan_v1_dense", "dbrx", "kimi_k2", "granitemoehybrid", "nemotron_h",
        "qwen2_5_vl_text", "qwen3_vl_text", "bamba", "dots1"}


def test_hybrid_request_memory_equals_transformers_cache_at_8_and_32768_tokens() -> None:
    """Issue 12's check: a hybrid's memory per request (attention layers' keys and values at
    T, plus the Mamba-2 layers' fixed state) is what transformers' cache holds after a
    forward of T = 8 and T = 32,768 tokens."""
    for name in ("granite-4.0-h-tiny", "qwen3-next-80b-a3b"):
        g = golden(TESTS / "golden" / f"{name}.json")
        spec = load_file(DATA / f"{name}.json").spec
        assert set(g["request_bytes"]) == {"8", "32768"}
        for tokens in (8, 32768):
            kv = kv_cache(spec, tokens, "bf16")
            assert kv.bytes_per_request == g["request_bytes"][str(tokens)]
            assert kv.bytes_per_request - kv.state_bytes == tokens * kv.bytes_per_token


VARIANTS = sorted((TESTS / "golden" / "variants").glob("*.json"))


@pytest.mark.parametrize("path", VARIANTS, ids=lambda p: p.stem)
def test_variants_of_published_configs(path: Path, tmp_path: Path) -> None:
    """A family's switches that no config in tests/data turns (Qwen2-MoE's decoder_sparse_step
    and mlp_only_layers, q/k norms, SmolLM3's windows, Llama 4's interleaved MoE layers): a
    published config with a few keys changed, against transformers."""
    g = golden(path)
    data = json.loads((DATA / f"{g['variant_of']}.json").read_text())
    if isinstance(data.get("text_config"), dict):
        data["text_config"].update(g["changes"])
    else:
        data.update(g["changes"])
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    model = load_file(config)
    params = count_params(dataclasses.replace(model.spec, vision=None))  # the text golden
    assert params.total == g["total"]
    assert params.components() == {k: g["components"].get(k, 0) for k in params.components()}
    assert params.moe._asdict() == g["moe"]
    assert params.active == g["active"]
    assert_cache_and_flops(model, g)
