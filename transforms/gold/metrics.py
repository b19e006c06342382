"""Gold: Kafka's security metrics replayed from silver events, per window.

Metric names are Kafka's JMX attribute names verbatim (kafka-log-formats.md section 5):
``Selector.SelectorMetrics`` (group ``socket-server-metrics``, summed over network processors)
and the authorizer's (Apache Kafka 4.1+: plugin metrics of ``StandardAuthorizer``, group
``plugins``, KIP-877; Confluent Server: group ``confluent-authorizer-metrics``; see
docs/prometheus.md). Kafka's counters are cumulative since broker start; here a ``-total`` is
the number of events inside the window and a ``-rate`` is that number divided by the window's
length.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from schemas.auth_events import MECHANISM_FROM_LINE
from schemas.security_metrics import SECURITY_METRICS
from transforms.columns import lookup

#: auth_events.event_type (broker side) -> Selector metric name (without -total / -rate).
AUTH_METERS: dict[str, str] = {
    "authentication_succeeded": "successful-authentication",
    "authentication_failed": "failed-authentication",
    "reauthentication_succeeded": "successful-reauthentication",
    "reauthentication_failed": "failed-reauthentication",
}
#: authz_decisions.decision -> AuthorizerMetrics name.
AUTHZ_RATES: dict[str, str] = {
    "DENIED": "authorization-denied-rate-per-minute",
    "ALLOWED": "authorization-allowed-rate-per-minute",
}
WINDOWS: dict[str, tuple[str, int]] = {"1h": ("hour", 3600), "1d": ("day", 86400)}


def metric_events(auth_events: DataFrame, authz_decisions: DataFrame) -> DataFrame:
    """One row per event that feeds a metric.

    Input columns:
        auth_events: event_ts (timestamp), node_id, side, event_type, listener, mechanism,
        mechanism_source, source_format (string). authz_decisions: event_ts, node_id,
        record_type, decision, principal, source_format.
    Output columns:
        meter (string), kind ('meter' or 'per_minute'), event_ts (timestamp), broker_id,
        listener, mechanism, principal, api_key_name (string).

    Only broker-side authentication outcomes count (the client's own Selector metrics live in
    the client). Authorization counts only ``record_type = 'decision'`` rows. Only Kafka's own
    log lines count (``source_format = 'log4j'``): Confluent audit events describe the same
    authentications and decisions, so counting both would double them. Events without a
    timestamp cannot be placed in a window and are left out. An authentication meter's
    mechanism is the one its outcome line names (``mechanism_source`` 'line'); one linked from
    the handshake is not a dimension of the Selector meter (docs/generator.md, ground truth).
    """
    from_logs = F.col("source_format") == "log4j"
    named = F.col("mechanism_source") == F.lit(MECHANISM_FROM_LINE)
    auth = auth_events.where((F.col("side") == "broker") & from_logs).select(
        lookup(AUTH_METERS, F.col("event_type")).alias("meter"),
        F.lit("meter").alias("kind"),
        "event_ts",
        F.col("node_id").alias("broker_id"),
        "listener",
        F.when(named, F.col("mechanism")).alias("mechanism"),
        F.lit(None).cast("string").alias("principal"),
        F.lit(None).cast("string").alias("api_key_name"),
    )
    authz = authz_decisions.where((F.col("record_type") == "decision") & from_logs).select(
        lookup(AUTHZ_RATES, F.col("decision")).alias("meter"),
        F.lit("per_minute").alias("kind"),
        "event_ts",
        F.col("node_id").alias("broker_id"),
        F.lit(None).cast("string").alias("listener"),
        F.lit(None).cast("string").alias("mechanism"),
        "principal",
        F.lit(None).cast("string").alias("api_key_name"),
    )
    return auth.unionByName(authz).where(F.col("meter").isNotNull() & F.col("event_ts").isNotNull())


def security_metrics(auth_events: DataFrame, authz_decisions: DataFrame, run_id: str) -> DataFrame:
    """Kafka's authentication and authorization metrics per 1h and 1d window.

    Input columns: see ``metric_events``.
    Output columns: exactly ``schemas.security_metrics.SECURITY_METRICS``. Authentication
    meters give ``<name>-total`` (count) and ``<name>-rate`` (count / window seconds) per
    broker, listener and mechanism; authorization gives ``authorization-denied-rate-per-minute``
    and ``authorization-allowed-rate-per-minute`` (count / window minutes) per broker and
    principal. Windows with no event produce no row (a zero is not evidence).
    """
    return windowed_counts(metric_events(auth_events, authz_decisions), run_id)


def windowed_counts(events: DataFrame, run_id: str) -> DataFrame:
    """Count events per 1h and 1d UTC window into metric rows.

    Input columns: meter (string: the metric name without suffix), kind (string: 'meter' gives
    ``<meter>-total`` and ``<meter>-rate`` per second, 'total' gives ``<meter>-total`` only,
    'count' gives ``<meter>`` as a count (e.g. ``expired-connections-killed-count``),
    'per_minute' gives ``<meter>`` per minute), event_ts (timestamp, UTC), broker_id,
    listener, mechanism, principal, api_key_name (string, nullable dimensions).
    Output columns: exactly ``schemas.security_metrics.SECURITY_METRICS``. Windows with no
    event produce no row (a zero is not evidence).
    """
    windows = F.array(
        *[
            F.struct(F.lit(n).alias("name"), F.lit(u).alias("unit"), F.lit(s).alias("seconds"))
            for n, (u, s) in WINDOWS.items()
        ]
    )
    events = events.withColumn("w", F.explode(windows))
    start = F.when(F.lit(False), F.lit(None).cast("timestamp"))
    for name, (unit, _) in WINDOWS.items():
        start = start.when(F.col("w.name") == name, F.date_trunc(unit, F.col("event_ts")))
    keys = ["meter", "kind", "window", "seconds", "window_start_ts", "broker_id", "listener",
            "mechanism", "principal", "api_key_name"]  # fmt: skip
    counts = (
        events.withColumn("window", F.col("w.name"))
        .withColumn("seconds", F.col("w.seconds"))
        .withColumn("window_start_ts", start)
        .groupBy(*keys)
        .agg(F.count(F.lit(1)).alias("event_count"))
    )
    n = F.col("event_count").cast("double")
    total = F.struct(F.concat("meter", F.lit("-total")).alias("name"), n.alias("value"))
    rate = F.struct(
        F.concat("meter", F.lit("-rate")).alias("name"), (n / F.col("seconds")).alias("value")
    )
    kind = F.col("kind")
    values = (
        F.when(kind == "meter", F.array(total, rate))
        .when(kind == "total", F.array(total))
        .when(kind == "count", F.array(F.struct(F.col("meter").alias("name"), n.alias("value"))))
        .otherwise(
            F.array(
                F.struct(F.col("meter").alias("name"), (n * 60 / F.col("seconds")).alias("value"))
            )
        )
    )
    exploded = counts.withColumn("m", F.explode(values))
    return exploded.select(
        F.col("m.name").alias("metric_name"),
        "window",
        "window_start_ts",
        (F.col("window_start_ts") + F.make_interval(secs=F.col("seconds"))).alias("window_end_ts"),
        "broker_id",
        "listener",
        "mechanism",
        "principal",
        "api_key_name",
        F.col("m.value").alias("value"),
        F.col("event_count").cast("long").alias("event_count"),
        F.lit(run_id).alias("run_id"),
        F.to_date("window_start_ts").alias("window_date"),
    ).select(*[F.col(f.name).cast(f.dataType) for f in SECURITY_METRICS.fields])
