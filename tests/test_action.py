"""The GitHub Action (action.yml): its check step's script runs against a real specsheet check,
writes the Markdown table to the job summary, and its exit code is the step's result."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from commands import ROOT, SPECSHEET, clean_env

ACTION = ROOT / "action.yml"
SCRIPT = ROOT / "action" / "check.sh"


def _bin(tmp_path: Path) -> Path:
    """A folder whose ``specsheet`` is the one under test (installed, or python -m)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    wrapper = folder / "specsheet"
    wrapper.write_text(f"#!/bin/sh\nexec {shlex.join(SPECSHEET)} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return folder


def _step(tmp_path: Path, models: str, args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier steps' summary\n")
    env = clean_env(SPECSHEET_MODELS=models, SPECSHEET_ARGS=args,
                    GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTION_PATH=str(ROOT))
    env["PATH"] = f"{_bin(tmp_path)}{os.pathsep}{env['PATH']}"
    step = [s for s in yaml.safe_load(ACTION.read_text())["runs"]["steps"]
            if s["name"] == "specsheet check"][0]
    result = subprocess.run(["bash", "-c", step["run"]], capture_output=True, text=True,
                            env=env, timeout=120, check=False)
    return result, summary.read_text()


def test_the_action_installs_and_runs_the_script() -> None:
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    install, check = action["runs"]["steps"]
    assert "pip install" in install["run"] and install["env"]["SPECSHEET_PACKAGE"]
    assert check["env"] == {"SPECSHEET_MODELS": "${{ inputs.models }}",
                            "SPECSHEET_ARGS": "${{ inputs.args }}"}
    assert set(action["inputs"]) == {"models", "args", "package"}


def test_within_budget_writes_the_table_and_exits_0(tmp_path: Path) -> None:
    result, summary = _step(tmp_path, "llama3-8b", "--tokens 8192 --max-weights 17GB "
                            "--max-kv 1GiB")
    assert result.returncode == 0, result.stderr
    assert summary.startswith("earlier steps' summary\n### specsheet check llama3-8b\n")
    # 2 x 8,030,261,248 bf16 bytes, and 1,073,741,824 KV bytes at 8,192 tokens (REFERENCE.md)
    assert "| 16,060,522,496 |" in summary and "| 1,073,741,824 |" in summary
    assert summary.rstrip().endswith("Every limit holds.")
    assert "| Figure |" in result.stdout  # the log shows the table too


def test_a_limit_exceeded_is_the_steps_failure(tmp_path: Path) -> None:
    result, summary = _step(tmp_path, "llama3.1-8b gpt2-small",
                            "--gpu h100-sxm --min-concurrency 10")
    assert result.returncode == 1
    assert "**A limit is exceeded** (exit 1)." in summary


@pytest.mark.parametrize("args", ["--max-weights 17XB", "--tokens 16k --max-params 1T"])
def test_bad_input_is_in_the_summary_and_exits_2(tmp_path: Path, args: str) -> None:
    result, summary = _step(tmp_path, "llama3-8b", args)
    assert result.returncode == 2
    assert "specsheet: error: " in summary and "specsheet: error: " in result.stderr
    assert "**specsheet could not check** (exit 2)." in summary
