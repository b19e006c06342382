"""End to end: ``airflow dags test kafka_security_audit`` runs the real job with spark-submit.

A throwaway AIRFLOW_HOME with a migrated SQLite database, the ``spark_default`` connection pointing
at local mode, retries 0, the main .venv's ``spark-submit`` on PATH, and the failure Notifier
``tests_airflow.alerts.file_notifier`` as the tasks' ``on_failure_callback``.

- An unconfigured DAG fails before any spark-submit, naming the Variables to set.
- A job that fails (missing input) fails the DAG run.
- A late file: the run of 2026-11-21 covers [2026-11-20, 2026-11-21) of one controller's
  authorizer logs; on time, the day has no high finding: the task succeeds, the gold assets get
  their events and ``export_ocsf`` writes the day's OCSF events. Then the day's last rotated file
  arrives, with a super user that the node's ``super.users`` does not name (a high finding);
  the same day run again (``airflow dags test`` replaces the run, as ``airflow tasks clear``
  would) updates the day's tables and fails on ``--fail-on high`` (exit 4), once, without a
  retry, and the Notifier hears of it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests_airflow.conftest import DAGS_DIR, LOCALE, PROJECT_ROOT

AIRFLOW_BIN = Path(__file__).resolve().parent.parent / ".venv-airflow" / "bin"
AIRFLOW = AIRFLOW_BIN / "airflow"
GOLD_TABLES = {
    "reauth_sessions", "reauth_readiness", "token_lifecycle", "forwarded_requests",
    "authorizer_readiness", "connect_internal_requests", "connect_session_keys",
    "security_metrics", "findings",
}  # fmt: skip
BRONZE_SILVER_TABLES = {
    "raw_lines", "quarantine", "run_coverage", "auth_events", "authz_decisions",
    "request_events", "token_events", "connect_requests",
}  # fmt: skip
SPARK_SUBMIT_LOGGED = "Spark-Submit cmd:"
#: The driver JVM's options the tests give through the DAG's Variable.
DRIVER_OPTIONS = f"-XX:TieredStopAtLevel=1 {LOCALE}"
#: What the job logs when its JVM functions are not added (``jobs.jvm_parsers.FALLBACK``; this
#: environment cannot import the job).
NO_JVM_FUNCTIONS = "Spark expressions parse the request log"

# One KRaft controller: its config and its authorizer's hourly files (Kafka's own layout).
SERVER_PROPERTIES = """\
node.id=3000
process.roles=controller
controller.listener.names=CONTROLLER
listeners=CONTROLLER://:9094
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:platform-admin
"""
ON_TIME_NAME = "kafka-authorizer.log.2026-11-20-00"
ON_TIME = """\
[2026-11-20 00:39:20,245] DEBUG Principal = User:platform-admin is Allowed operation = ALTER_CONFIGS from host = 10.50.2.45 on resource = Topic:LITERAL:clicks-88 for request = IncrementalAlterConfigs with resourceRefCount = 1 based on rule SuperUser (kafka.authorizer.logger)
[2026-11-20 00:46:39,321] INFO Principal = User:team-b-admin is Denied operation = DELETE from host = 10.50.2.142 on resource = Topic:LITERAL:shared-events-40 for request = DeleteTopics with resourceRefCount = 1 based on rule DefaultDeny (kafka.authorizer.logger)
[2026-11-21 00:00:01,000] INFO Principal = User:team-b-admin is Denied operation = DELETE from host = 10.50.2.142 on resource = Topic:LITERAL:shared-events-41 for request = DeleteTopics with resourceRefCount = 1 based on rule DefaultDeny (kafka.authorizer.logger)
"""  # noqa: E501  (the third line is the next day's: outside the data interval)
LATE_NAME = "kafka-authorizer.log.2026-11-20-23"
LATE = """\
[2026-11-20 23:48:46,238] DEBUG Principal = User:legacy-admin is Allowed operation = CREATE from host = 10.50.2.205 on resource = Topic:LITERAL:payments-56 for request = CreateTopics with resourceRefCount = 1 based on rule SuperUser (kafka.authorizer.logger)
"""  # noqa: E501

# Reads the lake with deltalake in the main .venv (the Airflow environment has no deltalake).
# Ends with os._exit: the deltalake/pyarrow native threads occasionally abort the interpreter's
# own shutdown ("terminate called without an active exception", SIGABRT; delta-rs issue 2184),
# after the JSON was printed whole (seen once in CI-like runs of this test). The assertions
# read the JSON, which must still parse.
READ_LAKE = """
import json, os, sys
from pathlib import Path
from deltalake import DeltaTable
lake = Path(sys.argv[1])
out = {"tables": sorted(p.parent.name for p in lake.glob("*/_delta_log"))}
for name in ("raw_lines", "authz_decisions", "findings"):
    rows = DeltaTable(str(lake / name)).to_pyarrow_table().to_pylist()
    out[name] = rows
    del rows
print(json.dumps(out, default=str))
sys.stdout.flush()
os._exit(0)
"""

# The asset events in Airflow's database: asset name -> the extras of its events.
READ_ASSET_EVENTS = """
import json
from sqlalchemy import select
from airflow.models.asset import AssetEvent, AssetModel
from airflow.utils.session import create_session
with create_session() as session:
    query = select(AssetModel.name, AssetEvent.extra)
    rows = session.execute(query.join(AssetEvent, AssetEvent.asset_id == AssetModel.id)).all()
events = {}
for name, extra in rows:
    events.setdefault(name, []).append(extra)
print(json.dumps(events))
"""


def _java_home(main_python: Path) -> str:
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    found = subprocess.run(
        [str(main_python), "-m", "jobs.java"], capture_output=True, text=True, check=False
    )
    if found.returncode != 0:
        pytest.fail(f"no Java 17/21 for spark-submit: {found.stderr.strip()}")
    return found.stdout.strip()


@pytest.fixture(scope="module")
def airflow_env(main_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of the ``airflow`` commands, with a migrated database."""
    home = tmp_path_factory.mktemp("airflow-home")
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AIRFLOW", "KAFKA_AUDIT_"))
    }
    env.update(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS_DIR),
        AIRFLOW_CONN_SPARK_DEFAULT=json.dumps({"conn_type": "spark", "host": "local[2]"}),
        KAFKA_AUDIT_DAG_RETRIES="0",
        # Data intervals before the start date would make a "successful" run of no task.
        KAFKA_AUDIT_DAG_START_DATE="2020-01-01",
        # The tests' Notifier (tests_airflow.alerts), importable from the project root.
        KAFKA_AUDIT_DAG_ON_FAILURE_CALLBACK="tests_airflow.alerts.file_notifier",
        PYTHONPATH=str(PROJECT_ROOT),
        JAVA_HOME=_java_home(main_python),
        SPARK_LOCAL_IP="127.0.0.1",
        # The driver JVM spark-submit starts gets the JIT choice kafka-audit gives its own on a
        # small input (jobs.jvm_startup.jit_options: C1 only below 16 MiB; docs/running.md)
        # beside the job's locale, through the DAG's Variable (docs/airflow.md): with HotSpot's
        # defaults C2 took about 37% of these JVMs' CPU, beside the main suite (issue 15,
        # forty-second part).
        AIRFLOW_VAR_KAFKA_AUDIT_DRIVER_JAVA_OPTIONS=DRIVER_OPTIONS,
        # spark-submit prints the driver JVM's command line: the tests read the options there.
        SPARK_PRINT_LAUNCH_COMMAND="1",
        PATH=f"{main_python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    migrate = subprocess.run(
        [str(AIRFLOW), "db", "migrate"], env=env, capture_output=True, text=True, check=False
    )
    assert migrate.returncode == 0, migrate.stdout[-3000:] + migrate.stderr[-3000:]
    return env


def _dags_test(
    env: dict[str, str], day: str, settings: dict[str, str] | None = None, **variables: str
) -> subprocess.CompletedProcess[str]:
    run_env = {
        **env,
        **(settings or {}),
        **{f"AIRFLOW_VAR_{name.upper()}": value for name, value in variables.items()},
    }
    return subprocess.run(
        [str(AIRFLOW), "dags", "test", "kafka_security_audit", day],
        env=run_env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1500,
    )


def _read_lake(main_python: Path, lake: Path) -> dict[str, Any]:
    read = subprocess.run(
        [str(main_python), "-c", READ_LAKE, str(lake)], capture_output=True, text=True, check=False
    )
    assert read.returncode == 0, read.stderr[-3000:]
    result: dict[str, Any] = json.loads(read.stdout)
    return result


def _asset_events(env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    read = subprocess.run(
        [str(AIRFLOW_BIN / "python"), "-c", READ_ASSET_EVENTS],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert read.returncode == 0, read.stderr[-3000:]
    events: dict[str, list[dict[str, Any]]] = json.loads(read.stdout.strip().splitlines()[-1])
    return events


def _alerts(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_unconfigured_dag_fails_before_spark_submit(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    alerts = tmp_path / "alerts.jsonl"
    run = _dags_test(airflow_env, "2023-01-20", {"KSA_TEST_ALERTS": str(alerts)})
    output = run.stdout + run.stderr
    message = (
        "kafka_security_audit is not configured (or set kafka_audit_conf): set the Airflow "
        "Variables kafka_audit_input and kafka_audit_lake; see docs/airflow.md"
    )
    assert run.returncode == 1, output[-5000:]
    assert message in output and SPARK_SUBMIT_LOGGED not in output, output[-5000:]
    assert _alerts(alerts) == [
        {"dag_id": "kafka_security_audit", "task_id": "run_pipeline", "ds": "2023-01-20",
         "exception": message}
    ]  # fmt: skip


def test_a_failing_job_fails_the_dag_run(airflow_env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-logs"
    run = _dags_test(
        airflow_env,
        "2023-01-20",
        kafka_audit_input=str(missing),
        kafka_audit_lake=str(tmp_path / "lake"),
    )
    output = run.stdout + run.stderr
    assert run.returncode == 1, output[-5000:]
    assert "kafka-audit: " in output and str(missing) in output, output[-5000:]
    assert output.count(SPARK_SUBMIT_LOGGED) == 1, output[-5000:]
    assert not (tmp_path / "lake").exists()


def _raw_lines(tables: dict[str, Any]) -> list[tuple[str, int, str]]:
    return sorted(
        (Path(row["source_path"]).name, row["line_number"], row["log_date"])
        for row in tables["raw_lines"]
    )


def _write_logs(node: Path, *files: tuple[str, str]) -> None:
    node.mkdir(parents=True, exist_ok=True)
    for name, text in (("server.properties", SERVER_PROPERTIES), *files):
        (node / name).write_text(text, encoding="utf-8")


def test_a_day_rerun_with_its_late_file(
    airflow_env: dict[str, str], main_python: Path, tmp_path: Path
) -> None:
    logs, lake, ocsf, alerts = (tmp_path / n for n in ("logs", "lake", "ocsf", "alerts.jsonl"))
    _write_logs(logs / "controller-1", (ON_TIME_NAME, ON_TIME))
    variables = {
        "kafka_audit_input": str(logs),
        "kafka_audit_lake": str(lake),
        "kafka_audit_ocsf_out": str(ocsf),
    }
    settings = {"KAFKA_AUDIT_DAG_EXPORT_OCSF": "true", "KSA_TEST_ALERTS": str(alerts)}
    on_time = _dags_test(airflow_env, "2026-11-21", settings, **variables)
    output = on_time.stdout + on_time.stderr
    assert on_time.returncode == 0, output[-5000:]
    assert output.count(SPARK_SUBMIT_LOGGED) == 2, output[-5000:]  # run_pipeline, export_ocsf
    # Both drivers' JVMs got the Variable's options (spark-submit's launch command lines), and
    # the job its JVM functions.
    launched = [line for line in output.splitlines() if "Spark Command:" in line]
    assert len(launched) == 2 and all(DRIVER_OPTIONS in line for line in launched), launched
    assert NO_JVM_FUNCTIONS not in output, output[-5000:]

    tables = _read_lake(main_python, lake)
    assert set(tables["tables"]) == GOLD_TABLES | BRONZE_SILVER_TABLES
    run_ids = {row["run_id"] for row in tables["raw_lines"]}
    assert len(run_ids) == 1
    run_id = run_ids.pop()
    assert run_id.startswith("manual__") and run_id.endswith(".try1"), run_id
    # Only the data interval's day: not the third line (2026-11-21).
    assert _raw_lines(tables) == [(ON_TIME_NAME, 1, "2026-11-20"), (ON_TIME_NAME, 2, "2026-11-20")]
    assert [row["severity"] for row in tables["findings"]] == []
    # export_ocsf: the day's two authorization decisions as OCSF API Activity events.
    day = ocsf / "2026-11-20"
    api_activity = (day / "api_activity.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(event)["class_uid"] for event in api_activity) == [6003, 6003]
    assert (day / "authentication.jsonl").read_text(encoding="utf-8") == ""

    # The day's last rotated file arrives late: the same day again, with every file.
    _write_logs(logs / "controller-1", (LATE_NAME, LATE))
    late = _dags_test(
        airflow_env,
        "2026-11-21",
        {**settings, "KAFKA_AUDIT_DAG_RETRIES": "1", "KAFKA_AUDIT_DAG_RETRY_DELAY_MINUTES": "0"},
        **variables,
    )
    output = late.stdout + late.stderr
    failed = (
        "kafka-audit run found findings at or above high (exit 4); every table is written: "
        f"see the run summary above, or `kafka-audit report --lake {lake}`"
    )
    assert late.returncode == 1, output[-5000:]
    # One try (no retry on exit 4), and no export_ocsf after a failed run.
    assert failed in output and output.count(SPARK_SUBMIT_LOGGED) == 1, output[-5000:]
    assert _alerts(alerts) == [
        {"dag_id": "kafka_security_audit", "task_id": "run_pipeline", "ds": "2026-11-21",
         "exception": failed}
    ]  # fmt: skip

    tables = _read_lake(main_python, lake)
    assert _raw_lines(tables) == [
        (ON_TIME_NAME, 1, "2026-11-20"), (ON_TIME_NAME, 2, "2026-11-20"),
        (LATE_NAME, 1, "2026-11-20"),
    ]  # fmt: skip
    findings = [(row["rule_id"], row["severity"], row["subject"]) for row in tables["findings"]]
    assert findings == [("authorizer.super_user_not_in_config", "high", "User:legacy-admin")]
    assert len((day / "api_activity.jsonl").read_text(encoding="utf-8").splitlines()) == 2

    # Asset events: one per gold table, from the successful run only, with its lake and window.
    extra = {
        "lake": str(lake),
        "conf": None,
        "start": "2026-11-20T00:00:00+00:00",
        "end": "2026-11-21T00:00:00+00:00",
    }
    assert _asset_events(airflow_env) == {
        f"kafka_security_audit.{table}": [extra] for table in GOLD_TABLES
    }
