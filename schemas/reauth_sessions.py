"""gold.reauth_sessions: one row per SASL session per connection (KIP-368), as of the run.

A session starts at a connection's first authentication and at each successful
re-authentication; it ends re-authenticated, killed (``Disconnecting expired channel``),
with a failed re-authentication, closed, or still open at the end of the lake's evidence.
``transforms.gold.kip368_reauth.sessions`` builds it from the lake's whole silver on every run
(docs/reruns.md): a session that crosses midnight has one row, in its start date's partition;
``session_id`` is deterministic.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.findings import EVIDENCE_POSITION

TABLE_NAME = "reauth_sessions"
PARTITION_COLUMNS: tuple[str, ...] = ("activity_date",)

#: ``outcome`` values.
OUTCOMES: tuple[str, ...] = (
    "reauthenticated",
    "killed",
    "closed",
    "failed_reauth",
    "open_at_window_end",
)
#: ``start_source`` values: what evidence the session's start comes from.
START_SOURCES: tuple[str, ...] = (
    "authentication_line",  # Selector 'Successfully authenticated with'
    "reauthentication_line",  # Selector 'Successfully re-authenticated with'
    "first_request",  # no authentication line: the connection's first request-log line
    "previous_run",  # open at the end of the previous run (read from this table)
)

REAUTH_SESSIONS = StructType(
    [
        # sha2-256 hex of broker, connection (or client address) and start.
        StructField("session_id", StringType(), False),
        StructField("broker_id", StringType(), True),
        # Request-log connection id; null when no request-log line ties the session to one.
        StructField("connection_id", StringType(), True),
        # 1 = the connection's first authentication; n = after n-1 re-authentications.
        StructField("session_seq", IntegerType(), False),
        StructField("listener", StringType(), True),
        StructField("security_protocol", StringType(), True),
        StructField("mechanism", StringType(), True),
        StructField("principal", StringType(), True),
        StructField("client_ip", StringType(), True),
        StructField("client_port", IntegerType(), True),
        StructField("client_id", StringType(), True),
        StructField("client_software_name", StringType(), True),
        StructField("client_software_version", StringType(), True),
        # Whether the client re-authenticates: true when observed (on this connection or by
        # the same client software and version), else the capability table; false for
        # PLAINTEXT / SSL channels (Kafka's Authenticator default); null = unknown.
        StructField("supports_reauth", BooleanType(), True),
        # 'observed', 'observed_same_software', 'capability_table', 'not_sasl', or null.
        StructField("supports_reauth_source", StringType(), True),
        # UTC.
        StructField("start_ts", TimestampType(), False),
        StructField("start_source", StringType(), False),
        # Session lifetime in ms; null = the session never expires (0 in Kafka's terms) or it
        # is unknown (see lifetime_source).
        StructField("lifetime_ms", LongType(), True),
        # 'session_lifetime_line' (SaslServerAuthenticator DEBUG, wins), 'config_listener_
        # mechanism', 'config', 'default' (Kafka's 0), 'not_sasl', 'unknown_mechanism',
        # 'unknown'.
        StructField("lifetime_source", StringType(), False),
        StructField("expiry_ts", TimestampType(), True),
        # The re-authentication that ended this session (next session's begin and end).
        StructField("reauth_start_ts", TimestampType(), True),
        StructField("reauth_end_ts", TimestampType(), True),
        StructField("latency_ms", LongType(), True),
        # One of OUTCOMES and when it happened (null for open_at_window_end and closed).
        StructField("outcome", StringType(), False),
        StructField("outcome_ts", TimestampType(), True),
        # Requests of the connection seen in this run (whole connection, not per session).
        StructField("last_request_ts", TimestampType(), True),
        StructField("request_count", LongType(), True),
        # Several open connections from the client's address could own the re-authentication.
        StructField("connection_ambiguous", BooleanType(), False),
        # Positions of the lines behind the row (authentication, lifetime, first request,
        # re-authentication, kill...).
        StructField("evidence", ArrayType(EVIDENCE_POSITION, True), False),
        StructField("run_id", StringType(), False),
        # UTC date of the session's first evidence (its start); partition column.
        StructField("activity_date", DateType(), True),
    ]
)
