"""Gold builder for KIP-368 re-authentication: ``reauth_sessions``, ``reauth_readiness``, the
re-authentication metrics and findings (area ``[rules.reauth]``)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import functions as F

from jobs.config import area_rules
from jobs.errors import ConfigError
from jobs.gold import GoldContext, GoldOutput, GoldTable
from schemas import auth_events, request_events
from schemas import reauth_readiness as readiness_schema
from schemas import reauth_sessions as sessions_schema
from transforms.reauth import (
    attach_to_connections,
    connections,
    handshakes,
    pair_initial_authentications,
)
from transforms.reauth_config import (
    DEFAULT_CAPABILITIES,
    capabilities_frame,
    listener_ports,
    max_reauth_config,
    parse_capabilities,
)
from transforms.reauth_gold import kills, readiness, reauth_findings, reauth_metrics
from transforms.reauth_sessions import session_starts, sessions

MINUTE_MS = 60_000


@dataclass(frozen=True)
class ReauthRules:
    """``[rules.reauth]``.

    Attributes:
        readiness_candidates_ms: candidate ``connections.max.reauth.ms`` values for the
            what-if (default 15 min, 1 h, 8 h, 24 h).
        capabilities: which client software re-authenticates, ``name>=version`` or
            ``name=never`` (``transforms.reauth_config.DEFAULT_CAPABILITIES``); replaces
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

    readiness_candidates_ms: tuple[int, ...] = (
        15 * MINUTE_MS,
        60 * MINUTE_MS,
        8 * 60 * MINUTE_MS,
        24 * 60 * MINUTE_MS,
    )
    capabilities: tuple[str, ...] = DEFAULT_CAPABILITIES
    handshake_max_gap_ms: int = 1_000
    pairing_window_ms: int = 60_000
    idle_ms: int = 10 * MINUTE_MS
    failed_reauth_threshold: int = 3


def rules_of(context: GoldContext) -> ReauthRules:
    """The run's ``[rules.reauth]``, validated. Raises: ConfigError."""
    rules = area_rules(context.config, "reauth", ReauthRules)
    try:
        parse_capabilities(rules.capabilities)
    except ValueError as error:
        raise ConfigError(f"[rules.reauth].capabilities: {error}") from error
    if any(not isinstance(v, int) or v <= 0 for v in rules.readiness_candidates_ms):
        raise ConfigError("[rules.reauth].readiness_candidates_ms: positive integers (ms)")
    return rules


def build(context: GoldContext) -> GoldOutput:
    """Plan the KIP-368 replay for the run (``transforms.reauth*``).

    Reads silver ``auth_events`` and ``request_events``, the nodes' ``connections.max.reauth.ms``
    and ``listeners``, and the previous run's ``reauth_sessions`` still open at its end.
    """
    rules = rules_of(context)
    run_id = context.config.run_id
    auth = context.silver[auth_events.TABLE_NAME]
    requests = context.silver[request_events.TABLE_NAME]
    shakes = handshakes(auth, rules.handshake_max_gap_ms)
    conns = connections(requests)
    pairs = pair_initial_authentications(shakes, conns, rules.pairing_window_ms)
    reauth_ok = attach_to_connections(
        shakes.where(F.col("event_type") == auth_events.EVENT_REAUTHENTICATION_SUCCEEDED),
        conns,
        rules.idle_ms,
    )
    starts = session_starts(shakes, pairs, conns, reauth_ok)
    ports = listener_ports(context.node_properties)
    kill_lines = kills(auth, conns, ports)
    failed = attach_to_connections(
        shakes.where(F.col("event_type") == auth_events.EVENT_REAUTHENTICATION_FAILED),
        conns,
        rules.idle_ms,
    )
    position = F.array(F.struct("source_path", "line_number"))
    ends = kill_lines.select(
        "node_id",
        "connection_id",
        "peer_ip",
        "event_ts",
        F.lit("killed").alias("end_kind"),
        position.alias("evidence"),
    ).unionByName(
        failed.select(
            "node_id",
            "connection_id",
            "peer_ip",
            "event_ts",
            F.lit("failed_reauth").alias("end_kind"),
            position.alias("evidence"),
        )
    )
    previous = context.previous(sessions_schema.TABLE_NAME, sessions_schema.REAUTH_SESSIONS)
    previous_open = previous.where(F.col("outcome") == "open_at_window_end")
    if context.config.start is not None:
        previous_open = previous_open.where(
            F.col("activity_date") < F.lit(context.config.start.date())
        )
    sessions_df = sessions(
        starts,
        ends,
        conns,
        previous_open,
        config=max_reauth_config(context.node_properties),
        capabilities=capabilities_frame(context.spark, rules.capabilities),
        idle_ms=rules.idle_ms,
        as_of=context.as_of,
        run_id=run_id,
    ).persist(StorageLevel.MEMORY_AND_DISK)  # read by the table, readiness, metrics, findings
    readiness_df = readiness(sessions_df, requests, rules.readiness_candidates_ms, run_id)
    return GoldOutput(
        tables=(
            GoldTable(
                sessions_schema.TABLE_NAME,
                sessions_df,
                sessions_schema.REAUTH_SESSIONS,
                sessions_schema.PARTITION_COLUMNS,
            ),
            GoldTable(
                readiness_schema.TABLE_NAME,
                readiness_df,
                readiness_schema.REAUTH_READINESS,
                readiness_schema.PARTITION_COLUMNS,
            ),
        ),
        findings=tuple(reauth_findings(sessions_df, shakes, rules.failed_reauth_threshold, run_id)),
        metrics=(reauth_metrics(sessions_df, kill_lines, run_id),),
        cached=(sessions_df,),
    )
