"""Account for every input line: parsed, quarantined, out of scope, or outside the window.

Invariant (docs/architecture.md, accounting), per source file:
``bronze_records = parsed + quarantined + out_of_scope + pending`` and
``physical_lines = comment_lines + blank_lines + folded lines of every record``.
``unrecognized`` counts the bronze records in no known layout (they are quarantined as
``unrecognized_layout`` when a family's signature claims them, else out of scope): a file made
mostly of them has a layout to declare (docs/layouts.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from schemas.raw_lines import LAYOUT_UNRECOGNIZED
from transforms.frames import union_by_name

#: Count columns of ``line_accounting``'s output, in order.
BUCKETS: tuple[str, ...] = (
    "physical_lines",
    "comment_lines",
    "blank_lines",
    "folded_lines",
    "records",
    "outside_window",
    "bronze_records",
    "parsed",
    "quarantined",
    "out_of_scope",
    "pending",
    "unrecognized",
)


def _tagged(df: DataFrame, bucket: str, weight: str | None = None) -> DataFrame:
    amount = F.col(weight).cast("long") if weight else F.lit(1).cast("long")
    return df.select("source_path", F.lit(bucket).alias("bucket"), amount.alias("amount"))


def _distinct_records(frames: Sequence[DataFrame]) -> DataFrame:
    return union_by_name(
        [frame.select("source_path", "line_number") for frame in frames]
    ).distinct()


def line_accounting(
    numbered: DataFrame,
    *,
    records: DataFrame,
    bronze: DataFrame,
    parsed: Sequence[DataFrame],
    quarantine: DataFrame,
    parsed_families: Sequence[str],
) -> DataFrame:
    """Per-file counts of what became of every line, and whether they balance.

    Args:
        numbered: physical lines with ``line_kind`` (``bronze.number_lines``).
        records: every folded record, in or out of the window, with ``line_count``.
        bronze: the records inside the run window (``family`` null = out of scope; ``layout``).
        parsed: the silver tables' rows of this run (each has ``source_path`` and
            ``line_number``); a record counts once however many rows it produced.
        quarantine: this run's quarantine rows.
        parsed_families: families that have a silver parser; bronze rows of other families
            are counted as ``pending``.

    Output columns:
        source_path (string), one long per ``BUCKETS`` name, balanced (boolean).
    """
    frames = [
        _tagged(numbered, "physical_lines"),
        _tagged(numbered.where(F.col("line_kind") == "comment"), "comment_lines"),
        _tagged(numbered.where(F.col("line_kind") == "blank"), "blank_lines"),
        _tagged(records, "folded_lines", "line_count"),
        _tagged(records, "records"),
        _tagged(bronze, "bronze_records"),
        _tagged(bronze.where(F.col("family").isNull()), "out_of_scope"),
        _tagged(
            bronze.where(F.col("family").isNotNull() & ~F.col("family").isin(*parsed_families)),
            "pending",
        ),
        _tagged(bronze.where(F.col("layout") == LAYOUT_UNRECOGNIZED), "unrecognized"),
        _tagged(quarantine, "quarantined"),
        _tagged(_distinct_records(parsed), "parsed"),
    ]
    union = union_by_name(frames)
    counts = (
        union.groupBy("source_path")
        .pivot("bucket", [b for b in BUCKETS if b != "outside_window"])
        .agg(F.sum("amount"))
        .na.fill(0)
    )
    c = {b: F.col(b) for b in BUCKETS}
    outside = c["records"] - c["bronze_records"]
    balanced = (
        c["bronze_records"] == c["parsed"] + c["quarantined"] + c["out_of_scope"] + c["pending"]
    ) & (c["physical_lines"] == c["comment_lines"] + c["blank_lines"] + c["folded_lines"])
    return counts.withColumn("outside_window", outside).select(
        "source_path", *BUCKETS, balanced.alias("balanced")
    )
