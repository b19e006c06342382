"""jobs.simulator.links: which outcome lines the logs tie to a principal, stated from the world
(the rules of docs/kafka-log-formats.md section 4.5, cases derived by hand)."""

from __future__ import annotations

from typing import Any

from jobs.simulator.links import RequestLog, Seen, principal_rows

DAY = 1_795_132_800_000  # 2026-11-20T00:00:00Z
H = 3_600_000


def outcome(tag: str, kind: str, ts: int, ip: str, **values: Any) -> dict[str, Any]:
    base = {"tag": tag, "event_type": kind, "node_id": "1", "ts": ts, "client_ip": ip,
            "connection_id": None, "principal": "User:alice", "mechanism": "PLAIN",
            "mechanism_named": False, "handshake_ts": None}  # fmt: skip
    return base | values


def row(out: dict[str, Any], source: str | None, mechanism_source: str | None) -> dict[str, Any]:
    return {
        "tag": out["tag"], "event_type": out["event_type"], "node_id": out["node_id"],
        "event_ts": out["ts"], "principal": out["principal"], "linkable": source is not None,
        "principal_source": source, "mechanism": out["mechanism"],
        "mechanism_stated": mechanism_source is not None, "mechanism_source": mechanism_source,
    }  # fmt: skip


def test_request_log_keeps_first_and_last_per_connection_and_day() -> None:
    log = RequestLog()
    for ts in (DAY + 10 * H, DAY + 9 * H, DAY + 11 * H, DAY + 25 * H):
        log.add("1", "c-1", "10.0.0.1", "User:alice", ts)
    assert log.seen == {
        ("1", DAY // 86_400_000, "c-1"): Seen("c-1", "10.0.0.1", "User:alice", DAY + 9 * H,
                                             DAY + 11 * H),
        ("1", DAY // 86_400_000 + 1, "c-1"): Seen("c-1", "10.0.0.1", "User:alice", DAY + 25 * H,
                                                 DAY + 25 * H),
    }  # fmt: skip


def test_principal_rows() -> None:
    log = RequestLog()
    requests = [
        ("A", "10.0.0.1", "User:alice", DAY + 10 * H + 30),  # 30 ms after its success line
        ("A", "10.0.0.1", "User:alice", DAY + 10 * H + 1_800_000),
        ("B", "10.0.0.2", "User:bob", DAY + 10 * H + 61_000),  # 61 s after: too late
        ("C1", "10.0.0.3", "User:carol", DAY + 10 * H),
        ("C2", "10.0.0.3", "User:dave", DAY + 10 * H + 5),
        ("D", "10.0.0.4", "User:dan", DAY + 10 * H),  # then idle
        ("F", "10.0.0.6", "User:frank", DAY + 24 * H + 10),  # the next day
        ("G", "10.0.0.7", "User:gus", DAY + 12 * H + 100),
    ]
    for connection, ip, principal, ts in requests:
        log.add("1", connection, ip, principal, ts)
    named = {"mechanism_named": True}
    outcomes = [
        outcome("ok", "authentication_succeeded", DAY + 10 * H, "10.0.0.1",
                handshake_ts=DAY + 10 * H - 5),
        outcome("late", "authentication_succeeded", DAY + 10 * H, "10.0.0.2", principal="User:bob"),
        outcome("reauth", "reauthentication_succeeded", DAY + 10 * H + 60_000, "10.0.0.1"),
        outcome("two", "reauthentication_failed", DAY + 10 * H + 60_000, "10.0.0.3",
                principal="User:carol", **named),
        outcome("idle", "reauthentication_succeeded", DAY + 10 * H + 601_000, "10.0.0.4",
                handshake_ts=DAY + 10 * H + 599_000, principal="User:dan"),
        outcome("channel", "reauthentication_failed", DAY + 11 * H, "10.0.0.1", connection_id="A"),
        outcome("unseen", "authentication_failed", DAY + 11 * H, "10.0.0.1", connection_id="X"),
        outcome("no-id", "authentication_failed", DAY + 11 * H, "10.0.0.1", principal=None, **named),
        outcome("midnight", "authentication_succeeded", DAY + 24 * H - 10, "10.0.0.6",
                handshake_ts=DAY + 24 * H - 20, principal="User:frank"),
        outcome("next-day", "authentication_succeeded", DAY + 24 * H + 5, "10.0.0.6",
                handshake_ts=DAY + 24 * H - 5, principal="User:frank"),
        # A second success of the address before G's first request: G is the second one's.
        outcome("first", "authentication_succeeded", DAY + 12 * H, "10.0.0.7", principal="User:gus"),
        outcome("second", "authentication_succeeded", DAY + 12 * H + 50, "10.0.0.7",
                principal="User:gus"),
    ]  # fmt: skip
    by_tag = {o["tag"]: o for o in outcomes}
    expected = [
        row(by_tag["ok"], "session", "handshake"),
        row(by_tag["late"], None, None),
        row(by_tag["reauth"], "session", None),
        row(by_tag["two"], None, "line"),
        row(by_tag["idle"], None, None),  # the handshake line is 2 s before: too far
        row(by_tag["channel"], "request_log", None),
        row(by_tag["unseen"], None, None),
        row(by_tag["no-id"], None, "line"),
        row(by_tag["midnight"], None, "handshake"),
        row(by_tag["next-day"], "session", None),  # its handshake line is the day before
        row(by_tag["first"], None, None),
        row(by_tag["second"], "session", None),
    ]
    assert principal_rows(outcomes, log) == expected
