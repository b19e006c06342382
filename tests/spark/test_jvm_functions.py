"""``jobs.jvm_functions``: column functions resolved once give the same columns as PySpark's
own per-call resolution, with no reflection round trip once resolved; casts to Spark type
objects the same columns as PySpark's, the type parsed once; on another PySpark release nothing
is replaced."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator
from typing import Any

import pyspark
import pyspark.sql.classic.column as classic_column
import pytest
from chispa import assert_df_equality
from py4j.clientserver import ClientServerConnection
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.functions import builtin
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    IntegerType,
    LongType,
    StructField,
    StructType,
    TimestampType,
)

from jobs import jvm_functions


@pytest.fixture
def pyspark_own(spark: SparkSession) -> Iterator[None]:
    """PySpark's own functions for the test; the suite's replacements put back after."""
    jvm_functions.uninstall()
    try:
        yield
    finally:
        assert jvm_functions.install()


def _planned(spark: SparkSession) -> DataFrame:
    """Columns by name and by literal (a date, None), lists of columns, a window."""
    rows = [("a", 1, None), ("b", 2, "x"), (None, 3, "y")]
    df = spark.createDataFrame(rows, "k string, n int, s string")
    window = Window.partitionBy("k").orderBy(F.col("n").desc())
    return df.select(
        "k",
        F.when(F.col("n") > F.lit(1), F.concat_ws("-", "k", "s")).otherwise(F.lit(None)).alias("w"),
        F.struct("k", F.col("n"), F.lit(datetime.date(2026, 11, 27)).alias("d")).alias("st"),
        F.coalesce(F.col("s"), F.lit("none")).alias("c"),
        F.row_number().over(window).alias("r"),
        F.array(*[F.lit(i) for i in range(3)]).alias("a"),
    )


def _commands(build: Any) -> list[str]:
    """The py4j commands ``build`` sends: those of this thread while it runs (py4j's own
    thread sends the deletes of Python's dead references whenever the collector finds
    them)."""
    sent: list[str] = []
    original = ClientServerConnection.send_command
    caller = threading.get_ident()

    def counted(self: ClientServerConnection, command: str) -> Any:
        if threading.get_ident() == caller:
            sent.append(command)
        return original(self, command)

    ClientServerConnection.send_command = counted
    try:
        build()
    finally:
        ClientServerConnection.send_command = original
    return sent


def _reflection_calls(build: Any) -> int:
    """py4j reflection commands (``r``: class and member lookups) sent while ``build`` runs."""
    return sum(1 for command in _commands(build) if command.startswith("r\n"))


def test_same_columns_and_rows_as_pysparks_own(spark: SparkSession, pyspark_own: None) -> None:
    own = _planned(spark)
    own_lookups = _reflection_calls(lambda: [F.col(f"c{i}") for i in range(20)])
    assert jvm_functions.install()
    resolved = _planned(spark)
    assert_df_equality(resolved, own, ignore_row_order=True)
    assert resolved.schema == own.schema
    assert own_lookups >= 20
    assert _reflection_calls(lambda: [F.col(f"c{i}") for i in range(20)]) == 0


def test_dataframe_methods_convert_columns_without_reflection(
    spark: SparkSession, pyspark_own: None
) -> None:
    df = spark.createDataFrame([("a", 1)], "k string, n int")
    own = df.select("k", F.col("n") + 1).groupBy("k").count()
    own_lookups = _reflection_calls(lambda: df.select("k", "n").withColumns({"m": F.col("n")}))
    assert jvm_functions.install()
    resolved = df.select("k", F.col("n") + 1).groupBy("k").count()
    assert_df_equality(resolved, own)
    assert own_lookups >= 2
    assert _reflection_calls(lambda: df.select("k", "n").withColumns({"m": F.col("n")})) == 0


def test_lists_of_columns_travel_in_runs_of_ten_same_seq_as_pysparks_own(
    spark: SparkSession, pyspark_own: None
) -> None:
    sc = spark.sparkContext
    own_to_seq = classic_column._to_seq
    jcols = [F.col(f"c{i}")._jc for i in range(23)]
    lists: list[list[Any]] = [jcols[:n] for n in (0, 1, 10, 11, 20, 23)]
    lists += [["k", None, "s"], [None], list(range(12))]
    own = [own_to_seq(sc, items).toString() for items in lists]
    assert sc._jvm is not None and sc._gateway is not None
    array = sc._gateway.new_array(sc._jvm.java.lang.Object, 2)  # one element: the array
    own_sizes = [own_to_seq(sc, [array]).size(), own_to_seq(sc, ["k", array]).size()]
    own_calls = len(_commands(lambda: own_to_seq(sc, jcols[:10])))
    df = spark.createDataFrame([tuple(range(23))], ", ".join(f"c{i} int" for i in range(23)))
    own_df = df.select(*(F.col(f"c{i}") + 1 for i in range(23)), F.array(*df.columns[:12]))
    assert jvm_functions.install()
    assert [jvm_functions._to_seq(sc, items).toString() for items in lists] == own
    sizes = [
        jvm_functions._to_seq(sc, [array]).size(),
        jvm_functions._to_seq(sc, ["k", array]).size(),
    ]
    assert sizes == own_sizes == [1, 2]
    assert own[3] == "List(" + ", ".join(f"c{i}" for i in range(11)) + ")"
    assert own[6] == "List(k, null, s)"
    resolved_df = df.select(*(F.col(f"c{i}") + 1 for i in range(23)), F.array(*df.columns[:12]))
    assert_df_equality(resolved_df, own_df)
    # PySpark's own: a constructor, an add per element, toSeq; here List.of and toSeq per run
    # of ten, and one join per further run.
    assert own_calls >= 12
    assert len(_commands(lambda: jvm_functions._to_seq(sc, jcols[:10]))) == 2
    assert len(_commands(lambda: jvm_functions._to_seq(sc, jcols[:11]))) == 5
    assert len(_commands(lambda: jvm_functions._to_seq(sc, jcols))) == 8


def test_another_pyspark_release_is_left_alone(
    spark: SparkSession, pyspark_own: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = builtin._get_jvm_function
    monkeypatch.setattr(pyspark, "__version__", "4.1.1")
    assert jvm_functions.install() is False
    assert builtin._get_jvm_function is own


def _casts(spark: SparkSession) -> DataFrame:
    """Casts to Spark type objects (nested, decimal, timestamp) and to type names, nulls in."""
    rows = [("1", "2026-11-27 10:00:00", "1.50"), (None, None, None), ("-3", "2026-11-28", "2")]
    df = spark.createDataFrame(rows, "n string, t string, d string")
    nested = StructType([StructField("n", LongType()), StructField("t", TimestampType())])
    return df.select(
        F.col("n").cast(LongType()).alias("long"),
        F.col("n").cast(dataType=IntegerType()).alias("int"),
        F.col("t").cast(TimestampType()).alias("ts"),
        F.col("d").cast(DecimalType(10, 2)).alias("dec"),
        F.struct("n", "t").cast(nested).alias("nested"),
        F.col("n").cast("bigint").alias("by_name"),
        F.array("n").cast(ArrayType(LongType())).alias("array"),
    )


def test_casts_to_type_objects_same_as_pysparks_own_parsed_once(
    spark: SparkSession, pyspark_own: None
) -> None:
    own = _casts(spark)
    own_calls = len(_commands(lambda: F.col("n").cast(LongType())))
    assert jvm_functions.install()
    resolved = _casts(spark)
    assert_df_equality(resolved, own, ignore_row_order=True)
    assert resolved.schema == own.schema
    # PySpark's own: the session, its check, the JSON parse, the cast, the column; once the
    # type is known, the column and the cast alone.
    assert own_calls >= 4
    assert len(_commands(lambda: F.col("n").cast(LongType()))) == 2
    assert len(_commands(lambda: F.col("n").cast(DecimalType(10, 2)))) == 2


def test_a_cast_after_a_new_jvm_parses_the_type_again(spark: SparkSession) -> None:
    resolved = jvm_functions._Resolved()
    sc = spark.sparkContext
    first = resolved.data_type(sc, LongType())
    assert resolved.data_type(sc, LongType()) is first
    resolved._client = object()  # as if this process had started another JVM since
    assert resolved.data_type(sc, LongType()) is not first
    assert resolved.data_type(sc, LongType()).json() == first.json()
