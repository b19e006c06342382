"""Test helpers: what a frame's analysed plan scans (``jobs.reuse.reused`` checkpoints)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame


def checkpoint_reads(df: DataFrame) -> list[tuple[int, Any]]:
    """Every leaf of ``df``'s analysed plan that scans a checkpointed RDD (``LogicalRDD``), as
    (RDD id, the JVM's RDD), once per leaf: a frame read by two branches appears twice."""
    leaves = df._jdf.queryExecution().analyzed().collectLeaves()
    found = []
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        if leaf.getClass().getSimpleName() == "LogicalRDD" and leaf.rdd().isCheckpointed():
            found.append((leaf.rdd().id(), leaf.rdd()))
    return found
