"""Parse throughput: bronze + every silver family, against a bare read of the same files.

    .venv/bin/python bench/make_corpus.py --lines 1000000 --out /tmp/corpus-1m
    .venv/bin/python bench/parse_throughput.py /tmp/corpus-1m

Both measurements run in one Spark session (local[2] by default), warm (a first pass is
discarded). The parse forces every silver table and the quarantine through Spark's ``noop``
writer, so no Delta write is timed. Prints lines/s and the ratio parse / bare read.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.config import RunConfig, SourceSpec
from jobs.inputs import discover_sources
from jobs.pipeline import build_frames
from jobs.secrets import ephemeral_key
from jobs.session import build_session


def bare_read(spark: SparkSession, folder: Path) -> tuple[float, int]:
    started = time.monotonic()
    lines = spark.read.text(str(folder)).count()
    return time.monotonic() - started, lines


def parse_all(spark: SparkSession, folder: Path) -> float:
    started = time.monotonic()
    sources = [SourceSpec(str(folder))]
    config = RunConfig(sources=tuple(sources), lake="(none)", run_id="bench")
    frames = build_frames(spark, discover_sources(sources), config, ephemeral_key())
    for df in [*frames.silver.values(), frames.quarantine]:
        df.write.format("noop").mode("overwrite").save()
    for df in frames.cached:
        df.unpersist()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description="parse throughput benchmark")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    spark = build_session("bench-parse", args.master, {"spark.sql.shuffle.partitions": "4"})
    bare_read(spark, args.corpus)  # warm up
    read_s, lines = bare_read(spark, args.corpus)
    parse_all(spark, args.corpus)  # warm up
    parse_s = parse_all(spark, args.corpus)
    print(f"lines: {lines}")
    print(f"bare read + count: {read_s:.1f} s ({lines / read_s:,.0f} lines/s)")
    print(f"bronze + silver parse: {parse_s:.1f} s ({lines / parse_s:,.0f} lines/s)")
    print(f"ratio parse / bare read: {parse_s / read_s:.1f}")


if __name__ == "__main__":
    main()
