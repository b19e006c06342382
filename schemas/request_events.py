"""silver.request_events: one row per ``kafka.request.logger`` ``Completed request:`` record.

Source formats: the 2.8+ JSON (KIP-673, ``RequestConvertToJson``) and the 1.0-2.7 string
(``RequestChannel.updateRequestMetrics``); see ``transforms.silver.request_log.parse`` and
docs/kafka-log-formats.md
sections 2, 6 and 7. Secrets are already redacted by bronze: ``*_hmac_fingerprint`` columns hold
the fingerprint of the placeholder ``[REDACTED hmac-sha256:<hex>]``, never a secret.

Double columns are nullable only because the table contract's non-null check has no double
stand-in (``transforms.quarantine.conformed``); the parser quarantines a row without them.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.lineage import EVENT_DATE_FIELD, EVENT_PARTITION_COLUMNS, LINEAGE_FIELDS

TABLE_NAME = "request_events"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``log_format`` values.
FORMAT_JSON = "json"
FORMAT_STRING = "string"

#: One token of a DescribeDelegationToken response (timestamps UTC; null when negative).
DESCRIBED_TOKEN = StructType(
    [
        StructField("owner", StringType(), True),
        StructField("requester", StringType(), True),
        StructField("issue_ts", TimestampType(), True),
        StructField("expiry_ts", TimestampType(), True),
        StructField("max_ts", TimestampType(), True),
        StructField("token_id", StringType(), True),
        StructField("hmac_fingerprint", StringType(), True),
        StructField("renewers", ArrayType(StringType(), True), True),
    ]
)

_PRINCIPALS = ArrayType(StringType(), True)

REQUEST_EVENTS = StructType(
    [
        *LINEAGE_FIELDS,
        # 'json' (2.8+) or 'string' (1.0-2.7).
        StructField("log_format", StringType(), False),
        # true on a KRaft controller for a request unwrapped from an ENVELOPE; false in the
        # string form (forwarding came with 2.8).
        StructField("is_forwarded", BooleanType(), False),
        StructField("api_key", IntegerType(), True),
        StructField("api_version", IntegerType(), False),
        # ApiKeys enum name (CREATE_DELEGATION_TOKEN...).
        StructField("api_key_name", StringType(), False),
        # true when logged as deprecated (3.8+, KIP-896); null when the key is absent.
        StructField("api_version_deprecated", BooleanType(), True),
        StructField("correlation_id", IntegerType(), False),
        # Null when absent (header v0) or empty.
        StructField("client_id", StringType(), True),
        # Request / response bodies as compact JSON (secrets redacted); null when logged "".
        StructField("request_json", StringType(), True),
        StructField("response_json", StringType(), True),
        # Pre-2.8 request / response toString text (secrets redacted); null in the JSON form.
        StructField("request_text", StringType(), True),
        StructField("response_text", StringType(), True),
        # localIp:localPort-remoteIp:remotePort[-processorId]-index, and its parts.
        StructField("connection_id", StringType(), False),
        StructField("local_ip", StringType(), True),
        StructField("local_port", IntegerType(), True),
        # The client's IP (for forwarded requests: the forwarding broker's).
        StructField("remote_ip", StringType(), True),
        StructField("remote_port", IntegerType(), True),
        # Network processor id; 4.0+ connection ids only (KAFKA-17776).
        StructField("processor_id", IntegerType(), True),
        StructField("connection_index", IntegerType(), True),
        # Request timings in milliseconds (microsecond precision).
        StructField("total_time_ms", DoubleType(), True),
        StructField("request_queue_time_ms", DoubleType(), True),
        StructField("local_time_ms", DoubleType(), True),
        StructField("remote_time_ms", DoubleType(), True),
        StructField("response_queue_time_ms", DoubleType(), True),
        StructField("send_time_ms", DoubleType(), True),
        StructField("throttle_time_ms", LongType(), False),
        StructField("security_protocol", StringType(), False),
        # KafkaPrincipal.toString; type / name split on the first ':' only.
        StructField("principal", StringType(), False),
        StructField("principal_type", StringType(), True),
        StructField("principal_name", StringType(), True),
        StructField("listener", StringType(), False),
        # ClientInformation (2.5+); 'unknown' when the client sent none.
        StructField("client_software_name", StringType(), True),
        StructField("client_software_version", StringType(), True),
        # Logged only when > 0.
        StructField("temporary_memory_bytes", LongType(), True),
        StructField("message_conversions_time_ms", DoubleType(), True),
        # Top-level response errorCode and its Errors enum name; null when the response has none.
        StructField("error_code", IntegerType(), True),
        StructField("error_code_name", StringType(), True),
        # Distinct errorCode values nested below the top level (topics, partitions...),
        # ascending; empty when none; null without a response body.
        StructField("item_error_codes", ArrayType(IntegerType(), True), True),
        StructField("item_error_code_names", ArrayType(StringType(), True), True),
        # Delegation-token APIs 38-41 (KIP-48), JSON form; null for other APIs.
        # CreateDelegationToken request (owner v3+): owner asked for, renewers, max lifetime.
        StructField("token_owner_principal_type", StringType(), True),
        StructField("token_owner_principal_name", StringType(), True),
        StructField("token_renewers", _PRINCIPALS, True),
        StructField("token_max_lifetime_ms", LongType(), True),
        # RenewDelegationToken / ExpireDelegationToken request periods.
        StructField("token_renew_period_ms", LongType(), True),
        StructField("token_expiry_time_period_ms", LongType(), True),
        # CreateDelegationToken response: owner and (v3+) requester principal strings.
        StructField("token_owner", StringType(), True),
        StructField("token_requester", StringType(), True),
        # Create (issue/expiry/max), Renew / Expire (expiry) response timestamps: epoch ms as
        # logged, and as UTC timestamps (null when negative, e.g. -1 on errors).
        StructField("token_issue_timestamp_ms", LongType(), True),
        StructField("token_issue_ts", TimestampType(), True),
        StructField("token_expiry_timestamp_ms", LongType(), True),
        StructField("token_expiry_ts", TimestampType(), True),
        StructField("token_max_timestamp_ms", LongType(), True),
        StructField("token_max_ts", TimestampType(), True),
        StructField("token_id", StringType(), True),
        # Fingerprint of the Create response hmac (null when the Create failed: Kafka then
        # returns an empty hmac) or of the Renew / Expire request hmac (also in the pre-2.8
        # string form).
        StructField("token_hmac_fingerprint", StringType(), True),
        # DescribeDelegationToken request owners (null = all tokens) and response tokens.
        StructField("token_describe_owners", _PRINCIPALS, True),
        StructField("token_described", ArrayType(DESCRIBED_TOKEN, True), True),
        # ENVELOPE (58): decoded requestPrincipal and clientHostAddress (KIP-590).
        StructField("envelope_principal", StringType(), True),
        StructField("envelope_principal_token_authenticated", BooleanType(), True),
        StructField("envelope_client_address", StringType(), True),
        EVENT_DATE_FIELD,
    ]
)
