"""The census of transformers' decoder families (tests/data/census/census.json,
scripts/census.py) and the refusals it shares a table with
(specsheet/sources/hf_config/unsupported.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specsheet.errors import SpecError
from specsheet.sources.hf_config.families import FAMILIES, fields_from_hf_config
from specsheet.sources.hf_config.unsupported import (
    ENCODER_DECODER,
    ENCODER_ONLY,
    TEXT_MODELS,
    UNSUPPORTED,
    WRAPPERS,
    refusal,
)
from specsheet.sources.hf_config.vision import FLAT_TEXT
from tests.test_docs import load_script

ROOT = Path(__file__).resolve().parent.parent
CENSUS: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "census" / "census.json")
                                    .read_text())
TYPES: dict[str, Any] = CENSUS["model_types"]
census: Any = load_script("census")
ROWS = {row[0]: row for row in census.rows(CENSUS)}
# kimi_k2 is no transformers model_type: Kimi K2's config.json names DeepseekV3Config in its
# auto_map, and specsheet reads it as deepseek_v3
# kimi_k2 has no configuration class; qwen2_5_vl_text and qwen3_vl_text are the language models
# of Qwen2.5-VL and Qwen3-VL, read inside their wrappers (no causal-LM class of their own)
NOT_IN_TRANSFORMERS = {"kimi_k2", "qwen2_5_vl_text", "qwen3_vl_text"}


def test_the_census_lists_transformers_decoder_families() -> None:
    assert CENSUS["transformers"] == "5.24.0"
    assert len(TYPES) == 282
    # the families of the issue that started it, as transformers names their classes
    assert TYPES["bamba"]["causal_lm"] == "BambaForCausalLM"
    assert TYPES["llava"]["image_text_to_text"] == "LlavaForConditionalGeneration"
    assert TYPES["t5gemma2"]["encoder_decoder"] and TYPES["bert"]["masked_lm"]


def test_every_model_type_is_classified() -> None:
    statuses = {row[2] for row in ROWS.values()}
    assert statuses == {"supported", "whole checkpoint", "language model only", "encoder-only",
                        "encoder-decoder", "not supported"}
    assert {t for t, row in ROWS.items() if row[2] == "whole checkpoint"} == {
        "gemma3", "llama4", "llava", "mistral3", "qwen2_5_vl", "qwen3_vl"}


def test_every_supported_family_has_a_golden() -> None:
    """A family marked supported is backed by a config of tests/data whose figures
    tests/golden pins against transformers."""
    for model_type in set(TYPES) & set(FAMILIES):
        golden = ROWS[model_type][3]
        assert golden.startswith("golden: "), model_type
        for name in golden.removeprefix("golden: ").split(", "):
            assert (ROOT / "tests" / "golden" / f"{name}.json").exists()


def test_every_family_specsheet_reads_is_a_supported_one_of_the_census() -> None:
    supported = {t for t, row in ROWS.items() if row[2] == "supported"}
    assert set(FAMILIES) - NOT_IN_TRANSFORMERS == supported
    # 47 with the census; then mamba, falcon_mamba, gpt_bigcode, gpt_neo and mpt; bamba, lfm2,
    # dots1, minimax_m2, exaone, glm, glm4_moe_lite
    assert len(supported) == 59


def test_a_golden_missing_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(census, "goldens", lambda: {})
    assert {row[3] for row in census.rows(CENSUS) if row[2] == "supported"} == {"no golden"}


def test_the_docs_table_is_current() -> None:
    """Run python scripts/census.py when this fails."""
    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    match = census.SECTION.search(text)
    assert match is not None
    assert text[match.end(1):match.start(2)] == census.table(CENSUS)


def test_the_table_and_the_census_agree() -> None:
    for model_type, entry in TYPES.items():
        if entry["encoder_decoder"]:
            assert model_type in ENCODER_DECODER, model_type
        elif entry["masked_lm"]:
            assert model_type in ENCODER_ONLY, model_type
    assert not set(UNSUPPORTED) & set(FAMILIES)
    assert set(UNSUPPORTED) <= set(TYPES)
    for model_type, entry in UNSUPPORTED.items():
        assert not entry.closest or entry.closest in FAMILIES, model_type
        assert not entry.closest or entry.same or entry.identical or entry.differs, model_type
    for text, wrapper in TEXT_MODELS.items():
        assert TYPES[wrapper]["text_config_default"] == text
    assert WRAPPERS == {t for t, e in TYPES.items() if e["text_config"] and t not in FAMILIES
                        and t not in UNSUPPORTED and not e["encoder_decoder"]}


def test_relabelling_is_suggested_only_for_the_same_model() -> None:
    """A suggested family is one transformers builds from the same configuration class."""
    same = {t: e.closest for t, e in UNSUPPORTED.items() if e.same}
    assert same == {"gpt-sw3": "gpt2"}
    for model_type, family in same.items():
        assert TYPES[model_type]["config_class"] == TYPES[family]["config_class"] == "GPT2Config"


def test_an_identical_family_is_pinned_by_transformers_and_specsheet() -> None:
    """CodeGen is built by its own class, but for the same keys transformers gives GPT-J's
    parameters, KV and FLOPs (tests/golden/identical, scripts/make_goldens.py --identical),
    and specsheet reading the file as gptj gives them too: relabelling is exact."""
    from specsheet.figures import build_report
    from specsheet.sources.resolve import load_file

    identical = {t: e.closest for t, e in UNSUPPORTED.items() if e.identical}
    assert identical == {"codegen": "gptj"}
    pair = json.loads((ROOT / "tests" / "golden" / "identical" / "codegen.json").read_text())
    ours, theirs = pair["codegen"], pair["gptj"]
    assert ours["total"] == theirs["total"] == 155_271_168
    assert ours["flops_per_token"] == theirs["flops_per_token"]
    assert ours["kv_bytes_per_token_bf16"] == theirs["kv_bytes_per_token_bf16"]
    assert "gives the same figures" in refused("codegen")
    path = ROOT / "tests" / "data" / "census" / "codegen-as-gptj.json"
    model = load_file(path)
    assert json.loads(path.read_text()) == {"model_type": "gptj", **pair["keys"]}
    for tokens, flops in ours["flops_per_token"].items():
        report = build_report(model, tokens=int(tokens))
        assert report.params.total == ours["total"]
        assert report.flops.total == flops, tokens
        assert report.kv.bytes_per_token == ours["kv_bytes_per_token_bf16"]


def refused(model_type: str) -> str:
    with pytest.raises(SpecError) as caught:
        fields_from_hf_config({"model_type": model_type}, "config.json")
    return str(caught.value)


@pytest.mark.parametrize(("model_type", "closest", "not_suggested"), [
    ("zamba2", "granitemoehybrid", "jamba"),  # Mamba-2 layers, jamba's are Mamba-1
    ("hunyuan_v1_moe", "qwen2_moe", "hunyuan_v1_dense"),  # an MoE, the other dense
    ("zamba", "mamba", "zamba2"),  # Mamba-1 layers and shared attention blocks
])
def test_no_suggestion_of_a_family_with_other_figures(model_type: str, closest: str,
                                                      not_suggested: str) -> None:
    message = refused(model_type)
    assert "did you mean" not in message
    assert f"the closest supported family is '{closest}'" in message
    assert "relabelling the file as it would give different figures" in message
    assert f"'{not_suggested}'" not in message


def test_every_family_refused_says_why() -> None:
    """Every model_type of the census but the supported ones, as a file of its own keys (a
    wrapper's without text_config), is refused with its reason, never a family of a similar
    name."""
    for model_type in set(TYPES) - set(FAMILIES) - set(FLAT_TEXT):  # flat: read as text keys
        message = refused(model_type)
        assert "did you mean" not in message and "supported: gpt2" not in message, message
    assert "the file has none" in refused("llava")


def test_a_misspelt_family_still_gets_its_suggestion() -> None:
    assert refusal("lama") is None
    assert "(did you mean 'llama'?)" in refused("lama")
