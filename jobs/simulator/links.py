"""Which authentication outcomes the logs tie to a principal and a mechanism, stated from the
world (``truth/auth_principals.jsonl``).

The world knows whose every authentication attempt is; the logs do not say it on the Selector
line (``Successfully {re-}authenticated with /ip``, ``Failed {re-}authentication with /ip
(...)``). What does tie a line to a principal is stated here from the world's facts (every
request-log line of every client connection, ``request_logged``; every outcome,
``authentication``), by the rules docs/kafka-log-formats.md section 4.5 states, never with the
pipeline's code:

* a line that prints a channel id: the request log shows that connection (same broker, same
  UTC day), whose principal it names ('request_log');
* ``Successfully authenticated``: the connection from the line's address whose first request
  of the day comes first within ``PAIRING_WINDOW_MS`` after it, unless another success line
  of that address comes between the two ('session');
* a re-authentication outcome without a channel id: the connections of the address open at
  its time (a request at or before it that day, and one at most ``IDLE_MS`` before it or any
  after), when they are all one principal's ('session');
* a failed initial authentication without a channel id: nothing (it opened no connection).

A mechanism is stated when the line names it ('line') or when the handshake's ``Using SASL
mechanism`` line comes at most ``HANDSHAKE_MAX_GAP_MS`` before the outcome on the same UTC
day ('handshake'; the generator never interleaves two handshakes).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

DAY_MS = 86_400_000
#: The pipeline's documented limits (``[rules.reauth]`` defaults, silver's fixed values).
PAIRING_WINDOW_MS = 60_000
IDLE_MS = 600_000
HANDSHAKE_MAX_GAP_MS = 1_000
SUCCEEDED = "authentication_succeeded"
REAUTH_OUTCOMES = ("reauthentication_succeeded", "reauthentication_failed")


@dataclass
class Seen:
    """A connection's requests on one broker and UTC day."""

    connection_id: str
    client_ip: str
    principal: str
    first: int
    last: int


class RequestLog:
    """The request-log lines of client connections, kept per connection and day (flat: one
    entry per connection-day, never per line)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, int, str], Seen] = {}

    def add(self, node_id: str, connection_id: str, client_ip: str, principal: str,
            ts_ms: int) -> None:  # fmt: skip
        """One request line (any order)."""
        key = (node_id, ts_ms // DAY_MS, connection_id)
        entry = self.seen.get(key)
        if entry is None:
            self.seen[key] = Seen(connection_id, client_ip, principal, ts_ms, ts_ms)
        elif ts_ms < entry.first:
            entry.first = ts_ms
        elif ts_ms > entry.last:
            entry.last = ts_ms

    def by_address(self) -> dict[tuple[str, int, str], list[Seen]]:
        """(node id, day, client ip) -> its connections that day."""
        found: dict[tuple[str, int, str], list[Seen]] = defaultdict(list)
        for (node_id, day, _), entry in self.seen.items():
            found[(node_id, day, entry.client_ip)].append(entry)
        return found


def _paired(ts: int, here: list[Seen], later_successes: list[int]) -> Seen | None:
    """The connection a success line at ``ts`` opened: the nearest first request within the
    pairing window, unless another success of the address comes before it."""
    candidates = [c for c in here if 0 <= c.first - ts <= PAIRING_WINDOW_MS]
    if not candidates:
        return None
    nearest = min(candidates, key=lambda c: (c.first, c.connection_id))
    if any(ts < other <= nearest.first for other in later_successes):
        return None
    return nearest


def _open_principal(ts: int, here: list[Seen]) -> str | None:
    """The one principal of the connections open at ``ts``, else None."""
    principals = {c.principal for c in here if c.first <= ts and ts - c.last <= IDLE_MS}
    return principals.pop() if len(principals) == 1 else None


@dataclass
class _Evidence:
    """What the logs show, indexed: the request log, its connections per (node, day, client
    ip), the success lines' times per (node, day, client ip)."""

    log: RequestLog
    by_address: dict[tuple[str, int, str], list[Seen]]
    successes: dict[tuple[str, int, str], list[int]]


def _link(outcome: dict[str, Any], evidence: _Evidence) -> tuple[str | None, str | None]:
    """(principal, principal_source) the logs tie ``outcome`` to, or (None, None)."""
    node_id, ts, kind = outcome["node_id"], outcome["ts"], outcome["event_type"]
    day = ts // DAY_MS
    if outcome["connection_id"] is not None:
        seen = evidence.log.seen.get((node_id, day, outcome["connection_id"]))
        return (seen.principal, "request_log") if seen else (None, None)
    address = (node_id, day, outcome["client_ip"])
    here = evidence.by_address.get(address, [])
    if kind == SUCCEEDED:
        paired = _paired(ts, here, evidence.successes.get(address, []))
        return (paired.principal, "session") if paired else (None, None)
    if kind in REAUTH_OUTCOMES:
        principal = _open_principal(ts, here)
        return (principal, "session") if principal else (None, None)
    return None, None


def _mechanism_source(outcome: dict[str, Any]) -> str | None:
    """'line', 'handshake' or None: how the logs state the outcome's mechanism."""
    if outcome["mechanism_named"]:
        return "line"
    shake, ts = outcome["handshake_ts"], outcome["ts"]
    same_day = shake is not None and shake // DAY_MS == ts // DAY_MS
    if same_day and 0 <= ts - shake <= HANDSHAKE_MAX_GAP_MS:
        return "handshake"
    return None


def principal_rows(outcomes: list[dict[str, Any]], log: RequestLog) -> list[dict[str, Any]]:
    """One ``truth/auth_principals.jsonl`` row per outcome: tag, event_type, node_id,
    event_ts, the world's principal and mechanism, whether the logs link / state them
    (``linkable``, ``mechanism_stated``) and how (``principal_source``,
    ``mechanism_source``; None when not). A link the logs make is to the world's principal
    (one address per client, ``world``): ``linkable`` means the logs name it."""
    successes: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for outcome in outcomes:
        if outcome["event_type"] == SUCCEEDED:
            key = (outcome["node_id"], outcome["ts"] // DAY_MS, outcome["client_ip"])
            successes[key].append(outcome["ts"])
    evidence = _Evidence(log, log.by_address(), successes)
    rows = []
    for outcome in outcomes:
        principal, source = _link(outcome, evidence)
        mechanism_source = _mechanism_source(outcome)
        rows.append({
            "tag": outcome["tag"], "event_type": outcome["event_type"],
            "node_id": outcome["node_id"], "event_ts": outcome["ts"],
            "principal": outcome["principal"], "linkable": principal is not None,
            "principal_source": source, "mechanism": outcome["mechanism"],
            "mechanism_stated": mechanism_source is not None,
            "mechanism_source": mechanism_source,
        })  # fmt: skip
    return rows
