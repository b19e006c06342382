"""gold.security_metrics: one metric value per window, broker, listener, mechanism (principal).

Long format; ``metric_name`` is Kafka's own JMX attribute name, verbatim
(``Selector.SelectorMetrics``: ``failed-authentication-total``; ``AuthorizerMetrics``:
``authorization-denied-rate-per-minute``).
"""

from __future__ import annotations

from pyspark.sql.types import (
    DateType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "security_metrics"
PARTITION_COLUMNS: tuple[str, ...] = ("window_date",)

SECURITY_METRICS = StructType(
    [
        StructField("metric_name", StringType(), False),
        # '1h' or '1d' tumbling windows, aligned to UTC hours / days.
        StructField("window", StringType(), False),
        StructField("window_start_ts", TimestampType(), False),
        StructField("window_end_ts", TimestampType(), False),
        StructField("broker_id", StringType(), True),
        StructField("listener", StringType(), True),
        StructField("mechanism", StringType(), True),
        # Only for metrics sliced by principal (authorization); Kafka itself has no such slice.
        StructField("principal", StringType(), True),
        # Only for metrics sliced by API (forwarding, KIP-590): ApiKeys name, e.g. CREATE_TOPICS.
        StructField("api_key_name", StringType(), True),
        # -total: events in the window; -rate: per second; -rate-per-minute: per minute.
        StructField("value", DoubleType(), False),
        # The number of log events behind the value.
        StructField("event_count", LongType(), False),
        StructField("run_id", StringType(), False),
        StructField("window_date", DateType(), False),
    ]
)
