#!/usr/bin/env bash
# README command 2 (and CI): set up .venv (and promtool, chromium: Debian packages), then lint
# (ruff), type-check (mypy), check the import
# rules (lint-imports) and test (pytest);
# then the Airflow DAG's tests in .venv-airflow (scripts/test_airflow.sh).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bootstrap.sh"
# .venv-airflow (scripts/airflow_env.sh: a minute of pip on a fresh clone, nothing once set up) is
# set up in the background while the checks and the main suite run; its tests wait for it, and
# its output is printed then.
airflow_setup_log="$(mktemp)"
set -m  # the set-up gets a process group of its own, so that it can be stopped whole
bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/airflow_env.sh" </dev/null >"$airflow_setup_log" 2>&1 &
airflow_setup=$!
set +m
stop_airflow_setup() {  # on exit: a set-up still running (the suite failed) is stopped
  local status=$?
  if [ -n "$airflow_setup" ] && jobs -pr | grep -qx "$airflow_setup"; then
    kill -TERM -- "-$airflow_setup" 2>/dev/null || true
  fi
  rm -f "$airflow_setup_log"
  return "$status"
}
trap stop_airflow_setup EXIT
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
echo "== airflow (its own environment, .venv-airflow)"
setup_status=0
wait "$airflow_setup" || setup_status=$?
airflow_setup=""
cat "$airflow_setup_log"
if [ "$setup_status" -ne 0 ]; then
  echo "airflow setup (scripts/airflow_env.sh) failed with status $setup_status" >&2
  exit "$setup_status"
fi
bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test_airflow.sh"
