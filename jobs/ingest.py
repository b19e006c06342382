"""Read log files into physical lines, keeping each line's file and position."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from jobs.inputs import SourceFile, source_rows
from transforms.frames import local_frame

SOURCES_SCHEMA = StructType(
    [
        StructField("source_path", StringType(), False),
        StructField("node_key", StringType(), False),
        StructField("node_folder_name", StringType(), False),
        StructField("config_node_id", StringType(), True),
        StructField("time_zone", StringType(), False),
    ]
)


_HADOOP_GLOB = re.compile(r"([\[\]{}*?\\])")


def hadoop_literal(path: str) -> str:
    """Escape Hadoop glob characters so ``spark.read`` takes ``path`` literally."""
    return _HADOOP_GLOB.sub(r"\\\1", path)


def local_path(file_path: Column) -> Column:
    """Spark's ``_metadata.file_path`` URI (``file:/a%20b/x.log``) as a local path."""
    without_scheme = F.regexp_replace(file_path, r"^file:(//)?", "")
    # url_decode would turn a literal '+' into a space: protect it first.
    return F.url_decode(F.regexp_replace(without_scheme, r"\+", "%2B"))


def read_lines(spark: SparkSession, sources: Sequence[SourceFile]) -> DataFrame:
    """Physical lines of every source file (plain or ``.gz``), in file order.

    Damaged files are read as far as they can be. A line ends at ``\n`` only, as log4j
    writes it (``%n``), and a ``\r`` right before the ``\n`` is dropped (CRLF files).
    Spark's default also ends lines at a lone ``\r``: a ``\r`` inside a principal or client
    id would then start a forged record in the middle of a real one, and the accounting
    would count lines the file does not have.

    Returns:
        DataFrame: source_path (string, local path), block_start (long, byte offset of the
        split), row_order (long, increasing in read order within a split), value (string,
        valid UTF-8).
    """
    paths = [hadoop_literal(str(s.path)) for s in sources]
    # Log files are not always valid UTF-8 (binary junk, a cut multi-byte character):
    # invalid sequences become U+FFFD so every table holds valid strings.
    valid = F.make_valid_utf8("value")
    # A truncated or corrupt .gz gives the lines before the damage instead of failing the
    # run; a file removed since the listing gives none. ``jobs.inputs.damaged_files`` names
    # both in the run summary and the accounting.
    reader = spark.read.options(lineSep="\n", ignoreCorruptFiles="true", ignoreMissingFiles="true")
    return reader.text(paths).select(
        local_path(F.col("_metadata.file_path")).alias("source_path"),
        F.col("_metadata.file_block_start").alias("block_start"),
        F.monotonically_increasing_id().alias("row_order"),
        # The regex only where there is a \r to drop: over every line it cost half the read.
        F.when(valid.endswith("\r"), F.regexp_replace(valid, r"\r\z", ""))
        .otherwise(valid)
        .alias("value"),
    )


def sources_frame(spark: SparkSession, sources: Sequence[SourceFile]) -> DataFrame:
    """The small per-file metadata DataFrame (``SOURCES_SCHEMA``) that bronze broadcasts."""
    return local_frame(spark, source_rows(sources), SOURCES_SCHEMA)
