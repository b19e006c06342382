"""Thresholds and switches of the gold rules: the ``[rules.<area>]`` tables, one frozen
dataclass per area, validated when the config file is loaded (``jobs.config``), long before
Spark starts.

Each field's type carries its constraint (``Annotated`` with pydantic's ``Strict`` and
``Field``), so the file loader, the published JSON schema (docs/config.schema.json) and a
direct construction (``TokenRules(metadata_mode="etcd")``) apply the same rules. Fields, defaults
and their sources are documented in docs/rules-*.md and docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    with_config,
)

from jobs.errors import ConfigError
from transforms.auth_links import HANDSHAKE_MAX_GAP_MS, IDLE_MS, PAIRING_WINDOW_MS
from transforms.gold.kip368_reauth.config import DEFAULT_CAPABILITIES, parse_capabilities

MINUTE_MS = 60_000

#: Unknown keys are errors; each field says itself how strict it is (an array of TOML is a list,
#: which a strict tuple would refuse).
RULES_CONFIG = ConfigDict(extra="forbid")

#: A duration in ms, 0 allowed (a tolerance, a grace, a gap).
Millis = Annotated[int, Strict(), Field(ge=0)]
#: A window in ms or a count of events: at least 1.
PositiveInt = Annotated[int, Strict(), Field(ge=1)]


def _capability(entry: str) -> str:
    """``entry`` if it reads ``name>=1.2.3`` or ``name=never``; else ValueError."""
    parse_capabilities([entry])
    return entry


Capability = Annotated[str, Strict(), AfterValidator(_capability)]
#: ``auto`` and the two values of ``schemas.token_events`` (MODE_ZOOKEEPER, MODE_KRAFT).
MetadataMode = Literal["auto", "zookeeper", "kraft"]
METADATA_MODES: tuple[str, ...] = typing.get_args(MetadataMode)


#: Validators built once per class (a pydantic TypeAdapter takes about a millisecond to build).
_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}
_FIELD_ADAPTERS: dict[type[Any], dict[str, TypeAdapter[Any]]] = {}


def _field_adapters(cls: type[Any]) -> dict[str, TypeAdapter[Any]]:
    if cls not in _FIELD_ADAPTERS:
        hints = typing.get_type_hints(cls, include_extras=True)
        fields = dataclasses.fields(cls)
        _FIELD_ADAPTERS[cls] = {f.name: TypeAdapter(hints[f.name]) for f in fields}
    return _FIELD_ADAPTERS[cls]


class _CheckedFields:
    """Base of the rule dataclasses: a direct construction checks each field's type and bounds
    (the file loader checks them before constructing, with the file's name in the message).

    Raises:
        ConfigError: ``<Class>.<field>: <what was expected>``, one line.
    """

    def __post_init__(self) -> None:
        for name, adapter in _field_adapters(type(self)).items():
            value = getattr(self, name)
            try:
                adapter.validate_python(value)
            except ValidationError as error:
                detail = error.errors(include_url=False)[0]["msg"]
                raise ConfigError(
                    f"{type(self).__name__}.{name}: {detail} (got {value!r})"
                ) from error


@with_config(RULES_CONFIG)
@dataclass(frozen=True)
class ReauthRules(_CheckedFields):
    """``[rules.reauth]``.

    Attributes:
        readiness_candidates_ms: candidate ``connections.max.reauth.ms`` values for the
            what-if (default 15 min, 1 h, 8 h, 24 h).
        capabilities: which client software re-authenticates, ``name>=version`` or
            ``name=never`` (``transforms.gold.kip368_reauth.config.DEFAULT_CAPABILITIES``); replaces
            the default table when given.
        handshake_max_gap_ms: DEBUG lines of a handshake are at most this much older than
            its outcome line.
        pairing_window_ms: a connection's first request follows its authentication line
            within this (a client sends its first request right after authenticating).
        idle_ms: ``connections.max.idle.ms`` (Kafka's default 10 min): a connection silent
            that long is closed by the broker.
        failed_reauth_threshold: failed re-authentications per client address, broker and
            day that make a finding.
    """

    readiness_candidates_ms: tuple[PositiveInt, ...] = (
        15 * MINUTE_MS,
        60 * MINUTE_MS,
        8 * 60 * MINUTE_MS,
        24 * 60 * MINUTE_MS,
    )
    capabilities: tuple[Capability, ...] = DEFAULT_CAPABILITIES
    # The replay's own defaults (transforms.gold.kip368_reauth.sessions.ReplayWindows), once.
    handshake_max_gap_ms: Millis = HANDSHAKE_MAX_GAP_MS
    pairing_window_ms: Millis = PAIRING_WINDOW_MS
    idle_ms: Millis = IDLE_MS
    failed_reauth_threshold: PositiveInt = 3


@with_config(RULES_CONFIG)
@dataclass(frozen=True)
class TokenRules(_CheckedFields):
    """``[rules.tokens]``.

    Attributes:
        creation_burst_threshold: CreateDelegationToken requests by one principal within
            ``creation_burst_window_ms`` that make a ``tokens.creation_burst`` finding.
        creation_burst_window_ms: the sliding window, ms (default 1 h).
        lifetime_factor: a token seen alive more than this many times the cluster's
            ``delegation.token.max.lifetime.ms`` after issue is ``tokens.lifetime_exceeds_max``.
        metadata_mode: 'auto' (from ``process.roles`` / ``zookeeper.connect`` or the lines),
            'zookeeper' or 'kraft': whose renew / check-order rules the replay applies.
        clock_tolerance_ms: how far a log line's time may be from Kafka's ``now`` (processing,
            forwarding, clock skew) before an observed expiry disagrees with the rule.
    """

    creation_burst_threshold: PositiveInt = 10
    creation_burst_window_ms: PositiveInt = 3_600_000
    lifetime_factor: Annotated[float, Strict(), Field(gt=0)] = 1.5
    metadata_mode: MetadataMode = "auto"
    clock_tolerance_ms: Millis = 60_000


@with_config(RULES_CONFIG)
@dataclass(frozen=True)
class ForwardingRules(_CheckedFields):
    """``[rules.forwarding]``.

    Attributes:
        pairing_tolerance_ms: the largest time between a broker's line and the controller's
            line of one forwarded request. Default 30 s: the broker's forwarding channel gives
            up after ``request.timeout.ms`` (default 30000), so a pair further apart cannot be
            one request (``ForwardingManager``, ``NodeToControllerChannelManager``).
    """

    pairing_tolerance_ms: Millis = 30_000


@with_config(RULES_CONFIG)
@dataclass(frozen=True)
class ConnectRules(_CheckedFields):
    """``[rules.connect]``.

    Attributes:
        stale_key_grace_ms: a worker's 403 at most this long after the first request of its
            retry episode is expected churn (KIP-507; ``DistributedHerder.
            isPossibleExpiredKeyException``: ``TimeUnit.MINUTES.toMillis(1)``). Leader view only:
            the follower's own stale-key line already applies Kafka's one minute.
        retry_gap_ms: a pause longer than this between a caller's requests for one connector
            and endpoint starts a new retry episode (default: twice the 60 s maximum backoff,
            ``RECONFIGURE_CONNECTOR_TASKS_BACKOFF_MAX_MS``).
        rotation_tolerance_ms: a session-key interval further than this from the worker's
            ``inter.worker.key.ttl.ms`` is off schedule.
        worker_user_agent: the User-Agent of worker-to-worker requests (``RestClient``).
    """

    stale_key_grace_ms: Millis = 60_000
    retry_gap_ms: Millis = 120_000
    rotation_tolerance_ms: Millis = 60_000
    worker_user_agent: Annotated[str, Strict(), Field(min_length=1)] = "kafka-connect"


@with_config(RULES_CONFIG)
@dataclass(frozen=True)
class AuthorizerRules(_CheckedFields):
    """``[rules.authorizer]``.

    Attributes:
        denial_burst_threshold: this many denials of one principal on one resource ...
        denial_burst_window_ms: ... within this many ms make a burst. Kafka has no such
            threshold; 10 in 60 s is the project's default, above the few denials a client
            logs for one refused operation (a client does not retry an authorization error).
    """

    denial_burst_threshold: PositiveInt = 10
    denial_burst_window_ms: PositiveInt = 60_000


class RulesTables(BaseModel):
    """``[rules.<area>]``: thresholds of the audit rules, one optional table per area
    (docs/rules-*.md). An unknown area or key is an error."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, defer_build=True
    )

    reauth: ReauthRules = Field(default_factory=ReauthRules)
    """KIP-368 SASL re-authentication (docs/rules-reauth.md)."""
    tokens: TokenRules = Field(default_factory=TokenRules)
    """KIP-48 delegation tokens (docs/rules-tokens.md)."""
    forwarding: ForwardingRules = Field(default_factory=ForwardingRules)
    """KIP-590 request forwarding (docs/rules-forwarding-authorizer.md)."""
    connect: ConnectRules = Field(default_factory=ConnectRules)
    """KIP-507 Connect internal request signing (docs/rules-connect.md)."""
    authorizer: AuthorizerRules = Field(default_factory=AuthorizerRules)
    """KIP-801 StandardAuthorizer (docs/rules-forwarding-authorizer.md)."""


def rules_adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """The pydantic validator of a rules dataclass, built once: ``validate_python(table)``
    returns the instance or raises ``pydantic.ValidationError``."""
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]
