"""transforms.frames: union_by_name (the rows of every frame, matched by name, for any count) and
local_frame (driver rows held in the plan, read without Python workers)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from transforms.frames import local_frame, union_by_name


@pytest.mark.parametrize("count", [1, 2, 3, 7, 8])
def test_every_row_of_every_frame_once_matched_by_name(spark: SparkSession, count: int) -> None:
    frames = [
        # Columns in another order every other frame: matched by name, not position.
        spark.createDataFrame([(i, f"f{i}"), (i, None)], "n int, label string")
        if i % 2
        else spark.createDataFrame([(f"f{i}", i), (None, i)], "label string, n int")
        for i in range(count)
    ]
    got = union_by_name(frames)
    assert got.columns == frames[0].columns  # the first frame's order, as unionByName
    want = sorted([(f"f{i}", i) for i in range(count)] + [(None, i) for i in range(count)],
                  key=repr)  # fmt: skip
    assert sorted([tuple(r) for r in got.collect()], key=repr) == want


def test_no_frame_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one frame"):
        union_by_name([])


LOCAL = StructType(
    [
        StructField("name", StringType(), False),
        StructField("count", LongType(), True),
        StructField("day", DateType(), True),
        StructField("ts", TimestampType(), True),
        StructField("flag", BooleanType(), True),
        StructField("tags", ArrayType(StringType(), True), True),
    ]
)


def test_local_frame_keeps_rows_and_schema_in_the_plan(spark: SparkSession) -> None:
    moment = datetime(2026, 11, 20, 10, 0, 0, 123456, tzinfo=UTC)
    rows = [("a", 1, date(2026, 11, 20), moment, True, ["x", None]),
            ("b", None, None, None, None, None)]  # fmt: skip
    got = local_frame(spark, rows, LOCAL)
    assert got.schema == LOCAL  # nullability included
    plan = got._jdf.queryExecution().executedPlan().toString()
    assert "LocalTableScan" in plan and "ExistingRDD" not in plan  # no Python worker reads it
    want = [("a", 1, date(2026, 11, 20), moment.replace(tzinfo=None), True, ["x", None]),
            ("b", None, None, None, None, None)]  # fmt: skip
    assert sorted(tuple(r) for r in got.collect()) == want  # session time zone: UTC


def test_local_frame_of_no_rows_has_the_schema(spark: SparkSession) -> None:
    empty = local_frame(spark, [], LOCAL)
    assert (empty.schema, empty.count()) == (LOCAL, 0)


def test_local_frame_refuses_a_wrong_value_or_arity(spark: SparkSession) -> None:
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        local_frame(spark, [("a", "not a number", None, None, None, None)], LOCAL)
    with pytest.raises(ValueError):
        local_frame(spark, [("a", 1)], LOCAL)
