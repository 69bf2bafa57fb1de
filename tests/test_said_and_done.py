"""What a run says agrees with what it did (issue 41): its cause kept when nothing could run, one
count of what was judged, and the exit code its words promise."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.cli import main
from kconform.engine.results import CaseResult
from kconform.exit_codes import EXIT_ERRORS, EXIT_USAGE
from kconform.reports.certificate import certify, render_text
from kconform.reports.model import RunResults


def _result(case_id: str, verdict: str, message: str = "") -> CaseResult:
    return CaseResult(
        case_id=case_id, title="", spec_ref="", level="MUST", kip="KIP-714", subject="c",
        subject_kind="client", implementation="", version="1", verdict=verdict, message=message,
    )  # fmt: skip


def test_an_unknown_mutant_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was found when the target started: a run that judged nothing, with no reason given."""
    args = ["run", "--target", "reference:no_size_limit+nosuchmutant", "--out", str(tmp_path)]
    assert main(args) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown mutant(s) nosuchmutant" in err, err
    assert "no_size_limit" in err  # what is accepted
    assert not (tmp_path / "results.json").exists()


def test_a_subject_that_cannot_be_set_up_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client whose build folder cannot be made (a file stands where the cache's clients
    folder goes) ends each case as `error` with the cause, in the terminal and the results, not
    as "no case produced a result". (A KCONFORM_CACHE that is no writable folder is refused
    before anything runs: tests/cli/test_bad_values.py.)"""
    (tmp_path / "cache").mkdir()
    cache = tmp_path / "cache" / "clients"
    cache.write_text("")
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    args = ["certify", "--client", "aiokafka@0.14.0", "--cases", "kip511.client.software_identity"]
    assert main([*args, "--out", str(out)]) == EXIT_ERRORS
    said = capsys.readouterr()
    assert "NotADirectoryError" in said.out and "no case produced a result" not in said.err
    results = RunResults.read(out / "results.json").results
    assert results and all(r.verdict == "error" and str(cache) in r.message for r in results)
    page = (out / "cases" / "kip511.client.software_identity.html").read_text(encoding="utf-8")
    assert "NotADirectoryError" in page


def test_a_certificate_counts_judged_cases_once() -> None:
    """A hanging driver: "5 of 5 cases could not be judged" beside "cases judged 2" (its two
    `error` cases counted as judged by one line and not by the other)."""
    results = RunResults(kconform_version="0", started=0.0)
    results.results = [_result(f"k.e{i}", "error", "no request in 5 s") for i in range(2)] + [
        _result(f"k.n{i}", "not-applicable", "no request reached the proxy") for i in range(3)
    ]
    text = render_text(certify(results))
    assert "c 1: INCOMPLETE\n  nothing judged: 2 error, 3 not-applicable" in text, text
    assert "cases 5: judged 0, not judged 5 (2 error, 3 not-applicable)" in text, text
