"""--quant reaches every command and the API: the figures are quant's, to the byte."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app, build_command
from specsheet.cli.options import QUANT_FORMATS
from specsheet.quant.formats import FORMATS
from specsheet.quant.layouts import quantized_bytes
from specsheet.sources.resolve import load_preset

runner = CliRunner()


def run_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_help_lists_every_format() -> None:
    assert QUANT_FORMATS.split(", ") == list(FORMATS)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_count_stores_the_weights_in_the_format(fmt: str) -> None:
    expected = quantized_bytes(load_preset("llama3.1-8b").spec, fmt)
    memory = run_json("count", "llama3.1-8b", "--quant", fmt)["memory"]
    assert memory["format"] == fmt
    assert memory["weights_bytes"] == expected.weights_bytes
    assert memory["overhead_bytes"] == expected.overhead_bytes
    assert memory["tensor_types"] == expected.tensor_types
    assert sum(memory["by_component"].values()) == expected.weights_bytes


def test_the_published_bits_per_weight() -> None:
    """llama.cpp's tools/quantize/README.md, Llama-3.1-8B: Q4_K_M 4.8944, Q8_0 8.5008."""
    for fmt, bpw in (("gguf-q4_k_m", 4.8944), ("gguf-q8_0", 8.5008)):
        memory = run_json("count", "llama3.1-8b", "--quant", fmt)["memory"]
        assert round(memory["bits_per_weight"], 4) == bpw


def test_compare_and_check_take_the_format() -> None:
    q4 = quantized_bytes(load_preset("llama3.1-8b").spec, "gguf-q4_k_m").weights_bytes
    doc = run_json("compare", "llama3.1-8b", "llama3-8b", "--quant", "gguf-q4_k_m")
    assert [m["memory"]["weights_bytes"] for m in doc["models"]] == [q4, q4]
    over = run_json("check", "llama3.1-8b", "--quant", "gguf-q4_k_m", "--max-weights",
                    str(q4 - 1))
    assert over["ok"] is False and over["checks"][0]["value"] == q4
    within = runner.invoke(app, ["check", "llama3.1-8b", "--quant", "gguf-q4_k_m",
                                 "--max-weights", str(q4)])
    assert within.exit_code == 0


def test_dtype_sets_the_unquantized_tensors() -> None:
    base = run_json("count", "llama3.1-8b", "--quant", "awq-int4")["memory"]
    fp32 = run_json("count", "llama3.1-8b", "--quant", "awq-int4", "--dtype", "fp32")["memory"]
    # the embedding and the output head (2 x 525,336,576 values) go from 2 to 4 bytes
    assert fp32["weights_bytes"] - base["weights_bytes"] >= 2 * 525_336_576 * 2


def test_group_size_reaches_the_layout() -> None:
    g128 = run_json("count", "llama3-8b", "--quant", "gptq-int4")["memory"]["overhead_bytes"]
    g64 = run_json("count", "llama3-8b", "--quant", "gptq-int4", "--group-size", "64")[
        "memory"]["overhead_bytes"]
    assert g64 > g128


def test_plain_int4_is_labelled_a_lower_bound() -> None:
    memory = run_json("count", "llama3.1-8b", "--dtype", "int4")["memory"]
    assert memory["lower_bound"] is True and memory["weights_bytes"] == 8_030_261_248 // 2
    table = runner.invoke(app, ["count", "llama3.1-8b", "--dtype", "int4"]).stdout
    assert "a lower bound" in table


def test_the_api_takes_the_format() -> None:
    r = specsheet.report(specsheet.load("llama3.1-8b"), quant="gguf-q4_k_m")
    assert r.weights_bytes == 4_912_898_048
    assert r.to_dict()["memory"]["format"] == "gguf-q4_k_m"


@pytest.mark.parametrize(("args", "message"), [
    (["--quant", "gguf-q4_km"], "option --quant: unknown format 'gguf-q4_km' (did you mean "
                                "'gguf-q4_k_m'?)"),
    (["--group-size", "64"], "option --group-size: a group size needs a quantization format"),
])
def test_bad_formats_name_the_option(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["count", "llama3-8b", *args])
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr


def test_every_command_that_computes_has_the_option() -> None:
    for name in ("count", "compare", "check"):
        options = {o for p in build_command(name).params for o in getattr(p, "opts", [])}
        assert {"--quant", "--group-size", "--dtype"} <= options, name


def test_mxfp4_as_gpt_oss_ships_it() -> None:
    """The routed experts in MXFP4 (17 bytes per 32 values), everything else in BF16: for
    gpt-oss-20b, 24 layers x 32 experts x (gate_up 5,760 x 2,880 + down 2,880 x 2,880) values."""
    experts = 24 * 32 * (5760 * 2880 + 2880 * 2880)
    rest = 20_914_757_184 - experts
    memory = run_json("count", "gpt-oss-20b", "--quant", "mxfp4")["memory"]
    assert memory["tensor_types"] == {"U8": experts * 17 // 32, "BF16": rest * 2}
    assert memory["weights_bytes"] == 13_761_264_768  # the 13.8 GB gpt-oss-20b ships
