"""`kconform certify` end to end on the embedded reference: its exit code is the certificate's
headline, the same in the terminal, `certificate.json` and the badge (issue 43).

Four certifications run side by side (each waits on its client nearly all the time): a shipped
client whose known deviations a baseline expects (still DOES NOT CONFORM, exit 1, and the
baseline a separate line), a kafka-go-like driver (ApiVersions v0 only: the cases needing v3
are consequences, not INCOMPLETE), a driver claiming no telemetry that sends it, and one that
crashes (INCOMPLETE, exit 2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from spawned import spawn

BROKEN = Path(__file__).resolve().parent / "broken"
IDENTITY = "kip511.client.software_identity"


@dataclass(frozen=True)
class Certified:
    code: int
    stdout: str
    certificate: dict[str, Any]
    svg: str


RUNS: dict[str, tuple[str, list[str]]] = {
    # invalid_request is a known MUST failure of confluent-kafka 2.16.1 (its baseline says so)
    "confluent": ("confluent-kafka", [IDENTITY, "kip511.client.invalid_request"]),
    "kafka_go": (
        f"command:{BROKEN / 'no_kip511_v3_no_telemetry.py'}",
        [IDENTITY, "kip511.client.software_version_is_library", "kip511.client.invalid_request"],
    ),
    "claims": (
        f"command:{BROKEN / 'claims_no_telemetry.py'}",
        [IDENTITY, "kip714.client.terminating.final_push"],
    ),
    "crashes": (f"command:{BROKEN / 'crashes.py'}", [IDENTITY]),
}


def _certify(client: str, cases: list[str], out: Path) -> Certified:
    process = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "certify", "--client", client,
         "--cases", ",".join(cases), "-j", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    certificate = out / "certificate.json"
    assert certificate.exists(), process.stdout[-3000:] + process.stderr[-3000:]
    svg = (out / "certificate.svg").read_text(encoding="utf-8")
    return Certified(process.returncode, process.stdout, json.loads(certificate.read_text()), svg)


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Certified]:
    out = tmp_path_factory.mktemp("certify")
    with ThreadPoolExecutor(max_workers=len(RUNS)) as pool:
        futures = {name: pool.submit(_certify, client, cases, out / name)
                   for name, (client, cases) in RUNS.items()}  # fmt: skip
        return {name: future.result() for name, future in futures.items()}


def _only(run: Certified) -> dict[str, Any]:
    (certificate,) = run.certificate["certificates"]
    assert run.certificate["exit_code"] == certificate["exit_code"] == run.code, run.stdout
    return certificate


def test_a_baseline_that_expects_a_must_failure_does_not_make_it_conform(
    certified: dict[str, Certified],
) -> None:
    run = certified["confluent"]
    cert = _only(run)
    assert run.code == 1 and cert["headline"] == "DOES NOT CONFORM", run.stdout
    assert cert["failed_must"] == {
        "kip511.client.invalid_request": ["kip511.client.invalid_request"]
    }
    assert cert["baseline"].startswith("matches ")
    assert "confluent-kafka/installed.json" in cert["baseline"]
    assert cert["client"]["identity"].startswith("confluent-kafka-python")
    assert "overall:" not in run.stdout and "CONFORMS to every" not in run.stdout
    assert f"certificate: {cert['client']['identity']}: DOES NOT CONFORM" in run.stdout
    assert "DOES NOT CONFORM" in run.svg and "MUST 1/2" in run.svg


def test_a_client_without_v3_does_not_conform_and_the_v3_cases_are_consequences(
    certified: dict[str, Certified],
) -> None:
    run = certified["kafka_go"]
    cert = _only(run)
    assert run.code == 1 and cert["headline"] == "DOES NOT CONFORM", run.stdout
    assert list(cert["failed_must"]) == [IDENTITY]
    assert sorted(n["case_id"] for n in cert["not_judged"] if n["consequence_of"] == IDENTITY) == [
        "kip511.client.invalid_request",
        "kip511.client.software_version_is_library",
    ]
    assert cert["client"] == {
        "name": RUNS["kafka_go"][0],
        "identity": "kconform minimal test client 1.0.0",
        "capabilities": [],
    }
    assert "capabilities: none" in run.stdout and "INCOMPLETE" not in run.stdout
    assert f"2 consequences of {IDENTITY} failing (see {IDENTITY})" in run.stdout


def test_a_client_claiming_no_telemetry_that_sends_it_is_incomplete(
    certified: dict[str, Certified],
) -> None:
    run = certified["claims"]
    cert = _only(run)
    assert run.code == 2 and cert["headline"] == "INCOMPLETE", run.stdout
    (said,) = cert["contradictions"]
    assert said["text"].startswith(
        "claims no telemetry but sent GetTelemetrySubscriptions (key 71)"
    )
    assert said["skipped"] == ["kip714.client.terminating.final_push"]
    assert "claims contradicted: claims no telemetry" in run.stdout


def test_a_driver_that_crashes_is_incomplete(certified: dict[str, Certified]) -> None:
    run = certified["crashes"]
    cert = _only(run)
    assert run.code == 2 and cert["headline"] == "INCOMPLETE", run.stdout
    assert cert["judged"] == 0 and cert["not_judged"][0]["reason"], cert
    assert "#8a949e" in run.svg  # grey: not a verdict on the client


def test_an_interrupted_certification_is_incomplete(tmp_path: Path) -> None:
    """Ctrl-C after some cases: never "CONFORMS to every MUST rule checked" (23 of 58 did)."""
    import signal

    out = tmp_path / "out"
    process = spawn(
        [sys.executable, "-m", "kconform.cli", "certify", "--client", "confluent-kafka",
         "--cases", "kip511.*", "-j", "1", "--out", str(out)],
        tmp_path / "stderr",
    )  # fmt: skip
    assert process.stdout is not None
    seen = []
    while not any("2/10]" in line for line in seen):  # two cases have finished
        seen.append(process.stdout.readline())
        assert seen[-1], seen
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=90)
    assert process.returncode == 2, stdout
    (cert,) = json.loads((out / "certificate.json").read_text())["certificates"]
    assert cert["headline"] == "INCOMPLETE" and "interrupted after" in cert["why"], cert
    assert "of 10 planned case runs" in cert["why"] and "CONFORMS" not in stdout, stdout
    assert ": INCOMPLETE\n  the run was interrupted after" in stdout, stdout
