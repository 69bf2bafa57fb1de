"""Every output a command names is checked before work starts (issue 33): a read-only place, a
file where a folder is meant or a folder where a file is meant is one line and exit 2, never a
traceback after the work is done; report files share one mode."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.exit_codes import EXIT_USAGE
from kconform.reports.model import RunResults

SAMPLE = Path(__file__).parent / "reports" / "data" / "sample-results.json"


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """An existing folder this process cannot write in: a read-only one, or (as root, whom
    permission bits do not stop) a folder of a read-only file system."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").write_text("x")
    except OSError:
        return folder
    (folder / "probe").unlink()
    folder.chmod(0o755)
    for candidate in (Path("/sys/kernel"), Path("/proc/self")):
        try:
            (candidate / "kconform-probe").write_text("x")
        except OSError:
            return candidate
    pytest.skip("no unwritable folder on this machine")


# subcommand -> its arguments around an output folder given as `--out`
COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "run": lambda out: [
        "run",
        "--target",
        "reference",
        "--cases",
        "kip714.push.accepted",
        "--out",
        str(out),
    ],
    "certify": lambda out: ["certify", "--client", "kafka-python", "--out", str(out)],
    "report": lambda out: ["report", str(SAMPLE), "--out", str(out)],
    "soak": lambda out: ["soak", "--duration", "1s", "--clients", "1", "--out", str(out)],
    "fuzz": lambda out: ["fuzz", "--budget", "1s", "--out", str(out)],
    "volumes": lambda out: ["volumes", "--records", "1", "--out", str(out)],
}


def _one_line_usage(code: int, err: str) -> None:
    assert code == EXIT_USAGE
    assert err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unwritable_out_folder_is_refused_before_work_starts(
    command: str, unwritable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(COMMANDS[command](unwritable / "sub"))
    err = capsys.readouterr().err
    _one_line_usage(code, err)
    assert "--out" in err and "cannot write there" in err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_out_folder_that_is_a_file_is_refused(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "a-file"
    file.write_text("not a folder")
    code = main(COMMANDS[command](file))
    err = capsys.readouterr().err
    _one_line_usage(code, err)
    assert "is a file, not a folder" in err
    assert file.read_text() == "not a folder"


@pytest.mark.parametrize("flag", ["--json", "--junit"])
@pytest.mark.parametrize("command", ["run", "certify"])
def test_a_results_file_that_is_a_folder_is_refused(
    command: str, flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*COMMANDS[command](tmp_path / "out"), flag, str(tmp_path)]
    code = main(args)
    err = capsys.readouterr().err
    _one_line_usage(code, err)
    assert flag in err and "is a folder, not a file" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_a_results_file_in_an_unwritable_place_is_refused(
    flag: str, unwritable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*COMMANDS["run"](tmp_path / "out"), flag, str(unwritable / "r.xml")]
    _one_line_usage(main(args), capsys.readouterr().err)


def test_baseline_out_is_checked(
    tmp_path: Path, unwritable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["baseline", str(SAMPLE), "--subject", "reference", "--out"]
    _one_line_usage(main([*args, str(tmp_path)]), capsys.readouterr().err)
    _one_line_usage(main([*args, str(unwritable / "b.json")]), capsys.readouterr().err)


def test_results_files_get_the_mode_of_every_other_report_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        RunResults.read(SAMPLE).write(tmp_path / "results.json")
        (tmp_path / "index.html").write_text("x")
        from kconform.soak.samples import write_json

        write_json(tmp_path / "run.json", {"a": 1})
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"results.json": 0o644, "index.html": 0o644, "run.json": 0o644}


def test_results_kept_when_the_folder_fails_mid_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails once the cases ran still leaves every result somewhere named."""
    from kconform.plugin import state as state_module

    monkeypatch.setattr(state_module.tempfile, "gettempdir", lambda: str(tmp_path))

    class Config:
        def getoption(self, name: str) -> object:
            return {
                "--kconform-results": str(tmp_path / "gone" / "file" / "results.json"),
                "--baseline": [],
                "--brokers": None,
                "--without": "",
                "--coverage": False,
            }[name]

    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "file").write_text("a file where the folder was")
    run = state_module.RunState(Config())  # type: ignore[arg-type]
    run.results.results = RunResults.read(SAMPLE).results
    run.flush()
    err = capsys.readouterr().err
    kept = Path(err.rsplit("kept in ", 1)[1].strip())
    assert kept.parent == tmp_path
    assert len(RunResults.read(kept).results) == len(run.results.results)
