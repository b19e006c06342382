#!/usr/bin/env bash
# Create .venv-airflow (once) and install Airflow 3 with the Spark provider into it, pinned by the
# committed constraints/airflow.txt; again only when that file or the list below changes.
# Airflow has its own environment: it pulls pandas 3 and pyspark-client (which shares the
# pyspark/ folder with pyspark), neither of which may touch the main .venv. The Spark job itself
# runs with the main .venv (scripts/bootstrap.sh): its spark-submit and its Python.
# Run it (bash scripts/airflow_env.sh) or source it; it changes nothing in .venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# What .venv-airflow holds; every version (and every transitive one) is pinned by the constraints.
airflow_requirements=(
  "apache-airflow==3.3.2"
  "apache-airflow-providers-apache-spark==6.3.4"
  "pytest==9.2.0"
  "mypy==2.4.1"
)

python_bin="${PYTHON:-python3}"
# (also when a set-up stopped half-way left it without pip: scripts/test.sh stops a set-up
# still running when it exits early)
if ! .venv-airflow/bin/python -m pip --version >/dev/null 2>&1; then
  echo "airflow setup: creating .venv-airflow with $("$python_bin" --version)"
  "$python_bin" -m venv --clear .venv-airflow
fi
stamp=.venv-airflow/.kafka-audit-airflow-installed
want="$( { cat constraints/airflow.txt; printf '%s\n' "${airflow_requirements[@]}"; } | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "airflow setup: installing Airflow into .venv-airflow from constraints/airflow.txt (first time: about a minute)"
  .venv-airflow/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv-airflow/bin/python -m pip install --quiet --disable-pip-version-check \
    -c constraints/airflow.txt "${airflow_requirements[@]}"
  echo "$want" > "$stamp"
fi
# (not `airflow version`: importing airflow creates ~/airflow when AIRFLOW_HOME is unset)
echo "airflow setup: apache-airflow $(.venv-airflow/bin/python -c \
  'import importlib.metadata as m; print(m.version("apache-airflow"))') in .venv-airflow"
