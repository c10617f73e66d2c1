"""The hardware catalog: every built-in file is valid, current, sourced and block-style; spot
figures match the vendors' datasheets; `specsheet hardware` lists them and shows one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.errors import SpecError, did_you_mean
from specsheet.hardware.catalog import (
    PEAK_DTYPES,
    Accelerator,
    accelerator_from_mapping,
    accelerator_yaml_dir,
    builtin,
    catalog_index,
)
from specsheet.sources.files import parse_yaml, read_text
from specsheet.sources.hardware import load_accelerator

ROOT = Path(__file__).resolve().parent.parent
YAMLS = sorted(accelerator_yaml_dir().glob("*.yaml"))
runner = CliRunner()

# the names issue #13 requires exactly, then the rest of its list
REQUIRED_NAMES = ("a100-40gb-sxm", "a100-80gb-sxm", "a100-80gb-pcie", "h100-sxm", "h100-pcie",
                  "h200", "b200", "l40s", "l4", "rtx-3090", "rtx-4090", "rtx-5090", "mi300x",
                  "mi325x", "tpu-v5e")
ALSO_LISTED = ("h100-nvl", "h20", "h800", "b300", "gb200", "a10g", "rtx-6000-ada",
               "rtx-pro-6000-blackwell", "mi250x", "mi355x", "gaudi-3", "tpu-v5p", "tpu-v6e",
               "apple-m2-ultra", "apple-m3-max", "apple-m4-max", "apple-m2-pro-16gb")
MiB = 2**20
T = 10**12


def run(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return result


def run_json(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(run(*args, "--json").stdout)
    return document


# ---- the files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", YAMLS, ids=[p.stem for p in YAMLS])
def test_every_file_validates_and_is_the_index_entry(path: Path) -> None:
    data = parse_yaml(read_text(path), str(path))
    accelerator = accelerator_from_mapping(data, str(path))
    assert accelerator.name == path.stem
    assert accelerator == builtin(path.stem)
    assert accelerator.label and accelerator.vendor and accelerator.interconnect


@pytest.mark.parametrize("path", YAMLS, ids=[p.stem for p in YAMLS])
def test_every_file_is_block_style_and_says_where_its_memory_figure_comes_from(
        path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# "), "a header comment names the part"
    assert "{" not in text and "[" not in text, "block style, as users copy it"
    memory = next(line for line in text.splitlines() if line.startswith("memory_bytes:"))
    assert "  # " in memory, "the memory figure says where it comes from"


def test_the_index_is_current() -> None:
    """The committed accelerator_data.py is byte for byte what scripts/build_hardware.py writes."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_hardware.py"),
                             "--check"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_the_names_the_issue_requires_are_all_there() -> None:
    assert set(REQUIRED_NAMES) <= set(catalog_index())
    assert set(catalog_index()) == {*REQUIRED_NAMES, *ALSO_LISTED}
    assert list(catalog_index()) == sorted(catalog_index())


@pytest.mark.parametrize("name", sorted(catalog_index()))
def test_every_figure_has_a_source(name: str) -> None:
    a = builtin(name)
    sourced = {"memory_bytes", "bandwidth_bytes_per_s", "peak_flops_per_s"}
    if a.interconnect_bytes_per_s:
        sourced.add("interconnect_bytes_per_s")
    assert sourced <= set(a.sources), sourced - set(a.sources)
    for field, source in a.sources.items():
        assert "https://" in source, (field, source)
    assert all(dtype in PEAK_DTYPES for dtype in a.peak_flops_per_s)


# ---- figures from the datasheets -----------------------------------------------------------------

@pytest.mark.parametrize(("name", "field", "expected"), [
    # NVIDIA H100 datasheet: 1,979 / 3,958 TFLOPS "with sparsity"; dense is half
    ("h100-sxm", "bf16", 989_400_000_000_000),
    ("h100-sxm", "fp8", 1_978_900_000_000_000),
    ("h100-sxm", "fp32", 66_900_000_000_000),
    ("h200", "bf16", 989_400_000_000_000),
    ("h100-pcie", "bf16", 756_500_000_000_000),
    ("a100-80gb-sxm", "bf16", 312 * T),
    ("a100-40gb-sxm", "tf32", 156 * T),
    ("b200", "fp4", 9_000 * T),
    ("b200", "bf16", 2_250 * T),
    ("gb200", "fp4", 10_000 * T),
    ("l40s", "fp8", 733 * T),
    ("l4", "bf16", 121 * T),
    # GeForce: FP16/BF16 tensor with FP32 accumulate (the whitepapers' smaller figure)
    ("rtx-3090", "bf16", 71 * T),
    ("rtx-4090", "bf16", 165_200_000_000_000),
    ("rtx-5090", "bf16", 209_500_000_000_000),
    ("rtx-5090", "fp4", 1_676 * T),
    ("mi300x", "bf16", 1_307_400_000_000_000),
    ("mi300x", "fp8", 2_614_900_000_000_000),
    ("mi325x", "bf16", 1_307_400_000_000_000),
    ("gaudi-3", "bf16", 1_835 * T),
    ("tpu-v5e", "bf16", 197 * T),
    ("tpu-v5p", "bf16", 459 * T),
    ("tpu-v6e", "bf16", 918 * T),
])
def test_dense_peaks_from_the_datasheets(name: str, field: str, expected: int) -> None:
    assert builtin(name).peak_flops_per_s[field] == expected


@pytest.mark.parametrize(("name", "memory", "bandwidth"), [
    ("h100-sxm", 81_559 * MiB, 3_350_000_000_000),    # nvidia-smi's 81,559 MiB, not 80 GB
    ("a100-80gb-sxm", 81_920 * MiB, 2_039_000_000_000),
    ("a100-40gb-sxm", 40_960 * MiB, 1_555_000_000_000),
    ("l40s", 46_068 * MiB, 864_000_000_000),
    ("l4", 23_034 * MiB, 300_000_000_000),
    ("b200", 183_359 * MiB, 8_000_000_000_000),
    ("rtx-4090", 24_564 * MiB, 1_008_000_000_000),
    ("rtx-5090", 32_607 * MiB, 1_792_000_000_000),
    ("h200", 143_771 * MiB, 4_800_000_000_000),
    ("tpu-v5e", 16_000_000_000, 819_000_000_000),
    ("mi325x", 256_000_000_000, 6_000_000_000_000),
])
def test_memory_and_bandwidth(name: str, memory: int, bandwidth: int) -> None:
    a = builtin(name)
    assert (a.memory_bytes, a.bandwidth_bytes_per_s) == (memory, bandwidth)


def test_mi300x_holds_its_192_gb_as_rocm_reports_it() -> None:
    """AMD's 192 GB is 192 GiB of HBM3; rocminfo's pool is a little less (201,310,208 KiB)."""
    a = builtin("mi300x")
    assert a.memory_bytes == 201_310_208 * 1024
    assert 192 * 10**9 < a.memory_bytes < 192 * 2**30
    assert a.bandwidth_bytes_per_s == 5_300_000_000_000


def test_every_device_reported_figure_is_at_least_the_marketed_one_or_says_why() -> None:
    """An nvidia-smi MiB figure exceeds the marketed GB (80 GB reports 81,559 MiB): a figure
    below the vendor's would mean a unit slip."""
    for name in catalog_index():
        a = builtin(name)
        assert a.memory_bytes >= 10**10, name
        assert a.bandwidth_bytes_per_s >= 10**11, name
        assert max(a.peak_flops_per_s.values()) >= 10**13, name


def test_interconnect_is_one_way_per_gpu() -> None:
    assert builtin("h100-sxm").interconnect_bytes_per_s == 450 * 10**9   # 900 GB/s both ways
    assert builtin("b200").interconnect_bytes_per_s == 900 * 10**9       # 1.8 TB/s both ways
    assert builtin("rtx-4090").interconnect_bytes_per_s == 32 * 10**9    # PCIe Gen4 x16
    assert builtin("apple-m4-max").interconnect_bytes_per_s == 0


def test_a_narrow_type_without_a_unit_runs_at_the_16_bit_rate() -> None:
    assert builtin("a100-80gb-sxm").peak("fp8") == 312 * T  # not the int8 rate, 624
    assert builtin("h100-sxm").peak("fp4") == 989_400_000_000_000
    assert builtin("b200").peak("fp4") == 9_000 * T
    assert builtin("tpu-v5e").peak("fp8") == 197 * T
    assert builtin("apple-m4-max").peak("bf16") == 38 * T  # only the Neural Engine's figure


def test_apple_says_its_peak_is_the_neural_engine() -> None:
    for name in ("apple-m2-ultra", "apple-m3-max", "apple-m4-max"):
        assert "Neural Engine" in builtin(name).notes


# ---- a user's file -------------------------------------------------------------------------------

def test_a_users_file_with_quantities(tmp_path: Path) -> None:
    path = tmp_path / "my-gpu.yaml"
    path.write_text("memory_bytes: 80GB\nbandwidth_bytes_per_s: 3.35TB/s\n"
                    "peak_flops_per_s:\n  bf16: 989.4e12\n", encoding="utf-8")
    a = load_accelerator(str(path))
    assert isinstance(a, Accelerator)
    assert (a.name, a.label, a.memory_bytes, a.bandwidth_bytes_per_s) == (
        "my-gpu", "my-gpu", 80 * 10**9, 3_350_000_000_000)
    assert a.peak_flops_per_s == {"bf16": 989_400_000_000_000}
    assert a.interconnect_bytes_per_s == 0
    doc = run_json("hardware", str(path))
    assert doc["accelerator"]["memory_bytes"] == 80 * 10**9


def test_a_copy_of_a_builtin_file_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "h100-sxm.yaml"
    path.write_text((accelerator_yaml_dir() / "h100-sxm.yaml").read_text(encoding="utf-8"),
                    encoding="utf-8")
    assert load_accelerator(str(path)) == builtin("h100-sxm")


def test_an_unknown_gpu_suggests_the_flagship_of_the_names_it_begins() -> None:
    with pytest.raises(SpecError, match=r"unknown GPU 'h100' \(did you mean 'h100-sxm'\? "
                                        r"also 'h100-nvl', 'h100-pcie'\)"):
        load_accelerator("h100")
    with pytest.raises(SpecError, match=r"did you mean 'a100-80gb-sxm'\?"):
        builtin("a100")
    with pytest.raises(SpecError, match=r"did you mean 'rtx-4090'\?\)"):
        builtin("rtx-4900")


def test_did_you_mean() -> None:
    assert did_you_mean("h100", ["h100-sxm"]) == " (did you mean 'h100-sxm'?)"
    assert did_you_mean("ab", ["abc", "abd", "abe", "abf", "abg", "x"]) == (
        " (did you mean 'abc'? also 'abd', 'abe', 'abf', ...)")
    assert did_you_mean("gpt2-smal", ["gpt2-small", "gpt2-medium"]) == (
        " (did you mean 'gpt2-small'?)")
    assert did_you_mean("zzz", ["h100-sxm"]) == ""
    assert did_you_mean("h", ["h100-sxm"]) == ""  # one letter begins too much to suggest


# ---- the command ---------------------------------------------------------------------------------

def test_the_list_as_json_and_table() -> None:
    doc = run_json("hardware")
    assert doc["schema_version"] == 1
    names = [a["name"] for a in doc["accelerators"]]
    assert names == list(catalog_index())
    h100 = doc["accelerators"][names.index("h100-sxm")]
    assert h100["peak_flops_per_s"]["bf16"] == 989_400_000_000_000
    assert h100["memory_bytes"] == 85_520_809_984
    assert list(h100["peak_flops_per_s"]) == ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]
    table = run("hardware", "--long").stdout
    row = next(line for line in table.splitlines() if line.strip().startswith("h100-sxm "))
    for cell in ("NVIDIA H100 SXM5 80GB", "85.5 GB", "3.35 TB/s", "989 TFLOP/s", "1.98 PFLOP/s",
                 "450 GB/s"):
        assert cell in row, (cell, row)
    assert "2:4-sparse" in table


def test_one_accelerator_shows_every_figure_and_its_source() -> None:
    doc = run_json("hardware", "h100-sxm")
    assert doc["accelerator"]["sources"]["memory_bytes"].startswith("https://www.nvidia.com/")
    table = run("hardware", "h100-sxm").stdout
    assert "85,520,809,984" in table and "989,400,000,000,000" in table
    assert "nvidia-tensor-core-gpu-datasheet" in table
    assert "fp8 dense peak" in table and "interconnect: NVLink 4" in table
    notes = run("hardware", "b300").stdout
    assert "INT8" in notes  # the notes are the caption


def test_csv_and_markdown() -> None:
    csv = run("hardware", "--format", "csv").stdout.splitlines()
    assert len(csv) == 1 + len(catalog_index())
    assert "peak_flops_per_s.bf16" in csv[0] and "sources.memory_bytes" in csv[0]
    markdown = run("hardware", "l4", "--format", "markdown").stdout
    assert "| bf16 dense peak |" in markdown.replace("  ", " ") or "bf16 dense peak" in markdown


def test_the_documents_validate_against_the_schema() -> None:
    schema = json.loads(run("schema").stdout)
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(run_json("hardware"))
    for name in ("h100-sxm", "apple-m4-max", "mi250x"):
        validator.validate(run_json("hardware", name))
    broken = run_json("hardware", "l4")
    broken["accelerator"]["peak_flops_per_s"]["bf17"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)


def test_the_installed_package_ships_the_hardware_files(tmp_path: Path) -> None:
    code = ("from specsheet.hardware.catalog import accelerator_yaml_dir, catalog_index; "
            "print(sorted(p.stem for p in accelerator_yaml_dir().glob('*.yaml')) == "
            "sorted(catalog_index()) and len(catalog_index()) == 32)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    assert result.stdout.strip() == "True", result.stderr


def test_the_example_file_in_the_docs_reads(tmp_path: Path) -> None:
    import re

    text = (ROOT / "docs" / "hardware.md").read_text(encoding="utf-8")
    match = re.search(r"```yaml\n(.*?)```", text, re.DOTALL)
    assert match is not None
    path = tmp_path / "my-gpu.yaml"
    path.write_text(match.group(1), encoding="utf-8")
    a = load_accelerator(str(path))
    assert (a.memory_bytes, a.peak("bf16"), a.interconnect_bytes_per_s) == (
        80 * 10**9, 700 * T, 450 * 10**9)
