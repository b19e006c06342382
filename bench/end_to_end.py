"""End-to-end benchmark on generated cluster corpora (issue 7): the whole pipeline against a bare
read + parse of the same files, at 1M and 10M lines.

    .venv/bin/python bench/end_to_end.py --sizes 1000000 10000000 --work /tmp/bench-e2e

For each size: ``kafka-audit generate`` writes a corpus (kept under ``--work`` and reused when
its parameters match; each log rotated every ``--rotate-lines`` lines, 100,000 by default:
Kafka's own log4j configuration rolls the request log every hour, so a busy broker's day is
many files of this size, not one), then, in ONE Spark session (the job's own settings,
``local[2]``, and the JVM options ``jobs.jvm_startup`` gives a run of the largest corpus):

* **bare read + parse**: ``spark.read.text`` of every file, one regex for the log4j prefix,
  ``from_json`` of the request-log JSON, written as Parquet: the least any pipeline must do;
* **pipeline**: ``jobs.pipeline.run`` into a fresh lake: bronze, silver, quarantine, every gold
  table, accounting and the run summary, with the Delta engine ``auto`` picks.

A sampler thread records peak resident memory every 0.25 s: the driver's Python process, the
JVM (driver and, in local mode, executors) and the Python workers Spark starts (UDFs, the
embedded Delta writer). The hand-written single-process Python comparison
(``bench/handwritten_metrics.py``) runs on the ``--handwritten-size`` corpus; its metric values
are checked against the lake's ``security_metrics``. Each lake is compared with its corpus's
ground truth (``bench/truth_check.py``: security_metrics, findings, token lifecycles).
Results: a markdown table on stdout and JSON in ``--work/results.json``.

``--pairs N`` runs the bare read + parse and the pipeline in turn N times per size (each pipeline
into a fresh lake) and reports each side's median and the median of the pairs' ratios, with
their range: on a shared machine one run of either side moved by 1.4x within minutes (issue 15,
fortieth part), so a ratio of single runs says more about the hour than about the code. The
first pair runs in a JVM only the warm-up parse has warmed, as a single run does; later pairs
in one the earlier pipelines warmed too (their pipeline is faster), and every pair is in the
JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

from jobs.config import RunConfig, SourceSpec
from jobs.pipeline import run
from jobs.session import build_session

ROOT = Path(__file__).resolve().parent.parent
PREFIX = r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] (\w+) (.*) \(([\w.$]+)\)$"
REQUEST_JSON = StructType(
    [
        StructField("requestHeader", StructType([StructField("requestApiKeyName", StringType())])),
        StructField("principal", StringType()),
        StructField("listener", StringType()),
        StructField("totalTimeMs", DoubleType()),
    ]
)
MIB = 1024 * 1024


@dataclass
class Peaks:
    """Peak resident set sizes (bytes) seen by the sampler."""

    driver_python: int = 0
    jvm: int = 0
    python_workers: int = 0


class MemorySampler:
    """Polls RSS of this process, the JVM and the JVM's Python workers in a daemon thread."""

    def __init__(self, jvm_pid: int, interval_s: float = 0.25) -> None:
        self.me = psutil.Process()
        self.jvm = psutil.Process(jvm_pid)
        self.interval_s = interval_s
        self.peaks = Peaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                workers = sum(
                    p.memory_info().rss
                    for p in self.jvm.children(recursive=True)
                    if "python" in p.name().lower()
                )
                self.peaks.driver_python = max(self.peaks.driver_python, self.me.memory_info().rss)
                self.peaks.jvm = max(self.peaks.jvm, self.jvm.memory_info().rss)
                self.peaks.python_workers = max(self.peaks.python_workers, workers)
            except psutil.Error:
                pass  # a worker ended between listing and reading
            time.sleep(self.interval_s)

    @contextmanager
    def measuring(self) -> Iterator[Peaks]:
        """Reset the peaks, sample during the block, and yield the peaks object."""
        self.peaks = Peaks()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        try:
            yield self.peaks
        finally:
            self._stop.set()
            self._thread.join()


@dataclass
class SizeResult:
    """Figures for one corpus."""

    lines_target: int
    lines: int
    bytes: int
    files: int
    generate_s: float
    bare_s: float
    bare_jvm_cpu_s: float
    pipeline_s: float
    pipeline_jvm_cpu_s: float
    engine: str
    balanced: bool
    peaks_mib: dict[str, float]
    tables: dict[str, int] = field(default_factory=dict)
    truth: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Every pair of runs, in turn: bare_s, bare_jvm_cpu_s, pipeline_s, pipeline_jvm_cpu_s.
    pairs: list[dict[str, float]] = field(default_factory=list)

    def ratios(self, cpu: bool = False) -> list[float]:
        """pipeline / bare of each pair, wall time or JVM CPU (one pair: the figures' own)."""
        a, b = ("pipeline_jvm_cpu_s", "bare_jvm_cpu_s") if cpu else ("pipeline_s", "bare_s")
        pairs = self.pairs or [asdict(self)]
        return [pair[a] / pair[b] for pair in pairs]

    def equals_truth(self) -> bool:
        """Tables were compared, and none has a row only in the truth or only in the lake."""
        return bool(self.truth) and all(
            t["only_truth"] == t["only_lake"] == 0 for t in self.truth.values()
        )


def jvm_pid(spark: SparkSession) -> int:
    return int(spark._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]


def jvm_cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def generate(corpus: Path, lines_target: int, seed: int, extra: list[str]) -> float:
    """Run ``kafka-audit generate`` unless ``corpus`` holds a corpus made with these options."""
    stamp = corpus / ".bench-options.json"
    options = {"lines_target": lines_target, "seed": seed, "extra": extra}
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == options:
        print(f"  reusing {corpus}", flush=True)
        return float(json.loads((corpus / ".bench-generate-s").read_text(encoding="utf-8")))
    shutil.rmtree(corpus, ignore_errors=True)
    started = time.monotonic()
    command = [sys.executable, "-m", "jobs.cli.main", "generate", "--out", str(corpus)]
    command += ["--lines-target", str(lines_target), "--seed", str(seed), *extra]
    subprocess.run(command, check=True, cwd=ROOT)
    took = time.monotonic() - started
    stamp.write_text(json.dumps(options), encoding="utf-8")
    (corpus / ".bench-generate-s").write_text(json.dumps(took), encoding="utf-8")
    return took


def log_files(corpus: Path) -> list[Path]:
    """The generated log files (not the properties files nor the truth)."""
    return sorted(
        p
        for p in corpus.rglob("*")
        if p.is_file() and ".log" in p.name and "truth" not in p.relative_to(corpus).parts
    )


def count_lines(files: list[Path]) -> int:
    total = 0
    for path in files:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
            while block := handle.read(1 << 20):
                total += block.count(b"\n")
    return total


def bare_read_parse(spark: SparkSession, files: list[Path], out: Path) -> tuple[float, float]:
    """Wall and JVM CPU seconds to read every line, split the log4j prefix, parse the request
    JSON and write Parquet."""
    pid = jvm_pid(spark)
    started, cpu = time.monotonic(), jvm_cpu_s(pid)
    lines = spark.read.text([str(p) for p in files])
    parts = [F.regexp_extract("value", PREFIX, i) for i in range(1, 5)]
    message = parts[2]
    parsed = lines.select(
        F.try_to_timestamp(parts[0], F.lit("yyyy-MM-dd HH:mm:ss,SSS")).alias("ts"),
        parts[1].alias("level"),
        parts[3].alias("logger"),
        message.alias("message"),
        F.from_json(F.regexp_extract(message, r"^Completed request:(\{.*\})", 1), REQUEST_JSON)
        .alias("request"),
    )  # fmt: skip
    parsed.write.mode("overwrite").parquet(str(out))
    return time.monotonic() - started, jvm_cpu_s(pid) - cpu


def run_pipeline(spark: SparkSession, corpus: Path, lake: Path) -> tuple[float, float, Any]:
    shutil.rmtree(lake, ignore_errors=True)
    pid = jvm_pid(spark)
    config = RunConfig(
        sources=(SourceSpec(str(corpus)),), lake=str(lake), engine="auto", run_id="bench"
    )
    started, cpu = time.monotonic(), jvm_cpu_s(pid)
    summary = run(spark, config)
    return time.monotonic() - started, jvm_cpu_s(pid) - cpu, summary


def handwritten(corpus: Path, lake: Path) -> dict[str, Any]:
    """Run the single-process Python comparison and check its values against the lake."""
    command = [sys.executable, str(ROOT / "bench" / "handwritten_metrics.py"), str(corpus)]
    command += ["--compare-lake", str(lake)]
    started = time.monotonic()
    done = subprocess.run(command, check=True, cwd=ROOT, capture_output=True, text=True)
    took = time.monotonic() - started
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = took
    return result


def truth_check(corpus: Path, lake: Path) -> dict[str, dict[str, int]]:
    """The lake against the corpus's ground truth (``bench/truth_check.py``, its own process)."""
    command = [sys.executable, str(ROOT / "bench" / "truth_check.py"), str(corpus), str(lake)]
    done = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True)
    report: dict[str, dict[str, int]] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def machine() -> dict[str, Any]:
    java = subprocess.run(
        [str(Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "java"), "-version"],
        capture_output=True,
        text=True,
        check=False,
    ).stderr.splitlines()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 1024**3, 1),
        "python": platform.python_version(),
        "java": java[0] if java else "?",
        "load_average_at_start": os.getloadavg(),
    }


def _ratio(ratios: list[float]) -> str:
    """One ratio as ``x.x``; several as their median and range, ``x.x [x.x-x.x]``."""
    middle = f"{statistics.median(ratios):.1f}"
    return middle if len(ratios) == 1 else f"{middle} [{min(ratios):.1f}-{max(ratios):.1f}]"


def table(results: list[SizeResult], hand: dict[str, Any] | None) -> str:
    rows = [
        "| lines | files | MB | generate s | bare read+parse s (JVM CPU) | pipeline s (JVM CPU) | "
        "lines/s | pipeline / bare, wall (JVM CPU) | driver Python MiB | JVM MiB | "
        "Python workers MiB | engine | equals truth |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r.lines:,} | {r.files} | {r.bytes / 1e6:,.0f} | {r.generate_s:.0f} | "
            f"{r.bare_s:.1f} ({r.bare_jvm_cpu_s:.0f}) | "
            f"{r.pipeline_s:.0f} ({r.pipeline_jvm_cpu_s:.0f}) | {r.lines / r.pipeline_s:,.0f} | "
            f"{_ratio(r.ratios())} ({_ratio(r.ratios(cpu=True))}) | "
            f"{r.peaks_mib['driver_python']:.0f} | "
            f"{r.peaks_mib['jvm']:.0f} | {r.peaks_mib['python_workers']:.0f} | {r.engine} | "
            f"{'yes' if r.equals_truth() else 'NO'} |"
        )
    if len(results) >= 2:
        small, big = results[0], results[-1]
        rows.append("")
        rows.append(
            f"{big.lines_target:,} / {small.lines_target:,} lines: pipeline time x"
            f"{big.pipeline_s / small.pipeline_s:.1f} for x{big.lines / small.lines:.1f} lines"
        )
    if hand is not None:
        rows.append("")
        rows.append(
            f"Hand-written single-process Python on {hand['lines']:,} lines: "
            f"{hand['wall_s']:.1f} s ({hand['lines'] / hand['wall_s']:,.0f} lines/s), peak RSS "
            f"{hand['peak_rss_mib']:.0f} MiB; its {hand['values']} metric values "
            f"{'equal' if hand['mismatches'] == 0 else 'differ from'} the pipeline's "
            f"({hand['mismatches']} mismatches)."
        )
    return "\n".join(rows)


def run_pairs(
    spark: SparkSession,
    sampler: MemorySampler,
    *,
    corpus: Path,
    size: int,
    args: argparse.Namespace,
) -> tuple[list[dict[str, float]], dict[str, float], Any]:
    """``args.pairs`` times in turn: the bare read + parse, then the pipeline into a fresh lake
    (``--work/lake-<size>``, the last one kept). Returns each pair's figures, the peak memory
    over the pipelines (MiB by process kind) and the last run's summary."""
    pairs: list[dict[str, float]] = []
    peaks_mib: dict[str, float] = {}
    summary: Any = None
    for index in range(args.pairs):
        turn = f" ({index + 1}/{args.pairs})" if args.pairs > 1 else ""
        print(f"{size:,}: bare read + parse{turn}", flush=True)
        bare_s, bare_cpu_s = bare_read_parse(spark, log_files(corpus), args.work / f"bare-{size}")
        print(f"{size:,}: pipeline{turn}", flush=True)
        with sampler.measuring() as peaks:
            pipeline_s, cpu_s, summary = run_pipeline(spark, corpus, args.work / f"lake-{size}")
        for kind, value in asdict(peaks).items():
            peaks_mib[kind] = max(peaks_mib.get(kind, 0.0), value / MIB)
        pairs.append(
            {
                "bare_s": bare_s,
                "bare_jvm_cpu_s": bare_cpu_s,
                "pipeline_s": pipeline_s,
                "pipeline_jvm_cpu_s": cpu_s,
            }
        )
    return pairs, peaks_mib, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-e2e"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--handwritten-size", type=int, default=1_000_000)
    parser.add_argument(
        "--rotate-lines",
        type=int,
        default=100_000,
        help="rotate each generated log after N lines, as Kafka's hourly request-log appender "
        "does (0: one file per stream)",
    )
    parser.add_argument("--generate-arg", action="append", default=[], help="passed through")
    parser.add_argument(
        "--pairs",
        type=int,
        default=1,
        help="run the bare read + parse and the pipeline in turn N times per size and report "
        "medians and the median of the pairs' ratios (default 1)",
    )
    args = parser.parse_args()
    # The pipeline's stage lines (start, end, duration) show what dominates.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    args.work.mkdir(parents=True, exist_ok=True)
    info = machine()
    print(f"machine: {info}", flush=True)

    corpora: dict[int, tuple[Path, float]] = {}
    for size in args.sizes:
        corpus = args.work / f"corpus-{size}"
        print(f"generating {size:,} lines into {corpus}", flush=True)
        extra = ["--rotate-lines", str(args.rotate_lines), *args.generate_arg]
        corpora[size] = corpus, generate(corpus, size, args.seed, extra)

    # The JVM gets what a ``kafka-audit run`` of the largest corpus would get
    # (``jobs.jvm_startup``: the JIT's options depend on the input's size).
    largest = max(sum(p.stat().st_size for p in log_files(c)) for c, _ in corpora.values())
    spark = build_session("bench-end-to-end", args.master, input_bytes=largest)
    sampler = MemorySampler(jvm_pid(spark))
    smallest = log_files(corpora[min(args.sizes)][0])
    bare_read_parse(spark, smallest, args.work / "bare-warmup")  # warm the JVM
    results: list[SizeResult] = []
    hand: dict[str, Any] | None = None
    for size in args.sizes:
        corpus, generate_s = corpora[size]
        files = log_files(corpus)
        pairs, peaks, summary = run_pairs(spark, sampler, corpus=corpus, size=size, args=args)
        result = SizeResult(
            lines_target=size,
            lines=count_lines(files),
            bytes=sum(p.stat().st_size for p in files),
            files=len(files),
            generate_s=generate_s,
            **{key: statistics.median(pair[key] for pair in pairs) for key in pairs[0]},
            engine=summary.engine,
            balanced=summary.balanced,
            peaks_mib=peaks,
            tables={t.table: t.rows_written or 0 for t in summary.tables},
            truth=truth_check(corpus, args.work / f"lake-{size}"),
            pairs=pairs if len(pairs) > 1 else [],
        )
        results.append(result)
        print(json.dumps(asdict(result)), flush=True)
        if size == args.handwritten_size:
            print(f"{size:,}: hand-written single-process Python", flush=True)
            hand = handwritten(corpus, args.work / f"lake-{size}")
    spark.stop()
    report = table(results, hand)
    print(report)
    out = {"machine": info, "results": [asdict(r) for r in results], "handwritten": hand}
    (args.work / "results.json").write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
