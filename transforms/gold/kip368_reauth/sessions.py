"""KIP-368 sessions per connection (gold ``reauth_sessions``) from handshakes, connections,
kills, configuration and the previous run's open sessions.

Rules (KIP-368 as built; ``SaslServerAuthenticator.ReauthInfo``, ``kafka.network.Processor``):
* Session lifetime = min(``connections.max.reauth.ms`` of the listener and mechanism, the
  credential's remaining lifetime); 0 = no expiry. The ``Authentication complete; session max
  lifetime ...`` line gives the value Kafka computed (``sending N ms to client``) and wins;
  without it the configured value is used (credential lifetimes are then unknown).
* A session ends when the client re-authenticates (the next session starts), when the broker
  kills the connection at the first request after expiry (``Disconnecting expired channel``),
  or when a re-authentication fails (the broker closes the connection).
* Otherwise it is ``open_at_window_end`` when the connection was active within
  ``idle_ms`` (``connections.max.idle.ms``, default 10 min) of the evidence's end, else
  ``closed`` (the broker closes connections idle that long).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import auth_events as ae
from schemas.reauth_sessions import REAUTH_SESSIONS
from transforms.gold.kip368_reauth.config import (
    listener_ports,
    max_reauth_config,
    with_configured_max_reauth,
    with_software_capability,
)
from transforms.gold.kip368_reauth.replay import (
    NOT_SASL,
    attach_to_connections,
    handshakes,
    kills,
    millis_between,
    pair_initial_authentications,
    plus_millis,
)


def _position(path: str, line: str) -> Column:
    return F.when(
        F.col(line).isNotNull(),
        F.struct(F.col(path).alias("source_path"), F.col(line).alias("line_number")),
    )


def session_starts(
    shakes: DataFrame, pairs: DataFrame, conns: DataFrame, reauths: DataFrame
) -> DataFrame:
    """Every session start: paired or unpaired authentication lines, connections without an
    authentication line (their first request), and attached re-authentication successes.

    Input: ``transforms.gold.kip368_reauth.replay`` handshakes, pair_initial_authentications,
    connections, and the
    successful re-authentication rows after ``attach_to_connections``.
    Output columns: node_id, connection_id, peer_ip, start_ts, start_source, is_reauth,
    mechanism, sent_session_lifetime_ms, reauth_begin_ts, latency_ms, connection_ambiguous,
    evidence (array of positions).
    """
    auth_ok = shakes.where(F.col("event_type") == ae.EVENT_AUTHENTICATION_SUCCEEDED).join(
        pairs.withColumnRenamed("connection_id", "_paired"),
        ["node_id", "source_path", "line_number"],
        "left",
    )
    evidence = F.array_compact(
        F.array(
            _position("source_path", "line_number"),
            _position("source_path", "lifetime_line_number"),
            _position("source_path", "reauth_begin_line_number"),
        )
    )
    line_columns: list[Column | str] = [
        "node_id",
        "peer_ip",
        F.col("event_ts").alias("start_ts"),
        "mechanism",
        "sent_session_lifetime_ms",
        "reauth_begin_ts",
        "latency_ms",
        evidence.alias("evidence"),
    ]
    initial = auth_ok.select(
        *line_columns,
        F.col("_paired").alias("connection_id"),
        F.lit("authentication_line").alias("start_source"),
        F.lit(False).alias("is_reauth"),
        F.lit(False).alias("connection_ambiguous"),
    )
    unpaired = conns.join(
        pairs.select("node_id", "connection_id"), ["node_id", "connection_id"], "left_anti"
    ).select(
        "node_id",
        F.col("remote_ip").alias("peer_ip"),
        F.col("first_request_ts").alias("start_ts"),
        F.lit(None).cast("string").alias("mechanism"),
        F.lit(None).cast("long").alias("sent_session_lifetime_ms"),
        F.lit(None).cast("timestamp").alias("reauth_begin_ts"),
        F.lit(None).cast("long").alias("latency_ms"),
        F.array(_position("first_source_path", "first_line_number")).alias("evidence"),
        "connection_id",
        F.lit("first_request").alias("start_source"),
        F.lit(False).alias("is_reauth"),
        F.lit(False).alias("connection_ambiguous"),
    )
    again = reauths.select(
        *line_columns,
        "connection_id",
        F.lit("reauthentication_line").alias("start_source"),
        F.lit(True).alias("is_reauth"),
        "connection_ambiguous",
    )
    return initial.unionByName(unpaired).unionByName(again)


def sessions(
    starts: DataFrame,
    ends: DataFrame,
    conns: DataFrame,
    previous_open: DataFrame,
    *,
    config: DataFrame,
    capabilities: DataFrame,
    idle_ms: int,
    as_of: datetime | None,
    run_id: str,
) -> DataFrame:
    """Sessions with their lifetime, expiry, re-authentication and outcome.

    Args:
        starts: :func:`session_starts` rows.
        ends: kills and failed re-authentications: node_id, connection_id, peer_ip, event_ts,
            end_kind ('killed' | 'failed_reauth'), evidence (array of positions).
        conns: ``transforms.gold.kip368_reauth.replay.connections`` rows.
        previous_open: the previous run's ``reauth_sessions`` rows still open at its end; a
            connection of this run that continues one of them keeps its session (no new
            ``first_request`` session).
        config: ``transforms.gold.kip368_reauth.config.max_reauth_config`` rows.
        capabilities: ``transforms.gold.kip368_reauth.config.capabilities_frame`` rows.
        idle_ms: ``connections.max.idle.ms``.
        as_of: the end of the evidence (UTC); None = the latest event time in the data.
        run_id: the run.

    Returns:
        Rows of ``schemas.reauth_sessions.REAUTH_SESSIONS``.
    """
    prev = previous_open.select(
        F.col("broker_id").alias("node_id"),
        "connection_id",
        F.col("client_ip").alias("peer_ip"),
        "start_ts",
        "mechanism",
        F.lit(None).cast("long").alias("sent_session_lifetime_ms"),
        F.lit(None).cast("timestamp").alias("reauth_begin_ts"),
        F.lit(None).cast("long").alias("latency_ms"),
        "evidence",
        F.lit("previous_run").alias("start_source"),
        (F.col("session_seq") > 1).alias("is_reauth"),
        "connection_ambiguous",
        F.col("session_seq").alias("_prev_seq"),
        F.col("lifetime_ms").alias("_prev_lifetime"),
        F.col("lifetime_source").alias("_prev_lifetime_source"),
    )
    continued = prev.join(conns.select("node_id", "connection_id"), ["node_id", "connection_id"])
    # A continued connection's first request is not a new session.
    fresh = starts.join(
        continued.select("node_id", "connection_id").withColumn("_cont", F.lit(True)),
        ["node_id", "connection_id"],
        "left",
    ).where(~(F.col("_cont").isNotNull() & (F.col("start_source") == "first_request")))
    all_starts = fresh.drop("_cont").withColumns(
        {
            "_prev_seq": F.lit(None).cast("int"),
            "_prev_lifetime": F.lit(None).cast("long"),
            "_prev_lifetime_source": F.lit(None).cast("string"),
        }
    )
    all_starts = all_starts.unionByName(continued)
    # The connection key: the connection id, else the client address and start (alone).
    key = F.coalesce(
        F.col("connection_id"),
        F.concat(F.lit("unpaired:"), "peer_ip", F.lit("@"), F.col("start_ts").cast("string")),
    )
    events = all_starts.withColumns({"_key": key, "_kind": F.lit("start")}).unionByName(
        ends.withColumnRenamed("event_ts", "start_ts")
        .withColumns({"_key": key, "_kind": F.col("end_kind")})
        .drop("end_kind"),
        allowMissingColumns=True,
    )
    by_conn = Window.partitionBy("node_id", "_key").orderBy("start_ts", F.col("_kind").desc())
    seq = F.sum((F.col("_kind") == "start").cast("int")).over(
        by_conn.rowsBetween(Window.unboundedPreceding, 0)
    )
    numbered = events.withColumn("_n", seq).where(F.col("_n") > 0)
    is_start = F.col("_kind") == "start"
    grouped = numbered.groupBy("node_id", "_key", "_n").agg(
        F.max_by(
            F.struct(*[c for c in all_starts.columns if c not in ("node_id",)]),
            F.when(is_start, F.lit(1)),
        ).alias("s"),
        F.min(F.when(F.col("_kind") == "killed", F.col("start_ts"))).alias("kill_ts"),
        F.min(F.when(F.col("_kind") == "failed_reauth", F.col("start_ts"))).alias("failed_ts"),
        F.flatten(F.collect_list(F.when(~is_start, F.col("evidence")))).alias("_end_evidence"),
    )
    per_conn = Window.partitionBy("node_id", "_key").orderBy("_n")
    with_next = grouped.withColumns(
        {
            "_next_start": F.lead("s.start_ts").over(per_conn),
            "_next_begin": F.lead("s.reauth_begin_ts").over(per_conn),
            "_next_latency": F.lead("s.latency_ms").over(per_conn),
            "_next_evidence": F.lead("s.evidence").over(per_conn),
        }
    )
    flat = with_next.select(
        "node_id",
        "_key",
        "_n",
        "s.*",
        "kill_ts",
        "failed_ts",
        "_end_evidence",
        "_next_start",
        "_next_begin",
        "_next_latency",
        "_next_evidence",
    )
    c = conns.withColumnRenamed("connection_id", "_conn_id").withColumnRenamed(
        "node_id", "_conn_node"
    )
    enriched = flat.join(
        c,
        (F.col("node_id") == F.col("_conn_node")) & (F.col("connection_id") == F.col("_conn_id")),
        "left",
    )
    return _finish(enriched, config, capabilities, idle_ms=idle_ms, as_of=as_of, run_id=run_id)


def _finish(
    enriched: DataFrame,
    config: DataFrame,
    capabilities: DataFrame,
    *,
    idle_ms: int,
    as_of: datetime | None,
    run_id: str,
) -> DataFrame:
    """Lifetime, capability, outcome and the final columns of :func:`sessions`."""
    # Re-authentication cannot change the mechanism (KIP-368): a session whose handshake did
    # not log it has its predecessor's.
    so_far = Window.partitionBy("node_id", "_key").orderBy("_n")
    inherited = F.last("mechanism", ignorenulls=True).over(
        so_far.rowsBetween(Window.unboundedPreceding, 0)
    )
    enriched = enriched.withColumn("mechanism", inherited)
    with_config = with_configured_max_reauth(enriched, config)
    with_cap = with_software_capability(with_config, capabilities)
    # Re-authentication seen on the connection, or by the same software and version.
    conn_reauth = F.max(F.col("is_reauth").cast("int")).over(Window.partitionBy("node_id", "_key"))
    software_reauth = F.max(F.col("is_reauth").cast("int")).over(
        Window.partitionBy("client_software_name", "client_software_version")
    )
    not_sasl = F.col("security_protocol").isin(*NOT_SASL)
    has_software = F.col("client_software_name").isNotNull()
    supports = (
        F.when(not_sasl, F.lit(False))
        .when(conn_reauth == 1, F.lit(True))
        .when(has_software & (software_reauth == 1), F.lit(True))
        .otherwise(F.col("capability_by_software"))
    )
    supports_source = (
        F.when(not_sasl, F.lit("not_sasl"))
        .when(conn_reauth == 1, F.lit("observed"))
        .when(has_software & (software_reauth == 1), F.lit("observed_same_software"))
        .when(F.col("capability_by_software").isNotNull(), F.lit("capability_table"))
    )
    sent = F.col("sent_session_lifetime_ms")
    configured = F.col("configured_max_reauth_ms")
    lifetime = (
        F.when(sent.isNotNull(), F.when(sent > 0, sent))
        .when(F.col("_prev_source").isNotNull(), F.col("_prev_life"))
        .when(not_sasl, F.lit(None).cast("long"))
        .when(F.col("security_protocol").isNull(), F.lit(None).cast("long"))
        .otherwise(F.when(configured > 0, configured))
    )
    lifetime_source = (
        F.when(sent.isNotNull(), F.lit("session_lifetime_line"))
        .when(F.col("_prev_source").isNotNull(), F.col("_prev_source"))
        .when(not_sasl, F.lit("not_sasl"))
        .when(F.col("security_protocol").isNull(), F.lit("unknown"))
        .otherwise(F.col("configured_source"))
    )
    staged = with_cap.withColumns(
        {
            "_prev_life": F.col("_prev_lifetime"),
            "_prev_source": F.col("_prev_lifetime_source"),
        }
    ).withColumns(
        {
            "supports_reauth": supports,
            "supports_reauth_source": supports_source,
            "lifetime_ms": lifetime,
            "lifetime_source": lifetime_source,
            "last_activity": F.greatest("last_request_ts", "start_ts", "kill_ts", "failed_ts"),
        }
    )
    if as_of is not None:
        staged = staged.withColumn("_end", F.lit(as_of).cast("timestamp"))
    else:  # the latest activity in the data, as a one-row broadcast
        latest = staged.agg(F.max("last_activity").alias("_end"))
        staged = staged.crossJoin(F.broadcast(latest))
    open_at_end = millis_between(F.col("_end"), F.col("last_activity")) < idle_ms
    outcome = (
        F.when(F.col("kill_ts").isNotNull(), F.lit("killed"))
        .when(F.col("failed_ts").isNotNull(), F.lit("failed_reauth"))
        .when(F.col("_next_start").isNotNull(), F.lit("reauthenticated"))
        .when(open_at_end, F.lit("open_at_window_end"))
        .otherwise(F.lit("closed"))
    )
    outcome_ts = F.coalesce("kill_ts", "failed_ts", "_next_start")
    session_id = F.sha2(
        F.concat_ws(
            "\u001f",
            F.coalesce(F.col("node_id"), F.lit("")),
            F.col("_key"),
            F.col("start_ts").cast("string"),
        ),
        256,
    )
    base = F.max("_prev_seq").over(Window.partitionBy("node_id", "_key"))
    seq = F.coalesce(base + F.col("_n") - 1, F.col("_n")).cast("int")
    evidence = F.array_sort(
        F.array_compact(
            F.concat(
                F.coalesce("evidence", F.array()),
                F.coalesce("_end_evidence", F.array()),
                F.coalesce("_next_evidence", F.array()),
            )
        )
    )
    first_here = F.when(
        F.col("start_source") == "previous_run", F.col("first_request_ts")
    ).otherwise(F.col("start_ts"))
    result = staged.select(
        session_id.alias("session_id"),
        F.col("node_id").alias("broker_id"),
        "connection_id",
        seq.alias("session_seq"),
        "listener",
        "security_protocol",
        "mechanism",
        "principal",
        F.coalesce("peer_ip", "remote_ip").alias("client_ip"),
        F.col("remote_port").alias("client_port"),
        "client_id",
        "client_software_name",
        "client_software_version",
        "supports_reauth",
        "supports_reauth_source",
        "start_ts",
        "start_source",
        "lifetime_ms",
        "lifetime_source",
        plus_millis(F.col("start_ts"), F.col("lifetime_ms")).alias("expiry_ts"),
        F.col("_next_begin").alias("reauth_start_ts"),
        F.col("_next_start").alias("reauth_end_ts"),
        F.col("_next_latency").alias("latency_ms"),
        outcome.alias("outcome"),
        outcome_ts.alias("outcome_ts"),
        "last_request_ts",
        "request_count",
        F.coalesce("connection_ambiguous", F.lit(False)).alias("connection_ambiguous"),
        evidence.alias("evidence"),
        F.lit(run_id).alias("run_id"),
        F.to_date(first_here).alias("activity_date"),
    )
    return result.select(*[F.col(f.name).cast(f.dataType) for f in REAUTH_SESSIONS.fields])


class ReplayWindows(NamedTuple):
    """Time limits of the replay (ms): DEBUG lines of a handshake before its outcome; a
    connection's first request after its authentication line; ``connections.max.idle.ms``."""

    handshake_max_gap_ms: int = 1_000
    pairing_window_ms: int = 60_000
    idle_ms: int = 600_000


class Replay(NamedTuple):
    """The KIP-368 replay's frames: handshakes, connections, kills and sessions."""

    handshakes: DataFrame
    connections: DataFrame
    kills: DataFrame
    sessions: DataFrame


def replay(
    auth_events: DataFrame,
    conns: DataFrame,
    node_properties: DataFrame,
    previous_open: DataFrame,
    capabilities: DataFrame,
    *,
    windows: ReplayWindows,
    as_of: datetime | None,
    run_id: str,
) -> Replay:
    """The whole KIP-368 replay from silver: handshakes
    (``transforms.gold.kip368_reauth.replay.handshakes``),
    kills (``transforms.gold.kip368_reauth.outputs.kills``) and sessions (:func:`sessions`) on the
    connections of the request log.

    Args:
        auth_events: silver rows.
        conns: ``transforms.gold.kip368_reauth.replay.connections`` of silver ``request_events``.
        The replay
            reads it in six places (pairing, re-authentications, failures, kills, starts,
            sessions): a caller that persists it aggregates the request log once, not six
            times (Spark reuses no exchange between branches whose columns differ).
        node_properties: ``schemas.node_properties.NODE_PROPERTIES`` rows
            (``connections.max.reauth.ms`` and its prefixed forms, ``listeners``).
        previous_open: the previous run's ``reauth_sessions`` rows still open at its end.
        capabilities: ``transforms.gold.kip368_reauth.config.capabilities_frame`` rows.
        windows: the replay's time limits.
        as_of: the end of the evidence (UTC); None = the latest event time.
        run_id: the run.
    """
    shakes = handshakes(auth_events, windows.handshake_max_gap_ms)
    pairs = pair_initial_authentications(shakes, conns, windows.pairing_window_ms)
    kind = F.col("event_type")
    reauth_ok = attach_to_connections(
        shakes.where(kind == ae.EVENT_REAUTHENTICATION_SUCCEEDED), conns, windows.idle_ms
    )
    failed = attach_to_connections(
        shakes.where(kind == ae.EVENT_REAUTHENTICATION_FAILED), conns, windows.idle_ms
    )
    kill_lines = kills(auth_events, conns, listener_ports(node_properties))
    position = F.array(F.struct("source_path", "line_number")).alias("evidence")
    keys = ["node_id", "connection_id", "peer_ip", "event_ts"]
    ends = kill_lines.select(*keys, F.lit("killed").alias("end_kind"), position).unionByName(
        failed.select(*keys, F.lit("failed_reauth").alias("end_kind"), position)
    )
    result = sessions(
        session_starts(shakes, pairs, conns, reauth_ok),
        ends,
        conns,
        previous_open,
        config=max_reauth_config(node_properties),
        capabilities=capabilities,
        idle_ms=windows.idle_ms,
        as_of=as_of,
        run_id=run_id,
    )
    return Replay(shakes, conns, kill_lines, result)
