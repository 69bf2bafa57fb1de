"""Recording a finished matrix run: the subject's column of the measured matrix, and what its
facts do not derive as exceptions in its baseline file (reports.expectations)."""

from __future__ import annotations

from pathlib import Path

from kconform.reports.expectations import WHYS, by_level, prune_whys, subject_path
from kconform.reports.matrix_artifact import matrix_artifact, record_column
from kconform.reports.model import (
    RunResults,
    bundles_of,
    capabilities_of,
    layered_baselines,
    write_baseline,
)

__all__ = ["record_run"]


def record_run(subject: str, name: str, run: RunResults, keep_unrun: bool, folder: Path) -> None:
    """Record a run: its verdicts as the subject's column of the measured matrix (`docs/matrix.json`
    beside `folder`), and what its facts do not derive as exceptions in
    `<folder>/<kind>/<version>.json` (a 3-node run: what differs from the 1-node expectation, in
    that file's `brokers` section), saying which expectations changed (their whys need a look)."""
    variant = name[len(subject.replace(":", "-")) + 1 :] if name != subject else ""
    brokers = int(variant.removesuffix("brokers")) if variant.endswith("brokers") else 1
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / WHYS).is_file():
        (folder / WHYS).write_text("{}\n", encoding="utf-8")
    target = subject_path(folder, subject)
    before = layered_baselines([target], brokers) if target.is_file() else {}
    expected_before, _ = before.get(subject, ({}, {}))
    mine = [r for r in run.results if r.subject == subject]
    write_baseline(target, subject, run.results, keep_unrun=keep_unrun,
                   bundles=bundles_of(run, subject), brokers=brokers,
                   capabilities=capabilities_of(run, subject))  # fmt: skip
    record_column(matrix_artifact(folder), subject, variant,
                  {r.case_id: r.verdict for r in mine}, keep_unrun=keep_unrun)  # fmt: skip
    prune_whys(folder)
    expected, why = layered_baselines([target], brokers)[subject]
    for r in sorted(mine, key=lambda r: r.case_id):
        was = expected_before.get(r.case_id, by_level(r.case_id))
        if was != expected[r.case_id]:
            print(f"  {target}: {r.case_id} {was} -> {expected[r.case_id]} (check its why)")
        if expected[r.case_id] != by_level(r.case_id) and not why.get(r.case_id):
            print(f"  {target}: {r.case_id} is {expected[r.case_id]} with no why yet")
