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
carry the listener only where the layout prints the network thread (``THREAD_LAYOUTS``) and the
mechanism only where the exception message names it; the no-reauth, kill and latency
metrics belong to a connection, whose listener is its port's. Unambiguous by construction:
one client address per client, at least ``OUTCOME_GAP_MS`` between two authentication
outcomes on one broker (a handshake's DEBUG lines are never interleaved with another's).

The events (connections, re-authentications, kills, strangers) are planned in
``connections``, which the request area shares.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from jobs.simulator.base import Client, LogLine, Node, Truth, World
from jobs.simulator.connections import Event, plan
from jobs.simulator.layouts import THREAD_LAYOUTS
from jobs.simulator.requests import client_request_message
from jobs.simulator.shared import REQUEST_LOGGER, broker_ip, version_tuple
from jobs.simulator.world import LISTENERS, network_thread, reauth_capable, socket_server_prefix

SELECTOR = "org.apache.kafka.common.network.Selector"
PROCESSOR = "kafka.network.Processor"
SASL_SERVER = "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"
STRANGER_PREFIX = "10.9.9."
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
class _Findings:
    """Facts of the KIP-368 findings, accumulated while the lines are produced."""

    # (principal, listener, software) -> [count, first, last, min broker, tags]
    no_reauth: dict[tuple[str, str, str], list[object]] = field(default_factory=dict)
    # (ip, node, date) -> [count, first, last, tags]
    failed: dict[tuple[str, str, str], list[object]] = field(default_factory=dict)

    @staticmethod
    def _software_key(client: Client, listener: str) -> tuple[str, str, str]:
        return (client.principal, listener,
                f"{client.software_name}/{client.software_version}")  # fmt: skip

    def no_reauth_session(self, client: Client, listener: str, ts: int, node_id: str,
                          tag: str) -> None:  # fmt: skip
        """A session of a client that cannot re-authenticate on an expiring listener; its
        outcome line (``tag``) and session-lifetime line are evidence."""
        key = self._software_key(client, listener)
        entry = self.no_reauth.setdefault(key, [0, ts, ts, node_id, []])
        entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
        entry[2] = ts
        entry[3] = min(str(entry[3]), node_id)
        entry[4].extend((tag, f"{tag}:life"))  # type: ignore[attr-defined]

    def no_reauth_end(self, client: Client, listener: str, tag: str) -> None:
        """The kill that ends such a session is evidence too."""
        key = self._software_key(client, listener)
        self.no_reauth[key][4].append(tag)  # type: ignore[attr-defined]

    def failed_reauth(self, address: str, node_id: str, ts: int, tag: str) -> None:
        """A failed re-authentication from ``address`` on the broker ``node_id``."""
        day = time.strftime("%Y-%m-%d", time.gmtime(ts // 1000))
        entry = self.failed.setdefault((address, node_id, day), [0, ts, ts, []])
        entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
        entry[2] = ts
        entry[3].append(tag)  # type: ignore[attr-defined]


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
        serial = strangers = 0
        for event in events:
            while pending and pending[0][0] <= event.ts:
                yield heapq.heappop(pending)[2]
            if event.kind == "stranger":
                strangers += 1
                yield _stranger(event.ts, event.broker, rng, truth, f"auth:stranger:{strangers}")
                continue
            serial += 1
            for line in _EventLines(event, rng, truth, findings, f"auth:{serial}").lines():
                if line.stream == "request":
                    heapq.heappush(pending, (line.ts_ms, serial, line))
                else:
                    yield line
        while pending:
            yield heapq.heappop(pending)[2]
        _report(truth, findings)


class _EventLines:
    """The lines of one event of a client's connection (all but ``stranger``) and what they
    tell the truth; ``tag`` (and ``tag:life``) mark the evidence lines."""

    def __init__(self, event: Event, rng: random.Random, truth: Truth, findings: _Findings,
                 tag: str) -> None:  # fmt: skip
        pair, segment, broker = event.pair, event.segment, event.broker
        assert pair is not None and segment is not None
        self.event, self.pair, self.broker, self.client = event, pair, broker, pair.client
        self.rng, self.truth, self.findings, self.tag = rng, truth, findings, tag
        self.thread = network_thread(pair.listener, pair.client_index % 3)
        self.shown = pair.listener if broker.layout in THREAD_LAYOUTS else None
        self.prefix = socket_server_prefix(broker)
        self.channel = pair.connection(segment)
        self.reauth_ms = LISTENERS[pair.listener][2]
        self.capable = reauth_capable(pair.client)
        self.handshake_ts: int | None = None  # its 'Using SASL mechanism' line

    def line(self, at: int, level: str, logger: str, message: str, *, keep: bool = False,
             line_tag: str | None = None) -> LogLine:  # fmt: skip
        """A ``server`` line of the broker, on the connection's network thread."""
        return LogLine(at, self.broker.name, "server", level, logger, message, self.thread,
                       line_tag, keep)  # fmt: skip

    def lines(self) -> list[LogLine]:
        """The kill line, or the handshake's DEBUG lines and the outcome."""
        kind = self.event.kind
        if kind == "kill":
            return [self._kill()]
        life = f"{self.tag}:life"  # the session-lifetime line's tag
        handshake = self._handshake()
        lines = [
            self.line(at, "DEBUG", SASL_SERVER, text, keep=True, line_tag=life if is_life else None)
            for at, text, is_life in handshake
        ]
        self.handshake_ts = next(at for at, text, _ in handshake if text.startswith("Using SASL"))
        if kind == "connect":
            return lines + self._connected()
        if kind == "reauth_ok":
            return lines + self._reauthenticated()
        return lines + self._reauth_failed()

    def _kill(self) -> LogLine:
        """``Processor``'s DEBUG for the first request after the session expired."""
        pair, client, ts, rng = self.pair, self.client, self.event.ts, self.rng
        self.truth.metric_event("expired-connections-killed-count", ts, self.broker.node_id,
                                listener=pair.listener)  # fmt: skip
        header = (
            f"RequestHeader(apiKey=FETCH, apiVersion=12, clientId={client.client_id}, "
            f"correlationId={rng.randrange(1000, 100000)}, headerVersion=2)"
        )
        message = (
            "Disconnecting expired channel: org.apache.kafka.common.network.KafkaChannel@"
            f"{rng.randrange(1 << 28, 1 << 31):x} id={self.channel} : {header}"
        )
        if self.capable is False:  # the session's end is evidence of the no-reauth finding
            self.findings.no_reauth_end(client, pair.listener, self.tag)
        return self.line(ts, "DEBUG", PROCESSOR, message, line_tag=self.tag)

    def _connected(self) -> list[LogLine]:
        """``Successfully authenticated`` and the client's first request (Metadata)."""
        pair, client, broker, ts = self.pair, self.client, self.broker, self.event.ts
        node_id = broker.node_id
        self.truth.metric_event("successful-authentication", ts, node_id, listener=self.shown)
        if self.capable is False:
            self.truth.metric_event("successful-authentication-no-reauth", ts, node_id,
                                    listener=pair.listener,
                                    mechanism=client.mechanism)  # fmt: skip
        if self.capable is False and self.reauth_ms > 0:
            self.findings.no_reauth_session(client, pair.listener, ts, node_id, self.tag)
        message = f"{self.prefix}Successfully authenticated with /{client.address}"
        outcome = self.line(ts, "DEBUG", SELECTOR, message, line_tag=self.tag)
        self._outcome("authentication_succeeded", None, named=False)
        first = ts + self.rng.randrange(5, 40)
        text = client_request_message(broker, client, pair.listener, self.channel, api=3,
                                      correlation=self.rng.randrange(1, 50), topic="orders",
                                      size=0, total_ms=0.4)  # fmt: skip
        self.truth.request_logged(node_id, self.channel, client.address, client.principal, first)
        request = LogLine(first, broker.name, "request", "DEBUG", REQUEST_LOGGER, text,
                          "data-plane-kafka-request-handler-1")  # fmt: skip
        return [outcome, request]

    def _reauthenticated(self) -> list[LogLine]:
        """``Successfully re-authenticated`` and its latency."""
        ts, node_id, client = self.event.ts, self.broker.node_id, self.client
        self.truth.metric_event("successful-reauthentication", ts, node_id, listener=self.shown)
        self.truth.metric_event("reauthentication-latency", ts, node_id,
                                listener=self.pair.listener, mechanism=client.mechanism,
                                value=float(self.event.latency_ms))  # fmt: skip
        message = f"{self.prefix}Successfully re-authenticated with /{client.address}"
        self._outcome("reauthentication_succeeded", None, named=False)
        return [self.line(ts, "DEBUG", SELECTOR, message, line_tag=self.tag)]

    def _reauth_failed(self) -> list[LogLine]:
        """``Failed re-authentication`` (with the channel id from 3.2, KAFKA-13539)."""
        ts, broker, client = self.event.ts, self.broker, self.client
        self.truth.metric_event("failed-reauthentication", ts, broker.node_id,
                                listener=self.shown,
                                mechanism=named_mechanism(client.mechanism))  # fmt: skip
        desc, channel = f"/{client.address}", None
        if version_tuple(broker.kafka_version) >= (3, 2):
            desc, channel = desc + f" (channelId={self.channel})", self.channel
        named = named_mechanism(client.mechanism) is not None
        self._outcome("reauthentication_failed", channel, named=named)
        reason = failure_message(client.mechanism, reauth=True)
        message = f"{self.prefix}Failed re-authentication with {desc} ({reason})"
        out = self.line(ts, "INFO", SELECTOR, message, line_tag=self.tag)
        self.findings.failed_reauth(client.address, broker.node_id, ts, self.tag)
        return [out]

    def _outcome(self, event_type: str, channel: str | None, *, named: bool) -> None:
        """Tell the truth about this event's outcome line (tagged ``self.tag``): whose it is,
        the channel id it prints, whether it names the mechanism (``links``)."""
        client = self.client
        self.truth.authentication({
            "tag": self.tag, "event_type": event_type, "node_id": self.broker.node_id,
            "ts": self.event.ts, "client_ip": client.address, "connection_id": channel,
            "principal": client.principal, "mechanism": client.mechanism,
            "mechanism_named": named, "handshake_ts": self.handshake_ts,
        })  # fmt: skip

    def _handshake(self) -> list[tuple[int, str, bool]]:
        """The ``SaslServerAuthenticator`` DEBUG lines before the outcome: (ts, message,
        whether it is the session-lifetime line)."""
        event, reauth_ms, rng = self.event, self.reauth_ms, self.rng
        mechanism = self.client.mechanism
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


def _stranger(ts: int, broker: Node, rng: random.Random, truth: Truth, tag: str) -> LogLine:
    """A stranger's failed authentication (``tag``): no request follows it, and the world does
    not say whose name it tried."""
    mechanism = rng.choice(("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))
    listener_name = rng.choice(tuple(LISTENERS))
    listener = listener_name if broker.layout in THREAD_LAYOUTS else None
    truth.metric_event("failed-authentication", ts, broker.node_id, listener=listener,
                       mechanism=named_mechanism(mechanism))  # fmt: skip
    address = f"{STRANGER_PREFIX}{rng.randrange(1, 30)}"
    desc, channel = f"/{address}", None
    if version_tuple(broker.kafka_version) >= (3, 2):
        local = f"{broker_ip(broker.node_id)}:{LISTENERS[listener_name][1]}"
        channel = f"{local}-{address}:{rng.randrange(30000, 60000)}-{ts % 997}"
        desc += f" (channelId={channel})"
    truth.authentication({
        "tag": tag, "event_type": "authentication_failed", "node_id": broker.node_id, "ts": ts,
        "client_ip": address, "connection_id": channel, "principal": None,
        "mechanism": mechanism, "mechanism_named": named_mechanism(mechanism) is not None,
        "handshake_ts": None,
    })  # fmt: skip
    reason = failure_message(mechanism, reauth=False)
    message = f"{socket_server_prefix(broker)}Failed authentication with {desc} ({reason})"
    thread = network_thread(listener_name, rng.randrange(3))
    return LogLine(ts, broker.name, "server", "INFO", SELECTOR, message, thread, tag)


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
