"""Simulator area 'connect': KIP-507 internal request signing in a distributed Connect cluster.

The first worker leads the group. Every ``inter.worker.key.ttl.ms`` the leader distributes a
new session key (``DistributedHerder.checkForKeyRotation``: DEBUG ``Existing key has expired.
Distributing new key now.``) and every worker logs ``Session key updated`` when it reads it
from the config topic (``onSessionKeyUpdate``). Followers forward task configurations to the
leader (``POST /connectors/<name>/tasks``, User-Agent ``kafka-connect``, signed with the
current key, ``RestClient``); the leader's Jetty access log records each call
(``RestServer``, 3.1+ layout ``EXTENDED_NCSA_FORMAT + " %{ms}T"``).

Security events provoked:

* Stale keys within the grace: right after a rotation a follower that has not read the new key
  yet gets 403 (``Internal request contained invalid signature.``) and retries after 250 ms,
  500 ms...; Kafka logs DEBUG ``possibly due to expired session key`` while the first attempt
  is less than a minute old (``isPossibleExpiredKeyException``). Expected churn: no finding.
* Beyond the grace: once, a follower whose config-topic consumer lags misses a rotation and
  keeps signing with the old key for about four minutes (backoff doubling to 60 s, KAFKA-14732):
  403s more than a minute into its retries (ERROR ``retrying after backoff.`` with the
  exception), and its late ``Session key updated`` makes two off-schedule intervals.
* Once, the leader's herder thread stalls and a rotation comes ten minutes late: every
  worker's interval is off schedule.
* A stranger calls the internal endpoint with curl (400 unsigned, then 403 with a forged
  signature) and another one unsigned with the worker's User-Agent (400).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from jobs.simulator.base import LogLine, Node, Truth, World
from jobs.simulator.forwarding import Findings, node_ip, ordered, poisson_times
from jobs.simulator.shared import version_tuple

HERDER = "org.apache.kafka.connect.runtime.distributed.DistributedHerder"
REST_SERVER = "org.apache.kafka.connect.runtime.rest.RestServer"
WORKER_AGENT = "kafka-connect"
GROUP_ID = "connect-cluster"
KEY_TTL_MS = 3_600_000
STALE_KEY_GRACE_MS = 60_000
RETRY_GAP_MS = 120_000
ROTATION_TOLERANCE_MS = 60_000
KIP = "KIP-507"
CONNECTORS = ("jdbc-orders-source", "s3-events-sink", "debezium-inventory")
TASKS_ENDPOINT = "POST /connectors/<name>/tasks"
STRANGER_IP, SPOOFER_IP, OPERATOR_IP = "10.99.0.66", "10.99.0.67", "10.10.0.5"
STRANGER_AGENT, OPERATOR_AGENT = "curl/8.5.0", "curl/7.81.0"
#: Follower retry backoff (``reconfigureConnectorTasksWithExponentialBackoffRetries``): 250 ms
#: doubling, capped at 60 s.
BACKOFF_START_MS, BACKOFF_MAX_MS = 250, 60_000
_RULES = {
    "beyond_leader": ("connect.invalid_signature_beyond_grace", KIP, "medium", "client_address"),
    "beyond_follower": ("connect.invalid_signature_beyond_grace", KIP, "medium", "worker"),
    "agent": ("connect.internal_endpoint_non_worker_agent", KIP, "high", "client_address"),
    "bad_request": ("connect.internal_request_bad_request", KIP, "medium", "client_address"),
    "off_schedule": ("connect.session_key_rotation_off_schedule", KIP, "medium", "worker"),
}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Access:
    """One internal-endpoint call as the leader logged it."""

    ts: int
    caller: str
    connector: str
    status: int
    agent: str
    tag: str


def access_time(ts_ms: int) -> str:
    """Jetty's ``%t``: ``dd/MMM/yyyy:HH:mm:ss +0000`` (GMT)."""
    t = dt.datetime.fromtimestamp(ts_ms / 1000, tz=dt.UTC)
    return f"{t.day:02d}/{_MONTHS[t.month - 1]}/{t.year}:{t:%H:%M:%S} +0000"


def access_line(  # noqa: PLR0917
    caller: str,
    ts_ms: int,
    method: str,
    target: str,
    status: int,
    size: str,
    agent: str,
    elapsed_ms: int,
) -> str:
    """A 3.1+ REST access-log message (``RestServer``: EXTENDED_NCSA_FORMAT + ``%{ms}T``)."""
    started = ts_ms - elapsed_ms
    return (
        f'{caller} - - [{access_time(started)}] "{method} {target} HTTP/1.1" {status} {size} '
        f'"-" "{agent}" {elapsed_ms}'
    )


class ConnectArea:
    """Distributed Connect workers: session keys, signed forwards, stale-key 403s, strangers."""

    name = "connect"

    def configure(self, world: World) -> None:
        """Workers: ``group.id``, ``connect.protocol=sessioned``, ``inter.worker.key.ttl.ms``
        and the signing algorithms (Kafka's defaults, written out), unless already set."""
        for node in world.connect_workers:
            props = node.properties
            props.setdefault("group.id", GROUP_ID)
            props.setdefault("connect.protocol", "sessioned")
            props.setdefault("inter.worker.key.ttl.ms", str(KEY_TTL_MS))
            props.setdefault("inter.worker.key.generation.algorithm", "HmacSHA256")
            props.setdefault("inter.worker.signature.algorithm", "HmacSHA256")
            props.setdefault("inter.worker.verification.algorithms", "HmacSHA256")

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every line of the area in time order; records the ``connect.*`` findings (Connect
        has no security_metrics)."""
        if not world.connect_workers:
            return
        run = _ConnectRun(world, truth)
        yield from ordered(run.batches())
        run.finish()


class _ConnectRun:
    def __init__(self, world: World, truth: Truth) -> None:
        self.world, self.truth = world, truth
        self.rng = world.rng("connect")
        self.workers = world.connect_workers
        self.leader = self.workers[0]
        self.followers = self.workers[1:]
        self.ttl = int(self.leader.properties.get("inter.worker.key.ttl.ms", KEY_TTL_MS))
        self.findings = Findings()
        self.tag_seq = 0
        self.updates: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self.access: list[Access] = []
        self.follower_beyond: list[tuple[int, str, str, str]] = []
        self.lagging = self.followers[-1] if self.followers else None
        self.lag_window: tuple[int, int] = (0, -1)

    def tag(self, kind: str) -> str:
        self.tag_seq += 1
        return f"con:{kind}:{self.tag_seq}"

    def prefix(self, node: Node) -> str:
        client = node.properties.get("client.id") or f"connect-{node_ip(self.world, node)}:8083"
        group = node.properties.get("group.id", GROUP_ID)
        return f"[Worker clientId={client}, groupId={group}] "

    def herder(
        self, ts: int, node: Node, level: str, text: str, kind: str | None = None
    ) -> LogLine:
        return LogLine(
            ts,
            node.name,
            "connect",
            level,
            HERDER,
            self.prefix(node) + text,
            tag=self.tag(kind) if kind else None,
        )

    def leader_access(  # noqa: PLR0917
        self, ts: int, caller: str, method: str, path: str, status: int, agent: str
    ) -> LogLine:
        size = "0" if status == 204 else str(60 + self.rng.randrange(40))
        elapsed = 2 + self.rng.randrange(20)
        message = access_line(caller, ts, method, path, status, size, agent, elapsed)
        tag = self.tag("access")
        line = LogLine(ts, self.leader.name, "connect", "INFO", REST_SERVER, message, tag=tag)
        parts = path.split("/")
        if method == "POST" and len(parts) >= 4 and parts[3].startswith("tasks"):
            self.access.append(Access(ts, caller, parts[2], status, agent, tag))
        return line

    # -- schedule -----------------------------------------------------------------------------

    def batches(self) -> Iterator[tuple[int, list[LogLine]]]:
        world, rng = self.world, self.rng
        start, end = world.start_ms, world.end_ms
        events: list[tuple[int, int, str, dict[str, object]]] = []
        first = start + 30_000
        rotations = [first]
        stall_at = None
        while True:
            nxt = rotations[-1] + self.ttl
            span_rotations = len(rotations)
            if stall_at is None and span_rotations == 2 and (end - start) > 4 * self.ttl:
                nxt += 600_000
                stall_at = nxt
            if nxt >= end - 120_000:
                break
            rotations.append(nxt)
        lag_rotation = rotations[3] if len(rotations) > 4 and self.lagging is not None else None
        for i, r in enumerate(rotations):
            events.append((r, 0, "rotation", {"first": i == 0, "lag": r == lag_rotation}))
        margin = 5 * 60_000
        lo, hi = start + margin, end - margin
        for follower in self.followers:
            for t in poisson_times(rng, lo, hi, 2.0):
                events.append((t, 1, "forward", {"follower": follower.name}))
        for t in poisson_times(rng, lo, hi, 2.0):
            events.append((t, 2, "operator", {}))
        if hi > lo:
            events.append((lo + int((hi - lo) * 0.45), 3, "stranger", {}))
            events.append((lo + int((hi - lo) * 0.55), 3, "spoofer", {}))
        events.sort(key=lambda e: (e[0], e[1]))
        for t, _, kind, args in events:
            yield t, getattr(self, f"_{kind}")(t, **args)

    # -- events -------------------------------------------------------------------------------

    def _rotation(self, r: int, first: bool, lag: bool) -> list[LogLine]:
        """The leader distributes a key; each worker reads it. At some rotations a follower
        forwards with the old key just before it reads the new one (403s within the grace)."""
        rng = self.rng
        text = (
            "Internal request signing is enabled but no session key has been distributed "
            "yet. Distributing new key now."
            if first
            else "Existing key has expired. Distributing new key now."
        )
        out = [self.herder(r, self.leader, "DEBUG", text)]
        stale = None
        if not first and not lag and self.followers and rng.random() < 0.5:
            stale = rng.choice(self.followers)
        for node in self.workers:
            if lag and node is self.lagging:
                out += self._lagging_episode(r, node)
                continue
            at = r + (400 if node is stale else 20 + rng.randrange(150))
            line = self.herder(at, node, "INFO", "Session key updated", "key")
            out.append(line)
            self.updates[node.node_id].append((at, str(line.tag)))
        if stale is not None:
            out += self._stale_within_grace(r, stale)
        return out

    def _stale_within_grace(self, r: int, follower: Node) -> list[LogLine]:
        connector = self.rng.choice(CONNECTORS)
        ip = node_ip(self.world, follower)
        out = []
        a = r + 100
        for status in (403, 403, 204):
            out.append(
                self.leader_access(
                    a + 5, ip, "POST", f"/connectors/{connector}/tasks", status, WORKER_AGENT
                )
            )
            if status == 403:
                out.append(self._follower_failure(follower, connector, a, a + 8, r + 100))
            a += 250 if status == 403 and a == r + 100 else 500
        return out

    def _follower_failure(
        self, follower: Node, connector: str, attempt: int, ts: int, initial: int
    ) -> LogLine:
        """The follower's retry line of a 403: DEBUG within a minute of the first attempt,
        else ERROR with the ConnectRestException folded (wording by version)."""
        version = version_tuple(follower.kafka_version)
        named = f" ({connector})" if version >= (2, 8) else ""
        if initial + STALE_KEY_GRACE_MS > ts:
            text = (
                f"Failed to reconfigure connector's tasks{named}, possibly due to expired "
                "session key. Retrying after backoff"
            )
            return self.herder(ts, follower, "DEBUG", text, "stale")
        end = "." if version >= (3, 5) else ":"
        text = (
            f"Failed to reconfigure connector's tasks{named}, retrying after backoff{end}\n"
            "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: Internal "
            "request contained invalid signature.\n"
            "\tat org.apache.kafka.connect.runtime.rest.RestClient.httpRequest"
            "(RestClient.java:190)\n"
            "\tat org.apache.kafka.connect.runtime.distributed.DistributedHerder."
            "reconfigureConnector(DistributedHerder.java:2201)"
        )
        line = self.herder(ts, follower, "ERROR", text, "beyond")
        self.follower_beyond.append((ts, str(line.tag), follower.node_id, connector))
        return line

    def _lagging_episode(self, r: int, follower: Node) -> list[LogLine]:
        """A follower whose config-topic consumer lags misses the key of rotation ``r`` and
        forwards with the old one until it catches up (about four minutes)."""
        connector = CONNECTORS[0]
        ip = node_ip(self.world, follower)
        out = []
        initial = r + 2_000
        attempt, backoff = initial, BACKOFF_START_MS
        caught_up = r + 240_000
        while attempt < caught_up:
            out.append(
                self.leader_access(
                    attempt + 5, ip, "POST", f"/connectors/{connector}/tasks", 403, WORKER_AGENT
                )
            )
            out.append(self._follower_failure(follower, connector, attempt, attempt + 8, initial))
            attempt += backoff
            backoff = min(backoff * 2, BACKOFF_MAX_MS)
        key_at = caught_up + 1_000
        line = self.herder(key_at, follower, "INFO", "Session key updated", "key")
        out.append(line)
        self.updates[follower.node_id].append((key_at, str(line.tag)))
        out.append(
            self.leader_access(
                attempt + 5, ip, "POST", f"/connectors/{connector}/tasks", 204, WORKER_AGENT
            )
        )
        self.lag_window = (r, attempt + 5)
        return out

    def _forward(self, t: int, follower: str) -> list[LogLine]:
        node = next(n for n in self.followers if n.name == follower)
        lo, hi = self.lag_window
        if node is self.lagging and lo - RETRY_GAP_MS <= t <= hi + RETRY_GAP_MS:
            return []
        connector = self.rng.choice(CONNECTORS)
        return [
            self.leader_access(
                t + 5,
                node_ip(self.world, node),
                "POST",
                f"/connectors/{connector}/tasks",
                204,
                WORKER_AGENT,
            )
        ]

    def _operator(self, t: int) -> list[LogLine]:
        node = self.rng.choice(self.workers)
        path = self.rng.choice(["/connectors", f"/connectors/{self.rng.choice(CONNECTORS)}/status"])
        message = access_line(
            OPERATOR_IP,
            t + 3,
            "GET",
            path,
            200,
            str(100 + self.rng.randrange(300)),
            OPERATOR_AGENT,
            3,
        )
        return [LogLine(t + 3, node.name, "connect", "INFO", REST_SERVER, message)]

    def _stranger(self, t: int) -> list[LogLine]:
        connector = CONNECTORS[1]
        path = f"/connectors/{connector}/tasks"
        first = self.leader_access(t, STRANGER_IP, "POST", path, 400, STRANGER_AGENT)
        second = self.leader_access(t + 15_000, STRANGER_IP, "POST", path, 403, STRANGER_AGENT)
        return [first, second]

    def _spoofer(self, t: int) -> list[LogLine]:
        connector = CONNECTORS[2]
        path = f"/connectors/{connector}/tasks"
        return [
            self.leader_access(t + i * 5_000, SPOOFER_IP, "POST", path, 400, WORKER_AGENT)
            for i in range(2)
        ]

    # -- truth --------------------------------------------------------------------------------

    def finish(self) -> None:
        leader_id = self.leader.node_id
        by_key: dict[tuple[str, str], list[Access]] = defaultdict(list)
        for a in self.access:
            by_key[(a.caller, a.connector)].append(a)
            if a.agent != WORKER_AGENT:
                self.findings.add(
                    _RULES["agent"], a.caller, f"{leader_id}|{a.agent}", a.ts, a.tag, leader_id
                )
            elif a.status == 400:
                self.findings.add(
                    _RULES["bad_request"],
                    a.caller,
                    f"{leader_id}|{a.connector}|{TASKS_ENDPOINT}",
                    a.ts,
                    a.tag,
                    leader_id,
                )
        for (caller, connector), rows in by_key.items():
            graded = sorted((r for r in rows if r.agent == WORKER_AGENT), key=lambda r: r.ts)
            episode_start, previous = None, None
            for row in graded:
                if (
                    previous is None
                    or 200 <= previous.status <= 299
                    or row.ts - previous.ts > RETRY_GAP_MS
                ):
                    episode_start = row.ts
                assert episode_start is not None
                if row.status == 403 and row.ts - episode_start > STALE_KEY_GRACE_MS:
                    self.findings.add(
                        _RULES["beyond_leader"],
                        caller,
                        f"{leader_id}|{connector}|{TASKS_ENDPOINT}",
                        row.ts,
                        row.tag,
                        leader_id,
                    )
                previous = row
        for ts, tag, worker, connector in self.follower_beyond:
            self.findings.add(
                _RULES["beyond_follower"], worker, f"{connector}|{TASKS_ENDPOINT}", ts, tag, worker
            )
        for worker, updates in self.updates.items():
            updates.sort()
            for (prev, _), (at, tag) in itertools.pairwise(updates):
                if abs((at - prev) - self.ttl) > ROTATION_TOLERANCE_MS:
                    self.findings.add(_RULES["off_schedule"], worker, "", at, tag, worker)
        self.findings.emit(self.truth)
