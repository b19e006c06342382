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
from datetime import UTC, date, datetime, time
from typing import Any

from jobs.config import parse_instant
from jobs.errors import ConfigError, InputError
from jobs.formatting import (
    duration_text,
    list_text,
    metric_value_text,
    positions_text,
    timestamp_text,
)
from jobs.lake.reads import is_delta_table, read_rows, table_path
from schemas import (
    connect_internal_requests,
    connect_session_keys,
    findings,
    forwarded_requests,
    reauth_readiness,
    security_metrics,
    token_lifecycle,
)
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


def whole_day(moment: datetime, where: str) -> date:
    """The UTC day that starts at ``moment``.

    Args:
        moment: An aware datetime (``jobs.cli.arguments.instant``, ``parse_instant``).
        where: The flag or key, for the message.

    Raises:
        ConfigError: ``moment`` is not a UTC midnight (the report counts whole days).
    """
    utc = moment.astimezone(UTC)
    if utc.time() != time(0):
        raise ConfigError(
            f"{where}: {utc:%Y-%m-%dT%H:%M:%SZ} is not the start of a UTC day: the window is"
            f" whole UTC days (e.g. {utc:%Y-%m-%d} or {utc:%Y-%m-%d}T00:00:00Z)"
        )
    return utc.date()


def parse_window(start: str | date | None, end: str | date | None) -> Window:
    """The window of ``--start`` / ``--end``: whole UTC days, end exclusive.

    Args:
        start / end: Days (``datetime.date``) or their text: ``2026-11-20`` or an ISO-8601
            date-time at a UTC midnight (``2026-11-20T00:00:00Z``, ``2026-11-20T01:00+01:00``).

    Raises:
        ConfigError: only one given, a value that is not a date or not a UTC midnight, or end
            not after start.
    """
    if start is None and end is None:
        return Window()
    if start is None or end is None:
        raise ConfigError("window: give both --start and --end, or neither")
    days = [_day(start, "--start"), _day(end, "--end")]
    if days[1] <= days[0]:
        raise ConfigError(f"window: --end {days[1]} must be after --start {days[0]}")
    return Window(days[0], days[1])


def _day(value: str | date, flag: str) -> date:
    if isinstance(value, datetime):
        return whole_day(value, flag)
    if isinstance(value, date):
        return value
    return whole_day(parse_instant(value, flag), flag)


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
    """Findings, most severe first, then most events first, then by rule, subject and last
    seen; ``evidence`` as ``path:line`` texts (full paths)."""

    def order(r: Row) -> tuple[Any, ...]:
        rank = _rank(r["severity"])
        return (rank, -r["count"], r["rule_id"], r["subject"], r["discriminator"],
                r["last_seen_ts"] or _NEVER)  # fmt: skip

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


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def severity_counts(rows: Sequence[Row]) -> dict[str, int]:
    """Findings per severity (rows of :func:`findings_rows`), most severe first; severities
    without a finding left out; an unknown severity after the known ones."""
    counts: dict[str, int] = {}
    for severity in sorted((r["severity"] for r in rows), key=lambda s: (_rank(s), s)):
        counts[severity] = counts.get(severity, 0) + 1
    return counts


def headline(rows: Sequence[Row]) -> str:
    """``39 findings: 3 high, 23 medium, 13 low``, ``1 finding: 1 high`` or ``no findings``
    (rows of :func:`findings_rows`)."""
    if not rows:
        return "no findings"
    by_severity = ", ".join(f"{n} {s}" for s, n in severity_counts(rows).items())
    return f"{len(rows)} finding{'s' if len(rows) > 1 else ''}: {by_severity}"


def display_cells(section: str, row: Row, evidence_folder: str = "") -> dict[str, str]:
    """One row of a section as the texts a person reads (table and markdown formats; not yet
    neutralized for where they are shown).

    Args:
        section: ``metrics``, ``readiness`` or ``findings``.
        row: A row of :func:`metrics_rows`, :func:`readiness_rows` or :func:`findings_rows`.
        evidence_folder: Findings: the folder evidence paths are shown relative to
            (``jobs.formatting.common_folder`` of the report's evidence); '' keeps them whole.

    Returns:
        Column -> text: metric values with their unit (``0.167/min``, ``1.16e-05/s``,
        ``12.5 ms``), timestamps ``2026-11-20 09:00:00`` (metric windows to the minute),
        candidates as durations (``15 min``), at most five principals and how many more, a
        finding's subject with its discriminator (``principal: User:bob (TOPIC:LITERAL:t)``),
        the first evidence position relative to ``evidence_folder`` and how many more;
        None -> ''.
    """
    out = {k: _text(v) for k, v in row.items()}
    if section == "metrics":
        out["window_start"] = timestamp_text(row["window_start"], seconds=False)
        out["value"] = metric_value_text(row["metric"], row["value"])
    elif section == "readiness":
        out["candidate"] = duration_text(int(row["candidate_ms"]))
        out["principals_killed"] = list_text(row["principals_killed"])
    elif section == "findings":
        out["evidence"] = positions_text(row["evidence"], evidence_folder)
        if row.get("discriminator"):
            out["subject"] += f" ({out['discriminator']})"
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return timestamp_text(value)
    if isinstance(value, list):
        return list_text([_text(v) for v in value])
    return str(value)


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


#: Tables the HTML report reads besides :data:`SECTIONS` (lakes of older versions may lack
#: them): name -> its ``DateType`` partition column ('' = unpartitioned).
EXTRA_TABLES: Mapping[str, str] = {
    token_lifecycle.TABLE_NAME: "",
    forwarded_requests.TABLE_NAME: forwarded_requests.PARTITION_COLUMNS[0],
    connect_internal_requests.TABLE_NAME: connect_internal_requests.PARTITION_COLUMNS[0],
    connect_session_keys.TABLE_NAME: connect_session_keys.PARTITION_COLUMNS[0],
}


def read_extra(lake: str, table: str, window: Window) -> list[Row] | None:
    """The rows of one of :data:`EXTRA_TABLES` in ``window``, or None when the lake has no
    such table.

    Args:
        lake: Lake root (path or URI).
        table: A name of :data:`EXTRA_TABLES`.
        window: Days to keep: date partitions in the window; ``token_lifecycle`` (one row per
            token, unpartitioned): the tokens whose history (``first_seen_ts`` ..
            ``last_seen_ts``) overlaps the window, tokens without timestamps only when the
            window is all days.

    Returns:
        The rows as dicts (timestamps as aware UTC datetimes), in the table's order.
    """
    path = table_path(lake, table)
    if not is_delta_table(path):
        return None
    column = EXTRA_TABLES[table]
    if column:
        return read_gold(lake, table, column, window)
    rows = read_rows(path, column, None, None)
    if window.start is None or window.end is None:
        return rows
    start = datetime.combine(window.start, time(0), UTC)
    end = datetime.combine(window.end, time(0), UTC)
    return [
        r for r in rows
        if r["first_seen_ts"] is not None and r["last_seen_ts"] is not None
        and r["first_seen_ts"] < end and r["last_seen_ts"] >= start
    ]  # fmt: skip
