"""An explicit option always wins over the model's own value: every option (and --set on every
field) over every preset changes the figure it should, or is refused naming the option."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
import typer

from specsheet.cli.app import app
from specsheet.model.spec import FIELD_DOCS, INPUT_ONLY_FIELDS, MLP_KINDS, NORM_KINDS
from specsheet.sources.presets import preset_index

GROUP = typer.main.get_command(app)  # built once: these tests run the command ~900 times
PRESETS = sorted(preset_index())


def count(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``specsheet count ARGS --json`` in process; the exit code, document and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = GROUP.main(["count", *args, "--json"], standalone_mode=False)
    document = json.loads(out.getvalue()) if code == 0 else None
    return code, document, err.getvalue()


@pytest.fixture(scope="module")
def base() -> dict[str, dict[str, Any]]:
    documents = {name: count(name)[1] for name in PRESETS}
    assert all(documents.values())
    return documents  # type: ignore[return-value]


def attention_biases(spec: dict[str, Any], qkv: bool, o: bool) -> int:
    """Bias values of one layer's attention, written out here from the projections' shapes."""
    if spec["kv_lora_rank"]:
        q = spec["q_lora_rank"]
        qkv_width = q + spec["kv_lora_rank"] + spec["qk_rope_head_dim"]
    else:
        gates = 2 if spec["attention_gate"] else 1  # Qwen3-Next's q_proj holds the gate too
        qkv_width = (gates * spec["heads"] * spec["head_dim"]
                     + spec["kv_heads"] * (spec["head_dim"] + spec["v_head_dim"]))
    return (qkv_width if qkv else 0) + (spec["d_model"] if o else 0)


def refused_naming(stderr: str, option: str) -> bool:
    return stderr.startswith("specsheet: error: ") and option in stderr


@pytest.mark.parametrize("name", PRESETS)
def test_bias_and_tie_switches_win(name: str, base: dict[str, dict[str, Any]]) -> None:
    before = base[name]
    spec = before["spec"]
    for flag, value in (("--attn-bias", True), ("--no-attn-bias", False)):
        code, doc, _ = count(name, flag)
        assert code == 0 and doc is not None
        assert doc["spec"]["qkv_bias"] is value and doc["spec"]["o_bias"] is value, flag
        kinds = before["kv_cache"]["layers_by_kind"]  # only attention layers have attention
        layers = kinds.get("attention", 0) + kinds.get("hybrid", 0)
        change = layers * (attention_biases(spec, value, value) - attention_biases(
            spec, spec["qkv_bias"], spec["o_bias"]))
        assert doc["params"]["components"]["attention"] - before["params"]["components"][
            "attention"] == change, flag
    for flag, value in (("--mlp-bias", True), ("--no-mlp-bias", False)):
        code, doc, _ = count(name, flag)
        assert code == 0 and doc is not None and doc["spec"]["mlp_bias"] is value
    e, vocab = spec["embedding_dim"], spec["vocab"]
    for flag, value in (("--tied", True), ("--untied", False)):
        code, doc, _ = count(name, flag)
        assert code == 0 and doc is not None and doc["spec"]["tied_embeddings"] is value
        head = (0 if value else vocab * e) + (vocab if spec["head_bias"] else 0)
        assert doc["params"]["components"]["output_head"] == head


@pytest.mark.parametrize("name", PRESETS)
def test_size_options_win(name: str, base: dict[str, dict[str, Any]]) -> None:
    before = base[name]
    spec, p = before["spec"], before["params"]
    # one more layer adds exactly one block (of the kind the last layers have); a hybrid's
    # layer_types then no longer fits, and the error says so
    code, doc, stderr = count(name, "--layers", str(spec["layers"] + 1))
    if spec["layer_types"]:
        assert code == 2 and "layer_types: expected" in stderr
    else:
        assert code == 0 and doc is not None
        assert doc["params"]["total"] - p["total"] == p["per_block"]["total"]
    # 64 more tokens in the vocabulary: 64 more rows of the embedding (and of an untied head)
    code, doc, _ = count(name, "--vocab", str(spec["vocab"] + 64))
    assert code == 0 and doc is not None
    rows = 64 * spec["embedding_dim"]
    heads = (0 if spec["tied_embeddings"] else rows) + (64 if spec["head_bias"] else 0)
    assert doc["params"]["total"] - p["total"] == rows + heads
    # twice the context: a learned position table grows by context x d, nothing else does
    code, doc, _ = count(name, "--context", str(2 * spec["context"]))
    assert code == 0 and doc is not None and doc["spec"]["context"] == 2 * spec["context"]
    learned = spec["positions"] == "learned"
    assert doc["params"]["total"] - p["total"] == (spec["context"] * spec["d_model"]
                                                   if learned else 0)
    assert doc["kv_cache"]["tokens"] == 2 * spec["context"]


OPTIONS = ["--d-model", "--heads", "--kv-heads", "--head-dim", "--d-ff", "--mlp", "--norm",
           "--positions"]


def new_value(option: str, spec: dict[str, Any]) -> str:
    """A value other than the preset's own."""
    field = option[2:].replace("-", "_")
    if option == "--mlp":
        return next(k for k in MLP_KINDS if k != spec["mlp"])
    if option == "--norm":
        return next(k for k in NORM_KINDS if k != spec["norm"])
    if option == "--positions":
        return "rotary" if spec["positions"] != "rotary" else "learned"
    if option == "--kv-heads":
        return "1" if spec["kv_heads"] != 1 else str(spec["heads"])
    return str(2 * spec[field])


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("name", PRESETS)
def test_every_option_wins_or_is_refused_by_name(name: str, option: str,
                                                  base: dict[str, dict[str, Any]]) -> None:
    spec = base[name]["spec"]
    value = new_value(option, spec)
    code, doc, stderr = count(name, option, value)
    if code == 2:
        assert refused_naming(stderr, option), stderr
        return
    assert code == 0 and doc is not None
    field = option[2:].replace("-", "_")
    assert str(doc["spec"][field]) == value
    kinds = base[name]["kv_cache"]["layers_by_kind"]
    # a pure state-space model (Mamba) has no attention layer to read the head size and no
    # MLP to read d_ff or the MLP kind: those options change nothing
    if (option == "--head-dim" and not kinds.get("attention", 0) + kinds.get("hybrid", 0)) or (
            option in ("--d-ff", "--mlp") and len(spec["no_mlp_layers"]) == spec["layers"]):
        assert doc["params"]["total"] == base[name]["params"]["total"], option
        return
    if option in ("--d-model", "--d-ff", "--head-dim", "--mlp", "--norm") and not (
            option == "--d-ff" and spec["experts"] and len(spec["dense_layers"]) == 0) and not (
            option == "--norm" and value == "none" and spec["norm"] == "none"):
        assert doc["params"]["total"] != base[name]["params"]["total"], option
    if option == "--kv-heads" and not spec["kv_lora_rank"]:
        assert doc["kv_cache"]["bytes_per_token"] * spec["kv_heads"] == base[name]["kv_cache"][
            "bytes_per_token"] * int(value)


def set_value(doc_type: str, field: str, spec: dict[str, Any]) -> str:
    current = spec[field]
    if doc_type == "bool":
        return str(not current).lower()
    if doc_type == "choice":
        choices = next(f.choices for f in FIELD_DOCS if f.name == field)
        return next(c for c in choices if c != current)
    if doc_type == "layers":
        return "0"
    return str(current + 1 if doc_type == "count" else 2 * current)


SET_FIELDS = [f for f in FIELD_DOCS if f.name not in INPUT_ONLY_FIELDS]


@pytest.mark.parametrize("field", SET_FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("name", PRESETS[::4])  # every fourth preset: each family kind
def test_set_wins_or_is_refused_by_name(name: str, field: Any,
                                        base: dict[str, dict[str, Any]]) -> None:
    spec = base[name]["spec"]
    value = set_value(field.type, field.name, spec)
    code, doc, stderr = count(name, "--set", f"{field.name}={value}")
    if code == 2:
        assert refused_naming(stderr, f"--set {field.name}={value}"), stderr
        return
    assert code == 0 and doc is not None
    got = doc["spec"][field.name]
    expected = [int(value)] if field.type == "layers" else value
    assert (json.dumps(got) if field.type == "bool" else got if field.type == "layers"
            else str(got)) == expected


def test_the_review_case_attn_bias_on_presets_that_spell_out_their_biases() -> None:
    """26 presets write qkv_bias and o_bias; --attn-bias was silently ignored on them."""
    spelled = [n for n, data in preset_index().items() if "qkv_bias" in data]
    assert len(spelled) >= 20
    for name in spelled:
        code, doc, _ = count(name, "--attn-bias")
        assert code == 0 and doc is not None
        assert doc["spec"]["qkv_bias"] and doc["spec"]["o_bias"], name
