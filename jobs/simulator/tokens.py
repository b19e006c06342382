"""Simulator area 'tokens': KIP-48 delegation tokens (KIP-900 in KRaft), as Kafka logs them.

Owners create tokens for jobs (``CreateDelegationToken`` v3), a renewer principal renews them
before they expire, owners describe their tokens, an auditor describes everyone's (each token
it does not own is an authorizer check, allowed by a wildcard DESCRIBE ACL on delegation
tokens), jobs end with an expire-now or by abandoning the token, which the sweeper removes
(``delegation.token.expiry.check.interval.ms``). Errors the rules catch: renewals by a
principal that holds a leaked HMAC (DELEGATION_TOKEN_OWNER_MISMATCH), late renewals after the
expiry (DELEGATION_TOKEN_EXPIRED) or after the removal (DELEGATION_TOKEN_NOT_FOUND), a job
asking for a token over its token-authenticated connection
(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED) and a CI runner creating a burst of tokens.

Rules (kafka-log-formats.md section 6.3; ``KafkaApis`` / ``DelegationTokenManagerZk`` in
ZooKeeper mode, ``ControllerApis`` / ``DelegationTokenControlManager`` in KRaft):
max lifetime = requested if > 0 capped by ``delegation.token.max.lifetime.ms``, else the config;
expiry = min(max, now + ``delegation.token.expiry.time.ms``); renew: new expiry = min(max, now +
period) with period = the config when the request asks < 0 (KRaft also caps a positive period
by the config); ZooKeeper checks the owner before the expiry, KRaft the expiry first; an
expire-now removes the token (KRaft 3.6-3.9 answers the negative period, KAFKA-17315). HMAC =
HMAC-SHA512(secret, token id), printed base64 in the 2.8+ JSON request log.

Lines: the request log (``Completed request:`` JSON; on a KRaft cluster Create / Renew /
Expire also on the active controller with ``isForwarded:true``), the ZooKeeper token manager
(``[Token Manager on Node N]: ...``) and the KRaft controller's sweeper line.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import hmac
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobs.simulator.base import Client, LogLine, Node, Truth, World
from jobs.simulator.forwarding import (
    AUTHORIZER_LOGGER,
    CLIENT_LISTENER,
    CONTROLLER_LISTENER,
    Findings,
    is_kraft,
    node_ip,
    ordered,
    poisson_times,
)
from jobs.simulator.shared import (
    REQUEST_LOGGER,
    Conn,
    connection_id,
    json_request_message,
    request_header,
    version_tuple,
)

MAX_LIFETIME_MS = 4 * 3_600_000
EXPIRY_TIME_MS = 3_600_000
CHECK_INTERVAL_MS = 600_000
RENEWER = "User:token-renewer"
AUDITOR = "User:token-auditor"
CI_RUNNER = "User:ci-runner"
INTRUDER = "User:build-agent"
KIP = "KIP-48"
TOKEN_CORRELATION_BASE = 800_000
CREATION_BURST_THRESHOLD = 10
CREATION_BURST_WINDOW_MS = 3_600_000
_APIS = {
    "create": (38, 3, "CREATE_DELEGATION_TOKEN"),
    "renew": (39, 2, "RENEW_DELEGATION_TOKEN"),
    "expire": (40, 2, "EXPIRE_DELEGATION_TOKEN"),
    "describe": (41, 3, "DESCRIBE_DELEGATION_TOKEN"),
}
_REJECTIONS = {
    62: ("tokens.token_not_found", KIP, "medium", "principal"),
    63: ("tokens.owner_mismatch", KIP, "medium", "principal"),
    66: ("tokens.expired_token_used", KIP, "low", "principal"),
}
#: ``Errors`` names of the codes this area answers.
ERROR_NAMES = {
    0: "NONE",
    62: "DELEGATION_TOKEN_NOT_FOUND",
    63: "DELEGATION_TOKEN_OWNER_MISMATCH",
    64: "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    66: "DELEGATION_TOKEN_EXPIRED",
}
#: ``schemas.token_lifecycle.TOKEN_HISTORY_ENTRY`` fields, position as ``tag``.
HISTORY_FIELDS = (
    "event_ts",
    "actor",
    "operation",
    "new_expiry_ts",
    "error_code",
    "error_code_name",
    "requested_period_ms",
    "observed_expiry_ms",
    "observed_issue_ms",
    "observed_max_ms",
    "expected_expiry_ms",
    "expected_error_code",
    "check",
    "source",
    "metadata_mode",
    "node_id",
    "tag",
)
#: No renew / expire within this much of a token's expiry or max timestamp: Kafka's answer
#: there depends on the exact ``now``, which a log line's time does not pin down
#: (``[rules.tokens].clock_tolerance_ms``).
CLOCK_MARGIN_MS = 120_000
_NOT_ALLOWED = ("tokens.request_not_allowed", KIP, "medium", "principal")
_BURST = ("tokens.creation_burst", KIP, "medium", "principal")
_DESCRIBE = ("tokens.describe_by_non_owner", KIP, "low", "principal")


def token_hmac(secret: str, token_id: str) -> bytes:
    """HMAC-SHA512 keyed with the secret's UTF-8 bytes over the token id's UTF-8 bytes
    (``DelegationTokenManager.createHmac``)."""
    return hmac.new(secret.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()


def _principal_json(principal: str) -> dict[str, str]:
    ptype, name = principal.split(":", 1)
    return {"principalType": ptype, "principalName": name}


@dataclass
class Token:
    """One token as the cluster holds it, plus what the logs showed of it."""

    token_id: str
    hmac_b64: str
    owner: str
    requester: str
    renewers: list[str]
    issue_ms: int
    max_ms: int
    expiry_ms: int
    removed: bool = False
    ended_by: str | None = None
    ended_ms: int | None = None
    renew_count: int = 0
    seen: list[int] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass(order=True)
class _Action:
    ts: int
    seq: int
    kind: str = field(compare=False)
    args: dict[str, Any] = field(compare=False, default_factory=dict)


def token_brokers(world: World) -> list[Node]:
    """The brokers that answer token requests here: on a KRaft world (controllers present) the
    KRaft brokers (``process.roles`` names ``broker``), else the ZooKeeper brokers (no
    ``process.roles``) of 2.8+ (JSON request log). Brokers outside the world's mode (a
    ZooKeeper-era version in a KRaft world) are left out."""
    kraft = is_kraft(world)
    return [
        b
        for b in world.brokers
        if ("broker" in b.properties.get("process.roles", "")) == kraft
        and version_tuple(b.kafka_version) >= (2, 8)
    ]


class TokensArea:
    """Delegation-token lines of a ZooKeeper or KRaft world (KIP-48, KIP-900)."""

    name = "tokens"

    def configure(self, world: World) -> None:
        """``delegation.token.*`` on brokers and controllers (a short expiry and max lifetime so
        that a simulated day holds whole lifecycles), the secret also in
        ``world.settings['delegation_token_secret']`` (for the pipeline's HMAC check), and the
        metadata mode (``process.roles`` / ``zookeeper.connect``) when no area set it."""
        secret = world.settings.setdefault(
            "delegation_token_secret", f"sim-token-secret-{world.seed}"
        )
        for node in [*token_brokers(world), *world.controllers]:
            props = node.properties
            props.setdefault("delegation.token.secret.key", str(secret))
            props.setdefault("delegation.token.max.lifetime.ms", str(MAX_LIFETIME_MS))
            props.setdefault("delegation.token.expiry.time.ms", str(EXPIRY_TIME_MS))
            props.setdefault("delegation.token.expiry.check.interval.ms", str(CHECK_INTERVAL_MS))
            if not is_kraft(world):
                props.setdefault("zookeeper.connect", "zk-1:2181,zk-2:2181,zk-3:2181/kafka")

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """Every line of the area in time order; records the token_lifecycle rows, the
        ``tokens.*`` findings, the forwarding metric events (KRaft) and the authorization
        metric events of the auditor's describes."""
        if not token_brokers(world):
            return
        run = _TokensRun(world, truth)
        yield from ordered(run.batches())
        run.finish()


class _TokensRun:
    def __init__(self, world: World, truth: Truth) -> None:
        self.world, self.truth = world, truth
        self.rng = world.rng("tokens")
        self.kraft = is_kraft(world)
        props = token_brokers(world)[0].properties
        self.secret = str(
            world.settings.get("delegation_token_secret", f"sim-token-secret-{world.seed}")
        )
        self.max_life = int(props.get("delegation.token.max.lifetime.ms", MAX_LIFETIME_MS))
        self.expiry_cfg = int(props.get("delegation.token.expiry.time.ms", EXPIRY_TIME_MS))
        self.check_ms = int(
            props.get("delegation.token.expiry.check.interval.ms", CHECK_INTERVAL_MS)
        )
        self.controller = world.controllers[0] if self.kraft else None
        self.brokers = token_brokers(world)
        self.sweeper = self.controller if self.controller is not None else self.brokers[0]
        self.tokens: dict[str, Token] = {}
        self.by_hmac: dict[str, str] = {}
        self.findings = Findings()
        self.creates: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
        self.heap: list[_Action] = []
        self.seq = 0
        self.tag_seq = 0
        self.correlation = TOKEN_CORRELATION_BASE
        self.conn_index = 0
        self.owners = self._owners()

    # -- setup ------------------------------------------------------------------------------

    def _owners(self) -> list[tuple[str, str]]:
        """(principal, address) of the token owners: up to three authenticated clients of the
        world (distinct principals), else two service principals."""
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        clients: list[Client] = list(self.world.clients)
        for c in clients:
            if c.mechanism and c.principal.startswith("User:") and c.principal not in seen:
                if c.principal in (RENEWER, AUDITOR, CI_RUNNER, INTRUDER):
                    continue
                out.append((c.principal, c.address))
                seen.add(c.principal)
            if len(out) == 3:
                break
        if not out:
            out = [("User:etl-service", "10.30.0.21"), ("User:stream-app", "10.30.0.22")]
        return out

    def schedule(self, ts: int, kind: str, **args: Any) -> None:
        if ts >= self.world.end_ms - 60_000:
            return
        self.seq += 1
        heapq.heappush(self.heap, _Action(ts, self.seq, kind, args))

    def batches(self) -> Iterator[tuple[int, list[LogLine]]]:
        world, rng = self.world, self.rng
        lo, hi = world.start_ms + 2 * 60_000, world.end_ms - 10 * 60_000
        rate = 0.5 * len(self.brokers)
        for principal, address in self.owners:
            for t in poisson_times(rng, lo, hi, rate):
                self.schedule(t, "job", owner=principal, address=address)
            for t in poisson_times(rng, lo, hi, 1.0):
                self.schedule(t, "describe", requester=principal, address=address, own=True)
        span = hi - lo
        if span > 0:
            every = 6 * 3_600_000
            t = lo + min(every // 2, span // 2)
            while t < hi:
                self.schedule(t, "describe", requester=AUDITOR, address="10.30.0.5", own=False)
                t += every
            burst_at = lo + int(span * 0.3)
            for i in range(12):
                self.schedule(
                    burst_at + i * 90_000 + rng.randrange(20_000),
                    "job",
                    owner=CI_RUNNER,
                    address="10.30.0.9",
                    ci=True,
                )
            for t in poisson_times(rng, lo, hi, 1 / 6):
                self.schedule(t, "intruder")
        tick = world.start_ms + self.check_ms + 1_234
        while tick < world.end_ms - 60_000:
            self.schedule(tick, "sweep")
            tick += self.check_ms
        while self.heap:
            action = heapq.heappop(self.heap)
            lines = getattr(self, f"_{action.kind}")(action.ts, **action.args)
            yield action.ts, lines

    # -- line helpers -------------------------------------------------------------------------

    def tag(self, kind: str) -> str:
        self.tag_seq += 1
        return f"tok:{kind}:{self.tag_seq}"

    def conn_to(self, broker: Node, address: str, principal: str) -> Conn:
        self.conn_index += 1
        port = 40000 + self.rng.randrange(20000)
        cid = connection_id(
            (node_ip(self.world, broker), 9093),
            (address, port),
            self.conn_index,
            broker.kafka_version,
        )
        return Conn(cid, principal, CLIENT_LISTENER, "SASL_SSL", ("apache-kafka-java", "3.7.1"))

    def request_lines(  # noqa: PLR0917
        self,
        ts: int,
        broker: Node,
        op: str,
        principal: str,
        address: str,
        request: dict[str, Any],
        response: dict[str, Any],
        client_id: str,
    ) -> list[LogLine]:
        """The broker's request-log line (tagged) and, for a forwarded API on KRaft, the active
        controller's copy at the same millisecond (tagged ``...:ctrl``), plus the forwarding
        metric event."""
        key, version, api = _APIS[op]
        self.correlation += 1
        header = request_header(key, version, self.correlation, client_id, api)
        conn = self.conn_to(broker, address, principal)
        tag = self.tag(op)
        out = []
        forwarded = self.kraft and op != "describe"
        if forwarded and self.controller is not None:
            c = self.controller
            self.conn_index += 1
            cid = connection_id(
                (node_ip(self.world, c), 9094),
                (node_ip(self.world, broker), 40000 + self.rng.randrange(20000)),
                self.conn_index,
                c.kafka_version,
            )
            cconn = Conn(
                cid, principal, CONTROLLER_LISTENER, "SASL_PLAINTEXT", ("unknown", "unknown")
            )
            cmsg = json_request_message(
                header, request, response, cconn, forwarded=True, total_ms=0.6
            )
            out.append(
                LogLine(ts, c.name, "request", "DEBUG", REQUEST_LOGGER, cmsg, tag=tag + ":ctrl")
            )
        msg = json_request_message(
            header, request, response, conn, total_ms=0.9, remote_ms=0.6 if forwarded else 0.0
        )
        out.append(LogLine(ts, broker.name, "request", "DEBUG", REQUEST_LOGGER, msg, tag=tag))
        # The owners are authenticated clients (their address): the truth's ``links`` sees it.
        self.truth.request_logged(broker.node_id, conn.connection, address, principal, ts)
        if forwarded:
            self.truth.metric_event(
                "forwarded-requests",
                ts,
                broker.node_id,
                listener=CLIENT_LISTENER,
                principal=principal,
                api_key_name=api,
            )
        return out

    def manager_line(self, ts: int, broker: Node, text: str, kind: str) -> LogLine:
        """A ZooKeeper-mode token manager INFO line (``DelegationTokenManagerZk`` 3.6+, before
        that ``DelegationTokenManager`` with ``on Broker``)."""
        if version_tuple(broker.kafka_version) >= (3, 6):
            logger, prefix = "kafka.server.DelegationTokenManagerZk", "Node"
        else:
            logger, prefix = "kafka.server.DelegationTokenManager", "Broker"
        message = f"[Token Manager on {prefix} {broker.node_id}]: {text}"
        return LogLine(ts, broker.name, "server", "INFO", logger, message, tag=self.tag(kind))

    def new_token_id(self) -> str:
        while True:
            text = base64.urlsafe_b64encode(self.rng.randbytes(16)).decode("ascii").rstrip("=")
            if not text.startswith("-") and text not in self.tokens:
                return text

    def history(self, token: Token, ts: int, tag: str | None, **entry: Any) -> None:
        """One ``token_lifecycle.history`` entry (``TOKEN_HISTORY_ENTRY`` fields; ``tag`` gives
        the line's position). Values not given are null; ``check`` defaults to 'ok' (every
        answer agrees with Kafka's rule here)."""
        fields = dict.fromkeys(HISTORY_FIELDS)
        fields |= {"event_ts": ts, "check": "ok", "source": "request_log", "tag": tag}
        fields |= entry
        token.history.append(fields)
        token.seen.append(ts)

    # -- actions ------------------------------------------------------------------------------

    def _job(self, t: int, owner: str, address: str, ci: bool = False) -> list[LogLine]:
        """A job creates a token, has it renewed, and ends (expire-now or abandoned)."""
        rng = self.rng
        requested = 3_600_000 if ci else rng.choice([-1, -1, 2 * 3_600_000])
        renewers = [] if ci else [RENEWER]
        out, token = self._create(t, owner, address, requested, renewers)
        if ci:
            self.schedule(
                t + rng.randrange(3, 10) * 60_000,
                "expire",
                token_id=token.token_id,
                actor=owner,
                address=address,
            )
            return out
        job_end = t + rng.randrange(30, 300) * 60_000
        renew_at = t + rng.randrange(35, 50) * 60_000
        while renew_at < min(job_end, token.max_ms - CLOCK_MARGIN_MS):
            self.schedule(
                renew_at,
                "renew",
                token_id=token.token_id,
                actor=RENEWER,
                address="10.30.0.7",
                period=rng.choice([-1, self.expiry_cfg]),
            )
            renew_at += rng.randrange(35, 50) * 60_000
        if rng.random() < 0.12:
            self.schedule(
                t + rng.randrange(5, 25) * 60_000, "not_allowed", owner=owner, address=address
            )
        if rng.random() < 0.6 and job_end < token.max_ms - CLOCK_MARGIN_MS:
            self.schedule(
                job_end,
                "expire",
                token_id=token.token_id,
                actor=owner,
                address=address,
                lagging=rng.random() < 0.25,
            )
        else:
            self.schedule(job_end + 1, "late_renew", token_id=token.token_id)
        return out

    def _create(
        self, t: int, owner: str, address: str, requested: int, renewers: list[str]
    ) -> tuple[list[LogLine], Token]:
        broker = self.rng.choice(self.brokers)
        token_id = self.new_token_id()
        mac = base64.b64encode(token_hmac(self.secret, token_id)).decode("ascii")
        life = min(requested, self.max_life) if requested > 0 else self.max_life
        max_ms = t + life
        expiry = min(max_ms, t + self.expiry_cfg)
        request = {
            "ownerPrincipalType": None,
            "ownerPrincipalName": None,
            "renewers": [_principal_json(r) for r in renewers],
            "maxLifetimeMs": requested,
        }
        o = _principal_json(owner)
        response = {
            "errorCode": 0,
            **o,
            "tokenRequesterPrincipalType": o["principalType"],
            "tokenRequesterPrincipalName": o["principalName"],
            "issueTimestampMs": t,
            "expiryTimestampMs": expiry,
            "maxTimestampMs": max_ms,
            "tokenId": token_id,
            "hmac": mac,
            "throttleTimeMs": 0,
        }
        client_id = f"token-client-{owner.split(':', 1)[1]}"
        out = []
        if not self.kraft:
            out.append(
                self.manager_line(
                    t, broker, f"Created a delegation token: {token_id} for owner: {owner}", "mgr"
                )
            )
        out += self.request_lines(t, broker, "create", owner, address, request, response, client_id)
        token = Token(token_id, mac, owner, owner, list(renewers), t, max_ms, expiry)
        self.tokens[token_id] = token
        self.by_hmac[mac] = token_id
        self.history(
            token,
            t,
            out[-1].tag,
            actor=owner,
            operation="create",
            error_code=0,
            error_code_name=ERROR_NAMES[0],
            requested_period_ms=requested,
            observed_expiry_ms=expiry,
            observed_issue_ms=t,
            observed_max_ms=max_ms,
            expected_expiry_ms=expiry,
            new_expiry_ts=expiry,
            node_id=broker.node_id,
        )
        self.creates[owner].append((t, str(out[-1].tag), broker.node_id))
        return out, token

    def _not_allowed(self, t: int, owner: str, address: str) -> list[LogLine]:
        """A job asks for a new token over its token-authenticated connection
        (``allowTokenRequests`` false: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 64)."""
        broker = self.rng.choice(self.brokers)
        request = {
            "ownerPrincipalType": None,
            "ownerPrincipalName": None,
            "renewers": [_principal_json(RENEWER)],
            "maxLifetimeMs": -1,
        }
        o = _principal_json(owner)
        response = {
            "errorCode": 64,
            **o,
            "tokenRequesterPrincipalType": o["principalType"],
            "tokenRequesterPrincipalName": o["principalName"],
            "issueTimestampMs": -1,
            "expiryTimestampMs": -1,
            "maxTimestampMs": -1,
            "tokenId": "",
            "hmac": "",
            "throttleTimeMs": 0,
        }
        out = self.request_lines(
            t,
            broker,
            "create",
            owner,
            address,
            request,
            response,
            f"token-job-{owner.split(':', 1)[1]}",
        )
        broker_line = out[-1]
        self.creates[owner].append((t, str(broker_line.tag), broker.node_id))
        for line in out:
            self.findings.add(
                _NOT_ALLOWED,
                owner,
                "create",
                t,
                line.tag,
                broker.node_id,
                counts=line is broker_line,
            )
        return out

    def _check(self, token: Token | None, actor: str, t: int) -> int:
        """Kafka's error for a renew / expire (0 = accepted)."""
        if token is None or token.removed:
            return 62
        allowed = actor == token.owner or actor in token.renewers
        expired = token.max_ms < t or token.expiry_ms < t
        if self.kraft:
            return 66 if expired else (0 if allowed else 63)
        return 0 if allowed and not expired else (63 if not allowed else 66)

    def _renew(self, t: int, token_id: str, actor: str, address: str, period: int) -> list[LogLine]:
        token = self.tokens[token_id]
        if self._near(token, t):
            return []
        broker = self.rng.choice(self.brokers)
        error = self._check(token, actor, t)
        if error == 0:
            effective = (
                self.expiry_cfg
                if period < 0
                else (min(self.expiry_cfg, period) if self.kraft else period)
            )
            token.expiry_ms = min(token.max_ms, t + effective)
            token.renew_count += 1
        request = {"hmac": token.hmac_b64, "renewPeriodMs": period}
        response = {
            "errorCode": error,
            "expiryTimestampMs": token.expiry_ms if error == 0 else -1,
            "throttleTimeMs": 0,
        }
        out = []
        if error == 0 and not self.kraft:
            out.append(
                self.manager_line(
                    t,
                    broker,
                    f"Delegation token renewed for token: {token_id} for owner: {token.owner}",
                    "mgr",
                )
            )
        out += self.request_lines(
            t,
            broker,
            "renew",
            actor,
            address,
            request,
            response,
            f"token-client-{actor.split(':', 1)[1]}",
        )
        self._record(token, t, actor, "renew", error, out, broker, period, response)
        return out

    def _record(  # noqa: PLR0917
        self,
        token: Token,
        t: int,
        actor: str,
        op: str,
        error: int,
        out: list[LogLine],
        broker: Node,
        period: int,
        response: dict[str, Any],
    ) -> None:
        """History entry and rejection finding of a renew / expire (the broker's line)."""
        broker_line = out[-1]
        observed = int(response["expiryTimestampMs"])
        new_expiry = token.expiry_ms if error == 0 else None
        quirk = op == "expire" and error == 0 and observed < 0
        self.history(
            token,
            t,
            broker_line.tag,
            actor=actor,
            operation=op,
            error_code=error,
            error_code_name=ERROR_NAMES[error],
            requested_period_ms=period,
            observed_expiry_ms=observed,
            expected_expiry_ms=new_expiry,
            new_expiry_ts=new_expiry,
            expected_error_code=error,
            check="kraft_negative_expiry" if quirk else "ok",
            node_id=broker.node_id,
        )
        if error in _REJECTIONS:
            self.findings.add(
                _REJECTIONS[error],
                actor,
                f"{op} {token.token_id}",
                t,
                broker_line.tag,
                broker.node_id,
            )

    def _expire(
        self, t: int, token_id: str, actor: str, address: str, lagging: bool = False
    ) -> list[LogLine]:
        """An expire-now by the owner; ``lagging``: a renewer that missed it renews 1-3 min
        later (DELEGATION_TOKEN_NOT_FOUND)."""
        token = self.tokens[token_id]
        if token.removed or self._near(token, t) or token.expiry_ms < t:
            return []  # an expire-now of an expired token answers per version: not simulated
        broker = self.rng.choice(self.brokers)
        error = self._check(token, actor, t)
        observed = -1
        if error == 0:
            token.removed, token.ended_by, token.ended_ms = True, "expire", t
            token.expiry_ms = t
            negative = (
                self.kraft
                and self.controller is not None
                and (3, 6) <= version_tuple(self.controller.kafka_version) < (4, 0)
            )
            observed = -1 if negative else t
        request = {"hmac": token.hmac_b64, "expiryTimePeriodMs": -1}
        response = {"errorCode": error, "expiryTimestampMs": observed, "throttleTimeMs": 0}
        out = []
        if error == 0 and not self.kraft:
            out.append(
                self.manager_line(
                    t,
                    broker,
                    f"Token expired for token: {token_id} for owner: {token.owner}",
                    "mgr",
                )
            )
        out += self.request_lines(
            t,
            broker,
            "expire",
            actor,
            address,
            request,
            response,
            f"token-client-{actor.split(':', 1)[1]}",
        )
        self._record(token, t, actor, "expire", error, out, broker, -1, response)
        if lagging and error == 0:
            self.schedule(
                t + self.rng.randrange(60, 180) * 1000,
                "renew",
                token_id=token_id,
                actor=RENEWER,
                address="10.30.0.7",
                period=-1,
            )
        return out

    @staticmethod
    def _near(token: Token, t: int) -> bool:
        """A live token whose expiry or max timestamp is within CLOCK_MARGIN_MS of ``t``."""
        return not token.removed and (
            abs(token.expiry_ms - t) <= CLOCK_MARGIN_MS or abs(token.max_ms - t) <= CLOCK_MARGIN_MS
        )

    def _late_renew(self, t: int, token_id: str) -> list[LogLine]:
        """An abandoned token: sometimes the renewer's schedule fires once more after the
        expiry (expired: 66, or already swept: 62)."""
        token = self.tokens[token_id]
        if token.removed or self.rng.random() >= 0.35:
            return []
        at = max(t, token.expiry_ms) + self.rng.randrange(2, 6) * 60_000
        self.schedule(at, "renew", token_id=token_id, actor=RENEWER, address="10.30.0.7", period=-1)
        return []

    def _intruder(self, t: int) -> list[LogLine]:
        """A principal that found a leaked HMAC tries to renew that token (63)."""
        live = [
            k
            for k, v in self.tokens.items()
            if not v.removed and v.expiry_ms > t + 300_000 and v.owner != CI_RUNNER
        ]
        if not live:
            return []
        token_id = self.rng.choice(sorted(live))
        return self._renew(t, token_id, INTRUDER, "10.77.0.3", self.expiry_cfg)

    def _sweep(self, t: int) -> list[LogLine]:
        """The expiry sweeper (``expireTokens``): the ZooKeeper controller broker's token
        manager, or the KRaft active controller's ``DelegationTokenControlManager``."""
        out = []
        for token in self.tokens.values():
            if token.removed or not (token.expiry_ms < t or token.max_ms < t):
                continue
            token.removed, token.ended_by, token.ended_ms = True, "sweep", t
            text = f"Delegation token expired for token: {token.token_id} for owner: {token.owner}"
            node = self.sweeper
            if self.kraft:
                line = LogLine(
                    t,
                    node.name,
                    "controller",
                    "INFO",
                    "org.apache.kafka.controller.DelegationTokenControlManager",
                    f"[QuorumController id={node.node_id}] {text}",
                    tag=self.tag("sweep"),
                )
            else:
                line = self.manager_line(t, node, text, "sweep")
            out.append(line)
            self.history(
                token,
                t,
                line.tag,
                operation="sweep",
                source="token_manager",
                metadata_mode="kraft" if self.kraft else "zookeeper",
                node_id=node.node_id,
            )
        return out

    def _describe(self, t: int, requester: str, address: str, own: bool) -> list[LogLine]:
        broker = self.rng.choice(self.brokers)
        listed = [
            tk
            for tk in self.tokens.values()
            if not tk.removed and (not own or tk.owner == requester)
        ]
        listed.sort(key=lambda tk: (tk.issue_ms, tk.token_id))
        request = {"owners": [_principal_json(requester)] if own else None}
        entries = []
        for tk in listed:
            o, r = _principal_json(tk.owner), _principal_json(tk.requester)
            entries.append(
                {
                    **o,
                    "tokenRequesterPrincipalType": r["principalType"],
                    "tokenRequesterPrincipalName": r["principalName"],
                    "issueTimestamp": tk.issue_ms,
                    "expiryTimestamp": tk.expiry_ms,
                    "maxTimestamp": tk.max_ms,
                    "tokenId": tk.token_id,
                    "hmac": tk.hmac_b64,
                    "renewers": [_principal_json(x) for x in tk.renewers],
                }
            )
        response = {"errorCode": 0, "tokens": entries, "throttleTimeMs": 0}
        out = self._describe_checks(t, broker, requester, address, listed)
        out += self.request_lines(
            t,
            broker,
            "describe",
            requester,
            address,
            request,
            response,
            f"token-client-{requester.split(':', 1)[1]}",
        )
        line = out[-1]
        for tk in listed:
            tk.seen.append(t)
            if requester != tk.owner and requester not in tk.renewers:
                self.findings.add(_DESCRIBE, requester, tk.token_id, t, line.tag, broker.node_id)
        return out

    def _describe_checks(
        self, t: int, broker: Node, requester: str, address: str, listed: list[Token]
    ) -> list[LogLine]:
        """Authorizer lines of a describe: per token the requester neither owns nor renews,
        DESCRIBE on ``DelegationToken:<id>``, allowed by the auditor's wildcard ACL
        (``kafka-acls --delegation-token '*' --operation Describe``); StandardAuthorizer wording
        on KRaft (rule ``MatchingAcl``), AclAuthorizer's on ZooKeeper. Allowed lines are DEBUG."""
        out = []
        for tk in listed:
            if requester == tk.owner or requester in tk.renewers:
                continue
            resource = f"DelegationToken:LITERAL:{tk.token_id}"
            if self.kraft:
                rule = (
                    "MatchingAcl(acl=StandardAcl(resourceType=DELEGATION_TOKEN, resourceName=*, "
                    f"patternType=LITERAL, principal={requester}, host=*, operation=DESCRIBE, "
                    "permissionType=ALLOW))"
                )
                text = (
                    f"Principal = {requester} is Allowed operation = DESCRIBE from host = "
                    f"{address} on resource = {resource} for request = DescribeDelegationToken "
                    f"with resourceRefCount = 1 based on rule {rule}"
                )
            else:
                text = (
                    f"Principal = {requester} is Allowed Operation = Describe from host = "
                    f"{address} on resource = {resource} for request = DescribeDelegationToken "
                    "with resourceRefCount = 1"
                )
            out.append(
                LogLine(
                    t,
                    broker.name,
                    "authorizer",
                    "DEBUG",
                    AUTHORIZER_LOGGER,
                    text,
                    tag=self.tag("authz"),
                )
            )
            self.truth.metric_event(
                "authorization-allowed-rate-per-minute", t, broker.node_id, principal=requester
            )
        return out

    # -- truth ----------------------------------------------------------------------------------

    def finish(self) -> None:
        self._burst_findings()
        self.findings.emit(self.truth)
        # The state as of the pipeline run's end (``context.as_of``): a daily run ends at the
        # UTC midnight after the world's end; world.settings['state_as_of_ms'] overrides.
        day = 86_400_000
        default = -(-self.world.end_ms // day) * day
        as_of = int(self.world.settings.get("state_as_of_ms", default))
        mode = "kraft" if self.kraft else "zookeeper"
        for token in self.tokens.values():
            if token.ended_by == "sweep":
                state, ended = "swept", token.ended_ms
            elif token.ended_by == "expire":
                state, ended = "expired_early", token.ended_ms
            elif token.expiry_ms < as_of or token.max_ms < as_of:
                state, ended = "expired", min(token.expiry_ms, token.max_ms)
            else:
                state, ended = "active", None
            self.truth.token(
                {
                    "token_key": token.token_id,
                    "token_id": token.token_id,
                    "owner": token.owner,
                    "requester": token.requester,
                    "renewers": list(token.renewers),
                    "metadata_mode": mode,
                    "issue_ts": token.issue_ms,
                    "max_ts": token.max_ms,
                    "expiry_ts": token.expiry_ms,
                    "max_lifetime_ms": token.max_ms - token.issue_ms,
                    "renew_count": token.renew_count,
                    "history": sorted(token.history, key=lambda h: (h["event_ts"], h["tag"] or "")),
                    "state": state,
                    "state_as_of_ts": as_of,
                    "ended_ts": ended,
                    "first_seen_ts": min(token.seen),
                    "last_seen_ts": max(token.seen),
                    "replay_mismatch_count": 0,
                    "hmac_verified": True,
                }
            )

    def _burst_findings(self) -> None:
        """``tokens.creation_burst``: CREATION_BURST_THRESHOLD or more CreateDelegationToken
        requests (any outcome, one per request) by one principal within
        CREATION_BURST_WINDOW_MS; count = the most in one window, times and evidence over all
        of the principal's creates."""
        for actor, rows in self.creates.items():
            times = sorted(r[0] for r in rows)
            most = max(
                sum(1 for x in times if t - CREATION_BURST_WINDOW_MS < x <= t) for t in times
            )
            if most < CREATION_BURST_THRESHOLD:
                continue
            key = (*_BURST, actor, "")
            group = self.findings.groups[key]
            for ts, tag, node_id in rows:
                group.times.append(ts)
                group.tags.append(tag)
                group.nodes.add(node_id)
            group.count = most
