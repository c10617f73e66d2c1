"""The public Python API: typed, silent (never prints, never exits), the CLI's documents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import specsheet
from specsheet.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


def test_the_issue_example() -> None:
    r = specsheet.report(specsheet.load("llama3-8b"), tokens=8192)
    assert (r.params.total, r.kv.bytes_per_request) == (8_030_261_248, 1_073_741_824)


def test_the_issue_example_as_a_process(tmp_path: Path) -> None:
    code = ("import specsheet as s; r = s.report(s.load('llama3-8b'), tokens=8192); "
            "print(r.params.total, r.kv.bytes_per_request)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True)
    assert out.stdout == "8030261248 1073741824\n" and out.stderr == ""


@pytest.mark.parametrize("name", specsheet.presets())
def test_to_dict_is_the_cli_document(name: str) -> None:
    cli = CliRunner().invoke(app, ["count", name, "--json"])
    assert cli.exit_code == 0, cli.output
    assert specsheet.report(specsheet.load(name)).to_dict() == json.loads(cli.stdout)


def test_to_dict_with_options_is_the_cli_document() -> None:
    cli = CliRunner().invoke(app, ["count", "llama3-8b", "--json", "--tokens", "100",
                                   "--dtype", "fp32", "--kv-dtype", "fp8", "--layers", "48"])
    model = specsheet.load("llama3-8b", layers=48)
    doc = specsheet.report(model, tokens=100, dtype="fp32", kv_dtype="fp8").to_dict()
    assert doc == json.loads(cli.stdout)


def test_five_numbers_without_a_source() -> None:
    model = specsheet.load(layers=12, d_model=768, heads=12, vocab=50257, context=1024)
    assert specsheet.report(model).params.total == 124_439_808 - 0  # GPT-2 small's count


def test_overrides_win_over_the_preset() -> None:
    base = specsheet.report(specsheet.load("llama3-8b")).params.attention
    biased = specsheet.report(specsheet.load("llama3-8b", attn_bias=True)).params.attention
    # q, k, v and o biases: 4096 + 2 x 1024 + 4096 per layer, 32 layers
    assert biased - base == 32 * (4096 + 2 * 1024 + 4096)


def test_errors_are_the_cli_line_and_print_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(specsheet.SpecError) as caught:
        specsheet.load("nonexistent")
    assert isinstance(caught.value, ValueError)
    cli = CliRunner().invoke(app, ["count", "nonexistent"])
    assert cli.exit_code == 2
    assert cli.stderr == f"specsheet: error: {caught.value}\n"
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"layers": 0}, "field 'layers': expected a positive integer, got 0"),
    ({"layerz": 3}, "unknown field 'layerz' (did you mean 'layers'?)"),
    ({"mlp": "swiglu"}, "field 'mlp': expected one of plain, gated, got 'swiglu'"),
])
def test_bad_overrides_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(specsheet.SpecError, match=message.replace("(", r"\(").replace(
            ")", r"\)").replace("?", r"\?")):
        specsheet.load("gpt2-small", **kwargs)


def test_tokens_beyond_the_context_is_a_fact_without_cli_advice() -> None:
    with pytest.raises(specsheet.SpecError) as caught:
        specsheet.report(specsheet.load("gpt2-small"), tokens=2048)
    assert str(caught.value) == "tokens: 2,048 exceeds the context of gpt2-small (1,024 tokens)"
    assert "--" not in str(caught.value)


def test_import_loads_neither_typer_rich_nor_yaml(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import specsheet"],
                            capture_output=True, text=True, cwd=tmp_path, check=True)
    modules = {line.rsplit("|", 1)[1].strip().split(".")[0]
               for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "specsheet" in modules
    assert not modules & {"typer", "click", "rich", "yaml"}


def test_the_package_is_typed() -> None:
    assert (Path(specsheet.__file__).parent / "py.typed").is_file()
