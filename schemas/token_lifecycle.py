"""gold.token_lifecycle: one row per delegation token (KIP-48), over every day of the lake.

Unpartitioned; each run rewrites the table from the lake's whole silver ``token_events``
(docs/reruns.md). A row keeps its token's whole history (``history``), and every derived
column is recomputed from that history, so an event is never applied twice (history entries
are unique per ``(source_path, line_number, operation)``) and re-running a day leaves the
table unchanged.
See ``transforms.gold.kip48_tokens.lifecycle`` and docs/rules-tokens.md.
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

TABLE_NAME = "token_lifecycle"
PARTITION_COLUMNS: tuple[str, ...] = ()

#: ``state`` values.
STATE_ACTIVE = "active"
STATE_EXPIRED = "expired"
STATE_EXPIRED_EARLY = "expired_early"
STATE_SWEPT = "swept"
STATES: tuple[str, ...] = (STATE_ACTIVE, STATE_EXPIRED, STATE_EXPIRED_EARLY, STATE_SWEPT)

#: History entry ``check`` values: the replayed rule agrees, could not be checked, or is a
#: recognised Kafka quirk; the rest (MISMATCH_CHECKS) disagree with the replay.
CHECK_OK = "ok"
CHECK_UNCHECKED = "unchecked"
CHECK_KRAFT_NEGATIVE_EXPIRY = "kraft_negative_expiry"
CHECK_EXPIRY_MISMATCH = "expiry_mismatch"
CHECK_MAX_MISMATCH = "max_timestamp_mismatch"
CHECK_ERROR_MISMATCH = "error_code_mismatch"
CHECK_SWEPT_EARLY = "swept_before_expiry"
MISMATCH_CHECKS: tuple[str, ...] = (
    CHECK_EXPIRY_MISMATCH,
    CHECK_MAX_MISMATCH,
    CHECK_ERROR_MISMATCH,
    CHECK_SWEPT_EARLY,
)

#: One operation on the token, in (event_ts, source_path, line_number) order.
# Nested fields are nullable: Spark reads files back with nullable nested fields and cannot
# cast them to NOT NULL ones (the previous snapshot is merged with the new events).
TOKEN_HISTORY_ENTRY = StructType(
    [
        # When the line was logged (UTC).
        StructField("event_ts", TimestampType(), True),
        # Principal that sent the request (User:alice); null for token-manager lines.
        StructField("actor", StringType(), True),
        # 'create' | 'renew' | 'expire' | 'sweep'.
        StructField("operation", StringType(), True),
        # The token's expiry after this operation (UTC; observed, else replayed); null when
        # the operation changed no expiry (rejected, sweep, or unknown).
        StructField("new_expiry_ts", TimestampType(), True),
        # Response errorCode and Errors name; null for token-manager lines.
        StructField("error_code", IntegerType(), True),
        StructField("error_code_name", StringType(), True),
        # Requested period, ms: Create maxLifetimeMs, Renew renewPeriodMs, Expire
        # expiryTimePeriodMs (< 0 = now).
        StructField("requested_period_ms", LongType(), True),
        # What Kafka answered, epoch ms: expiryTimestampMs (-1 on errors; the negative period
        # for the KRaft 3.6-3.9 expire-now quirk), and for Create issue/maxTimestampMs.
        StructField("observed_expiry_ms", LongType(), True),
        StructField("observed_issue_ms", LongType(), True),
        StructField("observed_max_ms", LongType(), True),
        # What the replayed rule gives, epoch ms, and the error code it expects (null when
        # it cannot tell: unknown owner, a clock within the tolerance of the expiry...).
        StructField("expected_expiry_ms", LongType(), True),
        StructField("expected_error_code", IntegerType(), True),
        # CHECK_* value.
        StructField("check", StringType(), True),
        # 'request_log' | 'token_manager', the line's metadata mode when it says one.
        StructField("source", StringType(), True),
        StructField("metadata_mode", StringType(), True),
        StructField("node_id", StringType(), True),
        StructField("source_path", StringType(), True),
        StructField("line_number", LongType(), True),
    ]
)

TOKEN_LIFECYCLE = StructType(
    [
        # token_id, or 'hmac:<fingerprint>' while only the HMAC fingerprint is known.
        StructField("token_key", StringType(), False),
        StructField("token_id", StringType(), True),
        # Keyed fingerprint of the token's HMAC (never the HMAC).
        StructField("hmac_fingerprint", StringType(), True),
        # Owner, requester (who created it, Create v3+ / the request principal) and renewers.
        StructField("owner", StringType(), True),
        StructField("requester", StringType(), True),
        StructField("renewers", ArrayType(StringType(), True), True),
        # 'zookeeper' | 'kraft' rules applied; null = unknown (either mode's rule accepted).
        StructField("metadata_mode", StringType(), True),
        # UTC: issue, max (issue + max lifetime) and the current expiry (replayed).
        StructField("issue_ts", TimestampType(), True),
        StructField("max_ts", TimestampType(), True),
        StructField("expiry_ts", TimestampType(), True),
        # max_ts - issue_ts, ms.
        StructField("max_lifetime_ms", LongType(), True),
        # Successful renewals.
        StructField("renew_count", IntegerType(), False),
        StructField("history", ArrayType(TOKEN_HISTORY_ENTRY, True), False),
        # One of STATES, as of state_as_of_ts (the run's end, UTC).
        StructField("state", StringType(), False),
        StructField("state_as_of_ts", TimestampType(), True),
        # When the token stopped being usable (removal, or expiry before state_as_of_ts), UTC.
        StructField("ended_ts", TimestampType(), True),
        # First and last history event (UTC).
        StructField("first_seen_ts", TimestampType(), True),
        StructField("last_seen_ts", TimestampType(), True),
        # History entries whose check is one of MISMATCH_CHECKS.
        StructField("replay_mismatch_count", IntegerType(), False),
        # HMAC-SHA512(delegation.token.secret.key, token_id) matches hmac_fingerprint; null
        # when no secret was given yet (a later run without the secret keeps the value).
        StructField("hmac_verified", BooleanType(), True),
    ]
)
