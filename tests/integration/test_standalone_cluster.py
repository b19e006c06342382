"""The pipeline on a real Spark standalone cluster on loopback: one master, two workers (issue 8).

The master and the workers are started from the installed pyspark with ``spark-class``
(``org.apache.spark.deploy.master.Master`` / ``...deploy.worker.Worker --cores 1 --memory 1g``);
the packaged driver is submitted with ``--master spark://127.0.0.1:P --py-files <zip>`` and the
embedded Delta engine, on the inputs of ``tests/integration/test_spark_submit.py``. The tables must match
the local run's. The application's event log shows where the tasks ran: on two executors (their
own JVMs), never in the driver, including the tasks that evaluate the project's secret
fingerprint, a JVM function of the jar the driver built and added (``jobs.jvm_parsers``: the
executors fetch it), and those of Spark's Parquet writer, which writes the embedded Delta
engine's files; and no task ran a Python UDF.

Every process the test starts is stopped by its id (also on failure), and the executors, which
the workers start, are found by a marker in their command line; the test then checks that no
process with the marker is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

from jobs import jvm_parsers
from jobs.session import JVM_LOCALE_OPTIONS
from tests.integration.test_spark_submit import (
    build_package,
    check_lake,
    isolated_python,
    run_args,
    scratch_folder,
    secret_broker,
    small_input_jit,
    spark_env,
    spark_submit,
)

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
REGISTER_TIMEOUT_S = 180.0  # bounds on waiting for JVMs, not performance assertions
STOP_TIMEOUT_S = 30.0
DAEMON_JIT = "-XX:TieredStopAtLevel=1"
#: The name bronze's fingerprint UDF has in plans (``transforms/bronze/native/Fingerprints.java``).
FINGERPRINT_FUNCTION = "kafka_audit_fingerprints"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _marked_pids(marker: str) -> list[int]:
    """Process ids whose command line contains ``marker`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the JVM's shutdown hooks run: a worker kills its executors), then SIGKILL."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT_S)


def _alive_workers(web_port: int) -> int:
    """Workers the master reports alive; 0 while its web UI is not up, or while it still answers
    ``/json/`` with its HTML page (seen once on CI, before the JSON handler was attached)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=5) as answer:
            state: dict[str, Any] = json.load(answer)
    except (OSError, json.JSONDecodeError):
        return 0
    return int(state.get("aliveworkers", 0))


@contextlib.contextmanager
def standalone_cluster(folder: Path, env: dict[str, str], marker: str) -> Iterator[str]:
    """Starts a master and two 1-core, 1 GiB workers on 127.0.0.1; stops them on exit.

    Args:
        folder: for the processes' logs and the workers' work dirs.
        env: base environment (Java, loopback); ``marker`` is added to every daemon's Java
            options.
        marker: a unique string that tags the JVMs of this cluster.

    Yields:
        The master URL, ``spark://127.0.0.1:P``, once both workers are registered.

    Raises:
        AssertionError: a daemon exited or the workers did not register in time.
    """
    daemon_env = env | {
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_DAEMON_MEMORY": "512m",
        # No REST submission server: it would take the fixed port 6066.
        # C1 only: the daemons do no audit work (issue 15, forty-second part).
        "SPARK_DAEMON_JAVA_OPTS": f"{marker} -Dspark.master.rest.enabled=false {DAEMON_JIT}",
    }
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, web_port = _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    commands = {
        "master": [
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
            "--port", str(port), "--webui-port", str(web_port),
        ],
        **{
            f"worker-{i}": [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                "--work-dir", str(folder / f"work-{i}"), master_url,
            ]
            for i in (1, 2)
        },
    }  # fmt: skip
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, args in commands.items():
            with (folder / f"{name}.log").open("wb") as log:
                processes[name] = subprocess.Popen(
                    [spark_class, *args], env=daemon_env, stdout=log, stderr=subprocess.STDOUT
                )
        deadline = time.monotonic() + REGISTER_TIMEOUT_S
        while _alive_workers(web_port) < 2:
            exited = [name for name, p in processes.items() if p.poll() is not None]
            assert not exited, f"{exited} exited; logs in {folder}"
            assert time.monotonic() < deadline, f"workers did not register; logs in {folder}"
            time.sleep(0.5)
        yield master_url
    finally:
        for name in sorted(processes, reverse=True):  # workers (and their executors) first
            _stop(processes[name])
        for pid in _marked_pids(marker):  # an executor a worker failed to stop
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


EVENT_KINDS = (
    "SparkListenerSQLExecutionStart",
    "SparkListenerJobStart",
    "SparkListenerTaskEnd",
    "SparkListenerExecutorAdded",
)


def _events(folder: Path) -> Iterator[dict[str, Any]]:
    """The listener events :func:`executors_by_plan` reads, of the one application logged in
    ``folder`` (plain JSON lines; the log is large, mostly plan updates, so it is streamed and
    other events are skipped before parsing)."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size > 0]
    assert len(files) == 1, files
    with files[0].open(encoding="utf-8") as log:
        for line in log:
            head = line[:120]  # '{"Event":"<kind>",...': the kind comes first
            if any(f'{kind}"' in head for kind in EVENT_KINDS):
                yield json.loads(line)


def executors_by_plan(events: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """Which executors ran successful tasks, overall and for SQL executions whose physical plan
    contains a given operator.

    Args:
        events: the application's event log (Spark listener events as JSON objects).

    Returns:
        ``{"executors": ids added, "all": ids that ran tasks, "pandas_udf": ids that ran tasks
        of executions whose plan has ``ArrowEvalPython``, "python_udf": the same for
        ``BatchEvalPython`` (a row-at-a-time Python UDF), "jvm_fingerprint": the same for
        ``kafka_audit_fingerprints`` (bronze's secret fingerprint, a JVM function),
        "delta_writer": the same for ``InsertIntoHadoopFsRelationCommand`` (Spark's Parquet
        writer, which the embedded Delta engine writes with)}``.
    """
    plans: dict[int, str] = {}
    stage_execution: dict[int, int] = {}
    tasks: list[tuple[int, str]] = []
    executors: set[str] = set()
    for event in events:
        kind = event["Event"]
        if kind.endswith("SparkListenerSQLExecutionStart"):
            plans[int(event["executionId"])] = event.get("physicalPlanDescription", "")
        elif kind == "SparkListenerJobStart":
            execution = (event.get("Properties") or {}).get("spark.sql.execution.id")
            for stage in event["Stage IDs"]:
                if execution is not None:
                    stage_execution[int(stage)] = int(execution)
        elif kind == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == "Success":
            tasks.append((int(event["Stage ID"]), event["Task Info"]["Executor ID"]))
        elif kind == "SparkListenerExecutorAdded":
            executors.add(event["Executor ID"])
    out = {"executors": executors, "all": {executor for _, executor in tasks}}
    operators = {
        "pandas_udf": "ArrowEvalPython",
        "python_udf": "BatchEvalPython",
        "jvm_fingerprint": FINGERPRINT_FUNCTION,
        "delta_writer": "InsertIntoHadoopFsRelationCommand",
    }
    for key, operator in operators.items():
        out[key] = {
            executor
            for stage, executor in tasks
            if operator in plans.get(stage_execution.get(stage, -1), "")
        }
    return out


@pytest.fixture
def marker() -> Iterator[str]:
    tag = f"-Dkafka.audit.test={uuid.uuid4().hex}"
    yield tag
    assert _marked_pids(tag) == [], "a JVM of the test cluster outlived the test"


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder()


def test_pipeline_on_a_standalone_cluster(scratch: Path, marker: str) -> None:
    tmp_path = scratch
    package = build_package(tmp_path / "dist")
    python = isolated_python(tmp_path)
    broker = secret_broker(tmp_path / "broker-7")
    env = spark_env(python)
    events, lake = tmp_path / "events", tmp_path / "lake"
    events.mkdir()
    # The driver's and the executors' JVMs get the CLI's JIT choice for this input, as
    # docs/running.md tells a spark-submit user to give it (C1 only on a small input); the
    # driver's also the job's locale options (the executors get them from the job).
    java_options = f"{marker} {small_input_jit(SAMPLES, broker)}"
    driver_options = f"{java_options} {JVM_LOCALE_OPTIONS}"
    with standalone_cluster(tmp_path, env, marker) as master_url:
        done = spark_submit(
            [
                "--master", master_url, "--driver-memory", "2g", "--executor-memory", "1g",
                "--py-files", str(package["zip"]),
                "--conf", "spark.driver.host=127.0.0.1",
                "--conf", f"spark.driver.defaultJavaOptions={driver_options}",
                "--conf", f"spark.executor.defaultJavaOptions={java_options}",
                "--conf", "spark.eventLog.enabled=true",
                "--conf", "spark.eventLog.compress=false",
                "--conf", "spark.eventLog.rolling.enabled=false",
                "--conf", f"spark.eventLog.dir={events.as_uri()}",
            ],
            run_args(package["driver"], broker, lake),
            env,
            tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
    assert "every line accounted for" in done.stdout
    # The driver built the JVM functions against spark-submit's jars and added them.
    assert jvm_parsers.FALLBACK not in done.stdout + done.stderr
    check_lake(lake)
    ran = executors_by_plan(_events(events))
    assert len(ran["executors"]) == 2, ran
    assert "driver" not in ran["all"]
    assert ran["all"] == ran["executors"], ran
    assert ran["jvm_fingerprint"], ran  # the fingerprint's JVM function ran in executors
    assert ran["pandas_udf"] == ran["python_udf"] == set(), ran  # and no Python UDF anywhere
    assert ran["delta_writer"], ran  # so did the Delta writer's tasks
    assert ran["jvm_fingerprint"] | ran["delta_writer"] <= ran["executors"], ran
