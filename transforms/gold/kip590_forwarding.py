"""KIP-590 forwarding: pair the broker's and the controller's request-log lines of each
forwarded request into ``gold.forwarded_requests`` rows, and derive its metrics and findings
(the ``forwarding.*`` rules are declared at the end: :data:`RULES`).

Sources (apache/kafka): ``kafka.server.ForwardingManager`` (the broker wraps a forwardable
request in an ENVELOPE), ``kafka.server.KafkaApis.handleEnvelopeRequest`` /
``kafka.server.ControllerApis.handleEnvelopeRequest`` (the controller requires CLUSTER_ACTION
on the cluster, else CLUSTER_AUTHORIZATION_FAILED), ``kafka.server.EnvelopeUtils`` and
``RequestChannel.isForwarded`` (the controller logs the inner request with ``isForwarded:true``,
the client's header and principal, and the broker's connection), ``ApiKeys.forwardable``.
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import forwarded_requests as fr
from transforms.findings import FindingRule, evidence, finding_rule, listed, to_findings
from transforms.frames import union_by_name

#: ApiKeys whose ``forwardable`` flag is true (``ApiKeys.java`` at apache/kafka trunk, 2025).
FORWARDABLE_APIS: tuple[str, ...] = (
    "CREATE_TOPICS", "DELETE_TOPICS", "CREATE_ACLS", "DELETE_ACLS", "ALTER_CONFIGS",
    "CREATE_PARTITIONS", "CREATE_DELEGATION_TOKEN", "RENEW_DELEGATION_TOKEN",
    "EXPIRE_DELEGATION_TOKEN", "ELECT_LEADERS", "INCREMENTAL_ALTER_CONFIGS",
    "ALTER_PARTITION_REASSIGNMENTS", "LIST_PARTITION_REASSIGNMENTS", "ALTER_CLIENT_QUOTAS",
    "ALTER_USER_SCRAM_CREDENTIALS", "DESCRIBE_QUORUM", "UPDATE_FEATURES", "UNREGISTER_BROKER",
    "ALLOCATE_PRODUCER_IDS", "ADD_RAFT_VOTER", "REMOVE_RAFT_VOTER",
)  # fmt: skip
#: Errors code of CLUSTER_AUTHORIZATION_FAILED.
CLUSTER_AUTHORIZATION_FAILED = 31

_BROKER = {
    "source_path": "broker_source_path", "line_number": "broker_line_number",
    "node_id": "broker_id", "event_ts": "broker_ts", "principal": "principal",
    "remote_ip": "client_address", "remote_port": "client_port", "listener": "broker_listener",
    "error_code": "error_code", "error_code_name": "error_code_name",
    "total_time_ms": "broker_total_time_ms", "remote_time_ms": "broker_remote_time_ms",
    "client_software_name": "client_software_name",
    "client_software_version": "client_software_version",
    "client_id": "client_id", "correlation_id": "correlation_id",
    "api_key_name": "api_key_name", "api_version": "api_version",
}  # fmt: skip
_CONTROLLER = {
    "source_path": "controller_source_path", "line_number": "controller_line_number",
    "node_id": "controller_id", "event_ts": "controller_ts", "principal": "controller_principal",
    "remote_ip": "forwarding_broker_address", "listener": "controller_listener",
    "error_code": "controller_error_code", "error_code_name": "controller_error_code_name",
    "total_time_ms": "controller_total_time_ms", "client_id": "c_client_id",
    "correlation_id": "c_correlation_id", "api_key_name": "c_api_key_name",
    "api_version": "c_api_version",
}  # fmt: skip


def _renamed(df: DataFrame, names: dict[str, str]) -> DataFrame:
    return df.select(*[F.col(source).alias(target) for source, target in names.items()])


def _broker_lines(request_events: DataFrame, node_properties: DataFrame) -> DataFrame:
    """Client requests of forwardable APIs on KRaft brokers: ``process.roles`` of the node
    names ``broker``; a node without ``process.roles`` counts when the input holds any
    ``isForwarded:true`` line (the cluster forwards). Controller-only nodes are left out."""
    roles = (
        node_properties.where(F.col("property") == "process.roles")
        .groupBy("node_id")
        .agg(F.max("value").alias("_roles"))
    )
    forwards = request_events.agg(
        F.coalesce(F.max("is_forwarded"), F.lit(False)).alias("_forwards")
    )
    lines = (
        request_events.where(~F.col("is_forwarded") & F.col("api_key_name").isin(*FORWARDABLE_APIS))
        .join(roles, "node_id", "left")
        .crossJoin(F.broadcast(forwards))
    )
    kraft_broker = F.coalesce(F.col("_roles").contains("broker"), F.col("_forwards"))
    return _renamed(lines.where(kraft_broker), _BROKER)


def _pairs(broker: DataFrame, controller: DataFrame, tolerance_ms: int) -> DataFrame:
    """Mutually best candidates: same client id (null-safe), correlation id and API key, at
    most ``tolerance_ms`` apart; same principal first, then the smallest gap, then file
    order. One round: a line whose best candidate paired elsewhere stays unpaired."""
    gap = F.unix_millis("broker_ts") - F.unix_millis("controller_ts")
    on = (
        F.col("client_id").eqNullSafe(F.col("c_client_id"))
        & (F.col("correlation_id") == F.col("c_correlation_id"))
        & (F.col("api_key_name") == F.col("c_api_key_name"))
        & (F.abs(gap) <= tolerance_ms)
    )
    candidates = broker.join(controller, on).withColumns(
        {
            "pairing_gap_ms": gap,
            "_mismatch": ~F.col("principal").eqNullSafe(F.col("controller_principal")),
        }
    )
    score = [F.col("_mismatch"), F.abs(F.col("pairing_gap_ms"))]
    by_broker = Window.partitionBy("broker_source_path", "broker_line_number").orderBy(
        *score, "controller_source_path", "controller_line_number"
    )
    by_controller = Window.partitionBy("controller_source_path", "controller_line_number").orderBy(
        *score, "broker_source_path", "broker_line_number"
    )
    ranked = candidates.withColumns(
        {"_rb": F.row_number().over(by_broker), "_rc": F.row_number().over(by_controller)}
    )
    return ranked.where((F.col("_rb") == 1) & (F.col("_rc") == 1)).withColumns(
        {
            "record_type": F.lit(fr.RECORD_PAIRED),
            "principal_matches": ~F.col("_mismatch"),
        }
    )


def _reason(
    ts: Column,
    other_side_missing: Column,
    missing_reason: str,
    tolerance_ms: int,
    window: tuple[datetime | None, datetime | None],
) -> Column:
    start, end = window
    reason = F.when(ts.isNull(), F.lit(fr.REASON_NO_TIMESTAMP)).when(
        other_side_missing, F.lit(missing_reason)
    )
    if start is not None and end is not None:
        near_start = F.unix_millis(ts) - F.unix_millis(F.lit(start)) < tolerance_ms
        near_end = F.unix_millis(F.lit(end)) - F.unix_millis(ts) <= tolerance_ms
        reason = reason.when(near_start | near_end, F.lit(fr.REASON_OUTSIDE_WINDOW))
    return reason.otherwise(F.lit(fr.REASON_NO_MATCH))


def _envelopes(request_events: DataFrame) -> DataFrame:
    """ENVELOPE lines: logged only when the envelope itself failed."""
    return request_events.where(F.col("api_key_name") == "ENVELOPE").select(
        F.lit(fr.RECORD_ENVELOPE).alias("record_type"),
        "api_key_name",
        "api_version",
        F.col("envelope_principal").alias("principal"),
        F.col("envelope_client_address").alias("client_address"),
        F.col("envelope_principal_token_authenticated").alias("principal_token_authenticated"),
        F.col("remote_ip").alias("forwarding_broker_address"),
        F.col("principal").alias("envelope_sender_principal"),
        F.col("node_id").alias("controller_id"),
        F.col("listener").alias("controller_listener"),
        "error_code",
        "error_code_name",
        F.col("error_code").alias("controller_error_code"),
        F.col("error_code_name").alias("controller_error_code_name"),
        F.col("event_ts").alias("controller_ts"),
        F.col("total_time_ms").alias("controller_total_time_ms"),
        F.col("source_path").alias("controller_source_path"),
        F.col("line_number").alias("controller_line_number"),
    )


def _unpaired(
    side: DataFrame,
    pairs: DataFrame,
    key: list[str],
    counts: DataFrame,
    *,
    record_type: str,
    ts: str,
    other_side_missing: Column,
    missing_reason: str,
    tolerance_ms: int,
    window: tuple[datetime | None, datetime | None],
) -> DataFrame:
    """The lines of one side that no pair took (``key``: the side's file and line columns),
    with ``record_type`` and their ``unpaired_reason`` (:func:`_reason` over ``ts``);
    ``counts`` (_brokers, _controllers: one row) tells whether the other side is missing."""
    return (
        side.join(pairs.select(*key), key, "left_anti")
        .crossJoin(F.broadcast(counts))
        .withColumns(
            {
                "record_type": F.lit(record_type),
                "unpaired_reason": _reason(
                    F.col(ts), other_side_missing, missing_reason, tolerance_ms, window
                ),
            }
        )
    )


def forwarded_requests(
    request_events: DataFrame,
    node_properties: DataFrame,
    *,
    tolerance_ms: int,
    window: tuple[datetime | None, datetime | None],
    run_id: str,
) -> DataFrame:
    """Pair forwarded requests' broker and controller lines (KIP-590) into table rows.

    Args:
        request_events: silver.request_events rows (``schemas.request_events``).
        node_properties: ``schemas.node_properties`` rows (``process.roles`` is read).
        tolerance_ms: the largest |broker_ts - controller_ts| of a pair, ms.
        window: the run window [start, end) (UTC) or (None, None); an unpaired line within
            ``tolerance_ms`` of an edge gets reason 'outside_window'.
        run_id: the run.

    Input columns: request_events' is_forwarded, api_key_name, api_version, client_id,
        correlation_id, principal, remote_ip, remote_port, listener, error_code(_name),
        total_time_ms, remote_time_ms, client_software_*, envelope_*, node_id, event_ts,
        source_path, line_number.
    Output columns: exactly ``schemas.forwarded_requests.FORWARDED_REQUESTS``.

    Broker side: ``isForwarded:false`` lines of a forwardable API on a KRaft broker
    (``_broker_lines``); controller side: every ``isForwarded:true`` line. Unpaired lines keep
    their side's columns and a reason: 'no_timestamp', 'controller_logs_missing' (no
    ``isForwarded:true`` line in the input at all) / 'broker_logs_missing' (no broker-side line
    at all), 'outside_window', else 'no_match_in_tolerance'. Nothing raises; null keys never
    pair (except a null client id, which Kafka logs for header v0 on both sides).
    """
    broker = _broker_lines(request_events, node_properties)
    controller = _renamed(request_events.where(F.col("is_forwarded")), _CONTROLLER)
    pairs = _pairs(broker, controller, tolerance_ms)
    counts = broker.agg(F.count(F.lit(1)).alias("_brokers")).crossJoin(
        controller.agg(F.count(F.lit(1)).alias("_controllers"))
    )
    broker_only = _unpaired(
        broker, pairs, ["broker_source_path", "broker_line_number"], counts,
        record_type=fr.RECORD_BROKER_ONLY, ts="broker_ts",
        other_side_missing=F.col("_controllers") == 0,
        missing_reason=fr.REASON_CONTROLLER_LOGS_MISSING, tolerance_ms=tolerance_ms, window=window,
    )  # fmt: skip
    controller_only = _unpaired(
        controller,
        pairs,
        ["controller_source_path", "controller_line_number"],
        counts,
        record_type=fr.RECORD_CONTROLLER_ONLY,
        ts="controller_ts",
        other_side_missing=F.col("_brokers") == 0,
        missing_reason=fr.REASON_BROKER_LOGS_MISSING,
        tolerance_ms=tolerance_ms,
        window=window,
    ).withColumns(
        {
            "principal": F.col("controller_principal"),
            "client_id": F.col("c_client_id"),
            "correlation_id": F.col("c_correlation_id"),
            "api_key_name": F.col("c_api_key_name"),
            "api_version": F.col("c_api_version"),
        }
    )
    parts = [pairs, broker_only, controller_only, _envelopes(request_events)]
    return union_by_name([_shape(part, run_id) for part in parts])


def _shape(df: DataFrame, run_id: str) -> DataFrame:
    """The table's columns in order; columns a part does not have are null."""
    columns = []
    for field in fr.FORWARDED_REQUESTS.fields:
        if field.name == "run_id":
            value = F.lit(run_id)
        elif field.name == "event_date":
            value = F.to_date(F.coalesce(F.col("broker_ts"), F.col("controller_ts")))
        elif field.name in df.columns:
            value = F.col(field.name)
        else:
            value = F.lit(None)
        columns.append(value.cast(field.dataType).alias(field.name))
    return df.select(*columns)


def forwarding_metric_events(forwarded: DataFrame) -> DataFrame:
    """Events for ``transforms.gold.metrics.windowed_counts`` (kind 'total').

    Input: ``gold.forwarded_requests`` rows. Output columns: meter, kind, event_ts, broker_id,
    listener, mechanism, principal, api_key_name.

    * ``forwarded-requests``: one per forwarded request (paired, broker_only or controller_only
      row) at the broker's time, else the controller's; by forwarding broker (null when only the
      controller's line is known), broker listener, client principal and API.
    * ``forwarding-failures``: one per failed ENVELOPE (error code other than 0), by the node
      that refused it, its listener and the decoded client principal; API 'ENVELOPE'.

    Kafka itself has no such per-principal or per-API forwarding metric (only the broker's
    ``ForwardingManager`` queue and remote times); the names follow its ``-total`` style.
    Rows without a timestamp cannot be placed in a window and are left out.
    """
    requests = forwarded.where(F.col("record_type") != fr.RECORD_ENVELOPE).select(
        F.lit("forwarded-requests").alias("meter"),
        F.coalesce("broker_ts", "controller_ts").alias("event_ts"),
        "broker_id",
        F.col("broker_listener").alias("listener"),
        "principal",
        "api_key_name",
    )
    failures = forwarded.where(
        (F.col("record_type") == fr.RECORD_ENVELOPE) & (F.col("error_code") != 0)
    ).select(
        F.lit("forwarding-failures").alias("meter"),
        F.col("controller_ts").alias("event_ts"),
        F.col("controller_id").alias("broker_id"),
        F.col("controller_listener").alias("listener"),
        "principal",
        "api_key_name",
    )
    return (
        requests.unionByName(failures)
        .where(F.col("event_ts").isNotNull())
        .select(
            "meter",
            F.lit("total").alias("kind"),
            "event_ts",
            "broker_id",
            "listener",
            F.lit(None).cast("string").alias("mechanism"),
            "principal",
            "api_key_name",
        )
    )


def envelope_denials(forwarded: DataFrame, authz_decisions: DataFrame) -> DataFrame:
    """Candidate findings: ENVELOPEs refused for lack of CLUSTER_ACTION (KIP-590,
    ``KafkaApis.handleEnvelopeRequest``: ``Principal X does not have required CLUSTER_ACTION
    for envelope``), one row per sender principal and refusing node.

    Input: ``gold.forwarded_requests`` envelope rows with error 31 CLUSTER_AUTHORIZATION_FAILED,
    and ``authz_decisions`` log4j decisions DENIED CLUSTER_ACTION for request ``Envelope``.
    Output columns: subject (sender principal), discriminator (node id), node_id,
    first_seen_ts, last_seen_ts, count (long: the larger of the two sources' counts, since one
    refusal may be logged by both loggers), evidence, claimed_principals and
    claimed_addresses (array<string>: decoded from the envelopes, sorted).
    """
    from_requests = forwarded.where(
        (F.col("record_type") == fr.RECORD_ENVELOPE)
        & (F.col("error_code") == CLUSTER_AUTHORIZATION_FAILED)
    ).select(
        F.col("envelope_sender_principal").alias("subject"),
        F.col("controller_id").alias("node_id"),
        F.col("controller_ts").alias("ts"),
        F.col("controller_source_path").alias("source_path"),
        F.col("controller_line_number").alias("line_number"),
        F.col("principal").alias("claimed"),
        F.col("client_address").alias("address"),
        F.lit(1).alias("_request"),
    )
    from_authz = authz_decisions.where(
        (F.col("record_type") == "decision")
        & (F.col("source_format") == "log4j")
        & (F.col("decision") == "DENIED")
        & (F.col("operation") == "CLUSTER_ACTION")
        & (F.col("api_name") == "Envelope")
    ).select(
        F.col("principal").alias("subject"),
        "node_id",
        F.col("event_ts").alias("ts"),
        "source_path",
        "line_number",
        F.lit(None).cast("string").alias("claimed"),
        F.lit(None).cast("string").alias("address"),
        F.lit(0).alias("_request"),
    )
    both = from_requests.unionByName(from_authz)
    return (
        both.groupBy("subject", "node_id")
        .agg(
            F.min("ts").alias("first_seen_ts"),
            F.max("ts").alias("last_seen_ts"),
            F.greatest(F.sum("_request"), F.sum(1 - F.col("_request"))).cast("long").alias("count"),
            evidence().alias("evidence"),
            F.array_sort(F.collect_set("claimed")).alias("claimed_principals"),
            F.array_sort(F.collect_set("address")).alias("claimed_addresses"),
        )
        .withColumn("discriminator", F.col("node_id"))
    )


def principal_mismatches(forwarded: DataFrame) -> DataFrame:
    """Candidate findings: paired requests whose controller-side principal differs from the
    principal the broker authenticated (the broker forwarded another identity), per broker and
    principal pair.

    Output columns: subject (broker id, else its address as the controller saw it),
    discriminator ('<broker principal> -> <controller principal>'), node_id, first_seen_ts,
    last_seen_ts, count, evidence (both lines' positions).
    """
    rows = forwarded.where(
        (F.col("record_type") == fr.RECORD_PAIRED) & ~F.col("principal_matches")
    ).withColumns(
        {
            "subject": F.coalesce("broker_id", "forwarding_broker_address"),
            "discriminator": F.concat_ws(" -> ", "principal", "controller_principal"),
        }
    )
    sides = rows.select(
        "subject",
        "discriminator",
        "broker_id",
        F.col("broker_ts").alias("ts"),
        F.col("broker_source_path").alias("source_path"),
        F.col("broker_line_number").alias("line_number"),
        F.lit(1).alias("_n"),
    ).unionByName(
        rows.select(
            "subject",
            "discriminator",
            "broker_id",
            F.col("controller_ts").alias("ts"),
            F.col("controller_source_path").alias("source_path"),
            F.col("controller_line_number").alias("line_number"),
            F.lit(0).alias("_n"),
        )
    )
    return sides.groupBy("subject", "discriminator").agg(
        F.max("broker_id").alias("node_id"),
        F.min("ts").alias("first_seen_ts"),
        F.max("ts").alias("last_seen_ts"),
        F.sum("_n").cast("long").alias("count"),
        evidence().alias("evidence"),
    )


# --- finding rules (``transforms.findings``; docs/rules-forwarding-authorizer.md) ---

KIP = "KIP-590"

#: ENVELOPEs refused for lack of CLUSTER_ACTION (``KafkaApis.handleEnvelopeRequest`` /
#: ``ControllerApis.handleEnvelopeRequest``). Candidates: :func:`envelope_denials`.
ENVELOPE_CLUSTER_ACTION_DENIED = finding_rule(
    "forwarding.envelope_cluster_action_denied", KIP, "high", "principal",
    "%s sent %s ENVELOPE request(s) to node %s without CLUSTER_ACTION on the cluster "
    "(CLUSTER_AUTHORIZATION_FAILED): only brokers may forward, so a non-broker tried to act "
    "for client principal(s) %s from %s",
    "subject", "count", "node_id", listed("claimed_principals"), listed("claimed_addresses"),
)  # fmt: skip
#: A forwarded request's controller-side principal differs from its client's (the broker
#: asserts the identity: ``ForwardingManager``, ``EnvelopeUtils``). Candidates:
#: :func:`principal_mismatches`.
PRINCIPAL_MISMATCH = finding_rule(
    "forwarding.principal_mismatch", KIP, "medium", "node",
    "broker %s forwarded %s request(s) whose controller-side principal differs from the one its "
    "client authenticated as (%s): the broker asserted another identity, or two clients reused "
    "one client id and correlation id",
    "subject", "count", "discriminator",
)  # fmt: skip
#: Every KIP-590 rule, in the order :func:`forwarding_findings` returns their findings.
RULES: tuple[FindingRule, ...] = (ENVELOPE_CLUSTER_ACTION_DENIED, PRINCIPAL_MISMATCH)


def forwarding_findings(
    forwarded: DataFrame, authz_decisions: DataFrame, run_id: str
) -> tuple[DataFrame, ...]:
    """Every KIP-590 finding (:data:`RULES`).

    Args:
        forwarded: ``gold.forwarded_requests`` rows (:func:`forwarded_requests`; read twice:
            persist it).
        authz_decisions: silver.authz_decisions rows.
        run_id: the run.

    Returns:
        One ``schemas.findings.FINDINGS`` frame per rule, in :data:`RULES` order. Nothing
        raises.
    """
    plan = (
        (ENVELOPE_CLUSTER_ACTION_DENIED, envelope_denials(forwarded, authz_decisions)),
        (PRINCIPAL_MISMATCH, principal_mismatches(forwarded)),
    )
    return tuple(to_findings(candidates, rule, run_id) for rule, candidates in plan)
