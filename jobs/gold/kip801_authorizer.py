"""Gold area 'authorizer': the KRaft StandardAuthorizer (KIP-801)
(docs/rules-forwarding-authorizer.md).

Table ``authorizer_readiness`` (date-partitioned) and the ``authorizer.*`` findings, from
silver ``authz_decisions`` and ``request_events``, bronze server-log lines (the authorizer's
start-up, endpoint readiness and ``AuthorizerNotReadyException`` lines are in no silver table)
and the nodes' configs. The logic is in ``transforms.gold.kip801_authorizer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import Column
from pyspark.sql import functions as F

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, GoldTable
from schemas import authorizer_readiness as ar
from schemas import authz_decisions, request_events
from transforms.findings import to_findings
from transforms.gold import kip801_authorizer as rules_

KIP = "KIP-801"


@dataclass(frozen=True)
class AuthorizerRules:
    """``[rules.authorizer]``.

    Attributes:
        denial_burst_threshold: this many denials of one principal on one resource ...
        denial_burst_window_ms: ... within this many ms make a burst. Kafka has no such
            threshold; 10 in 60 s is the project's default, above the few denials a client
            logs for one refused operation (a client does not retry an authorization error).
    """

    denial_burst_threshold: int = 10
    denial_burst_window_ms: int = 60_000


def _explain(template: str, *values: Column | str) -> Column:
    """``template`` filled with the values ('-' for null); str = a column name."""
    texts = [F.col(v) if isinstance(v, str) else v for v in values]
    return F.format_string(template, *[F.coalesce(t.cast("string"), F.lit("-")) for t in texts])


def _listed(name: str) -> Column:
    """An array column as 'a, b'; null when empty."""
    return F.nullif(F.concat_ws(", ", F.col(name)), F.lit(""))


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
    # A few lines of every node's log, read by the table and two findings: bronze (the whole
    # text of the lake) is scanned once.
    events = rules_.readiness_events(context.bronze).persist(StorageLevel.MEMORY_AND_DISK)
    table = rules_.readiness_windows(
        events, context.silver[request_events.TABLE_NAME], context.node_properties, run_id
    )
    plan = [
        (rules_.super_user_outside_config(decisions, context.node_properties),
         "authorizer.super_user_not_in_config", "high", "principal",
         _explain("%s was authorized as a super user %s time(s) on node %s, but that node's "
                  "super.users (%s) does not name it: the running configuration differs from "
                  "the audited config file", "subject", "count", "node_id", "super_users")),
        (rules_.default_allows(decisions),
         "authorizer.default_allow", "medium", "principal",
         _explain("%s was allowed %s (%s time(s)) on %s by DefaultAllow: no ACL exists for the "
                  "resource and allow.everyone.if.no.acl.found=true grants it to everyone",
                  "subject", _listed("operations"), "count", "discriminator")),
        (rules_.denial_bursts(decisions, rules.denial_burst_threshold,
                              rules.denial_burst_window_ms),
         "authorizer.denial_burst", "medium", "principal",
         _explain(f"%s was denied %s time(s) on %s in bursts of at least "
                  f"{rules.denial_burst_threshold} within {rules.denial_burst_window_ms} ms "
                  "(peak %s): a misconfigured client or someone probing ACLs",
                  "subject", "count", "discriminator", "peak")),
        (rules_.early_client_listeners(events, context.node_properties),
         "authorizer.early_start_client_listener", "low", "listener",
         _explain("listener %s on node %s served requests before the StandardAuthorizer loaded "
                  "its ACLs (loaded at %s): it is in early.start.listeners but is not a "
                  "controller listener", "subject", "node_id", "loaded_ts")),
        (rules_.not_ready_failures(events),
         "authorizer.not_ready_request_failures", "low", "principal",
         _explain("%s request(s) of %s (%s) on listener(s) %s of node %s failed with "
                  "AuthorizerNotReadyException (UNKNOWN_SERVER_ERROR): the ACLs were not loaded "
                  "yet", "count", "subject", _listed("apis"), _listed("listeners"), "node_id")),
    ]  # fmt: skip
    findings = tuple(
        to_findings(
            candidates,
            rule_id=rule_id,
            kip=KIP,
            severity=severity,
            subject_type=subject_type,
            explanation=explanation,
            run_id=run_id,
        )
        for candidates, rule_id, severity, subject_type, explanation in plan
    )
    return GoldOutput(
        tables=(
            GoldTable(
                name=ar.TABLE_NAME,
                df=table,
                schema=ar.AUTHORIZER_READINESS,
                partition_by=ar.PARTITION_COLUMNS,
            ),
        ),
        findings=findings,
        cached=(events,),
    )
