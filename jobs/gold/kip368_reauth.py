"""Gold builder for KIP-368 re-authentication: ``reauth_sessions``, ``reauth_readiness``, the
re-authentication metrics and findings (area ``[rules.reauth]``)."""

from __future__ import annotations

from jobs.config import area_rules
from jobs.errors import ConfigError
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable, Reduction, reduced
from jobs.reuse import reused
from jobs.rules import ReauthRules
from schemas import auth_events, request_events
from schemas import reauth_readiness as readiness_schema
from schemas import reauth_sessions as sessions_schema
from transforms.frames import local_frame
from transforms.gold.kip368_reauth.config import capabilities_frame, parse_capabilities
from transforms.gold.kip368_reauth.outputs import readiness, reauth_findings, reauth_metrics
from transforms.gold.kip368_reauth.replay import connections
from transforms.gold.kip368_reauth.sessions import ReplayWindows, replay

#: The area's rules class lives in jobs.rules (checked when the config is loaded).
__all__ = ["CONNECTIONS", "REDUCTIONS", "ReauthRules", "build", "rules_of"]


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


#: The request log's connections per broker (``transforms.auth_links.connections`` of silver
#: ``request_events``, every day of the lake): read in six places by the replay.
CONNECTIONS = "request_connections"

#: This builder's whole-lake reductions (``jobs.gold.context.Reduction``): its one scan of
#: every request row.
REDUCTIONS: dict[str, Reduction] = {
    CONNECTIONS: lambda context: connections(context.silver[request_events.TABLE_NAME]),
}


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
    conns, owned = reduced(context, CONNECTIONS, REDUCTIONS[CONNECTIONS])
    result = replay(
        auth,
        conns,
        context.node_properties,
        local_frame(context.spark, [], sessions_schema.REAUTH_SESSIONS),
        capabilities_frame(context.spark, rules.capabilities),
        windows=ReplayWindows(rules.handshake_max_gap_ms, rules.pairing_window_ms, rules.idle_ms),
        as_of=context.as_of,
        run_id=run_id,
        materialise=reused,
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
        cached=(*owned, result.handshakes, sessions_df),
    )
