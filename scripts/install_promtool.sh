#!/usr/bin/env bash
# Install promtool (Debian's `prometheus` package) for tests/integration/test_export_metrics.py:
# `promtool tsdb create-blocks-from openmetrics` backfills the export-metrics file into TSDB
# blocks and `promtool tsdb dump` reads them back. Without promtool that one test is skipped.
# Idempotent: does nothing when promtool is on PATH. Needs root (or sudo) on Debian/Ubuntu.
# Measured on Debian bookworm (2 cores, busy): 22.5 MB of packages, 332 MB on disk,
# about 17 s with the packages already downloaded; promtool 2.42.0 (docs/prometheus.md).
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  echo "promtool: already installed ($(promtool --version 2>&1 | head -n 1))"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "promtool: no apt-get here; install Prometheus's promtool with this system's package manager" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# --no-install-recommends: no node exporter, no web console extras.
$sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package also installs a Prometheus server, which systemd starts: only promtool is wanted.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  $sudo systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
echo "promtool: installed $(promtool --version 2>&1 | head -n 1)"
