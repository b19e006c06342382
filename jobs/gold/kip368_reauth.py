"""Gold builder for KIP-368 re-authentication: ``reauth_sessions``, ``reauth_readiness``, the
re-authentication metrics and findings (area ``[rules.reauth]``)."""

from __future__ import annotations

from dataclasses import dataclass

from jobs.config import area_rules
from jobs.errors import ConfigError
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable
from jobs.reuse import reused
from schemas import auth_events, request_events
from schemas import reauth_readiness as readiness_schema
from schemas import reauth_sessions as sessions_schema
from transforms.frames import local_frame
from transforms.gold.kip368_reauth.config import (
    DEFAULT_CAPABILITIES,
    capabilities_frame,
    parse_capabilities,
)
from transforms.gold.kip368_reauth.outputs import readiness, reauth_findings, reauth_metrics
from transforms.gold.kip368_reauth.replay import connections
from transforms.gold.kip368_reauth.sessions import ReplayWindows, replay

MINUTE_MS = 60_000


@dataclass(frozen=True)
class ReauthRules:
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

    readiness_candidates_ms: tuple[int, ...] = (
        15 * MINUTE_MS,
        60 * MINUTE_MS,
        8 * 60 * MINUTE_MS,
        24 * 60 * MINUTE_MS,
    )
    capabilities: tuple[str, ...] = DEFAULT_CAPABILITIES
    # The replay's own defaults (transforms.gold.kip368_reauth.sessions.ReplayWindows), once.
    handshake_max_gap_ms: int = ReplayWindows().handshake_max_gap_ms
    pairing_window_ms: int = ReplayWindows().pairing_window_ms
    idle_ms: int = ReplayWindows().idle_ms
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
    """Plan the KIP-368 replay for the run (``transforms.gold.kip368_reauth.replay*``).

    Reads silver ``auth_events`` and ``request_events`` (every day of the lake) and the nodes'
    ``connections.max.reauth.ms`` and ``listeners``. Sessions that cross midnight are replayed
    whole from silver: no session is continued from an earlier run's rows.
    """
    rules = rules_of(context)
    run_id = context.config.run_id
    auth = context.silver[auth_events.TABLE_NAME]
    requests = context.silver[request_events.TABLE_NAME]
    # Read in six places by the replay: the request log is aggregated once.
    conns = reused(connections(requests))
    result = replay(
        auth,
        conns,
        context.node_properties,
        local_frame(context.spark, [], sessions_schema.REAUTH_SESSIONS),
        capabilities_frame(context.spark, rules.capabilities),
        windows=ReplayWindows(rules.handshake_max_gap_ms, rules.pairing_window_ms, rules.idle_ms),
        as_of=context.as_of,
        run_id=run_id,
    )
    # Read by the table, the readiness, the metrics and the findings: computed once.
    sessions_df = reused(result.sessions)
    readiness_df = readiness(sessions_df, requests, rules.readiness_candidates_ms, run_id)
    return GoldOutput(
        tables=(
            PlannedTable(
                sessions_schema.TABLE_NAME,
                sessions_df,
                sessions_schema.REAUTH_SESSIONS,
                sessions_schema.PARTITION_COLUMNS,
            ),
            PlannedTable(
                readiness_schema.TABLE_NAME,
                readiness_df,
                readiness_schema.REAUTH_READINESS,
                readiness_schema.PARTITION_COLUMNS,
            ),
        ),
        findings=tuple(
            reauth_findings(sessions_df, result.handshakes, rules.failed_reauth_threshold, run_id)
        ),
        metrics=(reauth_metrics(sessions_df, result.kills, run_id),),
        cached=(conns, sessions_df),
    )
