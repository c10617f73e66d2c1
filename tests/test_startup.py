"""What each path imports (not timed: bench/startup.py measures the time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def imported_modules(*args: str, cwd: Path, env: dict[str, str] | None = None) -> set[str]:
    """The modules ``python -X importtime -m specsheet ARGS`` imports (``env``: variables
    set for the run)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "specsheet", *args],
                            capture_output=True, text=True, cwd=cwd, check=False,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    assert lines, "no -X importtime output"
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("args", [
    ["count", "gpt2-small", "--json"],
    ["count", "llama3-8b", "--format", "csv"],
    ["compare", "gpt2-small", "llama3-8b", "--format", "markdown"],
    ["check", "llama3-8b", "--max-weights", "17GB", "--json"],
    ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm", "--json"],
    ["sweep", "gpt2-small", "--d-model", "768,1536", "--format", "csv"],
    ["train", "llama3-8b", "--json"],
    ["train", "llama3-8b", "--lora-rank", "16", "--qlora", "--format", "csv"],
    ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8", "--json"],
])
def test_machine_readable_paths_import_neither_rich_nor_yaml(args: list[str],
                                                            tmp_path: Path) -> None:
    modules = top_level(imported_modules(*args, cwd=tmp_path))
    assert "specsheet" in modules
    assert "rich" not in modules
    assert "yaml" not in modules
    assert "textual" not in modules


@pytest.mark.parametrize("args", [["count", "gpt2-small"], ["presets"],
                                  ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2"]])
def test_plain_tables_and_charts_import_neither_rich_nor_yaml(args: list[str],
                                                             tmp_path: Path) -> None:
    """A table or chart without colour that fits is written by render.terminal's
    plain_table and plain_chart, the text rich writes (tests/test_render_plain.py)."""
    modules = top_level(imported_modules(*args, cwd=tmp_path,
                                         env={"NO_COLOR": "1", "COLUMNS": "160"}))
    assert "rich" not in modules
    assert "yaml" not in modules
    assert "textual" not in modules


def test_colored_table_path_imports_rich_but_not_yaml(tmp_path: Path) -> None:
    modules = imported_modules("count", "gpt2-small", cwd=tmp_path,
                               env={"FORCE_COLOR": "1", "NO_COLOR": "", "COLUMNS": "160"})
    assert "rich.table" in modules
    assert "yaml" not in top_level(modules)
    assert "textual" not in top_level(modules)


@pytest.mark.parametrize("args", [["compare", "gpt2-small", "llama3-8b"], ["--help"],
                                  ["explore", "--help"]])
def test_only_explore_imports_textual(args: list[str], tmp_path: Path) -> None:
    """Textual costs about 0.4 s of imports: the explorer's app module alone loads it, when
    the explorer runs (its help, like every other command, does without)."""
    assert "textual" not in top_level(imported_modules(*args, cwd=tmp_path))


def test_a_preset_file_is_read_with_yaml(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("layers: 2\nd_model: 16\nheads: 4\nvocab: 32\ncontext: 64\n")
    assert "yaml" in top_level(imported_modules("count", "m.yaml", "--json", cwd=tmp_path))


def test_json_path_builds_only_the_command_it_runs(tmp_path: Path) -> None:
    """Subcommands are built lazily: count does not pay for check's limits or quantities."""
    modules = imported_modules("count", "gpt2-small", "--json", cwd=tmp_path)
    assert "specsheet.units" not in modules
    assert "specsheet.plan.budgets" not in modules
    assert "specsheet.views.table" not in modules


@pytest.mark.parametrize("args", [
    ["count", "gpt2-small"],
    ["compare", "gpt2-small", "llama3-8b"],
    ["count", "gpt2-small", "--json"],
])
def test_count_and_compare_load_nothing_of_sweep_or_export(args: list[str],
                                                           tmp_path: Path) -> None:
    """The sweep, its charts and the picture export load only where they are used."""
    modules = imported_modules(*args, cwd=tmp_path)
    for name in ("specsheet.cli.commands.sweep", "specsheet.views.charts",
                 "specsheet.render.charts", "specsheet.render.export", "specsheet.cli.files"):
        assert name not in modules
    assert "plotext" not in top_level(modules)


def test_the_sweep_table_draws_its_chart_with_rich_alone(tmp_path: Path) -> None:
    modules = imported_modules("sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu",
                               "h100-sxm", cwd=tmp_path)
    assert "specsheet.render.charts" in modules
    assert "specsheet.render.export" not in modules
    assert not {"plotext", "matplotlib", "yaml"} & top_level(modules)


def test_serve_json_loads_no_quantization_tables_and_no_fractions(tmp_path: Path) -> None:
    """A plain-dtype serve cuts the model's tensors (quant.tensors) without loading the formats
    or their layouts, and reads its memory share without fractions (and decimal)."""
    modules = imported_modules("serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8",
                               "--json", cwd=tmp_path)
    assert "specsheet.quant.tensors" in modules
    assert "specsheet.quant.formats" not in modules
    assert "specsheet.quant.layouts" not in modules
    assert "fractions" not in modules
    assert "specsheet.views.table" not in modules


@pytest.mark.parametrize("args", [
    ["count", "gpt2-small", "--json"],
    ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192", "--json"],
    ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8", "--json"],
    ["train", "llama3-8b", "--json"],
    ["check", "llama3-8b", "--max-weights", "17GB", "--json"],
    ["compare", "llama3-8b", "llama3-70b", "--json"],
    ["presets", "--json"],
    ["hardware", "--json"],
    ["convert", "llama3-8b"],
])
def test_json_paths_import_no_csv_rich_or_yaml(args: list[str], tmp_path: Path) -> None:
    """Each command's JSON (convert's YAML) needs neither the CSV writer, rich, PyYAML nor the
    table views, nor the json package: the presets and the catalog are Python data, and a
    document's strings are written by json.encoder's own C function (render/text.py); fit's
    path also leaves the sweep and the serving plan alone."""
    modules = imported_modules(*args, cwd=tmp_path)
    assert not {"csv", "yaml", "rich", "textual", "json"} & top_level(modules)
    assert "specsheet.views.table" not in modules
    if args[0] == "fit":
        assert not {"specsheet.plan.serving", "specsheet.plan.sweep",
                    "specsheet.api.serve"} & modules


@pytest.mark.parametrize("args", [
    ["count", "gpt2-small", "--json"],
    ["fit", "llama3-8b", "--gpu", "rtx-4090", "--ctx", "8192", "--json"],
    ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8", "--json"],
    ["train", "llama3-8b", "--json"],
])
def test_json_paths_load_only_what_their_inputs_need(args: list[str], tmp_path: Path) -> None:
    """A preset that ships unquantized skips the reader of shipped formats; a built-in GPU,
    whose figures are integers, the quantity parser and the file readers; a GPU that is not
    Apple's, Metal's working set; every document, the schema's helpers (its version is
    views'); a command given no text, the tokenizer's module (the CLI catches NoTokenizer
    from specsheet.errors)."""
    modules = imported_modules(*args, cwd=tmp_path)
    assert not {"specsheet.sources.hf_config.quantization", "specsheet.units",
                "specsheet.sources.files", "specsheet.hardware.apple",
                "specsheet.views.schema", "specsheet.sources.tokenizer"} & modules


def test_what_ships_quantized_or_is_a_file_loads_its_reader(tmp_path: Path) -> None:
    """The other side of the above: a shipped format is read, a hardware file parsed."""
    assert "specsheet.sources.hf_config.quantization" in imported_modules(
        "count", "gpt-oss-20b", "--json", cwd=tmp_path)
    (tmp_path / "gpu.yaml").write_text("name: g\nlabel: G\nvendor: Acme\nmemory_bytes: 24GB\n"
                                       "bandwidth_bytes_per_s: 1TB/s\n"
                                       "peak_flops_per_s:\n  bf16: 100e12\n")
    modules = imported_modules("serve", "llama3-8b", "--gpu", "gpu.yaml", "--json", cwd=tmp_path)
    assert {"specsheet.sources.files", "specsheet.units"} <= modules


@pytest.mark.parametrize("args", [
    ["compare", "gpt2-small", "llama3-8b", "--json"],
    ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--format", "csv"],
])
def test_what_serves_nothing_loads_nothing_of_serving(args: list[str], tmp_path: Path) -> None:
    """Without --gpu, compare and sweep read their serving defaults from api.defaults and
    load neither the serving API, its document nor the hardware catalog; nor, in a plain
    dtype, the list of a model's tensors (specsheet.plan reads the bound on its layers from
    specsheet.quant)."""
    modules = imported_modules(*args, cwd=tmp_path)
    assert "specsheet.api.defaults" in modules
    assert not {"specsheet.api.serve", "specsheet.views.serve", "specsheet.api.hardware",
                "specsheet.plan.serving", "specsheet.quant.tensors"} & modules
