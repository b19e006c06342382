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

from pyspark.sql import Column, DataFrame
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


def _count_if(condition: Column) -> Column:
    """Rows for which ``condition`` holds (null counts as false), as a long."""
    return F.count_if(F.coalesce(condition, F.lit(False)))


def _with_columns(counts: DataFrame, names: Sequence[str]) -> DataFrame:
    """source_path and the long columns ``names``, null where ``counts`` has no such column."""
    present = set(counts.columns)
    return counts.select(
        "source_path",
        *[(F.col(n) if n in present else F.lit(None)).cast("long").alias(n) for n in names],
    )


def _distinct_records(frames: Sequence[DataFrame]) -> DataFrame:
    return union_by_name(
        [frame.select("source_path", "line_number") for frame in frames]
    ).distinct()


#: Count columns of ``file_line_counts``' output, in order: what a file's lines and the
#: records folded from them are, before any record is parsed.
LINE_COUNTS: tuple[str, ...] = (
    "physical_lines",
    "comment_lines",
    "blank_lines",
    "folded_lines",
    "records",
)


def file_line_counts(numbered: DataFrame, records: DataFrame) -> DataFrame:
    """Per file, its physical lines by kind and the records folded from them: the half of
    ``line_accounting`` that reads every line. A run computes it as soon as the lines are
    numbered, while they are still in memory (issue 15: with the rest of the accounting at the
    end of a 10M-line run, 35 s; now 5 s here and 9 s at the end).

    Args:
        numbered: physical lines with ``line_kind`` (``bronze.number_lines`` or
            ``narrow_lines``).
        records: every folded record, in or out of the window, with ``line_count``
            (``fold_records``).

    Output columns:
        source_path (string), one long per ``LINE_COUNTS`` name; one row per file with a
        line, 0 where a file has none of a kind.
    """
    # One aggregate per input, each read once, then one row per file.
    per_source = [
        numbered.groupBy("source_path").agg(
            F.count(F.lit(1)).alias("physical_lines"),
            _count_if(F.col("line_kind") == "comment").alias("comment_lines"),
            _count_if(F.col("line_kind") == "blank").alias("blank_lines"),
        ),
        records.groupBy("source_path").agg(
            F.sum(F.col("line_count").cast("long")).alias("folded_lines"),
            F.count(F.lit(1)).alias("records"),
        ),
    ]
    return _per_file(per_source, LINE_COUNTS)


def _per_file(per_source: Sequence[DataFrame], names: Sequence[str]) -> DataFrame:
    """One row per source_path of the counts ``names`` that ``per_source``'s frames hold
    between them, summed; 0 where none has a count."""
    union = union_by_name([_with_columns(df, names) for df in per_source])
    return union.groupBy("source_path").agg(
        *[F.coalesce(F.sum(n), F.lit(0)).cast("long").alias(n) for n in names]
    )


def line_accounting(
    line_counts: DataFrame,
    *,
    bronze: DataFrame,
    parsed: Sequence[DataFrame],
    quarantine: DataFrame,
    parsed_families: Sequence[str],
) -> DataFrame:
    """Per-file counts of what became of every line, and whether they balance.

    Args:
        line_counts: ``file_line_counts`` of the run's lines and folded records (every
            record, in or out of the run window).
        bronze: the records inside the run window (``family`` null = out of scope; ``layout``).
        parsed: the silver tables' rows of this run (each has ``source_path`` and
            ``line_number``); a record counts once however many rows it produced.
        quarantine: this run's quarantine rows.
        parsed_families: families that have a silver parser; bronze rows of other families
            are counted as ``pending``.

    Output columns:
        source_path (string), one long per ``BUCKETS`` name, balanced (boolean).
    """
    family = F.col("family")
    # One aggregate per input, each read once (a union of filtered copies read bronze four
    # times), then one row per file.
    per_source = [
        line_counts,
        bronze.groupBy("source_path").agg(
            F.count(F.lit(1)).alias("bronze_records"),
            _count_if(family.isNull()).alias("out_of_scope"),
            _count_if(family.isNotNull() & ~family.isin(*parsed_families)).alias("pending"),
            _count_if(F.col("layout") == LAYOUT_UNRECOGNIZED).alias("unrecognized"),
        ),
        quarantine.groupBy("source_path").agg(F.count(F.lit(1)).alias("quarantined")),
        _distinct_records(parsed).groupBy("source_path").agg(F.count(F.lit(1)).alias("parsed")),
    ]
    counts = _per_file(per_source, [b for b in BUCKETS if b != "outside_window"])
    c = {b: F.col(b) for b in BUCKETS}
    outside = c["records"] - c["bronze_records"]
    balanced = (
        c["bronze_records"] == c["parsed"] + c["quarantined"] + c["out_of_scope"] + c["pending"]
    ) & (c["physical_lines"] == c["comment_lines"] + c["blank_lines"] + c["folded_lines"])
    return counts.withColumn("outside_window", outside).select(
        "source_path", *BUCKETS, balanced.alias("balanced")
    )
