"""Frames a run reads several times: computed once, and their plans cut short (issue 15).

A frame that several tables, findings or the accounting read used to be ``persist``-ed. That
computes it once, but its consumers still carry its whole logical plan: classic PySpark makes
the JVM analyse the complete plan at every DataFrame call (``DeduplicateRelations`` alone walks
every expression of it), so each ``select``, join and union below a big parser or replay paid
for the plan above it again. On a small input that analysis is most of a run's time.

``reused`` checkpoints the frame locally instead (``DataFrame.localCheckpoint``): its rows are
computed once, by one Spark job at the call, and kept in the block manager (memory, spilling to
disk, as ``persist(MEMORY_AND_DISK)`` kept them); the frame it returns is a scan of those rows,
so the plans built on it are small. Like every local checkpoint, the rows live on the executors
that computed them: losing one of those executors fails the run (a rerun gives the same
tables), where a persisted frame would have been recomputed.

The checkpoint is eager on purpose. A lazy one (``eager=False``) computes the rows at the first
action, after the query that planned them has ended and its SQL metrics' accumulators are gone:
the driver then logs "attempted to access non-existent accumulator" with a stack trace for
every metric of every task (hundreds of KB for the 138 lines of ``samples/``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame

SMALL_INPUT_PARTITIONS = "kafkaAudit.smallInput.partitions"
"""Session setting (``spark.conf``) that ``jobs.small_input`` sets for the span of a small
input's command: at most this many partitions, hence tasks, for each reused frame and each
table the pipeline writes (``small_input_partitions``). Unset otherwise."""


def small_input_partitions(df: DataFrame) -> DataFrame:
    """``df`` coalesced to at most ``SMALL_INPUT_PARTITIONS`` partitions while that setting is
    set (a small input, ``jobs.small_input``), else ``df`` itself.

    On a few thousand lines each task costs more than its rows: deserialising its stage's
    plan (interpreted, no code generation) and being scheduled. A union of every parser's or
    every builder's frames has the sum of their partitions (88 tasks for one findings write
    of ``samples/``); a coalesce merges them without a shuffle. Rows and columns are
    unchanged; only their split into tasks (and a write's files) is.

    Input: any frame; output: the same columns and rows, in at most that many partitions.
    """
    budget = df.sparkSession.conf.get(SMALL_INPUT_PARTITIONS, None)
    return df if budget is None else df.coalesce(int(budget))


def reused(df: DataFrame) -> DataFrame:
    """``df``'s rows, computed once and read from the block manager by every consumer.

    Args:
        df: any frame.

    Returns:
        A frame with ``df``'s columns and rows whose logical plan is one scan of checkpointed
        rows (``LogicalRDD``), already computed. Release it with ``release`` when the run is
        done. On a small input its partitions are coalesced first
        (``small_input_partitions``): the checkpoint's job runs fewer tasks, and so does
        every stage that reads it.

    Raises:
        Whatever computing ``df`` raises (``pyspark.errors`` exceptions), at this call.
    """
    return small_input_partitions(df).localCheckpoint(eager=True)


def release(frames: Iterable[DataFrame]) -> None:
    """Free what ``reused`` (and ``persist``) kept for ``frames``: the cached rows of persisted
    frames, the blocks of locally checkpointed ones. Frames that hold nothing are left alone.

    A checkpointed frame's ``unpersist`` does nothing (it is not in Spark's cache manager): its
    blocks belong to the checkpointed RDD under its plan, which is unpersisted here. Without
    this, a long-lived session (a notebook, the test suite) keeps them until the JVM's garbage
    collector lets Spark's context cleaner drop them.
    """
    for df in frames:
        df.unpersist()
        plan = df._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() == "LogicalRDD":
            plan.rdd().unpersist(False)
