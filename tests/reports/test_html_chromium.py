"""The report as a browser shows it: headless Chromium runs the filter script and takes a picture.

The DOM after JavaScript proves the filters work (and that the page needs nothing from the
network); the screenshot proves the page is not blank and shows the verdict colours. PNGs are
decoded with zlib and struct, so the test needs no imaging library. Skips where `chromium` is not
installed (the Makefile installs it: `apt-get install -y chromium`).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from kconform.reports.html import matrix_cell_id, write_html
from kconform.reports.model import RunResults

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not on PATH: install it with `apt-get install -y chromium` (Debian)",
)
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
PASS_RGB = (0x3A, 0x9E, 0x4F)  # --pass in html_style.CSS
FAIL_RGB = (0xD3, 0x34, 0x3A)  # --fail
SCREENSHOT_ENV = "KCONFORM_REPORT_SCREENSHOT"  # keep the picture there (CI artifact, review)


def _chromium(tmp_path: Path, *args: str) -> str:
    profile = tmp_path / "chromium-profile"
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _dom(tmp_path: Path, index: Path, fragment: str = "") -> str:
    return _chromium(tmp_path, "--dump-dom", index.as_uri() + fragment)


def _row_hidden(dom: str, case_id: str) -> bool:
    row = re.search(rf'<tr class="case" id="row-{re.escape(case_id)}"[^>]*>', dom)
    assert row is not None, case_id
    return "hidden" in row.group()


@needs_chromium
def test_dom_after_javascript_has_the_matrix_and_live_filters(run, tmp_path):
    index = write_html(run, tmp_path / "report")
    dom = _dom(tmp_path, index)
    assert '<html lang="en" class="js">' in dom  # the script ran to its end
    assert re.search(r'<form id="filters">', dom)  # unhidden by the script
    cases = {r.case_id for r in run.results}
    assert f'<b id="shown">{len(cases)}</b>' in dom
    for r in run.results:
        cell = re.search(
            rf'<td id="{re.escape(matrix_cell_id(r.case_id, r.subject))}"'
            r' class="([^"]*)"',
            dom,
        )
        assert cell is not None and f"v-{r.verdict}" in cell.group(1).split()
        assert "dim" not in cell.group(1).split()
    assert not any(_row_hidden(dom, c) for c in cases)


@needs_chromium
def test_filter_state_in_the_url_hides_rows_and_dims_cells(run, tmp_path):
    index = write_html(run, tmp_path / "report")
    dom = _dom(tmp_path, index, "#f:verdict=fail")
    failing = {r.case_id for r in run.results if r.verdict == "fail"}
    for case_id in {r.case_id for r in run.results}:
        assert _row_hidden(dom, case_id) == (case_id not in failing), case_id
    assert f'<b id="shown">{len(failing)}</b>' in dom
    dimmed = matrix_cell_id("kip511.apiversions.valid", "reference")
    assert re.search(rf'<td id="{dimmed}" class="v v-pass dim"', dom)
    dom = _dom(tmp_path, index, "#f:kip=KIP-977")
    assert re.search(r'<tbody class="kipgroup" data-kip="KIP-511" hidden', dom)
    assert re.search(r'<tbody class="kipgroup" data-kip="KIP-977">', dom)
    assert '<b id="shown">1</b>' in dom


@needs_chromium
def test_screenshot_is_not_blank_and_shows_verdict_colours(sample_run: RunResults, tmp_path):
    index = write_html(sample_run, tmp_path / "report")
    png = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={png}", "--window-size=1400,1000", index.as_uri())
    width, height, pixels = decode_png(png.read_bytes())
    assert (width, height) == (1400, 1000)
    background = Counter(pixels).most_common(1)[0][0]
    differing = sum(p != background for p in pixels)
    assert differing > 0.05 * len(pixels), f"only {differing} non-background pixels"
    colours = Counter(pixels)
    assert len(colours) > 50, "too few distinct colours for a rendered report"
    assert colours[PASS_RGB] > 500 and colours[FAIL_RGB] > 200, "verdict colours missing"
    if os.environ.get(SCREENSHOT_ENV):
        shutil.copyfile(png, os.environ[SCREENSHOT_ENV])


def test_png_decoder_undoes_every_row_filter():
    """The decoder is the screenshot test's eyes: check it on a PNG with all five filters."""
    width, height, bpp = 7, 10, 3
    rows = [
        bytes((x * 37 + y * 11 + c * 5) % 256 for x in range(width) for c in range(bpp))
        for y in range(height)
    ]
    raw, previous = bytearray(), bytes(width * bpp)
    for y, row in enumerate(rows):
        kind = y % 5
        raw.append(kind)
        raw += _filter(kind, row, previous, bpp)
        previous = row
    png = b"\x89PNG\r\n\x1a\n" + _chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    )
    png += _chunk(b"IDAT", zlib.compress(bytes(raw))) + _chunk(b"IEND", b"")
    w, h, pixels = decode_png(png)
    assert (w, h) == (width, height)
    assert pixels == [tuple(row[i : i + 3]) for row in rows for i in range(0, len(row), 3)]


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body)
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _filter(kind: int, row: bytes, up: bytes, bpp: int) -> bytes:
    out = bytearray()
    for i, value in enumerate(row):
        left = row[i - bpp] if i >= bpp else 0
        upper_left = up[i - bpp] if i >= bpp else 0
        p = left + up[i] - upper_left
        paeth = min(
            (abs(p - left), 0, left),
            (abs(p - up[i]), 1, up[i]),
            (abs(p - upper_left), 2, upper_left),
        )[2]
        pred = [0, left, up[i], (left + up[i]) // 2, paeth][kind]
        out.append((value - pred) & 0xFF)
    return bytes(out)


def decode_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit, non-interlaced RGB/RGBA PNG (what Chromium
    writes), with the five PNG row filters undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(bytes(idat))
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind, row, previous, bpp)
        pixels += zip(row[0::bpp], row[1::bpp], row[2::bpp], strict=True)
        previous = row
    return width, height, pixels


def _unfilter(kind: int, row: bytearray, up: bytearray, bpp: int) -> None:
    if kind == 0:
        return
    if kind == 2:  # Up: the common case, done on whole rows as integers
        row[:] = bytes(a + b & 0xFF for a, b in zip(row, up, strict=True))
        return
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        if kind == 1:
            row[i] = row[i] + left & 0xFF
        elif kind == 3:
            row[i] = row[i] + (left + up[i]) // 2 & 0xFF
        elif kind == 4:
            upper_left = up[i - bpp] if i >= bpp else 0
            p = left + up[i] - upper_left
            pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - upper_left)
            pred = left if pa <= pb and pa <= pc else up[i] if pb <= pc else upper_left
            row[i] = row[i] + pred & 0xFF
        else:
            raise AssertionError(f"PNG filter type {kind}")
