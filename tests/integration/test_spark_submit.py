"""The real ``spark-submit`` of the installed pyspark runs the packaged pipeline (issue 8).

``scripts/package.sh`` builds the wheel, the ``--py-files`` zip and the driver; the test submits
``dist/submit.py run`` with ``--master local[2] --py-files dist/kafka_security_audit.zip`` from a
folder outside the repository, on the bundled samples plus a broker folder whose request log
leaks secrets (the inputs of ``tests/integration/test_pipeline.py``), and reads the Delta tables back with
deltalake.

Proof that the zip is what runs: the driver's and the workers' Python is this environment's
interpreter started with ``-S`` (no site initialisation, so the editable install of the project,
a ``.pth`` finder in site-packages, never loads) and site-packages only on ``PYTHONPATH``: the
third-party packages import, the project does not. The same submit without ``--py-files``
fails with ``No module named 'jobs'``; with the zip it writes every table.

The helpers are shared with ``tests/integration/test_standalone_cluster.py``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from jobs import jvm_parsers, jvm_startup
from jobs.config import SourceSpec
from jobs.inputs import discover_sources
from jobs.java import find_java_home
from jobs.pipeline import input_bytes
from jobs.session import JVM_LOCALE_OPTIONS
from tests.integration.test_pipeline import (
    AUTH_BYTES,
    BAD_LINES,
    HMAC_B64,
    HMAC_BYTES,
    SECRET_LINES,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("jobs", "transforms", "schemas")
SUBMIT_TIMEOUT_S = 1800  # a bound for a hung JVM, not a performance assertion

# Rows per table for samples/ plus the broker-7 folder. The bronze, silver, quarantine and
# security_metrics counts are those tests/integration/test_pipeline.py hand-counts for the same inputs; the
# gold tables' are what the in-process pipeline writes for them.
EXPECTED_ROWS = {
    "raw_lines": 31 + 4 + 4,  # broker-7's stray-bytes line is a record of its own (docs/layouts.md)
    "authz_decisions": 12,
    "auth_events": 10 + 1,
    "request_events": 2 + 4,
    "token_events": 3,
    "connect_requests": 6,
    "quarantine": 2,
    "security_metrics": 14 + 4 + 2 + 4,
    "reauth_sessions": 3,
    "reauth_readiness": 4,
    "token_lifecycle": 2,
    "forwarded_requests": 5,
    "authorizer_readiness": 0,
    "connect_internal_requests": 1,
    "connect_session_keys": 0,
    "findings": 3,
}
SECRETS = (HMAC_B64, AUTH_BYTES, HMAC_BYTES, "foobar-secret-hmac", "102, 111, 111")


def build_package(dist: Path) -> dict[str, Path]:
    """Runs ``scripts/package.sh`` into ``dist``.

    Args:
        dist: output folder (``DIST_DIR``).

    Returns:
        The built files: ``wheel``, ``zip`` and ``driver`` (``submit.py``).
    """
    env = {**os.environ, "DIST_DIR": str(dist), "PYTHON": sys.executable}
    subprocess.run(["bash", str(ROOT / "scripts" / "package.sh")], env=env, check=True)
    wheels = sorted(dist.glob("kafka_security_audit-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    return {
        "wheel": wheels[0],
        "zip": dist / "kafka_security_audit.zip",
        "driver": dist / "submit.py",
    }


def isolated_python(folder: Path) -> Path:
    """Writes an interpreter wrapper that has this environment's third-party packages but not
    the project: ``python -S`` skips site-packages' ``.pth`` files (the editable install's
    finder), and site-packages comes back through ``PYTHONPATH``, after Spark's own entries.

    Args:
        folder: where to write the wrapper.

    Returns:
        The executable wrapper, for ``PYSPARK_PYTHON`` / ``PYSPARK_DRIVER_PYTHON``.
    """
    site = sysconfig.get_paths()["purelib"]
    wrapper = folder / "python-without-project"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} -S "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return wrapper


def secret_broker(folder: Path) -> Path:
    """Writes the broker-7 folder of ``tests/integration/test_pipeline.py`` (a request log with token HMACs
    and SASL auth bytes, malformed server.log lines, node.id=7). Returns: the folder."""
    folder.mkdir(parents=True)
    (folder / "kafka-request.log").write_text("\n".join(SECRET_LINES) + "\n", encoding="utf-8")
    (folder / "server.properties").write_text("node.id=7\nprocess.roles=broker\n", encoding="utf-8")
    (folder / "server.log").write_bytes(b"\n".join(BAD_LINES) + b"\n")
    return folder


def spark_env(python: Path) -> dict[str, str]:
    """The environment for ``spark-submit`` and ``spark-class``: a Java 17/21 (``jobs.java``),
    loopback, and ``python`` for the driver and the workers."""
    found = find_java_home()
    assert found is not None, "no Java 17 or 21 (run scripts/bootstrap.sh)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    return env | {
        "JAVA_HOME": str(found[0]),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": str(python),
        "PYSPARK_DRIVER_PYTHON": str(python),
    }


def spark_submit(
    spark_args: Sequence[str], app_args: Sequence[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Runs the installed pyspark's ``spark-submit`` (beside this interpreter) and returns the
    finished process with its stdout and stderr."""
    command = [str(Path(sys.executable).parent / "spark-submit"), *spark_args, *app_args]
    return subprocess.run(
        command,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=SUBMIT_TIMEOUT_S,
        check=False,
    )


def small_input_jit(*inputs: Path) -> str:
    """The JIT options ``kafka-audit`` gives its own JVM for ``inputs`` (files or folders:
    ``jobs.jvm_startup.jit_options`` of their log files' bytes, as the CLI counts them; C1 only
    below 16 MiB), for the JVMs spark-submit starts. spark-submit starts the driver's JVM
    before the job runs, so only its command line can give them (docs/running.md, "Local").
    With HotSpot's defaults, C2 took 34% of this module's JVM CPU and 39% of the standalone
    cluster test's (issue 15, forty-second part)."""
    size = input_bytes(discover_sources([SourceSpec(str(path)) for path in inputs]))
    return " ".join(jvm_startup.jit_options("", size))


def run_args(driver: Path, broker: Path, lake: Path) -> list[str]:
    """The driver and its arguments: the pipeline on samples/ and ``broker``, embedded engine."""
    inputs = [str(ROOT / "samples"), str(broker)]
    return [str(driver), "run", "--input", *inputs, "--lake", str(lake), "--engine", "embedded"]


def check_lake(lake: Path) -> None:
    """Asserts the tables of a run on samples/ + broker-7: the table list, the rows per table, no
    secret in any table, and the secrets of broker 7's request log in bronze as fingerprints
    under the lake's key (recomputed here with the standard library)."""
    tables = {p.name for p in lake.iterdir() if (p / "_delta_log").is_dir()}
    assert tables == {*EXPECTED_ROWS, "run_coverage"}
    content = {name: DeltaTable(str(lake / name)).to_pyarrow_table() for name in tables}
    coverage = content.pop("run_coverage").to_pylist()
    assert {name: t.num_rows for name, t in content.items()} == EXPECTED_ROWS
    # One row per day of the records, none windowed (the run has no window).
    days = {d for d in content["raw_lines"].column("log_date").to_pylist() if d is not None}
    assert sorted(r["covered_date"] for r in coverage) == sorted(days)
    assert not [r for r in coverage if r["windowed"]]
    for name, table in content.items():
        text = repr(table.to_pylist())
        assert not [s for s in SECRETS if s in text], name
    key = (lake / "_kafka_audit" / "fingerprint.key").read_text(encoding="utf-8").strip()

    def fp(value: str) -> str:
        return hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()[:32]

    bronze: pa.Table = content["raw_lines"]
    found = sorted(
        (row["line_number"], m.group(1))
        for row in bronze.to_pylist()
        if row["node_id"] == "7" and row["source_path"].endswith("/kafka-request.log")
        for m in [re.search(r"(?:hmac|authBytes)\W+\[REDACTED hmac-sha256:(\w+)\]", row["message"])]
        if m
    )
    assert found == [(1, fp(HMAC_B64)), (2, fp(HMAC_B64)), (3, fp(AUTH_BYTES)), (4, fp(HMAC_BYTES))]


def scratch_folder() -> Iterator[Path]:
    """A private temporary folder, removed afterwards. Not pytest's ``tmp_path``: other pytest
    sessions on the machine prune old ``pytest-of-<user>`` folders, and a cluster run outlasts
    several of them. ``KAFKA_AUDIT_KEEP_TMP=1`` keeps it (logs, event log, lake) for debugging."""
    folder = Path(tempfile.mkdtemp(prefix="kafka-audit-submit-"))
    try:
        yield folder
    finally:
        if not os.environ.get("KAFKA_AUDIT_KEEP_TMP"):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    yield from scratch_folder()


@pytest.fixture(scope="module")
def package(scratch: Path) -> dict[str, Path]:
    return build_package(scratch / "dist")


@pytest.fixture(scope="module")
def workdir(scratch: Path) -> Path:
    """A working folder outside the repository, with the wrapper and the broker-7 inputs."""
    folder = scratch / "submit"
    folder.mkdir()
    assert ROOT not in folder.parents
    isolated_python(folder)
    secret_broker(folder / "broker-7")
    return folder


def _zip_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return sorted(archive.namelist())


def test_zip_holds_the_project_and_nothing_else(package: dict[str, Path]) -> None:
    names = _zip_names(package["zip"])
    # Only the three packages' sources (other files may appear in the checkout meanwhile).
    assert {n.split("/")[0] for n in names} == set(PACKAGES)
    # Python sources and the package data pyproject.toml lists: markers, the request log's
    # Java sources (compiled where the job runs), log4j2 settings, JIT directives, templates.
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]
    listed = {
        path.relative_to(ROOT).as_posix()
        for package, patterns in data.items()
        for pattern in patterns
        for path in (ROOT / package).glob(pattern)
    }
    assert {"jobs/templates/report.html.j2", "jobs/spark-log4j2.properties"} <= listed
    assert [n for n in names if not n.endswith(".py") and n not in listed] == []
    assert listed <= set(names)
    for java in ("StringFormParse.java", "JsonFormParse.java"):
        assert f"transforms/silver/request_log/native/{java}" in names
    assert [n for n in names if not (ROOT / n).is_file()] == []
    for package_name in PACKAGES:
        assert f"{package_name}/__init__.py" in names
        assert f"{package_name}/py.typed" in names
    assert {"jobs/cli/main.py", "jobs/pipeline.py", "jobs/lake/embedded.py"} <= set(names)
    assert package["driver"].read_bytes() == (ROOT / "jobs" / "submit.py").read_bytes()


def test_wheel_holds_what_the_zip_holds(package: dict[str, Path]) -> None:
    modules = [
        n for n in _zip_names(package["wheel"]) if not n.split("/")[0].endswith(".dist-info")
    ]
    assert modules == _zip_names(package["zip"])


def test_without_the_zip_the_driver_cannot_import_the_project(
    package: dict[str, Path], workdir: Path
) -> None:
    env = spark_env(workdir / "python-without-project")
    done = spark_submit(
        ["--master", "local[1]"],
        run_args(package["driver"], workdir / "broker-7", workdir / "no-lake"),
        env,
        workdir,
    )
    assert done.returncode != 0
    # spark-submit relays the Python driver's stderr on its stdout.
    assert "ModuleNotFoundError: No module named 'jobs'" in done.stdout + done.stderr
    assert not (workdir / "no-lake").exists()


def test_spark_submit_local_writes_the_tables(package: dict[str, Path], workdir: Path) -> None:
    env = spark_env(workdir / "python-without-project")
    lake = workdir / "lake"
    jit = small_input_jit(ROOT / "samples", workdir / "broker-7")
    assert jit == "-XX:TieredStopAtLevel=1"  # the docs' command for a small input
    # The driver's JVM: the JIT option and the job's locale options, as docs/running.md gives them.
    java_options = f"{jit} {JVM_LOCALE_OPTIONS}"
    assert f'--driver-java-options "{java_options}"' in (ROOT / "docs" / "running.md").read_text()
    spark_args = ["--master", "local[2]", "--driver-memory", "2g",
                  "--driver-java-options", java_options, "--py-files", str(package["zip"])]  # fmt: skip
    done = spark_submit(
        spark_args,
        run_args(package["driver"], workdir / "broker-7", lake),
        env,
        workdir,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "every line accounted for" in done.stdout
    assert "engine: embedded" in done.stdout
    # The JVM functions were built against spark-submit's jars and added (under spark-submit
    # pyspark is read from a zip, beside which there is no jars folder: they were not).
    assert jvm_parsers.FALLBACK not in done.stdout + done.stderr
    check_lake(lake)
