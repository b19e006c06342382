"""silver.auth_events: one row per SASL/SSL authentication event (broker or client side).

Sources: ``org.apache.kafka.common.network.Selector`` (``Failed {re-}authentication with``,
``Successfully {re-}authenticated with``, pre-2.2 ``... disconnected due to authentication
exception``), ``org.apache.kafka.clients.NetworkClient`` (``Connection to node ... failed
authentication due to: ...``), the DEBUG/TRACE lines of ``SaslServerAuthenticator``,
``SaslClientAuthenticator`` and ``kafka.network.Processor`` (session lifetime, re-authentication
start, expired-channel disconnects), and Confluent audit-log authentication events; see
``transforms.silver.auth.parse``, ``transforms.silver.auth.debug``,
``transforms.silver.confluent_audit.parse`` and
docs/kafka-log-formats.md section 4. Principal and mechanism are linked across lines and to
the request log (``request_events``) by ``transforms.silver.auth.principals``.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.lineage import EVENT_DATE_FIELD, EVENT_PARTITION_COLUMNS, LINEAGE_FIELDS

TABLE_NAME = "auth_events"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``event_type`` values.
EVENT_AUTHENTICATION_FAILED = "authentication_failed"
EVENT_REAUTHENTICATION_FAILED = "reauthentication_failed"
EVENT_AUTHENTICATION_SUCCEEDED = "authentication_succeeded"
EVENT_REAUTHENTICATION_SUCCEEDED = "reauthentication_succeeded"
EVENT_CLIENT_AUTHENTICATION_FAILED = "client_authentication_failed"
# SaslServerAuthenticator 'Authentication complete; session max lifetime ...' (DEBUG).
EVENT_SESSION_LIFETIME = "session_lifetime"
# kafka.network.Processor 'Disconnecting expired channel: ...' (DEBUG, KIP-368).
EVENT_EXPIRED_CHANNEL_DISCONNECTED = "expired_channel_disconnected"
# SaslServerAuthenticator 'Beginning re-authentication' / Processor 'Begin re-authentication'.
EVENT_REAUTHENTICATION_STARTED = "reauthentication_started"
# SaslServerAuthenticator 'Failed during {re-}authentication: ...': an unexpected exception (not
# an AuthenticationException), which Selector does not count as a failed authentication.
EVENT_AUTHENTICATION_ERROR = "authentication_error"
EVENT_REAUTHENTICATION_ERROR = "reauthentication_error"
# SaslServerAuthenticator handshake: 'Using SASL mechanism ...' / '... is not supported'.
EVENT_MECHANISM_SELECTED = "mechanism_selected"
EVENT_MECHANISM_REJECTED = "mechanism_rejected"
# SaslClientAuthenticator 'Finished {re-}authentication with ...' (DEBUG).
EVENT_CLIENT_SESSION_ESTABLISHED = "client_session_established"
EVENT_TYPES: tuple[str, ...] = (
    EVENT_AUTHENTICATION_FAILED,
    EVENT_REAUTHENTICATION_FAILED,
    EVENT_AUTHENTICATION_SUCCEEDED,
    EVENT_REAUTHENTICATION_SUCCEEDED,
    EVENT_CLIENT_AUTHENTICATION_FAILED,
    EVENT_SESSION_LIFETIME,
    EVENT_EXPIRED_CHANNEL_DISCONNECTED,
    EVENT_REAUTHENTICATION_STARTED,
    EVENT_AUTHENTICATION_ERROR,
    EVENT_REAUTHENTICATION_ERROR,
    EVENT_MECHANISM_SELECTED,
    EVENT_MECHANISM_REJECTED,
    EVENT_CLIENT_SESSION_ESTABLISHED,
)

#: ``source_format`` values.
SOURCE_FORMAT_LOG4J = "log4j"
SOURCE_FORMAT_CONFLUENT_AUDIT = "confluent_audit"
#: Columns only Confluent audit-log events fill (null on log4j rows).
CONFLUENT_COLUMNS: tuple[str, ...] = ("event_id",)

#: ``principal_source`` values (transforms.silver.auth.principals).
#: The line prints the user: Confluent Server's ``(userId=alice, errorMessage=...)``, the new
#: principal of ``Cannot change principals during re-authentication from User.a: User.b``.
PRINCIPAL_FROM_LINE = "line"
#: The line's channel id is a connection of the same broker and day in the request log.
PRINCIPAL_FROM_REQUEST_LOG = "request_log"
#: A success paired with the connection it opens, or a re-authentication outcome with the
#: connections of its address open at its time (all of one principal): the KIP-368 pairing of
#: gold ``reauth_sessions`` (``transforms.auth_links``).
PRINCIPAL_FROM_SESSION = "session"
#: Confluent audit authentication events carry the authenticated principal.
PRINCIPAL_FROM_CONFLUENT_AUDIT = "confluent_audit"
PRINCIPAL_SOURCES: tuple[str, ...] = (
    PRINCIPAL_FROM_LINE,
    PRINCIPAL_FROM_REQUEST_LOG,
    PRINCIPAL_FROM_SESSION,
    PRINCIPAL_FROM_CONFLUENT_AUDIT,
)
#: ``mechanism_source`` values: the line names it ('line'), the ``Using SASL mechanism`` line
#: of the outcome's handshake (SaslServerAuthenticator, 'handshake'), the Confluent audit
#: event's ``authenticationInfo.metadata.mechanism`` ('confluent_audit').
MECHANISM_FROM_LINE = "line"
MECHANISM_FROM_HANDSHAKE = "handshake"
MECHANISM_FROM_CONFLUENT_AUDIT = "confluent_audit"
MECHANISM_SOURCES: tuple[str, ...] = (
    MECHANISM_FROM_LINE,
    MECHANISM_FROM_HANDSHAKE,
    MECHANISM_FROM_CONFLUENT_AUDIT,
)

AUTH_EVENTS = StructType(
    [
        *LINEAGE_FIELDS,
        # One of EVENT_TYPES.
        StructField("event_type", StringType(), False),
        # 'broker' | 'client'; null when neither the prefix nor the channel id tells.
        StructField("side", StringType(), True),
        # From the broker prefix '[SocketServer listenerType=BROKER, nodeId=1]' or
        # '[SocketServer brokerId=1]' (2.x).
        StructField("listener_type", StringType(), True),
        StructField("socket_server_node_id", IntegerType(), True),
        # From a client LogContext prefix '[Producer clientId=..]', '[Consumer clientId=..,
        # groupId=..]', '[AdminClient clientId=..]' (client_type = the prefix's first word);
        # client_id also from the RequestHeader of an expired-channel line.
        StructField("client_type", StringType(), True),
        StructField("client_id", StringType(), True),
        StructField("group_id", StringType(), True),
        # The other end of the connection: the client for broker lines, the broker for client
        # lines. peer_host is the name in 'name/1.2.3.4' (null if the address has no name).
        StructField("peer_host", StringType(), True),
        StructField("peer_ip", StringType(), True),
        StructField("peer_port", IntegerType(), True),
        # true when the line's peer address is a placeholder its poster put in its place
        # ('<redacted>', '/<IP>', 'xxx.xxx.xxx.xxx'): peer_ip is then null; false when the
        # line gives an address; null when the line has no peer address to give.
        StructField("peer_address_redacted", BooleanType(), True),
        # channelId verbatim (3.2+): 'localIp:port-remoteIp:port-index' (<=3.9),
        # '...-processor-index' (4.x), or the node id ('-1') on the client side.
        StructField("connection_id", StringType(), True),
        StructField("local_ip", StringType(), True),
        StructField("local_port", IntegerType(), True),
        StructField("remote_ip", StringType(), True),
        StructField("remote_port", IntegerType(), True),
        # Network processor: 4.x channelId, else the Strimzi thread name's trailing id.
        StructField("processor_id", IntegerType(), True),
        # From a Strimzi thread name '...-ListenerName(TLS-9093)-SASL_SSL-8'.
        StructField("listener", StringType(), True),
        StructField("security_protocol", StringType(), True),
        # Exception message verbatim; null for success lines.
        StructField("reason", StringType(), True),
        # Stable code for reason (transforms.silver.auth.reasons.FAILURE_REASON_CODES, else
        # 'OTHER').
        StructField("failure_reason_code", StringType(), True),
        # SASL mechanism: the one the line names (the reason, a Kerberos failure's GSSAPI, a
        # 'Using SASL mechanism' line), else the handshake's (transforms.silver.auth.principals).
        StructField("mechanism", StringType(), True),
        # How mechanism is known: one of MECHANISM_SOURCES; null when mechanism is null.
        StructField("mechanism_source", StringType(), True),
        # Client lines: the target broker (node -1 = bootstrap) and its address verbatim.
        StructField("broker_node_id", IntegerType(), True),
        StructField("broker_address", StringType(), True),
        # 'log4j' (a Kafka log line) | 'confluent_audit' (a CloudEvents JSON line).
        StructField("source_format", StringType(), True),
        # CloudEvents id of a confluent_audit row.
        StructField("event_id", StringType(), True),
        # The principal (KafkaPrincipal.toString, 'User:alice') the event belongs to, wherever
        # the logs link it (transforms.silver.auth.principals): printed by the line, the
        # request log's principal of the connection the line names or pairs with, or the
        # Confluent audit event's authenticated principal; null when nothing links it (a failed
        # initial authentication usually: the broker closes the connection before any request).
        StructField("principal", StringType(), True),
        # How principal is linked: one of PRINCIPAL_SOURCES; null when principal is null.
        StructField("principal_source", StringType(), True),
        # true/false when the line says re-authentication or authentication; null when it
        # does not tell (session_lifetime, mechanism_selected, NetworkClient lines...).
        StructField("is_reauthentication", BooleanType(), True),
        # 'Cannot change principals during re-authentication from User.alice: User.bob' as
        # KafkaPrincipal strings 'User:alice' / 'User:bob'.
        StructField("reauth_old_principal", StringType(), True),
        StructField("reauth_new_principal", StringType(), True),
        # '... not supported for re-authentication of mechanism 'Y'': the session's mechanism Y.
        StructField("reauth_old_mechanism", StringType(), True),
        # Broker mechanisms a client handshake error lists ('enabled mechanisms are [A, B]').
        StructField("enabled_mechanisms", ArrayType(StringType(), True), True),
        # session_lifetime rows (SaslServerAuthenticator): connections.max.reauth.ms for the
        # mechanism ('config=null' gives null), the credential and session expirations as
        # java.util.Date.toString wrote them, as UTC timestamps when that zone is UTC/GMT (else
        # null), the milliseconds left at authentication, and the lifetime sent to the client.
        StructField("max_reauth_ms", LongType(), True),
        StructField("credential_expiration_text", StringType(), True),
        StructField("credential_expiration_ts", TimestampType(), True),
        StructField("credential_remaining_ms", LongType(), True),
        StructField("session_expiration_text", StringType(), True),
        StructField("session_expiration_ts", TimestampType(), True),
        StructField("session_remaining_ms", LongType(), True),
        StructField("sent_session_lifetime_ms", LongType(), True),
        # client_session_established rows (SaslClientAuthenticator): session lifetime received
        # and the re-authentication delay the client chose; null with no session expiration.
        StructField("session_lifetime_ms", LongType(), True),
        StructField("reauth_after_ms", LongType(), True),
        # RequestHeader of an expired_channel_disconnected row: ApiKeys enum name (METADATA...).
        StructField("api_key_name", StringType(), True),
        StructField("api_version", IntegerType(), True),
        StructField("correlation_id", IntegerType(), True),
        # bronze log_date; partition column.
        EVENT_DATE_FIELD,
    ]
)
