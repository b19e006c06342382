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

from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import auth_events as ae
from schemas.reauth_sessions import REAUTH_SESSIONS
from transforms.auth_links import HANDSHAKE_MAX_GAP_MS, IDLE_MS, PAIRING_WINDOW_MS
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
    all_starts = _with_previous_run(starts, conns, previous_open)
    numbered = _numbered_events(all_starts, ends)
    grouped = _session_ends(numbered, all_starts.columns)
    enriched = _with_connection(_with_next_session(grouped), conns)
    return _finish(enriched, config, capabilities, idle_ms=idle_ms, as_of=as_of, run_id=run_id)


def _with_previous_run(starts: DataFrame, conns: DataFrame, previous_open: DataFrame) -> DataFrame:
    """This run's session starts plus the sessions open at the previous run's end whose
    connection this run sees again.

    A session lasts until a re-authentication, a kill or the connection's close (KIP-368;
    ``SaslServerAuthenticator.ReauthInfo``, ``kafka.network.Processor``): a connection that
    continues an open session keeps it, and its first request (``start_source`` =
    'first_request') starts no new session.

    Input: ``starts``: :func:`session_starts` rows; ``conns``: node_id, connection_id
    (string); ``previous_open``: ``schemas.reauth_sessions.REAUTH_SESSIONS`` rows.
    Output columns: those of :func:`session_starts` (start_ts: timestamp, UTC; a continued
    session's start_source 'previous_run', is_reauth = its session_seq > 1), plus the
    continued session's _prev_seq (int: session_seq), _prev_lifetime (long, ms: lifetime_ms)
    and _prev_lifetime_source (string: lifetime_source), null for this run's starts.
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
    return all_starts.unionByName(continued)


def _numbered_events(all_starts: DataFrame, ends: DataFrame) -> DataFrame:
    """Session starts and ends of each connection in time order, numbered by session.

    Per node_id and connection key, in start_ts order (a start before an end of the same
    instant), ``_n`` counts the starts so far: session n is start n and the ends up to start
    n + 1 (KIP-368: each successful re-authentication starts the next session,
    ``SaslServerAuthenticator.ReauthInfo``). Ends before the connection's first start
    (``_n`` = 0) are dropped.

    Input: ``all_starts``: :func:`_with_previous_run` rows; ``ends``: node_id,
    connection_id, peer_ip (string), event_ts (timestamp, UTC), end_kind ('killed' |
    'failed_reauth'), evidence (array of positions).
    Output columns: those of ``all_starts`` (an end's event_ts as start_ts, its other start
    columns null), _key (string: connection_id, else 'unpaired:<peer_ip>@<start_ts>', a
    connection of its own), _kind (string: 'start' or the end_kind), _n (long, >= 1).
    """
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
    return events.withColumn("_n", seq).where(F.col("_n") > 0)


def _session_ends(numbered: DataFrame, start_columns: list[str]) -> DataFrame:
    """One row per session: its start and how it ended before the next start.

    A kill (``Disconnecting expired channel``, ``kafka.network.Processor``) or a failed
    re-authentication (Selector ``Failed re-authentication``; the broker closes the
    connection) ends the session it falls in (KIP-368).

    Input: :func:`_numbered_events` rows; ``start_columns``: the columns of its
    ``all_starts`` input.
    Output columns: node_id, _key (string), _n (long), s (struct of the start's
    ``start_columns`` but node_id), kill_ts, failed_ts (timestamp, UTC: the session's first
    kill / failed re-authentication, else null), _end_evidence (array of positions: the end
    lines').
    """
    is_start = F.col("_kind") == "start"
    return numbered.groupBy("node_id", "_key", "_n").agg(
        F.max_by(
            F.struct(*[c for c in start_columns if c not in ("node_id",)]),
            F.when(is_start, F.lit(1)),
        ).alias("s"),
        F.min(F.when(F.col("_kind") == "killed", F.col("start_ts"))).alias("kill_ts"),
        F.min(F.when(F.col("_kind") == "failed_reauth", F.col("start_ts"))).alias("failed_ts"),
        F.flatten(F.collect_list(F.when(~is_start, F.col("evidence")))).alias("_end_evidence"),
    )


def _with_next_session(grouped: DataFrame) -> DataFrame:
    """Each session with the re-authentication that started the connection's next session
    (KIP-368: a successful re-authentication ends one session and starts the next).

    Input: :func:`_session_ends` rows.
    Output columns: node_id, _key (string), _n (long), the start's columns (struct ``s``
    flattened), kill_ts, failed_ts (timestamp, UTC), _end_evidence, then the next session's
    _next_start (timestamp, UTC: its ``Successfully re-authenticated`` line), _next_begin
    (timestamp, UTC: its ``Beginning re-authentication`` line), _next_latency (long, ms:
    KIP-368 ``reauthentication-latency``), _next_evidence (array of positions); null for the
    connection's last session.
    """
    per_conn = Window.partitionBy("node_id", "_key").orderBy("_n")
    with_next = grouped.withColumns(
        {
            "_next_start": F.lead("s.start_ts").over(per_conn),
            "_next_begin": F.lead("s.reauth_begin_ts").over(per_conn),
            "_next_latency": F.lead("s.latency_ms").over(per_conn),
            "_next_evidence": F.lead("s.evidence").over(per_conn),
        }
    )
    return with_next.select(
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


def _with_connection(flat: DataFrame, conns: DataFrame) -> DataFrame:
    """Each session with its connection's request-log columns (left join on node and
    connection id; none for a session without a known connection).

    Input: :func:`_with_next_session` rows; ``transforms.gold.kip368_reauth.replay.connections``
    rows.
    Output columns: the input's, then the connection's as _conn_node (node_id), _conn_id
    (connection_id), first_request_ts, last_request_ts (timestamp, UTC), request_count
    (long), principal, listener, security_protocol, remote_ip (string), remote_port,
    local_port (int), client_id, client_software_name, client_software_version,
    first_source_path (string), first_line_number (long).
    """
    c = conns.withColumnRenamed("connection_id", "_conn_id").withColumnRenamed(
        "node_id", "_conn_node"
    )
    return flat.join(
        c,
        (F.col("node_id") == F.col("_conn_node")) & (F.col("connection_id") == F.col("_conn_id")),
        "left",
    )


def _finish(
    enriched: DataFrame,
    config: DataFrame,
    capabilities: DataFrame,
    *,
    idle_ms: int,
    as_of: datetime | None,
    run_id: str,
) -> DataFrame:
    """Lifetime, capability, outcome and the final columns of :func:`sessions`.

    Input: :func:`_with_connection` rows; ``max_reauth_config`` and ``capabilities_frame``
    rows (``transforms.gold.kip368_reauth.config``).
    Output: rows of ``schemas.reauth_sessions.REAUTH_SESSIONS``.
    """
    with_mechanism = _with_inherited_mechanism(enriched)
    with_config = with_configured_max_reauth(with_mechanism, config)
    with_cap = with_software_capability(with_config, capabilities)
    staged = _with_window_end(_with_support_and_lifetime(with_cap), as_of)
    return _session_rows(staged, idle_ms=idle_ms, run_id=run_id)


def _with_inherited_mechanism(enriched: DataFrame) -> DataFrame:
    """Re-authentication cannot change the mechanism (KIP-368,
    ``SaslServerAuthenticator``): a session whose handshake did not log it has its
    predecessor's.

    Input columns: node_id, _key (string), _n (long), mechanism (string).
    Output: the input with mechanism (string) replaced by the last non-null mechanism of the
    connection's sessions 1.._n.
    """
    so_far = Window.partitionBy("node_id", "_key").orderBy("_n")
    inherited = F.last("mechanism", ignorenulls=True).over(
        so_far.rowsBetween(Window.unboundedPreceding, 0)
    )
    return enriched.withColumn("mechanism", inherited)


def _reauth_support() -> dict[str, Column]:
    """``supports_reauth`` (boolean) and ``supports_reauth_source`` (string) of a session.

    A client re-authenticates when it sends SaslAuthenticate v1+ (KIP-368), never logged:
    false for PLAINTEXT / SSL channels ('not_sasl'; Kafka's Authenticator default), true when
    a re-authentication was seen on the connection ('observed') or by the same client
    software and version ('observed_same_software'), else the capability table
    ('capability_table'); null = unknown.

    Input columns: node_id, _key, security_protocol, client_software_name,
    client_software_version (string), is_reauth, capability_by_software (boolean).
    """
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
    return {"supports_reauth": supports, "supports_reauth_source": supports_source}


def _lifetime() -> dict[str, Column]:
    """``lifetime_ms`` (long, ms; null = no expiry or unknown) and ``lifetime_source``
    (string) of a session.

    Precedence: the ``Authentication complete; session max lifetime`` line's value (Kafka's
    min of ``connections.max.reauth.ms`` and the credential's remaining lifetime,
    ``SaslServerAuthenticator.ReauthInfo``; 0 = no expiry), 'session_lifetime_line'; a
    continued session's previous value and source; null for PLAINTEXT / SSL ('not_sasl') or
    an unknown protocol ('unknown'); else the configured ``connections.max.reauth.ms``
    (0 = no expiry) and its source.

    Input columns: sent_session_lifetime_ms, _prev_life, configured_max_reauth_ms (long, ms),
    _prev_source, security_protocol, configured_source (string).
    """
    not_sasl = F.col("security_protocol").isin(*NOT_SASL)
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
    return {"lifetime_ms": lifetime, "lifetime_source": lifetime_source}


def _with_support_and_lifetime(with_cap: DataFrame) -> DataFrame:
    """Add supports_reauth (boolean), supports_reauth_source (string) (:func:`_reauth_support`),
    lifetime_ms (long, ms), lifetime_source (string) (:func:`_lifetime`) and last_activity
    (timestamp, UTC: the latest of the connection's last request, the session's start, kill
    and failed re-authentication), plus the helpers _prev_life (long, ms) and _prev_source
    (string).

    Input: :func:`_with_inherited_mechanism` rows after ``with_configured_max_reauth`` and
    ``with_software_capability`` (``transforms.gold.kip368_reauth.config``).
    """
    return with_cap.withColumns(
        {
            "_prev_life": F.col("_prev_lifetime"),
            "_prev_source": F.col("_prev_lifetime_source"),
        }
    ).withColumns(
        {
            **_reauth_support(),
            **_lifetime(),
            "last_activity": F.greatest("last_request_ts", "start_ts", "kill_ts", "failed_ts"),
        }
    )


def _with_window_end(staged: DataFrame, as_of: datetime | None) -> DataFrame:
    """Add ``_end`` (timestamp, UTC): the end of the evidence, ``as_of``; None = the latest
    last_activity (timestamp, UTC) of all rows, cross-joined as a one-row broadcast."""
    if as_of is not None:
        return staged.withColumn("_end", F.lit(as_of).cast("timestamp"))
    # the latest activity in the data, as a one-row broadcast
    latest = staged.agg(F.max("last_activity").alias("_end"))
    return staged.crossJoin(F.broadcast(latest))


def _outcome(idle_ms: int) -> Column:
    """How a session ended (string, ``schemas.reauth_sessions.OUTCOMES``), KIP-368 as built
    (``kafka.network.Processor``, ``SaslServerAuthenticator``): 'killed' (kill_ts),
    'failed_reauth' (failed_ts), 'reauthenticated' (_next_start), else 'open_at_window_end'
    when last_activity is less than ``idle_ms`` (ms, ``connections.max.idle.ms``) before
    _end, else 'closed' (the broker closes connections idle that long).

    Input columns: kill_ts, failed_ts, _next_start, last_activity, _end (timestamp, UTC).
    """
    open_at_end = millis_between(F.col("_end"), F.col("last_activity")) < idle_ms
    return (
        F.when(F.col("kill_ts").isNotNull(), F.lit("killed"))
        .when(F.col("failed_ts").isNotNull(), F.lit("failed_reauth"))
        .when(F.col("_next_start").isNotNull(), F.lit("reauthenticated"))
        .when(open_at_end, F.lit("open_at_window_end"))
        .otherwise(F.lit("closed"))
    )


def _session_id() -> Column:
    """session_id (string): sha2-256 hex of node_id, _key and start_ts (timestamp, UTC) -
    deterministic, so a re-run gives the same id."""
    return F.sha2(
        F.concat_ws(
            "\u001f",
            F.coalesce(F.col("node_id"), F.lit("")),
            F.col("_key"),
            F.col("start_ts").cast("string"),
        ),
        256,
    )


def _session_seq() -> Column:
    """session_seq (int): 1 = the connection's first authentication, n = after n - 1
    re-authentications (KIP-368); a connection continued from the previous run counts on
    from its session's _prev_seq (int). Input columns: node_id, _key (string), _n (long),
    _prev_seq (int)."""
    base = F.max("_prev_seq").over(Window.partitionBy("node_id", "_key"))
    return F.coalesce(base + F.col("_n") - 1, F.col("_n")).cast("int")


def _session_evidence() -> Column:
    """evidence (array of positions, sorted): the session's start lines, its end lines and
    the next session's start lines (the re-authentication that ended it). Input columns:
    evidence, _end_evidence, _next_evidence (arrays of positions)."""
    return F.array_sort(
        F.array_compact(
            F.concat(
                F.coalesce("evidence", F.array()),
                F.coalesce("_end_evidence", F.array()),
                F.coalesce("_next_evidence", F.array()),
            )
        )
    )


def _session_rows(staged: DataFrame, *, idle_ms: int, run_id: str) -> DataFrame:
    """The rows of ``schemas.reauth_sessions.REAUTH_SESSIONS``, its columns cast to its types.

    expiry_ts = start_ts + lifetime_ms (timestamp, UTC; KIP-368: the session expires
    ``connections.max.reauth.ms`` or the credential's lifetime after its authentication); the
    re-authentication that ended the session is the next session's (_next_begin,
    _next_start, _next_latency: ms); outcome per :func:`_outcome` (``idle_ms``: ms),
    outcome_ts (timestamp, UTC: its kill, failure or re-authentication, null when open or
    closed); activity_date (date, UTC) of the session's first evidence in this run.

    Input: :func:`_with_window_end` rows.
    """
    outcome_ts = F.coalesce("kill_ts", "failed_ts", "_next_start")
    first_here = F.when(
        F.col("start_source") == "previous_run", F.col("first_request_ts")
    ).otherwise(F.col("start_ts"))
    result = staged.select(
        _session_id().alias("session_id"),
        F.col("node_id").alias("broker_id"),
        "connection_id",
        _session_seq().alias("session_seq"),
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
        _outcome(idle_ms).alias("outcome"),
        outcome_ts.alias("outcome_ts"),
        "last_request_ts",
        "request_count",
        F.coalesce("connection_ambiguous", F.lit(False)).alias("connection_ambiguous"),
        _session_evidence().alias("evidence"),
        F.lit(run_id).alias("run_id"),
        F.to_date(first_here).alias("activity_date"),
    )
    return result.select(*[F.col(f.name).cast(f.dataType) for f in REAUTH_SESSIONS.fields])


class ReplayWindows(NamedTuple):
    """Time limits of the replay (ms): DEBUG lines of a handshake before its outcome; a
    connection's first request after its authentication line; ``connections.max.idle.ms``."""

    handshake_max_gap_ms: int = HANDSHAKE_MAX_GAP_MS
    pairing_window_ms: int = PAIRING_WINDOW_MS
    idle_ms: int = IDLE_MS


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
    materialise: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> Replay:
    """The whole KIP-368 replay from silver: handshakes
    (``transforms.gold.kip368_reauth.replay.handshakes``),
    kills (``transforms.gold.kip368_reauth.replay.kills``) and sessions (:func:`sessions`) on the
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
        materialise: applied to the handshakes, which the pairing, the
            re-authentications, the failures, the starts and three findings rules read
            (``transforms.gold.kip368_reauth.outputs``). Without it each branch
            carries a copy of the handshakes' plan, and every later step is analysed and
            optimised with all of them under it; the pipeline passes ``jobs.reuse.reused``
            (KIP-368's planning on ``samples/``: about half). The rows are the same either way.
    """
    shakes = materialise(handshakes(auth_events, windows.handshake_max_gap_ms))
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
