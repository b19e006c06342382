"""KIP-368 replay benchmark: sessions, metrics, readiness and findings over synthetic silver
rows, against a bare read of the same rows.

    .venv/bin/python bench/reauth_replay.py --events 1000000
    .venv/bin/python bench/reauth_replay.py --events 10000000

The silver rows (``auth_events`` and ``request_events`` with their real schemas) are made by
Spark from ``spark.range`` and written once as Parquet under ``--work``: per connection, a
handshake (``Using SASL mechanism``, ``Authentication complete``, ``Successfully
authenticated``), requests every ~7 minutes for an hour, and for half of the clients a
re-authentication at 55 minutes; a quarter of the others are killed at expiry. Both
measurements run warm in one session; the replay's outputs go to Spark's ``noop`` sink.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.session import build_session
from schemas.auth_events import AUTH_EVENTS
from schemas.node_properties import NODE_PROPERTIES
from schemas.reauth_sessions import REAUTH_SESSIONS
from schemas.request_events import REQUEST_EVENTS
from transforms.gold.kip368_reauth.config import DEFAULT_CAPABILITIES, capabilities_frame
from transforms.gold.kip368_reauth.outputs import readiness, reauth_findings, reauth_metrics
from transforms.gold.kip368_reauth.replay import connections
from transforms.gold.kip368_reauth.sessions import ReplayWindows
from transforms.gold.kip368_reauth.sessions import replay as replay_frames

REQUESTS_PER_CONNECTION = 8
AUTH_LINES_PER_CONNECTION = 4  # handshake (3) + a re-authentication or a kill (about 1)
START = "2026-11-20 00:00:00"


def _typed(df: DataFrame, schema: object) -> DataFrame:
    fields = schema.fields  # type: ignore[attr-defined]
    present = set(df.columns)
    return df.select(
        *[
            (F.col(f.name) if f.name in present else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in fields
        ]
    )


def make_silver(spark: SparkSession, events: int, work: Path) -> tuple[Path, Path]:
    """Write synthetic auth_events and request_events with about ``events`` rows in all."""
    per_connection = REQUESTS_PER_CONNECTION + AUTH_LINES_PER_CONNECTION
    conns = spark.range(max(1, events // per_connection)).select(
        F.col("id").alias("c"),
        (F.lit(START).cast("timestamp") + F.make_interval(secs=(F.col("id") % 82800))).alias("t0"),
        F.concat(
            F.lit("10.1."),
            (F.col("id") / 250 % 250).cast("int"),
            F.lit("."),
            (F.col("id") % 250).cast("int"),
        ).alias("ip"),
        (F.col("id") % 2 == 0).alias("reauths"),
        (F.col("id") % 8 == 1).alias("killed"),
    )
    conn_id = F.concat(
        F.lit("10.0.0.100:9093-"), "ip", F.lit(":"), (F.col("c") % 60000), F.lit("-"), "c"
    )
    kinds = F.array(
        F.struct(F.lit(0).alias("ms"), F.lit("mechanism_selected").alias("k")),
        F.struct(F.lit(10).alias("ms"), F.lit("session_lifetime").alias("k")),
        F.struct(F.lit(20).alias("ms"), F.lit("authentication_succeeded").alias("k")),
        F.struct(
            F.when(F.col("reauths"), F.lit(3_300_000)).otherwise(F.lit(3_600_500)).alias("ms"),
            F.when(F.col("reauths"), F.lit("reauthentication_succeeded"))
            .when(F.col("killed"), F.lit("expired_channel_disconnected"))
            .alias("k"),
        ),
    )
    auth = (
        conns.withColumn("e", F.explode(kinds))
        .where(F.col("e.k").isNotNull())
        .select(
            F.lit("bench").alias("run_id"),
            F.lit("file:/bench/server.log").alias("source_path"),
            (F.col("c") * 10 + F.col("e.ms") % 7).alias("line_number"),
            F.lit("1").alias("node_id"),
            F.lit("DEBUG").alias("level"),
            (F.col("t0") + F.make_interval(secs=F.col("e.ms") / 1000)).alias("event_ts"),
            F.col("e.k").alias("event_type"),
            F.lit("broker").alias("side"),
            F.lit("log4j").alias("source_format"),
            F.col("ip").alias("peer_ip"),
            F.when(F.col("e.k") == "expired_channel_disconnected", conn_id).alias("connection_id"),
            F.when(F.col("e.k") == "mechanism_selected", F.lit("SCRAM-SHA-256")).alias("mechanism"),
            F.when(F.col("e.k") == "session_lifetime", F.lit(3_600_000)).alias(
                "sent_session_lifetime_ms"
            ),
            (F.col("e.k") == "reauthentication_succeeded").alias("is_reauthentication"),
            F.to_date("t0").alias("event_date"),
        )
    )
    requests = conns.withColumn(
        "r", F.explode(F.sequence(F.lit(1), F.lit(REQUESTS_PER_CONNECTION)))
    ).select(
        F.lit("bench").alias("run_id"),
        F.lit("file:/bench/kafka-request.log").alias("source_path"),
        (F.col("c") * 10 + F.col("r")).alias("line_number"),
        F.lit("1").alias("node_id"),
        F.lit("DEBUG").alias("level"),
        (F.col("t0") + F.make_interval(secs=F.col("r") * 420 + 1)).alias("event_ts"),
        F.lit("json").alias("log_format"),
        F.lit(False).alias("is_forwarded"),
        F.lit(12).alias("api_version"),
        F.lit("FETCH").alias("api_key_name"),
        F.col("r").cast("int").alias("correlation_id"),
        conn_id.alias("connection_id"),
        F.col("ip").alias("remote_ip"),
        (F.col("c") % 60000).cast("int").alias("remote_port"),
        F.lit(9093).alias("local_port"),
        F.lit(0).alias("throttle_time_ms"),
        F.lit("SASL_SSL").alias("security_protocol"),
        F.concat(F.lit("User:client-"), F.col("c") % 1000).alias("principal"),
        F.lit("SASL_SSL").alias("listener"),
        F.when(F.col("reauths"), F.lit("apache-kafka-java"))
        .otherwise(F.lit("sarama"))
        .alias("client_software_name"),
        F.when(F.col("reauths"), F.lit("3.6.0"))
        .otherwise(F.lit("1.30.0"))
        .alias("client_software_version"),
        F.to_date("t0").alias("event_date"),
    )
    auth_path, request_path = work / "auth_events", work / "request_events"
    _typed(auth, AUTH_EVENTS).write.mode("overwrite").parquet(str(auth_path))
    _typed(requests, REQUEST_EVENTS).write.mode("overwrite").parquet(str(request_path))
    return auth_path, request_path


def bare_read(spark: SparkSession, auth_path: Path, request_path: Path) -> tuple[float, int]:
    started = time.monotonic()
    rows = (
        spark.read.parquet(str(auth_path)).count() + spark.read.parquet(str(request_path)).count()
    )
    return time.monotonic() - started, rows


def replay(spark: SparkSession, auth_path: Path, request_path: Path) -> float:
    started = time.monotonic()
    auth = spark.read.schema(AUTH_EVENTS).parquet(str(auth_path))
    requests = spark.read.schema(REQUEST_EVENTS).parquet(str(request_path))
    props = spark.createDataFrame(
        [
            ("1", "broker", "server.properties", "listeners", "SASL_SSL://:9093", False),
            (
                "1",
                "broker",
                "server.properties",
                "listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms",
                "3600000",
                False,
            ),
        ],
        NODE_PROPERTIES,
    )
    replayed = replay_frames(
        auth,
        connections(requests),
        props,
        spark.createDataFrame([], REAUTH_SESSIONS),
        capabilities_frame(spark, DEFAULT_CAPABILITIES),
        windows=ReplayWindows(),
        as_of=None,
        run_id="bench",
    )
    result = replayed.sessions.persist()
    shakes, kill_lines = replayed.handshakes, replayed.kills
    outputs = [
        result,
        readiness(result, requests, (900_000, 3_600_000, 28_800_000, 86_400_000), "bench"),
        reauth_metrics(result, kill_lines, "bench"),
        *reauth_findings(result, shakes, 3, "bench"),
    ]
    for df in outputs:
        df.write.format("noop").mode("overwrite").save()
    result.unpersist()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description="KIP-368 replay benchmark")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kafka-audit-bench-reauth"))
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    spark = build_session("bench-reauth", args.master, {"spark.sql.shuffle.partitions": "8"})
    auth_path, request_path = make_silver(spark, args.events, args.work / str(args.events))
    bare_read(spark, auth_path, request_path)  # warm up
    read_s, rows = bare_read(spark, auth_path, request_path)
    replay_s = replay(spark, auth_path, request_path)
    print(f"silver rows: {rows:,} (auth_events + request_events)")
    print(f"bare read + count: {read_s:.1f} s")
    print(f"KIP-368 replay (sessions, readiness, metrics, findings): {replay_s:.1f} s "
          f"({rows / replay_s:,.0f} events/s)")  # fmt: skip
    print(f"ratio replay / bare read: {replay_s / read_s:.1f}")


if __name__ == "__main__":
    main()
