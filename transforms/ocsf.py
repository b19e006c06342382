"""Silver events as OCSF 1.8.0 events: Authentication (3002) and API Activity (6003).

Pure DataFrame transforms; each ends with a ``select`` that is its contract (``schemas.ocsf``).
Rules of OCSF 1.8.0: ``class_uid = category_uid * 1000 + n``, ``type_uid = class_uid * 100 +
activity_id``, ``time`` in epoch milliseconds, ``status_id`` 1 Success / 2 Failure,
``severity_id`` 1 Informational / 2 Low. Events without a timestamp are left out (``time`` is
required). No secret reaches an event: only the columns named here are read, and bronze has
already redacted the exception texts (``reason``) they come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from schemas import auth_events as ae
from schemas import authz_decisions as az
from schemas.ocsf import (
    API_ACTIVITY,
    API_ACTIVITY_CLASS_UID,
    AUTHENTICATION,
    AUTHENTICATION_CLASS_UID,
    NETWORK_ENDPOINT,
    OCSF_VERSION,
)

#: The silver event types exported as Authentication events, and whether each succeeded.
AUTH_OUTCOMES: Mapping[str, bool] = {
    ae.EVENT_AUTHENTICATION_SUCCEEDED: True,
    ae.EVENT_REAUTHENTICATION_SUCCEEDED: True,
    ae.EVENT_AUTHENTICATION_FAILED: False,
    ae.EVENT_REAUTHENTICATION_FAILED: False,
    ae.EVENT_CLIENT_AUTHENTICATION_FAILED: False,
}

#: SASL mechanism -> OCSF auth_protocol_id (2 Kerberos, 6 OAUTH 2.0; SCRAM and PLAIN: 99 Other).
AUTH_PROTOCOL_IDS: Mapping[str, int] = {"GSSAPI": 2, "OAUTHBEARER": 6}
AUTH_PROTOCOL_CAPTIONS: Mapping[int, str] = {0: "Unknown", 2: "Kerberos", 6: "OAUTH 2.0"}

#: Kafka AclOperation -> API Activity activity_id (1 Create, 2 Read, 3 Update, 4 Delete);
#: ALL, ANY, CLUSTER_ACTION, UNKNOWN: 99 Other; no operation: 0 Unknown.
ACL_OPERATION_ACTIVITY: Mapping[str, int] = {
    "CREATE": 1, "CREATE_TOKENS": 1,
    "READ": 2, "DESCRIBE": 2, "DESCRIBE_CONFIGS": 2, "DESCRIBE_TOKENS": 2,
    "WRITE": 3, "IDEMPOTENT_WRITE": 3, "ALTER": 3, "ALTER_CONFIGS": 3, "TWO_PHASE_COMMIT": 3,
    "DELETE": 4,
}  # fmt: skip
API_ACTIVITY_CAPTIONS: Mapping[int, str] = {
    0: "Unknown", 1: "Create", 2: "Read", 3: "Update", 4: "Delete", 99: "Other"
}  # fmt: skip
SEVERITY_CAPTIONS: Mapping[int, str] = {1: "Informational", 2: "Low"}
STATUS_CAPTIONS: Mapping[int, str] = {1: "Success", 2: "Failure"}

#: Stand-in for a required name the log line does not give (a failed SASL login names nobody).
UNKNOWN = "unknown"


def lookup(key: Column, mapping: Mapping[str, int] | Mapping[int, str], default: object) -> Column:
    """``mapping[key]`` as a column (CASE WHEN), ``default`` when absent or ``key`` is null."""
    return reduce(
        lambda acc, item: acc.when(key == F.lit(item[0]), F.lit(item[1])),
        list(mapping.items())[1:],
        F.when(key == F.lit(next(iter(mapping))), F.lit(next(iter(mapping.values())))),
    ).otherwise(F.lit(default))


def _product(source_format: Column) -> Column:
    confluent = source_format == F.lit(ae.SOURCE_FORMAT_CONFLUENT_AUDIT)
    return F.struct(
        F.when(confluent, F.lit("Confluent Server")).otherwise(F.lit("Apache Kafka")).alias("name"),
        F.when(confluent, F.lit("Confluent"))
        .otherwise(F.lit("Apache Software Foundation"))
        .alias("vendor_name"),
        F.lit(None).cast("string").alias("version"),
    )


def _metadata(class_uid: int, event_code: Column) -> Column:
    uid = F.sha2(F.concat_ws("\n", F.lit(str(class_uid)), "source_path", "line_number"), 256)
    return F.struct(
        uid.alias("uid"),
        F.lit(OCSF_VERSION).alias("version"),
        _product(F.col("source_format")).alias("product"),
        F.col("source_path").alias("log_source"),
        event_code.alias("event_code"),
    )


def _user() -> Column:
    """The KafkaPrincipal string of column ``_p`` (``User:alice``; type and name split on the
    first ':', KafkaPrincipal.toString) as an OCSF user: uid the string, name the name, type
    the type, type_id 1 User (99 Other for another type). A string without ':' names no type:
    name the whole string, type ``Unknown``, type_id 0 (as ``jobs.ocsf_findings.ocsf_user``
    maps it); name ``unknown`` too when null."""
    principal = F.col("_p")
    typed = F.instr(principal, ":") > 0
    kind = F.substring_index(principal, ":", 1)
    return F.struct(
        principal.alias("uid"),
        F.coalesce(
            F.when(typed, F.expr("substr(_p, instr(_p, ':') + 1)")).otherwise(principal),
            F.lit(UNKNOWN),
        ).alias("name"),
        F.when(typed, kind).otherwise(F.lit("Unknown")).alias("type"),
        F.when(~F.coalesce(typed, F.lit(False)), 0)
        .when(kind == "User", 1)
        .otherwise(99)
        .alias("type_id"),
    )


def _endpoint(
    *,
    uid: Column | None = None,
    name: Column | None = None,
    hostname: Column | None = None,
    ip: Column | None = None,
    port: Column | None = None,
    interface_name: Column | None = None,
) -> Column:
    """An OCSF network_endpoint; null when none of its identifying fields is known."""
    parts = {"uid": uid, "name": name, "hostname": hostname, "ip": ip, "port": port,
             "interface_name": interface_name}  # fmt: skip
    cols = [(c if c is not None else F.lit(None)).alias(k) for k, c in parts.items()]
    known = [c for k, c in parts.items() if c is not None and k != "port"]
    return F.when(reduce(lambda a, b: a | b, [c.isNotNull() for c in known]), F.struct(*cols))


def _classify(
    class_uid: int, class_name: str, category_uid: int, category_name: str
) -> dict[str, Column]:
    """The class, category and type attributes (needs an ``activity_id`` column)."""
    return {
        "category_uid": F.lit(category_uid),
        "category_name": F.lit(category_name),
        "class_uid": F.lit(class_uid),
        "class_name": F.lit(class_name),
        "type_uid": F.lit(class_uid * 100).cast("long") + F.col("activity_id"),
        "type_name": F.concat(F.lit(f"{class_name}: "), F.col("activity_name")),
        "time": F.unix_millis("event_ts"),
        "timezone_offset": F.lit(0),
    }


def _status(succeeded: Column) -> dict[str, Column]:
    status_id = F.when(succeeded, 1).otherwise(2)
    return {
        "severity_id": status_id,
        "severity": lookup(status_id, SEVERITY_CAPTIONS, None),
        "status_id": status_id,
        "status": lookup(status_id, STATUS_CAPTIONS, None),
    }


def _contract(df: DataFrame, schema: StructType) -> DataFrame:
    return df.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in schema.fields])


def _auth_protocol() -> dict[str, Column]:
    """auth_protocol_id / auth_protocol from the SASL mechanism (or what the reason implies)."""
    mechanism = F.coalesce(
        F.col("mechanism"),
        F.when(F.col("failure_reason_code").startswith("OAUTH"), F.lit("OAUTHBEARER")),
    )
    tls = F.col("failure_reason_code").startswith("SSL") | (F.col("security_protocol") == "SSL")
    protocol_id = F.coalesce(
        lookup(mechanism, AUTH_PROTOCOL_IDS, None),
        F.when(mechanism.isNotNull() | tls, 99).otherwise(0),
    )
    caption = F.when(protocol_id == 99, F.coalesce(mechanism, F.lit("TLS")))
    return {
        "auth_protocol_id": protocol_id,
        "auth_protocol": caption.otherwise(lookup(protocol_id, AUTH_PROTOCOL_CAPTIONS, None)),
    }


def _auth_endpoints() -> dict[str, Column]:
    """src_endpoint, dst_endpoint and session of an auth_events row, by the side that logged."""
    broker_side = F.coalesce(F.col("side"), F.lit("broker")) == "broker"
    peer = {"hostname": F.col("peer_host"), "ip": F.col("peer_ip"), "port": F.col("peer_port")}
    broker = _endpoint(
        uid=F.col("node_id"),
        ip=F.col("local_ip"),
        port=F.col("local_port"),
        interface_name=F.col("listener"),
    )
    called = _endpoint(uid=F.col("broker_node_id").cast("string"), **peer)
    return {
        "src_endpoint": F.when(broker_side, _endpoint(**peer)).otherwise(
            _endpoint(name=F.col("client_id"))
        ),
        "dst_endpoint": F.when(broker_side, broker).otherwise(called),
        "session": F.when(
            broker_side & F.col("connection_id").isNotNull(),
            F.struct(F.col("connection_id").alias("uid")),
        ),
    }


def authentication_events(auth: DataFrame) -> DataFrame:
    """OCSF Authentication (3002) events, one per authentication outcome of silver.auth_events.

    Input columns: silver.auth_events (``schemas.auth_events.AUTH_EVENTS``).
    Output columns: ``schemas.ocsf.AUTHENTICATION``.

    Exported: the outcomes of ``AUTH_OUTCOMES`` (Selector ``Successfully {re-}authenticated`` /
    ``Failed {re-}authentication``, NetworkClient ``failed authentication``, Confluent audit
    authentication events); activity 1 Logon, logon type 3 Network. A broker-side event has the
    client as ``src_endpoint`` and the broker (node id, local address, listener) as
    ``dst_endpoint``; a client-side event has the client (client.id) and the broker it called.
    ``user`` is the event's ``principal`` (:func:`_user`; the ``unknown`` stand-in where nothing
    links one, ``transforms.silver.auth.principals``), ``auth_protocol_id`` its ``mechanism``;
    ``unmapped`` says how both were linked. Rows without ``event_ts`` are left out.
    """
    succeeded = F.col("event_type").isin(*[kind for kind, ok in AUTH_OUTCOMES.items() if ok])
    step = F.when(F.col("event_type").startswith("reauthentication"), "Re-authentication ")
    reason = F.when(F.col("reason").isNotNull(), F.concat(F.lit(": "), "reason"))
    events = (
        auth.where(F.col("event_type").isin(*AUTH_OUTCOMES) & F.col("event_ts").isNotNull())
        .withColumn("_p", F.col("principal"))
        .withColumns({"activity_id": F.lit(1), "activity_name": F.lit("Logon")})
        .withColumns(
            _classify(AUTHENTICATION_CLASS_UID, "Authentication", 3, "Identity & Access Management")
        )
        .withColumns(_status(succeeded))
        .withColumns(_auth_protocol())
        .withColumns(_auth_endpoints())
        .withColumns(
            {
                "status_code": F.col("failure_reason_code"),
                "status_detail": F.col("reason"),
                "message": F.concat(
                    step.otherwise("Authentication "),
                    F.when(succeeded, "succeeded").otherwise("failed"),
                    reason.otherwise(""),
                ),
                "metadata": _metadata(AUTHENTICATION_CLASS_UID, F.col("event_type")),
                "user": _user(),
                "logon_type_id": F.lit(3),
                "logon_type": F.lit("Network"),
                "is_remote": F.lit(True),
                "unmapped": F.struct(
                    F.col("line_number").alias("source_line_number"),
                    "node_id",
                    "side",
                    "failure_reason_code",
                    "security_protocol",
                    "client_id",
                    "is_reauthentication",
                    "principal_source",
                    "mechanism_source",
                ),
            }
        )
    )
    return _contract(events, AUTHENTICATION)


def _actor() -> Column:
    """The principal, the client.id and the authorizer's decision with its rule."""
    policy = F.when(
        F.col("authorizer").isNotNull() | F.col("rule").isNotNull(),
        F.struct(
            F.col("rule").alias("name"),
            F.col("authorizer").alias("type"),
            F.col("rbac_role").alias("desc"),
        ),
    )
    return F.struct(
        _user().alias("user"),
        F.col("client_id").alias("app_name"),
        F.array(F.struct(F.col("decision").alias("decision"), policy.alias("policy"))).alias(
            "authorizations"
        ),
    )


def _api() -> Column:
    """The Kafka API when logged, else the ACL operation; the correlation id as request uid."""
    operation = F.coalesce("api_name", "operation_raw", "operation", F.lit(UNKNOWN))
    request = F.when(
        F.col("correlation_id").isNotNull(),
        F.struct(F.col("correlation_id").cast("string").alias("uid")),
    )
    return F.struct(operation.alias("operation"), request.alias("request"))


def _client_host() -> Column:
    """src_endpoint: the client host; the UNKNOWN stand-in (required attribute) without one."""
    unknown = [
        (F.lit(UNKNOWN) if f.name == "name" else F.lit(None)).cast(f.dataType).alias(f.name)
        for f in NETWORK_ENDPOINT.fields
    ]
    return F.coalesce(_endpoint(ip=F.col("host")), F.struct(*unknown))


def api_activity_events(authz: DataFrame) -> DataFrame:
    """OCSF API Activity (6003) events, one per authorizer decision of silver.authz_decisions.

    Input columns: silver.authz_decisions (``schemas.authz_decisions.AUTHZ_DECISIONS``).
    Output columns: ``schemas.ocsf.API_ACTIVITY``.

    Only ``record_type = 'decision'`` rows (the detail lines of AclAuthorizer are not calls).
    ``activity_id`` from the AclOperation (``ACL_OPERATION_ACTIVITY``); ``status_id`` 1 for
    ALLOWED, 2 for DENIED; ``actor.user`` the principal; ``actor.authorizations`` the decision
    with the authorizer class and its rule (StandardAuthorizer, Confluent); ``api.operation`` the
    Kafka API when logged (AclAuthorizer 2.4+, Confluent), else the ACL operation;
    ``resources`` the resource (type, name); ``src_endpoint.ip`` the client host; the broker
    (node id) as ``dst_endpoint``. Rows without ``event_ts`` are left out.
    """
    op = F.col("operation")
    activity_id = F.when(op.isNull(), 0).otherwise(lookup(op, ACL_OPERATION_ACTIVITY, 99))
    resource = F.struct(F.col("resource_type").alias("type"), F.col("resource_name").alias("name"))
    events = (
        authz.where((F.col("record_type") == az.RECORD_DECISION) & F.col("event_ts").isNotNull())
        .withColumn("_p", F.col("principal"))
        .withColumns(
            {
                "activity_id": activity_id,
                "activity_name": lookup(activity_id, API_ACTIVITY_CAPTIONS, None),
            }
        )
        .withColumns(_classify(API_ACTIVITY_CLASS_UID, "API Activity", 6, "Application Activity"))
        .withColumns(_status(F.col("decision") == "ALLOWED"))
        .withColumns(
            {
                "status_code": F.col("decision"),
                "status_detail": F.col("rule"),
                "message": F.concat_ws(
                    " ",
                    F.coalesce("principal", F.lit(UNKNOWN)),
                    "decision",
                    F.coalesce("operation_raw", "operation"),
                    F.lit("on"),
                    "resource_type",
                    "resource_name",
                ),
                "metadata": _metadata(API_ACTIVITY_CLASS_UID, F.col("decision")),
                "actor": _actor(),
                "api": _api(),
                "resources": F.when(
                    F.col("resource_name").isNotNull() | F.col("resource_type").isNotNull(),
                    F.array(resource),
                ),
                "src_endpoint": _client_host(),
                "dst_endpoint": _endpoint(uid=F.col("node_id")),
                "unmapped": F.struct(
                    F.col("line_number").alias("source_line_number"),
                    "node_id",
                    F.col("operation").alias("acl_operation"),
                    "pattern_type",
                ),
            }
        )
    )
    return _contract(events, API_ACTIVITY)


def in_order(events: DataFrame) -> DataFrame:
    """The events in one partition, ordered by ``time``, then where they come from (source file,
    line number), then ``metadata.uid``: deterministic output for one file, and events of one
    millisecond keep their log order wherever the logs lie."""
    return events.repartition(1).sortWithinPartitions(
        "time",
        F.col("metadata.log_source"),
        F.col("unmapped.source_line_number"),
        F.col("metadata.uid"),
    )
