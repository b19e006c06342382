"""gold.connect_session_keys: one row per observed KIP-507 session-key rotation on a worker.

Every worker (leader and followers) logs INFO ``Session key updated``
(``DistributedHerder.ConfigUpdateListener.onSessionKeyUpdate``) when a new key arrives from
the config topic while it runs (``KafkaConfigBackingStore``: only once started, so a restart
does not log the key it reads). The leader writes a new key when the current one is
``inter.worker.key.ttl.ms`` old (``DistributedHerder.checkForKeyRotation``), so consecutive
lines on one worker should be about one TTL apart.

Built by ``transforms.gold.kip507_connect_signing.session_key_rotations``. Date-partitioned: a run
replaces
its dates; the first rotation of a run takes its predecessor from the lake's earlier dates.
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "connect_session_keys"
PARTITION_COLUMNS: tuple[str, ...] = ("event_date",)

#: ``key_ttl_source`` values.
TTL_FROM_CONFIG = "config"
TTL_DEFAULT = "default"
#: DistributedConfig.INTER_WORKER_KEY_TTL_MS_MS_DEFAULT (1 h).
DEFAULT_KEY_TTL_MS = 3_600_000

CONNECT_SESSION_KEYS = StructType(
    [
        # The worker: node id, else the line's [Worker clientId=...].
        StructField("worker_id", StringType(), True),
        # The line's LogContext '[Worker clientId=<id>, groupId=<group>] '.
        StructField("worker_client_id", StringType(), True),
        StructField("worker_group_id", StringType(), True),
        # UTC time of the 'Session key updated' line.
        StructField("updated_ts", TimestampType(), False),
        # UTC time of the worker's previous 'Session key updated' line in the lake's silver;
        # null for the first one seen.
        StructField("previous_updated_ts", TimestampType(), True),
        # updated_ts - previous_updated_ts, ms.
        StructField("interval_ms", LongType(), True),
        # The worker's inter.worker.key.ttl.ms, ms; null when its value is not a number.
        StructField("key_ttl_ms", LongType(), True),
        # 'config' (the worker's connect-distributed.properties) or 'default' (3600000).
        StructField("key_ttl_source", StringType(), False),
        # interval_ms - key_ttl_ms, ms (negative = early).
        StructField("deviation_ms", LongType(), True),
        # |deviation_ms| > [rules.connect] rotation_tolerance_ms; null without an interval or a
        # positive TTL.
        StructField("off_schedule", BooleanType(), True),
        StructField("source_path", StringType(), False),
        StructField("line_number", LongType(), False),
        StructField("run_id", StringType(), False),
        # UTC date of updated_ts; partition column.
        StructField("event_date", DateType(), False),
    ]
)
