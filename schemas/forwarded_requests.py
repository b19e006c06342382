"""gold.forwarded_requests: one row per request a KRaft broker forwarded to the controller
(KIP-590), per request-log line that could not be paired, and per failed ENVELOPE.

A broker logs the client's request (``isForwarded:false``, the client's address in the
connection id); the controller logs the same request unwrapped from the ENVELOPE
(``isForwarded:true``, the original header and principal, but the broker's connection). The two
lines are paired on client id, correlation id and API key, within a time tolerance, preferring
the same principal (``transforms.gold.kip590_forwarding``). Lines left over stay visible with
``unpaired_reason``. An ENVELOPE line appears only when the envelope itself failed
(``KafkaApis.handleEnvelopeRequest``); its ``requestPrincipal`` and ``clientHostAddress`` are
decoded at silver. Date-partitioned: a run replaces its dates.
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "forwarded_requests"
PARTITION_COLUMNS: tuple[str, ...] = ("event_date",)

#: ``record_type`` values.
RECORD_PAIRED = "paired"
RECORD_BROKER_ONLY = "broker_only"
RECORD_CONTROLLER_ONLY = "controller_only"
RECORD_ENVELOPE = "envelope"
RECORD_TYPES: tuple[str, ...] = (
    RECORD_PAIRED,
    RECORD_BROKER_ONLY,
    RECORD_CONTROLLER_ONLY,
    RECORD_ENVELOPE,
)

#: ``unpaired_reason`` values (null for paired and envelope rows).
REASON_CONTROLLER_LOGS_MISSING = "controller_logs_missing"
REASON_BROKER_LOGS_MISSING = "broker_logs_missing"
REASON_OUTSIDE_WINDOW = "outside_window"
REASON_NO_MATCH = "no_match_in_tolerance"
REASON_NO_TIMESTAMP = "no_timestamp"
UNPAIRED_REASONS: tuple[str, ...] = (
    REASON_CONTROLLER_LOGS_MISSING,
    REASON_BROKER_LOGS_MISSING,
    REASON_OUTSIDE_WINDOW,
    REASON_NO_MATCH,
    REASON_NO_TIMESTAMP,
)

FORWARDED_REQUESTS = StructType(
    [
        StructField("run_id", StringType(), False),
        # One of RECORD_TYPES.
        StructField("record_type", StringType(), False),
        # One of UNPAIRED_REASONS for broker_only / controller_only rows; null otherwise.
        StructField("unpaired_reason", StringType(), True),
        # ApiKeys enum name of the forwarded request (CREATE_TOPICS...); 'ENVELOPE' for
        # envelope rows.
        StructField("api_key_name", StringType(), False),
        StructField("api_version", IntegerType(), True),
        # The client's header (both lines carry the same one); null for envelope rows (the
        # inner request is not logged).
        StructField("client_id", StringType(), True),
        StructField("correlation_id", IntegerType(), True),
        # The client's principal as the broker authenticated it (controller_only rows: as the
        # controller unwrapped it; envelope rows: decoded from requestPrincipal).
        StructField("principal", StringType(), True),
        # The principal the controller logged; differs from principal only when a broker
        # forwarded another identity than the one its client authenticated as.
        StructField("controller_principal", StringType(), True),
        # principal = controller_principal; null unless paired.
        StructField("principal_matches", BooleanType(), True),
        # The original client's address: the remote ip of the broker's connection id, or the
        # envelope's decoded clientHostAddress. Null for controller_only rows.
        StructField("client_address", StringType(), True),
        StructField("client_port", IntegerType(), True),
        StructField("client_software_name", StringType(), True),
        StructField("client_software_version", StringType(), True),
        # Envelope rows: the envelope's decoded tokenAuthenticated flag.
        StructField("principal_token_authenticated", BooleanType(), True),
        # The forwarding broker: its node id (from its own log), its listener for the client,
        # and its address as the controller saw it (remote ip of the controller's line).
        StructField("broker_id", StringType(), True),
        StructField("broker_listener", StringType(), True),
        StructField("forwarding_broker_address", StringType(), True),
        # Envelope rows: the principal of the connection that sent the envelope (a broker
        # when the cluster is healthy).
        StructField("envelope_sender_principal", StringType(), True),
        # The node whose log holds the controller-side (or envelope) line, and its listener.
        StructField("controller_id", StringType(), True),
        StructField("controller_listener", StringType(), True),
        # The response the client got (broker line; else the controller's), and the
        # controller's own; Errors enum names. Envelope rows: the envelope's error.
        StructField("error_code", IntegerType(), True),
        StructField("error_code_name", StringType(), True),
        StructField("controller_error_code", IntegerType(), True),
        StructField("controller_error_code_name", StringType(), True),
        # When each line was logged (UTC), and broker_ts - controller_ts in ms.
        StructField("broker_ts", TimestampType(), True),
        StructField("controller_ts", TimestampType(), True),
        StructField("pairing_gap_ms", LongType(), True),
        # Broker-side totalTimeMs and remoteTimeMs (includes the controller round trip), and
        # the controller-side totalTimeMs; milliseconds.
        StructField("broker_total_time_ms", DoubleType(), True),
        StructField("broker_remote_time_ms", DoubleType(), True),
        StructField("controller_total_time_ms", DoubleType(), True),
        # Source positions of both lines (file URI, 1-based line number).
        StructField("broker_source_path", StringType(), True),
        StructField("broker_line_number", LongType(), True),
        StructField("controller_source_path", StringType(), True),
        StructField("controller_line_number", LongType(), True),
        # UTC date of broker_ts, else controller_ts; partition column.
        StructField("event_date", DateType(), True),
    ]
)
