"""jobs.concurrency: independent parts on several driver threads, results and errors in order,
the stage's job group carried to each thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

import pytest
from pyspark.sql import SparkSession

from jobs.concurrency import DRIVER_THREADS, beside, concurrently, driver_threads
from jobs.lake.settings import runtime_settings


@contextmanager
def threads(spark: SparkSession, count: int) -> Iterator[None]:
    with runtime_settings(spark, {DRIVER_THREADS: str(count)}):
        yield


def test_results_in_order_with_the_job_group_on_several_threads(spark: SparkSession) -> None:
    context = spark.sparkContext
    context.setJobGroup("test-concurrency", "parts")
    seen: dict[int, tuple[str | None, str, int]] = {}

    def part(index: int) -> int:
        time.sleep(0.3 - 0.1 * index)  # the later parts end first
        count = spark.range(index + 1).count()  # a Spark job from this thread
        group = context.getLocalProperty("spark.jobGroup.id")
        seen[index] = (group, threading.current_thread().name, count)
        return index * 10

    try:
        with threads(spark, 3):
            assert driver_threads(spark) == 3
            results = concurrently(spark, [partial(part, i) for i in range(3)])
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert results == [0, 10, 20]
    assert {index: (group, count) for index, (group, _, count) in seen.items()} == {
        0: ("test-concurrency", 1),
        1: ("test-concurrency", 2),
        2: ("test-concurrency", 3),
    }
    names = {name for _, name, _ in seen.values()}
    assert len(names) == 3
    assert threading.current_thread().name not in names


def test_the_first_failure_in_order_is_raised_and_queued_parts_do_not_run(
    spark: SparkSession,
) -> None:
    ran: list[int] = []

    def fails(message: str, after_s: float) -> None:
        time.sleep(after_s)
        raise ValueError(message)

    def records(index: int) -> int:
        time.sleep(0.5)
        ran.append(index)
        return index

    parts: list[Callable[[], int | None]] = [
        partial(fails, "first in order, fails last", 1.0),
        partial(fails, "second in order, fails first", 0.0),
        *[partial(records, i) for i in range(2, 8)],
    ]
    with threads(spark, 2), pytest.raises(ValueError, match="first in order, fails last"):
        concurrently(spark, parts)
    # The second thread took one more part at most before the failure was seen; the rest
    # were cancelled.
    assert len(ran) <= 1


def test_one_thread_runs_the_parts_in_turn_in_the_calling_thread(spark: SparkSession) -> None:
    ran: list[str] = []

    def part(index: int) -> int:
        ran.append(threading.current_thread().name)
        if index == 1:
            raise RuntimeError("stop")
        return index

    with threads(spark, 1):
        assert concurrently(spark, [partial(part, 0), partial(part, 2)]) == [0, 2]
        with pytest.raises(RuntimeError, match="stop"):
            concurrently(spark, [partial(part, i) for i in range(3)])
    assert ran == [threading.current_thread().name] * 4  # the part after the failure: not run
    assert concurrently(spark, []) == []


def test_beside_gives_both_results_computed_at_once(spark: SparkSession) -> None:
    both = threading.Barrier(2, timeout=10)

    def first() -> str:
        both.wait()  # returns only once the second part runs too
        return "first"

    def second() -> int:
        both.wait()
        return spark.range(3).count()

    with threads(spark, 2):
        assert beside(spark, first, second) == ("first", 3)
    with threads(spark, 1), pytest.raises(threading.BrokenBarrierError):
        both.reset()
        # in turn: the first waits alone (together, both would pass the barrier)
        beside(spark, partial(both.wait, 0.2), partial(both.wait, 0.2))


def test_beside_raises_the_first_parts_error(spark: SparkSession) -> None:
    def fails(message: str) -> None:
        raise ValueError(message)

    with threads(spark, 2), pytest.raises(ValueError, match="first"):
        beside(spark, partial(fails, "first"), partial(fails, "second"))
