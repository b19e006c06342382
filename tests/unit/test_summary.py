"""The run summary without Spark: severities, ``--fail-on``, the exit code, the headline, and
the text that fits a terminal (a ``RunSummary`` built by hand)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from jobs.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, EXIT_UNBALANCED
from jobs.summary import (
    WIDTH,
    RunSummary,
    TableWrite,
    count_by_severity,
    fail_on_line,
    file_concerns,
    findings_headline,
    no_record_reason,
    run_exit_code,
    severities_at_or_above,
)
from transforms.bronze.accounting import BUCKETS

FINDINGS = [
    {"rule_id": "tokens.renewed_past_max", "severity": "high", "findings": 1},
    {"rule_id": "reauth.no_reauth_client", "severity": "medium", "findings": 2},
    {"rule_id": "authz.denied_burst", "severity": "low", "findings": 13},
    {"rule_id": "reauth.other", "severity": "medium", "findings": 21},
]


def _row(path: str, **counts: int) -> dict[str, Any]:
    """A balanced accounting row: ``records`` records in the window, all parsed unless the
    counts say otherwise."""
    records = counts.pop("records", 10)
    row: dict[str, Any] = dict.fromkeys(BUCKETS, 0)
    row.update(
        source_path=path, balanced=True, physical_lines=records, folded_lines=records,
        records=records, bronze_records=records, parsed=records,
    )  # fmt: skip
    row.update(counts)
    return row


def _summary(**fields: Any) -> RunSummary:
    defaults: dict[str, Any] = {
        "run_id": "r1",
        "engine": "embedded",
        "java": "Java 17.0.12",
        "lake": "/lakes/audit",
        "window": (datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 21, tzinfo=UTC)),
        "tables": [
            TableWrite("raw_lines", "/lakes/audit/raw_lines", 3, 123_456, False),
            TableWrite("findings", "/lakes/audit/findings", None, None, True),
        ],
        "accounting": [_row(f"/logs/broker-{n}/server.log") for n in (1, 2, 3)],
        "duration_s": 12.34,
        "findings": FINDINGS,
    }
    return RunSummary(**{**defaults, **fields})


def test_count_by_severity_has_every_severity_in_order() -> None:
    assert count_by_severity(FINDINGS) == {"high": 1, "medium": 23, "low": 13, "info": 0}
    assert list(count_by_severity([])) == ["high", "medium", "low", "info"]
    odd = count_by_severity([{"severity": "critical", "findings": 2}])
    assert odd == {"high": 0, "medium": 0, "low": 0, "info": 0, "critical": 2}


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        ("high", ("high",)),
        ("medium", ("high", "medium")),
        ("low", ("high", "medium", "low")),
        ("info", ("high", "medium", "low", "info")),
    ],
)
def test_severities_at_or_above(threshold: str, expected: tuple[str, ...]) -> None:
    assert severities_at_or_above(threshold) == expected


@pytest.mark.parametrize("typo", ["hihg", "High", "critical", ""])
def test_an_unknown_threshold_is_refused(typo: str) -> None:
    with pytest.raises(ValueError, match="expected one of high, medium, low, info"):
        severities_at_or_above(typo)


def test_headline_and_fail_on_lines() -> None:
    counts = count_by_severity(FINDINGS)
    assert findings_headline(counts) == "37 findings: 1 high, 23 medium, 13 low"
    assert findings_headline(count_by_severity(FINDINGS[:1])) == "1 finding: 1 high"
    assert findings_headline(count_by_severity([])) == "no findings"
    assert fail_on_line(counts, "medium") == (
        "FAILED --fail-on medium: 24 findings at or above medium (1 high, 23 medium)"
    )
    only_low = count_by_severity(FINDINGS[2:3])
    assert fail_on_line(only_low, "medium") == (
        "passed --fail-on medium: no finding at or above medium"
    )
    assert (
        fail_on_line(only_low, "low")
        == "FAILED --fail-on low: 13 findings at or above low (13 low)"
    )


@pytest.mark.parametrize(
    ("balanced", "no_record", "findings", "fail_on", "code"),
    [
        (True, False, FINDINGS, None, EXIT_OK),
        (True, False, FINDINGS, "high", EXIT_FINDINGS),
        (True, False, FINDINGS[2:3], "medium", EXIT_OK),
        (True, False, FINDINGS[2:3], "low", EXIT_FINDINGS),
        (True, False, [], "low", EXIT_OK),
        (False, False, FINDINGS, "high", EXIT_UNBALANCED),  # a bug wins over findings
        (False, True, [], None, EXIT_UNBALANCED),
        (True, True, [], "low", EXIT_ERROR),
    ],
)
def test_run_exit_code(
    balanced: bool, no_record: bool, findings: list[dict[str, Any]], fail_on: str | None, code: int
) -> None:
    counts = count_by_severity(findings)
    assert (
        run_exit_code(balanced=balanced, no_record=no_record, counts=counts, fail_on=fail_on)
        == code
    )


def test_no_record_reasons() -> None:
    files = 3
    assert "no log record in the 3 input file(s)" in str(
        no_record_reason(dict.fromkeys(BUCKETS, 0), files)
    )
    outside = {**dict.fromkeys(BUCKETS, 0), "records": 40, "outside_window": 40}
    assert "none of the 40 records lies in the window" in str(no_record_reason(outside, files))
    noise = {**outside, "outside_window": 0, "bronze_records": 40, "out_of_scope": 40}
    assert "no Kafka security record: all 40 records" in str(no_record_reason(noise, files))
    for bucket in ("parsed", "quarantined", "pending"):
        assert no_record_reason({**noise, "out_of_scope": 39, bucket: 1}, files) is None


def test_file_concerns() -> None:
    assert file_concerns(_row("/a.log")) == []
    assert file_concerns(_row("/a.log", parsed=4, out_of_scope=6)) == [
        "6 of 10 records are noise (60%)"
    ]
    assert file_concerns(_row("/a.log", parsed=5, out_of_scope=5)) == []  # half is not most
    unknown = file_concerns(_row("/a.log", parsed=0, out_of_scope=10, unrecognized=9))
    assert unknown == ["9 of 10 records in no known layout (see warning)"]
    broken = file_concerns({**_row("/a.log"), "balanced": False, "file_issue": "truncated gzip"})
    assert broken[0].startswith("DOES NOT BALANCE (physical_lines 10, ")
    assert broken[1] == "not read whole: truncated gzip"


def test_render_opens_with_the_verdict_and_lists_only_the_files_to_look_at() -> None:
    accounting = [
        _row("/logs/broker-1/server.log", records=1000, parsed=10, out_of_scope=990),
        *(_row(f"/logs/broker-{n}/kafka-authorizer.log") for n in (1, 2, 3)),
        {**_row("/logs/broker-2/kafka-request.log"), "balanced": False},
    ]
    summary = _summary(accounting=accounting, fail_on="medium")
    lines = summary.render().splitlines()
    assert lines[:3] == [
        "FAILED --fail-on medium: 24 findings at or above medium (1 high, 23 medium)",
        "37 findings: 1 high, 23 medium, 13 low",
        "1,040 lines, 1,040 records: ACCOUNTING DOES NOT BALANCE in 1 of 5 files (a bug)",
    ]
    text = "\n".join(lines)
    assert "files worth a look: 2 of 5 (the 3 others balance, mostly Kafka records)" in text
    assert "  under /logs:" in text
    assert "    broker-1/server.log: 990 of 1,000 records are noise (99%)" in lines
    assert "    broker-2/kafka-request.log: DOES NOT BALANCE (" in text
    assert "kafka-authorizer.log" not in text
    assert "  raw_lines                           123,456        3" in text
    assert "  findings                            skipped        -" in text
    assert "tables written: 2 (1 skipped: already committed by this run)" in text
    assert max(len(line) for line in lines) <= WIDTH, [x for x in lines if len(x) > WIDTH]
    assert summary.exit_code == EXIT_UNBALANCED
    assert summary.verdict() == lines[2]


def test_render_of_a_quiet_run_without_findings() -> None:
    summary = _summary(findings=[], fail_on="high")
    lines = summary.render().splitlines()
    assert lines[:3] == [
        "passed --fail-on high: no finding at or above high",
        "no findings",
        "30 lines, 30 records: every line accounted for",
    ]
    assert "files: every one balances and is mostly Kafka records (each: --json)" in lines
    assert "findings: none" in lines
    assert summary.exit_code == EXIT_OK


def test_a_run_without_kafka_records_warns_and_exits_1() -> None:
    noise = [_row("/logs/zk/zookeeper.log", parsed=0, out_of_scope=10)]
    summary = _summary(accounting=noise, findings=[], fail_on="low")
    headline = summary.headline()
    assert headline[-1].startswith("warning: no Kafka security record: all 10 records")
    assert summary.exit_code == EXIT_ERROR
    assert summary.verdict() == headline[-1]


def test_long_warnings_wrap_without_breaking_paths() -> None:
    path = "/logs/" + "x" * 90 + "/server.log"
    summary = _summary(warnings=[f"{path}: 9 of 10 records are in a log layout " + "w " * 60])
    lines = summary.render().splitlines()
    start = lines.index(f"warning: {path}:")
    assert all(len(line) <= WIDTH for line in lines[start + 1 :])
    assert lines[start + 1].startswith("    9 of 10 records")


def test_readiness_principals_fit_the_width() -> None:
    names = [f"User:service-account-{n}" for n in range(12)]
    readiness = [
        {"candidate_ms": 900_000, "sessions": 40, "sessions_killed": 12,
         "sessions_at_risk_unknown_client": 1, "principals_killed": names,
         "first_kill_ts": datetime(2026, 11, 20, 9, 15, tzinfo=UTC)},
        {"candidate_ms": 3_600_000, "sessions": 40, "sessions_killed": 0,
         "sessions_at_risk_unknown_client": 0, "principals_killed": [], "first_kill_ts": None},
    ]  # fmt: skip
    lines = _summary(readiness=readiness).render().splitlines()
    row = next(i for i, line in enumerate(lines) if "15 min" in line)
    assert lines[row] == "     15 min       40     12       1  2026-11-20 09:15"
    assert lines[row + 1].startswith("    User:service-account-0, User:service-account-1, ")
    assert lines[row + 1].endswith(" (+9)")
    assert max(len(line) for line in lines) <= WIDTH
    assert lines[row + 2] == "        1 h       40      0       0  -                 -"


def test_json_carries_counts_threshold_and_exit_code() -> None:
    summary = _summary(fail_on="high")
    data = json.loads(summary.to_json())
    assert data["findings_by_severity"] == {"high": 1, "medium": 23, "low": 13, "info": 0}
    assert (data["fail_on"], data["exit_code"]) == ("high", EXIT_FINDINGS)
    assert data["headline"][0] == "FAILED --fail-on high: 1 finding at or above high (1 high)"
    assert [row["source_path"] for row in data["accounting"]] == [
        f"/logs/broker-{n}/server.log" for n in (1, 2, 3)
    ]
    assert data["totals"]["parsed"] == 30
