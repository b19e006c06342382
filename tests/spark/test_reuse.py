"""jobs.reuse: frames computed once, their consumers' plans cut to a scan, and released."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.reuse import release, reused


def _leaf(df: DataFrame) -> Any:
    """The JVM's analysed logical plan of ``df``."""
    return df._jdf.queryExecution().analyzed()


def test_reused_keeps_the_rows_cuts_the_plan_and_is_released(spark: SparkSession) -> None:
    source = (
        spark.range(6)
        .withColumn("k", F.col("id") % 2)
        .groupBy("k")
        .agg(F.sum("id").alias("total"), F.count(F.lit(None)).alias("nulls"))
    )
    df = reused(source)
    plan = _leaf(df)
    assert plan.getClass().getSimpleName() == "LogicalRDD"
    assert plan.rdd().isCheckpointed()  # computed at the call (eager: see jobs.reuse)
    assert df.schema == source.schema
    consumer = df.where("k = 1").select("total")
    assert "Aggregate" not in consumer._jdf.queryExecution().analyzed().toString()
    assert sorted(tuple(r) for r in df.collect()) == [(0, 6, 0), (1, 9, 0)]
    assert consumer.collect()[0]["total"] == 9
    rdd = plan.rdd()
    assert rdd.getStorageLevel().useDisk()
    persisted = spark.range(3).persist()
    persisted.count()
    release([df, persisted, spark.range(2)])  # a frame that holds nothing is left alone
    assert not rdd.getStorageLevel().isValid()
    assert not persisted.storageLevel.useMemory
