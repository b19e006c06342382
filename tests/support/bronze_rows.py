"""Test helpers: bronze-shaped input (RAW_LINES) from (level, logger, message), sample-file
records, and whole-frame comparison of parser output."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

from schemas.auth_events import AUTH_EVENTS
from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.raw_lines import RAW_LINES

RUN_ID = "run-test"
SOURCE_PATH = "file:/logs/test.log"
NODE_ID = "1"


class Record(NamedTuple):
    """One log record as the layout parser hands it over."""

    level: str | None
    logger: str | None
    message: str | None
    thread: str | None = None
    continuation: str | None = None
    log_ts: dt.datetime | None = None


def bronze_row(record: Record, line_number: int, family: str | None) -> tuple[object, ...]:
    """A RAW_LINES row for ``record`` with lineage defaults (run RUN_ID, file SOURCE_PATH)."""
    level, logger, message, thread, continuation, log_ts = record
    raw = f"{level} {message} ({logger})" + (f" [{thread}]" if thread else "")
    line_count = 1 + (continuation.count("\n") + 1 if continuation else 0)
    return (
        RUN_ID,
        SOURCE_PATH,
        line_number,
        line_count,
        NODE_ID,
        "config",
        "strimzi" if thread else "bare",
        None,
        log_ts,
        level,
        logger,
        None,
        thread,
        message,
        continuation,
        raw,
        family,
        log_ts.date() if log_ts else None,
    )


def bronze_df(
    spark: SparkSession,
    records: Sequence[Record],
    family: str | None,
    line_numbers: Sequence[int] | None = None,
) -> DataFrame:
    """Bronze DataFrame of ``records``, numbered 1.. in order unless ``line_numbers`` given."""
    numbers = line_numbers or range(1, len(records) + 1)
    rows = [bronze_row(r, n, family) for r, n in zip(records, numbers, strict=True)]
    return spark.createDataFrame(rows, RAW_LINES)


_EXTRA_TYPES = {"line_number": LongType(), "reason_code": StringType(), "claimed": BooleanType()}


def expected_df(
    spark: SparkSession, columns: Sequence[str], rows: Sequence[tuple[object, ...]]
) -> DataFrame:
    """Expected rows with an explicit schema: the silver column types, all nullable."""
    types = {f.name: f.dataType for f in [*AUTHZ_DECISIONS.fields, *AUTH_EVENTS.fields]}
    types |= _EXTRA_TYPES
    schema = StructType([StructField(c, types[c], True) for c in columns])
    return spark.createDataFrame(rows, schema)


def assert_parsed(
    spark: SparkSession,
    parsed: DataFrame,
    columns: Sequence[str],
    rows: Sequence[tuple[object, ...]],
) -> None:
    """Whole-frame comparison, in line order. Nullability is ignored on purpose: the parse
    output is an intermediate; the table contract is tested through parsed_rows."""
    actual = parsed.select(*columns).orderBy("line_number")
    assert_df_equality(actual, expected_df(spark, columns, rows), ignore_nullable=True)


_LOG4J_RE = re.compile(
    r"^(?:\[[^\]]+\] |\d{4}-\d{2}-\d{2} [\d:,]+ )?(?P<level>[A-Z]+) (?P<message>.*)"
    r" \((?P<logger>[^()\s:]+)(?::\d+)?\)(?: \[(?P<thread>.*)\])?$"
)


def sample_file_records(path: Path) -> list[tuple[int, Record]]:
    """(line number, record) for each non-comment line of a sample file; log4j suffix split."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _LOG4J_RE.match(line)
        assert match, f"{path.name}:{number} is not a log4j line"
        level, logger, message, thread = match.group("level", "logger", "message", "thread")
        records.append((number, Record(level, logger, message, thread)))
    return records
