"""``kafka-audit run --notify`` / ``[notify]`` (jobs/notify.py, docs/notifications.md): the
payload, the severity threshold, once per finding id, retries against a real HTTP server on
loopback, and the webhook URL kept out of every log line and message. No Spark: the findings
are a small Delta table written with deltalake."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql.pandas.types import to_arrow_schema

from jobs.cli.main import main
from jobs.cli.run import notify_after_run
from jobs.config import SEVERITY_NAMES, NotifySpec, RunConfig, SourceSpec, load_config_file
from jobs.errors import ConfigError
from jobs.notify import (
    Outcome,
    due_findings,
    finding_payload,
    finding_text,
    notify_findings,
    read_notified,
    record_notified,
    redacted_url,
    scrubbed,
    state_path,
)
from jobs.summary import RunSummary
from schemas import findings
from transforms.bronze.accounting import BUCKETS

SECRET_PATH = "/services/T000/B000/s3cr3tT0ken"
SECRET_QUERY = "sig=qu3rySecret"
FAST = 0.001  # backoff_s in tests


def _ts(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 11, 20, hour, minute, second, tzinfo=UTC)


def _finding(fid: str, severity: str, rule: str, subject: str, **more: Any) -> dict[str, Any]:
    kind, _, name = subject.partition(": ")
    row: dict[str, Any] = {
        "finding_id": fid, "rule_id": rule, "kip": "KIP-48", "severity": severity,
        "subject_type": kind, "subject": name, "discriminator": "", "node_id": None,
        "first_seen_ts": _ts(8), "last_seen_ts": _ts(8), "count": 1, "evidence": [],
        "explanation": f"{rule} explained.", "run_id": "run-1", "finding_date": date(2026, 11, 20),
    }  # fmt: skip
    return {**row, **more}


HIGH_TOKEN = _finding(
    "f-high-token", "high", "tokens.renewed_past_max", "token: hmac:ab12",
    discriminator="tok-1", node_id="1", first_seen_ts=_ts(8), last_seen_ts=_ts(9, 30), count=3,
    evidence=[{"source_path": "/logs/broker-1/kafka-request.log", "line_number": 5},
              {"source_path": "/logs/broker-1/kafka-request.log", "line_number": 40}],
    explanation="Token tok-1 renewed past its max lifetime.",
)  # fmt: skip
HIGH_CONNECT = _finding(
    "f-high-connect", "high", "connect.internal_endpoint_non_worker_agent",
    "client_address: 10.99.0.66", kip="KIP-507", discriminator="connect-1|curl/8.5.0",
    node_id="connect-1", first_seen_ts=_ts(2, 42, 30), last_seen_ts=_ts(2, 42, 30),
)  # fmt: skip
MEDIUM = _finding("f-medium", "medium", "reauth.no_reauth_client", "principal: User:alice",
                  kip="KIP-368", first_seen_ts=_ts(10))  # fmt: skip
LOW = _finding("f-low", "low", "authorizer.denial_burst", "principal: User:scanner")
INFO = _finding("f-info", "info", "tokens.metadata_mode", "node: 1")
LATER = _finding("f-high-later", "high", "tokens.renewed_past_max", "token: hmac:cd34",
                 first_seen_ts=_ts(8) + timedelta(days=2), last_seen_ts=_ts(8) + timedelta(days=2),
                 finding_date=date(2026, 11, 22))  # fmt: skip
ALL = [HIGH_TOKEN, HIGH_CONNECT, MEDIUM, LOW, INFO, LATER]
#: The high findings of ALL in sending order: by first seen.
HIGHS = ("f-high-connect", "f-high-token", "f-high-later")

#: finding_payload(HIGH_TOKEN), written out: the body a webhook receives.
HIGH_TOKEN_BODY = {
    "text": "kafka-audit [high] tokens.renewed_past_max: token hmac:ab12 (tok-1), 3 events, "
    "2026-11-20T08:00:00Z .. 2026-11-20T09:30:00Z, KIP-48",
    "finding": {
        "finding_id": "f-high-token",
        "severity": "high",
        "rule_id": "tokens.renewed_past_max",
        "kip": "KIP-48",
        "subject_type": "token",
        "subject": "hmac:ab12",
        "discriminator": "tok-1",
        "node_id": "1",
        "count": 3,
        "first_seen": "2026-11-20T08:00:00Z",
        "last_seen": "2026-11-20T09:30:00Z",
        "explanation": "Token tok-1 renewed past its max lifetime.",
        "evidence": [
            "/logs/broker-1/kafka-request.log:5",
            "/logs/broker-1/kafka-request.log:40",
        ],
        "run_id": "run-1",
    },
}
HIGH_CONNECT_TEXT = (
    "kafka-audit [high] connect.internal_endpoint_non_worker_agent: client_address 10.99.0.66 "
    "(connect-1|curl/8.5.0), 1 event, 2026-11-20T02:42:30Z, KIP-507"
)


def _write_findings(lake: Path, rows: list[dict[str, Any]]) -> None:
    schema = to_arrow_schema(findings.FINDINGS, timezone="UTC")
    write_deltalake(str(lake / findings.TABLE_NAME), pa.Table.from_pylist(rows, schema=schema),
                    partition_by=list(findings.PARTITION_COLUMNS))  # fmt: skip


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """A lake whose findings table holds ``ALL``: three high findings (two on the 20th, one on
    the 22nd), one of each other severity."""
    root = tmp_path / "lake"
    _write_findings(root, ALL)
    return root


@pytest.fixture
def one(tmp_path: Path) -> Path:
    """A lake with one finding, HIGH_CONNECT."""
    root = tmp_path / "one"
    _write_findings(root, [HIGH_CONNECT])
    return root


# A webhook on loopback -------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One scripted answer: status, seconds to wait before answering, extra headers."""

    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: list[Step]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[Step] = list(script)
        self.received: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client gave up on a delayed answer (a timeout under test)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            self.server.received.append({
                "path": self.path, "content_type": self.headers["Content-Type"],
                "user_agent": self.headers["User-Agent"], "body": json.loads(body),
            })  # fmt: skip
            script = self.server.script
            step = script.pop(0) if len(script) > 1 else script[0]
        time.sleep(step.delay_s)
        self.send_response(step.status)
        for name, value in step.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class Hook:
    server: _Server

    @property
    def url(self) -> str:
        """The webhook URL, with a token in its path and its query like Slack's and Teams'."""
        return f"http://127.0.0.1:{self.server.server_port}{SECRET_PATH}?{SECRET_QUERY}"

    @property
    def shown(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/…"

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.server.received]

    def ids(self) -> list[str]:
        return [r["body"]["finding"]["finding_id"] for r in self.server.received]


@pytest.fixture
def webhook() -> Iterator[Any]:
    """``webhook(Step(500), Step(200))``: a server answering POSTs with these steps in order,
    the last one repeated."""
    servers: list[_Server] = []

    def start(*script: Step) -> Hook:
        server = _Server(list(script) or [Step()])
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return Hook(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _notify(lake: Path, url: str, **spec: Any) -> Outcome:
    return notify_findings(str(lake), url, NotifySpec(**spec), backoff_s=FAST)


def _state(lake: Path) -> list[dict[str, Any]]:
    lines = state_path(str(lake)).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _stamped(ids: list[str], severity: str = "high") -> list[dict[str, Any]]:
    """State records of ``ids`` as ``_state`` returns them, ``notified_at`` checked apart."""
    rules = {row["finding_id"]: row["rule_id"] for row in ALL}
    return [{"finding_id": i, "severity": severity, "rule_id": rules[i], "notified_at": "T"}
            for i in ids]  # fmt: skip


def _unstamped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for record in records:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["notified_at"]), record
    return [{**record, "notified_at": "T"} for record in records]


# Pure functions ---------------------------------------------------------------------------


def test_the_payload_of_a_finding() -> None:
    assert finding_payload(HIGH_TOKEN) == HIGH_TOKEN_BODY
    assert finding_text(HIGH_CONNECT) == HIGH_CONNECT_TEXT


def test_text_without_times_or_discriminator() -> None:
    row = {**LOW, "first_seen_ts": None, "last_seen_ts": None, "count": 1200}
    assert finding_text(row) == (
        "kafka-audit [low] authorizer.denial_burst: principal User:scanner, 1,200 events, "
        "time unknown, KIP-48"
    )
    assert finding_payload({**row, "evidence": None})["finding"] == {
        "finding_id": "f-low", "severity": "low", "rule_id": "authorizer.denial_burst",
        "kip": "KIP-48", "subject_type": "principal", "subject": "User:scanner",
        "discriminator": None, "node_id": None, "count": 1200, "first_seen": None,
        "last_seen": None, "explanation": "authorizer.denial_burst explained.", "evidence": [],
        "run_id": "run-1",
    }  # fmt: skip


def test_log_derived_text_pings_and_links_no_one() -> None:
    """A principal chosen by a client: Slack's <!channel> and <url|text> syntax, an ANSI
    escape and a bidi override stay visible text; the JSON field keeps the value as logged."""
    subject = "principal: User:<!channel> <https://evil.example|login> \x1b[31m&\u202e"
    row = _finding("f-x", "high", "authorizer.denial_burst", subject)
    assert finding_text(row) == (
        "kafka-audit [high] authorizer.denial_burst: principal User:&lt;!channel&gt; "
        "&lt;https://evil.example|login&gt; \\x1b[31m&amp;\\u202e, 1 event, "
        "2026-11-20T08:00:00Z, KIP-48"
    )
    assert finding_payload(row)["finding"]["subject"] == subject.partition(": ")[2]


def test_severity_names_are_the_schemas() -> None:
    assert SEVERITY_NAMES == findings.SEVERITIES


@pytest.mark.parametrize(
    ("min_severity", "notified", "expected"),
    [
        ("high", set(), ["f-high-connect", "f-high-token", "f-high-later"]),
        ("high", {"f-high-token"}, ["f-high-connect", "f-high-later"]),
        ("medium", {"f-high-connect"}, ["f-high-token", "f-high-later", "f-medium"]),
        ("info", set(), ["f-high-connect", "f-high-token", "f-high-later", "f-medium", "f-low",
                         "f-info"]),
    ],
)  # fmt: skip
def test_due_findings_threshold_order_once(
    min_severity: str, notified: set[str], expected: list[str]
) -> None:
    """Most severe first, then first seen (LATER has none); one row per id; a severity no
    rule writes is never sent."""
    rows = [*ALL, HIGH_TOKEN, _finding("f-odd", "critical", "x.y", "node: 1")]
    got = due_findings(rows, notified, min_severity)
    assert [r["finding_id"] for r in got] == expected


def test_due_findings_refuses_an_unknown_threshold() -> None:
    with pytest.raises(ValueError, match="unknown severity 'critical'"):
        due_findings(ALL, set(), "critical")
    assert due_findings([], set(), "info") == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.slack.com/services/T0/B0/XXXX", "https://hooks.slack.com/…"),
        ("https://user:pw@example.com:8443/h?sig=abc#f", "https://example.com:8443/…"),
        ("http://[::1]:9000/hook", "http://[::1]:9000/…"),
        ("https://prod.westeurope.logic.azure.com/workflows/1/triggers?sig=S", "https://prod.westeurope.logic.azure.com/…"),
        ("http://h:port/x", "(an invalid URL)"),
    ],
)  # fmt: skip
def test_redacted_url(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def test_scrubbed_hides_the_url_in_any_text() -> None:
    url = f"https://hooks.example.com{SECRET_PATH}?{SECRET_QUERY}"
    text = f"POST {url} failed; path {SECRET_PATH}; query {SECRET_QUERY}"
    assert scrubbed(text, url) == ("POST https://hooks.example.com/… failed; path …; query …")


# The state file ---------------------------------------------------------------------------


def test_state_records_round_trip_and_damaged_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = state_path(str(tmp_path / "lake"))
    assert path == tmp_path / "lake" / "_kafka_audit" / "notified.jsonl"
    assert state_path(f"file://{tmp_path}/lake") == path
    assert read_notified(path) == set()
    record_notified(path, HIGH_TOKEN, datetime(2026, 11, 21, 6, tzinfo=UTC))
    path.write_text(path.read_text() + '[1, 2]\n\n{"finding_id": 7}\n{"finding_id": "f-med')
    record_notified(path, MEDIUM, datetime(2026, 11, 21, 7, tzinfo=UTC))
    caplog.set_level(logging.WARNING, logger="jobs.notify")
    assert read_notified(path) == {"f-high-token", "f-medium"}
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}:{n}: not a notification record, skipped" for n in (2, 4, 5)
    ]
    assert path.read_text().splitlines()[-1] == (
        '{"finding_id": "f-medium", "severity": "medium", "rule_id": "reauth.no_reauth_client",'
        ' "notified_at": "2026-11-21T07:00:00Z"}'
    )
    assert sorted(p.name for p in path.parent.iterdir()) == ["notified.jsonl"]  # no temp left


# Delivery against a server on loopback ----------------------------------------------------


def test_each_new_finding_once_and_a_rerun_sends_nothing(lake: Path, webhook: Any) -> None:
    hook = webhook(Step(200))
    outcome = _notify(lake, hook.url)
    assert outcome == Outcome(hook.shown, sent=HIGHS)
    assert outcome.warning() is None
    assert hook.bodies()[1] == HIGH_TOKEN_BODY
    assert hook.bodies()[0]["text"] == HIGH_CONNECT_TEXT
    assert {(r["path"], r["content_type"], r["user_agent"]) for r in hook.server.received} == {
        (f"{SECRET_PATH}?{SECRET_QUERY}", "application/json",
         "kafka-security-audit (kafka-audit run --notify)")}  # fmt: skip
    assert _unstamped(_state(lake)) == _stamped(list(HIGHS))

    assert _notify(lake, hook.url) == Outcome(hook.shown, already=3)
    assert len(hook.server.received) == 3  # the rerun sent nothing
    lower = _notify(lake, hook.url, min_severity="medium")
    assert lower == Outcome(hook.shown, sent=("f-medium",), already=3)
    everything = _notify(lake, hook.url, min_severity="info")
    assert everything == Outcome(hook.shown, sent=("f-low", "f-info"), already=4)
    assert hook.ids() == [*HIGHS, "f-medium", "f-low", "f-info"]


def test_a_server_that_fails_then_recovers_gets_each_finding_once(lake: Path, webhook: Any) -> None:
    hook = webhook(Step(500), Step(502), Step(200))
    outcome = _notify(lake, hook.url)
    assert outcome == Outcome(hook.shown, sent=HIGHS)
    assert hook.ids() == ["f-high-connect"] * 3 + ["f-high-token", "f-high-later"]
    assert _unstamped(_state(lake)) == _stamped(list(HIGHS))


def test_a_server_that_always_fails_records_nothing_and_warns(lake: Path, webhook: Any) -> None:
    hook = webhook(Step(503))
    outcome = _notify(lake, hook.url, attempts=3)
    reason = "HTTP 503 Service Unavailable after 3 attempts"
    assert outcome == Outcome(hook.shown, failed=tuple((i, reason) for i in HIGHS))
    assert outcome.warning() == (
        f"notify {hook.shown}: 3 of 3 new finding(s) not delivered ({reason}); the next run "
        "tries them again"
    )
    assert hook.ids() == [i for i in HIGHS for _ in range(3)]
    assert not state_path(str(lake)).exists()

    hook.server.script[:] = [Step(200)]  # recovered: the next run delivers them
    assert _notify(lake, hook.url).sent == HIGHS


@pytest.mark.parametrize(
    ("status", "reason"),
    [(400, "HTTP 400 Bad Request"), (404, "HTTP 404 Not Found"), (403, "HTTP 403 Forbidden"),
     (302, "HTTP 302 Found")],
)  # fmt: skip
def test_no_retry_on_a_client_error(lake: Path, webhook: Any, status: int, reason: str) -> None:
    hook = webhook(Step(status))
    outcome = _notify(lake, hook.url, attempts=5)
    assert outcome.failed == tuple((i, f"{reason} after 1 attempt") for i in HIGHS)
    assert hook.ids() == list(HIGHS)


def test_429_waits_retry_after(one: Path, webhook: Any) -> None:
    hook = webhook(Step(429, headers={"Retry-After": "1"}), Step(200))
    started = time.monotonic()
    outcome = _notify(one, hook.url)
    assert time.monotonic() - started >= 1.0  # not the 1 ms backoff
    assert outcome == Outcome(hook.shown, sent=("f-high-connect",))
    assert hook.ids() == ["f-high-connect", "f-high-connect"]


def test_a_timeout_is_retried(one: Path, webhook: Any) -> None:
    hook = webhook(Step(200, delay_s=1.5), Step(200))
    assert _notify(one, hook.url, timeout_s=0.3).sent == ("f-high-connect",)
    assert hook.ids() == ["f-high-connect", "f-high-connect"]


def test_a_closed_port_fails_after_every_attempt(one: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}{SECRET_PATH}"
    outcome = _notify(one, url, attempts=2)
    [(finding_id, reason)] = outcome.failed
    assert finding_id == "f-high-connect"
    assert re.fullmatch(r"ConnectError: .+ after 2 attempts", reason), reason
    assert outcome.sent == () and SECRET_PATH not in reason


def test_the_url_is_never_logged(
    lake: Path, webhook: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx logs each request's URL at INFO; tenacity's retries and the warning too: every
    one shows scheme://host:port/… only."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.INFO, logger="httpx")  # kafka-audit's own logging quiets it
    hook = webhook(Step(500), Step(200), Step(404))
    outcome = _notify(lake, hook.url)
    text = caplog.text + str(outcome) + (outcome.warning() or "")
    assert SECRET_PATH not in text and SECRET_QUERY not in text and "s3cr3t" not in text
    assert f'HTTP Request: POST {hook.shown} "HTTP/1.0 500 Internal Server Error"' in (
        caplog.messages
    )
    assert f"notify {hook.shown}: HTTP 500 Internal Server Error after 1 attempt; trying again" in (
        caplog.messages
    )
    assert outcome.warning() == (
        f"notify {hook.shown}: 2 of 3 new finding(s) not delivered (HTTP 404 Not Found after 1 "
        "attempt); the next run tries them again"
    )


# Lakes without findings, damaged state ----------------------------------------------------


def test_no_findings_table_or_an_empty_one_sends_nothing(tmp_path: Path, webhook: Any) -> None:
    hook = webhook(Step(200))
    assert _notify(tmp_path / "no-lake", hook.url) == Outcome(hook.shown)
    _write_findings(tmp_path / "empty", [])
    assert _notify(tmp_path / "empty", hook.url, min_severity="info") == Outcome(hook.shown)
    assert hook.server.received == []


def test_a_damaged_findings_table_is_a_warning(tmp_path: Path, webhook: Any) -> None:
    hook = webhook(Step(200))
    log = tmp_path / "lake" / "findings" / "_delta_log"
    log.mkdir(parents=True)
    (log / "00000000000000000000.json").write_text("not json\n")
    outcome = _notify(tmp_path / "lake", hook.url)
    assert outcome.sent == () and hook.server.received == []
    warning = outcome.warning() or ""
    assert warning.startswith(f"notify {hook.shown}: cannot read {log.parent} ("), warning
    assert warning.endswith("); nothing was sent"), warning


def test_an_unreadable_state_sends_nothing(lake: Path, webhook: Any) -> None:
    hook = webhook(Step(200))
    state_path(str(lake)).mkdir(parents=True)  # a folder where the file should be
    outcome = _notify(lake, hook.url)
    assert outcome.warning() == (
        f"notify {hook.shown}: cannot read {state_path(str(lake))} (Is a directory); nothing "
        "was sent"
    )
    assert hook.server.received == []


def test_a_delivery_that_cannot_be_recorded_stops_sending(lake: Path, webhook: Any) -> None:
    hook = webhook(Step(200))
    (lake / "_kafka_audit").write_text("a file where the folder should be")
    outcome = _notify(lake, hook.url)
    assert outcome.sent == ("f-high-connect",) and hook.ids() == ["f-high-connect"]
    assert outcome.warning() == (
        f"notify {hook.shown}: cannot record a delivery in {state_path(str(lake))} (File "
        "exists): the next run sends finding f-high-connect again; 2 other finding(s) not sent"
    )


# The run's glue: a warning, the exit code unchanged --------------------------------------


def _summary(lake: Path) -> RunSummary:
    counts = dict.fromkeys(BUCKETS, 0) | {"physical_lines": 1, "records": 1,
                                          "bronze_records": 1, "parsed": 1}  # fmt: skip
    row = {"source_path": "/logs/server.log", **counts, "balanced": True}
    return RunSummary(run_id="r", engine="embedded", java=None, lake=str(lake),
                      window=(None, None), tables=[], accounting=[row], duration_s=1.0)  # fmt: skip


def test_notify_after_run_adds_a_warning_not_an_exit_code(lake: Path, webhook: Any) -> None:
    """A run of the 22nd: the findings of every day are sent (gold rewrote the whole table,
    and what an earlier day's run failed to deliver is due too)."""
    hook = webhook(Step(500))
    config = RunConfig(sources=(SourceSpec("/logs"),), lake=str(lake),
                       start=datetime(2026, 11, 22, tzinfo=UTC),
                       end=datetime(2026, 11, 23, tzinfo=UTC),
                       notify=NotifySpec(url=hook.url, attempts=2))  # fmt: skip
    before = _summary(lake)
    after = notify_after_run(before, config, hook.url, backoff_s=FAST)
    assert hook.ids() == [i for i in HIGHS for _ in range(2)]
    assert list(after.warnings) == [
        f"notify {hook.shown}: 3 of 3 new finding(s) not delivered (HTTP 500 Internal Server "
        "Error after 2 attempts); the next run tries them again"
    ]
    assert (before.exit_code, after.exit_code) == (0, 0)
    last = after.render().split("\n\n")[-1]  # the summary's warnings, wrapped at 80
    assert last.startswith("warning: notify ")
    assert " ".join(line.strip() for line in last.splitlines()) == f"warning: {after.warnings[0]}"
    hook.server.script[:] = [Step(200)]
    assert notify_after_run(before, config, hook.url, backoff_s=FAST) == before
    assert _unstamped(_state(lake)) == _stamped(list(HIGHS))


# Configuration and command line -----------------------------------------------------------


def _load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "audit.toml"
    path.write_text(text, encoding="utf-8")
    return load_config_file(path), path


def test_notify_table_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs, _ = _load(tmp_path, '[notify]\nurl_env = "HOOK"\nmin_severity = "medium"\n'
                      "timeout_s = 2\nattempts = 5\n")  # fmt: skip
    spec = kwargs["notify"]
    assert spec == NotifySpec(url_env="HOOK", min_severity="medium", timeout_s=2.0, attempts=5)
    monkeypatch.setenv("HOOK", " https://hooks.slack.com/services/T/B/x \n")
    assert spec.webhook_url() == "https://hooks.slack.com/services/T/B/x"
    monkeypatch.setenv("HOOK", "hooks.slack.com/services/T/B/x")
    with pytest.raises(ConfigError) as caught:
        spec.webhook_url()
    assert str(caught.value) == (
        "notify.url_env: variable HOOK: expected an http:// or https:// URL with a host (the "
        "value is not shown: webhook URLs carry tokens)"
    )
    monkeypatch.delenv("HOOK")
    with pytest.raises(
        ConfigError, match=r"^notify.url_env: environment variable HOOK is not set$"
    ):
        spec.webhook_url()
    assert "notify" not in _load(tmp_path, "[run]\n")[0]
    assert NotifySpec().webhook_url() is None


def test_default_toml_states_the_notify_defaults() -> None:
    root = Path(__file__).resolve().parents[2]
    assert load_config_file(root / "conf" / "default.toml")["notify"] == NotifySpec()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[notify]\nmin_severty = 'low'\n", "unknown key notify.min_severty: did you mean min_severity?"),
        ("[notfy]\nurl = 'https://h/x'\n", "unknown key notfy: did you mean notify?"),
        ("[notify]\nurl = 'https://h/x'\nurl_env = 'H'\n", "notify: give url or url_env, not both"),
        ("[notify]\nurl = 'ftp://h/s3cr3t'\n", "notify.url: expected an http:// or https:// URL with a host (the value is not shown: webhook URLs carry tokens)"),
        ("[notify]\nurl = 'https://h:99999999/s3cr3t'\n", "notify.url: expected an http:// or https:// URL with a host (the value is not shown: webhook URLs carry tokens)"),
        ("[notify]\nurl = ''\n", "notify.url: expected a non-empty string, got ''"),
        ("[notify]\nmin_severity = 'critical'\n", "notify.min_severity: expected one of high, medium, low, info, got 'critical'"),
        ("[notify]\ntimeout_s = '10'\n", "notify.timeout_s: expected a number, got '10'"),
        ("[notify]\ntimeout_s = 0\n", "notify.timeout_s: expected a number > 0.0, got 0"),
        ("[notify]\nattempts = 0\n", "notify.attempts: expected a number >= 1, got 0"),
        ("[notify]\nattempts = 11\n", "notify.attempts: expected a number <= 10, got 11"),
        ("[notify]\nattempts = true\n", "notify.attempts: expected an integer, got true"),
        ("notify = 'https://h/x'\n", "notify: expected a table, got 'https://h/x'"),
    ],
)  # fmt: skip
def test_notify_table_mistakes(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert str(caught.value) == f"{tmp_path / 'audit.toml'}: {message}"
    assert "s3cr3t" not in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"url": "https://h/x", "url_env": "H"}, "notify: give url or url_env, not both"),
        ({"url": "mailto:x@y"}, "notify.url: expected an http:// or https:// URL with a host"),
        ({"min_severity": "critical"}, "notify.min_severity: 'critical' is not one of high, medium, low, info"),
        ({"timeout_s": 0}, "notify.timeout_s: expected a number > 0, got 0"),
        ({"attempts": 0}, "notify.attempts: expected a number >= 1, got 0"),
    ],
)  # fmt: skip
def test_notify_spec_checks_itself(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        NotifySpec(**spec)
    assert str(caught.value).startswith(message), str(caught.value)


def test_run_notify_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before any input is read or Spark starts: a bad --notify exits 2 without showing the
    URL, --notify-min-severity needs a webhook (2), an unset url_env is a config error (1)."""
    base = ["run", "--input", str(tmp_path / "logs"), "--lake", str(tmp_path / "lake")]
    assert main([*base, "--notify", "hooks.example.com/s3cr3t"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "kafka-audit run: error: argument --notify: expected an http:// or https:// URL with a "
        "host (the value is not shown: webhook URLs carry tokens)"
    )
    assert "s3cr3t" not in err
    assert main([*base, "--notify-min-severity", "low"]) == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith(
            "--notify-min-severity needs a webhook: give --notify URL (or [notify] url / url_env in "
            "--conf)"
        )
    )
    conf = tmp_path / "audit.toml"
    conf.write_text('[notify]\nurl_env = "KAFKA_AUDIT_TEST_UNSET_HOOK"\n', encoding="utf-8")
    assert main([*base, "--conf", str(conf), "--notify-min-severity", "low"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "kafka-audit: configuration error: notify.url_env: environment variable "
        "KAFKA_AUDIT_TEST_UNSET_HOOK is not set"
    )
