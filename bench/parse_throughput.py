"""Parse throughput: bronze + every silver family, against a bare read of the same files.

    .venv/bin/python bench/make_corpus.py --lines 1000000 --out /tmp/corpus-1m
    .venv/bin/python bench/parse_throughput.py /tmp/corpus-1m

Both measurements run in one Spark session (local[2] by default), warm (a first pass is
discarded unless ``--no-warmup``; the bare read keeps the best of three). The parse forces
every silver table and the quarantine through Spark's ``noop`` writer, so no Delta write is
timed; ``--verbose`` prints each table's share (the first table pays for bronze). ``--repeat N``
keeps the fastest of N passes: the CPU may be shared. Prints lines/s and the ratio parse / bare
read. ``bench/profile_stages.py`` breaks the parse down by stage.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.config import RunConfig, SourceSpec
from jobs.fingerprint_keys import ephemeral_key
from jobs.inputs import discover_sources
from jobs.pipeline import build_frames
from jobs.session import build_session


def jvm_cpu_s(spark: SparkSession) -> float:
    """CPU seconds (user + system) the driver JVM has used so far; in local mode that includes
    every executor thread, not the Python workers (the fingerprint UDF). Linux ``/proc`` only.

    Wall time on a shared machine swings with the other load; CPU time much less.
    """
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bare_read(spark: SparkSession, folder: Path) -> tuple[float, int]:
    started = time.monotonic()
    lines = spark.read.text(str(folder)).count()
    return time.monotonic() - started, lines


def parse_all(spark: SparkSession, folder: Path, verbose: bool = False) -> tuple[float, float]:
    """Seconds of wall time and of JVM CPU time for one whole parse."""
    started, cpu_started = time.monotonic(), jvm_cpu_s(spark)
    sources = [SourceSpec(str(folder))]
    config = RunConfig(sources=tuple(sources), lake="(none)", run_id="bench")
    frames = build_frames(spark, discover_sources(sources), config, ephemeral_key())
    outputs = [*frames.silver.items(), ("quarantine", frames.quarantine)]
    for name, df in outputs:
        table_started = time.monotonic()
        df.write.format("noop").mode("overwrite").save()
        if verbose:
            print(f"  {name}: {time.monotonic() - table_started:.1f} s (cumulative order)")
    for df in frames.cached:
        df.unpersist()
    return time.monotonic() - started, jvm_cpu_s(spark) - cpu_started


def main() -> None:
    parser = argparse.ArgumentParser(description="parse throughput benchmark")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1, help="timed parse passes (best is kept)")
    parser.add_argument("--no-warmup", action="store_true", help="skip the discarded first pass")
    parser.add_argument("--verbose", action="store_true", help="time each table's write")
    args = parser.parse_args()
    spark = build_session("bench-parse", args.master, {"spark.sql.shuffle.partitions": "4"})
    bare_read(spark, args.corpus)  # warm up
    read_s, lines = min(bare_read(spark, args.corpus) for _ in range(3))
    if not args.no_warmup:
        parse_all(spark, args.corpus)
    runs = [parse_all(spark, args.corpus, args.verbose) for _ in range(args.repeat)]
    parse_s, cpu_s = min(runs)
    print(f"lines: {lines}")
    print(f"bare read + count: {read_s:.1f} s ({lines / read_s:,.0f} lines/s)")
    print(f"bronze + silver parse: {parse_s:.1f} s ({lines / parse_s:,.0f} lines/s)")
    print(f"  JVM CPU time of that pass: {cpu_s:.1f} s")
    print(f"  passes (wall, CPU): {', '.join(f'{w:.1f} s, {c:.1f} s' for w, c in runs)}")
    print(f"ratio parse / bare read: {parse_s / read_s:.1f}")


if __name__ == "__main__":
    main()
