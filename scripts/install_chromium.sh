#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for tests/integration/test_report_html.py (the HTML
# report rendered to a PNG and its DOM checked in a real browser). Idempotent: does nothing when
# /usr/bin/chromium exists. Needs root (or sudo) on Debian/Ubuntu; about 100 MB of packages.
# Measured on Debian bookworm (2 cores, busy): see docs/report-html.md.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown version))"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: no apt-get here; install Chromium with this system's package manager" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# --no-install-recommends: no desktop extras (chromium-sandbox, fonts beyond the defaults, upower).
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium: installed $(/usr/bin/chromium --version 2>/dev/null || echo '(version unknown)')"
