"""run_coverage: the UTC days the lake's bronze and silver cover, one row per day.

A run writes one row per day it replaced (the window's days, else the days of its records),
in the same date partitions it replaced, so a rerun rewrites the same rows. Gold reads it for
the end of the lake's evidence (``jobs.coverage.evidence_window``): the midnight after the last
covered day when a window covered it, else the latest event time. See docs/reruns.md.
"""

from __future__ import annotations

from pyspark.sql.types import BooleanType, DateType, StringType, StructField, StructType

TABLE_NAME = "run_coverage"
PARTITION_COLUMNS: tuple[str, ...] = ("covered_date",)

RUN_COVERAGE = StructType(
    [
        # A UTC day whose bronze and silver partitions a run replaced; partition column.
        StructField("covered_date", DateType(), False),
        # True: a run window covered the whole day; False: a run without a window found
        # records of that day (its evidence ends at the latest event, not at midnight).
        StructField("windowed", BooleanType(), False),
        # The run that last replaced the day.
        StructField("run_id", StringType(), False),
    ]
)
