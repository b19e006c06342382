"""Airflow 3 DAG ``kafka_security_audit``: the pipeline once a day, for that day's logs.

Each run covers one data interval of a daily cron timetable, ``[D 00:00 UTC, D+1 00:00 UTC)``,
and passes it to the job as ``--start`` / ``--end`` (the job replaces exactly those date
partitions, so a rerun of a day is idempotent: docs/reruns.md). The job is ``jobs/submit.py``
(or the packaged ``dist/submit.py`` with ``--py-files``) run by ``SparkSubmitOperator``; the
master comes from the Spark connection (default ``spark_default``). See docs/airflow.md.

- It refuses to run unconfigured: without ``kafka_audit_conf``, the Variables
  ``kafka_audit_input`` and ``kafka_audit_lake`` are required (the task fails at once, no retry).
- It fails loudly on findings: ``--fail-on`` from the Variable ``kafka_audit_fail_on`` (default
  ``high``; ``none`` turns it off); the job's exit 4 fails the task without retries, after
  every table is written. ``KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK`` names the callbacks (a
  function of the context or a Notifier instance) that hear of it.
- The gold tables are Assets (``outlets``) named ``kafka_security_audit.<table>``: an export DAG
  can be scheduled on them; each event's extra holds the run's lake and window.
- An optional ``export_ocsf`` task (``KAFKA_AUDIT_DAG_EXPORT_OCSF``) follows a successful run.

Two kinds of settings:

- The DAG's shape, read from ``KAFKA_AUDIT_DAG_*`` environment variables (and
  ``KAFKA_AUDIT_SPARK_CONN_ID``) when the file is parsed: see ``DagSettings``. A bad value, or
  an unknown ``KAFKA_AUDIT_DAG_*`` name, is the file's import error.
- What a run reads and writes: Airflow Variables, read when the task's templates render (never
  at parse time), also settable as ``AIRFLOW_VAR_<NAME>`` environment variables; see
  ``VARIABLES``.

Parsing this file does no work: no Spark, no file reads, no Variable or database access (the
failure callbacks' modules, when named, are imported).
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, Context, CronDataIntervalTimetable
from airflow.sdk.exceptions import AirflowException, AirflowFailException

DAG_ID = "kafka_security_audit"
TASK_ID = "run_pipeline"
EXPORT_TASK_ID = "export_ocsf"
SCHEDULE = "0 0 * * *"
ARGS_TEMPLATE = (
    "{{ kafka_audit_job_arguments(data_interval_start, data_interval_end, run_id,"
    " ti.try_number, var.value) }}"
)
EXPORT_ARGS_TEMPLATE = (
    "{{ kafka_audit_export_arguments(data_interval_start, data_interval_end, var.value) }}"
)

# kafka-audit run --fail-on: severities, lowest first; the job exits 4 at or above the one given.
FAIL_ON = ("low", "medium", "high")
EXIT_FINDINGS = 4

# The gold tables (jobs/gold/*.py and jobs/pipeline.py's stacked_plan): rewritten whole by every
# run, so each successful run updates every one of them. tests_airflow checks the list
# against the tables a run writes.
GOLD_TABLES = (
    "reauth_sessions",
    "reauth_readiness",
    "token_lifecycle",
    "forwarded_requests",
    "authorizer_readiness",
    "connect_internal_requests",
    "connect_session_keys",
    "security_metrics",
    "findings",
)

# The checkout this file sits in (dags/..): the defaults below are relative to it.
PROJECT_ROOT = Path(__file__).absolute().parent.parent

# Airflow Variables a run reads (name: what it holds; the default when unset).
VARIABLES: Mapping[str, str] = {
    "kafka_audit_conf": "TOML config file of the job (conf/default.toml); default: none",
    "kafka_audit_input": "log files, folders or globs, comma-separated; required without "
    "kafka_audit_conf, else default: the config's [[sources]]",
    "kafka_audit_lake": "root folder of the Delta tables; required without kafka_audit_conf "
    "(and for export_ocsf), else default: the config's run.lake",
    "kafka_audit_fail_on": "fail the task (the job's exit 4) when the run finds findings of "
    "this severity or above: low, medium, high or none; default: high",
    "kafka_audit_engine": "Delta engine auto|native|embedded; default: the config's, else auto",
    "kafka_audit_application": "driver script; default: <project>/jobs/submit.py (use "
    "dist/submit.py with kafka_audit_py_files for the packaged project)",
    "kafka_audit_py_files": "comma-separated --py-files (dist/kafka_security_audit.zip); "
    "default: none (the job's Python has the project installed)",
    "kafka_audit_driver_memory": "spark.driver.memory (local mode: the whole job's heap); "
    "default: 4g",
    "kafka_audit_driver_java_options": "spark.driver.defaultJavaOptions: the driver JVM's "
    "options (local mode: the executors run in it); default: UTC and the job's locale ("
    "-Duser.timezone=UTC -Duser.language=en -Duser.country=US); add -XX:TieredStopAtLevel=1 "
    "when a day's logs are under 16 MiB",
    "kafka_audit_python": "Python of the driver and workers (PYSPARK_PYTHON, "
    "PYSPARK_DRIVER_PYTHON): it must have pyspark and the project's dependencies; default: "
    "<project>/.venv/bin/python",
    "kafka_audit_ocsf_out": "folder of export_ocsf's files, one subfolder per day; required "
    "when KAFKA_AUDIT_DAG_EXPORT_OCSF is on",
}


class VariableLookup(Protocol):
    """Airflow's ``var.value`` accessor (or any mapping): ``get(name, default)``."""

    def get(self, key: str, default: Any, /) -> Any: ...


#: The driver JVM's time zone and locale (``jobs.session.JVM_LOCALE_OPTIONS``): spark-submit
#: starts that JVM before the job runs, so the job cannot give them itself; in local mode
#: ``lower`` and ``upper`` follow its default locale (docs/running.md, "Local").
DRIVER_JAVA_OPTIONS = "-Duser.timezone=UTC -Duser.language=en -Duser.country=US"


def _default(name: str) -> str | None:
    defaults = {
        "kafka_audit_application": str(PROJECT_ROOT / "jobs" / "submit.py"),
        "kafka_audit_python": str(PROJECT_ROOT / ".venv" / "bin" / "python"),
        "kafka_audit_driver_memory": "4g",
        "kafka_audit_driver_java_options": DRIVER_JAVA_OPTIONS,
        "kafka_audit_fail_on": "high",
    }
    return defaults.get(name)


def _did_you_mean(word: str, choices: Sequence[str], prefix: str = "") -> str:
    """``"; did you mean X?"`` with the choice nearest ``word`` (their common ``prefix`` aside,
    else the one that contains it), or ``""``."""
    tails = {choice.removeprefix(prefix): choice for choice in choices}
    tail = word.removeprefix(prefix)
    close = difflib.get_close_matches(tail, list(tails), n=1)
    close = close or [t for t in tails if tail and tail in t][:1]
    return f"; did you mean {tails[close[0]]}?" if close else ""


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


def fail_on_threshold(variables: VariableLookup) -> str | None:
    """The job's ``--fail-on`` severity from the Variable ``kafka_audit_fail_on``.

    Returns:
        ``low``, ``medium`` or ``high`` (default ``high``); None for ``none`` (no threshold).

    Raises:
        AirflowFailException: any other value (one line, with the nearest valid one).
    """
    value = setting(variables, "kafka_audit_fail_on").lower()
    if value == "none":
        return None
    if value not in FAIL_ON:
        choices = [*FAIL_ON, "none"]
        raise AirflowFailException(
            f"Airflow Variable kafka_audit_fail_on: {value!r} is not one of "
            f"{', '.join(choices)}{_did_you_mean(value, choices)}"
        )
    return value


def check_variable_environment(environ: Mapping[str, str]) -> None:
    """Reject an ``AIRFLOW_VAR_KAFKA_AUDIT_*`` environment variable that names no Variable.

    A typo there (``AIRFLOW_VAR_KAFKA_AUDIT_FAILON``) would otherwise leave the default in
    force without a word.

    Raises:
        AirflowFailException: one line naming the variable and the nearest valid name.
    """
    known = [f"AIRFLOW_VAR_{name.upper()}" for name in VARIABLES]
    for name in sorted(environ):
        if name.upper().startswith("AIRFLOW_VAR_KAFKA_AUDIT_") and name.upper() not in known:
            raise AirflowFailException(
                f"{name}: not a Variable of the {DAG_ID} DAG"
                + _did_you_mean(name.upper(), known, "AIRFLOW_VAR_KAFKA_AUDIT_")
            )


def _utc(instant: datetime | None, what: str) -> str:
    if instant is None:
        raise ValueError(f"{DAG_ID}: the run has no {what}; trigger it with a logical date")
    return instant.astimezone(UTC).isoformat()


def _require(missing: Sequence[str], what: str) -> None:
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise AirflowFailException(
            f"{what}: set the Airflow Variable{plural} {' and '.join(missing)}; see docs/airflow.md"
        )


def job_arguments(
    data_interval_start: datetime | None,
    data_interval_end: datetime | None,
    run_id: str,
    try_number: int,
    variables: VariableLookup,
    *,
    environ: Mapping[str, str] | None = None,
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
        environ: the environment whose ``AIRFLOW_VAR_KAFKA_AUDIT_*`` names are checked
            (default: ``os.environ``, read when the templates render).

    Returns:
        ``["run", "--conf", ..., "--input", ..., "--lake", ..., "--start", ISO, "--end", ISO,
        "--run-id", ..., "--fail-on", SEVERITY]``: ``--conf`` / ``--input`` / ``--lake`` /
        ``--engine`` only when set, ``--fail-on`` unless ``none`` (see ``VARIABLES``). The
        job checks that start and end are UTC midnights.

    Raises:
        AirflowFailException: not configured (neither ``kafka_audit_conf`` nor both
            ``kafka_audit_input`` and ``kafka_audit_lake``), a bad ``kafka_audit_fail_on`` or
            an unknown ``AIRFLOW_VAR_KAFKA_AUDIT_*`` name: the task fails without retries.
        ValueError: the run has no data interval.
    """
    check_variable_environment(os.environ if environ is None else environ)
    conf = setting(variables, "kafka_audit_conf")
    inputs = [p.strip() for p in setting(variables, "kafka_audit_input").split(",") if p.strip()]
    lake = setting(variables, "kafka_audit_lake")
    engine = setting(variables, "kafka_audit_engine")
    if not conf:
        missing = [
            n for n, v in (("kafka_audit_input", inputs), ("kafka_audit_lake", lake)) if not v
        ]
        _require(missing, f"{DAG_ID} is not configured (or set kafka_audit_conf)")
    threshold = fail_on_threshold(variables)
    args = ["run"]
    args += ["--conf", conf] if conf else []
    args += ["--input", *inputs] if inputs else []
    args += ["--lake", lake] if lake else []
    args += ["--engine", engine] if engine else []
    return [
        *args,
        *("--start", _utc(data_interval_start, "data interval start")),
        *("--end", _utc(data_interval_end, "data interval end")),
        *("--run-id", f"{run_id}.try{try_number}"),
        *(("--fail-on", threshold) if threshold else ()),
    ]


def export_arguments(
    data_interval_start: datetime | None,
    data_interval_end: datetime | None,
    variables: VariableLookup,
) -> list[str]:
    """The ``kafka-audit export-ocsf`` arguments of the ``export_ocsf`` task.

    Returns:
        ``["export-ocsf", "--lake", LAKE, "--start", D, "--end", D+1, "--out", OUT/D]``: the
        data interval's day, into one subfolder per day of ``kafka_audit_ocsf_out``.

    Raises:
        AirflowFailException: ``kafka_audit_lake`` or ``kafka_audit_ocsf_out`` is unset.
        ValueError: the run has no data interval.
    """
    lake = setting(variables, "kafka_audit_lake")
    out = setting(variables, "kafka_audit_ocsf_out")
    missing = [n for n, v in (("kafka_audit_lake", lake), ("kafka_audit_ocsf_out", out)) if not v]
    _require(missing, f"{DAG_ID}.{EXPORT_TASK_ID} is not configured")
    day = _utc(data_interval_start, "data interval start")[:10]
    end = _utc(data_interval_end, "data interval end")[:10]
    out = out.rstrip("/") or "/"
    return ["export-ocsf", "--lake", lake, "--start", day, "--end", end, "--out", f"{out}/{day}"]


def gold_assets() -> list[Asset]:
    """The gold tables as Assets, named ``kafka_security_audit.<table>`` (no URI: the lake is a
    Variable, known only when a run renders; each event's extra carries it)."""
    return [Asset(name=f"{DAG_ID}.{table}", group=DAG_ID) for table in GOLD_TABLES]


def _option(args: Sequence[object] | None, option: str) -> str | None:
    """The value that follows ``option`` in rendered ``application_args``, else None."""
    values = [str(arg) for arg in args or []]
    return values[values.index(option) + 1] if option in values[:-1] else None


def record_asset_events(context: Context, result: Any = None) -> None:
    """``post_execute`` of ``run_pipeline``: each gold asset's event gets, as its extra, what
    the job was given: ``lake`` (None when only the config names it), ``conf``, ``start`` and
    ``end`` (ISO UTC). Nothing raises."""
    args = getattr(context["task"], "application_args", None)
    extra = {name: _option(args, f"--{name}") for name in ("lake", "conf", "start", "end")}
    for asset in context["task"].outlets:
        context["outlet_events"][asset].extra.update(extra)


class AuditSparkSubmitOperator(SparkSubmitOperator):
    """``SparkSubmitOperator`` that turns the job's exit 4 (findings at or above
    ``--fail-on``, every table written) into a failure without retries, saying so in one line:
    a retry would find the same findings, and the alert should not wait for it."""

    def execute(self, context: Context) -> None:
        """Run spark-submit.

        Raises:
            AirflowFailException: the job exited 4.
            AirflowException: any other failure (retried as configured).
        """
        try:
            super().execute(context)
        except AirflowException as error:
            code = re.search(r"Error code is: (\d+)\.", str(error))
            if code is None or int(code.group(1)) != EXIT_FINDINGS:
                raise
            threshold = _option(self.application_args, "--fail-on")
            lake = _option(self.application_args, "--lake") or "<the config's run.lake>"
            raise AirflowFailException(
                f"kafka-audit run found findings at or above {threshold} (exit 4); every table "
                f"is written: see the run summary above, or `kafka-audit report --lake {lake}`"
            ) from error


DAG_ENVIRONMENT = (
    "KAFKA_AUDIT_DAG_CATCHUP",
    "KAFKA_AUDIT_DAG_START_DATE",
    "KAFKA_AUDIT_DAG_RETRIES",
    "KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES",
    "KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES",
    "KAFKA_AUDIT_DAG_POOL",
    "KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK",
    "KAFKA_AUDIT_DAG_EXPORT_OCSF",
)


def _flag(name: str, text: str | None, default: bool) -> bool:
    if text is None:
        return default
    if text.lower() not in {"true", "false", "1", "0"}:
        raise ValueError(f"{name}: {text!r} is not true or false")
    return text.lower() in {"true", "1"}


def _whole(name: str, text: str | None, default: int, minimum: int = 0) -> int:
    if text is None:
        return default
    if not text.isdigit() or int(text) < minimum:
        raise ValueError(f"{name}: {text!r} is not a whole number >= {minimum}")
    return int(text)


def _date(name: str, text: str | None, default: datetime) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC) if text else default
    except ValueError:
        raise ValueError(f"{name}: {text!r} is not a date (2026-01-01)") from None


def load_callback(path: str) -> Callable[..., Any]:
    """Import one failure callback named by a dotted path (``module.attribute``).

    Args:
        path: e.g. ``my_alerts.notify_oncall``: a function of the context, or a Notifier
            instance (``SmtpNotifier(...)``, ``SlackNotifier(...)``); its module must be
            importable by the DAG processor and the workers (the dags folder is).

    Raises:
        ValueError: not a dotted path, not importable, or not callable (one line).
    """
    name = "KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK"
    module, _, attribute = path.rpartition(".")
    if not module or not attribute:
        raise ValueError(f"{name}: {path!r} is not a dotted path (module.attribute)")
    try:
        value = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"{name}: cannot import {path!r}: {error}") from None
    if not callable(value):
        raise ValueError(f"{name}: {path!r} is not callable (a function or a Notifier)")
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class DagSettings:
    """The DAG's shape: parse-time settings from ``KAFKA_AUDIT_DAG_*`` environment variables.

    Attributes:
        catchup: run every missed data interval since ``start_date`` (``KAFKA_AUDIT_DAG_CATCHUP``).
        retries: task retries (``KAFKA_AUDIT_DAG_RETRIES``); 0 in CI and tests.
        retry_delay_minutes: minutes between tries (``KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES``).
        start_date: first data interval start, a UTC date (``KAFKA_AUDIT_DAG_START_DATE``).
        conn_id: Spark connection whose host is the master (``KAFKA_AUDIT_SPARK_CONN_ID``).
        execution_timeout_minutes: a task try is killed after this long
            (``KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES``, >= 1).
        pool: the Airflow pool of the Spark tasks (``KAFKA_AUDIT_DAG_POOL``); a named pool must
            exist (``airflow pools set``), or the scheduler never runs the task.
        on_failure_callbacks: dotted paths of the tasks' failure callbacks, comma-separated in
            ``KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK`` (see ``load_callback``).
        export_ocsf: add the ``export_ocsf`` task (``KAFKA_AUDIT_DAG_EXPORT_OCSF``).
    """

    catchup: bool = False
    retries: int = 2
    retry_delay_minutes: int = 10
    start_date: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    conn_id: str = "spark_default"
    execution_timeout_minutes: int = 240
    pool: str = "default_pool"
    on_failure_callbacks: tuple[str, ...] = ()
    export_ocsf: bool = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> DagSettings:
        """Read the settings; unset or empty variables keep the defaults.

        Raises:
            ValueError: a variable holds no valid value, or a ``KAFKA_AUDIT_DAG_*`` name is
                unknown (one line naming it and what was expected; Airflow shows it as the
                file's import error).
        """
        for name in sorted(environ):
            if name.startswith("KAFKA_AUDIT_DAG_") and name not in DAG_ENVIRONMENT:
                hint = _did_you_mean(name, DAG_ENVIRONMENT, "KAFKA_AUDIT_DAG_")
                raise ValueError(f"{name}: not a setting of the {DAG_ID} DAG{hint}")
        defaults = cls()

        def get(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        callbacks = get("KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK") or ""
        prefix = "KAFKA_AUDIT_DAG_"
        return cls(
            catchup=_flag(f"{prefix}CATCHUP", get(f"{prefix}CATCHUP"), defaults.catchup),
            retries=_whole(f"{prefix}RETRIES", get(f"{prefix}RETRIES"), defaults.retries),
            retry_delay_minutes=_whole(
                f"{prefix}RETRY_DELAY_MINUTES",
                get(f"{prefix}RETRY_DELAY_MINUTES"),
                defaults.retry_delay_minutes,
            ),
            start_date=_date(
                f"{prefix}START_DATE", get(f"{prefix}START_DATE"), defaults.start_date
            ),
            conn_id=get("KAFKA_AUDIT_SPARK_CONN_ID") or defaults.conn_id,
            execution_timeout_minutes=_whole(
                f"{prefix}EXECUTION_TIMEOUT_MINUTES",
                get(f"{prefix}EXECUTION_TIMEOUT_MINUTES"),
                defaults.execution_timeout_minutes,
                minimum=1,
            ),
            pool=get(f"{prefix}POOL") or defaults.pool,
            on_failure_callbacks=tuple(p.strip() for p in callbacks.split(",") if p.strip()),
            export_ocsf=_flag(
                f"{prefix}EXPORT_OCSF", get(f"{prefix}EXPORT_OCSF"), defaults.export_ocsf
            ),
        )


def _spark_submit(task_id: str, settings: DagSettings, **kwargs: Any) -> AuditSparkSubmitOperator:
    """One spark-submit of the Variables' application (``jobs/submit.py``), Python and memory;
    ``kwargs`` go to the operator (``name``, ``application_args``, ``outlets``...)."""
    python = "{{ kafka_audit_setting(var.value, 'kafka_audit_python') }}"
    return AuditSparkSubmitOperator(
        task_id=task_id,
        conn_id=settings.conn_id,
        application="{{ kafka_audit_setting(var.value, 'kafka_audit_application') }}",
        py_files="{{ kafka_audit_setting(var.value, 'kafka_audit_py_files') }}",
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
            # The driver JVM's own options; "default" so that a deployment's
            # spark.driver.extraJavaOptions (spark-defaults.conf) is kept beside them.
            "spark.driver.defaultJavaOptions": "{{ kafka_audit_setting(var.value, "
            "'kafka_audit_driver_java_options') }}",
        },
        **kwargs,
    )


def build_dag(settings: DagSettings) -> DAG:
    """The ``kafka_security_audit`` DAG: ``run_pipeline`` (then, when enabled, ``export_ocsf``)
    per daily interval.

    The templates render natively (``render_template_as_native_obj``) so that
    ``application_args`` becomes the list ``job_arguments`` returns; every other field renders
    to strings. ``max_active_runs=1``: runs of different days write the same tables (the token
    lifecycle is merged across runs), so they go one after another.

    Raises:
        ValueError: a failure callback cannot be imported (``load_callback``).
    """
    callbacks = [load_callback(path) for path in settings.on_failure_callbacks]
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
            "execution_timeout": timedelta(minutes=settings.execution_timeout_minutes),
            "pool": settings.pool,
            **({"on_failure_callback": callbacks} if callbacks else {}),
        },
        render_template_as_native_obj=True,
        user_defined_macros={
            "kafka_audit_setting": setting,
            "kafka_audit_job_arguments": job_arguments,
            "kafka_audit_export_arguments": export_arguments,
        },
        tags=["kafka", "security", "spark"],
        doc_md=__doc__,
    ) as dag:
        run = _spark_submit(
            TASK_ID,
            settings,
            name="kafka-security-audit-{{ data_interval_start | ds }}",
            application_args=ARGS_TEMPLATE,
            outlets=gold_assets(),
            post_execute=record_asset_events,
        )
        if settings.export_ocsf:  # trigger rule all_success: only after a successful run
            run >> _spark_submit(
                EXPORT_TASK_ID,
                settings,
                name="kafka-security-audit-ocsf-{{ data_interval_start | ds }}",
                application_args=EXPORT_ARGS_TEMPLATE,
            )
    return dag


dag = build_dag(DagSettings.from_environment(os.environ))
