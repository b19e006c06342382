"""The run summary: what was written where, what became of every input line, what was found,
and the exit code that follows (``--fail-on``, docs/running.md).

The severity and verdict logic is pure functions (no Spark), unit-tested on their own.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from jobs.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, EXIT_UNBALANCED
from jobs.formatting import common_folder, duration_text, relative_position
from jobs.lake.tables import WriteResult
from jobs.neutralize import terminal
from schemas.findings import SEVERITIES
from transforms.bronze.accounting import BUCKETS

#: Width the text summary keeps to where it can (a path or a principal may be longer).
WIDTH = 80
#: A file whose records are mostly in no known layout gets a warning (share of its records).
UNRECOGNIZED_SHARE = 0.5
#: A file whose records in the window are mostly out of scope (no family claims them) is
#: listed in the summary: the input may not be the Kafka log it was meant to be.
NOISE_SHARE = 0.5


def count_by_severity(findings: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Findings per severity, every one of ``SEVERITIES`` present (0 when none).

    Args:
        findings: rows with ``severity`` and ``findings`` (a count), as ``RunSummary.findings``.

    Returns:
        ``{"high": n, "medium": n, "low": n, "info": n}``; a severity outside ``SEVERITIES``
        (none is written) is kept under its own name, after them.
    """
    counts = dict.fromkeys(SEVERITIES, 0)
    for row in findings:
        severity = str(row["severity"])
        counts[severity] = counts.get(severity, 0) + int(row["findings"])
    return counts


def severities_at_or_above(threshold: str) -> tuple[str, ...]:
    """``medium`` -> ``("high", "medium")``.

    Raises:
        ValueError: ``threshold`` is not one of ``SEVERITIES``.
    """
    if threshold not in SEVERITIES:
        raise ValueError(f"unknown severity {threshold}: expected one of {', '.join(SEVERITIES)}")
    return SEVERITIES[: SEVERITIES.index(threshold) + 1]


def severity_text(counts: Mapping[str, int], severities: Sequence[str] | None = None) -> str:
    """``3 high, 23 medium, 13 low``: the non-zero counts of ``severities`` (default: every
    severity of ``counts``), highest first; '' when all are 0."""
    names = list(counts) if severities is None else severities
    return ", ".join(f"{counts.get(s, 0):,} {s}" for s in names if counts.get(s, 0))


def findings_headline(counts: Mapping[str, int]) -> str:
    """``39 findings: 3 high, 23 medium, 13 low``, ``1 finding: 1 high`` or ``no findings``."""
    total = sum(counts.values())
    if not total:
        return "no findings"
    return f"{total:,} finding{'s' if total != 1 else ''}: {severity_text(counts)}"


def fail_on_breach(counts: Mapping[str, int], fail_on: str) -> int:
    """How many findings are at or above ``fail_on``.

    Raises:
        ValueError: ``fail_on`` is not one of ``SEVERITIES``.
    """
    return sum(counts.get(s, 0) for s in severities_at_or_above(fail_on))


def fail_on_line(counts: Mapping[str, int], fail_on: str) -> str:
    """``FAILED --fail-on medium: 3 findings at or above medium (1 high, 2 medium)``, or
    ``passed --fail-on medium: no finding at or above medium``.

    Raises:
        ValueError: ``fail_on`` is not one of ``SEVERITIES``.
    """
    breach = fail_on_breach(counts, fail_on)
    if not breach:
        return f"passed --fail-on {fail_on}: no finding at or above {fail_on}"
    detail = severity_text(counts, severities_at_or_above(fail_on))
    plural = "s" if breach != 1 else ""
    return (
        f"FAILED --fail-on {fail_on}: {breach:,} finding{plural} at or above {fail_on} ({detail})"
    )


def no_record_reason(totals: Mapping[str, int], files: int) -> str | None:
    """Why a run read no Kafka record at all, or None when it read some.

    Args:
        totals: the accounting buckets summed over the files (``RunSummary.totals``).
        files: how many files were read.

    Returns:
        One line: no record in the files (empty, or comments only), no record in the window,
        or no record of a known family (parsed, quarantined or pending) among those in it.
    """
    records, in_window = totals.get("records", 0), totals.get("bronze_records", 0)
    if not records:
        return (
            f"no log record in the {files:,} input file(s) (empty, or only comments and blank "
            "lines): nothing was audited"
        )
    if not in_window:
        return (
            f"none of the {records:,} records lies in the window: nothing was audited (check "
            "--start / --end against the files' dates)"
        )
    if not sum(totals.get(b, 0) for b in ("parsed", "quarantined", "pending")):
        return (
            f"no Kafka security record: all {in_window:,} records in the window are out of scope "
            "(no authentication, authorizer, request, token or Connect record; docs/"
            "kafka-log-formats.md lists the loggers read)"
        )
    return None


def run_exit_code(
    *, balanced: bool, no_record: bool, counts: Mapping[str, int], fail_on: str | None
) -> int:
    """The exit code of a run: ``EXIT_UNBALANCED`` (3, a bug) first, then ``EXIT_ERROR`` (1,
    no Kafka record read), then ``EXIT_FINDINGS`` (4, findings at or above ``fail_on``), else
    ``EXIT_OK``.

    Raises:
        ValueError: ``fail_on`` is not None nor one of ``SEVERITIES``.
    """
    if not balanced:
        return EXIT_UNBALANCED
    if no_record:
        return EXIT_ERROR
    if fail_on is not None and fail_on_breach(counts, fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def file_concerns(row: Mapping[str, Any]) -> list[str]:
    """Why one file's accounting row is worth a look: it does not balance, it could not be
    read whole, most of its records are noise (``NOISE_SHARE``) or in no known layout
    (``UNRECOGNIZED_SHARE``). Empty for a file that needs no look."""
    concerns = []
    records = int(row["bronze_records"])
    noise, unknown = int(row["out_of_scope"]), int(row.get("unrecognized") or 0)
    if not row["balanced"]:
        counts = ", ".join(f"{b} {int(row[b]):,}" for b in BUCKETS if b in row)
        concerns.append(f"DOES NOT BALANCE ({counts})")
    if row.get("file_issue"):
        concerns.append(f"not read whole: {row['file_issue']}")
    if unknown and unknown > UNRECOGNIZED_SHARE * records:
        concerns.append(f"{unknown:,} of {records:,} records in no known layout (see warning)")
    elif noise and noise > NOISE_SHARE * records:
        concerns.append(f"{noise:,} of {records:,} records are noise ({noise / records:.0%})")
    return concerns


def unrecognized_layout_warnings(accounting: Sequence[Mapping[str, Any]]) -> list[str]:
    """One warning per file whose records are mostly of layout ``unrecognized`` (more than
    ``UNRECOGNIZED_SHARE`` of its records in the window), saying how to declare its layout.

    Input: accounting rows (``transforms.bronze.accounting.line_accounting``, as dicts).
    """
    warnings = []
    for row in accounting:
        unknown, records = int(row.get("unrecognized") or 0), int(row["bronze_records"])
        if unknown and unknown > UNRECOGNIZED_SHARE * records:
            warnings.append(
                f"{row['source_path']}: {unknown} of {records} records are in a log layout the "
                "pipeline does not know (security lines among them are quarantined as "
                "unrecognized_layout); declare it: layout_pattern = '<log4j ConversionPattern>' "
                "in this source's [[sources]] entry, or put the node's log4j.properties / "
                "log4j2.yaml beside its logs (docs/layouts.md)"
            )
    return warnings


def wrapped(text: str, first: str, rest: str) -> list[str]:
    """``text`` wrapped to ``WIDTH`` columns; words (paths) are never broken."""
    return textwrap.wrap(
        text, WIDTH, initial_indent=first, subsequent_indent=rest,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip


@dataclass(frozen=True)
class TableWrite:
    """One table written by the run."""

    table: str
    path: str
    version: int | None
    rows_written: int | None
    skipped: bool

    @classmethod
    def from_result(cls, result: WriteResult) -> TableWrite:
        """Copy the fields of a lake ``WriteResult``."""
        return cls(result.table, result.path, result.version, result.rows_written, result.skipped)


@dataclass(frozen=True)
class RunSummary:
    """What one run did. ``balanced`` is the accounting invariant over every file."""

    run_id: str
    engine: str
    java: str | None
    lake: str
    window: tuple[datetime | None, datetime | None]
    tables: Sequence[TableWrite]
    accounting: Sequence[Mapping[str, Any]]
    duration_s: float
    warnings: Sequence[str] = field(default_factory=tuple)
    # KIP-368 what-if per candidate connections.max.reauth.ms over the run's days: candidate_ms,
    # sessions, sessions_killed, sessions_at_risk_unknown_client, principals_killed,
    # first_kill_ts.
    readiness: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    # Findings of the run's days: rule_id, severity, findings (count).
    findings: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    # Files that could not be read whole (truncated or corrupt .gz, removed after listing):
    # path -> reason. Their readable lines were read; each is also a warning.
    damaged_files: Mapping[str, str] = field(default_factory=dict)
    # ``kafka-audit run --fail-on``: the lowest severity that makes the run exit 4, or None.
    fail_on: str | None = None

    @property
    def balanced(self) -> bool:
        """True when every file's lines are all accounted for."""
        return all(bool(row["balanced"]) for row in self.accounting)

    def totals(self) -> dict[str, int]:
        """Each accounting bucket summed over all files."""
        return {b: sum(int(row[b]) for row in self.accounting) for b in BUCKETS}

    def findings_by_severity(self) -> dict[str, int]:
        """The run's findings per severity (``count_by_severity``)."""
        return count_by_severity(self.findings)

    def no_record_warning(self) -> str | None:
        """Why the run read no Kafka record at all (``no_record_reason``), or None."""
        return no_record_reason(self.totals(), len(self.accounting))

    @property
    def exit_code(self) -> int:
        """The run's exit code (``run_exit_code``): 3, 1, 4 or 0."""
        return run_exit_code(
            balanced=self.balanced,
            no_record=self.no_record_warning() is not None,
            counts=self.findings_by_severity(),
            fail_on=self.fail_on,
        )

    def headline(self) -> list[str]:
        """The summary's first lines: the ``--fail-on`` verdict (when given), the findings by
        severity, the lines and records read with the accounting verdict, and the warning of
        a run that read no Kafka record."""
        counts = self.findings_by_severity()
        lines = [fail_on_line(counts, self.fail_on)] if self.fail_on else []
        lines.append(findings_headline(counts))
        totals = self.totals()
        read = f"{totals['physical_lines']:,} lines, {totals['records']:,} records"
        if totals["bronze_records"] != totals["records"]:
            read += f" ({totals['bronze_records']:,} in the window)"
        unbalanced = sum(1 for row in self.accounting if not row["balanced"])
        verdict = (
            f"ACCOUNTING DOES NOT BALANCE in {unbalanced} of {len(self.accounting)} files (a bug)"
            if unbalanced
            else "every line accounted for"
        )
        lines.append(f"{read}: {verdict}")
        if (reason := self.no_record_warning()) is not None:
            lines.append(f"warning: {reason}")
        return lines

    def verdict(self) -> str:
        """The one headline line that explains the exit code (for stderr)."""
        lines, code = self.headline(), self.exit_code
        if code == EXIT_UNBALANCED:
            return next(line for line in lines if "DOES NOT BALANCE" in line)
        if code == EXIT_ERROR:
            return lines[-1]
        return lines[0]

    def to_json(self) -> str:
        """The summary as one JSON document (for Airflow logs and machines): every field,
        the per-file accounting whole, plus ``balanced``, ``totals``,
        ``findings_by_severity``, ``exit_code`` and ``headline``."""
        data = asdict(self)
        data["window"] = [w.isoformat() if w else None for w in self.window]
        data["balanced"] = self.balanced
        data["totals"] = self.totals()
        data["findings_by_severity"] = self.findings_by_severity()
        data["exit_code"] = self.exit_code
        data["headline"] = self.headline()
        return json.dumps(data, default=str, indent=2)

    def render(self) -> str:
        """The summary as text for a terminal, ``WIDTH`` columns where it can: the headline,
        the run, the tables, the accounting totals and only the files worth a look
        (``file_concerns``; every file: ``to_json``), readiness, findings, warnings."""
        lines = [row for line in self.headline() for row in wrapped(terminal(line), "", "  ")]
        lines += self._render_run() + self._render_tables() + self._render_accounting()
        lines += self._render_files() + self._render_readiness() + self._render_findings()
        lines += [""] if self.warnings else []
        for warning in self.warnings:
            lines += wrapped(terminal(warning), "warning: ", "    ")
        return "\n".join(lines)

    def _render_run(self) -> list[str]:
        start, end = self.window
        window = (
            f"{start:%Y-%m-%d} .. {end:%Y-%m-%d} (UTC, end exclusive)"
            if start and end
            else "all records"
        )
        engine = ", ".join(x for x in (f"{self.engine} engine", self.java) if x)
        return [
            "",
            f"run {terminal(self.run_id)}: {engine}, {self.duration_s:.1f} s",
            f"  window: {window}",
            f"  lake:   {terminal(self.lake)}",
        ]

    def _render_tables(self) -> list[str]:
        skipped = sum(1 for t in self.tables if t.skipped)
        note = f" ({skipped} skipped: already committed by this run)" if skipped else ""
        lines = ["", f"tables written: {len(self.tables)}{note}"]
        lines.append(f"  {'table':<30} {'rows':>12} {'version':>8}")
        for t in self.tables:
            rows = (
                "skipped" if t.skipped else "?" if t.rows_written is None else f"{t.rows_written:,}"
            )
            version = "-" if t.version is None else str(t.version)
            lines.append(f"  {terminal(t.table):<30} {rows:>12} {version:>8}")
        return lines

    def _render_accounting(self) -> list[str]:
        t = self.totals()
        in_records = t["physical_lines"] - t["comment_lines"] - t["blank_lines"]
        lines = [
            "",
            f"accounting over {len(self.accounting):,} files",
            f"  {t['physical_lines']:,} lines = {t['comment_lines']:,} comment + "
            f"{t['blank_lines']:,} blank + {in_records:,} in records",
            f"  {t['records']:,} records = {t['outside_window']:,} outside the window + "
            f"{t['bronze_records']:,} in it",
            f"  {t['bronze_records']:,} in the window = {t['parsed']:,} parsed + "
            f"{t['quarantined']:,} quarantined + {t['out_of_scope']:,} noise + "
            f"{t['pending']:,} pending",
        ]
        if t["unrecognized"]:
            lines.append(f"  ({t['unrecognized']:,} of them in no known log layout)")
        return lines

    def _render_files(self) -> list[str]:
        looks = [(row, c) for row in self.accounting if (c := file_concerns(row))]
        if not looks:
            return ["", "files: every one balances and is mostly Kafka records (each: --json)"]
        # Relative to the folder every input file shares: broker-1/server.log, not server.log.
        folder = common_folder(str(row["source_path"]) for row in self.accounting)
        lines = [
            "",
            f"files worth a look: {len(looks)} of {len(self.accounting)} (the "
            f"{len(self.accounting) - len(looks)} others balance, mostly Kafka records)",
        ]
        if folder:
            lines.append(f"  under {terminal(folder)}:")
        indent = "    " if folder else "  "
        for row, concerns in looks:
            name = relative_position(str(row["source_path"]), folder)
            lines += wrapped(f"{terminal(name)}: {'; '.join(concerns)}", indent, indent + "    ")
        return lines

    def _render_readiness(self) -> list[str]:
        if not self.readiness:
            return []
        lines = [
            "",
            "re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...",
            f"  {'candidate':>9} {'sessions':>8} {'killed':>6} {'unknown':>7}  "
            f"{'first kill (UTC)':<16}  principals killed",
        ]
        for row in self.readiness:
            first = row["first_kill_ts"]
            cells = (
                f"  {duration_text(int(row['candidate_ms'])):>9} {row['sessions']:>8,} "
                f"{row['sessions_killed']:>6,} {row['sessions_at_risk_unknown_client']:>7,}  "
                f"{f'{first:%Y-%m-%d %H:%M}' if first else '-':<16}  "
            )
            names = [terminal(p) for p in row["principals_killed"]]
            shown = _names_within(names, WIDTH - len(cells))
            if len(cells) + len(shown) <= WIDTH:
                lines.append(cells + shown)
            else:  # on a line of its own, under the row
                lines += [cells.rstrip(), "    " + _names_within(names, WIDTH - 4)]
        return lines

    def _render_findings(self) -> list[str]:
        if not self.findings:
            return ["", "findings: none"]
        order = {s: i for i, s in enumerate(SEVERITIES)}
        rows = sorted(
            self.findings,
            key=lambda r: (order.get(str(r["severity"]), len(order)), -int(r["findings"])),
        )
        lines = ["", "findings by rule", f"  {'count':>8}  {'severity':<8}  rule"]
        for row in rows:
            lines.append(
                f"  {int(row['findings']):>8,}  {terminal(row['severity']):<8}  "
                f"{terminal(row['rule_id'])}"
            )
        return lines


def _names_within(names: Sequence[str], room: int) -> str:
    """``a, b (+3)``: as many names as fit in ``room`` columns (at least one), and how many
    more; ``-`` for none."""
    if not names:
        return "-"
    shown = [names[0]]
    for name in names[1:]:
        rest = len(names) - len(shown) - 1
        tail = f" (+{rest})" if rest else ""
        if len(", ".join([*shown, name]) + tail) > room:
            break
        shown.append(name)
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" (+{more})" if more else "")
