"""silver.token_events: one row per delegation-token operation (KIP-48).

Two sources end in this one contract (``source``):
* ``request_log``: the Create / Renew / Expire / Describe DelegationToken requests of
  silver.request_events (who asked, from where, with which result); one row per described
  token for Describe (one row when it described none).
* ``token_manager``: the token manager's own lines, ZooKeeper mode
  (``kafka.server.DelegationTokenManager[Zk]``) and KRaft (``DelegationTokenControlManager``).

See ``transforms.silver.tokens`` and docs/kafka-log-formats.md section 6.
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

TABLE_NAME = "token_events"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``source`` values.
SOURCE_REQUEST_LOG = "request_log"
SOURCE_TOKEN_MANAGER = "token_manager"

#: ``operation`` values: request-log APIs, then token-manager lines.
OP_CREATE = "create"
OP_RENEW = "renew"
OP_EXPIRE = "expire"
OP_DESCRIBE = "describe"
OP_UPDATE_EXPIRY = "update_expiry"
OP_SWEEP = "sweep"
OP_CACHE_LOAD = "cache_load"
OP_NOTIFICATION = "notification"
OP_REPLAY_RECORD = "replay_record"
OP_REPLAY_REMOVE = "replay_remove"
OP_ERROR = "error"
OPERATIONS: tuple[str, ...] = (
    OP_CREATE,
    OP_RENEW,
    OP_EXPIRE,
    OP_DESCRIBE,
    OP_UPDATE_EXPIRY,
    OP_SWEEP,
    OP_CACHE_LOAD,
    OP_NOTIFICATION,
    OP_REPLAY_RECORD,
    OP_REPLAY_REMOVE,
    OP_ERROR,
)

#: ``metadata_mode`` values (token_manager rows only).
MODE_ZOOKEEPER = "zookeeper"
MODE_KRAFT = "kraft"

TOKEN_EVENTS = StructType(
    [
        *LINEAGE_FIELDS,
        # SOURCE_REQUEST_LOG or SOURCE_TOKEN_MANAGER.
        StructField("source", StringType(), False),
        # One of OPERATIONS.
        StructField("operation", StringType(), False),
        # 'zookeeper' | 'kraft' for token_manager rows; null for request_log rows.
        StructField("metadata_mode", StringType(), True),
        # Principal that sent the request (request_log only; the original client principal
        # for forwarded requests).
        StructField("requester", StringType(), True),
        # Token owner principal string (User:alice).
        StructField("owner", StringType(), True),
        StructField("renewers", ArrayType(StringType(), True), True),
        StructField("token_id", StringType(), True),
        # Fingerprint of the token HMAC from the redaction placeholder; never the HMAC.
        StructField("hmac_fingerprint", StringType(), True),
        # Token timestamps: epoch ms and UTC timestamp (null when negative).
        StructField("issue_timestamp_ms", LongType(), True),
        StructField("issue_ts", TimestampType(), True),
        StructField("expiry_timestamp_ms", LongType(), True),
        StructField("expiry_ts", TimestampType(), True),
        StructField("max_timestamp_ms", LongType(), True),
        StructField("max_ts", TimestampType(), True),
        # Requested periods: Create maxLifetimeMs, Renew renewPeriodMs, Expire
        # expiryTimePeriodMs (< 0 = expire now).
        StructField("max_lifetime_ms", LongType(), True),
        StructField("renew_period_ms", LongType(), True),
        StructField("expiry_time_period_ms", LongType(), True),
        # Describe request owner filter (null = all tokens).
        StructField("describe_owners", ArrayType(StringType(), True), True),
        # Response errorCode and Errors enum name (request_log only).
        StructField("error_code", IntegerType(), True),
        StructField("error_code_name", StringType(), True),
        # Request context (request_log only): forwarded by a broker, client id, client IP,
        # correlation id (ties a broker line to the controller's forwarded line).
        StructField("is_forwarded", BooleanType(), True),
        StructField("client_id", StringType(), True),
        StructField("remote_ip", StringType(), True),
        StructField("correlation_id", IntegerType(), True),
        # 'Loading the token cache. Total token count: N' (cache_load only).
        StructField("token_count", IntegerType(), True),
        EVENT_DATE_FIELD,
    ]
)
