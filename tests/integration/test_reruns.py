"""Same input, same answer (issue 14): reruns, day-by-day runs, backfills, late files and crashed
runs leave every table of the lake exactly as one clean run over the whole window does (rows
equal as multisets, ``run_id`` aside).

The corpus is a generated two-day cluster (``kafka-audit generate``) whose sessions, tokens and
Connect session keys cross midnight. Every lake here shares one fingerprint key, so that
fingerprints compare across lakes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jobs.config import RunConfig, SourceSpec, parse_instant
from jobs.fingerprint_keys import lake_key_path
from jobs.pipeline import run
from jobs.simulator.generate import generate
from jobs.simulator.world import GenerateOptions
from tests.support.lake_contents import differences, table_names

START, MIDNIGHT, END = "2026-11-20", "2026-11-21", "2026-11-22"
DAY_1 = (START, MIDNIGHT)
DAY_2 = (MIDNIGHT, END)
WHOLE = (START, END)
KEY = "k" * 64


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Noon of day 1 to noon of day 2: everything open at midnight crosses it."""
    out = tmp_path_factory.mktemp("two-days") / "corpus"
    options = GenerateOptions(out=out, brokers=2, controllers=1, connect_workers=1, hours=24.0,
                              lines_target=3000, seed=3, start="2026-11-20T12:00:00Z")  # fmt: skip
    generate(options, progress=None)
    return out


def log_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.log*") if "truth" not in p.parts)


def new_lake(root: Path, name: str) -> Path:
    """An empty lake folder holding the shared fingerprint key."""
    lake = root / name
    key = lake_key_path(str(lake))
    key.parent.mkdir(parents=True)
    key.write_text(KEY, encoding="utf-8")
    return lake


def audit(spark: SparkSession, inputs: list[Path], lake: Path, window: tuple[str, str]) -> None:
    config = RunConfig(
        sources=tuple(SourceSpec(str(p)) for p in inputs),
        lake=str(lake),
        engine="embedded",
        start=parse_instant(window[0], "start"),
        end=parse_instant(window[1], "end"),
    )
    summary = run(spark, config, progress=False)
    assert summary.balanced, summary.render()


@pytest.fixture(scope="module")
def reference(spark: SparkSession, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clean run over the whole window."""
    lake = new_lake(tmp_path_factory.mktemp("reference"), "lake")
    audit(spark, [corpus], lake, WHOLE)
    return lake


def test_the_corpus_crosses_midnight(reference: Path) -> None:
    """The test means something: sessions and tokens live on both sides of midnight."""
    from deltalake import DeltaTable  # noqa: PLC0415

    sessions = DeltaTable(str(reference / "reauth_sessions")).to_pyarrow_table().to_pylist()
    crossing = [
        s
        for s in sessions
        if s["start_ts"].date().isoformat() == START
        and s["outcome_ts"] is not None
        and s["outcome_ts"].date().isoformat() == MIDNIGHT
    ]
    assert crossing, "no session starts on day 1 and ends on day 2"
    tokens = DeltaTable(str(reference / "token_lifecycle")).to_pyarrow_table().to_pylist()
    spanning = [
        t
        for t in tokens
        if t["first_seen_ts"].date().isoformat() == START
        and t["last_seen_ts"].date().isoformat() == MIDNIGHT
    ]
    assert spanning, "no token is seen on both days"


def test_chunks_late_files_backfill_and_reruns_equal_one_run(
    spark: SparkSession, corpus: Path, reference: Path, tmp_path: Path
) -> None:
    """On one lake, in turn: the whole window on part of its files, then day 1 and day 2 on
    all of them (late files, chunks), day 2 again (rerun), day 1 again after day 2 (backfill,
    and day 1's rerun): after each step, every table equals the reference."""
    lake = new_lake(tmp_path, "lake")
    files = log_files(corpus)
    late = {corpus / "broker-2" / "kafka-request.log", corpus / "broker-1" / "server.log"}
    assert late <= set(files)
    audit(spark, [f for f in files if f not in late], lake, WHOLE)
    steps = [
        ("day 1, then day 2, all files", [DAY_1, DAY_2]),
        ("day 2 again", [DAY_2]),
        ("day 1 again after day 2 (backfill)", [DAY_1]),
    ]
    for label, windows in steps:
        for window in windows:
            audit(spark, [corpus], lake, window)
        assert differences(lake, reference) == [], label
    assert table_names(lake) == table_names(reference)


def _kill_during(command: list[str], line: str, env: dict[str, str]) -> None:
    """Start ``command`` in its own process group, wait for ``line`` in its log, then kill the
    Python process and its JVM (the whole group) with SIGKILL."""
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        start_new_session=True, env=env,
    )  # fmt: skip
    assert process.stderr is not None
    seen = []
    try:
        for text in process.stderr:
            seen.append(text)
            if line in text:
                time.sleep(0.2)  # inside the write's Spark job
                break
        else:
            pytest.fail(f"{line!r} never logged:\n{''.join(seen[-20:])}")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    # The JVM this process started logs through jobs/spark-log4j2.properties: no start-up noise.
    noise = ("Using Spark's default log4j profile", "NativeCodeLoader", "setLogLevel(newLevel)")
    assert [t for t in seen if any(n in t for n in noise)] == []


def test_a_crashed_run_then_a_rerun_converges(
    spark: SparkSession, corpus: Path, reference: Path, tmp_path: Path
) -> None:
    """The run killed (Python and JVM, SIGKILL) during a bronze, a silver and a gold write, one
    crash after the other on the same lake; then one run: every table equals the reference."""
    lake = new_lake(tmp_path, "lake")
    cli = [sys.executable, "-m", "jobs.cli.main"]
    args = ["run", "--input", str(corpus), "--lake", str(lake), "--engine", "embedded",
            "--start", START, "--end", END, "--master", "local[2]", "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    for table in ("raw_lines", "request_events", "reauth_sessions"):
        _kill_during([*cli, *args], f"writing {table}", env)
    audit(spark, [corpus], lake, WHOLE)
    assert differences(lake, reference) == []
    shutil.rmtree(lake)
