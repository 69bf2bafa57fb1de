"""Fixture runs for the report writers: small, hand-built, covering every verdict and oddity.

`make_run` is exposed as a fixture (a factory) so tests can change a copy; `sample_run` is a
trimmed real run of `suites/broker` against reference, librdkafka_mock and a reference mutant.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from kconform.engine.results import CaseResult, Expectation
from kconform.reports.model import RunResults

DATA = Path(__file__).parent / "data"
T0 = 1_795_000_000.0
NASTY = "<script>alert(\"x\")</script> & 'quoted' <b>"

SUBJECTS = [
    {"name": "reference", "implementation": "kconform reference broker", "version": "0.1.0",
     "capabilities": ["telemetry", "client_metrics_admin", "kip977"]},
    {"name": "librdkafka_mock", "implementation": "librdkafka mock cluster", "version": "2.16.0",
     "capabilities": ["telemetry"]},
    {"name": "confluent-kafka", "implementation": "librdkafka client", "version": "2.16.0",
     "capabilities": ["produce"], "kind": "client"},
]  # fmt: skip


def wire(n: int = 3, *, summary: str = "ApiVersionsRequest v3 {}") -> list[dict[str, object]]:
    """A request/response exchange as the proxy records it."""
    entries: list[dict[str, object]] = []
    for i in range(n):
        request = i % 2 == 0
        entries.append(
            {
                "monotonic": 100.0 + i * 0.0015,
                "connection": "case1->broker 1",
                "direction": "client->broker" if request else "broker->client",
                "api_key": 18,
                "api_version": 3,
                "correlation_id": i // 2,
                "summary": summary if request else f"ApiVersionsResponse v3 {{ErrorCode={i}}}",
                "raw": "0012000300000000" + "41" * (20 + i),
                "note": "" if request else "throttled",
            }
        )
    return entries


def result(case_id: str, subject: str, verdict: str, **fields: object) -> CaseResult:
    """A CaseResult with plausible defaults; fields override."""
    kind = "client" if subject == "confluent-kafka" else "broker"
    impl = next(s for s in SUBJECTS if s["name"] == subject)
    ok = verdict == "pass"
    defaults: dict[str, object] = {
        "case_id": case_id,
        "title": f"Title of {case_id}",
        "spec_ref": "KIP-714 Broker behaviour",
        "level": "MUST",
        "kip": "KIP-" + case_id[3:6] if case_id.startswith("kip") else case_id.split(".")[0],
        "subject": subject,
        "subject_kind": kind,
        "implementation": impl["implementation"],
        "version": impl["version"],
        "verdict": verdict,
        "expectations": [Expectation("ErrorCode", 0, 0 if ok else 42, ok)],
        "wire_log": wire(),
        "started": T0 + 1,
        "duration": 0.25,
        "nodeid": f"suites/broker/test_x.py::test_{case_id.rsplit('.', 1)[-1]}[{subject}]",
        "rules": ["kip714.push.terminating.once"] if "terminating" in case_id else [],
    }
    defaults.update(fields)
    return CaseResult(**defaults)  # type: ignore[arg-type]


def build_run() -> RunResults:
    """Every verdict, two KIPs plus fuzz, brokers and a client, a baseline hit and miss."""
    results = [
        result("kip511.apiversions.valid", "reference", "pass"),
        result("kip511.apiversions.valid", "librdkafka_mock", "fail"),
        result("kip511.apiversions.valid", "confluent-kafka", "pass"),
        result("kip714.push.terminating", "reference", "pass"),
        result("kip714.push.terminating", "librdkafka_mock", "error",
               message=f"UndecodableResponse: {NASTY}", expectations=[]),
        result("kip714.push.cadence", "reference", "non-strict", level="SHOULD"),
        result("kip714.push.cadence", "librdkafka_mock", "unsupported",
               message="needs capability telemetry_sink", wire_log=[], expectations=[]),
        result("kip977.meters.bytes_in", "reference", "informational", level="INFO"),
        result("kip977.meters.bytes_in", "librdkafka_mock", "skipped",
               message="target librdkafka_mock unavailable", wire_log=[], expectations=[]),
        result("kip714.configs.invalid", "reference", "pass", baseline="pass"),
        result("kip714.configs.invalid", "librdkafka_mock", "fail", baseline="fail"),
        result("kip714.configs.changed", "librdkafka_mock", "non-strict", level="SHOULD",
               baseline="pass"),
        result("fuzz.codec.roundtrip", "reference", "pass", kip=""),
    ]  # fmt: skip
    return RunResults(
        kconform_version="0.1.0",
        started=T0,
        finished=T0 + 12.5,
        subjects=copy.deepcopy(SUBJECTS),
        results=results,
    )


@pytest.fixture
def run() -> RunResults:
    return build_run()


@pytest.fixture
def nasty() -> str:
    """The text in the fixture run's error message that must come out escaped everywhere."""
    return NASTY


@pytest.fixture
def make_result() -> Callable[..., CaseResult]:
    return result


@pytest.fixture
def sample_run() -> RunResults:
    return RunResults.read(DATA / "sample-results.json")
