"""Confluent audit-log CloudEvents: the explicit read schema and the envelope columns that the
authorization and authentication parsers share (``transforms.silver.confluent_audit.parse``).

Shapes (Confluent Platform "Audit log concepts" and Confluent Cloud "Audit log event schema" /
"Audit log records" documentation; real Platform events quoted in
tests/spark/test_confluent_audit.py):
* Envelope: ``id``, ``source`` (CRN), ``specversion`` ("0.3" in older Platform releases, "1.0"),
  ``type`` (``io.confluent.kafka.server/authorization`` | ``/authentication`` | ``/request``),
  ``subject``, ``time`` (RFC 3339, UTC, up to nanoseconds), Platform ``confluentRouting``.
* ``data``: ``serviceName``, ``methodName`` (``kafka.CreateTopics``, ``kafka.Authentication``,
  ``mds.Authorize``), ``resourceName``; ``authenticationInfo`` {``principal`` (``User:alice``,
  or in Cloud's AuditLog v2 an object ``{"confluentServiceAccount": {"resourceId": "sa-1"}}``),
  ``metadata`` {``mechanism`` (``SSL``, ``SASL_SSL/PLAIN``), ``identifier``}};
  ``authorizationInfo`` {``granted`` (v2: ``result``), ``operation``, ``resourceType``,
  ``resourceName``, ``patternType``, and ``superUserAuthorization`` | ``aclAuthorization``
  {``permissionType``, ``host``, v2 ``patternName``...} | ``rbacAuthorization`` {``role``,
  ``scope``...}}; ``request`` {Platform ``correlation_id``/``client_id``, Cloud
  ``correlationId``/``clientId``}; ``requestMetadata`` {Platform ``client_address``
  (``/1.2.3.4``), Cloud ``clientAddress`` ([{``ip``}])}; ``result`` {``status``, ``message``}
  on authentication events.

Leaves are read as strings: Spark's JSON reader writes any JSON value (object, array, number,
boolean) as its compact JSON text into a string field, so one schema reads every spelling.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from schemas.auth_events import SOURCE_FORMAT_CONFLUENT_AUDIT
from transforms.columns import group
from transforms.quarantine import Check

TYPE_PREFIX = "io.confluent.kafka.server/"
TYPE_AUTHORIZATION = TYPE_PREFIX + "authorization"
TYPE_AUTHENTICATION = TYPE_PREFIX + "authentication"
SPEC_VERSIONS: tuple[str, ...] = ("0.3", "1.0")
#: Platform client_address: InetAddress.toString, 'host/1.2.3.4' or '/1.2.3.4'.
CLIENT_ADDRESS_RE = r"^(?:([^/]*)/)?(.+)$"
#: Cloud AuditLog v2 principal objects whose resourceId is the 'User:<id>' principal name.
PRINCIPAL_OBJECT_KEYS: tuple[str, ...] = (
    "confluentServiceAccount",
    "confluentUser",
    "identityPool",
)


def _strings(*names: str) -> list[StructField]:
    return [StructField(name, StringType(), True) for name in names]


_ACL = StructType(
    _strings("permissionType", "host", "resourceType", "patternName", "patternType")
    + _strings("actingPrincipal")
)
_RBAC = StructType(
    _strings("role", "scope", "resourceType", "patternName", "patternType", "operation")
)
_AUTHENTICATION_INFO = StructType(
    [
        *_strings("principal", "principalResourceId"),
        StructField("metadata", StructType(_strings("mechanism", "identifier")), True),
    ]
)
_AUTHORIZATION_INFO = StructType(
    [
        *_strings("granted", "result", "operation", "resourceType", "resourceName"),
        *_strings("patternType", "superUserAuthorization"),
        StructField("aclAuthorization", _ACL, True),
        StructField("rbacAuthorization", _RBAC, True),
    ]
)
_DATA = StructType(
    [
        *_strings("serviceName", "methodName", "resourceName"),
        StructField("authenticationInfo", _AUTHENTICATION_INFO, True),
        StructField("authorizationInfo", _AUTHORIZATION_INFO, True),
        StructField(
            "request",
            StructType(_strings("correlation_id", "correlationId", "client_id", "clientId")),
            True,
        ),
        StructField(
            "requestMetadata",
            StructType(_strings("client_address", "clientAddress", "clientId")),
            True,
        ),
        StructField("result", StructType(_strings("status", "message")), True),
    ]
)
#: The read schema of one audit-log line (fields this pipeline uses; others are ignored).
CONFLUENT_AUDIT_EVENT = StructType(
    [
        *_strings("id", "source", "specversion", "type", "subject", "time"),
        StructField("data", _DATA),
    ]
)


def event_type(message: Column) -> Column:
    """The CloudEvents ``type`` of a JSON line; null for null, non-JSON or a line without it."""
    return F.get_json_object(message, "$.type")


def principal_text(raw: Column) -> Column:
    """KafkaPrincipal string of an audit-log principal: a string stays as is (empty gives null);
    a Cloud v2 object gives ``User:<resourceId>`` of its confluentServiceAccount, confluentUser
    or identityPool (Cloud's own principal strings are ``User:sa-..``, ``User:u-..``,
    ``User:pool-..``); another object gives null."""
    resource_ids = [F.get_json_object(raw, f"$.{key}.resourceId") for key in PRINCIPAL_OBJECT_KEYS]
    from_object = F.concat(F.lit("User:"), F.coalesce(*resource_ids))
    return F.when(raw.startswith("{"), from_object).otherwise(F.nullif(raw, F.lit("")))


def client_address(request_metadata: Column) -> Column:
    """Platform ``client_address`` verbatim, else the first Cloud ``clientAddress[].ip``."""
    cloud_ip = F.get_json_object(request_metadata.getField("clientAddress"), "$[0].ip")
    return F.coalesce(request_metadata.getField("client_address"), cloud_ip)


def with_envelope(bronze: DataFrame) -> DataFrame:
    """Parse the JSON line and add the columns both Confluent parsers share.

    Input columns:
        message (string, the JSON line), log_ts (timestamp), log_date (date).

    Output columns:
        the input, then _event (CONFLUENT_AUDIT_EVENT struct), _keys (array<string>: null unless
        message is a JSON object), _principal, _client_host, _client_ip, _correlation_raw
        (string), event_ts (timestamp: the event's time, else log_ts), event_date (date:
        log_date, else the UTC date of event_ts), event_id, client_id (string),
        correlation_id (int), source_format ('confluent_audit').

    Null behaviour: a null or non-JSON message gives null _event fields and null _keys.
    """
    c, e = F.col, F.col("_event")
    data = e.getField("data")
    request = data.getField("request")
    address = client_address(data.getField("requestMetadata"))
    event_time = e.getField("time").try_cast("timestamp")
    correlation = F.coalesce(request.getField("correlation_id"), request.getField("correlationId"))
    parsed = bronze.withColumns(
        {
            "_event": F.from_json(c("message"), CONFLUENT_AUDIT_EVENT),
            "_keys": F.json_object_keys(c("message")),
        }
    )
    return parsed.withColumns(
        {
            "_principal": principal_text(data.getField("authenticationInfo").getField("principal")),
            "_client_host": group(address, CLIENT_ADDRESS_RE, 1),
            "_client_ip": group(address, CLIENT_ADDRESS_RE, 2),
            "_correlation_raw": correlation,
            "event_ts": F.coalesce(event_time, c("log_ts")),
            "event_date": F.coalesce(c("log_date"), F.to_date(F.coalesce(event_time, c("log_ts")))),
            "event_id": e.getField("id"),
            "client_id": F.coalesce(
                request.getField("client_id"),
                request.getField("clientId"),
                data.getField("requestMetadata").getField("clientId"),
            ),
            "correlation_id": correlation.try_cast("int"),
            "source_format": F.lit(SOURCE_FORMAT_CONFLUENT_AUDIT),
        }
    )


def envelope_checks() -> list[Check]:
    """Quarantine checks on the CloudEvents envelope, in priority order (after the type)."""
    c, e = F.col, F.col("_event")
    version, time = e.getField("specversion"), e.getField("time")
    return [
        (version.isNull(), "missing_field_specversion", "no CloudEvents specversion"),
        (~version.isin(*SPEC_VERSIONS), "confluent_unsupported_specversion", version),
        (F.trim(F.coalesce(e.getField("id"), F.lit(""))) == "", "missing_field_id", "no event id"),
        (
            time.isNotNull() & time.try_cast("timestamp").isNull(),
            "confluent_invalid_time",
            time,
        ),
        (
            c("_correlation_raw").isNotNull() & c("correlation_id").isNull(),
            "confluent_invalid_correlation_id",
            c("_correlation_raw"),
        ),
    ]
