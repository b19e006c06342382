"""Airflow tests: run with .venv-airflow (scripts/test_airflow.sh), never with the main .venv.

Every test session gets its own throwaway AIRFLOW_HOME (importing Airflow creates it), and the
DAG's own settings (``KAFKA_AUDIT_DAG_*``, ``AIRFLOW_VAR_KAFKA_AUDIT_*``) are cleared, so the
tests see the documented defaults whatever the caller's environment holds.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DAGS_DIR = PROJECT_ROOT / "dags"
#: The job's JVM time zone and locale (``jobs.session.JVM_LOCALE_OPTIONS``), the DAG's default
#: driver JVM options (``DRIVER_JAVA_OPTIONS``).
LOCALE = "-Duser.timezone=UTC -Duser.language=en -Duser.country=US"
DAG_FILE = DAGS_DIR / "kafka_security_audit.py"
MAIN_PYTHON = PROJECT_ROOT / ".venv" / "bin" / "python"

_CLEARED_PREFIXES = ("KAFKA_AUDIT_DAG_", "KAFKA_AUDIT_SPARK_", "AIRFLOW_VAR_KAFKA_AUDIT_")


def pytest_configure(config: pytest.Config) -> None:
    """Isolate Airflow before any test module imports it."""
    home = tempfile.mkdtemp(prefix="ksa-airflow-home-")
    config.stash[_HOME] = home
    os.environ["AIRFLOW_HOME"] = home
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS_DIR)
    for name in [n for n in os.environ if n.startswith(_CLEARED_PREFIXES)]:
        del os.environ[name]


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(config.stash.get(_HOME, ""), ignore_errors=True)


_HOME = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def dag_module() -> ModuleType:
    """The DAG file imported as a module (its ``build_dag``, ``DagSettings``, ``job_arguments``)."""
    spec = importlib.util.spec_from_file_location("kafka_security_audit_dag", DAG_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def main_python() -> Path:
    """The main .venv's interpreter (pyspark, the project): the job's Python and spark-submit's."""
    if not MAIN_PYTHON.exists():
        pytest.fail(f"{MAIN_PYTHON} is missing: run scripts/bootstrap.sh first")
    return MAIN_PYTHON
