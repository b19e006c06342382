"""Runtime SQL settings for the span of a block: the embedded writer's Parquet settings
(``jobs.lake.embedded``) and the small-input settings (``jobs.small_input``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from pyspark.sql import SparkSession


@contextmanager
def runtime_settings(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Within the block, the session's runtime SQL ``settings``; its own values (or their
    absence) are put back afterwards, also when the block raises.

    Args:
        spark: the session (a notebook's or the suite's keeps its own settings after).
        settings: runtime configuration keys and values (``spark.sql.*``, and this
            project's ``jobs.reuse.SMALL_INPUT_PARTITIONS``).
    """
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)
