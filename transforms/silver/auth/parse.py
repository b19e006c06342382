"""Parse SASL/SSL authentication records into silver.auth_events rows.

Formats (docs/kafka-log-formats.md section 4, checked against apache/kafka at the tags named):
* ``Selector.pollSelectionKeys`` (broker, and client Selector), 2.2+: INFO ``Failed
  {re-}authentication with {desc} ({exception message})``; desc = ``host/1.2.3.4``, from 3.2
  (KAFKA-13539) followed by `` (channelId=...)``. DEBUG ``Successfully {re-}authenticated with
  {desc}`` (never a channel id). <2.2: DEBUG ``Connection with {desc} disconnected due to
  authentication exception`` with the exception only in the stack trace (``continuation``).
* ``NetworkClient`` (client): ERROR ``Connection to node {id} ({host/ip:port}) failed
  authentication due to: {message}`` (1.x: no address).
* The DEBUG / TRACE lines of SaslServerAuthenticator, SaslClientAuthenticator and
  kafka.network.Processor (session lifetime, re-authentication start, expired-channel
  disconnects, handshake mechanism): ``transforms.silver.auth.debug``. What an exception message
  says
  (reason code, mechanism, re-authentication principals): ``transforms.silver.auth.reasons``.
* Prefixes: broker ``[SocketServer listenerType=BROKER, nodeId=1] `` (2.8+) or ``[SocketServer
  brokerId=1] ``; client LogContext ``[Producer clientId=..] ``, ``[Consumer clientId=..,
  groupId=..] ``, ``[AdminClient clientId=..] ``.
* channelId: ``localIp:port-remoteIp:port-index`` (SocketServer.ConnectionId, <=3.9) or
  ``...-processor-index`` (ServerConnectionId, 4.0+); the node id on the client side.
* Confluent Server's Selector writes the exception as ``(userId=<u>, errorMessage=<message>)``,
  a Confluent Platform client's as ``(errorMessage=<message>)``: the reason is the message,
  the user the line's principal.
* Lines whose poster replaced the peer address (``Failed authentication with <redacted>
  (...)``, ``/<IP>``, ``xxx.xxx.xxx.xxx``) are parsed when the rest is whole: no peer_ip
  from the description, ``peer_address_redacted`` true.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import auth_events as schema
from transforms.columns import LineFormat, first_format, format_fields, group, numbered, typed_nulls
from transforms.quarantine import Check, first_failure
from transforms.silver.auth import debug
from transforms.silver.auth.endpoints import (
    CHANNEL_ID_RE,
    PREFIX_RE,
    connection_columns,
    peer_columns,
    prefix_columns,
)
from transforms.silver.auth.reasons import (
    FAILURE_REASON_CODES,
    confluent_user,
    enabled_mechanisms,
    exception_message,
    failure_reason_code,
    reauth_old_mechanism,
    reauth_principals,
    sasl_mechanism,
)

__all__ = [
    "FAILURE_REASON_CODES",
    "failure_reason_code",
    "is_auth_record",
    "parse_auth_events",
    "sasl_mechanism",
]

LOGGER_RE = r"^org\.apache\.kafka\.(?:common\.network\.Selector|clients\.NetworkClient)(?::\d+)?$"
#: Looser than the parsers, so that cut or garbled outcome lines are claimed, then quarantined.
MARKER_RE = r"(?i)(?:failed |successfully )(?:re-)?authenticat|disconnected due to auth"

_BODY_RE = r"(?s)^(?:\[[^\]]*\] )*(.*)$"
#: A peer address its poster replaced: ``<redacted>``, ``/<IP>``, ``xxx.xxx.xxx.xxx``.
REDACTED_RE = r"<[^<>\s]*>|[xX*]{1,3}(?:\.[xX*]{1,3}){3}"
#: Socket description: ``[host]/<redacted>`` (groups: host, placeholder) or ``host/ip``.
_ADDRESS = rf"(?:(?:([^\s/]*)/)?({REDACTED_RE})|([^\s/]*)/(\S+?))"
_ADDRESS_FIELDS = ("_redacted_host", "_redacted", "peer_host", "peer_ip")
_DESC = rf"{_ADDRESS}(?: \(channelId=([^)]*)\))?"
FAILED_RE = rf"(?s)^Failed (re-)?authentication with {_DESC} \((.*)\)$"
SUCCEEDED_RE = rf"^Successfully (re-)?authenticated with {_ADDRESS}$"
LEGACY_FAILED_RE = rf"^Connection with {_DESC} disconnected due to authentication exception$"
CLIENT_FAILED_RE = (
    r"(?s)^Connection to node (-?\d+)(?: \(([^()\s]*)\))? failed authentication due to: (.*)$"
)
#: How outcome lines start: a claimed line that starts so but does not parse was cut short.
_HEAD_RE = r"^(?:(?:Failed|Successfully) (?:re-)?authenticat|Connection (?:to node|with)\b)"

_NAMED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("failed", FAILED_RE, ("_re", *_ADDRESS_FIELDS, "_channel", "reason")),
    ("succeeded", SUCCEEDED_RE, ("_re", *_ADDRESS_FIELDS)),
    ("legacy_failed", LEGACY_FAILED_RE, (*_ADDRESS_FIELDS, "_channel")),
    ("client_failed", CLIENT_FAILED_RE, ("_broker_node", "broker_address", "reason")),
    *debug.FORMATS,
)
#: (kind, regex, {field: group number}); '_'-fields are intermediate.
_FORMATS: tuple[LineFormat, ...] = tuple((k, r, numbered(names)) for k, r, names in _NAMED)
#: kind -> (event_type, event_type when the line says re-authentication).
_EVENT_TYPES: dict[str, tuple[str, str]] = {
    "failed": (schema.EVENT_AUTHENTICATION_FAILED, schema.EVENT_REAUTHENTICATION_FAILED),
    "legacy_failed": (schema.EVENT_AUTHENTICATION_FAILED, schema.EVENT_REAUTHENTICATION_FAILED),
    "succeeded": (schema.EVENT_AUTHENTICATION_SUCCEEDED, schema.EVENT_REAUTHENTICATION_SUCCEEDED),
    "client_failed": (schema.EVENT_CLIENT_AUTHENTICATION_FAILED,) * 2,
    **debug.EVENT_TYPES,
}


def is_auth_record(logger: Column, message: Column) -> Column:
    """True for the authentication records this family parses (``:NNN`` logger suffix allowed).

    Claims Selector / NetworkClient outcomes (``Failed {re-}authentication``, ``Successfully
    {re-}authenticated``, ``... disconnected due to authentication exception``, ``... failed
    authentication due to:``) and the SaslServerAuthenticator / SaslClientAuthenticator /
    kafka.network.Processor lines of ``transforms.silver.auth.debug``, case-insensitively and
    anywhere
    in the message, so that cut or garbled variants are claimed and quarantined. Other lines of
    those loggers (plain ``Connection with /x disconnected``, ``Set SASL server state to ...``)
    are not claimed. Nulls give false.
    """
    outcome = logger.rlike(LOGGER_RE) & message.rlike(MARKER_RE)
    detail = logger.rlike(debug.DEBUG_LOGGER_RE) & message.rlike(debug.DEBUG_MARKER_RE)
    return F.coalesce(outcome | detail, F.lit(False))


def _event_type(kind: Column, re_: Column) -> Column:
    result = F.when(kind.isNull(), F.lit(None).cast("string"))
    for name, (first, again) in _EVENT_TYPES.items():
        result = result.when(kind == name, F.when(re_.isNotNull(), again).otherwise(first))
    return result


def _side(kind: Column, prefix: Column, connection_id: Column) -> Column:
    """'broker' for a SocketServer prefix, a server channelId or a server-side debug line,
    'client' for NetworkClient, SaslClientAuthenticator, a client LogContext prefix or a node-id
    channelId; null when nothing tells."""
    return (
        F.when(kind.isin("client_failed", *debug.CLIENT_KINDS), "client")
        .when(kind.isin(*debug.BROKER_KINDS), "broker")
        .when(prefix.startswith("SocketServer "), "broker")
        .when(prefix.rlike(r"^\S+ \w+="), "client")
        .when(connection_id.rlike(CHANNEL_ID_RE), "broker")
        .when(connection_id.rlike(r"^-?\d+$"), "client")
    )


def _checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, unknown, cut = F.col, F.col("_kind").isNull(), "auth_truncated_message"
    cut_detail = "starts like an authentication outcome line, then stops matching: cut short"
    malformed_detail = "starts like a SaslServerAuthenticator / SaslClientAuthenticator / "
    malformed_detail += "kafka.network.Processor line, then stops matching its format"
    return [
        (
            F.trim(F.coalesce(c("message"), F.lit(""))) == "",
            "missing_field_message",
            "message is null or blank",
        ),
        (unknown & c("_body").rlike(_HEAD_RE), cut, cut_detail),
        (
            unknown & c("_body").rlike(debug.DEBUG_HEAD_RE),
            "auth_malformed_message",
            malformed_detail,
        ),
        (unknown, "auth_unrecognized_message", "no authentication line format matches"),
        # 'Failed authentication with /ip (channelId=...)' + nothing: the channel id took the
        # place of the exception message.
        ((c("_kind") == "failed") & c("reason").rlike(r"^channelId=[^)]*$"), cut, cut_detail),
        *debug.debug_checks(),
    ]


def _reason_columns(kind: Column, reason: Column) -> dict[str, Column]:
    """What the exception message says; also is_reauthentication, which needs it, and the
    principal a line prints (Confluent Server's ``userId=``, else the new principal of a
    refused re-authentication, ``SaslServerAuthenticator.ReauthInfo``) with its source."""
    principals = reauth_principals(reason)
    principal = F.coalesce(F.col("_line_user"), principals["reauth_new_principal"])
    mechanism = F.coalesce(F.col("_mechanism"), sasl_mechanism(reason))
    return {
        "failure_reason_code": failure_reason_code(reason),
        "mechanism": mechanism,
        "mechanism_source": F.when(mechanism.isNotNull(), F.lit(schema.MECHANISM_FROM_LINE)),
        **principals,
        "principal": principal,
        "principal_source": F.when(principal.isNotNull(), F.lit(schema.PRINCIPAL_FROM_LINE)),
        "reauth_old_mechanism": reauth_old_mechanism(reason),
        "enabled_mechanisms": enabled_mechanisms(reason),
        "is_reauthentication": debug.is_reauthentication(
            kind, F.col("_re"), reauth_old_mechanism(reason)
        ),
    }


def _address_columns(fields: dict[str, Column]) -> dict[str, Column]:
    """The format's fields, with the Selector's socket description and channel id,
    placeholders left out.

    Output columns: those of ``fields``, with connection_id (string: a debug line's id, else
    the channelId unless the poster replaced it by a placeholder), peer_host (string: the
    description's host, also beside a placeholder), _redacted (boolean: the description's
    address is a placeholder, ``REDACTED_RE``). Input: ``format_fields`` of ``_FORMATS``,
    built on here rather than read back, so that both are one projection.
    """
    channel = F.when(~fields["_channel"].rlike(rf"^(?:{REDACTED_RE})$"), fields["_channel"])
    return fields | {
        "connection_id": F.coalesce(fields["connection_id"], channel),
        "peer_host": F.coalesce(fields["peer_host"], fields["_redacted_host"]),
        "_redacted": fields["_redacted"].isNotNull(),
    }


def _line_columns(fields: DataFrame) -> DataFrame:
    """Time, event type, side, prefix and channel parts, and the exception message of each
    parsed line (``_fields`` columns expanded): reason without Confluent Server's ``userId=``
    and a client's ``errorMessage=`` wrapping, the user such a line names as ``_line_user``.
    A pre-2.2 line's reason is its stack trace's first exception message."""
    c, kind = F.col, F.col("_kind")
    legacy_reason = group(c("continuation"), r"^[\w$.]+: ([^\n]*)", 1)
    raw_reason = F.coalesce(
        c("reason"),
        F.when(kind == "legacy_failed", legacy_reason),
        F.when(kind == "mechanism_rejected", c("_body")),
    )
    return fields.withColumns(
        {
            "event_ts": c("log_ts"),
            "event_date": c("log_date"),
            "event_type": _event_type(kind, c("_re")),
            "side": _side(kind, c("_prefix"), c("connection_id")),
            **prefix_columns(c("_prefix"), c("_header_client_id")),
            **connection_columns(c("connection_id"), c("thread")),
            "reason": exception_message(raw_reason),
            "_line_user": confluent_user(raw_reason),
        }
    )


def parse_auth_events(bronze: DataFrame) -> DataFrame:
    """Parse authentication bronze records (family 'auth'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string), thread (string), continuation
        (string, the stack trace of pre-2.2 DEBUG lines), log_ts (timestamp), log_date (date).

    Output columns:
        every input column, then the AUTH_EVENTS columns not already in bronze (event_ts
        timestamp, event_type string, ... event_date date), then reason_code (string, null =
        parsed) and reason_detail (string). See schemas.auth_events for each column;
        source_format is 'log4j' and the Confluent-only columns are null. principal and
        mechanism are what the line itself says (``principal_source`` / ``mechanism_source``
        'line'); ``transforms.silver.auth.principals`` links the others.

    Null behaviour: a null or blank message gets reason_code 'missing_field_message'; fields
    a line does not carry (channelId before 3.2, thread outside Strimzi...) are null; a peer
    address its poster replaced (``<redacted>``, ``/<IP>``, ``xxx.xxx.xxx.xxx``) gives a null
    peer_ip (unless the channel id holds it) and peer_address_redacted true.
    """
    c, kind = F.col, F.col("_kind")
    prefix, body = group(c("message"), PREFIX_RE, 1), F.regexp_extract(c("message"), _BODY_RE, 1)
    fields = (
        bronze.withColumns({"_prefix": prefix, "_body": body})
        .withColumn("_f", first_format(c("_body"), _FORMATS, "_kind"))
        .withColumns(_address_columns(format_fields(c("_f"), _FORMATS, "_kind")))
    )
    remote = F.struct("remote_ip", "remote_port")
    peers = peer_columns(c("broker_address"), c("peer_host"), c("peer_ip"), remote)
    derived = _line_columns(fields).withColumns(
        {
            **peers,
            "peer_address_redacted": F.when(c("_redacted"), F.lit(True)).when(
                peers["peer_ip"].isNotNull(), F.lit(False)
            ),
            "broker_node_id": F.coalesce(
                c("_broker_node"),
                F.when(
                    (c("side") == "client") & c("connection_id").rlike(r"^-?\d+$"),
                    c("connection_id"),
                ),
            ).try_cast("int"),
            **_reason_columns(kind, c("reason")),
            **debug.debug_columns(),
            "source_format": F.lit(schema.SOURCE_FORMAT_LOG4J),
            **typed_nulls(schema.AUTH_EVENTS, schema.CONFLUENT_COLUMNS),
        }
    )
    failed = derived.withColumn("_failure", first_failure(_checks()))
    silver = [name for name in schema.AUTH_EVENTS.fieldNames() if name not in bronze.columns]
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(*bronze.columns, *silver, *reasons)
