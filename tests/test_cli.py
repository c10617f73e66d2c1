"""The CLI through typer's CliRunner: real figures in every output, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reference import PARAMS
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.model.spec import FIELD_DOCS, INPUT_ONLY_FIELDS

runner = CliRunner()

GPT2_FIVE = ["--layers", "12", "--d-model", "768", "--heads", "12", "--vocab", "50257",
             "--context", "1024"]


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def run_json(*args: str) -> dict[str, Any]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_count_table_shows_the_gpt2_small_breakdown() -> None:
    result = run("count", "gpt2-small")
    assert result.exit_code == 0
    out = result.stdout
    for figure in ("124,439,808", "39,383,808", "31.6%", "28,348,416", "22.8%", "56,669,184",
                   "45.5%", "2,362,368", "33.3%", "4,722,432", "66.7%", "7,087,872",
                   "4d² + 4d", "8d² + 5d", "249 MB", "248,879,616 B", "284,812,800",
                   "37,748,736 B", "36,864 B", "published total (matches)"):
        assert figure in out, figure
    assert "\x1b[" not in out


def test_count_json_schema_for_gpt2_small() -> None:
    doc = run_json("count", "gpt2-small", "--tokens", "8")
    assert doc["schema_version"] == 1
    assert doc["name"] == "gpt2-small"
    expected = {
        "layers": 12, "d_model": 768, "heads": 12, "vocab": 50257, "context": 1024,
        "kv_heads": 12, "head_dim": 64, "v_head_dim": 64, "d_ff": 3072, "mlp": "plain",
        "norm": "layernorm", "norms_per_block": 2, "final_norm": True, "qkv_bias": True,
        "o_bias": True, "mlp_bias": True, "positions": "learned", "position_offset": 0,
        "embedding_dim": 768, "tied_embeddings": True, "head_bias": False, "experts": 0,
        "sliding_window": 0, "sliding_layers": [], "kv_lora_rank": 0,
    }
    assert {k: doc["spec"][k] for k in expected} == expected
    assert set(doc["spec"]) == {f.name for f in FIELD_DOCS} - set(INPUT_ONLY_FIELDS)
    token, position, attention, mlp, norms, head, total = PARAMS["gpt2-small"]
    assert doc["params"]["total"] == doc["params"]["active"] == total
    assert doc["params"]["components"] == {
        "token_embedding": token, "position_embedding": position, "embedding_projections": 0,
        "attention": attention, "ssm": 0, "mlp": mlp, "norms": norms, "output_head": head}
    assert doc["params"]["non_embedding"] == 85_056_000
    assert doc["params"]["per_block"] == {"attention": 2_362_368, "mlp": 4_722_432,
                                          "norms": 3_072, "total": 7_087_872}
    assert {k: doc["memory"][k] for k in ("format", "dtype", "weights_bytes", "overhead_bytes",
                                          "tensor_types", "lower_bound")} == {
        "format": "bf16", "dtype": "bf16", "weights_bytes": 248_879_616, "overhead_bytes": 0,
        "tensor_types": {"BF16": 248_879_616}, "lower_bound": False}
    assert doc["memory"]["bits_per_weight"] == 16.0
    assert doc["kv_cache"]["tokens"] == 8
    assert doc["kv_cache"]["bytes_per_token"] == 36_864
    assert doc["kv_cache"]["bytes_per_request"] == 8 * 36_864
    assert doc["flops"]["tokens"] == 8
    assert doc["flops"]["forward_per_token"] == 247_358_976
    assert sum(doc["flops"]["components"].values()) == 247_358_976
    assert doc["flops"]["approx_2n_per_token"] == 170_112_000


def test_five_numbers_give_the_same_figures_as_the_preset() -> None:
    preset = run_json("count", "gpt2-small")
    five = run_json("count", *GPT2_FIVE)
    for key in ("spec", "params", "memory", "kv_cache", "flops"):
        assert five[key] == preset[key]
    assert five["name"] == "custom"


def test_overrides_replace_preset_values() -> None:
    doc = run_json("count", "llama3-8b", "--context", "32768", "--kv-heads", "32")
    assert doc["spec"]["context"] == 32768
    assert doc["spec"]["kv_heads"] == 32
    assert doc["kv_cache"]["tokens"] == 32768
    assert doc["kv_cache"]["bytes_per_token"] == 2 * 32 * 32 * 128 * 2
    assert doc["published_total"] is None  # the overridden model is not the published one


def test_tiny_with_eight_tokens() -> None:
    doc = run_json("count", "tiny", "--tokens", "8")
    assert doc["params"]["total"] == 7_680
    assert doc["flops"]["forward_per_token"] == 14_336


@pytest.mark.parametrize(("dtype", "weights"), [("fp32", 4 * 124_439_808),
                                                 ("int4", 124_439_808 // 2)])
def test_dtype_option(dtype: str, weights: int) -> None:
    doc = run_json("count", "gpt2-small", "--dtype", dtype, "--kv-dtype", "fp8")
    assert (doc["memory"]["dtype"], doc["memory"]["weights_bytes"]) == (dtype, weights)
    assert doc["memory"]["lower_bound"] is (dtype == "int4")
    assert doc["kv_cache"]["bytes_per_token"] == 36_864 // 2


def test_count_reads_a_preset_file(tmp_path: Path) -> None:
    path = tmp_path / "my-model.yaml"
    path.write_text("layers: 12\nd_model: 768\nheads: 12\nvocab: 50257\ncontext: 1024\n")
    doc = run_json("count", str(path))
    assert doc["name"] == "my-model"
    assert doc["params"]["total"] == 124_439_808


def test_compare_llama3_8b_and_70b() -> None:
    result = run("compare", "llama3-8b", "llama3-70b")
    assert result.exit_code == 0
    out = result.stdout
    assert "embeddings + output head" in out
    line = next(li for li in out.splitlines() if "embeddings + output head" in li)
    assert "13.1%" in line and "3.0%" in line
    assert "8.79x" in out  # 70.6B / 8.03B parameters


def test_compare_json_keeps_the_order_given() -> None:
    doc = run_json("compare", "llama3-70b", "gpt2-small", "tiny", "--tokens", "8")
    assert doc["schema_version"] == 1
    assert [m["name"] for m in doc["models"]] == ["llama3-70b", "gpt2-small", "tiny"]
    assert [m["flops"]["forward_per_token"] for m in doc["models"]] == [
        139_024_400_384, 247_358_976, 14_336]


def test_presets_lists_every_preset() -> None:
    result = run("presets", "--long")
    assert result.exit_code == 0
    for name, figures in PARAMS.items():
        assert name in result.stdout
        assert f"{figures[-1]:,}" in result.stdout
    doc = run_json("presets")
    by_name = {p["name"]: p for p in doc["presets"]}
    assert by_name["llama3-8b"]["spec"]["kv_heads"] == 8
    assert all(p["total"] == p["published_total"] for p in doc["presets"])


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("specsheet ")
    for command in ("count", "compare", "presets"):
        result = run(command, "--help")
        assert result.exit_code == 0 and result.stdout.strip()
    assert "no causal halving" in run("count", "--help").stdout


# ---- bad input ---------------------------------------------------------------------------------

def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BAD_FILES = {
    "not YAML": ("layers: [12\n", "line 2"),
    "a list": ("- 12\n- 768\n", "expected a mapping"),
    "a scalar": ("12\n", "expected a mapping"),
    "unknown field": ("layers: 12\nd_modle: 768\n", "did you mean 'd_model'"),
    "missing field": ("layers: 12\nd_model: 768\nheads: 12\nvocab: 5\n", "missing field context"),
    "float": ("layers: 12.5\nd_model: 768\nheads: 12\nvocab: 5\ncontext: 8\n",
              "field 'layers': expected a positive integer, got 12.5"),
    "text number": ("layers: twelve\nd_model: 768\nheads: 12\nvocab: 5\ncontext: 8\n",
                    "field 'layers': expected a positive integer"),
    "zero": ("layers: 0\nd_model: 768\nheads: 12\nvocab: 5\ncontext: 8\n",
             "layers: expected a positive integer, got 0"),
    "negative": ("layers: 2\nd_model: -768\nheads: 12\nvocab: 5\ncontext: 8\n",
                 "d_model: expected a positive integer, got -768"),
    "heads do not divide": ("layers: 2\nd_model: 768\nheads: 7\nvocab: 5\ncontext: 8\n",
                            "heads: 7 does not divide d_model 768"),
    "kv heads do not divide": ("layers: 2\nd_model: 768\nheads: 12\nkv_heads: 5\nvocab: 5\n"
                               "context: 8\n", "kv_heads: 5 does not divide heads 12"),
    "bad choice": ("layers: 2\nd_model: 8\nheads: 2\nvocab: 5\ncontext: 8\nnorm: rmsnrom\n",
                   "did you mean 'rmsnorm'"),
    "duplicate key": ("layers: 2\nlayers: 3\n", "line 2: duplicate key 'layers'"),
    "object tag": ("layers: !!python/object/apply:os.system [echo hi]\n", "not valid YAML"),
}


def assert_bad(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("specsheet: error: ")
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize("case", sorted(BAD_FILES))
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_preset_files(tmp_path: Path, case: str, as_json: bool) -> None:
    text, needle = BAD_FILES[case]
    path = write(tmp_path, "bad.yaml", text)
    args = ["count", path] + (["--json"] if as_json else [])
    assert_bad(run(*args), path, needle)


BAD_ARGS = {
    "unknown preset": (["count", "gpt2-smal"], "unknown preset 'gpt2-smal'",
                       "did you mean 'gpt2-small'"),
    "missing file": (["count", "no-such.yaml"], "no-such.yaml: no such file"),
    "incomplete five": (["count", "--layers", "12", "--d-model", "768"],
                        "missing --heads, --vocab, --context"),
    "no model at all": (["count"], "missing --layers"),
    "unknown dtype": (["count", "gpt2-small", "--dtype", "bf61"], "unknown dtype 'bf61'",
                      "did you mean 'bf16'"),
    "unknown kv dtype": (["count", "gpt2-small", "--kv-dtype", "int3"], "kv-dtype"),
    "non-integer option": (["count", "gpt2-small", "--layers", "abc"], "--layers"),
    "negative option": (["count", "gpt2-small", "--layers", "-3"],
                        "option --layers: expected a positive integer, got -3"),
    "zero tokens": (["count", "gpt2-small", "--tokens", "0"], "--tokens"),
    "tokens over context": (["count", "gpt2-small", "--tokens", "2048"],
                            "exceeds the context of gpt2-small"),
    "bad mlp option": (["count", "gpt2-small", "--mlp", "gatd"], "option --mlp",
                       "did you mean 'gated'"),
    "kv heads option": (["count", "llama3-8b", "--kv-heads", "5"],
                        "option --kv-heads: 5 does not divide heads 32"),
    "heads option": (["count", "gpt2-small", "--heads", "5"], "heads: 5 does not divide"),
    "unknown option": (["count", "gpt2-small", "--lyers", "3"], "--lyers"),
    "compare bad second": (["compare", "gpt2-small", "lama3-8b"], "did you mean 'llama3-8b'"),
    "unknown command": (["cuont"], "cuont"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGS))
def test_bad_arguments(case: str) -> None:
    args, *needles = BAD_ARGS[case]
    assert_bad(run(*args), *needles)
    assert_bad(run(*args, "--json"), *needles)


def test_a_directory_is_not_a_preset(tmp_path: Path) -> None:
    assert_bad(run("count", str(tmp_path)), str(tmp_path), "is a directory")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert_bad(run("count", str(path)), "not UTF-8")


def test_a_byte_order_mark_is_read_past_and_not_counted_in_an_offset(tmp_path: Path) -> None:
    """Windows editors write a UTF-8 BOM: the file reads as without it, and a bad byte's offset
    counts from after it, as Python's utf-8-sig codec counts it."""
    config = (Path(__file__).parent / "data" / "llama-3.1-8b.json").read_bytes()
    plain, marked = tmp_path / "plain" / "config.json", tmp_path / "marked" / "config.json"
    for path, raw in ((plain, config), (marked, b"\xef\xbb\xbf" + config)):
        path.parent.mkdir()
        path.write_bytes(raw)
    first, second = run("count", str(plain), "--json"), run("count", str(marked), "--json")
    assert first.exit_code == second.exit_code == 0
    assert json.loads(first.stdout)["params"]["total"] == 8_030_261_248
    assert first.stdout == second.stdout.replace("marked", "plain")
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(b"\xef\xbb\xbfname: caf\xe9\n")
    assert_bad(run("count", str(broken)), "not UTF-8 text (byte 9)")


def test_bare_command_prints_help_on_stderr() -> None:
    result = run()
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Usage" in result.stderr
