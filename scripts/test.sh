#!/usr/bin/env bash
# README command 2 (and CI): set up .venv (and promtool, chromium: Debian packages), then lint
# (ruff), type-check (mypy), check the import
# rules (lint-imports) and test (pytest); beside them, the Airflow DAG's tests in .venv-airflow
# (scripts/test_airflow.sh).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bootstrap.sh"
# The Airflow tests (scripts/test_airflow.sh: .venv-airflow's set-up, a minute of pip on a fresh
# clone, then its mypy and pytest) run in the background, beside the checks and the main suite:
# their `airflow dags test` runs leave a core idle most of the time, and after the suite they
# were three minutes of a CI run on their own (issue 15). Their output is printed once the main
# suite is done, and their status counts as the main suite's does.
airflow_log="$(mktemp)"
airflow_tests=""
stop_airflow_tests() {  # on exit after a failed check or suite: the Airflow tests are stopped
  local status=$?
  if [ -n "$airflow_tests" ]; then
    if jobs -pr | grep -qx "$airflow_tests"; then
      kill -TERM -- "-$airflow_tests" 2>/dev/null || true
      echo "the Airflow tests were stopped, not reported: the checks or the main suite failed" >&2
    else
      echo "the Airflow tests ended but are not reported: the checks or the main suite failed" >&2
    fi
  fi
  rm -f "$airflow_log"
  return "$status"
}
trap stop_airflow_tests EXIT
set -m  # the Airflow tests get a process group of their own, so that they can be stopped whole
bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test_airflow.sh" </dev/null >"$airflow_log" 2>&1 &
airflow_tests=$!
set +m
# Real tools the tests drive where this machine can install them (Debian packages); a test whose
# tool is missing is skipped, saying why.
bash scripts/install_promtool.sh || echo "setup: promtool not installed: its backfill test will be skipped" >&2
bash scripts/install_chromium.sh || echo "setup: chromium not installed: the HTML report's browser tests will be skipped" >&2
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== import rules (lint-imports; [tool.importlinter] in pyproject.toml)"
.venv/bin/lint-imports --no-logo
echo "== pytest"
set +e
# Two workers, whole modules each (their module-scoped lakes and pipeline runs stay shared; the
# modules reading the session's samples lake go to one worker together, tests/conftest.py): a
# small run is mostly Spark planning on one thread, so one JVM leaves the second core idle.
.venv/bin/pytest -n 2 --dist loadfile "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
echo "== airflow (its own environment, .venv-airflow; run beside the main suite)"
airflow_status=0
wait "$airflow_tests" || airflow_status=$?
airflow_tests=""
cat "$airflow_log"
if [ "$airflow_status" -ne 0 ]; then
  echo "the Airflow tests (scripts/test_airflow.sh) failed with status $airflow_status" >&2
fi
exit "$airflow_status"
