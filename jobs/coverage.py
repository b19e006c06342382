"""What makes reruns converge (docs/reruns.md): the days a lake covers, the end of its
evidence, and the identity of a run's commits.

Gold is a pure function of the lake's silver, its nodes' configuration and ``run_coverage``:
each run rewrites every gold table from them, so no state of an earlier run can be applied
twice. This module holds the two facts gold needs beside silver and the application
transaction id of a run's commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.lake.tables import Lake
from schemas import run_coverage
from transforms.frames import local_frame

APP = "kafka-security-audit"


def coverage_frame(
    spark: SparkSession, dates: Iterable[date | None], windowed: bool, run_id: str
) -> DataFrame:
    """``run_coverage`` rows (``schemas.run_coverage.RUN_COVERAGE``) for the days a run
    replaced; records without a timestamp (the None date) cover no day."""
    rows = [(day, windowed, run_id) for day in sorted(d for d in set(dates) if d is not None)]
    return local_frame(spark, rows, run_coverage.RUN_COVERAGE)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def evidence_window(lake: Lake) -> tuple[datetime | None, datetime | None]:
    """The span of the lake's evidence (UTC) ``[start, end)``, from ``run_coverage``.

    ``end`` is the instant as of which gold states what is still open: the midnight after the
    last covered day when a run window covered it; None (= the latest event time in silver)
    when a run without a window covered it, or nothing is covered. ``start`` is the first
    covered day's midnight when a run window covered it, else None. Collects one row on the
    driver.
    """
    covered = lake.read(run_coverage.TABLE_NAME, run_coverage.RUN_COVERAGE)
    day = F.struct("covered_date", "windowed")
    edges = covered.agg(
        F.min_by(day, F.col("covered_date")).alias("first"),
        F.max_by(day, F.col("covered_date")).alias("last"),
    ).first()
    if edges is None or edges["last"] is None:
        return None, None
    first, last = edges["first"], edges["last"]
    start = _midnight(first["covered_date"]) if first["windowed"] else None
    end = _midnight(last["covered_date"] + timedelta(days=1)) if last["windowed"] else None
    return start, end


def attempt_app_id(run_id: str) -> str:
    """Application transaction id of one attempt of a run: unique per attempt, so no write is
    ever skipped as "already committed". Reruns converge because every write replaces (the
    run's date partitions, or the whole gold table), not because a commit is skipped: a skip
    keyed by the run id would keep stale rows when a run id is reused on other inputs (late
    files, another window)."""
    return f"{APP}:{run_id}:{uuid.uuid4().hex}"
