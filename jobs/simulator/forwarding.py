"""Simulator area 'forwarding': KIP-590 forwarded admin requests and the KIP-801
StandardAuthorizer, on a KRaft cluster (a world with controllers; nothing in ZooKeeper mode).

What it simulates (docs/generator-areas.md):

* Admin requests (CreateTopics, DeleteTopics, CreatePartitions, IncrementalAlterConfigs,
  CreateAcls) sent to a broker, forwarded inside an ENVELOPE to the active controller
  (``ForwardingManager``): the controller authorizes the inner request (StandardAuthorizer
  audit line) and logs it with ``isForwarded:true`` and the client's header and principal
  (``RequestChannel``, ``EnvelopeUtils``); the broker logs the client's request when the
  answer comes back. Some forwards time out (REQUEST_TIMED_OUT, no controller line: an
  unpaired broker line); with two or more controllers some envelopes reach a stale controller
  first (ENVELOPE line with NOT_CONTROLLER, then the retry to the active one).
* A principal without CLUSTER_ACTION that sends ENVELOPEs to the controller itself
  (``ControllerApis.handleEnvelopeRequest``: CLUSTER_AUTHORIZATION_FAILED and a Denied audit
  line).
* StandardAuthorizer start-up per KRaft node (``set super.users=..., default result=...`` then
  ``Completed initial ACL load process.``, endpoints READY around it): the last KRaft broker
  lists its client listener ``INTERNAL`` in ``early.start.listeners`` and answers requests on
  it before the ACLs are loaded (``AuthorizerNotReadyException``, logged by
  ``KafkaApis.handle``); the active controller runs with a super user (``User:legacy-admin``)
  its config file no longer lists (the file was edited, the node not restarted), and that
  principal keeps using it. Team admins that touch topics outside their prefix are denied
  (``DefaultDeny``).

Only KRaft brokers (``process.roles`` names ``broker``) take part; the everyday decisions of
clients (``DefaultAllow``, denial bursts) belong to the authorizer area.

Also holds the helpers the three areas of brief F share (finding ids, node addresses and the
time-ordered merge of line batches); request-log rendering, connection ids and version
comparisons are in ``shared``.
"""

from __future__ import annotations

import base64
import heapq
import ipaddress
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jobs.simulator.base import LogLine, Node, Truth, World
from jobs.simulator.shared import (
    REQUEST_LOGGER,
    Conn,
    broker_ip,
    connection_id,
    finding_id,
    json_request_message,
    request_header,
)

AUTHORIZER_LOGGER = "kafka.authorizer.logger"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
STANDARD_AUTHORIZER_DATA = "org.apache.kafka.metadata.authorizer.StandardAuthorizerData"
ENDPOINT_READY_LOGGER = "org.apache.kafka.server.network.EndpointReadyFutures"
KAFKA_APIS_LOGGER = "kafka.server.KafkaApis"
CLIENT_LISTENER = "EXTERNAL"
INTERNAL_LISTENER = "INTERNAL"
CONTROLLER_LISTENER = "CONTROLLER"
#: Principal the brokers use on the controller listener.
BROKER_PRINCIPAL = "User:kafka-broker"
KIP_590, KIP_801 = "KIP-590", "KIP-801"

# --------------------------------------------------------------------------------------------
# Helpers shared by the areas of this brief (tokens, forwarding, connect).
# --------------------------------------------------------------------------------------------


def is_kraft(world: World) -> bool:
    """A world with controller nodes runs in KRaft mode; without, in ZooKeeper mode."""
    return bool(world.controllers)


def node_ip(world: World, node: Node) -> str:
    """A stable private address per node: brokers 10.0.0.<id + 1> (as the auth and request
    areas print them), controllers 10.0.2.x, Connect workers 10.0.3.x (x = 1-based position
    in its list)."""
    if node.role == "broker":
        return broker_ip(node.node_id)
    groups = ((world.controllers, 2), (world.connect_workers, 3))
    for nodes, octet in groups:
        for i, candidate in enumerate(nodes):
            if candidate.name == node.name:
                return f"10.0.{octet}.{i + 1}"
    return "10.0.9.1"


def kraft_brokers(world: World) -> list[Node]:
    """Brokers whose ``process.roles`` names ``broker`` (KRaft brokers, 3.3+ in this world);
    empty without controllers."""
    if not is_kraft(world):
        return []
    return [b for b in world.brokers if "broker" in b.properties.get("process.roles", "")]


@dataclass
class FindingGroup:
    """The supporting events of one finding: (time, tag, node id) each."""

    times: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)
    count: int = 0


class Findings:
    """Collects a rule's supporting events per (rule, subject, discriminator) and writes the
    finding rows to the truth (``schemas.findings`` columns, times in epoch ms)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str, str, str, str, str], FindingGroup] = defaultdict(
            FindingGroup
        )
        self.node_ids: dict[tuple[str, str, str, str, str, str], str | None] = {}

    def add(  # noqa: PLR0917
        self,
        rule: tuple[str, str, str, str],
        subject: str,
        discriminator: str,
        ts_ms: int,
        tag: str | None,
        node_id: str | None,
        *,
        counts: bool = True,
    ) -> None:
        """One supporting line. ``rule`` = (rule_id, kip, severity, subject_type);
        ``counts`` False = evidence that does not add to ``count``."""
        key = (*rule, subject, discriminator)
        group = self.groups[key]
        group.times.append(ts_ms)
        if tag is not None:
            group.tags.append(tag)
        if node_id is not None:
            group.nodes.add(node_id)
        if counts:
            group.count += 1

    def emit(self, truth: Truth, node_of: dict[tuple[str, ...], str | None] | None = None) -> None:
        """Write every group as a finding row. ``node_id``: the only node of the group, else
        the one ``node_of`` names for the key, else the smallest."""
        for key, group in sorted(self.groups.items()):
            rule_id, kip, severity, subject_type, subject, discriminator = key
            if node_of is not None and key in node_of:
                node = node_of[key]
            else:
                node = min(group.nodes) if group.nodes else None
            truth.finding(
                {
                    "finding_id": finding_id(rule_id, subject_type, subject, discriminator),
                    "rule_id": rule_id,
                    "kip": kip,
                    "severity": severity,
                    "subject_type": subject_type,
                    "subject": subject,
                    "discriminator": discriminator,
                    "node_id": node,
                    "first_seen_ts": min(group.times),
                    "last_seen_ts": max(group.times),
                    "count": group.count,
                    "evidence_tags": sorted(group.tags),
                }
            )


def ordered(batches: Iterable[tuple[int, list[LogLine]]]) -> Iterator[LogLine]:
    """Merge line batches into one time-ordered stream.

    ``batches`` come in non-decreasing start time; every line of a batch has ``ts_ms`` >= its
    start. Lines wait in a heap until no later batch can hold an earlier line, so memory is
    bounded by the overlap of batches, not by the area's length.
    """
    heap: list[tuple[int, int, LogLine]] = []
    seq = 0
    for start, lines in batches:
        while heap and heap[0][0] <= start:
            yield heapq.heappop(heap)[2]
        for line in lines:
            if line.ts_ms < start:
                raise ValueError(f"line at {line.ts_ms} precedes its batch start {start}")
            heapq.heappush(heap, (line.ts_ms, seq, line))
            seq += 1
    while heap:
        yield heapq.heappop(heap)[2]


def poisson_times(rng: random.Random, start_ms: int, end_ms: int, per_hour: float) -> Iterator[int]:
    """Event times of a Poisson process with ``per_hour`` events per hour in [start, end)."""
    if per_hour <= 0:
        return
    t = float(start_ms)
    while True:
        t += rng.expovariate(per_hour / 3_600_000.0)
        if t >= end_ms:
            return
        yield int(t)


def append_list_property(props: dict[str, str], key: str, values: Iterable[str], sep: str) -> None:
    """Add ``values`` to a separated list property, keeping what is there (other areas may
    have set it) and each value once."""
    current = [v.strip() for v in props.get(key, "").split(sep) if v.strip()]
    for value in values:
        if value not in current:
            current.append(value)
    props[key] = sep.join(current)


def principal_data(principal: str, token_authenticated: bool = False) -> str:
    """base64 of ``DefaultPrincipalData`` v0 (int16 version, compact strings type and name,
    bool tokenAuthenticated, empty tagged fields), as an envelope's ``requestPrincipal``."""
    ptype, name = principal.split(":", 1)

    def compact_string(text: str) -> bytes:
        raw = text.encode("utf-8")
        n = len(raw) + 1
        varint = bytearray()
        while n >= 0x80:
            varint.append((n & 0x7F) | 0x80)
            n >>= 7
        varint.append(n)
        return bytes(varint) + raw

    data = b"\x00\x00" + compact_string(ptype) + compact_string(name)
    data += (b"\x01" if token_authenticated else b"\x00") + b"\x00"
    return base64.b64encode(data).decode("ascii")


def address_bytes(ip: str) -> str:
    """base64 of ``InetAddress.getAddress()`` (an envelope's ``clientHostAddress``)."""
    return base64.b64encode(ipaddress.ip_address(ip).packed).decode("ascii")


def decision_message(  # noqa: PLR0917
    principal: str,
    allowed: bool,
    operation: str,
    host: str,
    resource: str,
    api_name: str,
    rule: str,
) -> str:
    """A StandardAuthorizer audit line (``StandardAuthorizerData.buildAuditMessage``, 3.3+):
    ``resource`` is ``Type:PATTERN:name``, ``api_name`` the ApiKeys message name."""
    result = "Allowed" if allowed else "Denied"
    return (
        f"Principal = {principal} is {result} operation = {operation} from host = {host} "
        f"on resource = {resource} for request = {api_name} with resourceRefCount = 1 "
        f"based on rule {rule}"
    )


def resource_key(resource: str) -> str:
    """The findings' resource discriminator: ``TOPIC:LITERAL:name`` from ``Topic:LITERAL:name``
    (the resource type as Kafka's enum name)."""
    rtype, rest = resource.split(":", 1)
    enum = "".join(("_" + ch if ch.isupper() and i else ch) for i, ch in enumerate(rtype)).upper()
    return f"{enum}:{rest}"


# --------------------------------------------------------------------------------------------
# The forwarding / authorizer area.
# --------------------------------------------------------------------------------------------

#: API -> (api key, version, message name, authorizer operation, resource type).
ADMIN_APIS: dict[str, tuple[int, int, str, str, str]] = {
    "CREATE_TOPICS": (19, 7, "CreateTopics", "CREATE", "Topic"),
    "DELETE_TOPICS": (20, 6, "DeleteTopics", "DELETE", "Topic"),
    "CREATE_PARTITIONS": (37, 3, "CreatePartitions", "ALTER", "Topic"),
    "INCREMENTAL_ALTER_CONFIGS": (44, 1, "IncrementalAlterConfigs", "ALTER_CONFIGS", "Topic"),
    "CREATE_ACLS": (30, 3, "CreateAcls", "ALTER", "Cluster"),
}
SUPER_ADMIN = "User:platform-admin"
LEGACY_ADMIN = "User:legacy-admin"
TEAM_ADMINS = ("User:team-a-admin", "User:team-b-admin")
ROGUE = "User:mallory"
CLUSTER_RESOURCE = "Cluster:LITERAL:kafka-cluster"
FORWARDING_CORRELATION_BASE = 700_000

_RULES = {
    "envelope": ("forwarding.envelope_cluster_action_denied", KIP_590, "high", "principal"),
    "super": ("authorizer.super_user_not_in_config", KIP_801, "high", "principal"),
    "default_allow": ("authorizer.default_allow", KIP_801, "medium", "principal"),
    "burst": ("authorizer.denial_burst", KIP_801, "medium", "principal"),
    "early": ("authorizer.early_start_client_listener", KIP_801, "low", "listener"),
    "not_ready": ("authorizer.not_ready_request_failures", KIP_801, "low", "principal"),
}
DENIAL_BURST_THRESHOLD = 10
DENIAL_BURST_WINDOW_MS = 60_000


def _team_prefix(principal: str) -> str:
    return principal.split(":", 1)[1].replace("-admin", "-")


#: A request body and its success response, as the generated JSON converters print them.
_Exchange = tuple[dict[str, Any], dict[str, Any]]


def _create_topics(topic: str) -> _Exchange:
    request = {
        "topics": [
            {
                "name": topic,
                "numPartitions": 6,
                "replicationFactor": 3,
                "assignments": [],
                "configs": [],
            }
        ],
        "timeoutMs": 30000,
        "validateOnly": False,
    }
    response = {
        "throttleTimeMs": 0,
        "topics": [
            {
                "name": topic,
                "topicId": "AAAAAAAAAAAAAAAAAAAAAA",
                "errorCode": 0,
                "errorMessage": None,
            }
        ],
    }
    return request, response


def _delete_topics(topic: str) -> _Exchange:
    return (
        {"topics": [{"name": topic, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}], "timeoutMs": 30000},
        {"throttleTimeMs": 0, "responses": [{"name": topic, "errorCode": 0}]},
    )


def _create_partitions(topic: str) -> _Exchange:
    return (
        {
            "topics": [{"name": topic, "count": 12, "assignments": None}],
            "timeoutMs": 30000,
            "validateOnly": False,
        },
        {
            "throttleTimeMs": 0,
            "results": [{"name": topic, "errorCode": 0, "errorMessage": None}],
        },
    )


def _incremental_alter_configs(topic: str) -> _Exchange:
    request = {
        "resources": [
            {
                "resourceType": 2,
                "resourceName": topic,
                "configs": [{"name": "retention.ms", "configOperation": 0, "value": "604800000"}],
            }
        ],
        "validateOnly": False,
    }
    response = {
        "throttleTimeMs": 0,
        "responses": [
            {"errorCode": 0, "errorMessage": None, "resourceType": 2, "resourceName": topic}
        ],
    }
    return request, response


def _create_acls(topic: str) -> _Exchange:
    return (
        {
            "creations": [
                {
                    "resourceType": 2,
                    "resourceName": topic,
                    "resourcePatternType": 3,
                    "principal": "User:team-a-app",
                    "host": "*",
                    "operation": 3,
                    "permissionType": 3,
                }
            ]
        },
        {"throttleTimeMs": 0, "results": [{"errorCode": 0, "errorMessage": None}]},
    )


_API_BODIES = {
    "CREATE_TOPICS": _create_topics,
    "DELETE_TOPICS": _delete_topics,
    "CREATE_PARTITIONS": _create_partitions,
    "INCREMENTAL_ALTER_CONFIGS": _incremental_alter_configs,
    "CREATE_ACLS": _create_acls,
}


def _api_body(api: str, topic: str) -> _Exchange:
    """A small request body of ``api`` (an ``ADMIN_APIS`` key; CreateAcls for any other) on
    ``topic`` and its success response, as the generated converters print them."""
    return _API_BODIES.get(api, _create_acls)(topic)


def _with_error(response: dict[str, Any], code: int) -> dict[str, Any]:
    """The response with every nested errorCode set to ``code``."""
    out: dict[str, Any] = {}
    for key, value in response.items():
        if isinstance(value, list):
            out[key] = [
                ({**v, "errorCode": code} if isinstance(v, dict) and "errorCode" in v else v)
                for v in value
            ]
        else:
            out[key] = value
    return out


class ForwardingArea:
    """KIP-590 forwarding and KIP-801 StandardAuthorizer lines of a KRaft world."""

    name = "forwarding"

    def __init__(self) -> None:
        self._tag_seq = 0

    # -- configuration ------------------------------------------------------------------------

    def configure(self, world: World) -> None:
        """KRaft nodes (the KRaft brokers and the controllers): ``controller.listener.names``
        and ``authorizer.class.name`` (StandardAuthorizer) unless set, ``super.users``
        appended; the last KRaft broker lists its client listener ``INTERNAL`` in
        ``early.start.listeners``. No-op in ZooKeeper mode (no controllers)."""
        if not is_kraft(world):
            return
        for node in [*kraft_brokers(world), *world.controllers]:
            props = node.properties
            props.setdefault("controller.listener.names", CONTROLLER_LISTENER)
            props.setdefault("authorizer.class.name", STANDARD_AUTHORIZER)
            append_list_property(props, "super.users", [SUPER_ADMIN, BROKER_PRINCIPAL], ";")
        brokers = kraft_brokers(world)
        if brokers:
            brokers[-1].properties["early.start.listeners"] = INTERNAL_LISTENER

    # -- lines --------------------------------------------------------------------------------

    def _tag(self, kind: str) -> str:
        self._tag_seq += 1
        return f"fwd:{kind}:{self._tag_seq}"

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every line of the area in time order (empty in ZooKeeper mode); records the
        forwarding and authorization metric events and the ``forwarding.*`` /
        ``authorizer.*`` findings into ``truth``."""
        if not is_kraft(world) or not kraft_brokers(world):
            return
        self._tag_seq = 0
        run = _ForwardingRun(self, world, truth)
        yield from ordered(run.batches())
        run.finish()


@dataclass(frozen=True)
class _AdminRequest:
    """One admin request as the broker received it; ``response`` is the success answer."""

    broker: Node
    principal: str
    api: str
    resource: str
    client_ip: str
    header: dict[str, Any]
    request: dict[str, Any]
    response: dict[str, Any]
    conn: Conn


class _ForwardingRun:
    """One ``lines`` call: the world state, the random stream and the findings."""

    def __init__(self, area: ForwardingArea, world: World, truth: Truth) -> None:
        self.area, self.world, self.truth = area, world, truth
        self.rng = world.rng("forwarding")
        self.findings = Findings()
        self.active = world.controllers[0]
        self.stale = world.controllers[1] if len(world.controllers) >= 2 else None
        self.brokers = kraft_brokers(world)
        self.early_broker = self.brokers[-1]
        self.correlation = FORWARDING_CORRELATION_BASE
        self.conn_index = 0
        self.denials: dict[tuple[str, str], list[tuple[int, str, str]]] = defaultdict(list)

    # small helpers

    def line(  # noqa: PLR0917
        self,
        ts: int,
        node: Node,
        stream: str,
        level: str,
        logger: str,
        message: str,
        kind: str | None = None,
    ) -> LogLine:
        tag = self.area._tag(kind) if kind else None
        return LogLine(ts, node.name, stream, level, logger, message, tag=tag)

    def next_correlation(self) -> int:
        self.correlation += 1
        return self.correlation

    def conn(self, local: tuple[str, int], remote_ip: str, node: Node) -> str:
        self.conn_index += 1
        port = 40000 + self.rng.randrange(20000)
        return connection_id(local, (remote_ip, port), self.conn_index, node.kafka_version)

    def decision(  # noqa: PLR0917
        self,
        ts: int,
        node: Node,
        principal: str,
        allowed: bool,
        operation: str,
        host: str,
        resource: str,
        api_name: str,
        rule: str,
    ) -> LogLine:
        """An audit line plus its authorization metric event (and its denial record)."""
        message = decision_message(principal, allowed, operation, host, resource, api_name, rule)
        level = "DEBUG" if allowed else "INFO"
        out = self.line(ts, node, "authorizer", level, AUTHORIZER_LOGGER, message, "authz")
        name = (
            "authorization-allowed-rate-per-minute"
            if allowed
            else ("authorization-denied-rate-per-minute")
        )
        self.truth.metric_event(name, ts, node.node_id, principal=principal)
        if not allowed:
            assert out.tag is not None
            self.denials[(principal, resource_key(resource))].append((ts, out.tag, node.node_id))
        return out

    # batches

    def batches(self) -> Iterator[tuple[int, list[LogLine]]]:
        world = self.world
        events: list[tuple[int, int, str]] = []
        margin = 5 * 60_000
        lo, hi = world.start_ms + margin, world.end_ms - margin
        hours = max((world.end_ms - world.start_ms) / 3_600_000, 0.0)
        rate = 4.0 * len(self.brokers)
        for t in poisson_times(self.rng, lo, hi, rate):
            events.append((t, 0, "admin"))
        if hi > lo:
            span = hi - lo
            events.append((lo + int(span * 0.4), 2, "rogue"))
            legacy = max(1, min(4, int(hours)))
            for i in range(legacy):
                events.append((lo + int(span * (i + 0.5) / legacy) + 1234, 4, "legacy"))
        events.sort()
        yield from self.startup()
        for t, _, kind in events:
            lines = getattr(self, f"_{kind}")(t)
            yield t, lines

    def startup(self) -> Iterator[tuple[int, list[LogLine]]]:
        """The StandardAuthorizer start-up of every KRaft node at the world's start."""
        world = self.world
        for i, node in enumerate([*world.controllers, *self.brokers]):
            t0 = world.start_ms + 500 + 300 * i
            yield t0, self._node_startup(node, t0)

    def _running_super_users(self, node: Node) -> list[str]:
        configured = [v for v in node.properties.get("super.users", "").split(";") if v.strip()]
        if node is self.active:
            configured.append(LEGACY_ADMIN)
        return sorted(set(configured))

    def _node_startup(self, node: Node, t0: int) -> list[LogLine]:
        allow = node.properties.get("allow.everyone.if.no.acl.found", "false").lower() == "true"
        prefix = f"[StandardAuthorizer {node.node_id}] "
        supers = ",".join(self._running_super_users(node))
        result = "ALLOWED" if allow else "DENIED"
        out = [
            self.line(
                t0,
                node,
                "server",
                "INFO",
                STANDARD_AUTHORIZER_DATA,
                f"{prefix}set super.users={supers}, default result={result}",
            )
        ]

        def ready(ts: int, listener: str, kind: str | None = None) -> LogLine:
            text = f"authorizerStart completed for endpoint {listener}. Endpoint is now READY."
            return self.line(ts, node, "server", "INFO", ENDPOINT_READY_LOGGER, text, kind)

        loaded_at = t0 + 2500 + self.rng.randrange(1500)
        if node.role == "controller":
            out.append(ready(t0 + 100, CONTROLLER_LISTENER))
        if node is self.early_broker:
            early = ready(t0 + 150, INTERNAL_LISTENER, "early")
            out.append(early)
            self.findings.add(
                _RULES["early"],
                INTERNAL_LISTENER,
                node.node_id,
                early.ts_ms,
                early.tag,
                node.node_id,
            )
            for j, principal in enumerate(
                ("User:replicator", "User:replicator", "User:mirror-maker")
            ):
                ts = t0 + 600 + 400 * j
                out.append(self._not_ready_failure(node, ts, principal, j))
        out.append(
            self.line(
                loaded_at,
                node,
                "server",
                "INFO",
                STANDARD_AUTHORIZER_DATA,
                f"{prefix}Completed initial ACL load process.",
            )
        )
        if node.role == "broker":
            out.append(ready(loaded_at + 50, CLIENT_LISTENER))
            if node is not self.early_broker:
                out.append(ready(loaded_at + 60, INTERNAL_LISTENER))
        return out

    def _not_ready_failure(self, node: Node, ts: int, principal: str, j: int) -> LogLine:
        """``KafkaApis.handle``'s ERROR for an ``AuthorizerNotReadyException`` (a METADATA
        request on the early listener before the ACLs are loaded)."""
        client_ip = f"10.40.0.{11 + j}"
        correlation = 10 + j
        head = (
            f"RequestHeader(apiKey=METADATA, apiVersion=12, clientId=mm2-{j}, "
            f"correlationId={correlation}, headerVersion=2)"
        )
        conn = self.conn((node_ip(self.world, node), 9092), client_ip, node)
        message = (
            f"[KafkaApi-{node.node_id}] Unexpected error handling request {head} -- "
            "MetadataRequestData(topics=null, allowAutoTopicCreation=true, "
            "includeClusterAuthorizedOperations=false, includeTopicAuthorizedOperations=false) "
            f"with context RequestContext(header={head}, connectionId='{conn}', "
            f"clientAddress=/{client_ip}, principal={principal}, "
            f"listenerName=ListenerName({INTERNAL_LISTENER}), securityProtocol=SASL_PLAINTEXT, "
            "clientInformation=ClientInformation(softwareName=apache-kafka-java, "
            "softwareVersion=3.9.0), fromPrivilegedListener=false, "
            "principalSerde=Optional[org.apache.kafka.common.security.authenticator."
            "DefaultKafkaPrincipalBuilder@5f2a8c41])\n"
            "org.apache.kafka.common.errors.AuthorizerNotReadyException\n"
            "\tat org.apache.kafka.metadata.authorizer.StandardAuthorizerData.authorize"
            "(StandardAuthorizerData.java:525)\n"
            "\tat kafka.server.KafkaApis.handle(KafkaApis.scala:256)"
        )
        out = self.line(ts, node, "server", "ERROR", KAFKA_APIS_LOGGER, message, "notready")
        self.findings.add(_RULES["not_ready"], principal, node.node_id, ts, out.tag, node.node_id)
        return out

    # one event each

    def _admin(self, t: int) -> list[LogLine]:
        rng = self.rng
        broker = rng.choice(self.brokers)
        principal = rng.choices([SUPER_ADMIN, *TEAM_ADMINS], weights=[4, 3, 2])[0]
        api = rng.choice(list(ADMIN_APIS))
        if principal != SUPER_ADMIN and api == "CREATE_ACLS":
            api = "CREATE_TOPICS"
        outside = principal != SUPER_ADMIN and rng.random() < 0.1
        timed_out = rng.random() < 0.03
        not_controller = self.stale is not None and rng.random() < 0.04
        return self._forward(t, broker, principal, api, outside, timed_out, not_controller)

    def _legacy(self, t: int) -> list[LogLine]:
        broker = self.rng.choice(self.brokers)
        return self._forward(t, broker, LEGACY_ADMIN, "CREATE_TOPICS", False, False, False)

    def _forward(  # noqa: PLR0917
        self,
        t: int,
        broker: Node,
        principal: str,
        api: str,
        outside: bool,
        timed_out: bool,
        not_controller: bool,
    ) -> list[LogLine]:
        """An admin request to ``broker``, forwarded to the active controller: first, with
        ``not_controller``, an ENVELOPE to the stale controller; then the broker's
        REQUEST_TIMED_OUT line alone (``timed_out``), or the controller's decision and request
        line and the broker's line when the answer is back. ``outside``: a team admin's topic
        outside its prefix (denied)."""
        request = self._admin_request(broker, principal, api, self._topic(principal, outside))
        out: list[LogLine] = []
        ts = t + 1
        if not_controller and self.stale is not None:
            out.append(
                self._envelope_not_controller(ts, broker, self.stale, principal, request.client_ip)
            )
            ts += 40 + self.rng.randrange(60)
        if timed_out:
            out.append(self._timed_out(t, request))
            return out
        d_ts = ts + 1 + self.rng.randrange(3)
        decision, allowed = self._authorize(d_ts, request, outside)
        out.append(decision)
        out += self._answered(t, d_ts, request, allowed)
        return out

    def _topic(self, principal: str, outside: bool) -> str:
        """The topic of an admin request: a team admin's under its prefix (``shared-`` when
        ``outside``), anyone else's among the platform topics."""
        rng = self.rng
        if principal in TEAM_ADMINS:
            prefix = _team_prefix(principal)
            base = rng.choice(["orders", "events", "audit"])
            return f"{'shared-' if outside else prefix}{base}-{rng.randrange(100)}"
        return f"{rng.choice(['payments', 'clicks', 'ledger'])}-{rng.randrange(100)}"

    def _admin_request(self, broker: Node, principal: str, api: str, topic: str) -> _AdminRequest:
        """The request as the broker receives it from the principal's admin client (one
        address per principal), over a new connection."""
        key, version, _, _, rtype = ADMIN_APIS[api]
        name = principal.split(":", 1)[1]
        digest = sum(map(ord, name))
        client_ip = f"10.50.{1 + digest % 3}.{10 + digest % 200}"
        header = request_header(key, version, self.next_correlation(), f"adminclient-{name}", api)
        request, response = _api_body(api, topic)
        conn = Conn(
            self.conn((node_ip(self.world, broker), 9093), client_ip, broker),
            principal,
            CLIENT_LISTENER,
            "SASL_SSL",
            ("apache-kafka-java", "3.7.1"),
        )
        resource = CLUSTER_RESOURCE if rtype == "Cluster" else f"Topic:LITERAL:{topic}"
        return _AdminRequest(broker, principal, api, resource, client_ip, header, request,
                             response, conn)  # fmt: skip

    def _timed_out(self, t: int, request: _AdminRequest) -> LogLine:
        """The broker's line of a forward that timed out (REQUEST_TIMED_OUT after 30 s)."""
        failed = _with_error(request.response, 7)  # REQUEST_TIMED_OUT
        b_ts = t + 30_000 + self.rng.randrange(50)
        msg = json_request_message(
            request.header,
            request.request,
            failed,
            request.conn,
            total_ms=30_000.0 + 3,
            remote_ms=30_000.0,
        )
        line = self.line(b_ts, request.broker, "request", "DEBUG", REQUEST_LOGGER, msg, "broker")
        self._forwarded_metric(b_ts, request)
        return line

    def _authorize(self, d_ts: int, request: _AdminRequest, outside: bool) -> tuple[LogLine, bool]:
        """The active controller's decision on the inner request (super users allowed, a
        team admin by its prefixed ACL unless ``outside``) and whether it allowed it."""
        _, _, api_name, operation, _ = ADMIN_APIS[request.api]
        principal, controller = request.principal, self.active
        if principal in (SUPER_ADMIN, LEGACY_ADMIN):
            allowed, rule = True, "SuperUser"
        elif outside:
            allowed, rule = False, "DefaultDeny"
        else:
            prefix = _team_prefix(principal)
            allowed = True
            rule = (
                f"MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName={prefix}, "
                f"patternType=PREFIXED, principal={principal}, host=*, operation=ALL, "
                "permissionType=ALLOW))"
            )
        decision = self.decision(
            d_ts,
            controller,
            principal,
            allowed,
            operation,
            request.client_ip,
            request.resource,
            api_name,
            rule,
        )
        if principal == LEGACY_ADMIN:
            node_id = controller.node_id
            self.findings.add(_RULES["super"], principal, node_id, d_ts, decision.tag, node_id)
        return decision, allowed

    def _answered(self, t: int, d_ts: int, request: _AdminRequest, allowed: bool) -> list[LogLine]:
        """The controller's line of the forwarded request (``isForwarded``, the client's
        header and principal) and the broker's once the answer is back; a denial answers
        TOPIC_AUTHORIZATION_FAILED or CLUSTER_AUTHORIZATION_FAILED."""
        rng, world, controller = self.rng, self.world, self.active
        response = request.response
        if not allowed:
            rtype = ADMIN_APIS[request.api][4]
            response = _with_error(response, 29 if rtype == "Topic" else 31)
        c_total = 2.0 + rng.random() * 15
        c_ts = d_ts + int(c_total)
        b_conn_str = self.conn((node_ip(world, controller), 9094), node_ip(world, request.broker),
                               controller)  # fmt: skip
        c_conn = Conn(b_conn_str, request.principal, CONTROLLER_LISTENER, "SASL_PLAINTEXT",
                      ("unknown", "unknown"))  # fmt: skip
        c_msg = json_request_message(request.header, request.request, response, c_conn,
                                     forwarded=True, total_ms=c_total)  # fmt: skip
        out = [self.line(c_ts, controller, "request", "DEBUG", REQUEST_LOGGER, c_msg, "ctrl")]
        b_ts = c_ts + 1 + rng.randrange(4)
        b_total = float(b_ts - t) + rng.random()
        b_msg = json_request_message(request.header, request.request, response, request.conn,
                                     total_ms=b_total, remote_ms=b_total - 1.0)  # fmt: skip
        out.append(
            self.line(b_ts, request.broker, "request", "DEBUG", REQUEST_LOGGER, b_msg, "broker")
        )
        self._forwarded_metric(b_ts, request)
        return out

    def _forwarded_metric(self, ts: int, request: _AdminRequest) -> None:
        """One ``forwarded-requests`` event on the broker, when it logs the answer."""
        self.truth.metric_event(
            "forwarded-requests",
            ts,
            request.broker.node_id,
            listener=CLIENT_LISTENER,
            principal=request.principal,
            api_key_name=request.api,
        )

    def _envelope_line(  # noqa: PLR0917
        self,
        ts: int,
        controller: Node,
        sender: Conn,
        claimed: str,
        client_ip: str,
        error: int,
        client_id: str,
    ) -> LogLine:
        data = base64.b64encode(self.rng.randbytes(48)).decode("ascii")
        header = request_header(58, 0, self.next_correlation(), client_id, "ENVELOPE")
        request = {
            "requestData": data,
            "requestPrincipal": principal_data(claimed),
            "clientHostAddress": address_bytes(client_ip),
        }
        response = {"responseData": None, "errorCode": error}
        message = json_request_message(header, request, response, sender, total_ms=0.4)
        out = self.line(ts, controller, "request", "DEBUG", REQUEST_LOGGER, message, "envelope")
        self.truth.metric_event(
            "forwarding-failures",
            ts,
            controller.node_id,
            listener=sender.listener,
            principal=claimed,
            api_key_name="ENVELOPE",
        )
        return out

    def _envelope_not_controller(
        self, ts: int, broker: Node, stale: Node, claimed: str, client_ip: str
    ) -> LogLine:
        conn = self.conn((node_ip(self.world, stale), 9094), node_ip(self.world, broker), stale)
        sender = Conn(
            conn,
            BROKER_PRINCIPAL,
            CONTROLLER_LISTENER,
            "SASL_PLAINTEXT",
            ("apache-kafka-java", broker.kafka_version),
        )
        return self._envelope_line(ts, stale, sender, claimed, client_ip, 41, broker.node_id)

    def _rogue(self, t: int) -> list[LogLine]:
        """A non-broker principal sends ENVELOPEs straight to the active controller."""
        controller = self.active
        rogue_ip = "10.66.6.6"
        out: list[LogLine] = []
        conn = self.conn((node_ip(self.world, controller), 9094), rogue_ip, controller)
        sender = Conn(
            conn, ROGUE, CONTROLLER_LISTENER, "SASL_PLAINTEXT", ("apache-kafka-java", "3.9.0")
        )
        for i in range(3):
            ts = t + 2000 * i
            d = self.decision(
                ts,
                controller,
                ROGUE,
                False,
                "CLUSTER_ACTION",
                rogue_ip,
                CLUSTER_RESOURCE,
                "Envelope",
                "DefaultDeny",
            )
            e = self._envelope_line(
                ts + 1, controller, sender, SUPER_ADMIN, "10.0.9.9", 31, "forger"
            )
            out += [d, e]
            rule = _RULES["envelope"]
            self.findings.add(rule, ROGUE, controller.node_id, d.ts_ms, d.tag, controller.node_id)
            self.findings.add(
                rule, ROGUE, controller.node_id, e.ts_ms, e.tag, controller.node_id, counts=False
            )
        return out

    # the end

    def _burst_findings(self) -> None:
        """``authorizer.denial_burst`` by its definition: a denial belongs to a burst when a
        window of DENIAL_BURST_WINDOW_MS holding it holds DENIAL_BURST_THRESHOLD or more
        denials of the same principal and resource."""
        for (principal, resource), rows in self.denials.items():
            rows.sort()
            times = [r[0] for r in rows]
            for ts, tag, node_id in rows:
                lo = ts - DENIAL_BURST_WINDOW_MS
                member = any(
                    sum(1 for x in times if start <= x <= start + DENIAL_BURST_WINDOW_MS)
                    >= DENIAL_BURST_THRESHOLD
                    for start in times
                    if lo <= start <= ts
                )
                if member:
                    self.findings.add(_RULES["burst"], principal, resource, ts, tag, node_id)

    def finish(self) -> None:
        self._burst_findings()
        node_of: dict[tuple[str, ...], str | None] = {}
        for key, group in self.findings.groups.items():
            if key[0] in ("authorizer.default_allow", "authorizer.denial_burst"):
                node_of[key] = next(iter(group.nodes)) if len(group.nodes) == 1 else None
        self.findings.emit(self.truth, node_of)
