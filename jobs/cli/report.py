"""``kafka-audit report``: print findings, KIP-368 readiness and metrics from a lake.

Formats: ``table`` (for a terminal: drawn by rich to the terminal's width, long cells wrapped),
``markdown`` (GitHub tables, drawn by tabulate), ``json`` (one document, every column),
``csv`` (one section), ``html`` (one self-contained page with figures: every section, plus
token timelines, forwarding and Connect signing; :mod:`jobs.report_html`). The text formats
open with a headline (``39 findings: 3 high, 23 medium, 13 low``) and show findings first; by
default metrics are one line with their count (``--section all`` or ``metrics`` lists them).
``--output FILE`` writes the report to a file instead of stdout.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from jobs.cli.arguments import at_least, day_window, instant, lake_location
from jobs.errors import InputError, UsageError
from jobs.formatting import ascii_table, common_folder, draw
from jobs.neutralize import csv_cell, markdown, terminal

FORMATS = ("table", "markdown", "json", "csv", "html")
SECTION_CHOICES = ("all", "metrics", "readiness", "findings")
#: ``--section`` -> the sections read, in output order (None: the default).
SECTIONS_READ: Mapping[str | None, tuple[str, ...]] = {
    None: ("findings", "readiness", "metrics"),
    "all": ("findings", "readiness", "metrics"),
    "metrics": ("metrics",),
    "readiness": ("readiness",),
    "findings": ("findings",),
}
TITLES = {
    "metrics": "Security metrics (Kafka JMX names; value per window, events behind it)",
    "readiness": "Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...",
    "findings": "Findings",
}
#: Columns shown in markdown (json has every column; the table format: TABLE_COLUMNS).
SHOWN = {
    "metrics": ("window_start", "metric", "broker", "listener", "mechanism", "principal", "api",
                "value", "events"),
    "readiness": ("candidate", "sessions", "killed", "unknown_client", "first_kill",
                  "principals_killed"),
    "findings": ("severity", "rule", "kip", "subject", "node", "count", "first_seen",
                 "last_seen", "evidence", "explanation"),
}  # fmt: skip
#: Columns of the table format (merged where that reads better on a narrow terminal).
TABLE_COLUMNS = {
    "metrics": ("window_start", "broker", "listener", "mechanism", "principal", "api", "value",
                "events"),
    "readiness": SHOWN["readiness"],
    "findings": ("severity", "count", "finding"),
}  # fmt: skip
HEADERS = {"count": "events"}
#: Columns that take the width left over (the others are as wide as their longest word).
WIDE_COLUMNS = {"finding": 1}
SEVERITY_STYLES = {"high": "bold red", "medium": "yellow", "low": "cyan"}
#: Right-aligned columns (numbers).
NUMERIC = frozenset({"value", "events", "sessions", "killed", "unknown_client", "count"})
#: Width of the table format when stdout is not a terminal and COLUMNS is not set.
DEFAULT_WIDTH = 100
#: The narrowest ``--width``: below it, wrapped cells are a few letters a line.
MIN_WIDTH = 40
DESCRIPTION = """\
Print what a lake found: a headline with the findings per severity, the findings (most severe
first), the KIP-368 re-authentication readiness, and the number of security metric values
(--section all or metrics lists them). Reads the gold Delta tables without Spark.

The table format fits the terminal's width (--width to force one; 100 columns, or $COLUMNS,
when stdout is not a terminal). Evidence is shown as file:line relative to the folder all
evidence files share. --start/--end take whole UTC days (2026-11-20 or 2026-11-20T00:00:00Z).

--format html --output report.html writes one self-contained page (no server, no network):
the headline, findings with a severity filter, readiness, authentication failures and
authorization denials over time, token timelines, forwarding and Connect signing.
"""


def register(commands: Any) -> None:
    """Add the ``report`` subparser to ``commands`` (argparse's subparsers action)."""
    report = commands.add_parser(
        "report",
        help="print findings, KIP-368 readiness and metrics from a lake",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument(
        "--lake",
        required=True,
        type=lake_location,
        help="root folder of the Delta tables (local path or file:// URI)",
    )
    report.add_argument(
        "--start",
        type=instant,
        metavar="DAY",
        help="first UTC day (2026-11-20 or 2026-11-20T00:00:00Z)",
    )
    report.add_argument(
        "--end", type=instant, metavar="DAY", help="day after the last, exclusive (2026-11-21)"
    )
    report.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    report.add_argument(
        "--section",
        choices=SECTION_CHOICES,
        default=None,
        help="default: findings and readiness, metrics as one line with their "
        "count (json: all; csv: give one)",
    )
    report.add_argument(
        "--window", choices=("1d", "1h"), default=None, help="metric windows (default: 1d)"
    )
    report.add_argument(
        "--output",
        metavar="FILE",
        help="write the report to FILE (UTF-8) instead of stdout",
    )
    report.add_argument(
        "--width",
        type=at_least(MIN_WIDTH),
        metavar="COLUMNS",
        help=f"table: line width (default: the terminal's; {DEFAULT_WIDTH}, or "
        "$COLUMNS, when stdout is not a terminal)",
    )


def output_width(requested: int | None, is_terminal: bool, environ: Mapping[str, str]) -> int:
    """The table format's width: ``requested`` (``--width``), else the terminal's (COLUMNS
    first, as :func:`shutil.get_terminal_size`), else COLUMNS, else :data:`DEFAULT_WIDTH`."""
    if requested is not None:
        return requested
    if is_terminal:
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    columns = environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else DEFAULT_WIDTH


def execute(args: argparse.Namespace) -> int:
    """Run ``report``: print the report on stdout, or write it to ``--output``; returns the
    exit code (0).

    Raises:
        UsageError: only one of --start / --end, one not a UTC midnight, end not after start,
            csv of more than one section, html with --section / --window / --width or to a
            terminal, or an --output in a missing folder (the CLI exits 2 with the usage).
        InputError: the lake or one of its gold tables is missing, or --output cannot be
            written.
    """
    from jobs.report import Window, build_report  # noqa: PLC0415

    days = day_window(args.start, args.end)
    if args.format == "csv" and args.section in (None, "all"):
        raise UsageError("--format csv prints one table: add --section metrics|readiness|findings")
    output = _output_path(args.output)
    is_terminal = output is None and sys.stdout.isatty()
    window = Window(days[0].date(), days[1].date()) if days else Window()
    if args.format == "html":
        _check_html_arguments(args, is_terminal)
        from jobs.report_html import build_html  # noqa: PLC0415  (matplotlib, Jinja2)

        text = build_html(args.lake, window)
    else:
        sections = SECTIONS_READ[args.section]
        report = build_report(args.lake, sections, window, args.window or "1d")
        text = render(
            report, args.format, window.describe(), args.lake,
            width=output_width(args.width, is_terminal, os.environ),
            color=is_terminal and "NO_COLOR" not in os.environ,
            metrics_hint=args.section is None,
        )  # fmt: skip
    _write(text, output)
    return 0


def _check_html_arguments(args: argparse.Namespace, is_terminal: bool) -> None:
    """Raises UsageError for what --format html does not take: --section, --window and
    --width (the page has every section, the figures choose their resolution, the page its
    width), or no --output with stdout a terminal."""
    given = [f"--{name}" for name in ("section", "window", "width") if getattr(args, name)]
    if given:
        raise UsageError(
            f"--format html is the whole report at the data's own resolution: drop "
            f"{' and '.join(given)}"
        )
    if is_terminal:
        raise UsageError("--format html writes a page: add --output report.html")


def _output_path(value: str | None) -> Path | None:
    """``--output`` as a path, or None for stdout.

    Raises:
        UsageError: the path is a folder, or its folder does not exist.
    """
    if value is None:
        return None
    path = Path(value)
    if path.is_dir():
        raise UsageError(f"--output {value} is a folder: give a file name")
    if not path.absolute().parent.is_dir():
        raise UsageError(f"--output {value}: folder {path.absolute().parent} does not exist")
    return path


def _write(text: str, output: Path | None) -> None:
    """``text`` to stdout, or to ``output`` (replaced whole: written beside it, then renamed).

    Raises:
        InputError: ``output`` cannot be written (permissions, disk full).
    """
    if output is None:
        sys.stdout.write(text)
        return
    partial = output.with_name(f".{output.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(output)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise InputError(f"cannot write --output {output}: {error.strerror or error}") from error


def render(
    report: dict[str, list[dict[str, Any]]],
    fmt: str,
    window: str,
    lake: str,
    *,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
    metrics_hint: bool = False,
) -> str:
    """The report as text.

    Args:
        report: Section name -> rows (``jobs.report.build_report``), in output order.
        fmt: One of FORMATS; ``csv`` renders the first section only.
        window: Description of the window, for the heading.
        lake: The lake root, for the heading.
        width: ``table``: the line width; no line is longer.
        color: ``table``: terminal colours and bold (severity, headline).
        metrics_hint: ``table`` / ``markdown``: the metrics section as one line with the
            number of its values, not a table.

    Returns:
        The text, ending with a newline. Every value from the logs or the user is neutralized
        for where it is shown (:mod:`jobs.neutralize`); json keeps values exact.
    """
    if fmt == "json":
        document = {"lake": lake, "window": window, **report}
        return json.dumps(document, default=_json_value, indent=2) + "\n"
    if fmt == "csv":
        name, rows = next(iter(report.items()))
        return _csv(rows, SHOWN[name] if not rows else tuple(rows[0]))
    folder = common_folder(p for r in report.get("findings", ()) for p in r.get("evidence") or ())
    if fmt == "markdown":
        return _markdown(report, f"lake: {lake}, window: {window}", folder, metrics_hint)
    return _table(report, (f"lake: {lake}", f"window: {window}"), folder, width=width,
                  color=color, metrics_hint=metrics_hint)  # fmt: skip


def metrics_hint_text(count: int) -> str:
    """The metrics section as one line: ``454 metric values: add --section metrics to list
    them``."""
    if count == 0:
        return "no metric values"
    values = "1 metric value" if count == 1 else f"{count} metric values"
    return f"{values}: add --section metrics (or all) to list them"


def evidence_title(folder: str) -> str:
    """``Findings (evidence under /logs/)`` or ``Findings``."""
    return f"{TITLES['findings']} (evidence under {folder.rstrip('/')}/)" if folder else "Findings"


def _markdown(
    report: dict[str, list[dict[str, Any]]], where: str, folder: str, metrics_hint: bool
) -> str:
    from tabulate import tabulate  # noqa: PLC0415  (keeps the CLI's --help fast)

    from jobs.report import display_cells, headline  # noqa: PLC0415

    parts = ["# kafka-audit report"]
    if "findings" in report:
        parts.append(f"**{headline(report['findings'])}**")
    parts.append(markdown(where))
    for name, rows in report.items():
        title = evidence_title(folder) if name == "findings" else TITLES[name]
        if name == "metrics" and metrics_hint:
            parts.append(f"## {markdown(TITLES[name])}\n\n{markdown(metrics_hint_text(len(rows)))}")
            continue
        if not rows:
            parts.append(f"## {markdown(title)}\n\n_none_")
            continue
        # Every value comes from the logs or the user: neutralized for Markdown.
        cells = [{k: markdown(v) for k, v in display_cells(name, r, folder).items()} for r in rows]
        columns = [c for c in SHOWN[name] if any(r[c] for r in cells)]
        text = tabulate(
            [[r[c] for c in columns] for r in cells],
            headers=[c.replace("_", " ") for c in columns],
            tablefmt="github",
            disable_numparse=True,
            colalign=["right" if c in NUMERIC else "left" for c in columns],
        )
        parts.append(f"## {markdown(title)}\n\n{text}")
    return "\n\n".join(parts) + "\n"


def _table(
    report: dict[str, list[dict[str, Any]]],
    heading: Sequence[str],
    folder: str,
    *,
    width: int,
    color: bool,
    metrics_hint: bool,
) -> str:
    """The table format, drawn by rich at ``width`` columns (:func:`jobs.formatting.draw`).
    Values are rich ``Text`` (never markup) after :func:`jobs.neutralize.terminal`."""
    from rich.text import Text  # noqa: PLC0415  (keeps the CLI's --help fast)

    from jobs.report import headline  # noqa: PLC0415

    drawn: list[Any] = []
    if "findings" in report:
        drawn.append(Text(headline(report["findings"]), style="bold"))
    drawn += [terminal(line) for line in heading]
    for name, rows in report.items():
        title = evidence_title(terminal(folder)) if name == "findings" else TITLES[name]
        drawn += ["", Text(title, style="bold", overflow="fold")]
        if name == "metrics" and metrics_hint:
            drawn.append(metrics_hint_text(len(rows)))
        elif not rows:
            drawn.append("(none)")
        elif name == "metrics":  # one table per metric: the name is its title, not a column
            for metric, group in groupby(sorted(rows, key=lambda r: str(r["metric"])),
                                         key=lambda r: str(r["metric"])):  # fmt: skip
                drawn += ["", terminal(metric), _rich_table(name, list(group), folder)]
        else:
            drawn += ["", _rich_table(name, rows, folder)]
    return draw(drawn, width, color)


def _rich_table(name: str, rows: list[dict[str, Any]], folder: str) -> Any:
    """One section as a table (:func:`jobs.formatting.ascii_table`): the columns of
    TABLE_COLUMNS that hold a value; findings one blank line apart; daily metric windows as
    dates."""
    from jobs.report import display_cells  # noqa: PLC0415

    cells = [_table_cells(name, display_cells(name, r, folder)) for r in rows]
    if name == "metrics" and all(r["window_start"].plain.endswith(" 00:00") for r in cells):
        for r in cells:
            r["window_start"].right_crop(len(" 00:00"))
    columns = [c for c in TABLE_COLUMNS[name] if any(r[c].plain for r in cells)]
    headers = [HEADERS.get(c, c.replace("_", " ")) for c in columns]
    return ascii_table(
        headers,
        [[r[c] for c in columns] for r in cells],
        right={h for c, h in zip(columns, headers, strict=True) if c in NUMERIC},
        wide={h: WIDE_COLUMNS[c] for c, h in zip(columns, headers, strict=True)
              if c in WIDE_COLUMNS},
        leading=int(name == "findings"),
    )  # fmt: skip


def _table_cells(name: str, cells: dict[str, str]) -> dict[str, Any]:
    """One row for the table format as rich ``Text`` (never markup), every value neutralized.
    A finding is three cells: severity, events, and the finding itself on a few lines: rule
    (KIP); subject (discriminator) and node; when seen and where; the explanation."""
    from rich.text import Text  # noqa: PLC0415

    safe = {k: terminal(v) for k, v in cells.items()}
    if name != "findings":
        return {k: Text(v) for k, v in safe.items()}
    first, last = safe["first_seen"], safe["last_seen"]
    if first and last and first != last:
        last = last[11:] if last[:10] == first[:10] else last
        seen = f"seen {first} .. {last}"
    else:
        seen = f"seen {first or last}" if first or last else ""
    where = " ".join(p for p in (seen, f"in {safe['evidence']}" if safe["evidence"] else "") if p)
    subject = safe["subject"] + (f", node {safe['node']}" if safe["node"] else "")
    finding = Text(safe["rule"], style="bold")
    finding.append(f" ({safe['kip']})" if safe["kip"] else "")
    for part in (subject, where, safe["explanation"]):
        finding.append("\n" + part if part else "")
    style = SEVERITY_STYLES.get(safe["severity"], "")
    return {"severity": Text(safe["severity"], style=style), "count": Text(safe["count"]),
            "finding": finding}  # fmt: skip


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
