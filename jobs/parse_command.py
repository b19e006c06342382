"""``kafka-audit parse``: print what every input record parses into, as JSON lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.config import RunConfig, SourceSpec
from jobs.inputs import discover_sources
from jobs.pipeline import PARSED_FAMILIES, build_frames


def _rows(df: DataFrame, family: Column, key: str, payload: list[str]) -> DataFrame:
    return df.select(
        "source_path",
        "line_number",
        F.to_json(
            F.struct(
                F.col("source_path").alias("source"),
                F.col("line_number").alias("line"),
                family.alias("family"),
                F.struct(*payload).alias(key),
            ),
            {"ignoreNullFields": "false", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"},
        ).alias("json"),
    )


def parsed_json(spark: SparkSession, sources: Sequence[SourceSpec]) -> DataFrame:
    """One JSON document per input record, ordered by file and line.

    Each document has ``source``, ``line``, ``family`` and one of: the silver table's name as
    key with the parsed columns, ``quarantine`` (reason_code, reason_detail, raw), or
    ``out_of_scope`` (level, logger, message) for records no parser claims yet.
    """
    files = discover_sources(sources)
    config = RunConfig(sources=tuple(sources), lake="(none)", run_id="parse")
    frames = build_frames(spark, files, config)
    skip = {"source_path", "line_number", "run_id"}
    authz_cols = [c for c in frames.authz_decisions.columns if c not in skip]
    auth_cols = [c for c in frames.auth_events.columns if c not in skip]
    bronze = frames.bronze
    unparsed = bronze.where(F.col("family").isNull() | ~F.col("family").isin(*PARSED_FAMILIES))
    parts = [
        _rows(frames.authz_decisions, F.lit("authz"), "authz_decisions", authz_cols),
        _rows(frames.auth_events, F.lit("auth"), "auth_events", auth_cols),
        _rows(frames.quarantine, F.col("family"), "quarantine",
              ["reason_code", "reason_detail", "raw"]),
        _rows(unparsed, F.col("family"), "out_of_scope", ["level", "logger", "message"]),
    ]  # fmt: skip
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part)
    return union.orderBy("source_path", "line_number")


def print_parsed(spark: SparkSession, sources: Sequence[SourceSpec], out: TextIO) -> None:
    """Stream ``parsed_json`` to ``out``, one line per record."""
    for row in parsed_json(spark, sources).toLocalIterator():
        out.write(row["json"] + "\n")
