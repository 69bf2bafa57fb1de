"""The report's "Volumes" section: a summary as a safe, ordered HTML fragment."""

from __future__ import annotations

import html
import re
from typing import Any

from kconform.engine.volumes.model import SUMMARY_SCHEMA, Tolerance
from kconform.reports.volumes_section import render_volumes_section

NASTY = "<script>alert(1)</script>&'\""


def row(status: str, partition: int, **extra: Any) -> dict[str, Any]:
    base = {
        "source": "kip977",
        "metric": "MessagesInPerSec",
        "quantity": "records",
        "topic": "t",
        "partition": partition,
        "produced_records": 10,
        "produced_bytes": 900,
        "expected_low": 10.0,
        "expected_high": 10.0,
        "delta": 10.0,
        "difference": 0.0,
        "status": status,
        "ledger_share": 0.5,
        "ledger_rank": 1,
        "source_rank": 1,
        "hot_ledger": True,
        "hot_source": True,
    }
    return {**base, **extra}


def summary(**extra: Any) -> dict[str, Any]:
    doc = {
        "schema": SUMMARY_SCHEMA,
        "tolerance": Tolerance().to_dict(),
        "totals": {
            "rows": 3,
            "ok": 1,
            "mismatch": 1,
            "missing": 1,
            "records": 30,
            "bytes": 2700,
            "partitions": 3,
        },
        "sources": [
            {
                "source": "kip977",
                "metric": "MessagesInPerSec",
                "quantity": "records",
                "rows": 3,
                "ok": 1,
                "mismatch": 1,
                "missing": 1,
                "hot_ledger": 1,
                "hot_disagreements": 1,
                "rank_disagreements": 0,
            }
        ],
        "rows": [
            row("mismatch", 1, delta=11.0, difference=1.0, hot_source=False),
            row("missing", 2, delta=None, difference=None, ledger_share=None),
            row("ok", -1, ledger_rank=None, hot_ledger=None, hot_source=None),
        ],
        "rows_truncated": 7,
        "run": {
            "target": "reference",
            "client": "confluent-kafka 2.16.1",
            "sources": {"client_telemetry": "none of the 10 metrics ..."},
        },
    }
    return {**doc, **extra}


def test_the_section_lists_sources_then_rows_in_summary_order() -> None:
    out = render_volumes_section(summary())
    assert out.startswith('<section id="volumes">') and out.endswith("</section>")
    assert "1 off" not in out and "2 off" in out  # mismatch + missing
    statuses = re.findall(r'<tr class="vol-(\w+)">', out)
    assert statuses == ["mismatch", "missing", "ok"]
    assert "7 more rows in volumes-result.parquet" in out
    assert "(source disagrees)" in out and ">topic<" in out
    assert "none of the 10 metrics" in out and "61-byte batch header" in out


def test_everything_shown_is_escaped() -> None:
    doc = summary(rows=[row("mismatch", 0, topic=NASTY, metric=NASTY)])
    doc["sources"][0]["source"] = NASTY
    doc["run"]["target"] = NASTY
    out = render_volumes_section(doc)
    assert "<script>" not in out
    assert html.escape(NASTY, quote=True) in out


def test_an_agreeing_or_empty_summary() -> None:
    agreeing = render_volumes_section(
        summary(totals={"mismatch": 0, "missing": 0}, rows=[], rows_truncated=0)
    )
    assert "agree" in agreeing and "more rows" not in agreeing
    empty = render_volumes_section({"sources": [], "rows": []})
    assert 'id="volumes-empty"' in empty
