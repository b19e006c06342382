"""Gold area 'forwarding': KIP-590 forwarding (docs/rules-forwarding-authorizer.md).

Table ``forwarded_requests`` (date-partitioned), the ``forwarding.*`` findings and the
``forwarded-requests-total`` / ``forwarding-failures-total`` metric rows, from silver
``request_events`` and ``authz_decisions`` and the nodes' ``process.roles``. The logic and the
finding rules are in ``transforms.gold.kip590_forwarding``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable, Reduction, reduced
from jobs.rules import ForwardingRules
from schemas import authz_decisions, request_events
from schemas import forwarded_requests as fr
from transforms.gold import kip590_forwarding as forwarding
from transforms.gold.metrics import windowed_counts

#: The area's rules class lives in jobs.rules (checked when the config is loaded).
__all__ = ["FORWARDED", "REDUCTIONS", "ForwardingRules", "build", "forwarded"]


def forwarded(context: GoldContext) -> DataFrame:
    """The ``forwarded_requests`` rows (``transforms.gold.kip590_forwarding.forwarded_requests``)
    of the lake's request log, paired under ``[rules.forwarding]``.

    Raises:
        ConfigError: an unknown or mistyped ``[rules.forwarding]`` key.
    """
    rules = area_rules(context.config, "forwarding", ForwardingRules)
    return forwarding.forwarded_requests(
        context.silver[request_events.TABLE_NAME],
        context.node_properties,
        tolerance_ms=rules.pairing_tolerance_ms,
        window=context.window,
        run_id=context.config.run_id,
    )


#: The ``forwarded_requests`` table's rows: a few out of every request row.
FORWARDED = "forwarded_requests"

#: This builder's whole-lake reductions (``jobs.gold.context.Reduction``).
REDUCTIONS: dict[str, Reduction] = {FORWARDED: forwarded}


def build(context: GoldContext) -> GoldOutput:
    """Plan the 'forwarding' area (KIP-590): the ``forwarded_requests`` table, the findings
    ``forwarding.envelope_cluster_action_denied`` (high) and ``forwarding.principal_mismatch``
    (medium), and the forwarding metrics.

    Reads ``context.silver['request_events']`` and ``['authz_decisions']``,
    ``context.node_properties`` (``process.roles``), the lake's evidence window, and
    ``[rules.forwarding]`` as :class:`ForwardingRules`.

    Raises:
        ConfigError: an unknown or mistyped ``[rules.forwarding]`` key.
    """
    run_id = context.config.run_id
    # The table, two findings and the metrics read it.
    table, owned = reduced(context, FORWARDED, REDUCTIONS[FORWARDED])
    findings = forwarding.forwarding_findings(
        table, context.silver[authz_decisions.TABLE_NAME], run_id
    )
    metrics = windowed_counts(forwarding.forwarding_metric_events(table), run_id)
    return GoldOutput(
        tables=(
            PlannedTable(
                name=fr.TABLE_NAME,
                df=table,
                schema=fr.FORWARDED_REQUESTS,
                partition_by=fr.PARTITION_COLUMNS,
            ),
        ),
        findings=findings,
        metrics=(metrics,),
        cached=owned,
    )
