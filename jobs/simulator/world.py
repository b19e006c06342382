"""Build the simulated cluster (``base.World``) from the ``generate`` options.

Brokers, controllers and Connect workers with a Kafka version and a layout each; clients of
several software versions (KIP-511 names as the clients send them in ApiVersions) and SASL
mechanisms; two listeners per broker, ``EXTERNAL`` (SASL_SSL) with a positive
``connections.max.reauth.ms`` (KIP-368) and ``INTERNAL`` (SASL_PLAINTEXT) without.
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass, field
from pathlib import Path

from jobs.simulator.base import Client, Node, World
from jobs.simulator.layouts import DEFAULT_LAYOUTS, LAYOUTS
from jobs.simulator.shared import version_tuple

#: Versions a ``mixed`` cluster cycles through (string request log before 2.8, JSON after;
#: AclAuthorizer up to 3.2, StandardAuthorizer (KRaft) from 3.3; 4.x connection ids with a
#: processor part).
MIXED_VERSIONS: tuple[str, ...] = ("3.9.1", "2.7.2", "4.1.0", "3.6.2")
#: (software name, version, can re-authenticate: True / False / None = unknown), KIP-368
#: support as in ``[rules.reauth] capabilities`` (kafka-log-formats.md section 4.4). Java 2.0
#: predates KIP-511, so it sends no software name (``unknown``).
CLIENT_SOFTWARE: tuple[tuple[str, str, bool | None], ...] = (
    ("apache-kafka-java", "3.7.1", True),
    ("librdkafka", "1.9.2", False),
    ("apache-kafka-java", "2.8.2", True),
    ("sarama", "1.32.0", False),
    ("apache-kafka-java", "4.0.0", True),
    ("librdkafka", "2.3.0", True),
    ("sarama", "1.43.0", True),
    ("aiokafka", "0.10.0", False),
    ("unknown", "unknown", None),  # Java 2.0: no ApiVersions software name
)
MECHANISMS: tuple[str, ...] = ("SCRAM-SHA-256", "PLAIN", "SCRAM-SHA-512", "OAUTHBEARER")
#: Listener name -> (security protocol, port, connections.max.reauth.ms).
LISTENERS: dict[str, tuple[str, int, int]] = {
    "EXTERNAL": ("SASL_SSL", 9093, 3_600_000),
    "INTERNAL": ("SASL_PLAINTEXT", 9092, 0),
}
SUPER_USER = "User:admin"
DEFAULT_START = "2026-11-20T00:00:00Z"


@dataclass(frozen=True)
class GenerateOptions:
    """``kafka-audit generate`` options (see ``jobs.cli.generate``)."""

    out: Path
    brokers: int = 3
    controllers: int = 1
    connect_workers: int = 1
    clients: int = 12
    hours: float = 2.0
    lines_target: int = 50_000
    seed: int = 1
    kafka_version: str = "mixed"
    layouts: tuple[str, ...] = DEFAULT_LAYOUTS
    rotate_lines: int = 0
    gzip: bool = False
    start: str = DEFAULT_START
    areas: tuple[str, ...] | None = field(default=None)


def parse_start(text: str) -> int:
    """``yyyy-mm-ddTHH:MM:SSZ`` -> epoch ms.

    Raises:
        ValueError: another format.
    """
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) * 1000


def _version(options: GenerateOptions, index: int) -> str:
    if options.kafka_version == "mixed":
        return MIXED_VERSIONS[index % len(MIXED_VERSIONS)]
    return options.kafka_version


def broker_properties(node_id: str, version: str) -> dict[str, str]:
    """A broker's ``server.properties``: ids, listeners, KIP-368 setting, authorizer."""
    kraft = version_tuple(version) >= (3, 3)
    listeners = ",".join(f"{n}://0.0.0.0:{p}" for n, (_, p, _) in LISTENERS.items())
    props = {
        "broker.id" if not kraft else "node.id": node_id,
        "listeners": listeners,
        "listener.security.protocol.map": ",".join(
            f"{n}:{proto}" for n, (proto, _, _) in LISTENERS.items()
        ),
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": ",".join(MECHANISMS),
        "super.users": SUPER_USER,
        "allow.everyone.if.no.acl.found": "true" if kraft else "false",
        "authorizer.class.name": (
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            if kraft
            else "kafka.security.authorizer.AclAuthorizer"
        ),
    }
    for name, (_, _, reauth_ms) in LISTENERS.items():
        if reauth_ms > 0:  # the documented form: listener and mechanism prefix
            for mechanism in MECHANISMS:
                key = f"listener.name.{name.lower()}.{mechanism.lower()}.connections.max.reauth.ms"
                props[key] = str(reauth_ms)
    if kraft:
        props["process.roles"] = "broker"
    return props


def build_world(options: GenerateOptions) -> World:
    """The simulated cluster for ``options``.

    Raises:
        ValueError: a count below its minimum (1 broker, 0 others), non-positive hours or
            lines target, an unknown layout or a start time that is not ``...T...Z``.
    """
    _check(options)
    start_ms = parse_start(options.start)
    return World(
        seed=options.seed,
        start_ms=start_ms,
        end_ms=start_ms + int(options.hours * 3_600_000),
        brokers=_brokers(options),
        controllers=_controllers(options),
        connect_workers=_connect_workers(options),
        clients=_clients(options),
        lines_target=options.lines_target,
        kafka_version=options.kafka_version,
    )


def _check(options: GenerateOptions) -> None:
    """Raise ``ValueError`` for counts, hours, lines target or layouts out of range."""
    if options.brokers < 1 or options.controllers < 0 or options.connect_workers < 0:
        raise ValueError("--brokers must be >= 1, --controllers and --connect-workers >= 0")
    if options.clients < 1 or options.hours <= 0 or options.lines_target < 1:
        raise ValueError("--clients, --hours and --lines-target must be positive")
    unknown = [layout for layout in options.layouts if layout not in LAYOUTS]
    if unknown or not options.layouts:
        raise ValueError(f"unknown layout(s) {unknown}; expected some of {', '.join(LAYOUTS)}")


def _brokers(options: GenerateOptions) -> list[Node]:
    """``broker-N`` (node id N), versions and layouts given in turn."""
    layouts = options.layouts
    brokers = []
    for i in range(options.brokers):
        version = _version(options, i)
        node_id = str(i + 1)
        brokers.append(
            Node(
                f"broker-{i + 1}",
                node_id,
                "broker",
                version,
                layouts[i % len(layouts)],
                broker_properties(node_id, version),
            )
        )
    return brokers


def _controllers(options: GenerateOptions) -> list[Node]:
    """``controller-N`` (node id 3000 + N - 1): 3.9.1 in a mixed cluster, layouts continuing
    after the brokers'."""
    layouts = options.layouts
    controllers = []
    for i in range(options.controllers):
        node_id = str(3000 + i)
        props = {"node.id": node_id, "process.roles": "controller",
                 "controller.listener.names": "CONTROLLER", "listeners": "CONTROLLER://:9094",
                 "super.users": SUPER_USER}  # fmt: skip
        controllers.append(
            Node(
                f"controller-{i + 1}",
                node_id,
                "controller",
                _version(options, i) if options.kafka_version != "mixed" else "3.9.1",
                layouts[(options.brokers + i) % len(layouts)],
                props,
            )
        )
    return controllers


def _connect_workers(options: GenerateOptions) -> list[Node]:
    """``connect-N``: Kafka 3.9.1, the ``logger-line`` layout of Connect's log4j file."""
    workers = []
    for i in range(options.connect_workers):
        node_id = f"connect-{i + 1}"
        props = {"group.id": "connect-cluster", "client.id": node_id,
                 "bootstrap.servers": "broker-1:9092"}  # fmt: skip
        workers.append(Node(node_id, node_id, "connect", "3.9.1", "logger-line", props))
    return workers


def _clients(options: GenerateOptions) -> list[Client]:
    """``client-NN``: software and mechanism in turn, ``User:admin`` first, then
    ``User:app-NN``; one address each."""
    clients = []
    for i in range(options.clients):
        name, version, _ = CLIENT_SOFTWARE[i % len(CLIENT_SOFTWARE)]
        mechanism = MECHANISMS[i % len(MECHANISMS)]
        user = "admin" if i == 0 else f"app-{i:02d}"
        clients.append(
            Client(
                f"client-{i:02d}",
                f"User:{user}",
                name,
                version,
                mechanism,
                f"10.1.{i // 200}.{i % 200 + 10}",
            )
        )
    return clients


def reauth_capable(client: Client) -> bool | None:
    """Whether the client's software can re-authenticate (KIP-368); None = unknown."""
    for name, version, capable in CLIENT_SOFTWARE:
        if (name, version) == (client.software_name, client.software_version):
            return capable
    return None


def socket_server_prefix(node: Node, listener: str = "") -> str:
    """The Selector's LogContext: ``[SocketServer listenerType=BROKER, nodeId=N] `` (2.8+;
    ``ZK_BROKER`` before KRaft) or ``[SocketServer brokerId=N] `` (older)."""
    version = version_tuple(node.kafka_version)
    if version >= (2, 8):
        kind = "BROKER" if version >= (3, 3) else "ZK_BROKER"
        return f"[SocketServer listenerType={kind}, nodeId={node.node_id}] "
    return f"[SocketServer brokerId={node.node_id}] "


def network_thread(listener: str, processor: int) -> str:
    """The network thread's name (``SocketServer.Processor``), which Strimzi prints."""
    protocol = LISTENERS[listener][0]
    return f"data-plane-kafka-network-thread-1-ListenerName({listener})-{protocol}-{processor}"
