"""Gold area 'authorizer': the KRaft StandardAuthorizer (KIP-801)
(docs/rules-forwarding-authorizer.md).

Table ``authorizer_readiness`` (date-partitioned) and the ``authorizer.*`` findings, from
silver ``authz_decisions`` and ``request_events``, bronze server-log lines (the authorizer's
start-up, endpoint readiness and ``AuthorizerNotReadyException`` lines are in no silver table)
and the nodes' configs. The logic and the finding rules are in
``transforms.gold.kip801_authorizer``.
"""

from __future__ import annotations

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable, Reduction, reduced
from jobs.rules import AuthorizerRules
from schemas import authorizer_readiness as ar
from schemas import authz_decisions, request_events
from transforms.gold import kip801_authorizer as authorizer

#: The area's rules class lives in jobs.rules (checked when the config is loaded).
__all__ = ["EVENTS", "REDUCTIONS", "AuthorizerRules", "build"]


#: The StandardAuthorizer's start-up lines (``transforms.gold.kip801_authorizer.readiness_events``):
#: a few lines of every node's log, out of the whole text of the lake (bronze).
EVENTS = "authorizer_readiness_events"

#: This builder's whole-lake reductions (``jobs.gold.context.Reduction``).
REDUCTIONS: dict[str, Reduction] = {
    EVENTS: lambda context: authorizer.readiness_events(context.bronze),
}


def build(context: GoldContext) -> GoldOutput:
    """Plan the 'authorizer' area (KIP-801): the ``authorizer_readiness`` table and the
    findings ``authorizer.super_user_not_in_config`` (high), ``authorizer.default_allow``
    (medium), ``authorizer.denial_burst`` (medium), ``authorizer.early_start_client_listener``
    (low) and ``authorizer.not_ready_request_failures`` (low).

    Reads ``context.silver['authz_decisions']`` and ``['request_events']``,
    ``context.bronze`` (server-log lines), ``context.node_properties`` (``super.users``,
    ``authorizer.class.name``, ``early.start.listeners``, ``controller.listener.names``) and
    ``[rules.authorizer]`` as :class:`AuthorizerRules`.

    Raises:
        ConfigError: an unknown or mistyped ``[rules.authorizer]`` key.
    """
    rules = area_rules(context.config, "authorizer", AuthorizerRules)
    run_id = context.config.run_id
    decisions = context.silver[authz_decisions.TABLE_NAME]
    # Read by the table and two findings.
    events, owned = reduced(context, EVENTS, REDUCTIONS[EVENTS])
    table = authorizer.readiness_windows(
        events, context.silver[request_events.TABLE_NAME], context.node_properties, run_id
    )
    findings = authorizer.authorizer_findings(
        decisions,
        events,
        context.node_properties,
        burst_threshold=rules.denial_burst_threshold,
        burst_window_ms=rules.denial_burst_window_ms,
        run_id=run_id,
    )
    return GoldOutput(
        tables=(
            PlannedTable(
                name=ar.TABLE_NAME,
                df=table,
                schema=ar.AUTHORIZER_READINESS,
                partition_by=ar.PARTITION_COLUMNS,
            ),
        ),
        findings=findings,
        cached=owned,
    )
