"""The certificate of `kconform certify` over synthetic runs: one headline and exit code per
client, a failed rule's consequences apart from what the harness could not judge, counts that
agree, the claims checked against the wire, and the same answer in certificate.json, the badge
and the HTML report's first screen (issue 43)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kconform.engine.results import CaseResult
from kconform.exit_codes import EXIT_CONFORMS, EXIT_DOES_NOT_CONFORM, EXIT_INCOMPLETE
from kconform.reports.certificate import certify, exit_code, render_text
from kconform.reports.certificate_files import badge_svg, write_certificates
from kconform.reports.html import write_html
from kconform.reports.model import RunResults
from kconform.reports.text import shorten
from kconform.rules import RULES
from kconform.rules.digest import book_digest

DRIVER = "command:/home/me/kafka-go-driver/main"
IDENTITY = "segmentio/kafka-go v0.4.47"
SOFTWARE_IDENTITY = "kip511.client.software_identity"
V3 = "precondition not met: ApiVersions v3+ requests of the client: expected '>= 1', observed '0'"
HELLO = {  # an ApiVersions answer as the wire log keeps it: correlation id 7, ErrorCode 0
    "connection": "c1",
    "correlation_id": 7,
    "direction": "broker->client",
    "api_key": 18,
    "summary": "ApiVersionsResponse v3 {ErrorCode=0 ...}",
    "raw": "00000007" + "0000" + "00",
}
# The proxy's rewrite of that answer (an injected UNSUPPORTED_VERSION): what the client got.
REWRITTEN = {**HELLO, "direction": "proxy->client", "raw": "00000007" + "0023" + "00",
             "summary": "ApiVersionsResponse v0 {ErrorCode=35}"}  # fmt: skip


def _r(case_id: str, verdict: str, level: str = "MUST", **fields: Any) -> CaseResult:
    defaults: dict[str, Any] = {"kip": "KIP-511", "message": "", "rules": [case_id]}
    defaults.update(fields)
    return CaseResult(
        case_id=case_id, title="", spec_ref="", level=level, subject=DRIVER,
        subject_kind="client", implementation="segmentio/kafka-go", version="v0.4.47",
        verdict=verdict, **defaults,
    )  # fmt: skip


def _run(*results: CaseResult, telemetry: bool = False, **run: Any) -> RunResults:
    described = {
        "name": DRIVER, "kind": "client", "implementation": "segmentio/kafka-go",
        "version": "v0.4.47", "capabilities": ["telemetry"] if telemetry else [],
    }  # fmt: skip
    return RunResults(kconform_version="0.1.0", started=0.0, finished=1.0,
                      subjects=[described], results=list(results), **run)  # fmt: skip


def _consequence(case_id: str) -> CaseResult:
    return _r(case_id, "not-applicable", message=V3, needs=SOFTWARE_IDENTITY)


def _kafka_go() -> RunResults:
    """The Go author's run: software_identity fails, the v3 cases are its consequences."""
    return _run(
        _r(SOFTWARE_IDENTITY, "fail"),
        _r("kip511.client.software_identity_apache", "non-strict", "SHOULD"),
        *[_consequence(f"kip511.client.v3_case_{i}") for i in range(7)],
        _r("kip714.client.handshake.x", "unsupported", kip="KIP-714", message="lacks telemetry"),
    )


def test_a_must_failure_with_its_consequences_does_not_conform_and_exits_1() -> None:
    (cert,) = certify(_kafka_go())
    assert (cert.headline, cert.exit_code) == ("DOES NOT CONFORM", EXIT_DOES_NOT_CONFORM)
    assert cert.failed_must == {SOFTWARE_IDENTITY: [SOFTWARE_IDENTITY]}
    assert len(cert.consequences) == 7 and cert.consequences[0].consequence_of == SOFTWARE_IDENTITY
    assert (cert.cases, cert.judged) == (10, 2)  # one definition: pass/fail/non-strict/info
    text = render_text([cert])
    assert text.startswith(f"certificate: {IDENTITY}: DOES NOT CONFORM\n  MUST rules failed: ")
    assert f"7 consequences of {SOFTWARE_IDENTITY} failing (see {SOFTWARE_IDENTITY})" in text
    assert "cases 10: judged 2, not judged 8 (7 not-applicable, 1 unsupported)" in text
    assert "INCOMPLETE" not in text
    assert f"client: {DRIVER}" in text and "capabilities: none" in text


def test_a_needs_whose_rule_passed_is_no_consequence() -> None:
    run = _kafka_go()
    run.results[0].verdict = "pass"
    (cert,) = certify(run)
    assert not cert.consequences and cert.headline == "INCOMPLETE"  # 7 of 9 not judged
    assert cert.why == "7 of the 9 cases its capabilities cover were not judged"


def test_every_must_passed_conforms_and_exits_0() -> None:
    run = _run(_r("a.b", "pass"), _r("a.c", "non-strict", "SHOULD"), _r("a.d", "unsupported"))
    (cert,) = certify(run)
    assert (cert.headline, exit_code([cert])) == ("CONFORMS", EXIT_CONFORMS)
    assert cert.must == {"passed": 1, "failed": 0} and cert.should == {"passed": 0, "failed": 1}


def test_an_interrupted_run_is_incomplete_even_with_everything_passed() -> None:
    run = _run(_r("a.b", "pass"), interrupted=True,
               planned=[{"name": DRIVER, "kind": "client", "cases": 58}])  # fmt: skip
    (cert,) = certify(run)
    assert (cert.headline, cert.exit_code) == ("INCOMPLETE", EXIT_INCOMPLETE)
    assert "interrupted after 1 of 58 planned case runs" in cert.why
    assert "CONFORMS" not in render_text([cert])


def test_nothing_judged_and_driver_errors_are_incomplete() -> None:
    (cert,) = certify(_run(_r("a.b", "unsupported", message="lacks telemetry")))
    assert cert.headline == "INCOMPLETE" and cert.why == "nothing judged: 1 unsupported"
    (cert,) = certify(_run(*[_r(f"a.{i}", "pass") for i in range(9)], _r("a.z", "error")))
    assert cert.headline == "INCOMPLETE" and "1 case ended in a harness or driver error" in cert.why
    planned = [{"name": DRIVER, "kind": "client", "cases": 3}]
    (cert,) = certify(RunResults(kconform_version="0", started=0.0, planned=planned))
    assert cert.exit_code == EXIT_INCOMPLETE  # planned, never started: no result at all
    assert exit_code([]) == EXIT_INCOMPLETE


def test_the_baseline_is_its_own_line_and_never_the_headline(tmp_path: Path) -> None:
    baseline = tmp_path / "baselines" / "kafka-go.json"
    baseline.parent.mkdir()
    baseline.write_text(json.dumps({"subject": DRIVER, "verdicts": {"a.b": "fail"}}))
    (cert,) = certify(_run(_r("a.b", "fail", baseline="fail")), [baseline])
    assert cert.headline == "DOES NOT CONFORM" and cert.baseline.startswith("matches ")
    (cert,) = certify(_run(_r("a.b", "pass", baseline="fail"), _r("a.c", "pass")), [baseline])
    assert cert.headline == "CONFORMS"
    assert re.match(
        r"1 verdict changed from \S*kafka-go.json \(a\.b: fail -> pass\)", cert.baseline
    )
    (cert,) = certify(_run(_r("a.b", "pass")))
    assert cert.baseline == f"none recorded for {DRIVER}"
    assert "overall" not in render_text([cert])


def test_claims_of_no_telemetry_are_checked_against_the_keys_sent() -> None:
    sent = _r("kip511.client.software_identity", "pass", api_keys=[18, 71, 72])
    skipped = _r("kip714.client.a", "unsupported", kip="KIP-714")
    (cert,) = certify(_run(sent, skipped))
    (said,) = cert.contradictions
    assert said.text.startswith(
        "claims no telemetry but sent GetTelemetrySubscriptions (key 71) and PushTelemetry "
        "(key 72) in kip511.client.software_identity"
    )
    assert said.skipped == ["kip714.client.a"]
    assert cert.headline == "INCOMPLETE" and "skipped were not judged" in cert.why
    (cert,) = certify(_run(sent))  # nothing skipped on the claim: a finding, not a headline
    assert cert.contradictions and cert.headline == "CONFORMS"
    assert "claims contradicted: claims no telemetry" in render_text([cert])


def test_claims_of_telemetry_never_used_are_reported() -> None:
    quiet = [_r(f"a.{i}", "pass", api_keys=[18], wire_log=[HELLO]) for i in range(3)]
    (cert,) = certify(_run(*quiet, telemetry=True))
    (said,) = cert.contradictions
    assert said.text.startswith(
        "claims telemetry but never sent GetTelemetrySubscriptions (key 71) in 3 cases"
    )
    assert cert.headline == "CONFORMS"  # the KIP-714 cases judge what it failed to do
    quiet[0].api_keys = [18, 71]
    assert not certify(_run(*quiet, telemetry=True))[0].contradictions


def test_an_api_versions_answer_rewritten_to_an_error_gave_no_chance() -> None:
    """The client got the last answer logged for its request: an error there is no chance to
    send telemetry, whatever the broker's own answer said."""
    refused = [_r(f"a.{i}", "pass", api_keys=[18], wire_log=[HELLO, REWRITTEN]) for i in range(3)]
    assert not certify(_run(*refused, telemetry=True))[0].contradictions
    closed = {**HELLO, "direction": "proxy->client", "raw": ""}  # closed instead of answered
    assert not certify(_run(_r("a", "pass", wire_log=[closed]), telemetry=True))[0].contradictions


def test_a_reason_is_never_cut_mid_quote() -> None:
    reason = "precondition not met: connections: expected '>= 1', observed '0; versions [0]'"
    for limit in range(20, len(reason)):
        cut = shorten(reason, limit)
        assert len(cut) <= limit and cut.endswith(" …"), (limit, cut)
        assert cut.count("'") % 2 == 0, (limit, cut)
    assert shorten(reason, len(reason)) == reason


def test_the_rule_book_digest_is_stable_and_follows_the_rules() -> None:
    rules = list(RULES.values())
    digest = book_digest(rules)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert book_digest(reversed(rules)) == digest  # order-free: sorted by id
    assert book_digest(rules[1:]) != digest


def test_certificate_json_and_badge_say_what_the_terminal_says(tmp_path: Path) -> None:
    certs = certify(_kafka_go())
    write_certificates(certs, tmp_path)
    data = json.loads((tmp_path / "certificate.json").read_text())
    assert data["format"] == 1 and data["exit_code"] == 1
    (c,) = data["certificates"]
    assert c["client"] == {"name": DRIVER, "identity": IDENTITY, "capabilities": []}
    assert (c["headline"], c["exit_code"]) == ("DOES NOT CONFORM", 1)
    assert c["rule_book"] == book_digest(RULES.values()) and c["kconform_version"] == "0.1.0"
    assert c["must"] == {"passed": 0, "failed": 1} and c["should"] == {"passed": 0, "failed": 1}
    assert c["failed_must"] == {SOFTWARE_IDENTITY: [SOFTWARE_IDENTITY]}
    assert [n["consequence_of"] for n in c["not_judged"]].count(SOFTWARE_IDENTITY) == 7
    assert all(n["reason"] for n in c["not_judged"]) and V3 in c["not_judged"][0]["reason"]
    assert {"contradictions", "baseline", "judged", "cases"} <= set(c)
    svg = (tmp_path / "certificate.svg").read_text()
    assert svg.startswith("<svg xmlns=") and "#d3343a" in svg  # red: DOES NOT CONFORM
    digest = book_digest(RULES.values()).removeprefix("sha256:")[:12]
    for text in (IDENTITY, "kconform 0.1.0", f"rules {digest}", "MUST 0/1", "SHOULD 0/1"):
        assert text in svg, text
    assert "#3a9e4f" in badge_svg(certify(_run(_r("a.b", "pass")))[0])  # green: CONFORMS


def test_the_html_first_screen_is_the_certificate(tmp_path: Path) -> None:
    from kconform.reports.certificate_files import render_section

    run = _kafka_go()
    certs = certify(run)
    page = write_html(run, tmp_path, lead=render_section(certs)).read_text()
    first = page[: page.index("<h2>Subjects</h2>")]
    assert f"{IDENTITY}: DOES NOT CONFORM" in first and "(exit 1)" in first
    assert "CI would" not in page  # no second verdict beside the certificate's
    assert "judged 2, not judged 8 (7 not-applicable, 1 unsupported)" in first
    assert "capabilities</b> none" in first
    assert "Not judged: consequences of a failed rule (7)" in first
    assert f"<b>client</b> {DRIVER}" in first and "none recorded" in first
    assert "capabilities: none" in page  # the subjects table too, for a client claiming none
    subjects = page[page.index("<h2>Subjects</h2>") :]
    row_head = subjects[subjects.index("<tbody><tr") :].split("</th>", 1)[0]
    assert row_head.split("<th>", 1)[1].startswith(IDENTITY)  # what it is heads it, not its path
    assert f'<div class="mono small muted">{DRIVER}</div>' in row_head
    column_head = page[page.index('<th class="subj"') :].split("</th>", 1)[0]
    shown = re.sub(r"<[^>]*>", " ", column_head).split()  # the text, not the attributes
    assert shown == IDENTITY.split()


def test_every_needs_a_case_declares_names_a_rule_of_the_book() -> None:
    """A `needs` naming no rule would never group its case as a consequence: it would count
    toward INCOMPLETE again, silently."""
    from kconform import locations

    found = {}
    for path in sorted((locations.suites() / "client").glob("*.py")):
        for rule in re.findall(r'needs="([^"]+)"', path.read_text(encoding="utf-8")):
            found[rule] = path.name
    assert SOFTWARE_IDENTITY in found, found
    unknown = {rule: name for rule, name in found.items() if rule not in RULES}
    assert not unknown, unknown


def test_certify_s_table_leaves_the_verdict_to_the_certificate() -> None:
    """confluent-kafka's table said "CI ok" and "overall: PASS" above DOES NOT CONFORM."""
    from kconform.reports.summary import summary_table

    run = _run(_r("a.b", "fail", baseline="fail"), interrupted=True)
    table = summary_table(run, overall=False)
    assert "overall" not in table and "CI" not in table and "do not fail" not in table, table
    assert "overall: FAIL" in summary_table(run) and "CI fails" in summary_table(run)


def test_the_html_of_a_certify_run_has_no_ci_column(tmp_path: Path) -> None:
    from kconform.reports.certificate_files import render_section

    run = _run(_r("a.b", "fail", baseline="fail"))
    page = write_html(run, tmp_path, lead=render_section(certify(run))).read_text()
    assert "<th>CI</th>" not in page and ">ok<" not in page, page
    assert "<th>CI</th>" in write_html(run, tmp_path / "run").read_text()


def test_certify_s_help_gives_its_exit_codes() -> None:
    from kconform.cli import build_parser

    parser = build_parser()
    assert "`kconform certify` exits with its certificate" in " ".join(parser.format_help().split())
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    text = " ".join(sub.choices["certify"].format_help().split())  # type: ignore[attr-defined]
    for said in ("0 CONFORMS", "1 DOES NOT CONFORM", "2 INCOMPLETE", "certificate.svg"):
        assert said in text, said


def test_many_cases_not_judged_for_one_reason_are_one_terminal_line() -> None:
    """59 `unsupported` KIP-714 cases were 59 lines; the JSON still lists each."""
    skipped = [_r(f"kip714.client.c{i}", "unsupported", kip="KIP-714", message="lacks telemetry")
               for i in range(6)]  # fmt: skip
    other = _r("kip714.client.lone", "skipped", message="a reason of its own")
    (cert,) = certify(_run(_r(SOFTWARE_IDENTITY, "pass"), *skipped, other))
    text = render_text([cert])
    assert (
        "not judged, 6 unsupported for one reason (kip714.client.c0, kip714.client.c1 and 4 "
        "more; the JSON and the HTML list each): lacks telemetry" in text
    )
    assert "not judged kip714.client.c2" not in text
    assert "not judged kip714.client.lone (skipped): a reason of its own" in text
    assert len(cert.not_judged) == 7


def test_kconform_report_rerenders_a_certified_folder_as_certify_did(tmp_path: Path) -> None:
    from kconform.cli import main

    run, folder, again = _kafka_go(), tmp_path / "certified", tmp_path / "again"
    folder.mkdir()
    run.write(folder / "results.json")
    write_certificates(certify(run), folder)
    assert main(["report", str(folder), "--out", str(again)]) == EXIT_DOES_NOT_CONFORM
    (c,) = json.loads((again / "certificate.json").read_text())["certificates"]
    assert (c["client"]["identity"], c["headline"]) == (IDENTITY, "DOES NOT CONFORM")
    first = (again / "index.html").read_text().split("<h2>Subjects</h2>")[0]
    assert f"{IDENTITY}: DOES NOT CONFORM" in first and (again / "certificate.svg").exists()
    (folder / "certificate.json").unlink()  # a plain run's folder: rendered as `run` renders it
    main(["report", str(folder), "--out", str(tmp_path / "plain")])
    assert not (tmp_path / "plain" / "certificate.json").exists()
    assert "DOES NOT CONFORM" not in (tmp_path / "plain" / "index.html").read_text()
