"""Pictures that render everywhere: every --svg kind drawn by librsvg and by Chromium gives the
same picture (a stated pixel-difference threshold), the SVG references nothing outside itself,
and its numbers read back from the text at the cells the terminal shows them in.

.ci/run installs librsvg2-bin, chromium and fonts-dejavu-core; a missing one fails these tests
with the package to install (never a silent skip)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specsheet.cli.app import app
from specsheet.render.svg import CELL_WIDTH, LINE_HEIGHT, MARGIN

SVG = "{http://www.w3.org/2000/svg}"
RSVG = shutil.which("rsvg-convert")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# a pixel differs when a channel differs by more than 64 of 255; antialiasing of glyph edges
# differs between cairo and Skia, so up to 1% of the pixels may (0.3% to 0.5% measured; a
# number moved by one cell, a lost indent or a missing font differs by several times that)
CHANNEL = 64
THRESHOLD = 0.01

KINDS = {
    "count": ["count", "gpt2-small"],
    "compare": ["compare", "llama3-8b", "llama3-70b", "--tokens", "8192"],
    "sweep": ["sweep", "llama3.1-8b", "--tokens", "1k:128k:x2", "--gpu", "h100-sxm"],
    "serve": ["serve", "llama3-70b", "--gpu", "h100-sxm", "--gpus", "8"],
}


def write_svg(kind: str, folder: Path) -> tuple[Path, str]:
    path = folder / f"{kind}.svg"
    result = CliRunner().invoke(app, [*KINDS[kind], "--svg", str(path)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.stderr
    return path, result.stdout


def screen(path: Path) -> list[str]:
    """The SVG's text laid back on the terminal's cells: each run at the cell its x names."""
    rows: dict[int, list[str]] = {}
    for text in ET.parse(path).getroot().iter(f"{SVG}text"):
        col = (float(text.get("x", "")) - MARGIN) / CELL_WIDTH
        row = (float(text.get("y", "")) - MARGIN) // LINE_HEIGHT
        assert col == int(col), text.get("x")  # every run starts on a cell
        line = rows.setdefault(int(row), [])
        start = int(col)
        line.extend(" " * (start + len(text.text or "") - len(line)))
        line[start:start + len(text.text or "")] = list(text.text or "")
    return ["".join(rows.get(r, [])).rstrip() for r in range(max(rows) + 1)]


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB bytes of an 8-bit RGB or RGBA PNG (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = depth = colour = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, chunk = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert depth == 8 and colour in (2, 6), (depth, colour)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        previous = line
        rows.append(bytes(v for i, v in enumerate(line) if i % channels < 3))
    return width, height, rows


def difference(a: Path, b: Path) -> float:
    """The share of pixels whose colour differs by more than CHANNEL in a channel."""
    wa, ha, ra = png_pixels(a)
    wb, hb, rb = png_pixels(b)
    assert (wa, ha) == (wb, hb)
    differ = sum(1 for row_a, row_b in zip(ra, rb, strict=True)
                 for x in range(0, len(row_a), 3)
                 if max(abs(row_a[x + k] - row_b[x + k]) for k in range(3)) > CHANNEL)
    return differ / (wa * ha)


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_svg_references_nothing_and_places_every_run(kind: str, tmp_path: Path) -> None:
    path, stdout = write_svg(kind, tmp_path)
    text = path.read_text(encoding="utf-8")
    # the only http is the SVG namespace's name, an identifier no renderer fetches
    assert text.count("http") == 1 and 'xmlns="http://www.w3.org/2000/svg"' in text
    for never in ("href", "url(", "@import", "@font-face", "<style", "xml:space", "<image",
                  "textLength"):
        assert never not in text
    drawn = screen(path)
    terminal = [line.rstrip() for line in stdout.splitlines()]
    blocks = re.compile("[█▁▂▃▄▅▆▇▏▎▍▌▋▊▉]")  # drawn as rectangles, not text
    expected = [blocks.sub(" ", line).rstrip() for line in terminal]
    while expected and not expected[-1]:
        expected.pop()
    # a picture wraps a title and a footnote at its table's width (no empty margin), the
    # terminal at its own: the same lines up to the first caption, then the same words
    first_caption = next((i for i, line in enumerate(expected) if i and not line.strip()),
                         len(expected))
    assert drawn[:first_caption - 1] == expected[:first_caption - 1]
    assert " ".join(drawn).split() == " ".join(expected).split()


@pytest.mark.parametrize("kind", list(KINDS))
def test_librsvg_and_chromium_draw_the_same_picture(kind: str, tmp_path: Path) -> None:
    if RSVG is None or CHROMIUM is None:
        pytest.fail("not run: librsvg's rsvg-convert and Chromium are needed "
                    "(apt-get install librsvg2-bin chromium fonts-dejavu-core; .ci/run does)")
    if not Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf").exists():
        pytest.fail("not run: the pictures' first font is missing "
                    "(apt-get install fonts-dejavu-core)")
    path, _ = write_svg(kind, tmp_path)
    root = ET.parse(path).getroot()
    width, height = int(float(root.get("width", ""))), int(root.get("height", ""))
    rsvg, chrome = tmp_path / "rsvg.png", tmp_path / "chromium.png"
    subprocess.run([RSVG, str(path), "-o", str(rsvg)], check=True, timeout=60)
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--force-device-scale-factor=1",
                    f"--screenshot={chrome}", f"--window-size={width},{height}",
                    path.as_uri()], capture_output=True, timeout=120, check=True)
    share = difference(rsvg, chrome)
    print(f"{kind}: {share:.3%} of the pixels differ")
    assert share <= THRESHOLD, f"{share:.2%} of the pixels differ"
