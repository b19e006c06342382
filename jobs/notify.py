"""New findings to a webhook (``kafka-audit run --notify URL``, ``[notify]``;
docs/notifications.md): after a run has written every table, one JSON POST per finding of the
lake at or above a severity, once per ``finding_id``.

The payload is Slack's incoming-webhook message (a one-line ``text``) with the finding's
fields beside it (``finding``), so Slack, Mattermost, Rocket.Chat, Teams workflows and any
generic receiver can take it. ``finding_id`` is the findings table's own deterministic key
(sha2-256 of rule, subject type, subject and discriminator; ``schemas.findings``), so a finding
keeps its id across reruns. The ids delivered are kept in the lake
(``<lake>/_kafka_audit/notified.jsonl``), rewritten atomically after each delivery: a rerun
sends nothing twice, and a finding whose POST failed is not recorded, so the next run tries it
again (at least once, never silently dropped).

HTTP: httpx with a timeout per attempt; tenacity retries connection errors, timeouts, HTTP 429
and 5xx with exponential backoff (a 429's ``Retry-After`` in seconds is honoured, up to a
minute), never another 4xx. The URL is never logged nor put in a message (Slack's and Teams'
webhook URLs carry their token in the path or the query): only ``scheme://host/…``.

Reads the findings with deltalake (``jobs.lake.reads``); no Spark.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import tenacity

from jobs.config import NotifySpec
from jobs.fingerprint_keys import METADATA_FOLDER
from jobs.lake.reads import is_delta_table, read_rows, table_path
from jobs.neutralize import terminal
from schemas import findings

log = logging.getLogger(__name__)

Row = Mapping[str, Any]

#: The ids already delivered, one JSON object per line, in ``<lake>/_kafka_audit/``.
STATE_FILE_NAME = "notified.jsonl"
#: Statuses worth another attempt: rate limited, or the server's own failure.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Longest wait between two attempts, and longest ``Retry-After`` honoured (seconds).
MAX_BACKOFF_S = 30.0
MAX_RETRY_AFTER_S = 60.0
USER_AGENT = "kafka-security-audit (kafka-audit run --notify)"
#: Exceptions worth another attempt (httpx's transport errors minus the configuration ones).
_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


@dataclass(frozen=True)
class Outcome:
    """What one notification pass did.

    Attributes:
        url: the webhook, redacted (``https://hooks.slack.com/…``).
        sent: ids delivered, in sending order; each recorded, but for the one ``problem``
            names when recording failed.
        failed: ``(finding_id, reason)`` of the findings not delivered (not recorded).
        already: findings at or above the threshold that were notified by an earlier run.
        problem: why sending did not start (the state file cannot be read) or stopped (a
            delivery could not be recorded), else None.
    """

    url: str
    sent: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    already: int = 0
    problem: str | None = None

    def warning(self) -> str | None:
        """One line for the run summary's warnings when a finding was not delivered or
        recorded, or sending could not start; None when every due finding was delivered."""
        problems = [] if self.problem is None else [self.problem]
        if self.failed:
            total = len(self.failed) + len(self.sent)
            reasons = list(dict.fromkeys(reason for _, reason in self.failed))
            shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
            problems.insert(
                0,
                f"{len(self.failed)} of {total} new finding(s) not delivered ({shown}); the "
                "next run tries them again",
            )
        return f"notify {self.url}: {'; '.join(problems)}" if problems else None


def redacted_url(url: str) -> str:
    """``https://hooks.slack.com/services/T0/B0/XXXX`` -> ``https://hooks.slack.com/…``: the
    scheme, host and port only (no user, path, query or fragment, where tokens live)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(an invalid URL)"
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{'' if port is None else f':{port}'}/…"


def _rank(severity: str) -> int:
    return findings.SEVERITIES.index(severity)


def due_findings(rows: Sequence[Row], notified: set[str], min_severity: str) -> list[Row]:
    """The findings to send: at or above ``min_severity``, not in ``notified``, one per
    ``finding_id``; most severe first, then by first seen, rule, subject and id.

    Args:
        rows: findings rows (``schemas.findings.FINDINGS`` columns).
        notified: ids delivered before (``read_notified``).
        min_severity: one of ``schemas.findings.SEVERITIES``.

    Returns:
        The rows to POST, in order. A row of a severity outside ``SEVERITIES`` is left out.

    Raises:
        ValueError: ``min_severity`` is not one of ``SEVERITIES``.
    """
    if min_severity not in findings.SEVERITIES:
        raise ValueError(f"unknown severity {min_severity!r}")
    wanted = set(findings.SEVERITIES[: _rank(min_severity) + 1])
    chosen: dict[str, Row] = {}
    for row in rows:
        if row["severity"] in wanted and row["finding_id"] not in notified:
            chosen.setdefault(row["finding_id"], row)
    never = datetime.max.replace(tzinfo=UTC)
    return sorted(
        chosen.values(),
        key=lambda r: (_rank(r["severity"]), r["first_seen_ts"] or never, r["rule_id"],
                       r["subject"], r["finding_id"]),
    )  # fmt: skip


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slack_text(value: Any) -> str:
    """Log-derived text for a chat message: :func:`jobs.neutralize.terminal`, then Slack's
    three control characters escaped (``&`` ``<`` ``>`` -> ``&amp;`` ``&lt;`` ``&gt;``, Slack's
    "Formatting text" guide), so a principal like ``<!channel>`` or ``<https://x|click>`` is
    shown as written and pings or links no one."""
    text = terminal(value)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def finding_text(row: Row) -> str:
    """The one-line message: ``kafka-audit [high] <rule>: <subject type> <subject>
    (<discriminator>), <n> events, <first> .. <last>, <KIP>`` (times ISO UTC; one time when
    first = last; ``time unknown`` without one), neutralized by :func:`slack_text`."""
    subject = f"{row['subject_type']} {row['subject']}"
    if row.get("discriminator"):
        subject += f" ({row['discriminator']})"
    count = int(row["count"])
    first, last = _iso(row["first_seen_ts"]), _iso(row["last_seen_ts"])
    seen = " .. ".join(dict.fromkeys(t for t in (first, last) if t)) or "time unknown"
    events = f"{count:,} event{'s' if count != 1 else ''}"
    line = f"kafka-audit [{row['severity']}] {row['rule_id']}: {subject}, {events}, {seen}"
    return slack_text(f"{line}, {row['kip']}")


def finding_payload(row: Row) -> dict[str, Any]:
    """The JSON body of one POST: ``text`` (:func:`finding_text`) and ``finding``, the
    finding's fields (timestamps ISO UTC, evidence as ``path:line`` texts, at most
    ``schemas.findings.MAX_EVIDENCE``). Log-derived values stay as they are in ``finding``:
    JSON escapes control characters itself."""
    evidence = [f"{e['source_path']}:{e['line_number']}" for e in row["evidence"] or ()]
    return {
        "text": finding_text(row),
        "finding": {
            "finding_id": row["finding_id"],
            "severity": row["severity"],
            "rule_id": row["rule_id"],
            "kip": row["kip"],
            "subject_type": row["subject_type"],
            "subject": row["subject"],
            "discriminator": row["discriminator"] or None,
            "node_id": row["node_id"],
            "count": int(row["count"]),
            "first_seen": _iso(row["first_seen_ts"]),
            "last_seen": _iso(row["last_seen_ts"]),
            "explanation": row["explanation"],
            "evidence": evidence,
            "run_id": row["run_id"],
        },
    }


def state_path(lake: str) -> Path:
    """``<lake>/_kafka_audit/notified.jsonl`` (a ``file://`` lake as its local path)."""
    root = unquote(urlsplit(lake).path) if lake.startswith("file://") else lake
    return Path(root) / METADATA_FOLDER / STATE_FILE_NAME


def read_notified(path: Path) -> set[str]:
    """The finding ids recorded in the state file; none when it does not exist. A line that
    is not a JSON object with a string ``finding_id`` (a torn or hand-edited line) is skipped
    with a warning: its finding, if any, is sent again (at least once).

    Raises:
        OSError: the file exists but cannot be read.
    """
    if not path.exists():
        return set()
    ids = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("finding_id"), str):
            ids.add(record["finding_id"])
        elif line.strip():
            log.warning("%s:%d: not a notification record, skipped", path, number)
    return ids


def record_notified(path: Path, row: Row, now: datetime) -> None:
    """Add one delivered finding to the state file, atomically: the whole file is written to
    a temporary file beside it, flushed to disk and renamed over it (``os.replace``), so a
    crash leaves the old file or the new one, never half a line.

    Raises:
        OSError: the folder cannot be created or written.
    """
    record = {"finding_id": row["finding_id"], "severity": row["severity"],
              "rule_id": row["rule_id"], "notified_at": _iso(now)}  # fmt: skip
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(old + json.dumps(record) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def scrubbed(text: str, url: str) -> str:
    """``text`` with ``url`` (as given, and as httpx normalizes it) replaced by
    :func:`redacted_url`, and its path and query (where tokens live) by ``…``."""
    parts = urlsplit(url)
    try:
        whole = sorted({url, str(httpx.URL(url))}, key=len, reverse=True)
    except httpx.InvalidURL:
        whole = [url]
    pieces = [p for p in (parts.path, parts.query) if len(p) > 1]
    for secret in whole:
        text = text.replace(secret, redacted_url(url))
    for secret in pieces:
        text = text.replace(secret, "…")
    return text


class _Redact(logging.Filter):
    """Scrubs the webhook URL from the records of a logger (:func:`scrubbed`): httpx logs
    every request's full URL at INFO."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrubbed(message, self.url)
        if clean != message:
            record.msg, record.args = clean, None
        return True


@contextmanager
def _redacting(url: str) -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in ("httpx", "httpcore")]
    redact = _Redact(url)
    for logger in loggers:
        logger.addFilter(redact)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(redact)


def _retry_after_s(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    return min(float(value), MAX_RETRY_AFTER_S) if value.isdigit() else None


def _wait(backoff_s: float) -> Callable[[tenacity.RetryCallState], float]:
    """Exponential backoff (``backoff_s``, 2x, 4x, ... up to ``MAX_BACKOFF_S``), or the
    response's ``Retry-After`` seconds when it gives one."""
    exponential = tenacity.wait_exponential(multiplier=backoff_s, max=MAX_BACKOFF_S)

    def wait(state: tenacity.RetryCallState) -> float:
        outcome = state.outcome
        if outcome is not None and not outcome.failed:
            after = _retry_after_s(outcome.result())
            if after is not None:
                return after
        return float(exponential(state))

    return wait


def _worth_retrying(response: httpx.Response) -> bool:
    return response.status_code in RETRY_STATUSES


def _failure(result: httpx.Response | BaseException, url: str, attempts: int) -> str:
    """Why a POST did not deliver, without the URL (an exception may quote it)."""
    tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(result, BaseException):
        text = scrubbed(str(result), url) or "no detail"
        return f"{type(result).__name__}: {text}{tries}"
    return f"HTTP {result.status_code} {result.reason_phrase}".rstrip() + tries


def _last(state: tenacity.RetryCallState) -> httpx.Response | BaseException:
    """The response or the exception of the attempt ``state`` ended with."""
    outcome = state.outcome
    if outcome is None:  # tenacity sets it before any callback
        return RuntimeError("no attempt made")
    error = outcome.exception()
    return error if error is not None else outcome.result()


def post_json(
    client: httpx.Client, url: str, payload: Mapping[str, Any], attempts: int, backoff_s: float
) -> str | None:
    """POST ``payload`` as JSON to ``url`` until a 2xx, a status or error not worth retrying,
    or ``attempts`` attempts.

    Args:
        client: the httpx client (its timeout applies to each attempt).
        url: the webhook.
        payload: the JSON body.
        attempts: at most this many POSTs (>= 1).
        backoff_s: first wait between attempts, seconds; doubled each time.

    Returns:
        None when delivered (a 2xx); else the reason, one line without the URL
        (``HTTP 500 Internal Server Error after 3 attempts``, ``ConnectError: [Errno 111]
        Connection refused after 3 attempts``, ``HTTP 404 Not Found after 1 attempt``).
    """
    shown = redacted_url(url)

    def before_sleep(state: tenacity.RetryCallState) -> None:
        reason = _failure(_last(state), url, state.attempt_number)
        log.info("notify %s: %s; trying again", shown, reason)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(attempts),
        wait=_wait(backoff_s),
        retry=tenacity.retry_if_exception_type(_TRANSIENT)
        | tenacity.retry_if_result(_worth_retrying),
        before_sleep=before_sleep,
        retry_error_callback=_last,
    )
    try:
        result: httpx.Response | BaseException = retrying(client.post, url, json=payload)
    except httpx.HTTPError as error:  # not worth retrying: too many redirects, a bad URL...
        result = error
    if isinstance(result, httpx.Response) and result.is_success:
        return None
    return _failure(result, url, int(retrying.statistics.get("attempt_number", 1)))


def _deliver(
    client: httpx.Client,
    url: str,
    due: Sequence[Row],
    spec: NotifySpec,
    *,
    path: Path,
    backoff_s: float,
) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """POST each of ``due``, recording each delivery in ``path``.

    Returns:
        The ids delivered, the ``(id, reason)`` not delivered, and why sending stopped early
        (a delivery that could not be recorded), else None.
    """
    sent: list[str] = []
    failed: list[tuple[str, str]] = []
    for index, row in enumerate(due):
        reason = post_json(client, url, finding_payload(row), spec.attempts, backoff_s)
        if reason is not None:
            failed.append((row["finding_id"], reason))
            continue
        sent.append(row["finding_id"])
        try:
            record_notified(path, row, datetime.now(UTC))
        except OSError as error:
            stopped = (
                f"cannot record a delivery in {path} ({error.strerror or error}): the next "
                f"run sends finding {row['finding_id']} again; {len(due) - index - 1} other "
                "finding(s) not sent"
            )
            return sent, failed, stopped
    return sent, failed, None


def notify_findings(lake: str, url: str, spec: NotifySpec, backoff_s: float = 1.0) -> Outcome:
    """POST each finding of the lake's ``findings`` table that is at or above
    ``spec.min_severity`` and not delivered before; record each one delivered.

    Every day of the table is read, not only the run's window: gold rewrites the whole
    findings table on each run (``jobs.pipeline``), and a finding a failed POST left
    unrecorded must be tried again by the next run, whatever days that run covers.

    Args:
        lake: the lake root (local path or ``file://`` URI).
        url: the webhook (``spec.webhook_url()``).
        spec: ``min_severity``, ``timeout_s`` (per attempt) and ``attempts``.
        backoff_s: first wait between two attempts, seconds (doubled each time).

    Returns:
        The ``Outcome``; nothing to send without a findings table. A delivery failure, an
        unreadable state file or findings table, or a delivery that cannot be recorded is in
        it (``Outcome.warning``), never raised: the run's tables are written whatever the
        webhook does.
    """
    shown, path = redacted_url(url), state_path(lake)
    try:
        notified = read_notified(path)
    except OSError as error:
        return Outcome(shown, problem=f"cannot read {path} ({error.strerror}); nothing was sent")
    except UnicodeDecodeError:
        return Outcome(shown, problem=f"cannot read {path} (not UTF-8 text); nothing was sent")
    table = table_path(lake, findings.TABLE_NAME)
    try:
        rows = (
            read_rows(table, findings.PARTITION_COLUMNS[0], None, None)
            if is_delta_table(table)
            else []
        )
    except Exception as error:  # delta-rs raises its own kinds; a warning, not a failed run
        unread = f"cannot read {table} ({type(error).__name__}: {error}); nothing was sent"
        return Outcome(shown, problem=unread)
    due = due_findings(rows, notified, spec.min_severity)
    already = len(due_findings(rows, set(), spec.min_severity)) - len(due)
    headers = {"User-Agent": USER_AGENT}
    with _redacting(url), httpx.Client(timeout=spec.timeout_s, headers=headers) as client:
        sent, failed, problem = _deliver(client, url, due, spec, path=path, backoff_s=backoff_s)
    log.info("notify %s: %d new finding(s) at or above %s sent, %d failed, %d sent before",
             shown, len(sent), spec.min_severity, len(failed), already)  # fmt: skip
    return Outcome(shown, tuple(sent), tuple(failed), already, problem)
