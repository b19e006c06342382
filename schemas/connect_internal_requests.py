"""gold.connect_internal_requests: Kafka Connect's internal (worker-to-worker, signed) REST
requests per hour, worker, caller, connector, endpoint and status (KIP-507, KIP-618).

Two views of the same traffic (``observed_by``):
* ``leader``: the REST access log of the worker that received the request
  (``org.apache.kafka.connect.runtime.rest.RestServer``): every request with its status.
* ``follower``: the retry lines of the worker that sent it (``DistributedHerder.
  reconfigureConnectorTasksWithExponentialBackoffRetries``): failed task-config forwards only
  (a follower does not log successes). ``status`` is 403 for Kafka's own stale-key line, the
  leader's status when the folded exception carries a KIP-507 verification message, else null.

Built by ``transforms.gold.kip507_connect_signing.internal_request_counts``. Date-partitioned: a run
replaces its dates.
"""

from __future__ import annotations

from pyspark.sql.types import (
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "connect_internal_requests"
PARTITION_COLUMNS: tuple[str, ...] = ("event_date",)

#: ``endpoint`` values: the internal endpoints (InternalRequestSignature, section 8.1).
ENDPOINT_TASKS = "POST /connectors/<name>/tasks"
ENDPOINT_FENCE = "PUT /connectors/<name>/fence"
#: ``observed_by`` values.
OBSERVED_BY_LEADER = "leader"
OBSERVED_BY_FOLLOWER = "follower"

CONNECT_INTERNAL_REQUESTS = StructType(
    [
        # The worker whose log holds the lines: node id (config or log prefix), else the
        # [Worker clientId=...] of the line; null when neither is known.
        StructField("worker_id", StringType(), True),
        # 'leader' (access log of the receiving worker) or 'follower' (retry lines of the sender).
        StructField("observed_by", StringType(), False),
        # Leader view: Jetty %{client}a of the caller; null in the follower view.
        StructField("client_address", StringType(), True),
        # URL-decoded <name> of the path (leader) or of the retry message (follower); null when
        # the line does not name it (follower lines before Kafka 2.8).
        StructField("connector_name", StringType(), True),
        # ENDPOINT_TASKS or ENDPOINT_FENCE.
        StructField("endpoint", StringType(), False),
        # HTTP status (200, 400, 403, 409, 503...); null when the follower line does not prove one.
        StructField("status", IntegerType(), True),
        # UTC hour [start, end) of event_ts (the log4j time of the line); null for lines without
        # a timestamp.
        StructField("window_start_ts", TimestampType(), True),
        StructField("window_end_ts", TimestampType(), True),
        StructField("request_count", LongType(), False),
        # Leader view: requests whose User-Agent is not the worker's (RestClient sends
        # 'kafka-connect'); null in the follower view and for the <=2.3 layout (no User-Agent).
        StructField("non_worker_agent_count", LongType(), True),
        # 403s of workers within the stale-key grace of their retry episode (expected churn,
        # KIP-507) and beyond it (findings).
        StructField("stale_key_403_count", LongType(), False),
        StructField("beyond_grace_403_count", LongType(), False),
        # UTC; first and last line of the group.
        StructField("first_seen_ts", TimestampType(), True),
        StructField("last_seen_ts", TimestampType(), True),
        StructField("run_id", StringType(), False),
        # UTC date of window_start_ts (= the lines' event_date); partition column.
        StructField("event_date", DateType(), True),
    ]
)
