"""The installed ``specsheet`` command as a real subprocess, started from another directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from commands import specsheet


def test_count_json_from_another_directory(tmp_path: Path) -> None:
    result = specsheet("count", "gpt2-small", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["params"]["total"] == 124_439_808
    assert doc["memory"]["weights_bytes"] == 248_879_616


def test_table_in_a_pipe_has_no_ansi_codes(tmp_path: Path) -> None:
    result = specsheet("compare", "llama3-8b", "llama3-70b", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout
    assert "13.1%" in result.stdout and "3.0%" in result.stdout


def test_installed_package_ships_the_preset_yaml_files(tmp_path: Path) -> None:
    code = ("from specsheet.sources.presets import preset_index, preset_yaml_dir; "
            "print(sorted(p.stem for p in preset_yaml_dir().glob('*.yaml')) == "
            "sorted(preset_index()))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    assert result.stdout.strip() == "True", result.stderr


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    result = specsheet("count", "gpt2-smal", "--json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "did you mean 'gpt2-small'" in result.stderr


def test_python_dash_m(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "specsheet", "count", "tiny", "--json"],
                            cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["params"]["total"] == 7_680
