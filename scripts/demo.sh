#!/usr/bin/env bash
# README command 1: set up .venv, generate a small simulated cluster-day (generated/, with its
# ground truth in generated/truth/), and run the pipeline on it plus the bundled real sample
# lines (samples/). Prints the run summary; the Delta tables are under lake/. Safe to run again:
# the same seed writes the same corpus, and the run replaces its date partitions, never
# duplicating rows.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bootstrap.sh"
rm -rf generated
.venv/bin/kafka-audit generate --out generated --hours 6 --lines-target 10000 --seed 1 >&2
.venv/bin/kafka-audit run --conf conf/demo.toml "$@"
echo
echo "Delta tables: $(pwd)/lake/<table>"
echo "  report:    .venv/bin/kafka-audit report --lake lake"
echo "  OCSF:      .venv/bin/kafka-audit export-ocsf --lake lake --out ocsf"
echo "  notebooks: notebooks/ (they read lake/)"
