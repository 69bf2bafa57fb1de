"""What a command selects (issue 41, selection items): an exact case id is that case alone, and a
selector that names nothing (`list --kip/--rule`, `fuzz --cases`) or a `-k` pytest cannot parse
is one line naming the value and what is accepted, exit 2, before anything starts."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import NoReturn

import pytest
from one_line_error import one_line

from kconform.cli import main
from kconform.engine.model import CASES, select_cases
from kconform.exit_codes import EXIT_OK, EXIT_USAGE
from kconform.reports.model import RunResults
from kconform.rules import RULES
from kconform.runner import case_catalogue

# an id that a longer id extends in its last segment: the old prefix matching took both
SHORT, LONGER = "kip714.subscriptions.match.client_id", "kip714.subscriptions.match.client_id_null"


@pytest.fixture(autouse=True)
def declared() -> None:
    case_catalogue()  # imports the suites, which declare their cases


@pytest.mark.parametrize(
    ("pattern", "wanted"),
    [
        ("kip511.client.software_identity", {"kip511.client.software_identity"}),
        (SHORT, {SHORT}),
        ("kip511.client.software_identity*", {"kip511.client.software_identity",
                                              "kip511.client.software_identity_after_reset",
                                              "kip511.client.software_identity_apache"}),
    ],
)  # fmt: skip
def test_an_exact_case_id_selects_that_case_alone(pattern: str, wanted: set[str]) -> None:
    assert LONGER in CASES
    assert select_cases(CASES.values(), [pattern])[pattern] == wanted


@pytest.mark.parametrize(
    ("pattern", "start"),
    [("kip511", "kip511."), ("kip714.push", "kip714.push."), ("kip714.push.", "kip714.push."),
     ("fuzz.", "fuzz."), ("fuzz.request.push_telemetry", "fuzz.request.push_telemetry.")],
)  # fmt: skip
def test_a_prefix_ends_at_a_dot(pattern: str, start: str) -> None:
    chosen = select_cases(CASES.values(), [pattern])[pattern]
    assert chosen == {c for c in CASES if c.startswith(start)} and len(chosen) > 1


def test_a_prefix_inside_a_segment_selects_nothing_by_id() -> None:
    assert select_cases(CASES.values(), ["kip714.subscriptions.match.client_"]) == {
        "kip714.subscriptions.match.client_": set()
    }


def test_run_of_an_exact_id_runs_that_case_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the pytest plugin's own selection, which judged LONGER too."""
    args = ["run", "--target", "reference", "--cases", SHORT, "-j", "1"]
    assert main([*args, "--no-default-baselines", "--out", str(tmp_path)]) == EXIT_OK
    capsys.readouterr()
    results = RunResults.read(tmp_path / "results.json").results
    assert [r.case_id for r in results] == [SHORT]


def test_run_names_the_ids_a_typed_prefix_was_near(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--target", "reference", "--cases", "kip511.client.software_identit"]
    assert main(args) == EXIT_USAGE
    one_line(capsys, "'kip511.client.software_identit'", "did you mean",
             "kip511.client.software_identity")  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "texts"),
    [
        (["--kip", "999"], ["--kip '999'", "KIP-511", "KIP-714", "fuzz"]),
        (["--kip", "abc"], ["--kip 'abc'", "KIP-511", "KIP-714"]),
        (["--rule", "nonexistent"], ["--rule 'nonexistent'", "did you mean", "kip714.*"]),
        (["--rule", "kip714.pushh.accepted"], ["did you mean kip714.push.accepted"]),
    ],
)
def test_list_refuses_a_kip_or_rule_it_does_not_know(
    flags: list[str], texts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", *flags]) == EXIT_USAGE
    one_line(capsys, *texts)


@pytest.mark.parametrize(
    "flags", [["--kip", "KIP-714"], ["--kip", "511"], ["--kip", "fuzz"], ["--rule", "kip714.*"]]
)
def test_list_keeps_the_kips_and_rules_it_knows(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", *flags]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.splitlines()[-1] != "0 cases", out[-200:]


@pytest.mark.parametrize("kip", sorted({rule.kip for rule in RULES.values()}))
def test_every_kip_of_the_rule_book_lists_the_cases_judging_its_rules(
    kip: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--kip KIP-1142` was 'known' (a rule is declared under it) yet listed 0 cases: the case
    judging that rule is filed under KIP-714. A KIP whose rules no case judges (the soak's)
    says where each is judged."""
    assert main(["list", "--kip", kip]) == EXIT_OK
    out = capsys.readouterr().out
    judged_elsewhere = {r.id for r in RULES.values() if r.kip == kip and r.outside_suites}
    if "\n0 cases\n" in f"\n{out}":
        assert judged_elsewhere == {r.id for r in RULES.values() if r.kip == kip}, out
        assert all(f"{rule}: no suite case; " in out for rule in judged_elsewhere), out


class Started(Exception):
    """The command got past its checks and would have started something."""


def _started(*args: object, **kwargs: object) -> NoReturn:
    raise Started


@pytest.fixture
def nothing_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for module, name in [("kconform.runner", "run"), ("pytest", "main")]:
        monkeypatch.setattr(importlib.import_module(module), name, _started)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("expression", ["not and", "a or", "(", ",", "kip511 and (x"])
def test_run_refuses_a_k_pytest_cannot_parse_before_anything_starts(
    expression: str, nothing_starts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = nothing_starts / "out"
    args = ["run", "--target", "reference", "-k", expression, "--out", str(out)]
    assert main(args) == EXIT_USAGE
    err = one_line(capsys, f"-k {expression!r}", "not a pytest -k expression", "and, or, not")
    assert expression != "not and" or "got and at column 5" in err, err
    assert not out.exists()


def test_run_takes_a_k_pytest_parses(nothing_starts: Path) -> None:
    with pytest.raises(Started):
        main(["run", "--target", "reference", "-k", "apiversions and not invalid"])


@pytest.mark.parametrize(
    ("selector", "texts"),
    [
        ("fuzz.nomatch", ["'fuzz.nomatch'", "no fuzz case", "fuzz.request.*"]),
        ("fuzz.requst", ["did you mean fuzz.request.*"]),
        ("kip511.apiversions.valid_software_accepted", ["no fuzz case", "did you mean"]),
        (",", ["',' is empty", "case ids"]),
    ],
)
def test_fuzz_refuses_a_selector_that_names_no_fuzz_case(
    selector: str, texts: list[str], nothing_starts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = nothing_starts / "out"
    assert main(["fuzz", "--budget", "1s", "--cases", selector, "--out", str(out)]) == EXIT_USAGE
    one_line(capsys, *texts)
    assert not out.exists()


@pytest.mark.parametrize("selector", ["fuzz.", "fuzz.request.push_telemetry", "fuzz.stateful.*"])
def test_fuzz_takes_what_names_fuzz_cases(selector: str, nothing_starts: Path) -> None:
    with pytest.raises(Started):
        main(["fuzz", "--budget", "1s", "--cases", selector, "--out", str(nothing_starts / "o")])
