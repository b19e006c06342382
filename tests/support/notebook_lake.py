"""A small lake with rows in every table the notebooks read (tests/integration/test_notebooks.py).

Written with deltalake from Python rows typed by the tables' ``schemas/`` contracts (no Spark),
shaped so that every plot of every notebook has something to draw: KIP-368 sessions of five
client versions with latencies and outcomes, readiness for three candidates, four delegation
tokens with renewals and an early expiry, authentication failures on three listeners, denials
of three principals, daily and hourly metrics, findings of four rules with evidence.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

from jobs.lake.embedded_files import arrow_schema

RUN = "synthetic-run"
T0 = dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 20)


def _at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def _write(
    lake: Path, table: str, rows: Sequence[Mapping[str, Any]], partition: str | None
) -> None:
    schema = arrow_schema(getattr(importlib.import_module(f"schemas.{table}"), table.upper()))
    data = pa.Table.from_pylist([dict(row) for row in rows], schema=schema)
    write_deltalake(str(lake / table), data, partition_by=[partition] if partition else None)


def _evidence(path: str, *lines: int) -> list[dict[str, Any]]:
    return [{"source_path": path, "line_number": line} for line in lines]


def _sessions() -> Iterator[dict[str, Any]]:
    software = [
        ("apache-kafka-java", "3.7.0", True, "reauthenticated", 40.0),
        ("apache-kafka-java", "2.1.1", False, "killed", None),
        ("librdkafka", "2.3.0", True, "reauthenticated", 120.0),
        ("librdkafka", "1.9.2", None, "open_at_window_end", None),
        ("sarama", "1.38.1", False, "closed", None),
    ]
    for i in range(20):
        name, version, reauth, outcome, latency = software[i % len(software)]
        start = _at(3 * i)
        yield {
            "session_id": f"s{i:02d}",
            "broker_id": str(i % 3),
            "connection_id": f"10.0.0.{i}:9093-10.1.0.{i}:5{i:04d}-0",
            "session_seq": 1,
            "listener": "SASL_SSL" if i % 2 else "INTERNAL",
            "security_protocol": "SASL_SSL",
            "mechanism": "SCRAM-SHA-512" if i % 3 else "OAUTHBEARER",
            "principal": f"User:app{i % 6}",
            "client_ip": f"10.1.0.{i}",
            "client_software_name": name,
            "client_software_version": version,
            "supports_reauth": reauth,
            "start_ts": start,
            "start_source": "authentication_line",
            "lifetime_ms": 3_600_000,
            "lifetime_source": "config",
            "expiry_ts": start + dt.timedelta(hours=1),
            "latency_ms": None if latency is None else latency + 7 * i,
            "outcome": outcome,
            "request_count": 10 + i,
            "connection_ambiguous": False,
            "evidence": _evidence("broker-1/server.log", 100 + i, 200 + i),
            "run_id": RUN,
            "activity_date": DAY,
        }


def _readiness() -> Iterator[dict[str, Any]]:
    for candidate, killed, unknown in ((900_000, 8, 4), (3_600_000, 5, 3), (86_400_000, 1, 1)):
        yield {
            "candidate_ms": candidate,
            "sessions": 20,
            "sessions_killed": killed,
            "sessions_at_risk_unknown_client": unknown,
            "principals_killed": ["User:app1", "User:app4"][: 1 + (killed > 2)],
            "distinct_principals_killed": 1 + (killed > 2),
            "client_software_killed": ["apache-kafka-java/2.1.1", "sarama/1.38.1"],
            "first_kill_ts": _at(candidate / 60_000 + 5),
            "run_id": RUN,
            "activity_date": DAY,
        }


def _history(op: str, minutes: float, expiry_minutes: float | None) -> dict[str, Any]:
    return {
        "event_ts": _at(minutes),
        "actor": "User:owner",
        "operation": op,
        "new_expiry_ts": None if expiry_minutes is None else _at(expiry_minutes),
        "error_code": 0,
        "error_code_name": "NONE",
        "check": "ok",
        "source": "request_log",
    }


def _tokens() -> Iterator[dict[str, Any]]:
    shapes = [  # issue, renewals, expire-now, state
        (0, [30, 60, 90], None, "active"),
        (10, [], None, "expired"),
        (20, [50], 80, "expired_early"),
        (40, [70, 100, 130], None, "active"),
    ]
    for i, (issue, renewals, expired, state) in enumerate(shapes):
        history = [_history("create", issue, issue + 60)]
        history += [_history("renew", r, r + 60) for r in renewals]
        if expired is not None:
            history.append(_history("expire", expired, expired))
        expiry = history[-1]["new_expiry_ts"]
        ended = expiry if state != "active" else None
        yield {
            "token_key": f"tok{i}",
            "token_id": f"tok{i}",
            "hmac_fingerprint": f"{i:032x}",
            "owner": f"User:owner{i % 2}",
            "requester": "User:admin",
            "renewers": ["User:renewer"],
            "metadata_mode": "kraft",
            "issue_ts": _at(issue),
            "max_ts": _at(issue + 240),
            "expiry_ts": expiry,
            "max_lifetime_ms": 240 * 60_000,
            "renew_count": len(renewals),
            "history": history,
            "state": state,
            "state_as_of_ts": _at(150),
            "ended_ts": ended,
            "first_seen_ts": _at(issue),
            "last_seen_ts": history[-1]["event_ts"],
            "replay_mismatch_count": 0,
            "hmac_verified": None,
        }


def _lineage(i: int, minutes: float, path: str) -> dict[str, Any]:
    return {
        "run_id": RUN,
        "source_path": path,
        "line_number": i + 1,
        "node_id": str(i % 3),
        "level": "INFO",
        "event_ts": _at(minutes),
        "event_date": DAY,
    }


def _auth_events() -> Iterator[dict[str, Any]]:
    reasons = ["INVALID_CREDENTIALS", "SSL_HANDSHAKE_FAILED", "UNSUPPORTED_MECHANISM"]
    for i in range(30):
        yield {
            **_lineage(i, 17 * i, "broker-1/server.log"),
            "event_type": "reauthentication_failed" if i % 7 == 0 else "authentication_failed",
            "side": "broker",
            "peer_ip": f"10.1.0.{i % 4}",
            "listener": ["SASL_SSL-9093", "INTERNAL-9092", None][i % 3],
            "failure_reason_code": reasons[i % 3],
            "principal": "User:mallory" if i % 5 == 0 else None,
        }
    yield {**_lineage(30, 5, "broker-1/server.log"), "event_type": "authentication_succeeded"}


def _authz() -> Iterator[dict[str, Any]]:
    for i in range(24):
        principal = ["User:alice", "User:bob", "User:CN=svc,O=corp"][i % 3]
        yield {
            **_lineage(i, 23 * i, "broker-1/kafka-authorizer.log"),
            "record_type": "decision",
            "authorizer": "StandardAuthorizer",
            "principal": principal,
            "decision": "DENIED" if i % 4 else "ALLOWED",
            "operation": ["READ", "WRITE", "DESCRIBE"][i % 3],
            "host": "10.1.0.9",
            "resource_type": "TOPIC",
            "resource_name": f"orders-{i % 2}",
        }


def _metrics() -> Iterator[dict[str, Any]]:
    windows = [("1h", _at(60 * hour), _at(60 * hour + 60), hour + 1) for hour in range(4)]
    windows.append(("1d", _at(-480), _at(960), 10))
    for window, start, end, events in windows:
        yield {
            "metric_name": "failed-authentication-total",
            "window": window,
            "window_start_ts": start,
            "window_end_ts": end,
            "broker_id": "1",
            "listener": "SASL_SSL-9093",
            "value": float(events),
            "event_count": events,
            "run_id": RUN,
            "window_date": DAY,
        }


def _findings() -> Iterator[dict[str, Any]]:
    rules = [
        ("reauth.no_reauth_client_on_expiring_listener", "KIP-368", "high"),
        ("reauth.repeated_failed_reauthentication", "KIP-368", "low"),
        ("tokens.describe_by_non_owner", "KIP-48", "medium"),
        ("forwarding.principal_mismatch", "KIP-590", "info"),
    ]
    for i in range(9):
        rule, kip, severity = rules[i % len(rules)]
        yield {
            "finding_id": f"f{i}",
            "rule_id": rule,
            "kip": kip,
            "severity": severity,
            "subject_type": "principal",
            "subject": f"User:app{i % 3}",
            "discriminator": "",
            "node_id": "1",
            "first_seen_ts": _at(10 * i),
            "last_seen_ts": _at(10 * i + 45),
            "count": i + 1,
            "evidence": _evidence(f"broker-{i % 2}/server.log", 10 * i + 1, 10 * i + 5),
            "explanation": f"Finding {i} of rule {rule}.",
            "run_id": RUN,
            "finding_date": DAY,
        }


def write_full_lake(lake: Path) -> None:
    """Writes every table the notebooks read under ``lake`` (an empty folder)."""
    _write(lake, "reauth_sessions", list(_sessions()), "activity_date")
    _write(lake, "reauth_readiness", list(_readiness()), "activity_date")
    _write(lake, "token_lifecycle", list(_tokens()), None)
    _write(lake, "auth_events", list(_auth_events()), "event_date")
    _write(lake, "authz_decisions", list(_authz()), "event_date")
    _write(lake, "security_metrics", list(_metrics()), "window_date")
    _write(lake, "findings", list(_findings()), "finding_date")
