"""Where a small run's time goes (issue 15): planning or running, stage by stage.

    .venv/bin/python bench/fixed_cost.py samples --work /tmp/fixed-cost

Builds the session first and runs one trivial job (JVM start-up is not in the figures), then
``jobs.pipeline.run`` once into a fresh lake under ``--work``, and prints for each pipeline
stage (``jobs.progress``): wall seconds, the Spark jobs and tasks it ran, the seconds Catalyst's
analyzer and optimizer rules took (``RuleExecutor``'s metrics, read at each stage's end), and
the driver's py4j round trips (each DataFrame call is one or more; each makes the JVM analyse
the new plan). Then the run's costliest rules. On a small input, jobs are cheap and planning
is most of the time: what the fixed cost is made of.

Figures are wall seconds on a shared machine: quote them with the load (printed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from py4j.clientserver import ClientServerConnection
from pyspark.sql import SparkSession

import jobs.pipeline
from jobs.config import RunConfig, SourceSpec
from jobs.progress import Progress
from jobs.session import build_session

_CALLS = [0]
#: Per stage: name, wall s, Spark jobs, rule s, py4j calls (``MeteredProgress``).
ROWS: list[tuple[str, float, int, float, int]] = []
_send = ClientServerConnection.send_command


def _counted(self: ClientServerConnection, command: str) -> Any:
    _CALLS[0] += 1
    return _send(self, command)


def _rules(spark: SparkSession) -> str:
    executor = spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor  # type: ignore[union-attr]
    return str(executor.dumpTimeSpent())


def rule_seconds(spark: SparkSession) -> float:
    """Catalyst's analyzer + optimizer rule time so far in this JVM (seconds)."""
    found = re.search(r"Total time: ([\d.]+) seconds", _rules(spark))
    return float(found.group(1)) if found else 0.0


class MeteredProgress(Progress):
    """``Progress`` that also records each stage's rule seconds and py4j round trips."""

    _marks: tuple[str, float, int] | None = None

    def stage(self, name: str) -> None:
        self._close_row()
        super().stage(name)
        self._marks = (name, rule_seconds(self._spark), _CALLS[0])

    def _close_row(self) -> None:
        mark = self._marks
        if mark is None:
            return
        name, rules, calls = mark
        super()._end(failed=False)
        ROWS.append(
            (name, self.durations[name], self.spark_jobs[name],
             rule_seconds(self._spark) - rules, _CALLS[0] - calls)
        )  # fmt: skip
        self._marks = None

    def __exit__(self, *exc: Any) -> None:
        self._close_row()
        super().__exit__(*exc)


def main() -> None:
    """Parse the arguments, run the pipeline once, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="files or folders, as kafka-audit run --input")
    parser.add_argument("--work", type=Path, required=True, help="folder for the lake")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    spark = build_session("bench-fixed-cost", args.master)
    spark.range(1).count()
    lake = args.work / "lake"
    shutil.rmtree(lake, ignore_errors=True)
    config = RunConfig(sources=tuple(SourceSpec(p) for p in args.inputs), lake=str(lake))
    # Patched for this process only: count round trips, meter the stages of the run.
    setattr(ClientServerConnection, "send_command", _counted)  # noqa: B010
    setattr(jobs.pipeline, "Progress", MeteredProgress)  # noqa: B010
    started, rules, calls = time.monotonic(), rule_seconds(spark), _CALLS[0]
    jobs.pipeline.run(spark, config, progress=False)
    total = (time.monotonic() - started, rule_seconds(spark) - rules, _CALLS[0] - calls)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"{'stage':<36} {'wall s':>8} {'jobs':>5} {'rules s':>8} {'py4j calls':>11}")
    for name, wall, jobs_, rule_s, n in ROWS:
        print(f"{name:<36} {wall:8.1f} {jobs_:5d} {rule_s:8.1f} {n:11d}")
    print(f"{'whole run':<36} {total[0]:8.1f} {'':>5} {total[1]:8.1f} {total[2]:11d}")
    print("\n".join(_rules(spark).splitlines()[:13]))
    spark.stop()


if __name__ == "__main__":
    main()
