"""The clients' connections to the brokers, planned once per world and shared by two areas.

``auth`` logs each connection's authentication, re-authentications and end; ``requests``
sends the client's traffic over the connection open at each moment. The plan (rules in the
``auth`` module's docstring) is computed from its own random stream (``auth-plan``) and kept
in ``world.settings``, so both areas see the same connections whichever runs first.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from jobs.simulator.base import Client, Node, World
from jobs.simulator.shared import broker_ip, connection_id
from jobs.simulator.world import LISTENERS, reauth_capable

#: Failed authentication attempts of strangers per broker and hour.
FAILURES_PER_HOUR = 6
REAUTH_FAILURE_ODDS = 0.05
#: Minimum distance between two authentication outcomes on one broker (ms); a handshake's
#: DEBUG lines come at most MAX_LATENCY_MS before its outcome.
OUTCOME_GAP_MS = 60
MAX_LATENCY_MS = 45


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

    def connection(self, segment: Segment) -> str:
        """The broker's connection id of ``segment``, one of this pair's connections."""
        local = (broker_ip(self.broker.node_id), LISTENERS[self.listener][1])
        remote = (self.client.address, segment.port)
        return connection_id(local, remote, segment.index, self.broker.kafka_version)


#: A planned step: (time, order, kind, broker index, pair or None for a stranger).
_Step = tuple[int, int, str, int, Pair | None]


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
    order = itertools.count()
    heap, pairs = _first_steps(world, rng, order)
    events = list(_events(world, rng, heap, order))
    world.settings["auth_plan"] = (events, pairs)
    return events, pairs


def _first_steps(
    world: World, rng: random.Random, order: Iterator[int]
) -> tuple[list[_Step], dict[tuple[int, int], Pair]]:
    """Per broker: every client's first connection within the first 4 minutes and the
    strangers' attempts (``FAILURES_PER_HOUR`` in each hour); the pairs, still unconnected."""
    heap: list[_Step] = []
    pairs: dict[tuple[int, int], Pair] = {}
    for b, broker in enumerate(world.brokers):
        for c, client in enumerate(world.clients):
            new = Pair(client, c, broker, listener_of(c))
            pairs[(c, b)] = new
            ts = world.start_ms + rng.randrange(1, 240_000)
            heap.append((ts, next(order), "connect", b, new))
        for hour in range(int((world.end_ms - world.start_ms) / 3_600_000) + 1):
            for _ in range(FAILURES_PER_HOUR):
                ts = world.start_ms + hour * 3_600_000 + rng.randrange(0, 3_600_000)
                heap.append((ts, next(order), "stranger", b, None))
    return heap, pairs


def _events(
    world: World, rng: random.Random, heap: list[_Step], order: Iterator[int]
) -> Iterator[Event]:
    """Run the steps in time order, each broker's outcomes at least ``OUTCOME_GAP_MS`` apart
    (a step too close to the previous one waits); a step may plan the pair's next one."""
    heapq.heapify(heap)
    last: dict[int, int] = defaultdict(lambda: -(10**15))
    while heap:
        ts, _, kind, b, pair = heapq.heappop(heap)
        if ts >= world.end_ms:
            continue
        if ts - last[b] < OUTCOME_GAP_MS:
            heapq.heappush(heap, (last[b] + OUTCOME_GAP_MS, next(order), kind, b, pair))
            continue
        last[b] = ts
        broker = world.brokers[b]
        if pair is None:
            yield Event(ts, "stranger", broker, None, None)
            continue
        event, follow = _step(world, rng, ts=ts, kind=kind, b=b, pair=pair)
        yield event
        if follow is not None:
            heapq.heappush(heap, (follow[0], next(order), follow[1], b, pair))


def _step(
    world: World, rng: random.Random, *, ts: int, kind: str, b: int, pair: Pair
) -> tuple[Event, tuple[int, str] | None]:
    """One step of a pair (``connect``, ``reauth`` or ``kill``; ``b``: the broker's index):
    its event and the pair's next step (time, kind), if any. A capable client on an expiring
    listener re-authenticates at 85-95% of the session lifetime and one time in twenty fails
    (then reconnects); an incapable one's connection is unusable from the expiry and killed
    within a minute."""
    broker = pair.broker
    reauth_ms = LISTENERS[pair.listener][2]
    capable = reauth_capable(pair.client) is True
    if kind == "connect":
        index = len(pair.segments)
        segment = Segment(index, 40000 + pair.client_index * 97 + b * 7 + index, ts,
                          world.end_ms)  # fmt: skip
        pair.segments.append(segment)
        event = Event(ts, "connect", broker, pair, segment)
        if reauth_ms > 0 and capable:
            return event, (ts + int(reauth_ms * rng.uniform(0.85, 0.95)), "reauth")
        if reauth_ms > 0:
            segment.usable_ms = ts + reauth_ms  # requests after expiry are refused
            return event, (ts + reauth_ms + rng.randrange(1, 60_000), "kill")
        return event, None
    segment = pair.segments[-1]
    if kind == "reauth":
        latency = rng.randrange(3, MAX_LATENCY_MS)
        if rng.random() < REAUTH_FAILURE_ODDS:
            segment.usable_ms = ts
            event = Event(ts, "reauth_failed", broker, pair, segment, latency)
            return event, (ts + rng.randrange(200, 2_000), "connect")
        event = Event(ts, "reauth_ok", broker, pair, segment, latency)
        return event, (ts + int(reauth_ms * rng.uniform(0.85, 0.95)), "reauth")
    # kill
    return Event(ts, "kill", broker, pair, segment), (ts + rng.randrange(100, 1_000), "connect")
