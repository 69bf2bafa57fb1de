"""Every picture the README and docs/ show is in the repository (issue 41: the README showed
`docs/report.png`, which did not exist), and is a real image of some size, not a placeholder."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
PNG = b"\x89PNG\r\n\x1a\n"


def _images() -> list[tuple[Path, str]]:
    return [
        (page, target)
        for page in PAGES
        for target in IMAGE.findall(page.read_text(encoding="utf-8"))
        if "://" not in target
    ]


def test_the_readme_shows_a_picture() -> None:
    assert any(page.name == "README.md" for page, _ in _images())


@pytest.mark.parametrize(("page", "shown"), _images(), ids=lambda v: getattr(v, "name", v))
def test_every_image_a_page_shows_exists(page: Path, shown: str) -> None:
    path = (page.parent / shown.split("#")[0]).resolve()
    assert path.is_file(), f"{page.name} shows {shown}, which does not exist"
    data = path.read_bytes()
    if path.suffix == ".png":
        assert data.startswith(PNG), f"{shown} is not a PNG"
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 640 and height >= 400, (shown, width, height)
