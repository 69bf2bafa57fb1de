"""The client suites catch broken clients: each minimal client in `broken/` breaks one rule.

Every broken client (a `command:` driver built on kconform's own codec, `broken/minimal.py`) is
run against the one case meant for its defect, in a `kconform certify` of its own, and must get
that case's bad verdict: `fail` for a MUST case, `non-strict` for a SHOULD case. The well-behaved
control runs all those cases and must pass each, so a verdict can only come from the defect.

A client that does not do what a case needs (no Terminating push, traffic under another client id)
leaves that case `not-applicable`, never `error` (the harness's own trouble) nor `pass`, with a
message that says what was missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kconform.engine.results import CaseResult
from kconform.reports.model import RunResults
from kconform.suites.client.timing import SELFTEST_BOUND_ENV

HERE = Path(__file__).resolve().parent
BROKEN = HERE / "broken"

# broken client -> (the case meant for its defect, that case's level)
CAUGHT_BY: dict[str, tuple[str, str]] = {
    "no_terminating_push": ("kip714.client.terminating.final_push", "SHOULD"),
    "no_terminating_push_in_flight": ("kip714.client.terminating.push_in_flight", "SHOULD"),
    # its first close pushes: only the closes that follow it show that the push is not reliable
    "terminating_push_first_close_only": ("kip714.client.terminating.final_push", "SHOULD"),
    "two_terminating_pushes": ("kip714.client.terminating.single_terminating", "MUST"),
    "zero_first_push_delay": ("kip714.client.cadence.first_push_jitter", "SHOULD"),
    "wrong_name_prefix": ("kip714.client.payload.naming", "MUST"),
    "non_monotonic_sum": ("kip714.client.payload.metric_types", "MUST"),
    "per_prefix_duplicates": ("kip714.client.payload.overlapping_prefixes", "MUST"),
    "aborts_when_unmatched": ("kip714.client.handshake.unmatched_tolerated", "MUST"),
    "silent_when_unmatched": ("kip714.client.handshake.unmatched_empty_push", "SHOULD"),
    "null_when_unmatched": ("kip714.client.payload.unmatched_not_null", "MUST"),
    "hostname_attribute": ("kip714.client.payload.privacy", "MUST"),
    "downgrade_loop": ("kip511.client.unsupported_version.retry_max", "MUST"),
    "trusts_advertised_version": ("kip511.client.unsupported_version.no_loop", "SHOULD"),
    "app_version": ("kip511.client.software_version_is_library", "MUST"),
    "v0_after_reset": ("kip511.client.software_identity_after_reset", "MUST"),
    # reconnects 5 s after the reset: the case awaits it (ruling 22), no fixed window misses it
    "v0_after_slow_reset": ("kip511.client.software_identity_after_reset", "MUST"),
    "ignores_apiversions_error": ("kip511.client.invalid_request_with_keys", "MUST"),
    "ignores_unknown_subscription": ("kip714.client.errors.unknown_subscription_id", "MUST"),
    # judged once on its Terminating push alone, which carries the id it kept: it passed
    "stops_at_null_id": ("kip714.client.handshake.null_id_echo", "MUST"),
    "type_blind_match": ("kip714.client.payload.other_type_only", "MUST"),
    "avg_over_window": ("kip714.client.payload.averages", "MUST"),
    "stale_address": ("kip714.client.follows_metadata", "MUST"),
    # never comes back: waits out the bound (SELFTEST_ENV's 20 s, not ruling 17's 5 minutes)
    "gives_up_on_transport_failure": ("kip714.client.errors.connection_lost", "MUST"),
    # comes back from a lost push, not from a reconnection refused: waits out the bound too
    "gives_up_when_refused": ("kip714.client.errors.broker_restarted", "MUST"),
    "remembers_advertisement": ("kip714.client.handshake.withdrawn", "MUST"),
    # never comes back either: the readvertised case waits out the same SELFTEST_ENV bound
    "gives_up_when_unadvertised": ("kip714.client.handshake.readvertised", "SHOULD"),
}
BAD = {"MUST": "fail", "SHOULD": "non-strict"}
SIDE_BY_SIDE = 6  # runs at once (4 took 198 s of CI's 45 minutes; each mostly waits)
WORKERS_PER_RUN = 3  # certify -j for a run of several cases

# broken client -> {case it leaves without what the case judges: text the message must hold}
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "no_terminating_push": {
        "kip714.client.terminating.unknown_subscription_retry": "Terminating push",
    },
    # its reconnection comes after ruling 22's bound: not judged, and the message says why
    "never_reconnects": {
        "kip511.client.software_identity_after_reset": "did not reconnect within the 30 s bound",
    },
    "ignores_client_id": {  # both would be judged on nothing: every request is under its own id
        "kip511.client.software_identity": "client ids seen on the proxy",
        "kip714.client.handshake.opt_out": "client ids seen on the proxy",
    },
}
OWN_CLIENT_ID = "my-own-client-id"  # broken/ignores_client_id.py

# a client that is not broken but differs from the control in a way a case once misjudged ->
# the cases it must pass
NOT_BROKEN: dict[str, list[str]] = {
    # its Terminating push names the subscription before the last Get's (java:4.1.0 did so,
    # its close racing the Get): judged against the latest list offered, it got non-strict
    "stale_terminating_subscription": ["kip714.client.compression.preferred_type"],
    # reconnects 5 s after a reset (kafka-go's metadata timer: up to 6 s), past the old fixed 3 s
    # window: the case awaits it (ruling 22) and judges it
    "slow_reconnect": ["kip511.client.software_identity_after_reset"],
}

# a broken client -> the older cases of its rule's neighbourhood that it passes: only the case
# meant for its defect catches it (issue 31: each such case was added for a bug the others missed)
ESCAPES: dict[str, list[str]] = {
    # nothing is in flight when the idle case closes it: a final push goes out (KAFKA-17731)
    "no_terminating_push_in_flight": ["kip714.client.terminating.final_push"],
    "trusts_advertised_version": [
        "kip511.client.unsupported_version.retry_max",  # it advertises a lower version there
        "kip511.client.unsupported_version.retry_v0",
    ],
    # no connection lists 71/72 there, so it never pushes: only a withdrawal shows what it trusts
    "remembers_advertisement": ["kip714.client.handshake.requires_advertisement"],
    "gives_up_when_unadvertised": [
        "kip714.client.handshake.requires_advertisement",
        "kip714.client.handshake.withdrawn",  # it sends nothing while they are withdrawn
        "kip714.client.errors.connection_lost",  # a lost connection it does come back from
    ],
    "gives_up_when_refused": ["kip714.client.errors.connection_lost"],
    # the broker it first used is still where it was there: only a move shows what it keeps
    "stale_address": ["kip714.client.errors.connection_lost"],
    # its averages are well-formed gauges of the right names: only their values are wrong
    "avg_over_window": ["kip714.client.payload.valid_otlp", "kip714.client.payload.metric_types"],
    # its own type's prefixes and prefixes of no type at all it matches right
    "type_blind_match": [
        "kip714.client.payload.requested_only",
        "kip714.client.handshake.unmatched_empty_push",
    ],  # reconnects at once there
    "v0_after_reset": ["kip511.client.software_identity"],  # no connection is reset there
    # Apache's refusal has an empty key table, which it does not take for success
    "ignores_apiversions_error": ["kip511.client.invalid_request"],
    "app_version": [  # '4.2.7' is well formed: only whose version it is is wrong
        "kip511.client.software_identity",
        "kip511.client.software_identity_apache",
    ],
}

# a client slow to start (broken/slow_start.py: its first request 4 s after it starts, longer
# than these cases' windows) is judged like the control: a window counts from the first request
SLOW_START = "slow_start"
# what the control and the slow starter run: every case above that the control must pass
CONTROL_CASES = sorted(
    {case_id for case_id, _ in CAUGHT_BY.values()} | set(NOT_APPLICABLE["no_terminating_push"])
)


# The lost-push and readvertised cases' bound for these clients (suites/client/
# test_errors_transport.py, test_handshake_readvertised.py): they come back within seconds or
# never, so 20 s tells the two apart as 300 s would
SELFTEST_ENV = {**os.environ, SELFTEST_BOUND_ENV: "20"}


def _run(name: str, cases: list[str], out: Path) -> dict[str, CaseResult]:
    """`kconform certify` of one client on `cases`, as its author would run it; the runs of
    many cases (the controls) spread them over workers, as certify does."""
    results = out / f"{name}.json"
    process = subprocess.run(
        [sys.executable, "-m", "kconform.cli", "certify",
         "--client", f"command:{BROKEN / f'{name}.py'}", "--cases", ",".join(cases),
         "-j", str(min(len(cases), WORKERS_PER_RUN)), "--json", str(results),
         "--out", str(out / name)],
        capture_output=True, text=True, timeout=600, env=SELFTEST_ENV,
    )  # fmt: skip
    assert results.exists(), process.stdout[-3000:] + process.stderr[-3000:]
    return {r.case_id: r for r in RunResults.read(results).results}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, CaseResult]]:
    """Every client's results, from subprocesses run side by side: each waits on its client's
    intervals nearly all the time (the ten at two at a time used 38% of one core over 122 s),
    and these clients are light, like those `shards.default_jobs` gives four workers a core."""
    out = tmp_path_factory.mktemp("broken-clients")
    runs = {name: [case_id] for name, (case_id, _) in CAUGHT_BY.items()}
    for name, cases in NOT_APPLICABLE.items():
        runs[name] = [*runs.get(name, []), *cases]
    runs["well_behaved"] = runs[SLOW_START] = CONTROL_CASES
    runs.update(NOT_BROKEN)
    for name, cases in ESCAPES.items():
        runs[name] = [*runs[name], *cases]
    with ThreadPoolExecutor(max_workers=SIDE_BY_SIDE) as pool:
        futures = {name: pool.submit(_run, name, cases, out) for name, cases in runs.items()}
        return {name: future.result() for name, future in futures.items()}


def _explain(result: CaseResult | None) -> str:
    if result is None:
        return "the case did not run"
    bad = [f"{e.what}: expected {e.expected!r}, observed {e.observed!r}"
           for e in result.expectations if not e.ok]  # fmt: skip
    return f"{result.verdict} [{result.level}] {result.message} {bad}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_broken_client_is_caught(name: str, verdicts: dict[str, dict[str, CaseResult]]) -> None:
    case_id, level = CAUGHT_BY[name]
    result = verdicts[name].get(case_id)
    assert result is not None and result.level == level, _explain(result)
    assert result.verdict == BAD[level], f"{name} on {case_id}: {_explain(result)}"


def _judged(
    verdicts: dict[str, dict[str, CaseResult]], name: str, case_id: str, verdict: str
) -> CaseResult:
    """`name`'s result on `case_id`, which must have `verdict`."""
    result = verdicts[name].get(case_id)
    assert result is not None and result.verdict == verdict, _explain(result)
    return result


def _pairs(by_client: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    """(client, case id) for each case listed under each client."""
    return sorted((name, case_id) for name, cases in by_client.items() for case_id in cases)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "case_id"), _pairs(NOT_APPLICABLE))
def test_unmet_precondition_is_not_applicable(
    name: str, case_id: str, verdicts: dict[str, dict[str, CaseResult]]
) -> None:
    result = _judged(verdicts, name, case_id, "not-applicable")
    assert NOT_APPLICABLE[name][case_id] in result.message, result.message
    if name == "ignores_client_id":  # names the id the client used, and the one it was given
        assert repr(OWN_CLIENT_ID) in result.message, result.message
        assert "'kc-" in result.message, result.message


@pytest.mark.slow
@pytest.mark.parametrize("case_id", CONTROL_CASES)
def test_well_behaved_client_passes(
    case_id: str, verdicts: dict[str, dict[str, CaseResult]]
) -> None:
    _judged(verdicts, "well_behaved", case_id, "pass")


@pytest.mark.slow
@pytest.mark.parametrize("case_id", CONTROL_CASES)
def test_slow_starting_client_gets_its_whole_window(
    case_id: str, verdicts: dict[str, dict[str, CaseResult]]
) -> None:
    _judged(verdicts, SLOW_START, case_id, "pass")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "case_id"), _pairs(NOT_BROKEN))
def test_a_client_that_differs_without_breaking_a_rule_passes(
    name: str, case_id: str, verdicts: dict[str, dict[str, CaseResult]]
) -> None:
    _judged(verdicts, name, case_id, "pass")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "case_id"), _pairs(ESCAPES))
def test_only_the_case_meant_for_a_defect_catches_it(
    name: str, case_id: str, verdicts: dict[str, dict[str, CaseResult]]
) -> None:
    _judged(verdicts, name, case_id, "pass")
