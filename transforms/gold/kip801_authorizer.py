"""KIP-801 StandardAuthorizer: decisions by rule, the rules' findings, and the not-ready window.

The ``authorizer.*`` finding rules are declared at the end of this module
(``transforms.findings.FindingRule``) and planned by :func:`authorizer_findings`.

Sources (apache/kafka): ``org.apache.kafka.metadata.authorizer.StandardAuthorizerData.authorize``
(super users first: rule ``SuperUser``; before the initial load a non-super-user gets
``AuthorizerNotReadyException``; else the matching ACL, else ``DefaultAllow`` / ``DefaultDeny``
from ``allow.everyone.if.no.acl.found``), ``StandardAuthorizer.configure`` / ``start`` /
``completeInitialLoad``, ``org.apache.kafka.server.network.EndpointReadyFutures`` and
``kafka.server.KafkaApis.handle`` (``Unexpected error handling request ...``). See
``schemas.authorizer_readiness`` for the line wordings.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas.authorizer_readiness import AUTHORIZER_READINESS
from transforms.columns import group
from transforms.findings import FindingRule, evidence, finding_rule, listed, to_findings

CONFIGURED_RE = (
    r"^\[StandardAuthorizer (-?\d+)\] set super\.users=(.*), default result=(ALLOWED|DENIED)$"
)
LOADED_RE = r"^\[StandardAuthorizer (-?\d+)\] Completed initial ACL load process\.$"
LOAD_FAILED_RE = r"^\[StandardAuthorizer (-?\d+)\] Failed to complete initial ACL load process\.$"
READY_RE = r"^(?:\[[^\]]*\] )?(\S+) completed for endpoint (\S+)\. Endpoint is now READY\.$"
#: Text every match of the regexes above contains: a pre-test, so that the lines of a
#: lake (nearly all of them other lines) skip the regexes, each of which first decodes the
#: whole message into a Java string.
_AUTHORIZER_HEAD = "[StandardAuthorizer "
_READY_TAIL = ". Endpoint is now READY."
NOT_READY_HEAD = "Unexpected error handling request "
NOT_READY_EXCEPTION = "AuthorizerNotReadyException"
#: RequestChannel.Request.requestDesc and RequestContext.toString inside the error line.
_API_RE = r"RequestHeader\(apiKey=([A-Z_]+),"
_CLIENT_RE = r"RequestHeader\(apiKey=[A-Z_]+, apiVersion=-?\d+, clientId=(.*?), correlationId="
_PRINCIPAL_RE = r", principal=(.*?), listenerName=ListenerName\("
_LISTENER_RE = r"listenerName=ListenerName\(([^)]*)\)"
_ADDRESS_RE = r"clientAddress=[^/,]*/([^,]*),"
#: Listener names taken as controller listeners when a node's config is not in the input.
DEFAULT_CONTROLLER_LISTENERS = ("CONTROLLER",)

KINDS: tuple[str, ...] = (
    "configured", "acl_loaded", "acl_load_failed", "endpoint_ready", "not_ready_failure",
)  # fmt: skip


def _log4j() -> Column:
    """Kafka's own log lines (Confluent audit events describe the same decisions)."""
    return F.col("source_format") == "log4j"


def _decision() -> Column:
    return F.col("record_type") == "decision"


def _resource() -> Column:
    """'TOPIC:LITERAL:orders' from resource_type, pattern_type, resource_name."""
    return F.concat_ws(":", "resource_type", "pattern_type", "resource_name")


def _single_node() -> Column:
    """Aggregate: the group's node id when all its rows come from one node, else null."""
    return F.when(F.countDistinct("node_id") == 1, F.max("node_id")).alias("node_id")


def _names(text: Column, separator: str) -> Column:
    """Trimmed, non-empty items of a separated list; empty array for null."""
    # A lambda, not F.trim itself: transform passes (element, index) to a two-parameter
    # function, and F.trim's second parameter is the characters to trim.
    items = F.filter(F.transform(F.split(text, separator), lambda s: F.trim(s)), lambda s: s != "")  # noqa: PLW0108
    return F.coalesce(items, F.array().cast("array<string>"))


def node_setting(node_properties: DataFrame, name: str) -> DataFrame:
    """(node_id, value) of one property per node of ``schemas.node_properties`` rows."""
    rows = node_properties.where(F.col("property") == name)
    return rows.groupBy("node_id").agg(F.max("value").alias("value"))


def decisions_by_rule(authz_decisions: DataFrame) -> DataFrame:
    """StandardAuthorizer decisions counted by node, principal, rule and resource.

    Input columns: silver.authz_decisions (record_type, source_format, rule, node_id,
    principal, decision, operation, resource_*, acl_*, event_ts).
    Output columns: node_id, principal, decision, rule ('SuperUser' | 'DefaultAllow' |
    'DefaultDeny' | 'MatchingAcl'), operation, resource_type, pattern_type, resource_name,
    acl_resource_type, acl_resource_name, acl_pattern_type, acl_principal, acl_host,
    acl_operation, acl_permission_type (strings; the ACL columns only for MatchingAcl),
    decisions (long), first_ts, last_ts (timestamp, UTC). Rows without a rule (other
    authorizers) and Confluent audit events are left out.
    """
    keys = ["node_id", "principal", "decision", "rule", "operation", "resource_type",
            "pattern_type", "resource_name", "acl_resource_type", "acl_resource_name",
            "acl_pattern_type", "acl_principal", "acl_host", "acl_operation",
            "acl_permission_type"]  # fmt: skip
    rows = authz_decisions.where(_decision() & _log4j() & F.col("rule").isNotNull())
    return rows.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("decisions"),
        F.min("event_ts").alias("first_ts"),
        F.max("event_ts").alias("last_ts"),
    )


def super_user_outside_config(authz_decisions: DataFrame, node_properties: DataFrame) -> DataFrame:
    """Candidate findings: a principal authorized as a super user on a node whose config file
    does not list it in ``super.users`` (logs and config disagree).

    Input: authz_decisions log4j rows with rule 'SuperUser' (StandardAuthorizer) or
    record_type 'super_user' (AclAuthorizer's detail line); node_properties of broker /
    controller nodes (nodes without a config in the input are not judged). Kafka matches
    ``principal.toString`` against the ``;``-separated list, exactly.
    Output columns: subject (principal), discriminator and node_id (the node), first_seen_ts,
    last_seen_ts, count, evidence, super_users (the config value, null when not set).
    """
    configured = (
        node_properties.where(F.col("role") != "connect")
        .groupBy("node_id")
        .agg(F.max(F.when(F.col("property") == "super.users", F.col("value"))).alias("_value"))
    )
    uses = authz_decisions.where(
        _log4j()
        & ((_decision() & (F.col("rule") == "SuperUser")) | (F.col("record_type") == "super_user"))
    )
    outside = uses.join(configured, "node_id").where(
        ~F.array_contains(_names(F.col("_value"), ";"), F.col("principal"))
    )
    return (
        outside.groupBy(F.col("principal").alias("subject"), "node_id")
        .agg(
            F.min("event_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
            F.count(F.lit(1)).alias("count"),
            evidence().alias("evidence"),
            F.max("_value").alias("super_users"),
        )
        .withColumn("discriminator", F.col("node_id"))
    )


def default_allows(authz_decisions: DataFrame) -> DataFrame:
    """Candidate findings: access granted by rule ``DefaultAllow`` (no ACL on the resource and
    ``allow.everyone.if.no.acl.found=true``), per principal and resource.

    Output columns: subject (principal), discriminator (resource 'TYPE:PATTERN:name'),
    node_id (when one node logged them all), first_seen_ts, last_seen_ts, count, evidence,
    operations (array<string>, sorted).
    """
    rows = authz_decisions.where(_log4j() & _decision() & (F.col("rule") == "DefaultAllow"))
    return rows.groupBy(
        F.col("principal").alias("subject"), _resource().alias("discriminator")
    ).agg(
        _single_node(),
        F.min("event_ts").alias("first_seen_ts"),
        F.max("event_ts").alias("last_seen_ts"),
        F.count(F.lit(1)).alias("count"),
        evidence().alias("evidence"),
        F.array_sort(F.collect_set("operation")).alias("operations"),
    )


def denial_bursts(authz_decisions: DataFrame, threshold: int, window_ms: int) -> DataFrame:
    """Candidate findings: at least ``threshold`` denials of one principal on one resource
    within ``window_ms`` (any window of that length; every authorizer's log4j decisions).

    A denial belongs to a burst when some window of ``window_ms`` holding it holds
    ``threshold`` or more denials: the trailing count at a later denial at most ``window_ms``
    away reaches the threshold. Denials without a timestamp or principal are left out.
    Output columns: subject (principal), discriminator (resource), node_id (one node, else
    null), first_seen_ts, last_seen_ts, count (denials in bursts), evidence, peak (long: most
    denials in one window).
    """
    denials = authz_decisions.where(
        _log4j()
        & _decision()
        & (F.col("decision") == "DENIED")
        & F.col("event_ts").isNotNull()
        & F.col("principal").isNotNull()
    ).withColumns({"resource": _resource(), "_t": F.unix_millis("event_ts")})
    by_key = Window.partitionBy("principal", "resource").orderBy("_t")
    trailing = F.count(F.lit(1)).over(by_key.rangeBetween(-window_ms, 0))
    counted = denials.withColumn("_trailing", trailing)
    reach = F.max("_trailing").over(by_key.rangeBetween(0, window_ms))
    members = counted.withColumn("_reach", reach).where(F.col("_reach") >= threshold)
    return members.groupBy(
        F.col("principal").alias("subject"), F.col("resource").alias("discriminator")
    ).agg(
        _single_node(),
        F.min("event_ts").alias("first_seen_ts"),
        F.max("event_ts").alias("last_seen_ts"),
        F.count(F.lit(1)).alias("count"),
        evidence().alias("evidence"),
        F.max("_trailing").cast("long").alias("peak"),
    )


def readiness_events(bronze: DataFrame) -> DataFrame:
    """Server-log lines of the StandardAuthorizer's start-up, from bronze rows of any family.

    Input columns: bronze.raw_lines message, continuation, node_id, log_ts, source_path,
    line_number.
    Output columns: node_id, event_ts, source_path, line_number, kind (one of KINDS),
    listener (endpoint_ready: the endpoint; not_ready_failure: listenerName), principal,
    api_key_name, client_id, client_address (not_ready_failure), default_result,
    super_users_logged (configured). Other lines are dropped; a null message matches nothing.
    """
    message = F.col("message")
    failure = message.contains(NOT_READY_HEAD) & F.concat_ws(
        "\n", message, F.col("continuation")
    ).contains(NOT_READY_EXCEPTION)
    # ``&`` evaluates the regex only where the pre-test holds (or is null: a null message).
    authorizer = message.startswith(_AUTHORIZER_HEAD)
    kind = (
        F.when(authorizer & message.rlike(CONFIGURED_RE), F.lit("configured"))
        .when(authorizer & message.rlike(LOADED_RE), F.lit("acl_loaded"))
        .when(authorizer & message.rlike(LOAD_FAILED_RE), F.lit("acl_load_failed"))
        .when(message.contains(_READY_TAIL) & message.rlike(READY_RE), F.lit("endpoint_ready"))
        .when(failure, F.lit("not_ready_failure"))
    )
    return (
        bronze.withColumn("kind", kind)
        .where(F.col("kind").isNotNull())
        .select(
            "node_id",
            F.col("log_ts").alias("event_ts"),
            "source_path",
            "line_number",
            "kind",
            F.coalesce(group(message, READY_RE, 2), group(message, _LISTENER_RE, 1)).alias(
                "listener"
            ),
            group(message, _PRINCIPAL_RE, 1).alias("principal"),
            group(message, _API_RE, 1).alias("api_key_name"),
            group(message, _CLIENT_RE, 1).alias("client_id"),
            group(message, _ADDRESS_RE, 1).alias("client_address"),
            group(message, CONFIGURED_RE, 3).alias("default_result"),
            F.when(
                F.col("kind") == "configured", F.regexp_extract(message, CONFIGURED_RE, 2)
            ).alias("super_users_logged"),
        )
    )


def _position(prefix: str = "") -> Column:
    """Order of lines on one node: time, then file, then line."""
    return F.struct(f"{prefix}event_ts", f"{prefix}source_path", f"{prefix}line_number")


def _windows(events: DataFrame) -> DataFrame:
    """Not-ready windows per node: each configure line to the first load line after it;
    overlapping spans merged (a combined node configures two authorizers)."""
    timed = events.where(F.col("event_ts").isNotNull()).withColumn("_pos", _position())
    starts = timed.where(F.col("kind") == "configured")
    ends = timed.where(F.col("kind").isin("acl_loaded", "acl_load_failed")).select(
        F.col("node_id").alias("_end_node"),
        F.col("_pos").alias("_end"),
        F.col("kind").alias("_end_kind"),
    )
    joined = starts.join(
        ends,
        F.col("node_id").eqNullSafe(F.col("_end_node")) & (F.col("_end") > F.col("_pos")),
        "left",
    )
    nearest = Window.partitionBy("node_id", "_pos").orderBy(F.col("_end").asc_nulls_last())
    spans = joined.withColumn("_n", F.row_number().over(nearest)).where(F.col("_n") == 1)
    before = (
        Window.partitionBy("node_id").orderBy("_pos").rowsBetween(Window.unboundedPreceding, -1)
    )
    prev_end = F.max("_end").over(before)
    prev_open = F.max(F.col("_end").isNull().cast("int")).over(before)
    new = (prev_end.isNull() & prev_open.isNull()) | ((prev_open == 0) & (F.col("_pos") > prev_end))
    numbered = spans.withColumn("_new", new.cast("int")).withColumn(
        "_window", F.sum("_new").over(Window.partitionBy("node_id").orderBy("_pos"))
    )
    closed = F.count(F.lit(1)) == F.count("_end")  # no span of the window is open
    first = F.min_by(F.struct("_pos", "default_result", "super_users_logged"), F.col("_pos"))
    return numbered.groupBy("node_id", "_window").agg(
        first.alias("_first"),
        F.when(closed, F.max("_end")).alias("_end"),
        F.when(closed, F.max_by("_end_kind", "_end")).alias("_end_kind"),
    )


def _in_windows(events: DataFrame, windows: DataFrame) -> DataFrame:
    """Endpoint-ready and failure events inside a window (window columns kept)."""
    inner = events.where(F.col("kind").isin("endpoint_ready", "not_ready_failure")).withColumn(
        "_pos", _position()
    )
    w = windows.withColumnRenamed("node_id", "_w_node")
    inside = (
        F.col("node_id").eqNullSafe(F.col("_w_node"))
        & (F.col("_pos") > F.col("_first._pos"))
        & (F.col("_end").isNull() | (F.col("_pos") < F.col("_end")))
    )
    return inner.join(w, inside)


def _window_contents(events: DataFrame, windows: DataFrame) -> DataFrame:
    """Per window (_w_node, _window): listeners_ready_early, failed_principals,
    failed_listeners (array<string>, sorted) and not_ready_failures (long), from the
    endpoint-ready and failure lines inside it."""
    ready = F.col("kind") == "endpoint_ready"
    failure = F.col("kind") == "not_ready_failure"
    return (
        _in_windows(events, windows)
        .groupBy("_w_node", "_window")
        .agg(
            F.array_sort(F.collect_set(F.when(ready, F.col("listener")))).alias(
                "listeners_ready_early"
            ),
            F.count(F.when(failure, 1)).alias("not_ready_failures"),
            F.array_sort(F.collect_set(F.when(failure, F.col("principal")))).alias(
                "failed_principals"
            ),
            F.array_sort(F.collect_set(F.when(failure, F.col("listener")))).alias(
                "failed_listeners"
            ),
        )
    )


def _unknown_errors(windows: DataFrame, request_events: DataFrame) -> DataFrame:
    """Per window (_w_node, _window): unknown_server_error_requests (long), the node's
    request-log lines answered -1 (UNKNOWN_SERVER_ERROR) from the window's start to its end,
    both included."""
    errors = request_events.where(F.col("error_code") == -1).select(
        F.col("node_id").alias("_r_node"), F.col("event_ts").alias("_r_ts")
    )
    return (
        windows.join(
            errors,
            F.col("node_id").eqNullSafe(F.col("_r_node"))
            & (F.col("_r_ts") >= F.col("_first._pos.event_ts"))
            & (F.col("_end").isNull() | (F.col("_r_ts") <= F.col("_end.event_ts"))),
        )
        .groupBy(F.col("node_id").alias("_w_node"), "_window")
        .agg(F.count(F.lit(1)).alias("unknown_server_error_requests"))
    )


def _readiness_values(run_id: str) -> dict[str, Column]:
    """Every ``AUTHORIZER_READINESS`` column over a window joined with its contents, errors and
    node config (uncast)."""
    empty = F.array().cast("array<string>")
    start, end = F.col("_first._pos"), F.col("_end")
    return {
        "run_id": F.lit(run_id),
        "node_id": F.col("_w_node"),
        "window_start_ts": start["event_ts"],
        "acl_loaded_ts": F.when(F.col("_end_kind") == "acl_loaded", end["event_ts"]),
        "acl_load_failed": F.coalesce(F.col("_end_kind") == "acl_load_failed", F.lit(False)),
        "not_ready_ms": F.when(
            F.col("_end_kind") == "acl_loaded",
            F.unix_millis(end["event_ts"]) - F.unix_millis(start["event_ts"]),
        ),
        "default_result": F.col("_first.default_result"),
        "super_users_logged": F.col("_first.super_users_logged"),
        "authorizer_class_name": F.col("_authorizer"),
        "early_start_listeners_config": F.col("_early"),
        "listeners_ready_early": F.coalesce("listeners_ready_early", empty),
        "not_ready_failures": F.coalesce("not_ready_failures", F.lit(0)),
        "failed_principals": F.coalesce("failed_principals", empty),
        "failed_listeners": F.coalesce("failed_listeners", empty),
        "unknown_server_error_requests": F.coalesce("unknown_server_error_requests", F.lit(0)),
        "start_source_path": start["source_path"],
        "start_line_number": start["line_number"],
        "end_source_path": end["source_path"],
        "end_line_number": end["line_number"],
        "event_date": F.to_date(start["event_ts"]),
    }


def readiness_windows(
    events: DataFrame, request_events: DataFrame, node_properties: DataFrame, run_id: str
) -> DataFrame:
    """``gold.authorizer_readiness`` rows from ``readiness_events`` output.

    Args:
        events: ``readiness_events(bronze)``.
        request_events: silver.request_events (node_id, event_ts, error_code).
        node_properties: ``schemas.node_properties`` rows (authorizer.class.name,
            early.start.listeners, controller.listener.names).
        run_id: the run.

    Output columns: exactly ``schemas.authorizer_readiness.AUTHORIZER_READINESS``. Lines
    without a timestamp cannot be placed and are left out; a window without a load line stays
    open (acl_loaded_ts null) and takes every later line of its node.
    """
    windows = _windows(events)
    keys = ["_w_node", "_window"]
    config = _node_config(node_properties)
    rows = (
        windows.withColumnRenamed("node_id", "_w_node")
        .join(_window_contents(events, windows), keys, "left")
        .join(_unknown_errors(windows, request_events), keys, "left")
        .join(config, F.col("_w_node").eqNullSafe(F.col("_c_node")), "left")
    )
    values = _readiness_values(run_id)
    return rows.select(
        *[values[f.name].cast(f.dataType).alias(f.name) for f in AUTHORIZER_READINESS.fields]
    )


def _node_config(node_properties: DataFrame) -> DataFrame:
    """_c_node, _authorizer (authorizer.class.name), _early (early.start.listeners, default
    controller.listener.names, as names; null for nodes without a config), _controllers
    (controller.listener.names as names, DEFAULT_CONTROLLER_LISTENERS when not set)."""
    value = {
        name: F.max(F.when(F.col("property") == name, F.col("value")))
        for name in ("authorizer.class.name", "early.start.listeners", "controller.listener.names")
    }
    nodes = (
        node_properties.where(F.col("role") != "connect")
        .groupBy("node_id")
        .agg(
            value["authorizer.class.name"].alias("_authorizer"),
            value["early.start.listeners"].alias("_early_raw"),
            value["controller.listener.names"].alias("_controllers_raw"),
        )
    )
    defaults = F.array(*[F.lit(n) for n in DEFAULT_CONTROLLER_LISTENERS])
    return nodes.select(
        F.col("node_id").alias("_c_node"),
        "_authorizer",
        _names(F.coalesce("_early_raw", "_controllers_raw"), ",").alias("_early"),
        F.coalesce(
            F.when(F.col("_controllers_raw").isNotNull(), _names(F.col("_controllers_raw"), ",")),
            defaults,
        ).alias("_controllers"),
    )


def not_ready_failures(events: DataFrame) -> DataFrame:
    """Candidate findings: requests refused with ``AuthorizerNotReadyException`` (answered
    UNKNOWN_SERVER_ERROR, -1: Kafka's ``Errors`` has no AUTHORIZER_NOT_READY), per principal
    and node, whether or not the window's start line is in the input.

    Output columns: subject (principal), discriminator and node_id (the node), first_seen_ts,
    last_seen_ts, count, evidence, listeners and apis (array<string>, sorted).
    """
    rows = events.where(F.col("kind") == "not_ready_failure")
    return (
        rows.groupBy(F.col("principal").alias("subject"), "node_id")
        .agg(
            F.min("event_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
            F.count(F.lit(1)).alias("count"),
            evidence().alias("evidence"),
            F.array_sort(F.collect_set("listener")).alias("listeners"),
            F.array_sort(F.collect_set("api_key_name")).alias("apis"),
        )
        .withColumn("discriminator", F.col("node_id"))
    )


def early_client_listeners(events: DataFrame, node_properties: DataFrame) -> DataFrame:
    """Candidate findings: a listener that became READY inside a not-ready window (it served
    before the ACLs were loaded: ``early.start.listeners``) and is not a controller listener
    (``controller.listener.names``; 'CONTROLLER' when the node's config is not in the input).

    Output columns: subject (listener), discriminator and node_id (the node), first_seen_ts,
    last_seen_ts, count (READY lines), evidence (the READY lines), loaded_ts (the window's
    load time, null while open).
    """
    windows = _windows(events)
    ready = _in_windows(events, windows).where(F.col("kind") == "endpoint_ready")
    config = _node_config(node_properties).select("_c_node", "_controllers")
    defaults = F.array(*[F.lit(n) for n in DEFAULT_CONTROLLER_LISTENERS])
    joined = ready.join(config, F.col("node_id").eqNullSafe(F.col("_c_node")), "left")
    client = joined.where(
        ~F.array_contains(F.coalesce("_controllers", defaults), F.col("listener"))
    )
    return (
        client.groupBy(F.col("listener").alias("subject"), "node_id")
        .agg(
            F.min("event_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
            F.count(F.lit(1)).alias("count"),
            evidence().alias("evidence"),
            F.min(F.when(F.col("_end_kind") == "acl_loaded", F.col("_end.event_ts"))).alias(
                "loaded_ts"
            ),
        )
        .withColumn("discriminator", F.col("node_id"))
    )


# --- finding rules (``transforms.findings``; docs/rules-forwarding-authorizer.md) ---

KIP = "KIP-801"

#: Logs and config disagree on a super user (``StandardAuthorizerData.authorize``: rule
#: ``SuperUser``; AclAuthorizer's ``principal = ... is a super user`` line). Candidates:
#: :func:`super_user_outside_config`.
SUPER_USER_NOT_IN_CONFIG = finding_rule(
    "authorizer.super_user_not_in_config", KIP, "high", "principal",
    "%s was authorized as a super user %s time(s) on node %s, but that node's super.users (%s) "
    "does not name it: the running configuration differs from the audited config file",
    "subject", "count", "node_id", "super_users",
)  # fmt: skip
#: Access granted by ``DefaultAllow`` (``StandardAuthorizerData.authorize`` with
#: ``allow.everyone.if.no.acl.found=true``). Candidates: :func:`default_allows`.
DEFAULT_ALLOW = finding_rule(
    "authorizer.default_allow", KIP, "medium", "principal",
    "%s was allowed %s (%s time(s)) on %s by DefaultAllow: no ACL exists for the resource and "
    "allow.everyone.if.no.acl.found=true grants it to everyone",
    "subject", listed("operations"), "count", "discriminator",
)  # fmt: skip
#: A listener served before the ACLs were loaded (``early.start.listeners``;
#: ``EndpointReadyFutures``, ``StandardAuthorizer.completeInitialLoad``). Candidates:
#: :func:`early_client_listeners`.
EARLY_START_CLIENT_LISTENER = finding_rule(
    "authorizer.early_start_client_listener", KIP, "low", "listener",
    "listener %s on node %s served requests before the StandardAuthorizer loaded its ACLs "
    "(loaded at %s): it is in early.start.listeners but is not a controller listener",
    "subject", "node_id", "loaded_ts",
)  # fmt: skip
#: Requests refused with ``AuthorizerNotReadyException`` (``KafkaApis.handle``). Candidates:
#: :func:`not_ready_failures`.
NOT_READY_REQUEST_FAILURES = finding_rule(
    "authorizer.not_ready_request_failures", KIP, "low", "principal",
    "%s request(s) of %s (%s) on listener(s) %s of node %s failed with "
    "AuthorizerNotReadyException (UNKNOWN_SERVER_ERROR): the ACLs were not loaded yet",
    "count", "subject", listed("apis"), listed("listeners"), "node_id",
)  # fmt: skip


def denial_burst_rule(threshold: int, window_ms: int) -> FindingRule:
    """``authorizer.denial_burst`` (medium): at least ``threshold`` denials of one principal on
    one resource within ``window_ms`` (the project's rule over every authorizer's ``Denied``
    decisions; Kafka has no such threshold). Candidates: :func:`denial_bursts`. The sentence
    names both settings, so the rule is declared per run; nothing raises (int settings)."""
    return finding_rule(
        "authorizer.denial_burst", KIP, "medium", "principal",
        f"%s was denied %s time(s) on %s in bursts of at least {threshold} within {window_ms} "
        "ms (peak %s): a misconfigured client or someone probing ACLs",
        "subject", "count", "discriminator", "peak",
    )  # fmt: skip


def authorizer_findings(
    authz_decisions: DataFrame,
    events: DataFrame,
    node_properties: DataFrame,
    *,
    burst_threshold: int,
    burst_window_ms: int,
    run_id: str,
) -> tuple[DataFrame, ...]:
    """Every KIP-801 finding: :data:`SUPER_USER_NOT_IN_CONFIG`, :data:`DEFAULT_ALLOW`,
    :func:`denial_burst_rule`, :data:`EARLY_START_CLIENT_LISTENER`,
    :data:`NOT_READY_REQUEST_FAILURES`, in that order.

    Args:
        authz_decisions: silver.authz_decisions rows.
        events: ``readiness_events(bronze)`` (read by two rules: persist it).
        node_properties: ``schemas.node_properties`` rows.
        burst_threshold / burst_window_ms: the denial-burst rule's settings (ms).
        run_id: the run.

    Returns:
        One ``schemas.findings.FINDINGS`` frame per rule. Nothing raises.
    """
    plan = (
        (SUPER_USER_NOT_IN_CONFIG, super_user_outside_config(authz_decisions, node_properties)),
        (DEFAULT_ALLOW, default_allows(authz_decisions)),
        (
            denial_burst_rule(burst_threshold, burst_window_ms),
            denial_bursts(authz_decisions, burst_threshold, burst_window_ms),
        ),
        (EARLY_START_CLIENT_LISTENER, early_client_listeners(events, node_properties)),
        (NOT_READY_REQUEST_FAILURES, not_ready_failures(events)),
    )
    return tuple(to_findings(candidates, rule, run_id) for rule, candidates in plan)
