"""Parse SASL/SSL authentication outcome records into silver.auth_events rows.

Formats (kafka-log-formats.md section 4, checked against apache/kafka at the tags named):
* ``Selector.pollSelectionKeys`` (broker, and client Selector), 2.2+: INFO ``Failed
  {re-}authentication with {desc} ({exception message})``; desc = ``host/1.2.3.4``, from 3.2
  (KAFKA-13539) followed by `` (channelId=...)``. DEBUG ``Successfully {re-}authenticated with
  {desc}`` (never a channel id). <2.2: DEBUG ``Connection with {desc} disconnected due to
  authentication exception`` with the exception only in the stack trace (``continuation``).
* ``NetworkClient`` (client): ERROR ``Connection to node {id} ({host/ip:port}) failed
  authentication due to: {message}`` (1.x: no address).
* Prefixes: broker ``[SocketServer listenerType=BROKER, nodeId=1] `` (2.8+) or ``[SocketServer
  brokerId=1] ``; client LogContext ``[Producer clientId=..] ``, ``[Consumer clientId=..,
  groupId=..] ``, ``[AdminClient clientId=..] ``.
* channelId: ``localIp:port-remoteIp:port-index`` (SocketServer.ConnectionId, <=3.9) or
  ``...-processor-index`` (ServerConnectionId, 4.0+); the node id on the client side.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import auth_events as schema
from transforms.quarantine import Check, first_failure

LOGGER_RE = r"^org\.apache\.kafka\.(?:common\.network\.Selector|clients\.NetworkClient)(?::\d+)?$"
#: Looser than the parsers, so that cut or garbled outcome lines are claimed, then quarantined.
MARKER_RE = r"(?i)(?:failed |successfully )(?:re-)?authenticat|disconnected due to auth"

#: The LogContext prefix is the last '[...] ' before the text (Connect may put its MDC first).
PREFIX_RE = r"^(?:\[[^\]]*\] )*\[([^\]]*)\] "
_BODY_RE = r"(?s)^(?:\[[^\]]*\] )*(.*)$"
_DESC = r"([^\s/]*)/(\S+?)(?: \(channelId=([^)]*)\))?"
FAILED_RE = rf"(?s)^Failed (re-)?authentication with {_DESC} \((.*)\)$"
SUCCEEDED_RE = r"^Successfully (re-)?authenticated with ([^\s/]*)/(\S+)$"
LEGACY_FAILED_RE = rf"^Connection with {_DESC} disconnected due to authentication exception$"
CLIENT_FAILED_RE = (
    r"(?s)^Connection to node (-?\d+)(?: \(([^()\s]*)\))? failed authentication due to: (.*)$"
)
#: InetSocketAddress.toString: host/ip:port, host/[v6]:port (Java 14+), host/<unresolved>:port.
ADDRESS_RE = r"^([^/]*)/(?:\[([^\]]*)\]|(.*)):(\d+)$"
CHANNEL_ID_RE = r"^([^-]+):(\d+)-([^-]+):(\d+)-(\d+)(?:-(\d+))?$"
#: SocketServer Processor thread: <prefix>-kafka-network-thread-<node>-ListenerName(X)-<proto>-<id>.
THREAD_RE = r"-ListenerName\(([^)]*)\)-([A-Z_]+)-(\d+)$"
#: How outcome lines start: a claimed line that starts so but does not parse was cut short.
_HEAD_RE = r"^(?:(?:Failed|Successfully) (?:re-)?authenticat|Connection (?:to node|with)\b)"
_MECHANISM_RE = (
    r"with SASL mechanism (\S+)|^Unsupported SASL mechanism (\S+)"
    r"|with client mechanism ([^,\s]+)|^SASL mechanism '([^']*)' requested"
)

#: failure_reason_code -> regex on the exception message; the first match wins, else 'OTHER'.
FAILURE_REASON_CODES: dict[str, str] = {
    "INVALID_CREDENTIALS": r"^Authentication failed during (?:re-)?authentication due to invalid",
    "INVALID_USERNAME_OR_PASSWORD": r"^Authentication failed: Invalid username or password",
    "USERNAME_NOT_SPECIFIED": r"^Authentication failed: username not specified",
    "PASSWORD_NOT_SPECIFIED": r"^Authentication failed: password not specified",
    "CREDENTIALS_NOT_VERIFIED": r"^Authentication failed: credentials for user could not be",
    "AUTHORIZATION_ID_MISMATCH": r"^Authentication failed: Client requested an authorization id",
    "UNEXPECTED_REQUEST_DURING_HANDSHAKE": r"^Unexpected Kafka request .* during SASL handshake",
    "UNEXPECTED_REQUEST_DURING_AUTHENTICATION": r"^Unexpected Kafka request .* SASL authentication",
    "UNSUPPORTED_MECHANISM": r"^Unsupported SASL mechanism ",
    "INVALID_RECEIVE_SIZE": r"^Failing SASL authentication due to invalid receive size",
    "PRINCIPAL_CHANGE_DURING_REAUTH": r"^Cannot change principals during re-authentication",
    "MECHANISM_CHANGE_DURING_REAUTH": r"^SASL mechanism .* not supported for re-authentication",
    "SSL_HANDSHAKE_FAILED": r"^SSL handshake failed",
    "SSL_POST_HANDSHAKE_FAILED": r"^Failed to process post-handshake messages",
    "MECHANISM_MISMATCH": r"^Unexpected handshake request with client mechanism ",
    "OAUTH_INVALID_TOKEN": r"\"status\"\s*:\s*\"invalid_token\"",
}

_FORMATS = (
    ("failed", FAILED_RE, ("_re", "peer_host", "peer_ip", "connection_id", "reason")),
    ("succeeded", SUCCEEDED_RE, ("_re", "peer_host", "peer_ip")),
    ("legacy_failed", LEGACY_FAILED_RE, ("peer_host", "peer_ip", "connection_id")),
    ("client_failed", CLIENT_FAILED_RE, ("_broker_node", "broker_address", "reason")),
)
_FIELDS = tuple(dict.fromkeys(name for _, _, names in _FORMATS for name in names))


def _group(text: Column, regex: str, index: int) -> Column:
    """Group ``index`` of ``regex`` in ``text``; null when absent or empty."""
    return F.nullif(F.regexp_extract(text, regex, index), F.lit(""))


def is_auth_record(logger: Column, message: Column) -> Column:
    """True for authentication-outcome records of Selector / NetworkClient (``:NNN`` allowed).

    Claims ``Failed {re-}authentication``, ``Successfully {re-}authenticated``, ``...
    disconnected due to authentication exception`` and ``... failed authentication due to:``,
    case-insensitively and anywhere in the message, so that cut or garbled variants are claimed
    and quarantined; plain ``Connection with /x disconnected`` is not. Nulls give false.
    """
    claimed = logger.rlike(LOGGER_RE) & message.rlike(MARKER_RE)
    return F.coalesce(claimed, F.lit(False))


def failure_reason_code(reason: Column) -> Column:
    """Stable code for an authentication exception message (FAILURE_REASON_CODES, else
    'OTHER'); null for a null reason."""
    result = F.when(reason.isNull(), F.lit(None).cast("string"))
    for code, regex in FAILURE_REASON_CODES.items():
        result = result.when(reason.rlike(regex), F.lit(code))
    return result.otherwise(F.lit("OTHER"))


def sasl_mechanism(reason: Column) -> Column:
    """SASL mechanism an exception message names (``with SASL mechanism X``, ``Unsupported SASL
    mechanism X``, ``client mechanism X,``, ``SASL mechanism 'X' requested``); else null."""
    return F.coalesce(*[_group(reason, _MECHANISM_RE, i) for i in range(1, 5)])


def _fields(body: Column) -> Column:
    """_kind plus the verbatim fields of whichever outcome format matched, as one struct."""
    result: Column | None = None
    for kind, regex, names in _FORMATS:
        groups = {name: _group(body, regex, i) for i, name in enumerate(names, 1)}
        values = [groups.get(f, F.lit(None).cast("string")).alias(f) for f in _FIELDS]
        value = F.struct(F.lit(kind).alias("_kind"), *values)
        matched = body.rlike(regex)
        result = F.when(matched, value) if result is None else result.when(matched, value)
    assert result is not None
    return result


def _event_type(kind: Column, re_: Column) -> Column:
    again = re_.isNotNull()
    return (
        F.when(kind.isin("failed", "legacy_failed") & again, schema.EVENT_REAUTHENTICATION_FAILED)
        .when(kind.isin("failed", "legacy_failed"), schema.EVENT_AUTHENTICATION_FAILED)
        .when((kind == "succeeded") & again, schema.EVENT_REAUTHENTICATION_SUCCEEDED)
        .when(kind == "succeeded", schema.EVENT_AUTHENTICATION_SUCCEEDED)
        .when(kind == "client_failed", schema.EVENT_CLIENT_AUTHENTICATION_FAILED)
    )


def _prefix_columns(prefix: Column) -> dict[str, Column]:
    """Fields of the broker SocketServer or client LogContext prefix (without brackets)."""
    word = _group(prefix, r"^(\S+)", 1)
    server = word == "SocketServer"
    client = ~server & prefix.rlike(r"^\S+ \w+=")  # 'Name key=value, ...', not a Connect MDC
    node = _group(prefix, r"(?:nodeId|brokerId)=(-?\d+)", 1).try_cast("int")
    group_id = _group(prefix, r"[ ,]groupId=([^,]*)", 1)
    return {
        "listener_type": F.when(server, _group(prefix, r"listenerType=([^,]+)", 1)),
        "socket_server_node_id": F.when(server, node),
        "client_type": F.when(client, word),
        "client_id": F.when(client, _group(prefix, r"[ ,]clientId=([^,]*)", 1)),
        # ConsumerUtils writes groupId.orElse("null") when the consumer has no group.
        "group_id": F.when(client & (group_id != "null"), group_id),
    }


def _connection_columns(connection_id: Column, thread: Column) -> dict[str, Column]:
    """channelId parts, and listener / protocol / processor from a Strimzi thread name."""
    cid, four_part = CHANNEL_ID_RE, _group(connection_id, CHANNEL_ID_RE, 6).isNotNull()
    return {
        "local_ip": _group(connection_id, cid, 1),
        "local_port": _group(connection_id, cid, 2).try_cast("int"),
        "remote_ip": _group(connection_id, cid, 3),
        "remote_port": _group(connection_id, cid, 4).try_cast("int"),
        "processor_id": F.coalesce(
            F.when(four_part, _group(connection_id, cid, 5)), _group(thread, THREAD_RE, 3)
        ).try_cast("int"),
        "listener": _group(thread, THREAD_RE, 1),
        "security_protocol": _group(thread, THREAD_RE, 2),
    }


def _peer_columns(
    address: Column, host: Column, ip: Column, remote_port: Column
) -> dict[str, Column]:
    """The other end: the Selector's socket description, else the NetworkClient node address."""
    a = ADDRESS_RE
    address_ip = F.coalesce(_group(address, a, 2), _group(address, a, 3))
    return {
        "peer_host": F.coalesce(host, _group(address, a, 1)),
        "peer_ip": F.coalesce(ip, F.nullif(address_ip, F.lit("<unresolved>"))),
        "peer_port": F.coalesce(remote_port, _group(address, a, 4).try_cast("int")),
    }


def _side(kind: Column, prefix: Column, connection_id: Column) -> Column:
    """'broker' for a SocketServer prefix or a server channelId, 'client' for NetworkClient, a
    client LogContext prefix or a node-id channelId; null when nothing tells."""
    return (
        F.when(kind == "client_failed", "client")
        .when(prefix.startswith("SocketServer "), "broker")
        .when(prefix.rlike(r"^\S+ \w+="), "client")
        .when(connection_id.rlike(CHANNEL_ID_RE), "broker")
        .when(connection_id.rlike(r"^-?\d+$"), "client")
    )


def _checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, unknown, cut = F.col, F.col("_kind").isNull(), "auth_truncated_message"
    cut_detail = "starts like an authentication outcome line, then stops matching: cut short"
    return [
        (
            F.trim(F.coalesce(c("message"), F.lit(""))) == "",
            "missing_field_message",
            "message is null or blank",
        ),
        (unknown & c("_body").rlike(_HEAD_RE), cut, cut_detail),
        (unknown, "auth_unrecognized_message", "no Selector / NetworkClient outcome format"),
        # 'Failed authentication with /ip (channelId=...)' + nothing: the channel id took the
        # place of the exception message.
        ((c("_kind") == "failed") & c("reason").rlike(r"^channelId=[^)]*$"), cut, cut_detail),
    ]


def parse_auth_events(bronze: DataFrame) -> DataFrame:
    """Parse authentication-outcome bronze records (family 'auth'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string), thread (string), continuation
        (string, the stack trace of pre-2.2 DEBUG lines), log_ts (timestamp), log_date (date).

    Output columns:
        every input column, then the AUTH_EVENTS columns not already in bronze (event_ts
        timestamp, event_type string, ... event_date date), then reason_code (string, null =
        parsed) and reason_detail (string). See schemas.auth_events for each column.

    Null behaviour: a null or blank message gets reason_code 'missing_field_message'; fields
    a line does not carry (channelId before 3.2, thread outside Strimzi...) are null.
    """
    c = F.col
    prefix, body = _group(c("message"), PREFIX_RE, 1), F.regexp_extract(c("message"), _BODY_RE, 1)
    fields = (
        bronze.withColumns({"_prefix": prefix, "_body": body})
        .withColumn("_f", _fields(c("_body")))
        .select("*", "_f.*")
    )
    legacy_reason = _group(c("continuation"), r"^[\w$.]+: ([^\n]*)", 1)
    with_parts = fields.withColumns(
        {
            "event_ts": c("log_ts"),
            "event_date": c("log_date"),
            "event_type": _event_type(c("_kind"), c("_re")),
            "side": _side(c("_kind"), c("_prefix"), c("connection_id")),
            **_prefix_columns(c("_prefix")),
            **_connection_columns(c("connection_id"), c("thread")),
            "reason": F.coalesce(c("reason"), F.when(c("_kind") == "legacy_failed", legacy_reason)),
        }
    )
    derived = with_parts.withColumns(
        {
            **_peer_columns(c("broker_address"), c("peer_host"), c("peer_ip"), c("remote_port")),
            "broker_node_id": F.coalesce(
                c("_broker_node"),
                F.when(
                    (c("side") == "client") & c("connection_id").rlike(r"^-?\d+$"),
                    c("connection_id"),
                ),
            ).try_cast("int"),
            "failure_reason_code": failure_reason_code(c("reason")),
            "mechanism": sasl_mechanism(c("reason")),
        }
    )
    failed = derived.withColumn("_failure", first_failure(_checks()))
    silver = [name for name in schema.AUTH_EVENTS.fieldNames() if name not in bronze.columns]
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(*bronze.columns, *silver, *reasons)
