"""Independent parts of a run planned and run from several driver threads at once (issue 15).

Once bronze is written, a run is made of parts that do not depend on each other: each parser's
output, each gold builder, each table write (its own Delta commit). One after the other they
left the machine half idle: each part is mostly driver work on one thread (PySpark calls,
Spark's analysis and optimisation of its plans, the scheduling of small jobs, a Delta commit),
and its Spark jobs, on a small input, are one or two tasks. Spark plans each thread's queries
on that thread and runs the jobs of every thread side by side (one scheduler, FIFO), so the
parts here run on ``driver_threads`` threads. The tables are the same: each part computes the
same rows whatever runs beside it, and the results are taken in the parts' order.

Each thread inherits the calling thread's Spark local properties (the stage's job group that
``jobs.progress`` counts), through ``pyspark.util.inheritable_thread_target``. Session
settings (``spark.conf``) are shared by every thread: a part must not change them; the
settings a part needs are set around the whole group (``jobs.lake.tables.Lake.writes``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar, cast

from pyspark.sql import SparkSession
from pyspark.util import inheritable_thread_target

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")

DRIVER_THREADS = "spark.kafkaAudit.driverThreads"
"""Session setting (``spark.conf``; ``[spark.conf]`` of the config file, or spark-submit's
``--conf``, which passes only ``spark.*`` keys): how many parts of one group run at once.
Unset: the driver machine's cores, at most ``MAX_DRIVER_THREADS``; 1 runs them one after the
other, in the calling thread. A part may run a group of its own (gold's builders beside the
accounting): the threads of the two groups then add up."""

MAX_DRIVER_THREADS = 4
"""The default's ceiling: planning is CPU work on the driver, and a cluster's driver seldom
has more cores to give it than this."""


def driver_threads(spark: SparkSession) -> int:
    """The number of parts ``concurrently`` runs at once: ``DRIVER_THREADS`` when set (at
    least 1), else the driver's CPU count capped at ``MAX_DRIVER_THREADS``.

    Raises:
        ValueError: ``DRIVER_THREADS`` is set to something other than an integer.
    """
    setting = spark.conf.get(DRIVER_THREADS, None)
    if setting is not None:
        return max(1, int(setting))
    return max(1, min(MAX_DRIVER_THREADS, os.cpu_count() or 1))


def concurrently(spark: SparkSession, parts: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``parts`` on up to ``driver_threads`` threads; their results in the parts' order.

    Args:
        spark: the session the parts use (its local properties are passed to each thread).
        parts: functions of no argument, independent of each other.

    Returns:
        ``[part() for part in parts]``, computed concurrently.

    Raises:
        Whatever a part raises: the first failing part's error in the parts' order, once the
        parts already running have ended; the parts not yet started when one fails do not run.
    """
    workers = min(len(parts), driver_threads(spark))
    if workers <= 1:
        return [part() for part in parts]
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kafka-audit")
    futures: list[Future[T]] = []
    try:
        futures = [pool.submit(inheritable_thread_target(spark)(part)) for part in parts]
        wait(futures, return_when=FIRST_EXCEPTION)
    finally:
        # A failure (or Ctrl-C here) leaves the parts not yet started unrun.
        pool.shutdown(wait=True, cancel_futures=True)
    for future in futures:
        error = None if future.cancelled() else future.exception()
        if error is not None:
            raise error
    return [future.result() for future in futures]


def beside(spark: SparkSession, first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Two independent parts of different result types, computed at once on two driver
    threads when ``driver_threads`` allows it (``concurrently``), else one after the other.

    Args:
        spark: the session the parts use.
        first / second: functions of no argument, independent of each other.

    Returns:
        ``(first(), second())``.

    Raises:
        Whatever ``first`` or ``second`` raises (``first``'s error when both fail).
    """
    results = concurrently(spark, [first, second])
    return cast(A, results[0]), cast(B, results[1])
