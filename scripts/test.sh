#!/usr/bin/env bash
# README command 2 (and CI): set up .venv (and promtool, chromium: Debian packages), then lint
# (ruff), type-check (mypy), check the import
# rules (lint-imports) and test (pytest);
# then the Airflow DAG's tests in .venv-airflow (scripts/test_airflow.sh).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bootstrap.sh"
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
bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/test_airflow.sh"
