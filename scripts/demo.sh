#!/usr/bin/env bash
# README command 1: set up .venv and run the pipeline on the bundled sample corpus (samples/).
# Prints the run summary; the Delta tables are under lake/. Safe to run again: the same window
# is replaced, never duplicated.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bootstrap.sh"
.venv/bin/kafka-audit run --conf conf/demo.toml "$@"
echo
echo "Delta tables: $(pwd)/lake/<table>   (open one with: .venv/bin/python -c \"from deltalake import DeltaTable; print(DeltaTable('lake/authz_decisions').to_pandas())\")"
