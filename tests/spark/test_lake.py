"""Delta I/O: engine choice, and the embedded engine's tables read back with deltalake and Spark."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf
from pyspark.sql.types import (
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)
from pyspark.testing import assertDataFrameEqual

from jobs.concurrency import DRIVER_THREADS, concurrently
from jobs.errors import EngineError
from jobs.lake.embedded import commit_files, write_files
from jobs.lake.embedded_files import WriteSpec
from jobs.lake.settings import runtime_settings
from jobs.lake.tables import Engine, Lake, WriteResult, choose_engine, delta_jvm_available

SCHEMA = StructType(
    [
        StructField("event_id", LongType(), False),
        StructField("principal", StringType(), True),
        StructField("event_ts", TimestampType(), True),
        StructField("score", DoubleType(), True),
        StructField("log_date", DateType(), True),
    ]
)
D1, D2, D3 = date(2026, 11, 20), date(2026, 11, 21), date(2026, 11, 22)
Row = tuple[int, str | None, datetime | None, float | None, date | None]


@pytest.fixture
def lake(spark: SparkSession, tmp_path: Path) -> Lake:
    return Lake(spark, str(tmp_path), Engine.EMBEDDED)


def _row(event_id: int, day: date | None, principal: str | None = "User:alice") -> Row:
    """One event; microseconds in the timestamp check that nothing truncates it."""
    ts = None if day is None else datetime(day.year, day.month, day.day, 10, 0, 0, 123456)
    return event_id, principal, ts, event_id * 1.5, day


def _df(spark: SparkSession, rows: list[Row]) -> DataFrame:
    return spark.createDataFrame(rows, SCHEMA)


def _write(
    lake: Lake, df: DataFrame, replace: list[date | None] | None, app: str, version: int = 1
) -> WriteResult:
    return lake.write(
        df,
        "events",
        schema=SCHEMA,
        partition_by=["log_date"],
        replace_partitions=replace,
        app_id=app,
        app_version=version,
    )


def _delta_rows(path: str) -> list[dict[str, Any]]:
    """The table's rows through deltalake's own reader, sorted; Arrow objects released at once."""
    table = DeltaTable(path).to_pyarrow_table()
    rows = sorted(table.to_pylist(), key=lambda row: row["event_id"])
    del table
    return rows


def _as_delta(rows: list[Row]) -> list[dict[str, Any]]:
    """What deltalake returns for these rows, sorted: timestamps as UTC-aware datetimes."""
    return [
        dict(zip(SCHEMA.fieldNames(), (i, p, ts and ts.replace(tzinfo=UTC), x, d), strict=True))
        for i, p, ts, x, d in sorted(rows)
    ]


def _log_actions(path: str, version: int) -> list[str]:
    """Kinds of the actions in one commit file of the Delta log, sorted."""
    lines = Path(path, "_delta_log", f"{version:020d}.json").read_text().splitlines()
    return sorted(next(iter(json.loads(line))) for line in lines)


def _parquet_files(path: str) -> set[Path]:
    return {p for p in Path(path).rglob("*.parquet") if "_delta_log" not in p.parts}


def test_choose_engine_without_delta_jars(spark: SparkSession) -> None:
    assert not delta_jvm_available(spark)
    assert choose_engine(spark) is Engine.EMBEDDED
    assert choose_engine(spark, "embedded") is Engine.EMBEDDED
    with pytest.raises(EngineError, match=r"--packages io\.delta:delta-spark_4\.2_2\.13:4\.4\.1"):
        choose_engine(spark, "native")
    with pytest.raises(EngineError, match="unknown Delta engine 'delta'"):
        choose_engine(spark, "delta")


def test_first_write_creates_a_delta_table(spark: SparkSession, lake: Lake) -> None:
    rows = [_row(1, D1), _row(2, D1, None), _row(3, D2), _row(4, None)]
    result = _write(lake, _df(spark, rows), None, "bronze")
    path = lake.table_path("events")
    assert result == WriteResult("events", path, Engine.EMBEDDED, 0, False, 4)
    table = DeltaTable(path)
    assert table.protocol().min_reader_version >= 1
    assert table.protocol().min_writer_version >= 2
    assert table.metadata().partition_columns == ["log_date"]
    fields = json.loads(table.schema().to_json())["fields"]
    assert [(f["name"], f["type"], f["nullable"]) for f in fields] == [
        ("event_id", "long", False),
        ("principal", "string", True),
        ("event_ts", "timestamp", True),
        ("score", "double", True),
        ("log_date", "date", True),
    ]
    assert table.transaction_version("bronze") == 1
    assert _delta_rows(path) == _as_delta(rows)
    folders = {p.parent.name for p in _parquet_files(path)}
    assert folders == {
        "log_date=2026-11-20",
        "log_date=2026-11-21",
        "log_date=__HIVE_DEFAULT_PARTITION__",
    }
    data_file = next(iter(_parquet_files(path)))
    assert "log_date" not in pq.read_schema(data_file).names  # partition values live in paths


def test_add_actions_carry_delta_statistics(spark: SparkSession, lake: Lake) -> None:
    rows = [_row(1, D1), _row(2, D1, None), (3, "User:carol", None, float("nan"), D1)]
    _write(lake, _df(spark, rows).coalesce(1), None, "bronze")
    (stats,) = pa.table(DeltaTable(lake.table_path("events")).get_add_actions(True)).to_pylist()
    assert stats["num_records"] == 3
    assert (stats["min.event_id"], stats["max.event_id"]) == (1, 3)
    assert (stats["null_count.principal"], stats["null_count.event_ts"]) == (1, 1)
    assert (stats["min.score"], stats["max.score"]) == (None, None)  # NaN: no usable bounds
    # Delta keeps milliseconds: min rounded down, max rounded up, so skipping stays correct.
    ts = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
    assert (stats["min.event_ts"], stats["max.event_ts"]) == (
        ts.replace(microsecond=123000),
        ts.replace(microsecond=124000),
    )


def test_writes_from_several_threads_all_carry_time_statistics(
    spark: SparkSession, lake: Lake
) -> None:
    """Tables written at once (``jobs.concurrency``) inside ``Lake.writes``: no write restores
    the session's Parquet settings under another, so every file stores its times as INT64
    microseconds, with statistics (INT96 has none). The session's own value is back after."""
    key = "spark.sql.parquet.outputTimestampType"
    names = [f"events_{i}" for i in range(6)]

    def write(name: str) -> WriteResult:
        df = _df(spark, [_row(1, D1), _row(2, D1)]).coalesce(1)
        return lake.write(df, name, schema=SCHEMA, partition_by=["log_date"],
                          replace_partitions=None, app_id=name)  # fmt: skip

    with runtime_settings(spark, {key: "INT96", DRIVER_THREADS: "3"}):
        with lake.writes():
            results = concurrently(spark, [partial(write, n) for n in names])
            # What keeps the threads apart: a write that ends leaves the setting as it is.
            assert spark.conf.get(key) == "TIMESTAMP_MICROS"
        assert spark.conf.get(key) == "INT96"
    assert [(r.table, r.version, r.rows_written) for r in results] == [(n, 0, 2) for n in names]
    low = datetime(2026, 11, 20, 10, 0, 0, 123000, tzinfo=UTC)
    for name in names:
        (stats,) = pa.table(DeltaTable(lake.table_path(name)).get_add_actions(True)).to_pylist()
        assert (stats["num_records"], stats["min.event_ts"]) == (2, low), name


def test_a_time_past_year_9999_is_written_without_its_bound(
    spark: SparkSession, lake: Lake
) -> None:
    """Spark's timestamps reach past year 9999 (a crafted JSON time can parse to one), Python's
    do not: the file gets no max for that column instead of the write failing."""
    far = sf.timestamp_micros(sf.lit(253_402_300_800_001_000))  # 10000-01-01T00:00:00.001Z
    df = _df(spark, [_row(1, D1), _row(2, D1)]).coalesce(1)
    df = df.withColumn(
        "event_ts", sf.when(sf.col("event_id") == 2, far).otherwise(sf.col("event_ts"))
    )
    _write(lake, df, None, "bronze")
    (stats,) = pa.table(DeltaTable(lake.table_path("events")).get_add_actions(True)).to_pylist()
    low = datetime(2026, 11, 20, 10, 0, 0, 123000, tzinfo=UTC)
    assert (stats["num_records"], stats["min.event_ts"], stats["max.event_ts"]) == (2, low, None)
    back = lake.read("events", SCHEMA).select("event_id", sf.unix_micros("event_ts"))
    assert sorted(back.collect()) == [(1, 1_795_168_800_123_456), (2, 253_402_300_800_001_000)]


def test_read_returns_the_snapshot_with_the_requested_schema(
    spark: SparkSession, lake: Lake
) -> None:
    rows = [_row(1, D1), _row(2, None, None), _row(3, D2)]
    _write(lake, _df(spark, rows), None, "bronze")
    wanted = StructType([SCHEMA["log_date"], SCHEMA["event_id"], SCHEMA["event_ts"]])
    got = lake.read("events", wanted)
    assert [(f.name, f.dataType) for f in got.schema] == [(f.name, f.dataType) for f in wanted]
    expected = spark.createDataFrame([(r[4], r[0], r[2]) for r in rows], wanted)
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_reading_a_missing_table_gives_an_empty_frame(lake: Lake) -> None:
    assert not lake.exists("nothing")
    got = lake.read("nothing", SCHEMA)
    assert got.schema == SCHEMA
    assert got.collect() == []


def test_replace_partitions_swaps_only_those_partitions_in_one_commit(
    spark: SparkSession, lake: Lake
) -> None:
    _write(lake, _df(spark, [_row(1, D1), _row(2, D2), _row(3, None)]), None, "day-1")
    new_rows = [_row(10, D1, "User:bob"), _row(11, D3)]
    result = _write(lake, _df(spark, new_rows), [D1, D3, None], "day-2")
    path = lake.table_path("events")
    assert (result.version, result.skipped, result.rows_written) == (1, False, 2)
    # D1 and the null partition replaced, D2 kept, D3 added.
    assert _delta_rows(path) == _as_delta([_row(2, D2), *new_rows])
    (commit, _) = DeltaTable(path).history()
    assert commit["operationParameters"]["predicate"] == (
        "log_date = '2026-11-20' OR log_date = '2026-11-22' OR log_date IS NULL"
    )
    assert _log_actions(path, 1) == ["add", "add", "commitInfo", "remove", "remove", "txn"]


def test_replace_all_overwrites_every_partition_in_one_commit(
    spark: SparkSession, lake: Lake
) -> None:
    _write(lake, _df(spark, [_row(1, D1), _row(2, D2), _row(3, None)]), None, "day-1")
    merged = [_row(2, D2, "User:bob"), _row(4, D3)]
    result = lake.write(
        _df(spark, merged),
        "events",
        schema=SCHEMA,
        partition_by=["log_date"],
        replace_partitions=None,
        app_id="merge",
        replace_all=True,
    )
    path = lake.table_path("events")
    assert (result.version, result.skipped, result.rows_written) == (1, False, 2)
    assert _delta_rows(path) == _as_delta(merged)
    assert _log_actions(path, 1) == [
        "add", "add", "commitInfo", "remove", "remove", "remove", "txn",
    ]  # fmt: skip


def test_replace_all_excludes_replace_partitions(spark: SparkSession, lake: Lake) -> None:
    with pytest.raises(EngineError, match="exclude each other"):
        lake.write(
            _df(spark, []),
            "events",
            schema=SCHEMA,
            partition_by=["log_date"],
            replace_partitions=[D1],
            app_id="x",
            replace_all=True,
        )


def test_rerunning_a_replace_leaves_identical_content(spark: SparkSession, lake: Lake) -> None:
    _write(lake, _df(spark, [_row(1, D1)]), None, "init")
    rows = [_row(2, D2), _row(3, D2, None), _row(4, D3)]
    first = _write(lake, _df(spark, rows), [D2, D3], "run-a")
    path = lake.table_path("events")
    content, files = _delta_rows(path), len(DeltaTable(path).file_uris())
    second = _write(lake, _df(spark, rows), [D2, D3], "run-b")
    assert (first.version, second.version) == (1, 2)
    assert _delta_rows(path) == content == _as_delta([_row(1, D1), *rows])
    assert len(DeltaTable(path).file_uris()) == files  # the old files are removed
    assert [h["version"] for h in DeltaTable(path).history()] == [2, 1, 0]


def test_same_app_transaction_is_skipped(spark: SparkSession, lake: Lake) -> None:
    df = _df(spark, [_row(1, D1)])
    path = lake.table_path("events")
    _write(lake, df, None, "r", version=3)
    again, older = _write(lake, df, None, "r", version=3), _write(lake, df, None, "r", version=2)
    assert again == WriteResult("events", path, Engine.EMBEDDED, 0, True, 0)
    assert older == again
    assert _delta_rows(path) == _as_delta([_row(1, D1)])
    newer = _write(lake, df, None, "r", version=4)
    assert (newer.version, newer.skipped, newer.rows_written) == (1, False, 1)
    assert DeltaTable(path).transaction_version("r") == 4


def test_retried_commit_of_a_recorded_transaction_is_a_no_op(
    spark: SparkSession, lake: Lake
) -> None:
    """The commit re-checks the transaction: a retried job whose commit already landed."""
    _write(lake, _df(spark, [_row(1, D1)]), None, "r")
    path = lake.table_path("events")
    spec = WriteSpec(path, ("log_date",), None, "r", 1, "retry")
    adds = write_files(spark, _df(spark, [_row(2, D2)]), spec, SCHEMA)
    assert len(_parquet_files(path)) == 2
    commit_files(spec, SCHEMA, adds)
    assert DeltaTable(path).version() == 0
    assert len(_parquet_files(path)) == 1  # the retry's file is deleted
    assert _delta_rows(path) == _as_delta([_row(1, D1)])


def test_empty_writes_keep_the_table_valid(spark: SparkSession, lake: Lake) -> None:
    empty = _df(spark, [])
    assert _write(lake, empty, None, "a").rows_written == 0
    path = lake.table_path("events")
    assert DeltaTable(path).metadata().partition_columns == ["log_date"]
    assert _delta_rows(path) == []
    _write(lake, _df(spark, [_row(1, D1)]), None, "b")
    result = _write(lake, empty, None, "c")
    assert (result.version, result.skipped, result.rows_written) == (2, False, 0)
    assert _delta_rows(path) == _as_delta([_row(1, D1)])
    assert lake.read("events", SCHEMA).count() == 1


def test_a_failed_task_commits_nothing(spark: SparkSession, lake: Lake) -> None:
    _write(lake, _df(spark, [_row(1, D1)]), None, "init")
    path = lake.table_path("events")
    files = DeltaTable(path).file_uris()
    rows = _df(spark, [_row(i, D2) for i in range(2, 40)]).repartition(2)
    failing = rows.withColumn(
        "principal",
        sf.when(sf.col("event_id") == 30, sf.raise_error(sf.lit("boom"))).otherwise("x"),
    )
    with pytest.raises(EngineError, match=r"events failed: \[USER_RAISED_EXCEPTION\] boom"):
        _write(lake, failing, [D2], "bad")
    assert DeltaTable(path).version() == 0
    assert _delta_rows(path) == _as_delta([_row(1, D1)])
    assert DeltaTable(path).file_uris() == files  # killed tasks may leave orphans for VACUUM


def test_rows_outside_the_replaced_partitions_are_refused(spark: SparkSession, lake: Lake) -> None:
    _write(lake, _df(spark, [_row(1, D1)]), None, "init")
    with pytest.raises(EngineError, match=r"row with log_date=2026-11-21 is outside"):
        _write(lake, _df(spark, [_row(2, D1), _row(3, D2)]), [D1], "wrong")
    assert _delta_rows(lake.table_path("events")) == _as_delta([_row(1, D1)])


def test_unpartitioned_table(spark: SparkSession, lake: Lake) -> None:
    rows = [_row(1, D1), _row(2, None)]
    lake.write(
        _df(spark, rows),
        "flat",
        schema=SCHEMA,
        partition_by=[],
        replace_partitions=None,
        app_id="x",
    )
    path = lake.table_path("flat")
    assert DeltaTable(path).metadata().partition_columns == []
    assert _delta_rows(path) == _as_delta(rows)
    assert {p.parent for p in _parquet_files(path)} == {Path(path)}


@pytest.mark.parametrize(
    ("partition_by", "replace", "message"),
    [
        (["log_date", "principal"], None, "at most one column"),
        ([], [D1], "needs a partition column"),
        (["principal"], None, "must be a DateType column"),
        (["missing"], None, "must be a DateType column"),
    ],
)
def test_unsupported_partitioning_is_refused(
    spark: SparkSession,
    lake: Lake,
    partition_by: list[str],
    replace: list[date | None] | None,
    message: str,
) -> None:
    with pytest.raises(EngineError, match=message):
        lake.write(
            _df(spark, []),
            "t",
            schema=SCHEMA,
            partition_by=partition_by,
            replace_partitions=replace,
            app_id="x",
        )
    assert not lake.exists("t")


def test_a_different_schema_is_refused(spark: SparkSession, lake: Lake) -> None:
    _write(lake, _df(spark, [_row(1, D1)]), None, "init")
    changed = StructType(
        [StructField(f.name, StringType(), True) if f.name == "score" else f for f in SCHEMA]
    )
    with pytest.raises(EngineError, match="differs from the table's"):
        lake.write(
            _df(spark, [_row(2, D1)]),
            "events",
            schema=changed,
            partition_by=["log_date"],
            replace_partitions=None,
            app_id="other",
        )
    assert DeltaTable(lake.table_path("events")).version() == 0


def test_declared_nullability_wins_over_the_plans(spark: SparkSession, lake: Lake) -> None:
    """A plan that makes event_id nullable (a union, a cast) still writes a NOT NULL column,
    and a second write whose plan infers otherwise is accepted: the table has one schema."""
    loose = _df(spark, [_row(1, D1)]).withColumn("event_id", sf.col("event_id").cast("string"))
    _write(lake, loose, None, "first")
    fields = json.loads(DeltaTable(lake.table_path("events")).schema().to_json())["fields"]
    assert (fields[0]["name"], fields[0]["nullable"]) == ("event_id", False)
    strict = spark.createDataFrame([_row(2, D2)], SCHEMA)
    assert not _write(lake, strict, [D2], "second").skipped
    with_null = loose.withColumn("event_id", sf.lit(None).cast("string"))
    with pytest.raises(EngineError, match="event_id is NOT NULL"):
        _write(lake, with_null, None, "third")
    assert _delta_rows(lake.table_path("events")) == _as_delta([_row(1, D1), _row(2, D2)])


def test_native_engine_round_trip(spark: SparkSession, tmp_path: Path) -> None:
    if not delta_jvm_available(spark):
        pytest.skip("delta-spark's JVM classes are not loaded in this session (no Delta jars)")
    lake = Lake(spark, str(tmp_path), Engine.NATIVE)
    _write(lake, _df(spark, [_row(1, D1), _row(2, D2), _row(3, None)]), None, "n1")
    result = _write(lake, _df(spark, [_row(4, D1)]), [D1, None], "n2")
    assert (result.version, result.skipped, result.rows_written) == (1, False, 1)
    assert _write(lake, _df(spark, [_row(4, D1)]), [D1, None], "n2").skipped
    expected = _df(spark, [_row(2, D2), _row(4, D1)])
    assertDataFrameEqual(lake.read("events", SCHEMA), expected, checkRowOrder=False)
    assert _delta_rows(lake.table_path("events")) == _as_delta([_row(2, D2), _row(4, D1)])
