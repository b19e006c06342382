"""Parse Confluent audit-log CloudEvents (family 'confluent_audit') into silver.authz_decisions
and silver.auth_events rows.

Bronze holds such a line as a record with layout 'json', level and logger null, message = the
whole JSON line and log_ts = the event's ``time``. Shapes:
``transforms.silver.confluent_audit.cloudevents``.

Contract (the pipeline calls BOTH parsers on the same family input):
* ``parse_confluent_authentication`` takes the records whose JSON ``type`` is exactly
  ``io.confluent.kafka.server/authentication`` (``is_authentication_event``) and returns each of
  them once, in the auth_events shape, with ``reason_code`` null (parsed) or a reason.
* ``parse_confluent_authorization`` takes every other record and returns each of them once, in
  the authz_decisions shape: ``io.confluent.kafka.server/authorization`` events parsed or
  quarantined, and every record whose type is another one (``/request``: no table yet),
  missing, or unreadable (blank, cut short, not a JSON object) quarantined with a reason.
* So each input record comes out of exactly one of the two, exactly once: the union of their
  quarantines has no duplicate and the accounting invariant holds.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import auth_events, authz_decisions
from transforms.columns import group, typed_nulls
from transforms.quarantine import Check, first_failure
from transforms.silver.auth.reasons import failure_reason_code
from transforms.silver.authz import authz_decision, kafka_enum_name, principal_name, principal_type
from transforms.silver.confluent_audit.cloudevents import (
    TYPE_AUTHENTICATION,
    TYPE_AUTHORIZATION,
    TYPE_PREFIX,
    envelope_checks,
    event_type,
    principal_text,
    with_envelope,
)

AUTHORIZER = "ConfluentServerAuthorizer"
#: authenticationInfo.metadata.mechanism: 'SSL' (mTLS) or '<protocol>/<SASL mechanism>'.
MECHANISM_RE = r"^(PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)(?:/(.+))?$"


def is_confluent_audit_record(message: Column) -> Column:
    """True for a Confluent audit-log line: a JSON object with ``"specversion"`` and a ``"type"``
    starting ``io.confluent.kafka.server/``.

    Matched on the text, not by parsing, so that cut or garbled events are claimed and then
    quarantined by ``parse_confluent_authorization``. A null message gives false.
    """
    json_object = message.rlike(r"^\s*\{")
    versioned = message.rlike(r'"specversion"\s*:')
    confluent = message.rlike(r'"type"\s*:\s*"' + TYPE_PREFIX.replace(".", r"\."))
    return F.coalesce(json_object & versioned & confluent, F.lit(False))


def is_authentication_event(message: Column) -> Column:
    """True when the JSON ``type`` is ``io.confluent.kafka.server/authentication``; false (never
    null) otherwise. Splits the family between the two parsers."""
    return F.coalesce(event_type(message) == TYPE_AUTHENTICATION, F.lit(False))


def _output(bronze: DataFrame, parsed: DataFrame, schema_names: list[str]) -> DataFrame:
    silver = [name for name in schema_names if name not in bronze.columns]
    return parsed.select(*bronze.columns, *silver, "_failure.reason_code", "_failure.reason_detail")


def _rule(info: Column) -> Column:
    """'SuperUser' | 'MatchingAcl' | 'RBAC' from the authorization sub-object present."""
    return (
        F.when(F.lower(info.getField("superUserAuthorization")) == "true", F.lit("SuperUser"))
        .when(info.getField("aclAuthorization").isNotNull(), F.lit("MatchingAcl"))
        .when(info.getField("rbacAuthorization").isNotNull(), F.lit("RBAC"))
    )


def _authorization_columns(info: Column, method: Column) -> dict[str, Column]:
    acl, rbac = info.getField("aclAuthorization"), info.getField("rbacAuthorization")
    c = F.col
    return {
        "record_type": F.lit(authz_decisions.RECORD_DECISION),
        "authorizer": F.lit(AUTHORIZER),
        "principal": c("_principal"),
        "principal_type": principal_type(c("_principal")),
        "principal_name": principal_name(c("_principal")),
        "decision": authz_decision(F.coalesce(info.getField("granted"), info.getField("result"))),
        "operation": kafka_enum_name(info.getField("operation")),
        "operation_raw": info.getField("operation"),
        "host": c("_client_ip"),
        "resource_type": kafka_enum_name(info.getField("resourceType")),
        "resource_type_raw": info.getField("resourceType"),
        "pattern_type": info.getField("patternType"),
        "resource_name": info.getField("resourceName"),
        "api_name": F.regexp_replace(method, r"^kafka\.", ""),
        "resource_ref_count": F.lit(None).cast("int"),
        "rule": _rule(info),
        "acl_resource_type": kafka_enum_name(acl.getField("resourceType")),
        "acl_resource_name": acl.getField("patternName"),
        "acl_pattern_type": acl.getField("patternType"),
        "acl_principal": principal_text(acl.getField("actingPrincipal")),
        "acl_host": acl.getField("host"),
        "acl_operation": F.lit(None).cast("string"),
        "acl_permission_type": F.upper(acl.getField("permissionType")),
        "rbac_role": rbac.getField("role"),
        "rbac_scope": rbac.getField("scope"),
    }


def _authorization_checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, kind = F.col, F.col("_event").getField("type")
    info = c("_event").getField("data").getField("authorizationInfo")
    missing = "missing_field_"
    ruled = F.when(c("rule") == "SuperUser", F.lit("ALLOWED")).when(
        c("rule") == "MatchingAcl", authz_decision(c("acl_permission_type"))
    )
    return [
        (F.trim(F.coalesce(c("message"), F.lit(""))) == "", missing + "message", "blank"),
        (c("_keys").isNull(), "confluent_invalid_json", "not a JSON object (cut short?)"),
        (kind.isNull(), missing + "type", "no CloudEvents type"),
        (kind != TYPE_AUTHORIZATION, "confluent_unsupported_event_type", kind),
        *envelope_checks(),
        (info.isNull(), missing + "authorization_info", "no data.authorizationInfo"),
        (c("decision").isNull(), missing + "granted", "granted/result is not a boolean"),
        (c("principal").isNull(), missing + "principal", "no authenticationInfo.principal"),
        (c("principal_type").isNull(), missing + "principal_type", "principal has no 'type:'"),
        (c("operation").isNull(), missing + "operation", "no authorizationInfo.operation"),
        (c("resource_type").isNull(), missing + "resource_type", "no resourceType"),
        (ruled != c("decision"), "confluent_contradictory_decision", "granted vs the rule"),
    ]


def parse_confluent_authorization(bronze: DataFrame) -> DataFrame:
    """Parse the family's non-authentication records into authz_decisions rows; none dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES) of family 'confluent_audit'; uses message (string, the
        JSON line), log_ts (timestamp), log_date (date).

    Output columns:
        every input column of the records that are not authentication events (see the module
        contract), then the AUTHZ_DECISIONS columns not already in bronze, then reason_code
        (string, null = parsed) and reason_detail (string). record_type 'decision', authorizer
        'ConfluentServerAuthorizer', source_format 'confluent_audit'; operation and resource
        types as AclOperation / ResourceType enum names (Describe -> DESCRIBE); api_name is
        methodName without 'kafka.'; host is the client IP; rule 'SuperUser' / 'MatchingAcl'
        (acl_* from aclAuthorization) / 'RBAC' (rbac_role, rbac_scope) or null.

    Null behaviour: fields an event does not carry are null; an event without a decision,
    principal, operation or resource type is quarantined (missing_field_*).
    """
    c = F.col
    events = with_envelope(bronze.where(~is_authentication_event(c("message"))))
    data = c("_event").getField("data")
    info = data.getField("authorizationInfo")
    derived = events.withColumns(_authorization_columns(info, data.getField("methodName")))
    failed = derived.withColumn("_failure", first_failure(_authorization_checks()))
    return _output(bronze, failed, authz_decisions.AUTHZ_DECISIONS.fieldNames())


def _authentication_columns(data: Column) -> dict[str, Column]:
    status = F.upper(data.getField("result").getField("status"))
    reason = F.nullif(data.getField("result").getField("message"), F.lit(""))
    raw = data.getField("authenticationInfo").getField("metadata").getField("mechanism")
    protocol = group(raw, MECHANISM_RE, 1)
    failed = status != "SUCCESS"
    mechanism = F.coalesce(group(raw, MECHANISM_RE, 2), F.when(protocol.isNull(), raw))
    principal = F.col("_principal")
    return {
        "event_type": F.when(
            status == "SUCCESS", F.lit(auth_events.EVENT_AUTHENTICATION_SUCCEEDED)
        ).when(status.isNotNull(), F.lit(auth_events.EVENT_AUTHENTICATION_FAILED)),
        "side": F.lit("broker"),
        "peer_host": F.col("_client_host"),
        "peer_ip": F.col("_client_ip"),
        "security_protocol": protocol,
        "mechanism": mechanism,
        "mechanism_source": F.when(
            mechanism.isNotNull(), F.lit(auth_events.MECHANISM_FROM_CONFLUENT_AUDIT)
        ),
        "reason": reason,
        "failure_reason_code": F.when(
            failed, F.coalesce(failure_reason_code(reason), F.lit("OTHER"))
        ),
        "principal": principal,
        "principal_source": F.when(
            principal.isNotNull(), F.lit(auth_events.PRINCIPAL_FROM_CONFLUENT_AUDIT)
        ),
    }


def _authentication_checks() -> list[Check]:
    c = F.col
    status = c("_event").getField("data").getField("result").getField("status")
    succeeded = c("event_type") == auth_events.EVENT_AUTHENTICATION_SUCCEEDED
    principal_type_missing = c("principal").isNotNull() & ~c("principal").contains(":")
    return [
        *envelope_checks(),
        (status.isNull(), "missing_field_result_status", "no data.result.status"),
        (succeeded & c("principal").isNull(), "missing_field_principal", "success, no principal"),
        (principal_type_missing, "missing_field_principal_type", "principal has no 'type:'"),
    ]


def parse_confluent_authentication(bronze: DataFrame) -> DataFrame:
    """Parse the family's authentication events into auth_events rows; none dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES) of family 'confluent_audit'; uses message (string, the
        JSON line), log_ts (timestamp), log_date (date).

    Output columns:
        every input column of the ``io.confluent.kafka.server/authentication`` records (see
        the module contract), then the AUTH_EVENTS columns not already in bronze, then
        reason_code (string, null = parsed) and reason_detail (string). event_type
        authentication_succeeded (result.status SUCCESS) or authentication_failed (any other
        status, failure_reason_code from the message, else 'OTHER'); side 'broker'; peer_host /
        peer_ip from the client address; security_protocol and mechanism from
        ``SASL_SSL/PLAIN`` (``SSL`` alone: protocol only); principal, event_id, client_id,
        correlation_id; source_format 'confluent_audit'; principal_source and mechanism_source
        'confluent_audit' where the event gives them.

    Null behaviour: the log-line columns (listener, channel id, session...) are null; a
    failed authentication may have no principal; a success without one is quarantined.
    """
    c = F.col
    events = with_envelope(bronze.where(is_authentication_event(c("message"))))
    filled = _authentication_columns(c("_event").getField("data"))
    shared = {"event_ts", "event_date", "event_id", "client_id", "correlation_id", "source_format"}
    names = auth_events.AUTH_EVENTS.fieldNames()
    rest = [n for n in names if n not in filled and n not in shared and n not in bronze.columns]
    derived = events.withColumns({**filled, **typed_nulls(auth_events.AUTH_EVENTS, rest)})
    failed = derived.withColumn("_failure", first_failure(_authentication_checks()))
    return _output(bronze, failed, names)
