"""Finding one's way (issue 33, deliverable 5): `--cases` speaks rule ids and suggests near
matches, progress lines name case ids, `list` filters, `certify` applies baselines and has full
help, skip reasons reach the console whole."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kconform.cli import build_parser, main
from kconform.engine.model import CASES, select_cases
from kconform.exit_codes import EXIT_OK, EXIT_USAGE
from kconform.runner import RunOptions, case_catalogue


@pytest.fixture(scope="module")
def catalogue() -> list[dict[str, object]]:
    return case_catalogue()


def test_a_rule_id_selects_the_cases_that_judge_it(catalogue: object) -> None:
    chosen = select_cases(CASES.values(), ["kip714.push.terminating.once", "kip714.get.*"])
    once = chosen["kip714.push.terminating.once"]
    assert once and all("kip714.push.terminating.once" in CASES[c].rules for c in once)
    # the Get rules are judged by the kip714.subscriptions.* cases
    gets = chosen["kip714.get.*"]
    assert any(c.startswith("kip714.subscriptions.") for c in gets)
    assert all(any(r.startswith("kip714.get.") for r in CASES[c].rules) for c in gets)
    # a pattern that names case ids keeps selecting exactly those
    push = select_cases(CASES.values(), ["kip714.push.*"])["kip714.push.*"]
    assert push and all(c.startswith("kip714.push.") for c in push)


def test_cases_that_match_nothing_are_refused_with_near_matches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--target", "reference", "--cases", "kip714.pushh.*"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kip714.pushh.*" in err[0] and "did you mean kip714.push.*" in err[0]
    # certify runs client cases: a broker case id matches nothing there
    args = ["certify", "--client", "kafka-python", "--cases", "kip714.push.terminating.single"]
    assert main(args) == EXIT_USAGE
    assert "matches no client case" in capsys.readouterr().err


def test_progress_lines_name_case_ids_and_a_rule_id_runs_its_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--target", "reference", "--cases", "kip511.apiversions.schema"]
    code = main([*args, "--out", str(tmp_path), "-j", "1"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert lines and code == EXIT_OK, out
    for line in lines:
        case_id, subject = line.split()[-2:]
        assert CASES[case_id] and "kip511.apiversions.schema" in CASES[case_id].rules
        assert subject == "reference" and "test_" not in line and "[reference]" not in line


def _listed(capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict[str, object]]:
    assert main(["list", "--format", "json", *flags]) == EXIT_OK
    listed: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return listed


def test_list_filters_by_kind_kip_level_rule_and_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    everything = _listed(capsys)
    some = _listed(capsys, "--kind", "client", "--kip", "714", "--level", "must")
    assert 0 < len(some) < len(everything)
    assert all((c["kind"], c["kip"], c["level"]) == ("client", "KIP-714", "MUST") for c in some)
    gets = _listed(capsys, "--rule", "kip714.get.*")
    assert gets and all(any(str(r).startswith("kip714.get.") for r in c["rules"]) for c in gets)  # type: ignore[attr-defined]
    mock = _listed(capsys, "--target", "librdkafka_mock")
    broker = _listed(capsys, "--kind", "broker")
    assert 0 < len(mock) < len(broker)
    assert not any("client_metrics_admin" in c["requires"] for c in mock)  # type: ignore[operator]
    assert main(["list", "--target", "kraft"]) == EXIT_USAGE
    assert "probed" in capsys.readouterr().err


def test_certify_has_help_on_every_flag() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    certify = sub.choices["certify"]
    bare = [a.dest for a in certify._actions if not a.help]
    assert not bare, f"certify flags without help: {bare}"


def test_certify_applies_the_committed_baselines_as_run_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kconform.runner
    from kconform.runner import pytest_args

    seen: list[RunOptions] = []
    monkeypatch.setattr(kconform.runner, "run", lambda options: seen.append(options) or 0)
    assert main(["certify", "--client", "kafka-python", "--out", str(tmp_path)]) == 0
    (options,) = seen
    args = pytest_args(options, tmp_path / "results.json")
    baselines = [args[i + 1] for i, a in enumerate(args) if a == "--baseline"]
    assert any(Path(b).parts[-2:] == ("kafka-python", "installed.json") for b in baselines), args
    seen.clear()
    flags = ["--no-default-baselines", "--out", str(tmp_path)]
    assert main(["certify", "--client", "kafka-python", *flags]) == 0
    assert "--baseline" not in pytest_args(seen[0], tmp_path / "results.json")


def test_skip_reasons_reach_the_console_whole() -> None:
    from kconform.engine.results import CaseResult
    from kconform.reports.common import not_judged
    from kconform.reports.model import RunResults

    hint = "install it with `apt-get install -y openjdk-17-jre-headless` or set JAVA_HOME"
    why = "target apache:4.1.0 unavailable: " + "no Java runtime was found on PATH; " * 8 + hint
    result = CaseResult("kip714.push.terminating.single", "t", "s", "MUST", "KIP-714",
                        "apache:4.1.0", "broker", "", "", "skipped", message=why)  # fmt: skip
    line = not_judged(RunResults("1", 0.0, 1.0, results=[result]))
    assert line is not None and line.endswith(hint) and "…" not in line
