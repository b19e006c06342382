"""DagBag integrity of dags/kafka_security_audit.py, without a database.

The DAG parses without import errors, has its task (two with ``export_ocsf`` on), a daily cron
timetable with real UTC data intervals, the documented defaults and environment settings
(timeout, pool, failure callbacks, gold assets), and its templates render the data interval,
``--fail-on`` and the whole spark-submit command line. An unconfigured DAG, a bad
``kafka_audit_fail_on``, a mistyped setting and the job's exit 4 each fail with one line.
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pendulum
import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, Variable
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.sdk.execution_time.context import OutletEventAccessors
from airflow.serialization.encoders import coerce_to_core_timetable
from airflow.timetables.base import DataInterval, TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable

from tests_airflow import alerts
from tests_airflow.conftest import DAGS_DIR, LOCALE, PROJECT_ROOT

DAG_ID = "kafka_security_audit"
TASK_ID = "run_pipeline"
EXPORT_TASK_ID = "export_ocsf"
ROOT = str(PROJECT_ROOT)
PYTHON = f"{ROOT}/.venv/bin/python"
CONFIGURED = {"kafka_audit_input": "/logs/kafka", "kafka_audit_lake": "/data/lake"}
GOLD_TABLES = [
    "reauth_sessions", "reauth_readiness", "token_lifecycle", "forwarded_requests",
    "authorizer_readiness", "connect_internal_requests", "connect_session_keys",
    "security_metrics", "findings",
]  # fmt: skip
NOT_CONFIGURED = (
    "kafka_security_audit is not configured (or set kafka_audit_conf): set the Airflow "
    "Variables kafka_audit_input and kafka_audit_lake; see docs/airflow.md"
)


@pytest.fixture(scope="module")
def dagbag() -> DagBag:
    return DagBag(dag_folder=str(DAGS_DIR))


def _utc(year: int, month: int, day: int, hour: int = 0) -> pendulum.DateTime:
    return pendulum.datetime(year, month, day, hour, tz="UTC")


def _first_interval(dag: Any) -> DataInterval:
    """The first data interval the scheduler would create (catchup from start_date)."""
    timetable = coerce_to_core_timetable(dag.timetable)
    info = timetable.next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(earliest=dag.start_date, latest=None, catchup=True),
    )
    assert info is not None
    interval: DataInterval = info.data_interval
    return interval


def _render(
    dag: Any, interval: DataInterval, variables: dict[str, str], task_id: str = TASK_ID
) -> SparkSubmitOperator:
    task = dag.get_task(task_id)
    assert isinstance(task, SparkSubmitOperator)
    context: dict[str, Any] = {
        "data_interval_start": interval.start,
        "data_interval_end": interval.end,
        "run_id": "scheduled__2026-01-01T00:00:00+00:00",
        "ti": SimpleNamespace(try_number=2),
        "var": {"value": variables},
    }
    task.render_template_fields(context, jinja_env=dag.get_template_env())  # type: ignore[arg-type]
    return task


@pytest.fixture
def spark_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "local[*]"}')
    yield


def _command(task: SparkSubmitOperator) -> tuple[list[str], dict[str, str]]:
    hook = task._get_hook()
    return hook._build_spark_submit_command(task.application), hook._env or {}


def test_the_dag_file_parses_without_errors(dagbag: DagBag) -> None:
    assert dagbag.import_errors == {}
    assert dagbag.dag_ids == [DAG_ID]


def test_one_spark_submit_task_with_the_documented_defaults(dagbag: DagBag) -> None:
    dag = dagbag.dags[DAG_ID]
    assert [task.task_id for task in dag.tasks] == [TASK_ID]
    task = dag.get_task(TASK_ID)
    assert isinstance(task, SparkSubmitOperator)
    assert {
        "catchup": dag.catchup,
        "max_active_runs": dag.max_active_runs,
        "start_date": dag.start_date,
        "retries": task.retries,
        "retry_delay": task.retry_delay,
        "execution_timeout": task.execution_timeout,
        "pool": task.pool,
        "on_failure_callback": task.on_failure_callback,
        "conn_id": task._conn_id,
        "native templates": dag.render_template_as_native_obj,
    } == {
        "catchup": False,
        "max_active_runs": 1,
        "start_date": datetime(2026, 1, 1, tzinfo=UTC),
        "retries": 2,
        "retry_delay": timedelta(minutes=10),
        "execution_timeout": timedelta(hours=4),
        "pool": "default_pool",
        "on_failure_callback": [],
        "conn_id": "spark_default",
        "native templates": True,
    }


def test_the_gold_tables_are_the_tasks_outlets(dag_module: ModuleType, dagbag: DagBag) -> None:
    task = dagbag.dags[DAG_ID].get_task(TASK_ID)
    assert list(dag_module.GOLD_TABLES) == GOLD_TABLES
    assert task.outlets == [
        Asset(name=f"kafka_security_audit.{table}", group=DAG_ID) for table in GOLD_TABLES
    ]
    # Name-only assets: the URI is the name (the lake is a Variable, unknown at parse time).
    assert {(a.uri, a.group) for a in task.outlets} == {
        (f"kafka_security_audit.{t}", DAG_ID) for t in GOLD_TABLES
    }


def test_the_outlets_are_the_jobs_gold_tables(dag_module: ModuleType, main_python: Path) -> None:
    """The DAG cannot import the project (another environment): its list is checked against
    ``jobs.gold.registry.GOLD_TABLES`` (the builders' tables) + security_metrics + findings."""
    script = "from jobs.gold.registry import GOLD_TABLES; print(' '.join(GOLD_TABLES))"
    found = subprocess.run(
        [str(main_python), "-c", script], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0, found.stderr[-3000:]
    jobs_gold = [*found.stdout.split(), "security_metrics", "findings"]
    assert list(dag_module.GOLD_TABLES) == jobs_gold


@pytest.mark.parametrize(
    ("variables", "lake", "conf"),
    [
        ({**CONFIGURED, "kafka_audit_lake": " /data/lake "}, "/data/lake", None),
        ({"kafka_audit_conf": "/etc/a.toml"}, None, "/etc/a.toml"),
    ],
)
def test_each_asset_event_carries_the_runs_lake_and_window(
    dag_module: ModuleType, variables: dict[str, str], lake: str | None, conf: str | None
) -> None:
    dag = dag_module.build_dag(dag_module.DagSettings())
    task = _render(dag, DataInterval(_utc(2026, 11, 20), _utc(2026, 11, 21)), variables)
    events = OutletEventAccessors()
    task._post_execute_hook({"task": task, "outlet_events": events}, None)  # type: ignore[misc]
    expected = {
        "lake": lake,
        "conf": conf,
        "start": "2026-11-20T00:00:00+00:00",
        "end": "2026-11-21T00:00:00+00:00",
    }
    assert {asset.name: events[asset].extra for asset in task.outlets} == {
        f"kafka_security_audit.{table}": expected for table in GOLD_TABLES
    }


def test_the_schedule_is_a_daily_utc_cron_with_real_data_intervals(dagbag: DagBag) -> None:
    dag = dagbag.dags[DAG_ID]
    timetable = coerce_to_core_timetable(dag.timetable)
    assert isinstance(timetable, CronDataIntervalTimetable)
    assert dag.start_date is not None
    assert (timetable.summary, str(timetable._timezone)) == ("0 0 * * *", "UTC")
    # The first scheduled run covers the whole first day, and runs once it is over.
    first = timetable.next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(
            earliest=pendulum.instance(dag.start_date), latest=None, catchup=True
        ),
    )
    assert first is not None
    assert (first.data_interval, first.run_after) == (
        DataInterval(_utc(2026, 1, 1), _utc(2026, 1, 2)),
        _utc(2026, 1, 2),
    )
    # A manual run (airflow dags test DAG 2023-01-20) covers the day before its date.
    assert timetable.infer_manual_data_interval(run_after=_utc(2023, 1, 20, 5)) == DataInterval(
        _utc(2023, 1, 19), _utc(2023, 1, 20)
    )


def test_templates_render_the_data_interval_into_the_spark_submit_command(
    dag_module: ModuleType, spark_default: None
) -> None:
    dag = dag_module.build_dag(dag_module.DagSettings())
    task = _render(dag, _first_interval(dag), CONFIGURED)
    command, env = _command(task)
    assert command == [
        "spark-submit", "--master", "local[*]",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.driver.memory=4g",
        "--conf", f"spark.driver.defaultJavaOptions={LOCALE}",
        "--name", "kafka-security-audit-2026-01-01",
        f"{ROOT}/jobs/submit.py",
        "run", "--input", "/logs/kafka", "--lake", "/data/lake",
        "--start", "2026-01-01T00:00:00+00:00", "--end", "2026-01-02T00:00:00+00:00",
        "--run-id", "scheduled__2026-01-01T00:00:00+00:00.try2",
        "--fail-on", "high",
    ]  # fmt: skip
    assert env == {
        "PYSPARK_PYTHON": PYTHON,
        "PYSPARK_DRIVER_PYTHON": PYTHON,
        "PYTHONSAFEPATH": "yes",
    }


def test_the_default_driver_options_are_the_jobs_locale_options(dag_module: ModuleType) -> None:
    """The DAG cannot import the job (its environment has no pyspark): its default driver JVM
    options are read from ``jobs/session.py``'s source, so the two cannot drift apart."""
    source = ast.parse((PROJECT_ROOT / "jobs" / "session.py").read_text(encoding="utf-8"))
    values = [
        node.value.value
        for node in source.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["JVM_LOCALE_OPTIONS"]
        and isinstance(node.value, ast.Constant)
    ]
    assert values == [dag_module.DRIVER_JAVA_OPTIONS]


def test_variables_choose_the_config_inputs_lake_package_and_python(
    dag_module: ModuleType, spark_default: None
) -> None:
    dag = dag_module.build_dag(dag_module.DagSettings())
    variables = {
        "kafka_audit_conf": "/etc/kafka-audit/prod.toml",
        "kafka_audit_input": "/logs/cluster-a, /logs/cluster-b/*.log ,",
        "kafka_audit_lake": "s3a://audit/lake",
        "kafka_audit_fail_on": " Medium ",
        "kafka_audit_engine": "embedded",
        "kafka_audit_application": "/opt/ksa/dist/submit.py",
        "kafka_audit_py_files": "/opt/ksa/dist/kafka_security_audit.zip",
        "kafka_audit_python": "/opt/ksa/env/bin/python",
        "kafka_audit_driver_memory": "8g",
        "kafka_audit_driver_java_options": " -XX:TieredStopAtLevel=1 -Duser.language=tr ",
    }
    task = _render(dag, DataInterval(_utc(2026, 11, 20), _utc(2026, 11, 21)), variables)
    command, env = _command(task)
    assert command == [
        "spark-submit", "--master", "local[*]",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.driver.memory=8g",
        "--conf", "spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1 -Duser.language=tr",
        "--py-files", "/opt/ksa/dist/kafka_security_audit.zip",
        "--name", "kafka-security-audit-2026-11-20",
        "/opt/ksa/dist/submit.py",
        "run", "--conf", "/etc/kafka-audit/prod.toml",
        "--input", "/logs/cluster-a", "/logs/cluster-b/*.log",
        "--lake", "s3a://audit/lake", "--engine", "embedded",
        "--start", "2026-11-20T00:00:00+00:00", "--end", "2026-11-21T00:00:00+00:00",
        "--run-id", "scheduled__2026-01-01T00:00:00+00:00.try2",
        "--fail-on", "medium",
    ]  # fmt: skip
    python = "/opt/ksa/env/bin/python"
    assert env == {
        "PYSPARK_PYTHON": python,
        "PYSPARK_DRIVER_PYTHON": python,
        "PYTHONSAFEPATH": "yes",
    }


def test_a_config_file_alone_leaves_inputs_and_lake_to_it(dag_module: ModuleType) -> None:
    args = dag_module.job_arguments(
        _utc(2026, 11, 20), _utc(2026, 11, 21), "manual__x", 1, {"kafka_audit_conf": "a.toml"}
    )
    assert args == [
        "run", "--conf", "a.toml",
        "--start", "2026-11-20T00:00:00+00:00", "--end", "2026-11-21T00:00:00+00:00",
        "--run-id", "manual__x.try1", "--fail-on", "high",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [("low", ["--fail-on", "low"]), ("HIGH", ["--fail-on", "high"]), ("", ["--fail-on", "high"]),
     ("none", []), (" None ", [])],
)  # fmt: skip
def test_kafka_audit_fail_on_sets_the_jobs_threshold(
    dag_module: ModuleType, value: str, expected: list[str]
) -> None:
    variables = {**CONFIGURED, "kafka_audit_fail_on": value}
    args = dag_module.job_arguments(_utc(2026, 11, 20), _utc(2026, 11, 21), "m", 1, variables)
    assert args[args.index("--run-id") + 2 :] == expected


@pytest.mark.parametrize(
    ("value", "hint"),
    [("hgih", "; did you mean high?"), ("meduim", "; did you mean medium?"),
     ("critical", ""), ("info", "")],
)  # fmt: skip
def test_a_bad_threshold_fails_the_task_with_the_nearest_value(
    dag_module: ModuleType, value: str, hint: str
) -> None:
    variables = {**CONFIGURED, "kafka_audit_fail_on": value}
    message = (
        f"Airflow Variable kafka_audit_fail_on: {value!r} is not one of low, medium, high, "
        f"none{hint}"
    )
    with pytest.raises(AirflowFailException) as raised:
        dag_module.job_arguments(_utc(2026, 11, 20), _utc(2026, 11, 21), "m", 1, variables)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("variables", "missing"),
    [
        ({}, "Variables kafka_audit_input and kafka_audit_lake"),
        ({"kafka_audit_input": " , ,", "kafka_audit_lake": " "},
         "Variables kafka_audit_input and kafka_audit_lake"),
        ({"kafka_audit_input": "/logs"}, "Variable kafka_audit_lake"),
        ({"kafka_audit_lake": "/lake", "kafka_audit_engine": "native"},
         "Variable kafka_audit_input"),
    ],
)  # fmt: skip
def test_an_unconfigured_dag_fails_naming_the_variables_to_set(
    dag_module: ModuleType, variables: dict[str, str], missing: str
) -> None:
    message = (
        "kafka_security_audit is not configured (or set kafka_audit_conf): set the Airflow "
        f"{missing}; see docs/airflow.md"
    )
    with pytest.raises(AirflowFailException) as raised:
        dag_module.job_arguments(_utc(2026, 11, 20), _utc(2026, 11, 21), "m", 1, variables)
    assert str(raised.value) == message


def test_an_unconfigured_dag_fails_when_its_templates_render(dag_module: ModuleType) -> None:
    dag = dag_module.build_dag(dag_module.DagSettings())
    with pytest.raises(AirflowFailException) as raised:
        _render(dag, DataInterval(_utc(2026, 11, 20), _utc(2026, 11, 21)), {})
    assert str(raised.value) == NOT_CONFIGURED


def test_a_mistyped_variable_in_the_environment_fails_the_task(dag_module: ModuleType) -> None:
    def arguments(environ: dict[str, str]) -> list[str]:
        result: list[str] = dag_module.job_arguments(
            _utc(2026, 11, 20), _utc(2026, 11, 21), "m", 1, CONFIGURED, environ=environ
        )
        return result

    with pytest.raises(AirflowFailException) as raised:
        arguments({"AIRFLOW_VAR_KAFKA_AUDIT_FAILON": "low"})
    assert str(raised.value) == (
        "AIRFLOW_VAR_KAFKA_AUDIT_FAILON: not a Variable of the kafka_security_audit DAG; "
        "did you mean AIRFLOW_VAR_KAFKA_AUDIT_FAIL_ON?"
    )
    with pytest.raises(AirflowFailException, match=r"^AIRFLOW_VAR_KAFKA_AUDIT_X: not a Var"):
        arguments({"AIRFLOW_VAR_KAFKA_AUDIT_X": "1"})
    known = {"AIRFLOW_VAR_KAFKA_AUDIT_FAIL_ON": "low", "AIRFLOW_VAR_OTHER_DAG_SETTING": "x"}
    assert arguments(known)[:3] == ["run", "--input", "/logs/kafka"]


def test_a_run_without_data_interval_fails_with_one_line(dag_module: ModuleType) -> None:
    no_interval = r"^kafka_security_audit: the run has no data interval start;"
    with pytest.raises(ValueError, match=no_interval):
        dag_module.job_arguments(None, None, "manual__x", 1, CONFIGURED)
    with pytest.raises(KeyError, match="kafka_audit_lak: not a Variable"):
        dag_module.setting({}, "kafka_audit_lak")


def _fails_with(task: Any, monkeypatch: pytest.MonkeyPatch, message: str) -> BaseException:
    def spark_submit_failed(self: SparkSubmitOperator, context: Any) -> None:
        raise AirflowException(message)

    monkeypatch.setattr(SparkSubmitOperator, "execute", spark_submit_failed)
    with pytest.raises(AirflowException) as raised:
        task.execute({})
    return raised.value


def test_exit_4_fails_the_task_without_retries_and_says_why(
    dag_module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = dag_module.build_dag(dag_module.DagSettings()).get_task(TASK_ID)
    task.application_args = ["run", "--lake", "/data/lake", "--fail-on", "medium"]
    error = _fails_with(task, monkeypatch, "Cannot execute: spark-submit ... Error code is: 4.")
    assert type(error) is AirflowFailException
    assert str(error) == (
        "kafka-audit run found findings at or above medium (exit 4); every table is written: "
        "see the run summary above, or `kafka-audit report --lake /data/lake`"
    )
    # Any other exit code stays an ordinary failure, retried as configured.
    for code in ("1", "3", "44"):
        message = f"Cannot execute: spark-submit ... Error code is: {code}."
        other = _fails_with(task, monkeypatch, message)
        assert (type(other), str(other)) == (AirflowException, message)


def test_environment_settings_shape_the_dag(dag_module: ModuleType) -> None:
    settings = dag_module.DagSettings.from_environment(
        {
            "KAFKA_AUDIT_DAG_CATCHUP": "True",
            "KAFKA_AUDIT_DAG_RETRIES": "0",
            "KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES": "3",
            "KAFKA_AUDIT_DAG_START_DATE": "2025-06-01",
            "KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES": "90",
            "KAFKA_AUDIT_DAG_POOL": "kafka_audit",
            "KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK": " tests_airflow.alerts.file_notifier ,",
            "KAFKA_AUDIT_SPARK_CONN_ID": "spark_local",
            "KAFKA_AUDIT_UNRELATED": "x",
        }
    )
    dag = dag_module.build_dag(settings)
    task = dag.get_task(TASK_ID)
    assert (dag.catchup, dag.start_date, task.retries, task.retry_delay, task._conn_id) == (
        True,
        datetime(2025, 6, 1, tzinfo=UTC),
        0,
        timedelta(minutes=3),
        "spark_local",
    )
    assert (task.execution_timeout, task.pool, task.on_failure_callback) == (
        timedelta(minutes=90),
        "kafka_audit",
        [alerts.file_notifier],
    )
    assert dag_module.DagSettings.from_environment({"KAFKA_AUDIT_DAG_RETRIES": " "}) == (
        dag_module.DagSettings()
    )


def test_export_ocsf_follows_the_pipeline_when_switched_on(
    dag_module: ModuleType, spark_default: None
) -> None:
    settings = dag_module.DagSettings.from_environment(
        {"KAFKA_AUDIT_DAG_EXPORT_OCSF": "1", "KAFKA_AUDIT_DAG_POOL": "kafka_audit"}
    )
    dag = dag_module.build_dag(settings)
    export = dag.get_task(EXPORT_TASK_ID)
    assert (sorted(dag.task_ids), export.upstream_task_ids, export.trigger_rule) == (
        [EXPORT_TASK_ID, TASK_ID],
        {TASK_ID},
        "all_success",
    )
    assert (export.pool, export.execution_timeout, export.outlets) == (
        "kafka_audit",
        timedelta(hours=4),
        [],
    )
    variables = {**CONFIGURED, "kafka_audit_ocsf_out": "/data/ocsf/"}
    task = _render(
        dag, DataInterval(_utc(2026, 11, 20), _utc(2026, 11, 21)), variables, EXPORT_TASK_ID
    )
    command, _ = _command(task)
    assert command == [
        "spark-submit", "--master", "local[*]",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.driver.memory=4g",
        "--conf", f"spark.driver.defaultJavaOptions={LOCALE}",
        "--name", "kafka-security-audit-ocsf-2026-11-20",
        f"{ROOT}/jobs/submit.py",
        "export-ocsf", "--lake", "/data/lake", "--start", "2026-11-20", "--end", "2026-11-21",
        "--out", "/data/ocsf/2026-11-20",
    ]  # fmt: skip


def test_export_ocsf_needs_a_lake_and_an_output_folder(dag_module: ModuleType) -> None:
    start, end = _utc(2026, 11, 20), _utc(2026, 11, 21)
    with pytest.raises(AirflowFailException) as raised:
        dag_module.export_arguments(start, end, {"kafka_audit_conf": "a.toml"})
    assert str(raised.value) == (
        "kafka_security_audit.export_ocsf is not configured: set the Airflow Variables "
        "kafka_audit_lake and kafka_audit_ocsf_out; see docs/airflow.md"
    )
    with pytest.raises(AirflowFailException, match=r"Variable kafka_audit_ocsf_out; see"):
        dag_module.export_arguments(start, end, CONFIGURED)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("KAFKA_AUDIT_DAG_RETRIES", "two", "'two' is not a whole number >= 0"),
        ("KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES", "-1", "'-1' is not a whole number >= 0"),
        ("KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES", "0", "'0' is not a whole number >= 1"),
        ("KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES", "4h", "'4h' is not a whole number >= 1"),
        ("KAFKA_AUDIT_DAG_CATCHUP", "maybe", "'maybe' is not true or false"),
        ("KAFKA_AUDIT_DAG_EXPORT_OCSF", "yes", "'yes' is not true or false"),
        ("KAFKA_AUDIT_DAG_START_DATE", "2025-13-01", "'2025-13-01' is not a date (2026-01-01)"),
        ("KAFKA_AUDIT_DAG_RETRYS", "0",
         "not a setting of the kafka_security_audit DAG; did you mean KAFKA_AUDIT_DAG_RETRIES?"),
        ("KAFKA_AUDIT_DAG_TIMEOUT", "60", "not a setting of the kafka_security_audit DAG; "
         "did you mean KAFKA_AUDIT_DAG_EXECUTION_TIMEOUT_MINUTES?"),
        ("KAFKA_AUDIT_DAG_SLACK", "1", "not a setting of the kafka_security_audit DAG"),
        ("KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK", "notify",
         "'notify' is not a dotted path (module.attribute)"),
        ("KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK", "tests_airflow.alerts.not_callable",
         "'tests_airflow.alerts.not_callable' is not callable (a function or a Notifier)"),
        ("KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK", "tests_airflow.alerts.file_notifer",
         "cannot import 'tests_airflow.alerts.file_notifer': module 'tests_airflow.alerts' has "
         "no attribute 'file_notifer'"),
        ("KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK", "no_such_module.notify",
         "cannot import 'no_such_module.notify': No module named 'no_such_module'"),
    ],
)  # fmt: skip
def test_a_bad_environment_setting_is_the_dag_files_import_error(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    errors = DagBag(dag_folder=str(DAGS_DIR)).import_errors
    assert list(errors) == [str(DAGS_DIR / "kafka_security_audit.py")]
    assert f"ValueError: {name}: {expected}\n" in next(iter(errors.values()))


def test_parsing_reads_no_variable_and_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("work at parse time")

    monkeypatch.setattr(Variable, "get", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    bag = DagBag(dag_folder=str(DAGS_DIR))
    assert (bag.import_errors, bag.dag_ids) == ({}, [DAG_ID])
