"""Area 'authorizer': ``kafka.authorizer.logger`` decisions, allowed (DEBUG) and denied (INFO).

Formats (kafka-log-formats.md section 3): ``AclAuthorizer.logAuditMessage`` (2.4-3.9, ZooKeeper
brokers here: before 3.3) ``Principal = P is Allowed Operation = Read from host = H on resource
= Topic:LITERAL:t for request = Fetch with resourceRefCount = 1``, and the KRaft
``StandardAuthorizerData`` (3.3+) line with ``operation = READ`` and ``based on rule R``.
Rules (``StandardAuthorizerData.authorize``): super users first (``SuperUser``; ``super.users``
= ``User:admin`` on every broker), then ACLs (``MatchingAcl``: each client may read and write
the shared topics; ``payments`` is denied to every third client by a DENY ACL), else
``allow.everyone.if.no.acl.found`` (true on KRaft brokers: ``DefaultAllow`` for the topic
``scratch``, which has no ACL; false on AclAuthorizer brokers: denied).

Truth: every decision line is one ``authorization-allowed|denied-rate-per-minute`` event
(``AuthorizerMetrics``) per broker and principal; the findings ``authorizer.default_allow``
(per principal and resource) and ``authorizer.denial_burst`` (``[rules.authorizer]`` defaults:
10 denials within 60 s). Ordinary denials of one principal on one resource are kept at least
7 s apart, so only the prober ``User:scanner`` (12 denials, 2 s apart, once an hour) bursts.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field

from jobs.simulator.base import Client, LogLine, Node, Truth, World
from jobs.simulator.shared import version_tuple
from jobs.simulator.world import SUPER_USER

AUTHORIZER_LOGGER = "kafka.authorizer.logger"
KIP = "KIP-801"
SHARE = 0.05
TOPICS: tuple[str, ...] = ("orders", "payments", "clicks", "audit-events")
NO_ACL_TOPIC = "scratch"
#: Share of the decisions on the ACL-less topic.
NO_ACL_SHARE = 0.05
PROBER = "User:scanner"
PROBER_HOST = "10.9.9.66"
PROBER_TOPIC = "payments"
BURST_SIZE = 12
BURST_GAP_MS = 2_000
BURST_THRESHOLD = 10
BURST_WINDOW_MS = 60_000
#: Ordinary denials of one principal on one resource are at least this far apart (ms), so
#: that no BURST_WINDOW_MS window holds BURST_THRESHOLD of them.
MIN_DENIAL_GAP_MS = 7_000
#: request name, Standard operation, AclAuthorizer operation.
ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Fetch", "READ", "Read"),
    ("Produce", "WRITE", "Write"),
    ("Metadata", "DESCRIBE", "Describe"),
)


@dataclass
class _Group:
    """A finding's facts, accumulated per (principal, resource)."""

    nodes: set[str] = field(default_factory=set)
    first_ms: int = 0
    last_ms: int = 0
    count: int = 0
    tags: list[str] = field(default_factory=list)
    operations: set[str] = field(default_factory=set)

    def add(self, ts: int, node: str, tag: str, operation: str) -> None:
        if self.count == 0:
            self.first_ms = ts
        self.last_ms = ts
        self.count += 1
        self.nodes.add(node)
        self.tags.append(tag)
        self.operations.add(operation)


def _line(broker: Node, principal: str, allowed: bool, *, action: tuple[str, str, str],
          host: str, topic: str, rule: str | None) -> tuple[str, str]:  # fmt: skip
    """(level, message) of one decision in the broker's authorizer's format."""
    request, standard_op, acl_op = action
    result = "Allowed" if allowed else "Denied"
    level = "DEBUG" if allowed else "INFO"
    if rule is None:
        return level, (
            f"Principal = {principal} is {result} Operation = {acl_op} from host = {host} on "
            f"resource = Topic:LITERAL:{topic} for request = {request} with resourceRefCount = 1"
        )
    return level, (
        f"Principal = {principal} is {result} operation = {standard_op} from host = {host} on "
        f"resource = Topic:LITERAL:{topic} for request = {request} with resourceRefCount = 1 "
        f"based on rule {rule}"
    )


def _acl(principal: str, topic: str, operation: str, permission: str) -> str:
    return (
        f"MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName={topic}, "
        f"patternType=LITERAL, principal={principal}, host=*, operation={operation}, "
        f"permissionType={permission}))"
    )


class AuthorizerArea:
    """Authorizer decisions, a DefaultAllow topic and a prober's denial bursts."""

    name = "authorizer"

    def configure(self, world: World) -> None:
        """Nothing to add: ``super.users`` and ``allow.everyone.if.no.acl.found`` come from
        ``world.broker_properties``."""

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every decision line, in time order; findings are reported at the end."""
        rng = world.rng(self.name)
        default_allow: dict[tuple[str, str], _Group] = {}
        bursts = _Group()
        last_denial: dict[tuple[str, str], int] = {}
        count = max(1, int(world.lines_target * SHARE))
        step = (world.end_ms - world.start_ms) / count
        probes = self._probes(world)
        serial = 0
        for i in range(count):
            ts = world.start_ms + int(i * step)
            while probes and probes[0][0] <= ts:
                probe_ts, broker = heapq.heappop(probes)
                serial += 1
                probe_tag = f"authorizer:burst:{serial}"
                bursts.add(probe_ts, broker.node_id, probe_tag, "READ")
                yield self._probe(probe_ts, broker, truth, probe_tag)
            broker = world.brokers[rng.randrange(len(world.brokers))]
            c = rng.randrange(len(world.clients))
            client = world.clients[c]
            action = ACTIONS[rng.randrange(len(ACTIONS))]
            topic = (
                NO_ACL_TOPIC if rng.random() < NO_ACL_SHARE else TOPICS[rng.randrange(len(TOPICS))]
            )
            allowed, rule = self._rule(broker, client, c, topic, action)
            if not allowed:
                key = (client.principal, topic)
                if ts - last_denial.get(key, -MIN_DENIAL_GAP_MS) < MIN_DENIAL_GAP_MS:
                    continue  # keep ordinary denials from forming a burst
                last_denial[key] = ts
            tag: str | None = None
            if rule == "DefaultAllow":
                serial += 1
                tag = f"authorizer:default_allow:{serial}"
                group = default_allow.setdefault((client.principal, topic), _Group())
                group.add(ts, broker.node_id, tag, action[1])
            yield self._decision(ts, broker, principal=client.principal, host=client.address,
                                 allowed=allowed, action=action, topic=topic, truth=truth,
                                 tag=tag, rule=rule)  # fmt: skip
        while probes:
            probe_ts, broker = heapq.heappop(probes)
            serial += 1
            tag = f"authorizer:burst:{serial}"
            bursts.add(probe_ts, broker.node_id, tag, "READ")
            yield self._probe(probe_ts, broker, truth, tag)
        self._report(truth, default_allow, bursts)

    @staticmethod
    def _probes(world: World) -> list[tuple[int, Node]]:
        """The prober's denials: BURST_SIZE, BURST_GAP_MS apart, at minute 30 of each hour,
        on one broker per hour; a heap by time."""
        probes: list[tuple[int, Node]] = []
        hour = 0
        while True:
            begin = world.start_ms + hour * 3_600_000 + 1_800_000 + 123
            if begin + BURST_SIZE * BURST_GAP_MS > world.end_ms:
                break
            broker = world.brokers[hour % len(world.brokers)]
            probes.extend((begin + k * BURST_GAP_MS, broker) for k in range(BURST_SIZE))
            hour += 1
        heapq.heapify(probes)
        return probes

    @staticmethod
    def _rule(broker: Node, client: Client, c: int, topic: str,
              action: tuple[str, str, str]) -> tuple[bool, str | None]:  # fmt: skip
        """(allowed, StandardAuthorizer rule or None for AclAuthorizer) by Kafka's order."""
        standard = version_tuple(broker.kafka_version) >= (3, 3)
        if client.principal == SUPER_USER:
            return True, "SuperUser" if standard else None
        if topic == NO_ACL_TOPIC:
            return (True, "DefaultAllow") if standard else (False, None)
        denied = topic == "payments" and c % 3 == 1
        if not standard:
            return not denied, None
        permission = "DENY" if denied else "ALLOW"
        return not denied, _acl(client.principal, topic, action[1], permission)

    def _probe(self, ts: int, broker: Node, truth: Truth, tag: str) -> LogLine:
        """One of the prober's denials (no ACL allows it: ``DefaultDeny`` on KRaft)."""
        return self._decision(ts, broker, principal=PROBER, host=PROBER_HOST, allowed=False,
                              action=ACTIONS[0], topic=PROBER_TOPIC, truth=truth,
                              tag=tag)  # fmt: skip

    @staticmethod
    def _decision(ts: int, broker: Node, *, principal: str, host: str, allowed: bool,
                  action: tuple[str, str, str], topic: str, truth: Truth, tag: str | None,
                  rule: str | None = "") -> LogLine:  # fmt: skip
        if rule == "":  # the prober: no ACL allows it
            standard = version_tuple(broker.kafka_version) >= (3, 3)
            rule = "DefaultDeny" if standard else None
        metric = "authorization-allowed" if allowed else "authorization-denied"
        truth.metric_event(f"{metric}-rate-per-minute", ts, broker.node_id, principal=principal)
        level, message = _line(broker, principal, allowed, action=action, host=host,
                               topic=topic, rule=rule)  # fmt: skip
        return LogLine(ts, broker.name, "authorizer", level, AUTHORIZER_LOGGER, message,
                       "data-plane-kafka-request-handler-0", tag)  # fmt: skip

    @staticmethod
    def _report(truth: Truth, default_allow: dict[tuple[str, str], _Group],
                bursts: _Group) -> None:  # fmt: skip
        for (principal, topic), group in sorted(default_allow.items()):
            resource = f"TOPIC:LITERAL:{topic}"
            operations = ", ".join(sorted(group.operations))
            truth.finding(_finding(
                "authorizer.default_allow", severity="medium", subject=principal,
                discriminator=resource, group=group, explanation=
                f"{principal} was allowed {operations} ({group.count} time(s)) on {resource} by "
                "DefaultAllow: no ACL exists for the resource and "
                "allow.everyone.if.no.acl.found=true grants it to everyone",
            ))  # fmt: skip
        if bursts.count:
            resource = f"TOPIC:LITERAL:{PROBER_TOPIC}"
            truth.finding(_finding(
                "authorizer.denial_burst", severity="medium", subject=PROBER,
                discriminator=resource, group=bursts, explanation=
                f"{PROBER} was denied {bursts.count} time(s) on {resource} in bursts of at "
                f"least {BURST_THRESHOLD} within {BURST_WINDOW_MS} ms (peak {BURST_SIZE}): a "
                "misconfigured client or someone probing ACLs",
            ))  # fmt: skip


def _finding(rule_id: str, *, severity: str, subject: str, discriminator: str,
             group: _Group, explanation: str) -> dict[str, object]:  # fmt: skip
    return {
        "rule_id": rule_id,
        "kip": KIP,
        "severity": severity,
        "subject_type": "principal",
        "subject": subject,
        "discriminator": discriminator,
        "node_id": next(iter(group.nodes)) if len(group.nodes) == 1 else None,
        "first_seen_ts": group.first_ms,
        "last_seen_ts": group.last_ms,
        "count": group.count,
        "evidence_tags": group.tags,
        "explanation": explanation,
    }
