"""What changed between two matrices (`kconform matrix diff A B`): a release or client added, a
case added, last night against tonight.

A matrix is read from a result folder of `kconform matrix run` (one folder per run holding its
`results.json`: verdicts per case, keyed by the folder's name) or from a baselines folder (one
`<name>.json` per subject, also under subfolders: `<kind>/<version>` keys as `<kind>-<version>`).
A 3-node baseline lists only what differs from its release's 1-node one, so its other cases
read as removed; compare result folders for the whole picture.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kconform.errors import UsageError

Verdicts = dict[str, dict[str, str]]  # {subject: {case id: verdict}}


def load_verdicts(folder: Path) -> Verdicts:
    """The verdicts of a matrix result folder (`matrix run --out`), of a measured matrix
    (`docs/matrix.json`, or the checkout's `baselines/` folder beside it), or, failing those,
    of a folder of baseline files (their exceptions only). Keys are run names, as a result
    folder's subfolders are named (`apache-4.4.0-3brokers`)."""
    from kconform.reports.matrix_artifact import matrix_artifact
    from kconform.reports.model import RunResults, read_baseline

    if folder.is_file():
        return _measured(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder")
    runs = sorted(p for p in folder.glob("*/results.json"))
    if runs:
        out: Verdicts = {}
        for path in runs:
            try:
                results = RunResults.read(path)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            out[path.parent.name] = {r.case_id: r.verdict for r in results.results}
        return out
    if matrix_artifact(folder).is_file():
        return _measured(matrix_artifact(folder))
    files = sorted(p for p in folder.rglob("*.json") if p.name not in ("matrix.json", "whys.json"))
    if not files:
        raise UsageError(f"{folder}: neither a matrix result folder nor a baselines folder")
    keys = {p: p.relative_to(folder).with_suffix("").as_posix().replace("/", "-") for p in files}
    return {keys[p]: read_baseline(p).verdicts for p in files}


def _measured(path: Path) -> Verdicts:
    """Every cell of a measured matrix file, by run name."""
    import json

    try:
        columns = json.loads(path.read_text(encoding="utf-8"))["columns"]
        return {
            str(c["subject"]).replace(":", "-")
            + (f"-{c['variant']}" if c.get("variant") else ""): {
                str(k): str(v) for k, v in c["verdicts"].items()
            }
            for c in columns
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a measured matrix ({exc})") from None


@dataclass
class MatrixDiff:
    """B against A."""

    subjects_added: list[str] = field(default_factory=list)
    subjects_removed: list[str] = field(default_factory=list)
    changed: list[tuple[str, str, str, str]] = field(default_factory=list)  # subject, case, a, b
    cases_added: list[tuple[str, str, str]] = field(default_factory=list)  # subject, case, b
    cases_removed: list[tuple[str, str, str]] = field(default_factory=list)  # subject, case, a

    def empty(self) -> bool:
        return not any(asdict(self).values())

    def to_json(self) -> dict[str, Any]:
        return {
            "subjects_added": self.subjects_added,
            "subjects_removed": self.subjects_removed,
            "changed": [dict(zip(("subject", "case", "a", "b"), c, strict=True))
                        for c in self.changed],
            "cases_added": [dict(zip(("subject", "case", "verdict"), c, strict=True))
                            for c in self.cases_added],
            "cases_removed": [dict(zip(("subject", "case", "verdict"), c, strict=True))
                              for c in self.cases_removed],
        }  # fmt: skip


def _same(a: str, b: str) -> bool:
    """Equal, or one side a run's verdict that the other side, a baseline accepting several
    (`pass|non-strict`), allows."""
    from kconform.reports.model import baseline_verdicts

    one, other = baseline_verdicts(a), baseline_verdicts(b)
    return one == other or (len(one) == 1 and one[0] in other) or (
        len(other) == 1 and other[0] in one)  # fmt: skip


def diff(a: Mapping[str, Mapping[str, str]], b: Mapping[str, Mapping[str, str]]) -> MatrixDiff:
    """Subjects and cases added and removed, verdicts changed, from `a` to `b`; a verdict a
    baseline of several accepts is no change."""
    out = MatrixDiff(sorted(b.keys() - a.keys()), sorted(a.keys() - b.keys()))
    for subject in sorted(a.keys() & b.keys()):
        old, new = a[subject], b[subject]
        out.changed += [(subject, c, old[c], new[c]) for c in sorted(old.keys() & new.keys())
                        if not _same(old[c], new[c])]  # fmt: skip
        out.cases_added += [(subject, c, new[c]) for c in sorted(new.keys() - old.keys())]
        out.cases_removed += [(subject, c, old[c]) for c in sorted(old.keys() - new.keys())]
    return out


def _lines(change: MatrixDiff) -> list[tuple[str, list[str]]]:
    """(heading, entries) of each part that has any."""
    parts = [
        ("subjects added", change.subjects_added),
        ("subjects removed", change.subjects_removed),
        ("verdicts changed", [f"{s} {c}: {a} -> {b}" for s, c, a, b in change.changed]),
        ("cases added", [f"{s} {c}: {v}" for s, c, v in change.cases_added]),
        ("cases removed", [f"{s} {c}: {v}" for s, c, v in change.cases_removed]),
    ]
    return [(title, entries) for title, entries in parts if entries]


def render_text(change: MatrixDiff) -> str:
    """Plain text: a heading and its entries per part; one line when nothing changed."""
    if change.empty():
        return "no change: the same subjects, cases and verdicts\n"
    out: list[str] = []
    for title, entries in _lines(change):
        out += [f"{title} ({len(entries)}):", *(f"  {e}" for e in entries)]
    return "\n".join(out) + "\n"


def render_json(change: MatrixDiff) -> str:
    return json.dumps(change.to_json(), indent=1) + "\n"


def markdown_section(change: MatrixDiff, against: str) -> str:
    """The matrix page's "What changed" section."""
    out = ["## What changed", "", f"Against `{against}` (`kconform matrix diff`).", ""]
    if change.empty():
        return "\n".join([*out, "Nothing: the same subjects, cases and verdicts.", ""])
    for title, entries in _lines(change):
        out += [f"**{title.capitalize()}** ({len(entries)}):", "",
                *(f"- `{e}`" for e in entries), ""]  # fmt: skip
    return "\n".join(out)


def html_section(change: MatrixDiff, against: str) -> str:
    esc = html.escape
    body = [f"<h2>What changed</h2><p>Against <code>{esc(against)}</code>.</p>"]
    if change.empty():
        return body[0] + "<p>Nothing: the same subjects, cases and verdicts.</p>"
    for title, entries in _lines(change):
        items = "".join(f"<li><code>{esc(e)}</code></li>" for e in entries)
        body.append(f"<h3>{esc(title.capitalize())} ({len(entries)})</h3><ul>{items}</ul>")
    return "".join(body)
