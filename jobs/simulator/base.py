"""The simulator's shared contract (``kafka-audit generate``).

A simulated cluster is a ``World`` (nodes, clients, time span, seed). Each *area* of it
(authentication, request traffic, authorizer, delegation tokens, forwarding, Connect) is a
generator of ``LogLine`` in non-decreasing ``ts_ms`` order; the framework merges the areas by
time, renders each line in its node's layout and writes it to the node's files (rotating and
gzipping as asked). While producing lines, an area records what it *knows* happened into the
``Truth``: metric events, token lifecycles and findings, from its own world state (never by
parsing its output and never with the pipeline's code). ``tag`` ties a line to truth rows: the
writer records where each tagged line landed (file, 1-based line number), so findings can name
their evidence positions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

#: File of each stream in a node's folder.
STREAM_FILES: dict[str, str] = {
    # brokers: SocketServer / Selector / SaslServerAuthenticator lines, token manager lines
    "server": "server.log",
    "request": "kafka-request.log",  # kafka.request.logger (brokers and controllers)
    "authorizer": "kafka-authorizer.log",  # kafka.authorizer.logger
    "controller": "controller.log",  # controllers: controller-side lines
    "connect": "connect.log",  # Connect workers: worker lines and REST access lines
}


@dataclass(frozen=True, slots=True)
class LogLine:
    """One log record as Kafka's code formats it, before the layout prefix.

    Attributes:
        ts_ms: event time, epoch milliseconds UTC.
        node: the node's folder name (``Node.name``), e.g. ``broker-1``.
        stream: a key of ``STREAM_FILES``.
        level: log4j level (``INFO``, ``DEBUG``, ``WARN``, ``ERROR``, ``TRACE``).
        logger: the logger name the layout prints as ``%c`` (``kafka.request.logger``,
            ``org.apache.kafka.common.network.Selector``, ...).
        message: the rendered message; may hold ``\\n`` (a stack trace).
        thread: the thread name, for layouts that print it.
        tag: evidence key; when set, the writer records the line's (file, line number).
        keep_with_next: the writer does not rotate the file between this line and the next
            one of its stream (a handshake's DEBUG lines stay with their outcome line).
    """

    ts_ms: int
    node: str
    stream: str
    level: str
    logger: str
    message: str
    thread: str = ""
    tag: str | None = None
    keep_with_next: bool = False


@dataclass
class Node:
    """A broker, controller or Connect worker.

    ``properties`` is written as the node's ``server.properties`` (brokers, controllers) or
    ``connect-distributed.properties`` (workers); areas may add keys in ``configure``.
    """

    name: str
    node_id: str
    role: str  # 'broker' | 'controller' | 'connect'
    kafka_version: str
    layout: str  # 'log4j' | 'strimzi' | 'logger-line' | ...: the framework's layouts
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Client:
    """A client application: its principal and software (KIP-511 name and version)."""

    client_id: str
    principal: str
    software_name: str
    software_version: str
    mechanism: str  # 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER' | 'GSSAPI' | ''
    address: str  # ip


@dataclass
class World:
    """The simulated cluster and time span. ``rng(area)`` gives each area its own stream of
    random numbers, so adding lines to one area never changes another's."""

    seed: int
    start_ms: int
    end_ms: int
    brokers: list[Node]
    controllers: list[Node]
    connect_workers: list[Node]
    clients: list[Client]
    lines_target: int
    kafka_version: str  # a version or 'mixed'
    settings: dict[str, Any] = field(default_factory=dict)

    def rng(self, area: str) -> random.Random:
        return random.Random(f"{self.seed}:{area}")


class Truth(Protocol):
    """What the simulator knows; the framework writes it to ``truth/``."""

    def metric_event(
        self,
        metric_name: str,
        ts_ms: int,
        broker_id: str | None,
        *,
        listener: str | None = None,
        mechanism: str | None = None,
        principal: str | None = None,
        api_key_name: str | None = None,
        value: float = 1.0,
    ) -> None:
        """One event behind a ``security_metrics`` value (counted into its 1h and 1d windows;
        ``value`` for observed quantities such as a latency)."""

    def token(self, row: dict[str, Any]) -> None:
        """One ``token_lifecycle`` row (columns as in ``schemas/token_lifecycle.py``; times as
        epoch ms; evidence by tag)."""

    def finding(self, row: dict[str, Any]) -> None:
        """One ``findings`` row (columns as in ``schemas/findings.py``; times as epoch ms;
        ``evidence_tags``: the tags of its supporting lines)."""

    def authentication(self, row: dict[str, Any]) -> None:
        """One broker-side authentication outcome line (``Successfully {re-}authenticated
        with``, ``Failed {re-}authentication with``; ``links.Outcome`` keys: tag,
        event_type, node_id, ts (epoch ms), client_ip, connection_id (the channel id the
        line prints, else None), principal (whose attempt it was; None when the world does
        not say), mechanism, mechanism_named (the line names it), handshake_ts (epoch ms of
        the handshake's ``Using SASL mechanism`` line, None without one))."""

    def request_logged(
        self, node_id: str, connection_id: str, client_ip: str, principal: str, ts_ms: int
    ) -> None:
        """One request-log line a broker writes for a client's connection (not a forwarded
        copy): what ``links`` needs to tell which outcomes the logs tie to a principal.
        Areas whose clients also authenticate report every such line."""


class Area(Protocol):
    """One part of the simulated world."""

    name: str

    def configure(self, world: World) -> None:
        """Add node properties / settings this area needs (called once, before ``lines``)."""

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every line of this area, in non-decreasing ``ts_ms`` order."""
