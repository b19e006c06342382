"""The accounting's two halves on hand-made frames: each file's lines and folded records
(``file_line_counts``, computed as soon as the lines are numbered) and what became of each
record (``line_accounting``, from the rows the run wrote)."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.raw_lines import LAYOUT_UNRECOGNIZED
from transforms.bronze.accounting import BUCKETS, LINE_COUNTS, file_line_counts, line_accounting


def test_file_line_counts_by_kind_with_null_kinds_and_files_without_records(
    spark: SparkSession,
) -> None:
    numbered = spark.createDataFrame(
        [
            ("a.log", "header"),
            ("a.log", "continuation"),
            ("a.log", "header"),
            ("a.log", "blank"),
            ("a.log", "blank"),
            ("a.log", "comment"),
            ("a.log", "unrecognized"),
            ("a.log", None),  # a kind nobody set: a physical line all the same
            ("b.log", "comment"),
            ("b.log", "comment"),
            ("b.log", "blank"),
        ],
        "source_path string, line_kind string",
    )
    records = spark.createDataFrame(
        [("a.log", 2), ("a.log", 1), ("a.log", 1), ("a.log", None)],
        "source_path string, line_count int",
    )
    expected = spark.createDataFrame(
        [("a.log", 8, 1, 2, 4, 4), ("b.log", 3, 2, 1, 0, 0)],
        "source_path string, " + ", ".join(f"{name} long" for name in LINE_COUNTS),
    )
    assertDataFrameEqual(file_line_counts(numbered, records), expected)


def test_line_accounting_counts_each_record_once_and_flags_files_that_do_not_balance(
    spark: SparkSession,
) -> None:
    counts = "source_path string, " + ", ".join(f"{name} long" for name in LINE_COUNTS)
    line_counts = spark.createDataFrame(
        [
            # physical = comment + blank + folded on both files.
            ("a.log", 8, 1, 1, 6, 6),
            ("b.log", 2, 0, 0, 2, 2),
        ],
        counts,
    )
    bronze = spark.createDataFrame(
        [
            ("a.log", 1, "requests", "log4j"),  # parsed into two tables
            ("a.log", 2, "requests", "log4j"),  # parsed
            ("a.log", 3, "requests", "log4j"),  # quarantined
            ("a.log", 4, None, "log4j"),  # out of scope
            ("a.log", 5, "connect_worker", LAYOUT_UNRECOGNIZED),  # a family without a parser
            # a.log's sixth record is outside the run's window: not in bronze.
            ("b.log", 1, "requests", "log4j"),  # parsed
            ("b.log", 2, "requests", "log4j"),  # neither parsed nor quarantined: vanished
        ],
        "source_path string, line_number long, family string, layout string",
    )
    keys = "source_path string, line_number long"
    parsed = [
        spark.createDataFrame([("a.log", 1), ("a.log", 2), ("b.log", 1)], keys),
        spark.createDataFrame([("a.log", 1)], keys),  # the same record's second row
    ]
    quarantine = spark.createDataFrame([("a.log", 3)], keys)
    got = line_accounting(
        line_counts,
        bronze=bronze,
        parsed=parsed,
        quarantine=quarantine,
        parsed_families=["requests"],
    )
    expected = spark.createDataFrame(
        [
            ("a.log", 8, 1, 1, 6, 6, 1, 5, 2, 1, 1, 1, 1, True),
            ("b.log", 2, 0, 0, 2, 2, 0, 2, 1, 0, 0, 0, 0, False),
        ],
        "source_path string, "
        + ", ".join(f"{name} long" for name in BUCKETS)
        + ", balanced boolean",
    )
    assertDataFrameEqual(got, expected)
