"""The bad-input corpus (tests/bad_inputs/cases.yaml): every case, in every output format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from specsheet.cli.app import app

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
CASES: list[dict[str, Any]] = yaml.safe_load((CORPUS / "cases.yaml").read_text())
FORMATS = ("table", "json", "csv", "markdown")
runner = CliRunner()


def case_id(case: dict[str, Any]) -> str:
    return str(case.get("file") or " ".join(case["args"]))


def test_the_corpus_is_large_and_every_file_is_used() -> None:
    assert len(CASES) >= 50
    used = {case["file"] for case in CASES if "file" in case}
    assert used == {p.name for p in (CORPUS / "files").iterdir()}


def formats_of(case: dict[str, Any]) -> tuple[str, ...]:
    """Every output format for a computing command; a case that sets its own output (or runs
    another command) runs once."""
    args = case.get("args", ["count"])
    if case.get("once") or args[0] not in ("count", "compare", "check") or "--format" in args:
        return ("table",)
    return FORMATS


RUNS = [(case, fmt) for case in CASES for fmt in formats_of(case)]


@pytest.mark.parametrize(("case", "fmt"), RUNS, ids=[f"{fmt}-{case_id(c)}" for c, fmt in RUNS])
def test_case(case: dict[str, Any], fmt: str, monkeypatch: pytest.MonkeyPatch,
              tmp_path: Path) -> None:
    monkeypatch.chdir(CORPUS)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    file = f"files/{case['file']}" if "file" in case else "FILE"
    args = [a.replace("FILE", file) for a in case.get("args", ["count", "FILE"])]
    if args[0] in ("count", "compare", "check") and "--format" not in args:
        args += ["--format", fmt]
    result = runner.invoke(app, args)
    assert result.exit_code == case["exit"], (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    if case["exit"] == 2:
        assert result.stdout == "", "stdout must stay empty on an error"
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("specsheet: error: ")
        assert case["message"] in lines[0]
    else:
        assert result.stderr == ""
        if fmt == "json":
            doc = json.loads(result.stdout)
            assert doc.get("model", doc)["params"]["total"] > 0
    assert not (CORPUS / "pwned").exists(), "a YAML tag ran a command"


def test_the_absurd_model_keeps_exact_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    result = runner.invoke(app, ["count", "files/absurd-layers.yaml", "--json"])
    doc = json.loads(result.stdout)
    layers = 10**30
    assert doc["spec"]["layers"] == layers
    assert doc["params"]["total"] == 50257 * 768 + 1024 * 768 + layers * 7_087_872 + 1536


def test_an_unreadable_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Root reads any file, so the permission error is simulated."""
    path = tmp_path / "secret.yaml"
    path.write_text("layers: 12\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = runner.invoke(app, ["count", str(path), "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip() == f"specsheet: error: {path}: cannot read: Permission denied"


def test_a_file_too_large_to_be_a_model(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as f:
        f.truncate(17 * 2**20)  # sparse: no disk used
    result = runner.invoke(app, ["count", str(path)])
    assert result.exit_code == 2
    assert "is larger than any model file (16 MiB at most)" in result.stderr
