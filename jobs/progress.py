"""Progress of a long run: a log line at the start and end of each pipeline stage (with its
duration), and, when stderr is a terminal, a live bar of the Spark tasks of the stage.

The bar is ``tqdm``, fed by a daemon thread that polls ``SparkContext.statusTracker()`` twice a
second for the tasks of the stage's jobs (each stage runs its Spark jobs in a job group of its
own). Spark's own ``spark.ui.showConsoleProgress`` bar can only be chosen before the session
starts and names stages by number only. The bar is off when stderr is not a terminal (Airflow
task logs, tests, pipes) unless forced on, and ``--no-progress`` switches it off. The stage lines
are plain ``logging`` records and always written.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from types import TracebackType
from typing import IO, Any

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

POLL_S = 0.5
#: How long a stage's end waits for Spark's status tracker to see the stage's jobs end.
SETTLE_S = 2.0


class Progress:
    """Stage lines and, if enabled, a task bar; use as a context manager around a run.

    Args:
        spark: The session whose jobs are shown.
        enabled: Show the live bar; None (default) shows it when ``stream`` is a terminal.
        stream: Where the bar is drawn (stderr).
        tables_total: Tables the run writes: the bar shows ``tables k/N`` beside the tasks,
            a count that only goes up (the task total grows as Spark plans new jobs, so the
            task fraction alone can go backwards). 0: no table counter.
    """

    def __init__(
        self,
        spark: SparkSession,
        enabled: bool | None = None,
        stream: IO[str] | None = None,
        tables_total: int = 0,
    ) -> None:
        self._spark = spark
        self._stream = stream or sys.stderr
        self.enabled = self._stream.isatty() if enabled is None else enabled
        self._name: str | None = None
        self._started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._count = 0
        self._group = ""
        self.tables_total = tables_total
        self.tables_written = 0
        self._tables_lock = threading.Lock()
        self.durations: dict[str, float] = {}
        #: Spark jobs each stage ran (its job group's, as the status tracker still holds them).
        self.spark_jobs: dict[str, int] = {}

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._end(failed=error is not None)

    def stage(self, name: str) -> None:
        """Ends the current stage (if any) and starts ``name``."""
        self._end(failed=False)
        self._name, self._started = name, time.monotonic()
        log.info("stage %s: started", name)
        self._count += 1
        group = self._group = f"kafka-audit-stage-{id(self)}-{self._count}"
        self._spark.sparkContext.setJobGroup(group, name)
        if self.enabled:
            self._stop.clear()
            self._thread = threading.Thread(target=self._poll, args=(name, group), daemon=True)
            self._thread.start()

    def table_written(self, table: str) -> None:
        """Counts one more table written (the bar's ``tables k/N``); tables may be written
        from several threads (``jobs.concurrency``)."""
        with self._tables_lock:
            self.tables_written += 1
            text = self.tables_text()
        log.debug("table %s written (%s)", table, text)

    def tables_text(self) -> str:
        """``tables 5/17`` (``tables 5`` without a known total)."""
        total = f"/{self.tables_total}" if self.tables_total else ""
        return f"tables {self.tables_written}{total}"

    def _end(self, failed: bool) -> None:
        if self._name is None:
            return
        elapsed = time.monotonic() - self._started
        self._settle(self._group)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self.durations[self._name] = elapsed
        jobs, tasks = self._spark_work(self._group)
        self.spark_jobs[self._name] = jobs
        log.info(
            "stage %s: %s after %.1f s (%d Spark jobs, %d tasks)",
            self._name, "failed" if failed else "done", elapsed, jobs, tasks,
        )  # fmt: skip
        context = self._spark.sparkContext
        for key in ("spark.jobGroup.id", "spark.job.description"):
            context.setLocalProperty(key, None)  # type: ignore[arg-type]
        self._name = None

    def _settle(self, group: str) -> None:
        """Waits until Spark's status tracker shows no job of ``group`` running, at most
        ``SETTLE_S``. The tracker learns of a job's end from Spark's listener bus, a moment
        after the job has returned to the driver: read at once, a finished stage showed 3/4
        tasks with one job running (the bar's last picture and the stage's task count)."""
        tracker = self._spark.sparkContext.statusTracker()
        settled = time.monotonic() + SETTLE_S
        while time.monotonic() < settled:
            jobs = (tracker.getJobInfo(job_id) for job_id in tracker.getJobIdsForGroup(group))
            if not any(job is not None and job.status == "RUNNING" for job in jobs):
                return
            time.sleep(0.05)

    def _spark_work(self, group: str) -> tuple[int, int]:
        """The Spark jobs of ``group`` and the tasks their stages ran (skipped stages: none)."""
        tracker = self._spark.sparkContext.statusTracker()
        job_ids = tracker.getJobIdsForGroup(group)
        tasks = 0
        for job_id in job_ids:
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                tasks += stage.numCompletedTasks if stage is not None else 0
        return len(job_ids), tasks

    def _poll(self, name: str, group: str) -> None:
        """Draws the Spark tasks of the stage's job group (done / known) until told to stop,
        then once more (after ``_settle``)."""
        from tqdm import tqdm  # noqa: PLC0415
        from tqdm.contrib.logging import logging_redirect_tqdm  # noqa: PLC0415

        tracker = self._spark.sparkContext.statusTracker()
        bar: Any = tqdm(desc=name, total=0, unit="task", file=self._stream, leave=False)

        def draw() -> None:
            tasks = done = running = 0
            for job_id in tracker.getJobIdsForGroup(group):
                job = tracker.getJobInfo(job_id)
                if job is None:
                    continue
                active = job.status == "RUNNING"
                running += active
                for stage_id in job.stageIds:
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:  # None: not started yet, or forgotten
                        # A finished job's unfinished stages were skipped (output reused).
                        tasks += stage.numTasks if active else stage.numCompletedTasks
                        done += stage.numCompletedTasks
            bar.total, bar.n = tasks, done
            bar.set_postfix_str(
                f"{self.tables_text()}, {running} Spark job(s) running", refresh=False
            )
            bar.refresh()

        with bar, logging_redirect_tqdm():
            while not self._stop.wait(POLL_S):
                draw()
            draw()
