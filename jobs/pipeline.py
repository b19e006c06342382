"""The pipeline: raw log files -> bronze -> silver (+ quarantine) -> gold, into Delta tables.

``build_frames`` is the lazy plan (shared with ``kafka-audit parse``); ``run`` writes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.config import RunConfig
from jobs.ingest import read_lines, sources_frame
from jobs.inputs import SourceFile, discover_sources
from jobs.lake import Lake, WriteResult, choose_engine
from jobs.summary import RunSummary, TableWrite
from schemas import auth_events, authz_decisions, quarantine, raw_lines, security_metrics
from transforms.accounting import line_accounting
from transforms.auth import parse_auth_events
from transforms.authz import parse_authz_decisions
from transforms.bronze import fold_records, number_lines, to_raw_lines, with_family, with_node_id
from transforms.metrics import security_metrics as compute_security_metrics
from transforms.quarantine import parsed_rows, quarantine_rows

log = logging.getLogger(__name__)

PARSED_FAMILIES = (raw_lines.FAMILY_AUTHZ, raw_lines.FAMILY_AUTH)


@dataclass(frozen=True)
class Frames:
    """The run's DataFrames, lazily planned."""

    numbered: DataFrame
    records: DataFrame
    bronze: DataFrame
    authz_decisions: DataFrame
    auth_events: DataFrame
    quarantine: DataFrame
    security_metrics: DataFrame


def in_window(ts: Column, start: datetime | None, end: datetime | None) -> Column:
    """True for timestamps inside [start, end); everything when there is no window."""
    if start is None or end is None:
        return F.lit(True)
    return ts.isNotNull() & (ts >= F.lit(start)) & (ts < F.lit(end))


def build_frames(spark: SparkSession, sources: Sequence[SourceFile], config: RunConfig) -> Frames:
    """Plan every layer for the given source files (nothing runs until an action)."""
    numbered = number_lines(read_lines(spark, sources)).persist(StorageLevel.MEMORY_AND_DISK)
    records = (
        fold_records(numbered)
        .transform(with_node_id, sources_frame(spark, sources))
        .transform(with_family)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    bronze = to_raw_lines(
        records.where(in_window(F.col("log_ts"), config.start, config.end)), config.run_id
    ).persist(StorageLevel.MEMORY_AND_DISK)
    family = F.col("family")
    authz = parse_authz_decisions(bronze.where(family == raw_lines.FAMILY_AUTHZ)).persist()
    auth = parse_auth_events(bronze.where(family == raw_lines.FAMILY_AUTH)).persist()
    silver_authz = parsed_rows(authz, authz_decisions.AUTHZ_DECISIONS)
    silver_auth = parsed_rows(auth, auth_events.AUTH_EVENTS)
    return Frames(
        numbered=numbered,
        records=records,
        bronze=bronze,
        authz_decisions=silver_authz,
        auth_events=silver_auth,
        quarantine=quarantine_rows(authz).unionByName(quarantine_rows(auth)),
        security_metrics=compute_security_metrics(silver_auth, silver_authz, config.run_id),
    )


def replaced_dates(frames: Frames, config: RunConfig) -> list[date | None]:
    """Date partitions this run owns: the window's days, else every date in the input
    (None = records without a timestamp). Collects one small column on the driver."""
    window = config.window_dates()
    if window is not None:
        return list(window)
    rows = frames.bronze.select("log_date").distinct().collect()
    return sorted({row["log_date"] for row in rows}, key=lambda d: (d is None, d))


def _write_all(
    lake: Lake, frames: Frames, dates: list[date | None], run_id: str
) -> list[WriteResult]:
    app_id = f"kafka-security-audit:{run_id}"
    plan = [
        (frames.bronze, raw_lines.TABLE_NAME, raw_lines.PARTITION_COLUMNS),
        (frames.authz_decisions, authz_decisions.TABLE_NAME, authz_decisions.PARTITION_COLUMNS),
        (frames.auth_events, auth_events.TABLE_NAME, auth_events.PARTITION_COLUMNS),
        (frames.quarantine, quarantine.TABLE_NAME, quarantine.PARTITION_COLUMNS),
        (frames.security_metrics, security_metrics.TABLE_NAME, security_metrics.PARTITION_COLUMNS),
    ]
    results = []
    for df, table, partition_by in plan:
        log.info("writing %s", table)
        results.append(
            lake.write(
                df, table, partition_by=partition_by, replace_partitions=dates, app_id=app_id
            )
        )
    return results


def run(
    spark: SparkSession,
    config: RunConfig,
    java: str | None = None,
    sources: Sequence[SourceFile] | None = None,
) -> RunSummary:
    """Run the pipeline for ``config``'s inputs and window and write every table.

    Args:
        spark: the session (built by the CLI or spark-submit).
        config: the validated run configuration.
        java: a description of the JVM, for the summary.
        sources: the files of ``config.sources`` when the caller already discovered them.

    Returns:
        The run summary: engine, tables written, per-file accounting, duration.

    Raises:
        InputError / ConfigError: bad inputs or configuration (before anything is written).
        EngineError: the Delta engine cannot be used or a commit failed.
    """
    started = time.monotonic()
    sources = sources if sources is not None else discover_sources(config.sources)
    log.info("run %s: %d log file(s)", config.run_id, len(sources))
    engine = choose_engine(spark, config.engine)
    lake = Lake(spark, config.lake, engine)
    frames = build_frames(spark, sources, config)
    dates = replaced_dates(frames, config)
    results = _write_all(lake, frames, dates, config.run_id)
    log.info("accounting for every line")
    accounting = line_accounting(
        frames.numbered,
        records=frames.records,
        bronze=frames.bronze,
        parsed=[frames.authz_decisions, frames.auth_events],
        quarantine=frames.quarantine,
        parsed_families=PARSED_FAMILIES,
    ).orderBy("source_path")
    rows = [row.asDict() for row in accounting.collect()]
    for df in (frames.numbered, frames.records, frames.bronze):
        df.unpersist()
    return RunSummary(
        run_id=config.run_id,
        engine=str(engine),
        java=java,
        lake=config.lake,
        window=(config.start, config.end),
        tables=[TableWrite.from_result(r) for r in results],
        accounting=rows,
        duration_s=time.monotonic() - started,
    )
