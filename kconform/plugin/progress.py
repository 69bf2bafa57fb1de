"""A pytest plugin printing one line per case run: counter, verdict, case id, subject.

The line names the case by its id (what `--cases`, the report and the baselines use), not by
pytest's test name, so a line can be pasted into `--cases` as it is.

`kconform run` (kconform.runner) and each of its workers (kconform.plugin.workers) pass it to
`pytest.main`; plain `pytest` does not load it and shows pytest's own progress.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kconform.plugin.items import case_info, subject_label
from kconform.plugin.scheduling import count_done

__all__ = ["Progress"]


class Progress:
    """A pytest plugin printing one line per case: counter, case, subject, verdict."""

    def __init__(self, verbose: bool, label: str = "") -> None:
        self.verbose = verbose
        self.label = f"{label} " if label else ""  # which worker, with -j
        self.total = 0
        self.done = 0
        self.claims: Path | None = None  # with -j: the count is the run's, over all workers
        self.names: dict[str, str] = {}  # nodeid: "case id  subject"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        for item in session.items:
            info = case_info(item)
            if info is not None:
                self.names[item.nodeid] = f"{info.id}  {subject_label(item)}".rstrip()
        claims = session.config.getoption("--kconform-claims", None)
        self.claims = Path(claims) if claims else None
        if self.claims is None:
            print(f"kconform: {self.label}{self.total} case runs collected", flush=True)
        elif self.label.startswith("j1 "):  # every worker collects the same cases
            print(f"kconform: {self.total} case runs collected, shared by the workers", flush=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.skipped):
            if self.claims is not None:
                self.done = count_done(self.claims)
            else:
                self.done += 1
            verdict = dict(report.user_properties).get("kconform_verdict", report.outcome)
            flag = "!" if report.failed else " "
            line = (
                f"[{self.label}{self.done:>4}/{self.total}]{flag}{verdict:<13} "
                f"{self.names.get(report.nodeid) or report.nodeid.split('::')[-1]}"
            )
            print(line, flush=True)
            if report.failed and self.verbose and report.longrepr is not None:
                print(str(report.longrepr), flush=True)
