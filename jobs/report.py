"""``kafka-audit report``: the gold tables security_metrics, reauth_readiness and findings, read
for a window of UTC days and shaped into rows for people.

Reads with deltalake (delta-rs) and pyarrow, without Spark: the three tables are small
aggregates, and a Spark session costs 8-40 s of start-up on this kind of machine where this
read takes about one second (measured: docs/report-and-ocsf.md). delta-rs reads the tables of
both Delta engines. Rendering: :mod:`jobs.cli.report`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from jobs.errors import ConfigError, InputError
from jobs.lake.reads import is_delta_table, read_rows, table_path
from schemas import findings, reauth_readiness, security_metrics
from schemas.findings import SEVERITIES

Row = dict[str, Any]


@dataclass(frozen=True)
class Window:
    """Whole UTC days ``[start, end)``; both None means every day."""

    start: date | None = None
    end: date | None = None

    def describe(self) -> str:
        """``2026-11-20 .. 2026-11-21 (UTC, end exclusive)`` or ``all days``."""
        if self.start is None or self.end is None:
            return "all days"
        return f"{self.start} .. {self.end} (UTC, end exclusive)"


def parse_window(start: str | None, end: str | None) -> Window:
    """The window of ``--start`` / ``--end`` (ISO dates, UTC days, end exclusive).

    Raises:
        ConfigError: only one given, a value that is not a date, or end not after start.
    """
    if start is None and end is None:
        return Window()
    if start is None or end is None:
        raise ConfigError("window: give both --start and --end, or neither")
    days = []
    for text, flag in ((start, "--start"), (end, "--end")):
        try:
            days.append(date.fromisoformat(text.strip()))
        except ValueError as error:
            raise ConfigError(f"{flag}: {text!r} is not a date (e.g. 2026-11-20)") from error
    if days[1] <= days[0]:
        raise ConfigError(f"window: --end {days[1]} must be after --start {days[0]}")
    return Window(days[0], days[1])


def check_lake(lake: str, tables: Sequence[str]) -> None:
    """Checks that ``lake`` holds a Delta table for each of ``tables``.

    Raises:
        InputError: the lake folder does not exist, or names the first missing table.
    """
    if "://" not in lake and not os.path.isdir(lake):
        raise InputError(f"lake {lake!r} not found: expected the folder of a kafka-audit run")
    for table in tables:
        if not is_delta_table(table_path(lake, table)):
            raise InputError(
                f"lake {lake!r} has no Delta table {table!r}: run kafka-audit run on it first"
            )


def read_gold(lake: str, table: str, partition_column: str, window: Window) -> list[Row]:
    """The rows of one small gold table whose date partition is in ``window``.

    Args:
        lake: Lake root (path or URI).
        table: Table name.
        partition_column: Its ``DateType`` partition column.
        window: Days to keep (null partitions only when the window is all days).

    Returns:
        The rows as dicts (timestamps as aware UTC datetimes).
    """
    return read_rows(table_path(lake, table), partition_column, window.start, window.end)


def metrics_rows(rows: Sequence[Row], window_kind: str) -> list[Row]:
    """security_metrics rows of one window kind ('1d' or '1h'), ordered for reading: by window
    start, metric name, broker, listener, mechanism, principal, API."""
    keys = ("metric_name", "broker_id", "listener", "mechanism", "principal", "api_key_name")
    kept = [r for r in rows if r["window"] == window_kind]
    kept.sort(key=lambda r: (r["window_start_ts"], *[r[k] or "" for k in keys]))
    return [
        {
            "window_start": r["window_start_ts"],
            "metric": r["metric_name"],
            "broker": r["broker_id"],
            "listener": r["listener"],
            "mechanism": r["mechanism"],
            "principal": r["principal"],
            "api": r["api_key_name"],
            "value": r["value"],
            "events": r["event_count"],
        }
        for r in kept
    ]


def readiness_rows(rows: Sequence[Row]) -> list[Row]:
    """reauth_readiness summed over the window's days, one row per candidate
    ``connections.max.reauth.ms`` (KIP-368), ascending."""
    out: dict[int, Row] = {}
    for r in rows:
        c = out.setdefault(
            r["candidate_ms"],
            {"candidate_ms": r["candidate_ms"], "sessions": 0, "killed": 0, "unknown_client": 0,
             "first_kill": None, "principals_killed": set(), "client_software_killed": set()},
        )  # fmt: skip
        c["sessions"] += r["sessions"]
        c["killed"] += r["sessions_killed"]
        c["unknown_client"] += r["sessions_at_risk_unknown_client"]
        c["principals_killed"] |= set(r["principals_killed"] or ())
        c["client_software_killed"] |= set(r["client_software_killed"] or ())
        first = r["first_kill_ts"]
        if first is not None and (c["first_kill"] is None or first < c["first_kill"]):
            c["first_kill"] = first
    for c in out.values():
        c["principals_killed"] = sorted(c["principals_killed"])
        c["client_software_killed"] = sorted(c["client_software_killed"])
    return [out[k] for k in sorted(out)]


def findings_rows(rows: Sequence[Row]) -> list[Row]:
    """Findings, most severe first, then by rule, subject and last seen."""

    def order(r: Row) -> tuple[Any, ...]:
        rank = SEVERITIES.index(r["severity"]) if r["severity"] in SEVERITIES else len(SEVERITIES)
        return rank, r["rule_id"], r["subject"], r["discriminator"], r["last_seen_ts"] or _NEVER

    return [
        {
            "severity": r["severity"],
            "rule": r["rule_id"],
            "kip": r["kip"],
            "subject": f"{r['subject_type']}: {r['subject']}",
            "discriminator": r["discriminator"] or None,
            "node": r["node_id"],
            "count": r["count"],
            "first_seen": r["first_seen_ts"],
            "last_seen": r["last_seen_ts"],
            "evidence": [f"{e['source_path']}:{e['line_number']}" for e in r["evidence"] or ()],
            "explanation": r["explanation"],
            "finding_id": r["finding_id"],
        }
        for r in sorted(rows, key=order)
    ]


_NEVER = datetime.min.replace(tzinfo=UTC)

#: Section name -> (table, partition column, shaping of its rows).
SECTIONS: Mapping[str, tuple[str, str, Callable[[Sequence[Row]], list[Row]]]] = {
    "metrics": (security_metrics.TABLE_NAME, security_metrics.PARTITION_COLUMNS[0],
                lambda rows: metrics_rows(rows, "1d")),
    "readiness": (reauth_readiness.TABLE_NAME, reauth_readiness.PARTITION_COLUMNS[0],
                  readiness_rows),
    "findings": (findings.TABLE_NAME, findings.PARTITION_COLUMNS[0], findings_rows),
}  # fmt: skip


def build_report(
    lake: str, sections: Sequence[str], window: Window, metrics_window: str = "1d"
) -> dict[str, list[Row]]:
    """Reads and shapes the asked sections.

    Args:
        lake: Lake root.
        sections: Names from :data:`SECTIONS`, in output order.
        window: UTC days to report.
        metrics_window: '1d' (daily) or '1h' (hourly) metric windows.

    Returns:
        Section name -> its rows, in ``sections`` order.

    Raises:
        InputError: the lake or one of the tables is missing.
    """
    check_lake(lake, [SECTIONS[s][0] for s in sections])
    report: dict[str, list[Row]] = {}
    for name in sections:
        table, column, shape = SECTIONS[name]
        rows = read_gold(lake, table, column, window)
        report[name] = metrics_rows(rows, metrics_window) if name == "metrics" else shape(rows)
    return report
