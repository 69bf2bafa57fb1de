"""The full measured matrix, a generated artifact (issue 44): every verdict of every subject
(`docs/matrix.json`, beside a checkout's `baselines/`), written a column at a time by `kconform
matrix run --write-baselines` and read as the matrix pages' columns, each cell's why and the
subject's bundles taken from its expectations (reports/expectations.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kconform.errors import UsageError
from kconform.reports.expectations import read_expectations, subject_path
from kconform.reports.matrix import Column, order

__all__ = ["matrix_artifact", "matrix_columns", "record_column", "variant_size"]


def matrix_artifact(baselines: Path) -> Path:
    """The full measured matrix beside a checkout's baselines (`docs/matrix.json`)."""
    return baselines.parent / "docs" / "matrix.json"


def variant_size(variant: str) -> int:
    """The cluster size a column's variant names ("3brokers" -> 3), 1 for any other."""
    return int(variant.removesuffix("brokers")) if re.fullmatch(r"\d+brokers", variant) else 1


def matrix_columns(baselines: Path, artifact: Path | None = None) -> list[Column]:
    """The measured matrix as columns, each cell's why and the bundles from the subject's
    expectations in `baselines`, in matrix order. UsageError naming a malformed file."""
    path = artifact or matrix_artifact(baselines)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        raw = data["columns"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"matrix {path}: unreadable ({exc}); `kconform matrix run "
                         "--write-baselines` writes it") from None  # fmt: skip
    columns = []
    for entry in raw:
        subject, variant = str(entry["subject"]), str(entry.get("variant", ""))
        file = subject_path(baselines, subject)
        exp = read_expectations(file) if file.is_file() else None
        size = variant_size(variant)
        verdicts = {str(k): str(v) for k, v in entry["verdicts"].items()}
        why = {}
        for case_id in verdicts:
            text = exp.expected(case_id, size)[1] if exp else None
            if text is not None:
                why[case_id] = text
        columns.append(Column(subject, variant, file.name, verdicts, why,
                              exp.bundles if exp else {}))  # fmt: skip
    return sorted(columns, key=order)


def record_column(
    artifact: Path, subject: str, variant: str, verdicts: Mapping[str, str], *, keep_unrun: bool
) -> None:
    """Put a run's verdicts into the measured matrix as the column of (subject, variant), made
    anew unless `keep_unrun` (a run of some cases only keeps the others' earlier cells)."""
    data: dict[str, Any] = {"columns": []}
    if artifact.is_file():
        data = json.loads(artifact.read_text(encoding="utf-8"))
    columns: list[dict[str, Any]] = data["columns"]
    for column in columns:
        if column["subject"] == subject and column.get("variant", "") == variant:
            cells = dict(column["verdicts"]) if keep_unrun else {}
            column["verdicts"] = dict(sorted({**cells, **verdicts}.items()))
            break
    else:
        columns.append({"subject": subject, **({"variant": variant} if variant else {}),
                        "verdicts": dict(sorted(verdicts.items()))})  # fmt: skip
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
