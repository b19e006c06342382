"""DagBag integrity of dags/kafka_security_audit.py, without a database.

The DAG parses without import errors, has its one task, a daily cron timetable with real UTC data
intervals, the documented defaults and environment settings, and its templates render the data
interval into the job's ``--start`` / ``--end`` and the whole spark-submit command line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType, SimpleNamespace
from typing import Any

import pendulum
import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Variable
from airflow.serialization.encoders import coerce_to_core_timetable
from airflow.timetables.base import DataInterval, TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable

from tests_airflow.conftest import DAGS_DIR, PROJECT_ROOT

DAG_ID = "kafka_security_audit"
TASK_ID = "run_pipeline"
ROOT = str(PROJECT_ROOT)
PYTHON = f"{ROOT}/.venv/bin/python"


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


def _render(dag: Any, interval: DataInterval, variables: dict[str, str]) -> SparkSubmitOperator:
    task = dag.get_task(TASK_ID)
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
        "conn_id": task._conn_id,
        "native templates": dag.render_template_as_native_obj,
    } == {
        "catchup": False,
        "max_active_runs": 1,
        "start_date": datetime(2026, 1, 1, tzinfo=UTC),
        "retries": 2,
        "retry_delay": timedelta(minutes=10),
        "conn_id": "spark_default",
        "native templates": True,
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
    dagbag: DagBag, spark_default: None
) -> None:
    dag = dagbag.dags[DAG_ID]
    task = _render(dag, _first_interval(dag), {})
    command, env = _command(task)
    assert command == [
        "spark-submit", "--master", "local[*]",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.driver.memory=4g",
        "--name", "kafka-security-audit-2026-01-01",
        f"{ROOT}/jobs/submit.py",
        "run", "--input", f"{ROOT}/samples", "--lake", f"{ROOT}/lake",
        "--start", "2026-01-01T00:00:00+00:00", "--end", "2026-01-02T00:00:00+00:00",
        "--run-id", "scheduled__2026-01-01T00:00:00+00:00.try2",
    ]  # fmt: skip
    assert env == {
        "PYSPARK_PYTHON": PYTHON,
        "PYSPARK_DRIVER_PYTHON": PYTHON,
        "PYTHONSAFEPATH": "yes",
    }


def test_variables_choose_the_config_inputs_lake_package_and_python(
    dag_module: ModuleType, spark_default: None
) -> None:
    dag = dag_module.build_dag(dag_module.DagSettings())
    variables = {
        "kafka_audit_conf": "/etc/kafka-audit/prod.toml",
        "kafka_audit_input": "/logs/cluster-a, /logs/cluster-b/*.log ,",
        "kafka_audit_lake": "s3a://audit/lake",
        "kafka_audit_engine": "embedded",
        "kafka_audit_application": "/opt/ksa/dist/submit.py",
        "kafka_audit_py_files": "/opt/ksa/dist/kafka_security_audit.zip",
        "kafka_audit_python": "/opt/ksa/env/bin/python",
        "kafka_audit_driver_memory": "8g",
    }
    task = _render(dag, DataInterval(_utc(2026, 11, 20), _utc(2026, 11, 21)), variables)
    command, env = _command(task)
    assert command == [
        "spark-submit", "--master", "local[*]",
        "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.driver.memory=8g",
        "--py-files", "/opt/ksa/dist/kafka_security_audit.zip",
        "--name", "kafka-security-audit-2026-11-20",
        "/opt/ksa/dist/submit.py",
        "run", "--conf", "/etc/kafka-audit/prod.toml",
        "--input", "/logs/cluster-a", "/logs/cluster-b/*.log",
        "--lake", "s3a://audit/lake", "--engine", "embedded",
        "--start", "2026-11-20T00:00:00+00:00", "--end", "2026-11-21T00:00:00+00:00",
        "--run-id", "scheduled__2026-01-01T00:00:00+00:00.try2",
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
        "--run-id", "manual__x.try1",
    ]  # fmt: skip


def test_a_run_without_data_interval_fails_with_one_line(dag_module: ModuleType) -> None:
    no_interval = r"^kafka_security_audit: the run has no data interval start;"
    with pytest.raises(ValueError, match=no_interval):
        dag_module.job_arguments(None, None, "manual__x", 1, {})
    with pytest.raises(KeyError, match="kafka_audit_lak: not a Variable"):
        dag_module.setting({}, "kafka_audit_lak")


def test_environment_settings_shape_the_dag(dag_module: ModuleType) -> None:
    settings = dag_module.DagSettings.from_environment(
        {
            "KAFKA_AUDIT_DAG_CATCHUP": "True",
            "KAFKA_AUDIT_DAG_RETRIES": "0",
            "KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES": "3",
            "KAFKA_AUDIT_DAG_START_DATE": "2025-06-01",
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
    assert dag_module.DagSettings.from_environment({"KAFKA_AUDIT_DAG_RETRIES": " "}) == (
        dag_module.DagSettings()
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("KAFKA_AUDIT_DAG_RETRIES", "two", "a whole number >= 0"),
        ("KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES", "-1", "a whole number >= 0"),
        ("KAFKA_AUDIT_DAG_CATCHUP", "maybe", "true or false"),
        ("KAFKA_AUDIT_DAG_START_DATE", "2025-13-01", "a date (2026-01-01)"),
    ],
)
def test_a_bad_environment_setting_is_the_dag_files_import_error(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    message = f"{name}: {value!r} is not {expected}"
    monkeypatch.setenv(name, value)
    errors = DagBag(dag_folder=str(DAGS_DIR)).import_errors
    assert list(errors) == [str(DAGS_DIR / "kafka_security_audit.py")]
    assert f"ValueError: {message}" in next(iter(errors.values()))


def test_parsing_reads_no_variable_and_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("work at parse time")

    monkeypatch.setattr(Variable, "get", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    bag = DagBag(dag_folder=str(DAGS_DIR))
    assert (bag.import_errors, bag.dag_ids) == ({}, [DAG_ID])
