"""Area 'auth': SASL authentication and KIP-368 re-authentication on the brokers.

Rules followed (kafka-log-formats.md section 4; apache/kafka ``Selector.pollSelectionKeys``,
``SaslServerAuthenticator``, ``SocketServer.Processor``, ``SaslClientAuthenticator``):

* Every client keeps one connection per broker, on ``EXTERNAL`` (``connections.max.reauth.ms``
  = 1 h for every mechanism) or ``INTERNAL`` (0: no expiry). An authentication logs, on the
  broker, DEBUG ``Using SASL mechanism 'M' provided by client`` and ``Authentication complete;
  session max lifetime from broker config=... sending N ms to client``
  (``SaslServerAuthenticator``), then DEBUG ``Successfully authenticated with /ip``
  (``Selector``, ``[SocketServer ...]`` prefix): one ``successful-authentication``; when the
  client cannot re-authenticate, also one ``successful-authentication-no-reauth``. The client
  then sends its first request (a Metadata request in the request log) within 40 ms.
* On an expiring listener the session lifetime is ``connections.max.reauth.ms``. A client that
  can re-authenticate does so at 85-95% of it (``SaslClientAuthenticator`` picks a random point
  in that range): ``Beginning re-authentication: ...``, the two lines above, then
  ``Successfully re-authenticated with /ip``: one ``successful-reauthentication`` and one
  ``reauthentication-latency`` observation (end minus begin, ms). One in twenty fails
  (``Failed re-authentication with ...``: ``failed-reauthentication``); the broker closes the
  connection and the client reconnects (a new connection, a new authentication). A client that
  cannot re-authenticate keeps using its session; its first request after expiry is refused
  with DEBUG ``Disconnecting expired channel: ...`` (``kafka.network.Processor``; one
  ``expired-connections-killed-count``) and it reconnects.
* Strangers with wrong credentials fail: INFO ``Failed authentication with /ip (channelId=...)
  (message)`` (the channel id since 3.2, KAFKA-13539): ``failed-authentication``.

What the lines state decides the metric dimensions (docs/generator.md): Selector outcomes
carry the listener only where the layout prints the network thread (Strimzi) and the
mechanism only where the exception message names it; the no-reauth, kill and latency
metrics belong to a connection, whose listener is its port's. Unambiguous by construction:
one client address per client, at least ``OUTCOME_GAP_MS`` between two authentication
outcomes on one broker (a handshake's DEBUG lines are never interleaved with another's).
"""

from __future__ import annotations

import heapq
import random
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from jobs.simulator.base import Client, LogLine, Node, Truth, World
from jobs.simulator.requests import request_message
from jobs.simulator.world import (
    LISTENERS,
    connection_id,
    network_thread,
    reauth_capable,
    socket_server_prefix,
    version_tuple,
)

SELECTOR = "org.apache.kafka.common.network.Selector"
PROCESSOR = "kafka.network.Processor"
SASL_SERVER = "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"
STRANGER_PREFIX = "10.9.9."
#: Failed authentication attempts of strangers per broker and hour.
FAILURES_PER_HOUR = 6
REAUTH_FAILURE_ODDS = 0.05
#: Minimum distance between two authentication outcomes on one broker (ms); a handshake's
#: DEBUG lines come at most MAX_LATENCY_MS before its outcome.
OUTCOME_GAP_MS = 60
MAX_LATENCY_MS = 45
#: ``[rules.reauth] failed_reauth_threshold`` default: failed re-authentications from one
#: address on one broker in a UTC day that make a finding.
FAILED_REAUTH_THRESHOLD = 3
KIP = "KIP-368"


def failure_message(mechanism: str, reauth: bool) -> str:
    """The exception message ``Selector`` logs for a credential failure: PLAIN's
    ``SaslAuthenticationException`` text, else ``SaslServerAuthenticator``'s generic one."""
    if mechanism == "PLAIN":
        return "Authentication failed: Invalid username or password"
    during = "re-authentication" if reauth else "authentication"
    return (
        f"Authentication failed during {during} due to invalid credentials with SASL "
        f"mechanism {mechanism}"
    )


def named_mechanism(mechanism: str) -> str | None:
    """The mechanism a failure message names (``failure_message``), else None."""
    return None if mechanism == "PLAIN" else mechanism


def java_date(ts_ms: int) -> str:
    """``java.util.Date.toString`` in UTC: ``Fri Nov 20 01:00:12 UTC 2026``."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ts_ms // 1000))


@dataclass
class Segment:
    """One connection of a client to a broker: usable for requests in [start_ms, usable_ms)."""

    index: int
    port: int
    start_ms: int
    usable_ms: int


@dataclass
class Pair:
    """A client's connections to one broker."""

    client: Client
    client_index: int
    broker: Node
    listener: str
    segments: list[Segment] = field(default_factory=list)


@dataclass(frozen=True)
class Event:
    """One planned authentication event."""

    ts: int
    kind: str  # 'connect' | 'reauth_ok' | 'reauth_failed' | 'kill' | 'stranger'
    broker: Node
    pair: Pair | None
    segment: Segment | None
    latency_ms: int = 0


def listener_of(client_index: int) -> str:
    """Every third client uses the non-expiring INTERNAL listener."""
    return "INTERNAL" if client_index % 3 == 2 else "EXTERNAL"


def plan(world: World) -> tuple[list[Event], dict[tuple[int, int], Pair]]:
    """The authentication events of every broker, in time order, and each (client index,
    broker index) pair's connections; computed once per world (``world.settings``) so that
    the request area sends on the same connections."""
    cached = world.settings.get("auth_plan")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    rng = world.rng("auth-plan")
    heap: list[tuple[int, int, str, int, Pair | None]] = []
    pairs: dict[tuple[int, int], Pair] = {}
    seq = 0
    for b, broker in enumerate(world.brokers):
        for c, client in enumerate(world.clients):
            new = Pair(client, c, broker, listener_of(c))
            pairs[(c, b)] = new
            heap.append((world.start_ms + rng.randrange(1, 240_000), seq, "connect", b, new))
            seq += 1
        for hour in range(int((world.end_ms - world.start_ms) / 3_600_000) + 1):
            for _ in range(FAILURES_PER_HOUR):
                ts = world.start_ms + hour * 3_600_000 + rng.randrange(0, 3_600_000)
                heap.append((ts, seq, "stranger", b, None))
                seq += 1
    heapq.heapify(heap)
    last: dict[int, int] = defaultdict(lambda: -(10**15))
    events: list[Event] = []
    while heap:
        ts, _, kind, b, pair = heapq.heappop(heap)
        if ts >= world.end_ms:
            continue
        if ts - last[b] < OUTCOME_GAP_MS:
            heapq.heappush(heap, (last[b] + OUTCOME_GAP_MS, seq, kind, b, pair))
            seq += 1
            continue
        last[b] = ts
        broker = world.brokers[b]
        if pair is None:
            events.append(Event(ts, "stranger", broker, None, None))
            continue
        reauth_ms = LISTENERS[pair.listener][2]
        capable = reauth_capable(pair.client) is True
        follow: tuple[int, str] | None = None
        if kind == "connect":
            index = len(pair.segments)
            segment = Segment(index, 40000 + pair.client_index * 97 + b * 7 + index, ts,
                              world.end_ms)  # fmt: skip
            pair.segments.append(segment)
            events.append(Event(ts, "connect", broker, pair, segment))
            if reauth_ms > 0 and capable:
                follow = (ts + int(reauth_ms * rng.uniform(0.85, 0.95)), "reauth")
            elif reauth_ms > 0:
                segment.usable_ms = ts + reauth_ms  # requests after expiry are refused
                follow = (ts + reauth_ms + rng.randrange(1, 60_000), "kill")
        elif kind == "reauth":
            segment = pair.segments[-1]
            latency = rng.randrange(3, MAX_LATENCY_MS)
            if rng.random() < REAUTH_FAILURE_ODDS:
                segment.usable_ms = ts
                events.append(Event(ts, "reauth_failed", broker, pair, segment, latency))
                follow = (ts + rng.randrange(200, 2_000), "connect")
            else:
                events.append(Event(ts, "reauth_ok", broker, pair, segment, latency))
                follow = (ts + int(reauth_ms * rng.uniform(0.85, 0.95)), "reauth")
        else:  # kill
            segment = pair.segments[-1]
            events.append(Event(ts, "kill", broker, pair, segment))
            follow = (ts + rng.randrange(100, 1_000), "connect")
        if follow is not None:
            heapq.heappush(heap, (follow[0], seq, follow[1], b, pair))
            seq += 1
    world.settings["auth_plan"] = (events, pairs)
    return events, pairs


@dataclass
class _Findings:
    """Facts of the KIP-368 findings, accumulated while the lines are produced."""

    # (principal, listener, software) -> [count, first, last, min broker, tags]
    no_reauth: dict[tuple[str, str, str], list[object]] = field(default_factory=dict)
    # (ip, node, date) -> [count, first, last, tags]
    failed: dict[tuple[str, str, str], list[object]] = field(default_factory=dict)


class AuthArea:
    """SASL authentication, re-authentication, kills and failures (KIP-368, KIP-152)."""

    name = "auth"

    def configure(self, world: World) -> None:
        """Plan the connections (shared with the request area)."""
        plan(world)

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every authentication line of every broker (and each connection's first request),
        in time order; the KIP-368 findings are reported at the end."""
        events, _ = plan(world)
        rng = world.rng(self.name)
        findings = _Findings()
        pending: list[tuple[int, int, LogLine]] = []  # first requests, a little later
        serial = 0
        for event in events:
            while pending and pending[0][0] <= event.ts:
                yield heapq.heappop(pending)[2]
            if event.kind == "stranger":
                yield _stranger(event.ts, event.broker, rng, truth)
                continue
            serial += 1
            for line in self._event(event, rng, truth, findings, f"auth:{serial}"):
                if line.stream == "request":
                    heapq.heappush(pending, (line.ts_ms, serial, line))
                else:
                    yield line
        while pending:
            yield heapq.heappop(pending)[2]
        _report(truth, findings)

    def _event(self, event: Event, rng: random.Random, truth: Truth, findings: _Findings,
               tag: str) -> list[LogLine]:  # fmt: skip
        pair, segment, broker, ts = event.pair, event.segment, event.broker, event.ts
        assert pair is not None and segment is not None
        client, node_id = pair.client, broker.node_id
        thread = network_thread(pair.listener, pair.client_index % 3)
        shown = pair.listener if broker.layout == "strimzi" else None
        prefix = socket_server_prefix(broker)
        channel = connection_id(broker, pair.listener, client, segment.port, segment.index)
        reauth_ms = LISTENERS[pair.listener][2]
        capable = reauth_capable(client)

        def line(at: int, level: str, logger: str, message: str, *, keep: bool = False,
                 line_tag: str | None = None) -> LogLine:  # fmt: skip
            return LogLine(at, broker.name, "server", level, logger, message, thread,
                           line_tag, keep)  # fmt: skip

        if event.kind == "kill":
            truth.metric_event("expired-connections-killed-count", ts, node_id,
                               listener=pair.listener)  # fmt: skip
            header = (
                f"RequestHeader(apiKey=FETCH, apiVersion=12, clientId={client.client_id}, "
                f"correlationId={rng.randrange(1000, 100000)}, headerVersion=2)"
            )
            message = (
                "Disconnecting expired channel: org.apache.kafka.common.network.KafkaChannel@"
                f"{rng.randrange(1 << 28, 1 << 31):x} id={channel} : {header}"
            )
            if capable is False:  # the session's end is evidence of the no-reauth finding
                key = (client.principal, pair.listener,
                       f"{client.software_name}/{client.software_version}")  # fmt: skip
                findings.no_reauth[key][4].append(tag)  # type: ignore[attr-defined]
            return [line(ts, "DEBUG", PROCESSOR, message, line_tag=tag)]
        handshake = self._handshake(event, reauth_ms, rng)
        lines = [
            line(
                at, "DEBUG", SASL_SERVER, text, keep=True, line_tag=f"{tag}:life" if life else None
            )
            for at, text, life in handshake
        ]
        if event.kind == "connect":
            truth.metric_event("successful-authentication", ts, node_id, listener=shown)
            if capable is False:
                truth.metric_event("successful-authentication-no-reauth", ts, node_id,
                                   listener=pair.listener, mechanism=client.mechanism)  # fmt: skip
            if capable is False and reauth_ms > 0:
                key = (client.principal, pair.listener,
                       f"{client.software_name}/{client.software_version}")  # fmt: skip
                entry = findings.no_reauth.setdefault(key, [0, ts, ts, node_id, []])
                entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
                entry[2] = ts
                entry[3] = min(str(entry[3]), node_id)
                entry[4].extend((tag, f"{tag}:life"))  # type: ignore[attr-defined]
            message = f"{prefix}Successfully authenticated with /{client.address}"
            lines.append(line(ts, "DEBUG", SELECTOR, message, line_tag=tag))
            first = ts + rng.randrange(5, 40)
            text = request_message(broker, client, pair.listener, channel, api=3,
                                   correlation=rng.randrange(1, 50), topic="orders", size=0,
                                   total_ms=0.4)  # fmt: skip
            lines.append(LogLine(first, broker.name, "request", "DEBUG", "kafka.request.logger",
                                 text, "data-plane-kafka-request-handler-1"))  # fmt: skip
            return lines
        if event.kind == "reauth_ok":
            truth.metric_event("successful-reauthentication", ts, node_id, listener=shown)
            truth.metric_event("reauthentication-latency", ts, node_id,
                               listener=pair.listener, mechanism=client.mechanism,
                               value=float(event.latency_ms))  # fmt: skip
            message = f"{prefix}Successfully re-authenticated with /{client.address}"
            lines.append(line(ts, "DEBUG", SELECTOR, message))
            return lines
        # reauth_failed
        truth.metric_event("failed-reauthentication", ts, node_id, listener=shown,
                           mechanism=named_mechanism(client.mechanism))  # fmt: skip
        desc = f"/{client.address}"
        if version_tuple(broker.kafka_version) >= (3, 2):
            desc += f" (channelId={channel})"
        reason = failure_message(client.mechanism, reauth=True)
        message = f"{prefix}Failed re-authentication with {desc} ({reason})"
        lines.append(line(ts, "INFO", SELECTOR, message, line_tag=tag))
        day = time.strftime("%Y-%m-%d", time.gmtime(ts // 1000))
        entry = findings.failed.setdefault((client.address, node_id, day), [0, ts, ts, []])
        entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
        entry[2] = ts
        entry[3].append(tag)  # type: ignore[attr-defined]
        return lines

    @staticmethod
    def _handshake(event: Event, reauth_ms: int, rng: random.Random) -> list[tuple[int, str, bool]]:
        """The ``SaslServerAuthenticator`` DEBUG lines before the outcome: (ts, message,
        whether it is the session-lifetime line)."""
        assert event.pair is not None
        mechanism = event.pair.client.mechanism
        ts = event.ts
        lines: list[tuple[int, str, bool]] = []
        begin = ts - (event.latency_ms or rng.randrange(2, 10))
        if event.kind in ("reauth_ok", "reauth_failed"):
            server = f"{SASL_SERVER}@{rng.randrange(1 << 28, 1 << 31):x}"
            lines.append((begin, f"Beginning re-authentication: {server}", False))
        lines.append((begin + 1, f"Using SASL mechanism '{mechanism}' provided by client", False))
        if event.kind == "reauth_failed":
            return lines
        if reauth_ms > 0:
            expiry = ts + reauth_ms
            lifetime = (
                f"Authentication complete; session max lifetime from broker config={reauth_ms} "
                f"ms, no credential expiration; session expiration = {java_date(expiry)} "
                f"({reauth_ms} ms), sending {reauth_ms} ms to client"
            )
        else:
            lifetime = (
                "Authentication complete; session max lifetime from broker config=0 ms, no "
                "credential expiration; no session expiration, sending 0 ms to client"
            )
        lines.append((ts, lifetime, True))
        return lines


def _stranger(ts: int, broker: Node, rng: random.Random, truth: Truth) -> LogLine:
    mechanism = rng.choice(("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))
    listener_name = rng.choice(tuple(LISTENERS))
    listener = listener_name if broker.layout == "strimzi" else None
    truth.metric_event("failed-authentication", ts, broker.node_id, listener=listener,
                       mechanism=named_mechanism(mechanism))  # fmt: skip
    address = f"{STRANGER_PREFIX}{rng.randrange(1, 30)}"
    desc = f"/{address}"
    if version_tuple(broker.kafka_version) >= (3, 2):
        local = f"10.0.0.{int(broker.node_id) % 250 + 1}:{LISTENERS[listener_name][1]}"
        desc += f" (channelId={local}-{address}:{rng.randrange(30000, 60000)}-{ts % 997})"
    reason = failure_message(mechanism, reauth=False)
    message = f"{socket_server_prefix(broker)}Failed authentication with {desc} ({reason})"
    thread = network_thread(listener_name, rng.randrange(3))
    return LogLine(ts, broker.name, "server", "INFO", SELECTOR, message, thread)


def _report(truth: Truth, findings: _Findings) -> None:
    """The KIP-368 findings (``transforms.gold.kip368_reauth.outputs`` rules, stated from the
    world)."""
    for (principal, listener, software), entry in sorted(findings.no_reauth.items()):
        count, first, last, node, tags = entry
        discriminator = f"listener={listener} software={software}"
        truth.finding({
            "rule_id": "reauth.no_reauth_client_on_expiring_listener", "kip": KIP,
            "severity": "medium", "subject_type": "principal", "subject": principal,
            "discriminator": discriminator, "node_id": node, "first_seen_ts": first,
            "last_seen_ts": last, "count": count, "evidence_tags": tags,
            "explanation": f"client cannot re-authenticate on a listener whose sessions expire "
                           f"({discriminator}): the broker kills its connection at the first "
                           "request after expiry",
        })  # fmt: skip
    for (address, node, day), (count, first, last, tags) in sorted(findings.failed.items()):
        if int(count) < FAILED_REAUTH_THRESHOLD:  # type: ignore[call-overload]
            continue
        truth.finding({
            "rule_id": "reauth.repeated_failed_reauthentication", "kip": KIP,
            "severity": "medium", "subject_type": "client_address", "subject": address,
            "discriminator": day, "node_id": node, "first_seen_ts": first, "last_seen_ts": last,
            "count": count, "evidence_tags": tags,
            "explanation": f"{count} failed re-authentications from this address on one "
                           "broker in a day",
        })  # fmt: skip
