"""``kafka-audit report --format html``: the lake's report as one self-contained HTML page.

One file, no server, no network: CSS inline, figures inline SVG drawn by matplotlib (text kept as
text, ``svg.fonttype='none'``; ids from a fixed ``svg.hashsalt``, no date), the severity filter
pure CSS (checkboxes), so the same lake and window give byte-identical HTML. The page is a Jinja2
template (``jobs/templates/report.html.j2``) with autoescape on, and every value passes
:func:`jobs.neutralize.terminal` first (control and bidi characters shown escaped): a principal
``<script>...`` is text on the page, never markup.

Sections: the headline (findings per severity, events behind the figures), findings (most severe
first, filterable by severity, evidence ``file:line`` under the folder every evidence file
shares), KIP-368 readiness per candidate with the principals and client software it would kill,
authentication failures and authorization denials over time at the data's own resolution
(:func:`jobs.report_figures.activity_periods`), delegation-token timelines (KIP-48), forwarding
(KIP-590) and Connect signing (KIP-507) summaries. Reads the lake with deltalake
(:mod:`jobs.report`), without Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from jobs.formatting import (
    common_folder,
    duration_text,
    relative_position,
    split_position,
    timestamp_text,
)
from jobs.neutralize import terminal
from jobs.report import (
    EXTRA_TABLES,
    SECTIONS,
    Row,
    Window,
    check_lake,
    findings_rows,
    headline,
    read_extra,
    read_gold,
    readiness_rows,
    severity_counts,
)
from jobs.report_figures import activity_periods
from schemas.findings import SEVERITIES

#: The over-time figures: metric -> what the panels count (security_metrics ``event_count``).
OVER_TIME = {
    "failed-authentication-total": "authentication failures",
    "authorization-denied-rate-per-minute": "authorization denials",
}
#: The token timeline draws the latest tokens (first seen) up to this many.
MAX_TIMELINE_TOKENS = 40
#: Rows of the forwarding and Connect tables past which the rest is counted, not listed.
MAX_TABLE_ROWS = 25


def build_html(lake: str, window: Window) -> str:
    """Reads the lake and renders the page (what ``kafka-audit report --format html`` writes).

    Args:
        lake: Lake root (local path or file:// URI).
        window: UTC days to report (:class:`jobs.report.Window`).

    Returns:
        The HTML page.

    Raises:
        InputError: the lake, or its findings, reauth_readiness or security_metrics table, is
            missing (the other tables are optional: their sections say so).
    """
    check_lake(lake, [table for table, _, _ in SECTIONS.values()])
    data: dict[str, list[Row] | None] = {
        table: read_gold(lake, table, column, window) for table, column, _ in SECTIONS.values()
    }
    data |= {table: read_extra(lake, table, window) for table in EXTRA_TABLES}
    return render_html(data, lake, window.describe())


def render_html(data: Mapping[str, list[Row] | None], lake: str, window: str) -> str:
    """The page for rows already read.

    Args:
        data: Table name -> its gold rows as read (``findings``, ``reauth_readiness``,
            ``security_metrics``, and the :data:`jobs.report.EXTRA_TABLES`); None or absent:
            the lake has no such table.
        lake: The lake root, for the heading.
        window: Description of the window (``Window.describe()``).

    Returns:
        The HTML page; the same input gives the same bytes.
    """
    from jinja2 import Environment, PackageLoader, StrictUndefined  # noqa: PLC0415

    env = Environment(
        loader=PackageLoader("jobs", "templates"), autoescape=True, finalize=_shown,
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )  # fmt: skip
    return env.get_template("report.html.j2").render(page_context(data, lake, window))


def _shown(value: Any) -> Any:
    """Jinja2 ``finalize``: None -> '', text through :func:`jobs.neutralize.terminal` (then
    autoescaped), markup (the SVG figures) unchanged."""
    from markupsafe import Markup  # noqa: PLC0415

    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return terminal(value)
    return value


def page_context(data: Mapping[str, list[Row] | None], lake: str, window: str) -> dict[str, Any]:
    """The template's variables: one entry per section, shaped for reading (texts, counts,
    figures); a section whose table the lake lacks is None. See :func:`render_html`."""
    found = findings_rows(data.get("findings") or [])
    metrics = data.get("security_metrics") or []
    tokens = data.get("token_lifecycle")
    return {
        "lake": lake,
        "window": window,
        "headline": headline(found),
        "totals": _totals(metrics, data),
        "severities": _severities(found),
        "findings": _findings(found),
        "readiness": _readiness(readiness_rows(data.get("reauth_readiness") or [])),
        "over_time": [_over_time(metrics, metric, label) for metric, label in OVER_TIME.items()],
        "tokens": None if tokens is None else _tokens(tokens),
        "forwarding": _forwarding(data.get("forwarded_requests")),
        "connect": _connect(data.get("connect_internal_requests"),
                            data.get("connect_session_keys")),
    }  # fmt: skip


def _severity_css(severity: str) -> str:
    return f"sev-{severity}" if severity in SEVERITIES else "sev-other"


def _severities(found: Sequence[Row]) -> list[Row]:
    """The severity filter's boxes: one per known severity with findings, most severe first,
    then one ``other`` for every unknown severity together."""
    boxes: dict[str, Row] = {}
    for severity, count in severity_counts(found).items():
        css = _severity_css(severity)
        name = severity if severity in SEVERITIES else "other"
        box = boxes.setdefault(css, {"name": name, "css": css, "count": 0})
        box["count"] += count
    return list(boxes.values())


def _events(rows: Sequence[Row], metric: str) -> int:
    """Events behind ``metric`` in the rows, counted once (its daily windows, else hourly)."""
    kinds = {r["window"] for r in rows if r["metric_name"] == metric}
    kind = "1d" if "1d" in kinds else "1h"
    return sum(int(r["event_count"]) for r in rows
               if r["metric_name"] == metric and r["window"] == kind)  # fmt: skip


def _totals(metrics: Sequence[Row], data: Mapping[str, list[Row] | None]) -> list[tuple[str, Any]]:
    """The headline's counts: (label, number, or None when the lake lacks the table).
    Connect requests are counted as the receiving workers logged them (the followers' retry
    lines are the same requests seen from the other side)."""

    def count(table: str, column: str | None = None) -> int | None:
        rows = data.get(table)
        if rows is None:
            return None
        if column is None:
            return len(rows)
        return sum(int(r[column] or 0) for r in rows if r["observed_by"] == "leader")

    return [
        *[(label, _events(metrics, metric)) for metric, label in OVER_TIME.items()],
        ("delegation tokens", count("token_lifecycle")),
        ("forwarded requests (log lines)", count("forwarded_requests")),
        ("Connect internal requests", count("connect_internal_requests", "request_count")),
        ("Connect session-key rotations", count("connect_session_keys")),
    ]


def _findings(found: Sequence[Row]) -> dict[str, Any]:
    """Findings as the template shows them: evidence relative to the common folder."""
    folder = common_folder(p for r in found for p in r["evidence"])
    return {
        "folder": folder.rstrip("/") + "/" if folder else "",
        "rows": [
            {
                **r,
                "css": _severity_css(r["severity"]),
                "subject": r["subject"]
                + (f" ({r['discriminator']})" if r["discriminator"] else ""),
                "seen": _seen(r["first_seen"], r["last_seen"]),
                "evidence": [relative_position(p, folder) for p in r["evidence"]],
            }
            for r in found
        ],
    }


def _seen(first: datetime | None, last: datetime | None) -> str:
    """``2026-11-20 09:00:00 .. 10:30:00``, one time, or ''."""
    a, b = timestamp_text(first), timestamp_text(last)
    return f"{a} .. {_later(first, last)}" if a and b and a != b else a or b


def _later(first: datetime | None, moment: datetime | None) -> str:
    """``moment`` as text, its date left out when it is ``first``'s (``10:30:00``)."""
    a, b = timestamp_text(first), timestamp_text(moment)
    return b[11:] if a and b and a[:10] == b[:10] else b


def _readiness(rows: Sequence[Row]) -> list[Row]:
    return [
        {**r, "candidate": duration_text(int(r["candidate_ms"])),
         "first_kill": timestamp_text(r["first_kill"])}
        for r in rows
    ]  # fmt: skip


def _over_time(metrics: Sequence[Row], metric: str, label: str) -> dict[str, Any]:
    """One over-time figure and the slices with the most events."""
    from markupsafe import Markup  # noqa: PLC0415

    from jobs.report_figures import over_time_svg  # noqa: PLC0415

    rows = [r for r in metrics if r["metric_name"] == metric]
    periods = activity_periods(r["window_start_ts"] for r in rows)
    keys = ("principal", "broker_id") if "authorization" in metric else (
        "broker_id", "listener", "mechanism")  # fmt: skip
    kind = "1d" if any(r["window"] == "1d" for r in rows) else "1h"
    slices = _grouped([r for r in rows if r["window"] == kind], keys, ("event_count",))
    slices.sort(key=lambda g: -int(g["event_count"] or 0))
    figure = over_time_svg(rows, periods, label) if periods else None
    return {
        "metric": metric,
        "label": label,
        "events": _events(rows, metric),
        "periods": [p.describe() for p in periods],
        "svg": Markup(figure) if figure else None,
        "columns": [k.removesuffix("_id") for k in keys],
        "slices": [[*(g[k] for k in keys), g["event_count"]] for g in slices[:MAX_TABLE_ROWS]],
        "more": max(len(slices) - MAX_TABLE_ROWS, 0),
    }


def _grouped(rows: Iterable[Row], keys: Sequence[str], sums: Sequence[str]) -> list[Row]:
    """Rows grouped by ``keys``: the keys, each of ``sums`` summed (None when every value is
    None) and ``rows`` (the group's row count), ordered by the keys' text (None first)."""
    groups: dict[tuple[Any, ...], Row] = {}
    for r in rows:
        key = tuple(r[k] for k in keys)
        group = groups.setdefault(key, {**dict(zip(keys, key, strict=True)), "rows": 0,
                                        **dict.fromkeys(sums)})  # fmt: skip
        group["rows"] += 1
        for column in sums:
            if r[column] is not None:
                group[column] = (group[column] or 0) + r[column]
    return [groups[k] for k in sorted(groups, key=lambda k: [(v is not None, str(v)) for v in k])]


def _tokens(tokens: Sequence[Row]) -> dict[str, Any]:
    """Token timelines: the figure, the count per state and one table row per token."""
    from markupsafe import Markup  # noqa: PLC0415

    from jobs.report_figures import token_timeline_svg  # noqa: PLC0415

    ordered = sorted(tokens, key=lambda t: (t["first_seen_ts"] or _NEVER, t["token_key"]))
    shown = ordered[-MAX_TIMELINE_TOKENS:]
    figure = token_timeline_svg(shown) if shown else None
    states = _grouped(ordered, ("state",), ())
    return {
        "svg": Markup(figure) if figure else None,
        "drawn": len(shown),
        "states": [(g["state"], g["rows"]) for g in states],
        "rows": [
            {**t, "renewers": ", ".join(t["renewers"] or ()),
             "issue_ts": timestamp_text(t["issue_ts"]),
             **{k: _later(t["issue_ts"], t[k]) for k in ("expiry_ts", "max_ts", "ended_ts")},
             "rejected": sum(1 for h in t["history"] or () if h["error_code"] not in (None, 0))}
            for t in ordered
        ],
    }  # fmt: skip


_NEVER = datetime.min.replace(tzinfo=UTC)


def _forwarding(rows: list[Row] | None) -> dict[str, Any] | None:
    """KIP-590 forwarding: lines per record type, per API and error, and the lines to look at
    (failed ENVELOPEs, pairs whose controller saw another principal)."""
    if rows is None:
        return None
    keys = ("record_type", "unpaired_reason", "api_key_name", "error_code_name")
    groups = sorted(_grouped(rows, keys, ()), key=lambda g: -int(g["rows"]))
    notable = [r for r in rows if r["record_type"] == "envelope" or r["principal_matches"] is False]
    notable.sort(key=lambda r: r["broker_ts"] or r["controller_ts"] or _NEVER)
    positions = [_position(r) for r in notable]
    folder = common_folder(p for p in positions if p)
    return {
        "lines": len(rows),
        "types": [(g["record_type"], g["rows"]) for g in _grouped(rows, ("record_type",), ())],
        "groups": groups[:MAX_TABLE_ROWS],
        "more_groups": max(len(groups) - MAX_TABLE_ROWS, 0),
        "folder": folder.rstrip("/") + "/" if folder else "",
        "notable": [
            {**r, "when": timestamp_text(r["broker_ts"] or r["controller_ts"]),
             "other": r["controller_principal"] or r["envelope_sender_principal"],
             "position": relative_position(p, folder) if p else ""}
            for r, p in list(zip(notable, positions, strict=True))[:MAX_TABLE_ROWS]
        ],
        "more_notable": max(len(notable) - MAX_TABLE_ROWS, 0),
    }  # fmt: skip


def _position(row: Row) -> str:
    """The controller-side (else broker-side) ``path:line`` of a forwarded_requests row."""
    for side in ("controller", "broker"):
        path, line = row[f"{side}_source_path"], row[f"{side}_line_number"]
        if path:
            return f"{path}:{line}" if line is not None else split_position(path)[0]
    return ""


def _connect(requests: list[Row] | None, keys: list[Row] | None) -> dict[str, Any] | None:
    """KIP-507 Connect signing: internal requests per worker, view, connector, endpoint and
    status; session-key rotations per worker."""
    if requests is None and keys is None:
        return None
    sums = ("request_count", "non_worker_agent_count", "stale_key_403_count",
            "beyond_grace_403_count")  # fmt: skip
    columns = ("worker_id", "observed_by", "connector_name", "endpoint", "status")
    return {
        "requests": None if requests is None else _grouped(requests, columns, sums),
        "rotations": None if keys is None else list(_rotations(keys)),
    }


def _rotations(keys: Sequence[Row]) -> Iterator[Row]:
    """Per worker: rotations seen, TTLs, off-schedule intervals and the largest deviation."""
    for worker in sorted({k["worker_id"] for k in keys}, key=lambda w: (w is not None, str(w))):
        mine = [k for k in keys if k["worker_id"] == worker]
        deviations = [abs(int(k["deviation_ms"])) for k in mine if k["deviation_ms"] is not None]
        ttls = sorted({int(k["key_ttl_ms"]) for k in mine if k["key_ttl_ms"] is not None})
        yield {
            "worker_id": worker,
            "rotations": len(mine),
            "ttl": ", ".join(duration_text(t) for t in ttls),
            "off_schedule": sum(1 for k in mine if k["off_schedule"]),
            "max_deviation": duration_text(max(deviations)) if deviations else "",
            "first": timestamp_text(min(k["updated_ts"] for k in mine)),
            "last": timestamp_text(max(k["updated_ts"] for k in mine)),
        }
