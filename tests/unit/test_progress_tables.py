"""The run's table counter beside the task bar, the bar's last picture of a stage, and the
quiet log4j2 settings of a local JVM."""

from __future__ import annotations

import io
import logging
import re
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from jobs.gold.registry import GOLD_TABLES
from jobs.pipeline import TABLES_PER_RUN
from jobs.progress import Progress
from jobs.session import QUIET_LOG4J2, quiet_java_options
from transforms.silver.registry import SILVER_TABLES


def test_table_counter_only_goes_up() -> None:
    progress = Progress(cast(Any, None), enabled=False, tables_total=TABLES_PER_RUN)
    seen = [progress.tables_text()]
    for table in ("raw_lines", "auth_events", "findings"):
        progress.table_written(table)
        seen.append(progress.tables_text())
    assert seen == [f"tables {n}/{TABLES_PER_RUN}" for n in range(4)]
    assert Progress(cast(Any, None), enabled=False).tables_text() == "tables 0"


def test_tables_per_run_counts_every_layer() -> None:
    # raw_lines + silver + quarantine + run_coverage + the builders' + security_metrics + findings
    assert TABLES_PER_RUN == 1 + len(SILVER_TABLES) + 2 + len(GOLD_TABLES) + 2 == 17


def test_quiet_log4j2_is_added_unless_verbose_or_configured() -> None:
    assert QUIET_LOG4J2.is_file()
    flag = f"-Dlog4j2.configurationFile={QUIET_LOG4J2.as_uri()}"
    assert quiet_java_options("-XX:+UseSerialGC", verbose=False) == f"-XX:+UseSerialGC {flag}"
    assert quiet_java_options("", verbose=False) == flag
    assert quiet_java_options("-XX:+UseSerialGC", verbose=True) == "-XX:+UseSerialGC"
    own = "-Dlog4j2.configurationFile=file:/etc/spark/log4j2.properties"
    assert quiet_java_options(own, verbose=False) == own
    text = QUIET_LOG4J2.read_text(encoding="utf-8")
    assert "rootLogger.level = warn" in text and "NativeCodeLoader" in text


class _LaggingTracker:
    """A Spark status tracker that learns of the stage's one job end (4 tasks) only at
    ``ended_at``, as Spark's listener bus tells the tracker a moment after the driver."""

    def __init__(self) -> None:
        self.ended_at: float | None = None

    def _done(self) -> bool:
        return self.ended_at is not None and time.monotonic() >= self.ended_at

    def getJobIdsForGroup(self, group: str) -> list[int]:  # noqa: N802 (Spark's name)
        return [0]

    def getJobInfo(self, job_id: int) -> SimpleNamespace:  # noqa: N802
        return SimpleNamespace(status="SUCCEEDED" if self._done() else "RUNNING", stageIds=[0])

    def getStageInfo(self, stage_id: int) -> SimpleNamespace:  # noqa: N802
        return SimpleNamespace(numTasks=4, numCompletedTasks=4 if self._done() else 3)


@pytest.mark.parametrize("bar", [True, False])
def test_a_stage_ends_when_the_tracker_sees_its_jobs_end(
    bar: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The stage's line counts every task, and the bar's last picture shows them all done and
    no job running (read at once, both saw 3/4 tasks, one job running)."""
    caplog.set_level(logging.INFO, logger="jobs.progress")
    tracker = _LaggingTracker()
    context = SimpleNamespace(
        statusTracker=lambda: tracker,
        setJobGroup=lambda group, description: None,
        setLocalProperty=lambda key, value: None,
    )
    stream = io.StringIO()
    with Progress(cast(Any, SimpleNamespace(sparkContext=context)), bar, stream) as progress:
        progress.stage("count")
        tracker.ended_at = time.monotonic() + 0.3  # the driver is done; the tracker lags
    lines = [r.getMessage() for r in caplog.records if r.name == "jobs.progress"]
    assert re.fullmatch(r"stage count: done after 0\.\d s \(1 Spark jobs, 4 tasks\)", lines[-1])
    assert progress.spark_jobs == {"count": 1}
    pictures = re.findall(r"\| (\d+)/(\d+) [^]]*tables 0, (\d+) Spark", stream.getvalue())
    assert pictures[-1:] == ([("4", "4", "0")] if bar else []), stream.getvalue()
