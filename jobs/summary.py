"""The run summary: what was written where, and what became of every input line."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from jobs.formatting import duration_text
from jobs.lake.tables import WriteResult
from jobs.neutralize import terminal
from transforms.bronze.accounting import BUCKETS

_SHORT = {
    "physical_lines": "lines",
    "comment_lines": "comment",
    "blank_lines": "blank",
    "bronze_records": "records",
    "outside_window": "outside",
    "parsed": "parsed",
    "quarantined": "quarant.",
    "out_of_scope": "noise",
    "pending": "pending",
}


#: A file whose records are mostly in no known layout gets a warning (share of its records).
UNRECOGNIZED_SHARE = 0.5


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

    @property
    def balanced(self) -> bool:
        """True when every file's lines are all accounted for."""
        return all(bool(row["balanced"]) for row in self.accounting)

    def totals(self) -> dict[str, int]:
        """Each accounting bucket summed over all files."""
        return {b: sum(int(row[b]) for row in self.accounting) for b in BUCKETS}

    def to_json(self) -> str:
        """The summary as one JSON document (for Airflow logs and machines)."""
        data = asdict(self)
        data["window"] = [w.isoformat() if w else None for w in self.window]
        data["balanced"] = self.balanced
        data["totals"] = self.totals()
        return json.dumps(data, default=str, indent=2)

    def render(self) -> str:
        """The summary as a text report for a terminal."""
        start, end = self.window
        window = (
            f"{start:%Y-%m-%d} .. {end:%Y-%m-%d} (UTC, end exclusive)"
            if start and end
            else "all records"
        )
        lines = [
            f"kafka-security-audit run {self.run_id}",
            f"  engine: {self.engine}    {self.java or ''}".rstrip(),
            f"  window: {window}    duration: {self.duration_s:.1f} s",
            f"  lake:   {terminal(self.lake)}",
            "",
            f"  {'table':<26} {'rows':>8} {'version':>8}  path",
        ]
        for t in self.tables:
            rows = (
                "skipped" if t.skipped else ("?" if t.rows_written is None else str(t.rows_written))
            )
            lines.append(f"  {t.table:<26} {rows:>8} {t.version!s:>8}  {terminal(t.path)}")
        lines += [
            "",
            "  accounting per file (lines -> records -> parsed / quarantined / noise / pending)",
        ]
        header = "  " + " ".join(f"{_SHORT[b]:>8}" for b in _SHORT) + "  ok  file"
        lines.append(header)
        for row in self.accounting:
            cells = " ".join(f"{int(row[b]):>8}" for b in _SHORT)
            ok = "yes" if row["balanced"] else "NO "
            lines.append(f"  {cells}  {ok} {terminal(row['source_path'])}")
        totals = self.totals()
        lines.append("  " + " ".join(f"{totals[b]:>8}" for b in _SHORT) + "      (total)")
        lines += self._render_readiness() + self._render_findings()
        verdict = "every line accounted for" if self.balanced else "ACCOUNTING DOES NOT BALANCE"
        lines += ["", f"  {verdict}"]
        lines += [f"  warning: {terminal(w)}" for w in self.warnings]
        return "\n".join(lines)

    def _render_readiness(self) -> list[str]:
        if not self.readiness:
            return []
        lines = [
            "",
            "  re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...",
            f"  {'candidate':>10} {'sessions':>9} {'killed':>7} {'unknown':>8}  first kill (UTC)"
            "       principals killed",
        ]
        for row in self.readiness:
            first = row["first_kill_ts"]
            when = f"{first:%Y-%m-%d %H:%M:%S}" if first else "-"
            principals = ", ".join(map(terminal, row["principals_killed"][:5])) or "-"
            more = len(row["principals_killed"]) - 5
            principals += f" (+{more})" if more > 0 else ""
            lines.append(
                f"  {duration_text(int(row['candidate_ms'])):>10} {row['sessions']:>9} "
                f"{row['sessions_killed']:>7} {row['sessions_at_risk_unknown_client']:>8}  "
                f"{when:<20}  {principals}"
            )
        return lines

    def _render_findings(self) -> list[str]:
        if not self.findings:
            return ["", "  findings: none"]
        lines = ["", f"  {'findings':>8}  severity  rule"]
        for row in self.findings:
            lines.append(
                f"  {row['findings']:>8}  {row['severity']:<8}  {terminal(row['rule_id'])}"
            )
        return lines
