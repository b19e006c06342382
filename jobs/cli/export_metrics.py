"""``kafka-audit export-metrics``: a lake's security_metrics as an OpenMetrics file with
timestamps, for ``promtool tsdb create-blocks-from openmetrics`` (docs/prometheus.md).

Reads the gold table with deltalake, without Spark (``jobs.openmetrics``). The same lake,
window and ``--window`` give the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from typing import Any

from jobs.cli.arguments import day_window, instant, lake_location
from jobs.errors import InputError, UsageError
from jobs.neutralize import terminal

#: ``--out`` value that writes the exposition to stdout.
STDOUT = "-"
DESCRIPTION = """\
Write the security metrics of a lake (Kafka's authentication, re-authentication and
authorization metrics replayed from the logs) as OpenMetrics text with timestamps, for
promtool tsdb create-blocks-from openmetrics: backfill Prometheus with history from logs,
next to the live series of the JMX exporter. Names follow the JMX exporter's Kafka rules
(kafka_server_socket_server_metrics_failed_authentication_total); labels broker, listener,
mechanism, principal and api where the metric has them. Reads the gold table without Spark;
the same lake and window give the same file (docs/prometheus.md).

--start/--end take whole UTC days (2026-11-20 or 2026-11-20T00:00:00Z).
"""


def register(commands: Any) -> None:
    """Add the ``export-metrics`` subparser to ``commands`` (argparse's subparsers action)."""
    export = commands.add_parser(
        "export-metrics",
        help="write security metrics as OpenMetrics for a Prometheus backfill",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument(
        "--lake",
        required=True,
        type=lake_location,
        help="root folder of the Delta tables (local path or file:// URI)",
    )
    export.add_argument(
        "--out", required=True, metavar="FILE", help="OpenMetrics file to write ('-': stdout)"
    )
    export.add_argument(
        "--start",
        type=instant,
        metavar="DAY",
        help="first UTC day (2026-11-20 or 2026-11-20T00:00:00Z)",
    )
    export.add_argument(
        "--end", type=instant, metavar="DAY", help="day after the last, exclusive (2026-11-21)"
    )
    export.add_argument(
        "--window",
        choices=("1h", "1d"),
        default="1h",
        help="metric windows: one sample per hour or per day (default: 1h)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``export-metrics``: write the exposition to ``--out`` (or stdout) and one line on
    stderr saying what was written. Returns the exit code (0, also for an empty window: the
    file then holds ``# EOF`` only).

    Raises:
        UsageError: a bad --start / --end pair, or --out is a folder (exit 2).
        InputError: the lake or its security_metrics table is missing, a value the format
            cannot hold (see ``jobs.openmetrics.series_points``), or --out cannot be written.
    """
    from jobs.openmetrics import export_metrics  # noqa: PLC0415  (keeps the CLI's --help fast)
    from jobs.report import Window  # noqa: PLC0415

    days = day_window(args.start, args.end)
    if args.out != STDOUT and os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} is a folder: give a file name (metrics.om)")
    window = Window(days[0].date(), days[1].date()) if days else Window()
    export = export_metrics(args.lake, window, args.window)
    target = "stdout" if args.out == STDOUT else args.out
    if args.out == STDOUT:
        sys.stdout.write(export.text)
        sys.stdout.flush()
    else:
        write_file(args.out, export.text)
    where = f"{args.window} windows, {window.describe()}"
    if export.samples == 0:
        print(
            f"export-metrics: no security metrics ({where}): wrote an empty exposition "
            f"(# EOF only) to {terminal(target)}",
            file=sys.stderr,
        )
    else:
        print(
            f"export-metrics: {export.samples} samples of {export.series} series in "
            f"{export.families} metric families ({where}) -> {terminal(target)}",
            file=sys.stderr,
        )
    if export.skipped:
        names = ", ".join(f"{name} ({count})" for name, count in export.skipped.items())
        print(f"export-metrics: left out metrics with no Prometheus name: {names}", file=sys.stderr)
    return 0


def write_file(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` (UTF-8, mode 644) through a temporary file in the same
    folder, moved into place: the file is either the old one or the whole new one, never a
    partial write that promtool would read. Missing parent folders are created.

    Raises:
        InputError: the folder cannot be created or the file cannot be written (the OS's
            reason in the message).
    """
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115  (closed below, then moved)
            "w", encoding="utf-8", dir=folder, prefix=".export-metrics-", delete=False
        )
    except OSError as error:
        raise InputError(f"cannot write --out {path}: {error.strerror or error}") from error
    try:
        with handle:
            handle.write(text)
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.remove(handle.name)
        raise InputError(f"cannot write --out {path}: {error.strerror or error}") from error
