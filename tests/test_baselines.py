"""The committed baselines of real Apache Kafka releases (brokers and Java clients) explain every
verdict that is not a pass.

A fail expected on Apache must be a real deviation a user can look up (an Apache source file, a
JIRA, a behaviour section, the KIP sentence); an `error` is a harness defect and is never expected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kconform.reports.model import VERDICTS, load_baseline, load_baseline_why

BASELINES = Path(__file__).resolve().parents[1] / "baselines"
APACHE = sorted([*BASELINES.glob("apache-*.json"), *BASELINES.glob("java-*.json")])
EXPLAINED = {"fail", "non-strict", "not-applicable", "unsupported"}
SOURCE = re.compile(
    r"KAFKA-\d+|§[A-G]|SPEC [A-G]|kip\d+\.[a-z_.]+|\.java|ruling \d+|#\d{4,}|KIP-\d+|brokers?"
)


def test_there_are_apache_baselines() -> None:
    assert {p.name for p in APACHE} >= {
        "apache-3.7.0.json",
        "apache-4.1.0.json",
        "java-3.7.0.json",
        "java-4.1.0.json",
    }


@pytest.mark.parametrize("path", APACHE, ids=[p.stem for p in APACHE])
def test_every_non_pass_apache_verdict_says_why(path: Path) -> None:
    verdicts, why = load_baseline(path), load_baseline_why(path)
    assert "error" not in verdicts.values(), "an error is the harness's defect, never expected"
    unexplained = [c for c, v in verdicts.items() if v in EXPLAINED and not why.get(c)]
    assert unexplained == []
    uncited = [c for c, text in why.items() if not SOURCE.search(text)]
    assert uncited == [], "each why names its source (Apache file, JIRA, behaviour section)"
    assert set(why) <= set(verdicts)


@pytest.mark.parametrize("path", sorted(BASELINES.glob("*.json")), ids=lambda p: p.stem)
def test_every_baseline_is_well_formed(path: Path) -> None:
    data = json.loads(path.read_text())
    assert isinstance(data.get("subject"), str)
    assert set(load_baseline(path).values()) <= set(VERDICTS)
    brokers = data.get("brokers")
    assert brokers is None or (isinstance(brokers, int) and brokers > 1)
