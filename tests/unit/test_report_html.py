"""``kafka-audit report --format html`` (issue 19, "A self-contained HTML report"): the page's
text section by section, escaping of log values, byte-identical output, no external resource,
the over-time resolution rule, and the argument mistakes. Gold rows made by hand, no Spark, no
lake (tests/integration/test_report_html.py writes these rows to a lake and opens the page in
Chromium)."""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from jobs.cli.main import main
from jobs.errors import InputError
from jobs.report_figures import (
    Period,
    activity_periods,
    over_time_svg,
    time_resolution,
    token_timeline_svg,
    window_counts,
)
from jobs.report_html import render_html

RUN = "r"
DAY = date(2026, 11, 20)
HOSTILE = "User:<script>alert(1)</script>"


def at(hour: int, minute: int = 0, day: int = 20) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


# Gold rows with every column of their table (the integration test writes them to Delta).


def finding_row(fid: str, severity: str, rule: str, subject: str, **more: Any) -> dict[str, Any]:
    kind, _, name = subject.partition(": ")
    row = {"finding_id": fid, "rule_id": rule, "kip": "KIP-368", "severity": severity,
           "subject_type": kind, "subject": name, "discriminator": "", "node_id": "1",
           "first_seen_ts": at(9), "last_seen_ts": at(10, 30), "count": 1, "evidence": [],
           "explanation": "", "run_id": RUN, "finding_date": DAY}  # fmt: skip
    return {**row, **more}


def evidence(path: str, *lines: int) -> list[dict[str, Any]]:
    return [{"source_path": path, "line_number": n} for n in lines]


def readiness_row(candidate_ms: int, killed: int, principals: list[str]) -> dict[str, Any]:
    return {"candidate_ms": candidate_ms, "sessions": 12, "sessions_killed": killed,
            "sessions_at_risk_unknown_client": 1, "principals_killed": principals,
            "distinct_principals_killed": len(principals),
            "client_software_killed": ["librdkafka/1.9.2"] if killed else [],
            "first_kill_ts": at(9, 15) if killed else None, "run_id": RUN,
            "activity_date": DAY}  # fmt: skip


def metric_row(
    name: str, window: str, start: datetime, events: int, **slices: Any
) -> dict[str, Any]:
    step = timedelta(hours=1) if window == "1h" else timedelta(days=1)
    row = {"metric_name": name, "window": window, "window_start_ts": start,
           "window_end_ts": start + step, "broker_id": "1", "listener": None, "mechanism": None,
           "principal": None, "api_key_name": None, "value": float(events), "event_count": events,
           "run_id": RUN, "window_date": start.date()}  # fmt: skip
    return {**row, **slices}


def history(op: str, when: datetime, error_code: int = 0) -> dict[str, Any]:
    return {"event_ts": when, "actor": "User:alice", "operation": op, "new_expiry_ts": None,
            "error_code": error_code, "error_code_name": "NONE" if error_code == 0 else "DELEGATION_TOKEN_OWNER_MISMATCH",
            "requested_period_ms": None, "observed_expiry_ms": None, "observed_issue_ms": None,
            "observed_max_ms": None, "expected_expiry_ms": None, "expected_error_code": None,
            "check": "ok", "source": "request_log", "metadata_mode": "kraft", "node_id": "1",
            "source_path": "/logs/broker-1/kafka-request.log", "line_number": 7}  # fmt: skip


def token_row(
    key: str, owner: str, state: str, ops: Sequence[dict[str, Any]], **more: Any
) -> dict[str, Any]:
    row = {"token_key": key, "token_id": key, "hmac_fingerprint": "ab" * 16, "owner": owner,
           "requester": owner, "renewers": ["User:renewer"], "metadata_mode": "kraft",
           "issue_ts": at(9), "max_ts": at(13), "expiry_ts": at(11), "max_lifetime_ms": 14_400_000,
           "renew_count": sum(1 for h in ops if h["operation"] == "renew"), "history": list(ops),
           "state": state, "state_as_of_ts": at(12), "ended_ts": None, "first_seen_ts": at(9),
           "last_seen_ts": ops[-1]["event_ts"], "replay_mismatch_count": 0, "hmac_verified": True}  # fmt: skip
    return {**row, **more}


def forwarded_row(record_type: str, **more: Any) -> dict[str, Any]:
    names = ("unpaired_reason", "api_version", "client_id", "correlation_id", "principal",
             "controller_principal", "principal_matches", "client_address", "client_port",
             "client_software_name", "client_software_version", "principal_token_authenticated",
             "broker_id", "broker_listener", "forwarding_broker_address",
             "envelope_sender_principal", "controller_id", "controller_listener", "error_code",
             "error_code_name", "controller_error_code", "controller_error_code_name",
             "broker_ts", "controller_ts", "pairing_gap_ms", "broker_total_time_ms",
             "broker_remote_time_ms", "controller_total_time_ms", "broker_source_path",
             "broker_line_number", "controller_source_path", "controller_line_number")  # fmt: skip
    row = {**dict.fromkeys(names), "run_id": RUN, "record_type": record_type,
           "api_key_name": "CREATE_TOPICS", "event_date": DAY}  # fmt: skip
    return {**row, **more}


def connect_row(observed_by: str, status: int | None, count: int, **more: Any) -> dict[str, Any]:
    row = {"worker_id": "connect-1", "observed_by": observed_by, "client_address": "10.0.0.9",
           "connector_name": "s3-sink", "endpoint": "POST /connectors/<name>/tasks",
           "status": status, "window_start_ts": at(2), "window_end_ts": at(3),
           "request_count": count, "non_worker_agent_count": None if observed_by == "follower" else 1,
           "stale_key_403_count": 0, "beyond_grace_403_count": int(status == 403), "first_seen_ts": at(2, 5),
           "last_seen_ts": at(2, 50), "run_id": RUN, "event_date": DAY}  # fmt: skip
    return {**row, **more}


def session_key_row(updated: datetime, deviation_ms: int | None) -> dict[str, Any]:
    return {"worker_id": "connect-1", "worker_client_id": "connect-1", "worker_group_id": "g",
            "updated_ts": updated, "previous_updated_ts": None, "interval_ms": None,
            "key_ttl_ms": 3_600_000, "key_ttl_source": "default", "deviation_ms": deviation_ms,
            "off_schedule": None if deviation_ms is None else abs(deviation_ms) > 60_000,
            "source_path": "/logs/connect-1/connect.log", "line_number": 3, "run_id": RUN,
            "event_date": updated.date()}  # fmt: skip


def gold_tables() -> dict[str, list[dict[str, Any]]]:
    """Every table the page reads: a hostile principal in a finding, a token and a forwarded
    request; metrics of two days six years apart; a finding of a severity the rules do not
    use."""
    hostile_evidence = evidence("/logs/broker-1/server.log", 17, 18, 19, 20, 21)
    ops = [history("create", at(9)), history("renew", at(10)), history("renew", at(10, 30), 60)]
    return {
        "findings": [
            finding_row("f1", "medium", "reauth.no_reauth_client_on_expiring_listener", "principal: User:alice",
                        count=3, evidence=evidence("/logs/broker-2/server.log", 40),
                        explanation="User:alice cannot re-authenticate."),
            finding_row("f2", "high", "tokens.owner_mismatch", f"principal: {HOSTILE}", kip="KIP-48",
                        discriminator="renew tok-1", evidence=hostile_evidence,
                        explanation=f"{HOSTILE} renewed a token it does not own \x1b[31m."),
            finding_row("f3", "critical", "custom.rule", "principal: User:bob", kip="",
                        node_id=None, first_seen_ts=at(8), last_seen_ts=at(8)),
        ],
        "reauth_readiness": [
            readiness_row(900_000, 2, [HOSTILE, "User:alice"]),
            readiness_row(3_600_000, 0, []),
        ],
        "security_metrics": [
            metric_row("failed-authentication-total", "1h", at(9), 3, listener="SASL_SSL"),
            metric_row("failed-authentication-total", "1h", at(11), 2, listener="SASL_SSL"),
            metric_row("failed-authentication-total", "1d", at(0), 5, listener="SASL_SSL"),
            metric_row("failed-authentication-total", "1h", datetime(2020, 6, 3, 14, tzinfo=UTC), 1),
            metric_row("failed-authentication-total", "1d", datetime(2020, 6, 3, tzinfo=UTC), 1),
            metric_row("authorization-denied-rate-per-minute", "1h", at(10), 4, principal=HOSTILE),
            metric_row("authorization-denied-rate-per-minute", "1d", at(0), 4, principal=HOSTILE),
        ],
        "token_lifecycle": [
            token_row("tok-1", "User:alice", "active", ops),
            token_row("tok-2", "User:<b>bold</b>", "expired_early",
                      [history("create", at(9, 30)), history("expire", at(10, 15))],
                      expiry_ts=at(10, 15), ended_ts=at(10, 15), first_seen_ts=at(9, 30),
                      issue_ts=at(9, 30), hmac_verified=None),
        ],
        "forwarded_requests": [
            forwarded_row("paired", principal="User:alice", controller_principal="User:alice",
                          principal_matches=True, broker_ts=at(9, 1), error_code_name="NONE"),
            forwarded_row("envelope", api_key_name="ENVELOPE", principal=HOSTILE,
                          envelope_sender_principal="User:mallory", client_address="10.0.9.9",
                          controller_id="3000", error_code_name="CLUSTER_AUTHORIZATION_FAILED",
                          controller_ts=at(9, 5), controller_source_path="/logs/controller/kafka-request.log",
                          controller_line_number=62),
        ],
        "connect_internal_requests": [
            connect_row("leader", 403, 2),
            connect_row("leader", 403, 1, window_start_ts=at(3), window_end_ts=at(4)),
            connect_row("follower", None, 1, client_address=None),
        ],
        "connect_session_keys": [
            session_key_row(at(0, 0, 20), None),
            session_key_row(at(1, 10, 20), 600_000),
        ],
    }  # fmt: skip


class _Text(HTMLParser):
    """Visible text of a page: title, style, script and the figures' SVG left out; one line
    per block element, whitespace collapsed."""

    BLOCKS = frozenset({"h1", "h2", "h3", "p", "li", "tr", "div", "nav", "figure", "label"})
    SKIPPED = frozenset({"title", "style", "script", "svg"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skipping += tag in self.SKIPPED
        if tag in self.BLOCKS or tag in ("td", "th"):
            self.parts.append("\n" if tag in self.BLOCKS else " | ")

    def handle_endtag(self, tag: str) -> None:
        self.skipping -= tag in self.SKIPPED
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(re.sub(r"\s+", " ", data))


def page_text(html: str) -> list[str]:
    """The page's visible text as lines (blank lines dropped; table cells joined by ``|``)."""
    parser = _Text()
    parser.feed(html)
    lines = (re.sub(r"\s+", " ", line).strip(" |") for line in "".join(parser.parts).split("\n"))
    return [line for line in lines if line]


def section(lines: list[str], heading: str) -> list[str]:
    """The lines from ``heading`` to the next section heading (h2 texts)."""
    headings = [h for h in HEADINGS if h != heading]
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i] in headings), len(lines))
    return lines[start:end]


HEADINGS = (
    "Findings",
    "Re-authentication readiness (KIP-368)",
    "Authentication failures and authorization denials over time",
    "Delegation tokens (KIP-48)",
    "Forwarding to the controller (KIP-590)",
    "Connect internal request signing (KIP-507)",
)


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(gold_tables(), "/data/lake", "all days")


def test_top_and_findings(page: str) -> None:
    """Headline, counts, then findings most severe first (an unknown severity last), with
    subject, KIP, events, explanation and evidence relative to the folder the files share;
    past three positions, the rest behind +N more."""
    lines = page_text(page)
    assert lines[: lines.index("Re-authentication readiness (KIP-368)")] == [
        "kafka-audit report",
        "3 findings: 1 high, 1 medium, 1 critical",
        "lake: /data/lake · window: all days",
        "6 authentication failures",
        "4 authorization denials",
        "2 delegation tokens",
        "2 forwarded requests (log lines)",
        "3 Connect internal requests",
        "2 Connect session-key rotations",
        "Findings · Readiness · Over time · Tokens · Forwarding · Connect",
        "Findings",
        "Most severe first, then most events. Evidence is file:line under /logs/.",
        "Show:",
        "high (1)",
        "medium (1)",
        "other (1)",
        "high tokens.owner_mismatch (KIP-48) · principal: User:<script>alert(1)</script> (renew tok-1) · node 1 · 1 event",
        "User:<script>alert(1)</script> renewed a token it does not own \\x1b[31m.",
        "seen 2026-11-20 09:00:00 .. 10:30:00 · evidence: broker-1/server.log:17, broker-1/server.log:18, broker-1/server.log:19 +2 more broker-1/server.log:20, broker-1/server.log:21",
        "medium reauth.no_reauth_client_on_expiring_listener (KIP-368) · principal: User:alice · node 1 · 3 events",
        "User:alice cannot re-authenticate.",
        "seen 2026-11-20 09:00:00 .. 10:30:00 · evidence: broker-2/server.log:40",
        "critical custom.rule · principal: User:bob · 1 event",
        "seen 2026-11-20 08:00:00",
    ]


def test_readiness_and_over_time(page: str) -> None:
    """Readiness per candidate with every principal and client it would kill; failures and
    denials over time: the figure, the events per slice."""
    lines = page_text(page)
    assert section(lines, "Re-authentication readiness (KIP-368)")[2:] == [
        "candidate | sessions | killed | unknown client | first kill | principals killed | client software killed",
        "15 min | 12 | 2 | 1 | 2026-11-20 09:15:00 | User:<script>alert(1)</script>, User:alice | librdkafka/1.9.2",
        "1 h | 12 | 0 | 1",
    ]
    assert section(lines, "Authentication failures and authorization denials over time")[2:] == [
        "Authentication failures: 6 (failed-authentication-total)",
        "broker | listener | mechanism | events",
        "1 | SASL_SSL | | 5",
        "1 | | | 1",
        "Authorization denials: 4 (authorization-denied-rate-per-minute)",
        "principal | broker | events",
        "User:<script>alert(1)</script> | 1 | 4",
    ]


def test_tokens_forwarding_connect(page: str) -> None:
    """Token table (later times without their date), forwarding lines per kind and the failed
    ENVELOPE, Connect requests per status (a follower's null agent count left blank) and
    session-key rotations per worker."""
    lines = page_text(page)
    assert section(lines, "Delegation tokens (KIP-48)")[1:] == [
        "1 active, 1 expired_early.",
        "token | owner | renewers | state | issued | expiry | max | ended | renewals | rejected | replay mismatches | HMAC verified",
        "tok-1 | User:alice | User:renewer | active | 2026-11-20 09:00:00 | 11:00:00 | 13:00:00 | | 2 | 1 | 0 | yes",
        "tok-2 | User:<b>bold</b> | User:renewer | expired_early | 2026-11-20 09:30:00 | 10:15:00 | 13:00:00 | 10:15:00 | 0 | 0 | 0 | not checked",
    ]
    assert section(lines, "Forwarding to the controller (KIP-590)")[1:] == [
        "2 lines: 1 envelope, 1 paired.",
        "record | unpaired because | API | error | lines",
        "envelope | | ENVELOPE | CLUSTER_AUTHORIZATION_FAILED | 1",
        "paired | | CREATE_TOPICS | NONE | 1",
        "Failed ENVELOPEs and principal mismatches",
        "when | record | API | principal | sender / controller saw | client | controller | error | line (under /logs/controller/)",
        "2026-11-20 09:05:00 | envelope | ENVELOPE | User:<script>alert(1)</script> | User:mallory | 10.0.9.9 | 3000 | CLUSTER_AUTHORIZATION_FAILED | kafka-request.log:62",
    ]
    assert section(lines, "Connect internal request signing (KIP-507)")[1:] == [
        "Internal requests",
        "worker | seen by | connector | endpoint | status | requests | non-worker agent | stale-key 403 | 403 beyond grace",
        "connect-1 | follower | s3-sink | POST /connectors/<name>/tasks | | 1 | | 0 | 0",
        "connect-1 | leader | s3-sink | POST /connectors/<name>/tasks | 403 | 3 | 2 | 0 | 2",
        "Session-key rotations",
        "worker | rotations | key TTL | off schedule | largest deviation | first | last",
        "connect-1 | 2 | 1 h | 1 | 10 min | 2026-11-20 00:00:00 | 2026-11-20 01:10:00",
    ]


def test_log_values_are_text_never_markup(page: str) -> None:
    """Autoescape: the hostile principal is escaped wherever it is shown (findings, readiness,
    metrics, forwarding; the token owner in the figure too); controls shown escaped."""
    assert "<script" not in page and "<b>bold" not in page
    assert page.count("User:&lt;script&gt;alert(1)&lt;/script&gt;") == 5
    assert "\x1b" not in page and "\\x1b[31m" in page
    assert "User:&lt;b&gt;bold&lt;/b&gt; tok-2</text>" in page  # the timeline's label


def test_self_contained_and_deterministic(page: str) -> None:
    """No script, stylesheet link, image or font to fetch: the only addresses are the SVG
    namespaces; the figures are inline SVG; the same rows give the same bytes."""
    assert re.findall(r"<script|<link|<img|<iframe|@import|url\((?!#)|src=", page) == []
    assert sorted(set(re.findall(r"https?://[^\"' )]+", page))) == [
        "http://www.w3.org/1999/xlink",
        "http://www.w3.org/2000/svg",
    ]
    assert [m.start() > 0 for m in re.finditer("<svg ", page)] == [True, True, True]
    assert render_html(gold_tables(), "/data/lake", "all days") == page


def test_severity_filter_is_css(page: str) -> None:
    """One checkbox per severity shown (unknown ones together as 'other'), each hiding its
    findings with a CSS rule: works offline, without script."""
    assert re.findall(r'<input type="checkbox" id="([^"]+)" checked>', page) == [
        "show-sev-high",
        "show-sev-medium",
        "show-sev-other",
    ]
    rules = re.findall(
        r"#findings:has\(#(show-sev-\w+):not\(:checked\)\) \.finding\.(sev-\w+)", page
    )
    assert rules == [("show-sev-high", "sev-high"), ("show-sev-medium", "sev-medium"),
                     ("show-sev-other", "sev-other")]  # fmt: skip


def test_empty_lake() -> None:
    """Every table present and empty: each section says so, no figure."""
    empty: dict[str, list[dict[str, Any]]] = {name: [] for name in gold_tables()}
    html = render_html(empty, "lake", "2030-01-01 .. 2030-01-02 (UTC, end exclusive)")
    assert "<svg" not in html
    assert page_text(html) == [
        "kafka-audit report",
        "no findings",
        "lake: lake · window: 2030-01-01 .. 2030-01-02 (UTC, end exclusive)",
        "0 authentication failures",
        "0 authorization denials",
        "0 delegation tokens",
        "0 forwarded requests (log lines)",
        "0 Connect internal requests",
        "0 Connect session-key rotations",
        "Findings · Readiness · Over time · Tokens · Forwarding · Connect",
        "Findings",
        "No findings in this window.",
        "Re-authentication readiness (KIP-368)",
        "No readiness rows in this window.",
        "Authentication failures and authorization denials over time",
        "From security_metrics (Kafka's JMX names). Each panel is a stretch of days with data, drawn per hour when it spans three days or less, else per day; more than seven days without data start a new panel.",
        "Authentication failures: 0 (failed-authentication-total)",
        "None in this window.",
        "Authorization denials: 0 (authorization-denied-rate-per-minute)",
        "None in this window.",
        "Delegation tokens (KIP-48)",
        "No delegation token in this window.",
        "Forwarding to the controller (KIP-590)",
        "No forwarded request in this window.",
        "Connect internal request signing (KIP-507)",
        "Internal requests",
        "No internal request in this window.",
        "Session-key rotations",
        "No session-key rotation in this window.",
    ]


def test_lake_without_the_newer_tables() -> None:
    """A lake of an older version (no token, forwarding or Connect tables): the page still
    renders, and says which table is missing."""
    tables: dict[str, list[dict[str, Any]] | None] = {**gold_tables()}
    for name in ("token_lifecycle", "forwarded_requests", "connect_internal_requests"):
        tables[name] = None
    del tables["connect_session_keys"]
    lines = page_text(render_html(tables, "lake", "all days"))
    assert lines[3:9] == [
        "6 authentication failures",
        "4 authorization denials",
        "not in this lake delegation tokens",
        "not in this lake forwarded requests (log lines)",
        "not in this lake Connect internal requests",
        "not in this lake Connect session-key rotations",
    ]
    assert lines[lines.index("Delegation tokens (KIP-48)") :] == [
        "Delegation tokens (KIP-48)",
        "This lake has no token_lifecycle table.",
        "Forwarding to the controller (KIP-590)",
        "This lake has no forwarded_requests table.",
        "Connect internal request signing (KIP-507)",
        "This lake has no connect_internal_requests or connect_session_keys table.",
    ]


# The over-time rule (jobs.report_figures).


@pytest.mark.parametrize(
    ("extent", "resolution"),
    [(timedelta(hours=1), "1h"), (timedelta(days=1), "1h"), (timedelta(days=3), "1h"),
     (timedelta(days=3, seconds=1), "1d"), (timedelta(days=4), "1d"), (timedelta(days=2300), "1d")],
)  # fmt: skip
def test_time_resolution(extent: timedelta, resolution: str) -> None:
    assert time_resolution(extent) == resolution


def utc_day(y: int, m: int, d: int, days: int = 1) -> Period:
    start = datetime(y, m, d, tzinfo=UTC)
    return Period(start, start + timedelta(days=days))


def test_periods_follow_the_data_not_the_calendar() -> None:
    """The samples' days of 2020 and 2023 and a cluster-day of 2026: one short period each
    (per hour), not six years of days; 7 days without data stay one period, 8 split it."""
    moments = [datetime(2020, 6, 3, 14, tzinfo=UTC), datetime(2023, 1, 19, 19, tzinfo=UTC),
               *(at(h) for h in range(6))]  # fmt: skip
    periods = activity_periods(moments)
    assert periods == [utc_day(2020, 6, 3), utc_day(2023, 1, 19), utc_day(2026, 11, 20)]
    assert [p.resolution for p in periods] == ["1h", "1h", "1h"]
    assert [p.describe() for p in periods] == [
        "2020-06-03 (per hour)",
        "2023-01-19 (per hour)",
        "2026-11-20 (per hour)",
    ]
    joined = activity_periods([at(0, day=1), at(0, day=9)])  # days 2..8 without data
    assert joined == [utc_day(2026, 11, 1, days=9)]
    assert joined[0].describe() == "2026-11-01 .. 2026-11-09 (per day)"
    assert activity_periods([at(0, day=1), at(0, day=10)]) == [
        utc_day(2026, 11, 1),
        utc_day(2026, 11, 10),
    ]


def test_periods_merge_past_the_panel_limit() -> None:
    """Eight separate days and at most 6 panels: the two shortest gaps close first (the
    earliest of equal gaps)."""
    days = [1, 20, 40, 42 + 8, 70, 71 + 9, 110, 150]  # gaps: 18, 19, 9, 19, 9, 29, 39 idle days
    moments = [datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(days=d) for d in days]
    starts = [
        (p.start.date().isoformat(), (p.end - p.start).days) for p in activity_periods(moments)
    ]
    assert starts == [
        ("2026-01-02", 1),
        ("2026-01-21", 1),
        ("2026-02-10", 11),
        ("2026-03-12", 11),
        ("2026-04-21", 1),
        ("2026-05-31", 1),
    ]


def test_periods_of_nothing_and_of_other_zones() -> None:
    """No moment: no period. A moment with an offset counts on its UTC day; a naive one is
    UTC."""
    assert activity_periods([]) == []
    moments = [datetime(2026, 11, 20, 23, 30), datetime.fromisoformat("2026-11-21T22:30:00-02:00")]
    assert activity_periods(moments) == [utc_day(2026, 11, 20, days=3)]  # the 20th to the 22nd


def test_window_counts_zero_fill_the_data_extent() -> None:
    """Hourly counts summed over slices, zero-filled between the first and last hour with data;
    daily rows and rows of other days ignored; daily rows used when the lake has no hourly."""
    rows = [
        metric_row("failed-authentication-total", "1h", at(9), 3, listener="A"),
        metric_row("failed-authentication-total", "1h", at(9), 1, listener="B"),
        metric_row("failed-authentication-total", "1h", at(12), 2),
        metric_row("failed-authentication-total", "1d", at(0), 6),
        metric_row("failed-authentication-total", "1h", at(9, day=21), 7),
    ]
    assert window_counts(rows, utc_day(2026, 11, 20)) == [
        (at(9), at(10), 4),
        (at(10), at(11), 0),
        (at(11), at(12), 0),
        (at(12), at(13), 2),
    ]
    assert window_counts([r for r in rows if r["window"] == "1d"], utc_day(2026, 11, 20)) == [
        (at(0), at(0, day=21), 6)
    ]
    assert window_counts(rows, utc_day(2026, 11, 25)) == []


def test_over_time_figure_has_a_panel_per_period() -> None:
    """One panel per period, titled with its days, resolution and events; text stays text."""
    rows = gold_tables()["security_metrics"]
    failures = [r for r in rows if r["metric_name"] == "failed-authentication-total"]
    svg = over_time_svg(
        failures, activity_periods(r["window_start_ts"] for r in failures), "failures"
    )
    titles = re.findall(r">(\d{4}-\d\d-\d\d \(per hour\): \d+)</text>", svg)
    assert titles == ["2020-06-03 (per hour): 1", "2026-11-20 (per hour): 5"]
    assert svg.startswith("<svg ") and "<metadata>" not in svg


def test_token_timeline_labels_and_legend() -> None:
    """One labelled line per token (owner, key's start), and the legend of states and marks."""
    svg = token_timeline_svg(gold_tables()["token_lifecycle"])
    assert re.findall(r">([^<>]+)</text>", svg) == [
        *("09:00", "10:00", "11:00", "12:00", "13:00", "2026-Nov-20"),  # the UTC time axis
        "User:alice tok-1",
        "User:&lt;b&gt;bold&lt;/b&gt; tok-2",
        *("active", "expired", "expired_early", "swept"),
        *("renewed", "expired (request)", "removed (token manager)", "rejected request"),
        "until max lifetime",
    ]


def test_dollars_in_a_name_are_not_math() -> None:
    """matplotlib would read ``$...$`` as mathtext (and raise on ``$\\frac$``): names are
    drawn as written."""
    token = token_row("tok-3", "User:$\\frac$", "active", [history("create", at(9))])
    assert ">User:$\\frac$ tok-3</text>" in token_timeline_svg([token])


# Arguments (exit 2 before any read) and writing --output.


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--section", "findings"],
         "--format html is the whole report at the data's own resolution: drop --section"),
        (["--window", "1h", "--width", "80"],
         "--format html is the whole report at the data's own resolution: drop --window and --width"),
        (["--output", "/nowhere/report.html"],
         "--output /nowhere/report.html: folder /nowhere does not exist"),
        (["--output", "/tmp"], "--output /tmp is a folder: give a file name"),
    ],
)  # fmt: skip
def test_html_argument_mistakes(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--lake", "/no/lake", "--format", "html", *argv]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"kafka-audit report: error: {message}"


def test_html_to_a_terminal_needs_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["report", "--lake", "/no/lake", "--format", "html"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "kafka-audit report: error: --format html writes a page: add --output report.html"
    )


def test_output_that_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed write is an InputError (exit 1, one line) and leaves neither the file nor its
    partial copy."""
    from jobs.cli import report as cli  # noqa: PLC0415

    def disk_full(self: Path, target: Path) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "replace", disk_full)
    out = tmp_path / "report.md"
    with pytest.raises(InputError) as raised:
        cli._write("text\n", out)
    assert str(raised.value) == f"cannot write --output {out}: No space left on device"
    assert list(tmp_path.iterdir()) == []
