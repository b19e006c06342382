"""``kafka-audit report``: print metrics, KIP-368 readiness and findings from a lake.

Formats: ``table`` (aligned text for a terminal), ``markdown`` (GitHub tables), ``json`` (one
document, every column), ``csv`` (one section). Tables are drawn with ``tabulate``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from jobs.formatting import duration_text
from jobs.neutralize import csv_cell, markdown, terminal

FORMATS = ("table", "markdown", "json", "csv")
SECTION_CHOICES = ("all", "metrics", "readiness", "findings")
TITLES = {
    "metrics": "Security metrics (Kafka JMX names; value per window, events behind it)",
    "readiness": "Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...",
    "findings": "Findings",
}
#: Columns shown in table / markdown (json has every column).
SHOWN = {
    "metrics": ("window_start", "metric", "broker", "listener", "mechanism", "principal", "api",
                "value", "events"),
    "readiness": ("candidate", "sessions", "killed", "unknown_client", "first_kill",
                  "principals_killed"),
    "findings": ("severity", "rule", "kip", "subject", "node", "count", "first_seen",
                 "last_seen", "evidence", "explanation"),
}  # fmt: skip
#: Right-aligned columns (numbers).
NUMERIC = frozenset({"value", "events", "sessions", "killed", "unknown_client", "count"})
EXPLANATION_WIDTH = 60


def register(commands: Any) -> None:
    """Add the ``report`` subparser to ``commands`` (argparse's subparsers action)."""
    report = commands.add_parser(
        "report", help="print metrics, KIP-368 readiness and findings from a lake"
    )
    report.add_argument("--lake", required=True, help="root folder of the Delta tables")
    report.add_argument("--start", help="first UTC day (2026-11-20)")
    report.add_argument("--end", help="day after the last, exclusive (2026-11-21)")
    report.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    report.add_argument(
        "--section", choices=SECTION_CHOICES, default="all", help="default: all (csv: one)"
    )
    report.add_argument(
        "--window", choices=("1d", "1h"), default="1d", help="metric windows (default: 1d)"
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``report``: print the report on stdout; returns the exit code (0).

    Raises:
        ConfigError: bad window, or csv asked for more than one section.
        InputError: the lake or one of its gold tables is missing.
    """
    from jobs.errors import ConfigError  # noqa: PLC0415
    from jobs.report import build_report, parse_window  # noqa: PLC0415

    sections = ["metrics", "readiness", "findings"] if args.section == "all" else [args.section]
    if args.format == "csv" and len(sections) > 1:
        raise ConfigError("--format csv prints one table: add --section metrics|readiness|findings")
    window = parse_window(args.start, args.end)
    report = build_report(args.lake, sections, window, args.window)
    sys.stdout.write(render(report, args.format, window.describe(), args.lake))
    return 0


def render(report: dict[str, list[dict[str, Any]]], fmt: str, window: str, lake: str) -> str:
    """The report as text.

    Args:
        report: Section name -> rows (``jobs.report.build_report``).
        fmt: One of FORMATS; ``csv`` renders the first section only.
        window: Description of the window, for the heading.
        lake: The lake root, for the heading.

    Returns:
        The text, ending with a newline.
    """
    if fmt == "json":
        document = {"lake": lake, "window": window, **report}
        return json.dumps(document, default=_json_value, indent=2) + "\n"
    if fmt == "csv":
        name, rows = next(iter(report.items()))
        return _csv(rows, SHOWN[name] if not rows else tuple(rows[0]))
    from tabulate import tabulate  # noqa: PLC0415  (keeps the CLI's --help fast)

    is_markdown = fmt == "markdown"
    # Every value comes from the logs or the user: neutralized for where it is shown.
    safe = markdown if is_markdown else terminal
    lake_text = terminal(lake)
    parts = [f"# kafka-audit report\n\nlake `{lake_text.replace('`', chr(39))}`, {window}"
             if is_markdown
             else f"kafka-audit report: lake {lake_text}, {window}"]  # fmt: skip
    for name, rows in report.items():
        title = f"## {TITLES[name]}" if is_markdown else TITLES[name]
        if not rows:
            parts.append(f"{title}\n\n{'_none_' if is_markdown else '(none)'}")
            continue
        cells = [{k: safe(v) for k, v in _display(name, row).items()} for row in rows]
        columns = [c for c in SHOWN[name] if any(r[c] not in (None, "") for r in cells)]
        text = tabulate(
            [[r[c] for c in columns] for r in cells],
            headers=[c.replace("_", " ") for c in columns],
            tablefmt="github" if is_markdown else "simple",
            disable_numparse=True,
            colalign=["right" if c in NUMERIC else "left" for c in columns],
            maxcolwidths=None if is_markdown else [
                EXPLANATION_WIDTH if c == "explanation" else None for c in columns
            ],
        )  # fmt: skip
        parts.append(f"{title}\n\n{text}")
    return "\n\n".join(parts) + "\n"


def _display(section: str, row: dict[str, Any]) -> dict[str, str]:
    """A row as the strings a person reads."""
    out = {k: _text(v) for k, v in row.items()}
    if section == "readiness":
        out["candidate"] = duration_text(int(row["candidate_ms"]))
    if section == "findings":
        evidence = row["evidence"]
        out["evidence"] = (
            ""
            if not evidence
            else evidence[0].rsplit("/", 1)[-1]
            + (f" (+{len(evidence) - 1})" if len(evidence) > 1 else "")
        )
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M:%S}"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    if isinstance(value, list):
        return ", ".join(map(_text, value))
    return str(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def _csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            [csv_cell(_json_value(row[c]) if isinstance(row[c], datetime)
                      else "; ".join(map(str, row[c])) if isinstance(row[c], list)
                      else row[c]) for c in columns]
        )  # fmt: skip
    return buffer.getvalue()
