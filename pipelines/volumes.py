"""The volumes comparison as a Spark job of its own (the judging is
`kconform.engine.volumes.compare`, which the volume suite and `kconform volumes` run in-process).

    spark-submit pipelines/volumes.py --ledger L.parquet --samples S.parquet --out DIR
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from kconform.engine.volumes.compare import compare_volumes
from kconform.engine.volumes.model import SUMMARY_FILE, Tolerance
from kconform.fixtures.spark import local_spark


def main(argv: list[str] | None = None) -> int:
    """`spark-submit pipelines/volumes.py --ledger L --samples S --out DIR`: exit 1 on any
    mismatch or missing reading, 0 when every source agrees with the ledger."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ledger", required=True, help="ledger Parquet (file or folder)")
    parser.add_argument("--samples", required=True, help="samples Parquet (file or folder)")
    parser.add_argument("--out", required=True, help="folder for the result and the summary")
    parser.add_argument("--master", default=None, help="default: spark-submit's, else local[2]")
    parser.add_argument("--hot-factor", type=float, default=Tolerance.hot_factor)
    args = parser.parse_args(argv)
    # under spark-submit the master is spark-submit's; run as a plain script, local[2]
    submitted = "SPARK_ENV_LOADED" in os.environ or "PYSPARK_GATEWAY_PORT" in os.environ
    spark = local_spark(args.master or (None if submitted else "local[2]"))
    tolerance = replace(Tolerance(), hot_factor=args.hot_factor)
    summary = compare_volumes(spark, args.ledger, args.samples, args.out, tolerance)
    totals = summary["totals"]
    print(
        f"volumes: {totals['rows']} rows, {totals['mismatch']} mismatches, "
        f"{totals['missing']} missing -> {Path(args.out) / SUMMARY_FILE}"
    )
    return 1 if totals["mismatch"] or totals["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
