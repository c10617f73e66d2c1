"""config.json sources: files, model folders, text_config, the Hugging Face cache, convert."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.model.params import count_params
from specsheet.sources.resolve import load_file

DATA = Path(__file__).resolve().parent / "data"
CONFIGS = sorted(p for p in DATA.glob("*.json") if p.stem != "sources")
runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env)


def run_json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = run(*args, "--json", env=env)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_a_config_json_file() -> None:
    doc = run_json("count", str(DATA / "mixtral-8x7b.json"))
    assert doc["params"]["total"] == 46_702_792_704
    assert doc["params"]["active"] == 12_879_925_248
    assert doc["params"]["moe"]["router"] == 32 * 8 * 4096
    assert doc["description"] == "mixtral config.json"


def test_a_model_folder_names_the_model(tmp_path: Path) -> None:
    folder = tmp_path / "Llama-3.2-1B"
    folder.mkdir()
    shutil.copy(DATA / "llama-3.2-1b.json", folder / "config.json")
    doc = run_json("count", str(folder))
    assert doc["name"] == "Llama-3.2-1B"
    assert doc["params"]["total"] == 1_235_814_400


def test_text_config_is_read_through_and_said() -> None:
    doc = run_json("count", str(DATA / "gemma-3-4b.json"))
    assert doc["description"] == ("gemma3_text config.json, read from text_config, siglip "
                                  "vision tower and projector counted")
    assert doc["params"]["language_model"] == 3_880_263_168
    assert doc["origin"].endswith("gemma-3-4b.json")


def cache_with(root: Path, repo: str, config: Path, ref: bool = True) -> Path:
    folder = root / ("models--" + repo.replace("/", "--"))
    snapshot = folder / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    shutil.copy(config, snapshot / "config.json")
    if ref:
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text("0123abcd")
    return folder


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_the_hugging_face_cache(tmp_path: Path, variable: str) -> None:
    hub = tmp_path / "hub"
    cache_with(hub, "Qwen/Qwen2.5-7B", DATA / "qwen2.5-7b.json")
    env = {variable: str(hub if variable == "HF_HUB_CACHE" else tmp_path)}
    doc = run_json("count", "--hf", "Qwen/Qwen2.5-7B", env=env)
    assert doc["name"] == "Qwen2.5-7B"
    assert doc["params"]["total"] == 7_615_616_512
    assert run_json("count", "hf:Qwen/Qwen2.5-7B", env=env)["params"] == doc["params"]
    both = run_json("compare", "hf:Qwen/Qwen2.5-7B", "llama3-8b",
                    str(DATA / "gemma-2-9b.json"), env=env)
    assert [m["params"]["total"] for m in both["models"]] == [
        7_615_616_512, 8_030_261_248, 9_241_705_984]
    checked = run("check", "--hf", "Qwen/Qwen2.5-7B", "--max-params", "7.6B", env=env)
    assert checked.exit_code == 1


def test_the_cache_without_refs_takes_the_newest_snapshot(tmp_path: Path) -> None:
    cache_with(tmp_path, "org/model", DATA / "olmo-1b.json", ref=False)
    doc = run_json("count", "hf:org/model", env={"HF_HUB_CACHE": str(tmp_path)})
    assert doc["params"]["total"] == 1_176_764_416


def test_a_model_not_in_the_cache(tmp_path: Path) -> None:
    """A name no shipped preset was built from (one that was answers from its preset)."""
    result = run("count", "--hf", "someone/Some-Model-8B", env={"HF_HUB_CACHE": str(tmp_path)})
    assert result.exit_code == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert str(tmp_path / "models--someone--Some-Model-8B") in message
    assert "hf download someone/Some-Model-8B config.json" in message


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_convert_round_trips(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "preset.yaml"
    result = run("convert", str(path), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    # a preset is a language model: a multimodal config's tower is not one of its fields
    assert load_file(out).spec == dataclasses.replace(load_file(path).spec, vision=None)


def test_convert_to_stdout_is_a_preset() -> None:
    result = run("convert", str(DATA / "deepseek-v2-lite.json"))
    assert result.exit_code == 0
    assert "kv_lora_rank: 512" in result.stdout
    assert "dense_layers: [0]" in result.stdout
    assert result.stdout.startswith("# deepseek-v2-lite: written by specsheet convert")


def write_config(tmp_path: Path, **changes: Any) -> str:
    data = json.loads((DATA / "llama-2-7b.json").read_text())
    data.update(changes)
    data = {k: v for k, v in data.items() if v != "DROP"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(("changes", "needles"), [
    ({"model_type": "lama"}, ["model_type 'lama' is not supported", "did you mean 'llama'",
                              "deepseek_v3"]),
    ({"model_type": "DROP"}, ["missing key 'model_type'"]),
    ({"hidden_size": "4096"}, ["key 'hidden_size'", "positive integer"]),
    ({"num_hidden_layers": -1}, ["key 'num_hidden_layers'"]),
    ({"tie_word_embeddings": "no"}, ["key 'tie_word_embeddings'", "true or false"]),
    ({"num_attention_heads": 7}, ["num_attention_heads", "does not divide hidden_size 4096"]),
    ({"num_key_value_heads": 5}, ["kv_heads: 5 does not divide heads 32"]),
])
def test_bad_configs_name_the_key(tmp_path: Path, changes: dict[str, Any],
                                  needles: list[str]) -> None:
    result = run("count", write_config(tmp_path, **changes), "--json")
    assert result.exit_code == 2, result.stdout
    assert result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    for needle in needles:
        assert needle in line, line


def test_a_key_without_a_transformers_default(tmp_path: Path) -> None:
    data = json.loads((DATA / "deepseek-v2-lite.json").read_text())
    del data["num_experts_per_tok"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    result = run("count", str(path))
    assert result.exit_code == 2
    assert "missing key 'num_experts_per_tok'" in result.stderr


def test_absent_keys_take_the_transformers_defaults(tmp_path: Path) -> None:
    """Mistral's config class windows every layer at 4,096 positions unless told otherwise;
    a null sliding_window means no window."""
    data = {"model_type": "mistral"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    spec = load_file(path).spec
    assert (spec.layers, spec.d_model, spec.kv_heads, spec.sliding_window) == (32, 4096, 8, 4096)
    path.write_text(json.dumps({**data, "sliding_window": None}))
    assert load_file(path).spec.sliding_window == 0


@pytest.mark.parametrize(("setting", "needle"), [
    ("experts", "expected FIELD=VALUE"),
    ("expertz=8", "did you mean 'experts'"),
    ("experts=eight", "field 'experts'"),
    ("sliding_layers=0,x", "layer indices"),
    ("tied_embeddings=maybe", "true or false"),
])
def test_bad_set_options(setting: str, needle: str) -> None:
    result = run("count", "llama3-8b", "--set", setting)
    assert result.exit_code == 2
    assert needle in result.stderr


def test_set_options_reach_every_field() -> None:
    doc = run_json("count", "llama3-8b", "--set", "experts=8", "--set", "experts_per_token=2",
                   "--set", "expert_d_ff=14336", "--set", "sliding_window=4096")
    # Mixtral 8x7B with Llama 3's vocabulary in its embedding and its head
    assert doc["params"]["total"] == 46_702_792_704 + 2 * (128256 - 32000) * 4096
    assert doc["kv_cache"]["sliding_layers"] == 32


def test_smollm3_windows_its_no_rope_layers(tmp_path: Path) -> None:
    """SmolLM3Config windows the layers without RoPE (every fourth, or the 0s of
    no_rope_layers) when use_sliding_window is set; otherwise none."""
    data = json.loads((DATA / "smollm3-3b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "use_sliding_window": True, "sliding_window": 4096}))
    assert load_file(path).spec.sliding_layers == tuple(range(3, 36, 4))
    rope = [1] * 35 + [0]
    path.write_text(json.dumps({**data, "use_sliding_window": True, "sliding_window": 4096,
                                "no_rope_layers": rope}))
    assert load_file(path).spec.sliding_layers == (35,)
    assert load_file(DATA / "smollm3-3b.json").spec.sliding_window == 0


@pytest.mark.parametrize(("name", "key", "extra"), [
    ("phi-2.json", "qk_layernorm", 2 * 2 * 80),  # two LayerNorms one head wide
    ("aya-23-8b.json", "use_qk_norm", (32 + 8) * 128),  # weight only, over all heads
])
def test_qk_norm_switches(tmp_path: Path, name: str, key: str, extra: int) -> None:
    data = json.loads((DATA / name).read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, key: True}))
    on, off = load_file(path).spec, load_file(DATA / name).spec
    assert count_params(on).block.norms - count_params(off).block.norms == extra


def test_olmoe_counts_as_derived_by_hand(tmp_path: Path) -> None:
    """OLMoE-1B-7B-0924, written out: per layer q, k, v, o of 2,048 x 2,048, a query norm of
    2,048 and a key norm of 16 heads x 128, two block norms, a router of 64 x 2,048 and 64
    experts of 3 x 2,048 x 1,024; untied embedding and head of 50,304 x 2,048. With 4 KV heads
    and attention_bias, k and v shrink to 2,048 x 512 (with biases), the key norm to 512."""
    d, f, experts, vocab, layers = 2048, 1024, 64, 50304, 16
    layer = 4 * d * d + 2 * d + 2 * d + experts * d + experts * 3 * d * f
    total = layers * layer + 2 * vocab * d + d
    assert count_params(load_file(DATA / "olmoe-1b-7b.json").spec).total == total == 6_919_161_856
    data = json.loads((DATA / "olmoe-1b-7b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "num_key_value_heads": 4, "attention_bias": True}))
    kv = 4 * 128
    gqa = 2 * d * d + 2 * d * kv + 2 * d + 2 * kv + d + kv + 2 * d + experts * d \
        + experts * 3 * d * f
    assert count_params(load_file(path).spec).total == layers * gqa + 2 * vocab * d + d
