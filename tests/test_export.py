"""--svg and --html: what the terminal shows, written whole or not at all; the pictures in
docs/images/ are current."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"


def svg_text(path: Path) -> str:
    """The text an SVG shows, laid back on its cells (each run at the cell its x names)."""
    from test_pictures import screen

    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return "\n".join(screen(path))


@pytest.mark.parametrize(("args", "figures"), [
    (["count", "gpt2-small"], ["124,439,808", "38,597,376", "248,879,616 B", "285 MFLOP"]),
    (["compare", "llama3-8b", "llama3-70b"], ["llama3-8b vs llama3-70b", "8.03B", "70.6B"]),
    (["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm"],
     ["131,072", "33,240,391,680", "46.4%", "76.4 GB", "budget (0.9 x h100-sxm memory)"]),
    (["serve", "llama3-8b", "--gpu", "h100-sxm"], ["llama3-8b", "h100-sxm"]),
])
def test_svg_parses_and_holds_the_figures(args: list[str], figures: list[str],
                                          tmp_path: Path) -> None:
    path = tmp_path / "out.svg"
    result = runner.invoke(app, [*args, "--svg", str(path)])
    assert result.exit_code == 0, result.stderr
    text = svg_text(path)
    for figure in figures:
        assert figure in text
        assert figure in result.stdout  # what the terminal shows
    assert os.listdir(tmp_path) == ["out.svg"]  # no temporary file left behind


def test_html_holds_the_figures_and_stdout_keeps_its_format(tmp_path: Path) -> None:
    path = tmp_path / "out.html"
    result = runner.invoke(app, ["count", "gpt2-small", "--json", "--html", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("{")  # the export does not change stdout
    html = path.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "124,439,808" in html and "\x1b" not in html


def test_both_at_once(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sweep", "gpt2-small", "--tokens", "128,1k", "--svg",
                                 str(tmp_path / "a.svg"), "--html", str(tmp_path / "a.html")])
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["a.html", "a.svg"]


def test_the_picture_is_as_wide_as_what_it_shows(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """160 columns without a terminal, but the picture keeps no empty margin."""
    path = tmp_path / "out.svg"
    assert runner.invoke(app, ["count", "tiny", "--svg", str(path)]).exit_code == 0
    width = max(len(line.rstrip()) for line in svg_text(path).splitlines())
    assert width < 100
    view_width = float(ET.parse(path).getroot().attrib["viewBox"].split()[2])
    assert view_width < (width + 10) * 20 * 0.61  # rich's cell: 0.61 of its 20-pixel font


def refused(args: list[str]) -> Any:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("specsheet: error: ")
    return lines[0]


def test_a_missing_folder_is_bad_input(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.svg"
    line = refused(["count", "gpt2-small", "--svg", str(target)])
    assert "the folder" in line and "does not exist" in line
    assert not target.parent.exists()


def test_an_unwritable_folder_is_bad_input_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root may write anywhere, so the folder's permission is simulated."""
    real_access = os.access
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == locked
                        else real_access(path, mode))
    line = refused(["count", "gpt2-small", "--svg", str(tmp_path / "ok.svg"), "--html",
                    str(locked / "out.html")])
    assert "option --html: cannot write" in line and "is not writable" in line
    assert os.listdir(tmp_path) == ["locked"]  # the SVG was not written either
    assert os.listdir(locked) == []


def test_a_failed_write_leaves_the_old_file(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.svg"
    path.write_text("old")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int, *args: Any, **kwargs: Any) -> None:
            self.file = real_fdopen(fd, *args, **kwargs)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, text: str) -> int:
            self.file.write(text[:100])
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", Full)
    line = refused(["count", "gpt2-small", "--svg", str(path)])
    assert "No space left on device" in line
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.svg"]


def load_update_docs() -> Any:
    spec = importlib.util.spec_from_file_location("update_docs",
                                                  ROOT / "scripts" / "update_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


UPDATE_DOCS = load_update_docs()


@pytest.mark.parametrize("name", list(UPDATE_DOCS.PICTURES))
def test_the_pictures_in_the_docs_are_current(name: str) -> None:
    """Run python scripts/update_docs.py when this fails (a new rich draws differently)."""
    path = ROOT / name
    assert path.read_text(encoding="utf-8") == UPDATE_DOCS.picture(UPDATE_DOCS.PICTURES[name])
    svg_text(path)
    assert any(name.removeprefix("docs/") in page.read_text(encoding="utf-8")
               for page in (ROOT / "docs").glob("*.md")), f"no page shows {name}"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_chromium_draws_the_svg(tmp_path: Path) -> None:
    if CHROMIUM is None:  # .ci/run installs it; tests/test_pictures.py compares it with librsvg
        pytest.fail("not run: headless Chromium is needed (apt-get install chromium)")
    svg = ROOT / "docs" / "images" / "sweep-llama3.1-8b.svg"
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    f"--screenshot={shot}", "--window-size=1300,1000", svg.as_uri()],
                   capture_output=True, timeout=120, check=False)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG")
    assert len(set(data[100:])) > 50  # not one flat colour
