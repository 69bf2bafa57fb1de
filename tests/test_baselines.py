"""The committed expectations (`baselines/<kind>/<version>.json`, reports.expectations) of real
Apache Kafka releases (brokers and Java clients) explain every verdict that is not a pass, and
every baseline file is well formed.

A fail expected on Apache must be a real deviation a user can look up (an Apache source file, a
JIRA, a behaviour section, the KIP sentence); an `error` is a harness defect and is never expected.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from kconform.engine.results import CaseResult
from kconform.reports.common import fails_run, failure_reason
from kconform.reports.expectations import expectation_files, read_whys
from kconform.reports.html_style import chip
from kconform.reports.matrix import Column
from kconform.reports.matrix_artifact import matrix_columns, variant_size
from kconform.reports.model import (
    SCHEMA_PATH,
    VERDICTS,
    RunResults,
    baseline_verdicts,
    bundles_of,
    layered_baselines,
    load_baseline,
    read_baseline,
    write_baseline,
)

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ROOT / "baselines"
APACHE = sorted(p for p in expectation_files(BASELINES) if p.parent.name in ("apache", "java"))
EXPLAINED = {"fail", "non-strict", "not-applicable", "unsupported"}
SOURCE = re.compile(
    r"KAFKA-\d+|§[A-G]|SPEC [A-G]|kip\d+\.[a-z_.]+|\.java|ruling \d+|#\d{4,}|KIP-\d+|brokers?"
)


def test_there_are_apache_baselines() -> None:
    assert {p.relative_to(BASELINES).as_posix() for p in APACHE} >= {
        "apache/3.7.0.json",
        "apache/4.4.0.json",
        "java/3.7.0.json",
        "java/4.4.0.json",
    }
    newest = json.loads((BASELINES / "apache" / "4.4.0.json").read_text())
    assert set(newest["brokers"]) == {"3"} and newest["soak"]["verdicts"]


@functools.cache
def _measured() -> list[Column]:
    return matrix_columns(BASELINES)


@pytest.mark.parametrize("path", APACHE, ids=[f"{p.parent.name}-{p.stem}" for p in APACHE])
def test_every_non_pass_apache_verdict_says_why(path: Path) -> None:
    """Every verdict of the measured matrix on this subject that is not a pass has a why that
    names its source, through the one API runs read (exceptions and derived facts alike)."""
    subject = read_baseline(path).subject
    columns = [c for c in _measured() if c.subject == subject]
    assert columns, f"{path}: no column of the measured matrix"
    for column in columns:
        verdicts, why = layered_baselines([path], variant_size(column.variant))[subject]
        assert "error" not in verdicts.values(), "an error is the harness's defect, never expected"
        unexplained = [c for c in column.verdicts if (len(baseline_verdicts(verdicts[c])) > 1
                       or verdicts[c] in EXPLAINED) and not why.get(c)]  # fmt: skip
        assert unexplained == []
        uncited = [c for c in column.verdicts if c in why and not SOURCE.search(why[c])]
        assert uncited == [], "each why names its source (Apache file, JIRA, behaviour section)"


@pytest.mark.parametrize("path", expectation_files(BASELINES),
                         ids=lambda p: f"{p.parent.name}-{p.stem}")  # fmt: skip
def test_every_baseline_is_well_formed(path: Path) -> None:
    data = json.loads(path.read_text())
    assert isinstance(data.get("subject"), str)
    for case_id, entry in load_baseline(path).items():
        assert set(baseline_verdicts(entry)) <= set(VERDICTS)
        # an error is the harness's defect: no subject's baseline may expect one
        assert "error" not in baseline_verdicts(entry), case_id
    whys = read_whys(BASELINES)
    sections = [
        data,
        *data.get("brokers", {}).values(),
        *([data["soak"]] if "soak" in data else []),
    ]
    refs = [
        *data.get("lacks", {}).values(),
        *(w for s in sections for w in s.get("why", {}).values()),
    ]
    assert [r for r in refs if r not in whys] == [], "every why is an id of baselines/whys.json"
    assert all(str(n).isdigit() and int(n) > 1 for n in data.get("brokers", {}))


def test_size_specific_baselines_are_layered_on_the_general_one(tmp_path: Path) -> None:
    def write(name: str, body: dict[str, object]) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps({"subject": "apache:9.9.9", **body}))
        return path

    three = write("three.json", {"brokers": 3, "verdicts": {"a": "pass"}, "why": {}})
    general = write("general.json", {"verdicts": {"a": "not-applicable", "b": "fail"},
                                     "why": {"b": "KAFKA-1"}})  # fmt: skip
    five = write("five.json", {"brokers": 5, "verdicts": {"b": "pass"}})
    paths = [three, general, five]  # the general one is applied first whatever the order
    assert layered_baselines(paths, 3) == {
        "apache:9.9.9": ({"a": "pass", "b": "fail"}, {"b": "KAFKA-1"})
    }
    assert layered_baselines(paths, 1)["apache:9.9.9"][0] == {"a": "not-applicable", "b": "fail"}
    bad = write("bad.json", {"verdicts": {"a": "pass"}, "why": {"a": 1}})
    with pytest.raises(ValueError, match="'why' must map case ids to text"):
        layered_baselines([bad], 1)


def _result(verdict: str, baseline: str | None) -> CaseResult:
    return CaseResult(
        case_id="kip714.client.x.y", title="t", spec_ref="s", level="MUST", kip="KIP-714",
        subject="java:9.9.9", subject_kind="client", implementation="java", version="9.9.9",
        verdict=verdict, message="", expectations=[], started=0.0, duration=0.0,
        baseline=baseline,
    )  # fmt: skip


def test_a_baseline_entry_may_accept_several_verdicts() -> None:
    """A subject that varies from run to run (a client racing its own close()) is expected to
    give one of a few verdicts; any other fails the run, and the message names them all."""
    assert not fails_run(_result("pass", "not-applicable|pass"))
    assert not fails_run(_result("not-applicable", "not-applicable|pass"))
    other = _result("fail", "not-applicable|pass")
    assert fails_run(other)
    assert failure_reason(other) == "verdict fail, baseline says not-applicable or pass"
    assert fails_run(_result("pass", "not-applicable"))  # a single verdict stays exact
    assert chip("not-applicable|pass").count('class="chip') == 2


def test_a_baseline_entry_with_an_unknown_alternative_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"subject": "s", "verdicts": {"a": "pass|maybe"}}))
    with pytest.raises(ValueError, match="several joined by '\\|'"):
        read_baseline(path)


def test_rewriting_a_baseline_keeps_alternatives_the_new_verdict_is_one_of(
    tmp_path: Path,
) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({
        "subject": "java:9.9.9",
        "verdicts": {"a.b": "not-applicable|pass", "c.d": "not-applicable|pass", "e.f": "fail"},
        "why": {"a.b": "races close()", "e.f": "KAFKA-1", "gone.case": "x"},
    }))  # fmt: skip
    results = [_result("pass", None), _result("fail", None), _result("pass", None)]
    for r, case_id in zip(results, ("a.b", "c.d", "e.f"), strict=True):
        r.case_id = case_id
    write_baseline(path, "java:9.9.9", results, read_baseline(path))
    again = read_baseline(path)
    # e.f passes now, which nothing contradicts: no entry (and its why goes with it)
    assert again.verdicts == {"a.b": "not-applicable|pass", "c.d": "fail"}
    assert again.why == {"a.b": "races close()"}


def test_a_run_of_some_cases_updates_theirs_and_keeps_the_others(tmp_path: Path) -> None:
    """`kconform matrix run --cases`: a case added later joins the baselines without the
    release's other cases being run again."""
    path = tmp_path / "b.json"
    path.write_text(json.dumps({
        "subject": "java:9.9.9", "verdicts": {"a.b": "fail", "c.d": "pass"},
        "why": {"a.b": "KAFKA-1"},
    }))  # fmt: skip
    (new,) = [_result("non-strict", None)]
    new.case_id = "e.f"
    write_baseline(path, "java:9.9.9", [new], read_baseline(path), keep_unrun=True)
    again = read_baseline(path)
    assert again.verdicts == {"a.b": "fail", "c.d": "pass", "e.f": "non-strict"}
    assert again.why == {"a.b": "KAFKA-1"}
    write_baseline(path, "java:9.9.9", [new], read_baseline(path))
    assert read_baseline(path).verdicts == {"e.f": "non-strict"}


def test_a_baseline_records_what_the_subject_said_it_bundles(tmp_path: Path) -> None:
    """The bug record holds a librdkafka bug to the librdkafka a binding ran (reports/bugs.py),
    which only the run knows: results.json's `subjects[].bundles` goes into the baseline."""
    run = RunResults("0", 0.0, subjects=[
        {"name": "confluent-kafka@2.7.0", "kind": "client", "bundles": {"librdkafka": "2.6.1"}},
        {"name": "java:9.9.9", "kind": "client"}])  # fmt: skip
    assert bundles_of(run, "confluent-kafka@2.7.0") == {"librdkafka": "2.6.1"}
    assert bundles_of(run, "java:9.9.9") == {} == bundles_of(run, "absent")
    path = tmp_path / "b.json"
    write_baseline(path, "java:9.9.9", [_result("pass", None)], bundles={"librdkafka": "2.6.1"})
    assert read_baseline(path).bundles == {"librdkafka": "2.6.1"}
    write_baseline(path, "java:9.9.9", [_result("pass", None)])
    assert read_baseline(path).bundles == {} and "bundles" not in path.read_text()
    path.write_text(json.dumps({"subject": "x", "verdicts": {}, "bundles": ["librdkafka"]}))
    with pytest.raises(ValueError, match="'bundles' must map library names to releases"):
        read_baseline(path)


def test_the_results_schema_takes_a_subjects_bundles_as_library_to_release() -> None:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    good = {"name": "rdkafka@0.39.0", "bundles": {"librdkafka": "2.12.1"}}
    data = RunResults("0", 0.0, 1.0, subjects=[good]).to_dict()
    jsonschema.validate(data, schema)
    for bad in (["librdkafka"], {"librdkafka": ""}, {"librdkafka": 2}):
        data["subjects"] = [{"name": "x", "bundles": bad}]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, schema)


def test_kconform_baseline_records_what_the_subject_bundled(tmp_path: Path) -> None:
    from kconform.cli import main

    result = _result("pass", None)
    result.subject = "confluent-kafka@2.7.0"
    described = {"name": result.subject, "kind": "client", "bundles": {"librdkafka": "2.6.1"}}
    RunResults("0", 0.0, 1.0, subjects=[described], results=[result]).write(tmp_path / "r.json")
    out = tmp_path / "b.json"
    assert main(["baseline", str(tmp_path / "r.json"), "--subject", result.subject,
                 "--out", str(out)]) == 0  # fmt: skip
    assert read_baseline(out).bundles == {"librdkafka": "2.6.1"}


def test_kconform_baseline_from_a_run_of_some_cases_keeps_the_other_entries(
    tmp_path: Path,
) -> None:
    """Recording a new case's verdicts (a run with --cases) must not erase what the earlier
    runs recorded for the cases it did not run."""
    from kconform.cli import main

    old, new = _result("fail", None), _result("unsupported", None)
    new.case_id = "kip714.client.x.new"
    out = tmp_path / "b.json"
    for result in (old, new):
        RunResults("0", 0.0, 1.0, subjects=[{"name": result.subject, "kind": "client"}],
                   results=[result]).write(tmp_path / "r.json")  # fmt: skip
        assert main(["baseline", str(tmp_path / "r.json"), "--subject", result.subject,
                     "--out", str(out)]) == 0  # fmt: skip
    assert read_baseline(out).verdicts == {old.case_id: "fail", new.case_id: "unsupported"}
