#!/usr/bin/env bash
# The Airflow tests (issue 8), one command: set up .venv (scripts/bootstrap.sh: spark-submit, the
# job's Python, Java) and .venv-airflow (scripts/airflow_env.sh), type-check the DAG and its tests
# in the Airflow environment (the main mypy cannot import airflow), then run tests_airflow with
# .venv-airflow's pytest: the DagBag integrity tests and an end-to-end `airflow dags test`.
# Extra arguments go to pytest. Called by scripts/test.sh; ruff there covers dags/ and tests too.
set -euo pipefail
scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$scripts/bootstrap.sh"
bash "$scripts/airflow_env.sh"
cd "$(dirname "$scripts")"
echo "== mypy (dags, tests_airflow; .venv-airflow)"
# Caches of their own: scripts/test.sh runs this beside the main suite's mypy and pytest.
.venv-airflow/bin/mypy --cache-dir .mypy_cache/airflow dags/kafka_security_audit.py tests_airflow
echo "== pytest tests_airflow (.venv-airflow)"
set +e
.venv-airflow/bin/pytest -o cache_dir=.pytest_cache/airflow tests_airflow "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no Airflow tests: failing on purpose" >&2
  exit 1
fi
exit "$status"
