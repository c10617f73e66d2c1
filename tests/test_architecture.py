"""The layers contract holds, and fails when a lower layer imports a higher one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LINT, "--config", str(root / "pyproject.toml"), "--no-cache"],
                          cwd=root, capture_output=True, text=True, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)})


def copy_project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "specsheet", tmp_path / "specsheet")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contract_is_kept(tmp_path: Path) -> None:
    result = lint(copy_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_model_importing_render_breaks_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    params = root / "specsheet" / "model" / "params.py"
    params.write_text(params.read_text() + "\n\ndef _bad() -> None:\n"
                      "    from specsheet.render.text import to_json  # noqa: F401\n")
    result = lint(root)
    assert result.returncode == 1
    assert "BROKEN" in result.stdout and "specsheet.model.params" in result.stdout


def test_sources_importing_plan_breaks_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    files = root / "specsheet" / "sources" / "files.py"
    files.write_text(files.read_text() + "\nimport specsheet.plan.budgets  # noqa: E402,F401\n")
    assert lint(root).returncode == 1


def test_the_cli_importing_the_plan_breaks_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    count = root / "specsheet" / "cli" / "commands" / "count.py"
    count.write_text(count.read_text() + "\nimport specsheet.plan.budgets  # noqa: E402,F401\n")
    result = lint(root)
    assert result.returncode == 1
    assert "the CLI calls the api" in result.stdout and "BROKEN" in result.stdout


def test_the_cli_importing_the_model_breaks_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    count = root / "specsheet" / "cli" / "commands" / "count.py"
    count.write_text(count.read_text() + "\n\ndef _bad() -> None:\n"
                     "    from specsheet.model.params import count_params  # noqa: F401\n")
    result = lint(root)
    assert result.returncode == 1
    assert "the CLI calls the api" in result.stdout


def test_views_importing_sources_breaks_it(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    charts = root / "specsheet" / "views" / "charts.py"
    charts.write_text(charts.read_text() + "\nimport specsheet.sources.files  # noqa: E402,F401\n")
    result = lint(root)
    assert result.returncode == 1
    assert "only the api meets sources and plan" in result.stdout
