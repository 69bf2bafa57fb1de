"""A README a newcomer finishes (issue 33, deliverable 7): a quick start that fits one screen,
then one section per task, each pointing at its page in docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _sections() -> dict[str, str]:
    parts = re.split(r"^## (.+)$", README, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_quick_start_comes_first_and_fits_one_screen() -> None:
    sections = _sections()
    first = next(iter(sections))
    assert first == "Quick start"
    assert len(sections[first].strip().splitlines()) <= 25


def test_one_section_per_task_each_linking_its_doc() -> None:
    sections = _sections()
    for title, doc, command in [
        ("Certifying a client", None, "kconform certify"),
        ("Pointing at your own cluster", None, "--bootstrap-server"),
        ("In CI: baselines", None, "kconform baseline"),
        ("Fuzzing a target", "docs/fuzz.md", "kconform fuzz"),
        ("Checking KIP-977 volumes", "docs/volumes.md", "kconform volumes"),
        ("Soaking a broker", "docs/soak.md", "kconform soak"),
    ]:
        assert title in sections, title
        assert command in sections[title], title
        if doc is not None:
            assert f"]({doc})" in sections[title] and (ROOT / doc).is_file(), title
    assert len(README.splitlines()) < 300  # reference and history live in docs/
