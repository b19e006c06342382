"""``kafka-audit parse``: print what every input record parses into, as JSON lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.config import RunConfig, SourceSpec
from jobs.inputs import discover_sources
from jobs.pipeline import build_frames, input_bytes
from jobs.small_input import small_input_settings
from transforms.frames import union_by_name
from transforms.silver.registry import PARSED_FAMILIES

_JSON_OPTIONS = {"ignoreNullFields": "false", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"}
_LINEAGE = {"source_path", "line_number", "run_id"}


def _rows(df: DataFrame, family: Column, key: str, payload: list[str]) -> DataFrame:
    document = F.struct(
        F.col("source_path").alias("source"),
        F.col("line_number").alias("line"),
        family.alias("family"),
        F.struct(*payload).alias(key),
    )
    return df.select("source_path", "line_number", F.to_json(document, _JSON_OPTIONS).alias("json"))


def parsed_json(spark: SparkSession, sources: Sequence[SourceSpec], key: bytes) -> DataFrame:
    """One JSON document per silver row, quarantined record or out-of-scope record.

    Each document has ``source``, ``line``, ``family`` and one of: the silver table's name as
    key with its columns (a record feeding two tables prints twice), ``quarantine``
    (reason_code, reason_detail, raw), or ``out_of_scope`` (level, logger, message). Ordered by
    file and line.
    """
    files = discover_sources(sources)
    config = RunConfig(sources=tuple(sources), lake="(none)", run_id="parse")
    frames = build_frames(spark, files, config, key)
    bronze = frames.bronze
    families = bronze.select("source_path", "line_number", "family")
    parts = []
    for name, table in frames.silver.items():
        columns = [c for c in table.columns if c not in _LINEAGE]
        with_family = table.join(families, ["source_path", "line_number"], "left")
        parts.append(_rows(with_family, F.col("family"), name, columns))
    parts.append(
        _rows(
            frames.quarantine,
            F.col("family"),
            "quarantine",
            ["reason_code", "reason_detail", "raw"],
        )
    )
    unparsed = bronze.where(F.col("family").isNull() | ~F.col("family").isin(*PARSED_FAMILIES))
    parts.append(_rows(unparsed, F.col("family"), "out_of_scope", ["level", "logger", "message"]))
    return union_by_name(parts).orderBy("source_path", "line_number", "json")


def print_parsed(
    spark: SparkSession, sources: Sequence[SourceSpec], key: bytes, out: TextIO
) -> None:
    """Stream ``parsed_json`` to ``out``, one line per document (``jobs.small_input``
    settings for small inputs)."""
    size = input_bytes(discover_sources(sources))
    with small_input_settings(spark, size):
        for row in parsed_json(spark, sources, key).toLocalIterator():
            out.write(row["json"] + "\n")
