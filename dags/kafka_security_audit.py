"""Airflow 3 DAG ``kafka_security_audit``: the pipeline once a day, for that day's logs.

Each run covers one data interval of a daily cron timetable, ``[D 00:00 UTC, D+1 00:00 UTC)``,
and passes it to the job as ``--start`` / ``--end`` (the job replaces exactly those date
partitions, so a rerun of a day is idempotent). The job is ``jobs/submit.py`` (or the packaged
``dist/submit.py`` with ``--py-files``) run by ``SparkSubmitOperator``; the master comes from the
Spark connection (default ``spark_default``, documented to point at ``local[*]``). See
docs/airflow.md.

Two kinds of settings, both optional:

- The DAG's shape, read from environment variables when the file is parsed (they are DAG
  arguments, so they cannot wait for a run): ``KAFKA_AUDIT_DAG_CATCHUP`` (``false``),
  ``KAFKA_AUDIT_DAG_RETRIES`` (``2``), ``KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES`` (``10``),
  ``KAFKA_AUDIT_DAG_START_DATE`` (``2026-01-01``, the first data interval catchup would run),
  ``KAFKA_AUDIT_SPARK_CONN_ID`` (``spark_default``).
- What a run reads and writes: Airflow Variables, read when the task's templates render (never
  at parse time), also settable as ``AIRFLOW_VAR_<NAME>`` environment variables; see
  ``VARIABLES``.

Parsing this file does no work: no Spark, no file reads, no Variable or database access.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, CronDataIntervalTimetable

DAG_ID = "kafka_security_audit"
TASK_ID = "run_pipeline"
SCHEDULE = "0 0 * * *"
ARGS_TEMPLATE = (
    "{{ kafka_audit_job_arguments(data_interval_start, data_interval_end, run_id,"
    " ti.try_number, var.value) }}"
)

# The checkout this file sits in (dags/..): the defaults below are relative to it.
PROJECT_ROOT = Path(__file__).absolute().parent.parent

# Airflow Variables a run reads (name: what it holds; the default when unset).
VARIABLES: Mapping[str, str] = {
    "kafka_audit_conf": "TOML config file of the job (conf/default.toml); default: none",
    "kafka_audit_input": "log files, folders or globs, comma-separated; default: the config's "
    "[[sources]], or <project>/samples (the bundled demo corpus) without a config",
    "kafka_audit_lake": "root folder of the Delta tables; default: the config's run.lake, or "
    "<project>/lake without a config",
    "kafka_audit_engine": "Delta engine auto|native|embedded; default: the config's, else auto",
    "kafka_audit_application": "driver script; default: <project>/jobs/submit.py (use "
    "dist/submit.py with kafka_audit_py_files for the packaged project)",
    "kafka_audit_py_files": "comma-separated --py-files (dist/kafka_security_audit.zip); "
    "default: none (the job's Python has the project installed)",
    "kafka_audit_driver_memory": "spark.driver.memory (local mode: the whole job's heap); "
    "default: 4g",
    "kafka_audit_python": "Python of the driver and workers (PYSPARK_PYTHON, "
    "PYSPARK_DRIVER_PYTHON): it must have pyspark and the project's dependencies; default: "
    "<project>/.venv/bin/python",
}


class VariableLookup(Protocol):
    """Airflow's ``var.value`` accessor (or any mapping): ``get(name, default)``."""

    def get(self, key: str, default: Any, /) -> Any: ...


def _default(name: str) -> str | None:
    defaults = {
        "kafka_audit_application": str(PROJECT_ROOT / "jobs" / "submit.py"),
        "kafka_audit_python": str(PROJECT_ROOT / ".venv" / "bin" / "python"),
        "kafka_audit_driver_memory": "4g",
    }
    return defaults.get(name)


def setting(variables: VariableLookup, name: str) -> str:
    """The value of Airflow Variable ``name`` (one of ``VARIABLES``) or its default.

    Called from the task's templates, i.e. when a run renders them, never at parse time.

    Args:
        variables: ``var.value`` of the template context (a mapping in tests).
        name: a key of ``VARIABLES``.

    Returns:
        The stripped value; ``""`` when unset and without a default.

    Raises:
        KeyError: ``name`` is not a known Variable.
    """
    if name not in VARIABLES:
        raise KeyError(f"{name}: not a Variable of the {DAG_ID} DAG ({', '.join(VARIABLES)})")
    value = variables.get(name, None)
    if value is None or str(value).strip() == "":
        return _default(name) or ""
    return str(value).strip()


def _utc(instant: datetime | None, what: str) -> str:
    if instant is None:
        raise ValueError(f"{DAG_ID}: the run has no {what}; trigger it with a logical date")
    return instant.astimezone(UTC).isoformat()


def job_arguments(
    data_interval_start: datetime | None,
    data_interval_end: datetime | None,
    run_id: str,
    try_number: int,
    variables: VariableLookup,
) -> list[str]:
    """The ``kafka-audit run`` arguments of one task try (``application_args``).

    Args:
        data_interval_start: the run's data interval start (a UTC midnight with this timetable).
        data_interval_end: its end, exclusive (the next UTC midnight).
        run_id: the DAG run id; with ``try_number`` it becomes the job's ``--run-id``, so each
            try is a fresh run (a try replaces the window's partitions; a reused run id would
            skip commits that an earlier try landed, e.g. after new logs arrived).
        try_number: the task instance's try number.
        variables: ``var.value`` of the template context.

    Returns:
        ``["run", "--conf", ..., "--input", ..., "--lake", ..., "--start", ISO, "--end", ISO,
        "--run-id", ...]``: ``--conf`` / ``--input`` / ``--lake`` / ``--engine`` only when set
        (see ``VARIABLES``). The job checks that start and end are UTC midnights.

    Raises:
        ValueError: the run has no data interval.
    """
    args = ["run"]
    conf = setting(variables, "kafka_audit_conf")
    inputs = setting(variables, "kafka_audit_input")
    lake = setting(variables, "kafka_audit_lake")
    engine = setting(variables, "kafka_audit_engine")
    if conf:
        args += ["--conf", conf]
    else:  # no config: the bundled demo corpus into the project's lake
        inputs = inputs or str(PROJECT_ROOT / "samples")
        lake = lake or str(PROJECT_ROOT / "lake")
    if inputs:
        args += ["--input", *(path.strip() for path in inputs.split(",") if path.strip())]
    if lake:
        args += ["--lake", lake]
    if engine:
        args += ["--engine", engine]
    return [
        *args,
        *("--start", _utc(data_interval_start, "data interval start")),
        *("--end", _utc(data_interval_end, "data interval end")),
        *("--run-id", f"{run_id}.try{try_number}"),
    ]


@dataclass(frozen=True)
class DagSettings:
    """The DAG's shape: parse-time settings from ``KAFKA_AUDIT_DAG_*`` environment variables.

    Attributes:
        catchup: run every missed data interval since ``start_date`` (``KAFKA_AUDIT_DAG_CATCHUP``).
        retries: task retries (``KAFKA_AUDIT_DAG_RETRIES``); 0 in CI and tests.
        retry_delay_minutes: minutes between tries (``KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES``).
        start_date: first data interval start, a UTC date (``KAFKA_AUDIT_DAG_START_DATE``).
        conn_id: Spark connection whose host is the master (``KAFKA_AUDIT_SPARK_CONN_ID``).
    """

    catchup: bool = False
    retries: int = 2
    retry_delay_minutes: int = 10
    start_date: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    conn_id: str = "spark_default"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> DagSettings:
        """Read the settings; unset or empty variables keep the defaults.

        Raises:
            ValueError: a variable holds no valid value (one line naming it and what was
                expected; Airflow shows it as the file's import error).
        """
        defaults = cls()

        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        def whole(name: str, default: int) -> int:
            text = get(name)
            if text is None:
                return default
            if not text.isdigit():
                raise ValueError(f"{name}: {text!r} is not a whole number >= 0")
            return int(text)

        catchup = get("KAFKA_AUDIT_DAG_CATCHUP")
        if catchup is not None and catchup.lower() not in {"true", "false", "1", "0"}:
            raise ValueError(f"KAFKA_AUDIT_DAG_CATCHUP: {catchup!r} is not true or false")
        start = get("KAFKA_AUDIT_DAG_START_DATE")
        try:
            start_date = (
                datetime.strptime(start, "%Y-%m-%d").replace(tzinfo=UTC)
                if start
                else defaults.start_date
            )
        except ValueError:
            raise ValueError(
                f"KAFKA_AUDIT_DAG_START_DATE: {start!r} is not a date (2026-01-01)"
            ) from None
        return cls(
            catchup=defaults.catchup if catchup is None else catchup.lower() in {"true", "1"},
            retries=whole("KAFKA_AUDIT_DAG_RETRIES", defaults.retries),
            retry_delay_minutes=whole(
                "KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES", defaults.retry_delay_minutes
            ),
            start_date=start_date,
            conn_id=get("KAFKA_AUDIT_SPARK_CONN_ID") or defaults.conn_id,
        )


def build_dag(settings: DagSettings) -> DAG:
    """The ``kafka_security_audit`` DAG: one ``SparkSubmitOperator`` task per daily interval.

    The templates render natively (``render_template_as_native_obj``) so that
    ``application_args`` becomes the list ``job_arguments`` returns; every other field renders
    to strings. ``max_active_runs=1``: runs of different days write the same tables (the token
    lifecycle is merged across runs), so they go one after another.
    """
    with DAG(
        dag_id=DAG_ID,
        description="Kafka security logs -> Delta tables, one UTC day per run",
        schedule=CronDataIntervalTimetable(SCHEDULE, timezone="UTC"),
        start_date=settings.start_date,
        catchup=settings.catchup,
        max_active_runs=1,
        default_args={
            "retries": settings.retries,
            "retry_delay": timedelta(minutes=settings.retry_delay_minutes),
        },
        render_template_as_native_obj=True,
        user_defined_macros={
            "kafka_audit_setting": setting,
            "kafka_audit_job_arguments": job_arguments,
        },
        tags=["kafka", "security", "spark"],
        doc_md=__doc__,
    ) as dag:
        python = "{{ kafka_audit_setting(var.value, 'kafka_audit_python') }}"
        SparkSubmitOperator(
            task_id=TASK_ID,
            conn_id=settings.conn_id,
            application="{{ kafka_audit_setting(var.value, 'kafka_audit_application') }}",
            py_files="{{ kafka_audit_setting(var.value, 'kafka_audit_py_files') }}",
            # A template that renders (natively) to the list, hence the ignore.
            application_args=ARGS_TEMPLATE,  # type: ignore[arg-type]
            env_vars={
                "PYSPARK_PYTHON": python,
                "PYSPARK_DRIVER_PYTHON": python,
                # Python puts a script's folder first on sys.path: for jobs/submit.py that is
                # jobs/, whose modules would become top-level names that can shadow others'.
                # The job imports the project from its install or from --py-files. ("yes":
                # native rendering would turn "1" into an int, which no environment takes.)
                "PYTHONSAFEPATH": "yes",
            },
            conf={
                "spark.ui.showConsoleProgress": "false",
                # Local mode runs the executors in the driver JVM; spark-submit sizes it.
                "spark.driver.memory": "{{ kafka_audit_setting(var.value, "
                "'kafka_audit_driver_memory') }}",
            },
            name="kafka-security-audit-{{ data_interval_start | ds }}",
        )
    return dag


dag = build_dag(DagSettings.from_environment(os.environ))
