"""Where the parse time goes: each bronze stage and each silver parser, timed on its own.

    .venv/bin/python bench/make_corpus.py --lines 250000 --out /tmp/corpus-250k
    .venv/bin/python bench/profile_stages.py /tmp/corpus-250k

The bronze chain is built as the pipeline builds it (``read_lines`` -> ``number_lines`` ->
``fold_records`` -> ``with_node_id`` + ``with_family`` -> ``to_raw_lines``), each stage
persisted and forced through Spark's ``noop`` writer before the next one starts, so each figure
is that stage's own cost given its input already materialised (the persist included). Then every
parser runs on the persisted bronze. A warm-up pass is discarded; ``--repeat`` passes are timed
and each figure is the fastest. Figures are CPU seconds of the JVM (all executor threads of
``local[2]``, Python workers excluded), which a shared machine disturbs far less than wall time;
``--wall`` prints wall seconds instead. One line per stage, with the warm-up (cold JVM) pass's
figure beside the timed ones: a one-pass run pays the cold figure.

Then the largest method Spark generated (bytecode bytes, Spark's ``CodegenMetrics``): HotSpot
compiles no method over 8,000 bytes (``-XX:+DontCompileHugeMethods``, its default), so a
larger one runs interpreted. ``--java-options=-XX:-DontCompileHugeMethods`` lets the JIT
compile it, to compare (docs/performance.md, issue 15's ninth part).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from jobs.config import SourceSpec
from jobs.fingerprint_keys import ephemeral_key
from jobs.ingest import read_lines, sources_frame
from jobs.inputs import discover_sources
from jobs.session import DEFAULT_CONF, build_session
from transforms.bronze.records import fold_records, number_lines, to_raw_lines, with_node_id
from transforms.silver.families import with_family
from transforms.silver.registry import parse_families


def _timed(df: DataFrame, persist: bool = True) -> tuple[DataFrame, float]:
    """Force ``df``; returns it and the JVM CPU seconds spent (``--wall``: wall seconds)."""
    clock = time.monotonic if WALL else lambda: jvm_cpu_s(df.sparkSession)
    started = clock()
    if persist:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
    df.write.format("noop").mode("overwrite").save()
    return df, clock() - started


WALL = False


def jvm_cpu_s(spark: SparkSession) -> float:
    """CPU seconds (user + system) the driver JVM has used so far; in local mode that includes
    every executor thread, not the Python workers (the fingerprint UDF). Linux ``/proc`` only.

    Wall time on a shared machine swings with the other load; CPU time much less.
    """
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: HotSpot's HugeMethodLimit: a method with more bytecode is never JIT-compiled by default.
HUGE_METHOD_BYTES = 8000


def largest_generated_methods(spark: SparkSession) -> tuple[int, int]:
    """The largest method Spark has generated in this JVM (bytecode bytes) and how many of the
    generated methods in Spark's sample (``CodegenMetrics``' histogram) exceed
    ``HUGE_METHOD_BYTES``."""
    metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics  # type: ignore[union-attr]
    snapshot = metrics.METRIC_GENERATED_METHOD_BYTECODE_SIZE().getSnapshot()
    huge = sum(1 for size in snapshot.getValues() if size > HUGE_METHOD_BYTES)
    return int(snapshot.getMax()), huge


def one_pass(spark: SparkSession, folder: Path) -> dict[str, float]:
    """Time every stage once; returns seconds per stage name, in pipeline order."""
    sources = discover_sources([SourceSpec(str(folder))])
    key = ephemeral_key()
    stages: list[tuple[str, Callable[[DataFrame], DataFrame]]] = [
        ("number_lines (+ header regex)", number_lines),
        ("fold_records", fold_records),
        (
            "node id + family",
            lambda df: df.transform(with_node_id, sources_frame(spark, sources)).transform(
                with_family
            ),
        ),
        ("fingerprint + redact (to_raw_lines)", lambda df: to_raw_lines(df, "bench", key)),
    ]
    seconds: dict[str, float] = {}
    frame, seconds["read"] = _timed(read_lines(spark, sources))
    cached = [frame]
    for name, stage in stages:
        frame, seconds[name] = _timed(stage(frame))
        cached.append(frame)
    for parser, output in parse_families(frame):
        _, spent = _timed(output, persist=False)
        name = f"parse {parser.family} -> {parser.table}"
        seconds[name] = seconds.get(name, 0.0) + spent
    for df in cached:
        df.unpersist()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description="staged parse profile")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--wall", action="store_true", help="wall seconds instead of JVM CPU")
    parser.add_argument(
        "--java-options",
        default="",
        help="JVM options added to the driver's (--java-options=-XX:-DontCompileHugeMethods)",
    )
    args = parser.parse_args()
    global WALL  # noqa: PLW0603  (a bench script's switch)
    WALL = args.wall
    conf = {"spark.sql.shuffle.partitions": "4"}
    if args.java_options:
        key = "spark.driver.extraJavaOptions"
        conf[key] = f"{DEFAULT_CONF[key]} {args.java_options}"
    spark = build_session("bench-profile", args.master, conf)
    cold = one_pass(spark, args.corpus)  # warm up
    runs = [one_pass(spark, args.corpus) for _ in range(args.repeat)]
    best = {name: min(run[name] for run in runs) for name in runs[0]}
    for name, spent in best.items():
        timed = ", ".join(f"{r[name]:.1f}" for r in runs)
        print(f"{spent:7.1f} s  {name}  (cold {cold[name]:.1f}; runs: {timed})")
    print(f"{sum(best.values()):7.1f} s  total of stages (cold {sum(cold.values()):.1f})")
    largest, huge = largest_generated_methods(spark)
    print(
        f"largest generated method: {largest:,} bytes of bytecode; {huge} sampled method(s) "
        f"over {HUGE_METHOD_BYTES:,}, which HotSpot leaves interpreted unless "
        "-XX:-DontCompileHugeMethods"
    )


if __name__ == "__main__":
    main()
