"""How authentication lines are tied to their handshake and to the request log's connections.

Shared by silver (``transforms.silver.auth.principals``: the principal and mechanism of each
``auth_events`` outcome) and gold (``transforms.gold.kip368_reauth``: KIP-368 sessions), so
that both pair a line with a connection by one rule. What the logs say (kafka-log-formats.md
sections 2 and 4; ``org.apache.kafka.common.network.Selector.pollSelectionKeys``,
``SaslServerAuthenticator``, ``kafka.network.RequestChannel``):

* A network processor thread logs, for one handshake, ``Using SASL mechanism 'X' provided by
  client``, then ``Authentication complete; session max lifetime ...`` (both DEBUG,
  SaslServerAuthenticator), then the Selector outcome ``Successfully {re-}authenticated with
  /ip`` (DEBUG) or ``Failed {re-}authentication with /ip (...)`` (INFO). A re-authentication
  starts with ``Beginning re-authentication`` (DEBUG) / ``Begin re-authentication: ... id=c``
  (TRACE). :func:`handshakes` groups each outcome line with the DEBUG lines logged since the
  previous outcome line of the same file, within ``max_gap_ms``. Several processors writing to
  one file can interleave their lines; the grouping is then an approximation.
* The success lines carry the client address, never the connection id. The request log names
  the connection (``connection``: ``localIp:port-remoteIp:port[-processor]-index``), its
  principal, listener, security protocol and client software. :func:`pair_initial_authentications`
  pairs a success with the connection from the same address whose first request follows it
  most closely (mutual nearest, within ``match_ms``); :func:`open_connections` lists the
  connections of an address open at a re-authentication's time.

Every function takes a ``scope``: the columns that hold one broker's evidence together.
``NODE_SCOPE`` (node_id) for gold, which replays the whole lake; ``DAY_SCOPE`` (node_id and
event_date) for silver, whose rows are written one UTC day partition at a time: a silver row
may then depend on the evidence of its own day only, so a run per day and one run over many
days write the same rows (docs/reruns.md, chunking).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import auth_events as ae

OUTCOMES = (
    ae.EVENT_AUTHENTICATION_SUCCEEDED,
    ae.EVENT_REAUTHENTICATION_SUCCEEDED,
    ae.EVENT_AUTHENTICATION_FAILED,
    ae.EVENT_REAUTHENTICATION_FAILED,
)
_DEBUG = (ae.EVENT_MECHANISM_SELECTED, ae.EVENT_SESSION_LIFETIME, ae.EVENT_REAUTHENTICATION_STARTED)
_FIRST_REQUEST_FIELDS = (
    "principal", "listener", "security_protocol", "remote_ip", "remote_port", "local_port",
    "client_id",
)  # fmt: skip
#: One broker's evidence: gold (the whole lake), silver (one UTC day partition).
NODE_SCOPE: tuple[str, ...] = ("node_id",)
DAY_SCOPE: tuple[str, ...] = ("node_id", "event_date")
#: Default time limits (ms), gold's ``[rules.reauth]`` defaults and silver's fixed values: a
#: handshake's DEBUG lines come at most this long before its outcome line; a connection's
#: first request follows its authentication line within this (a client sends its first
#: request right after authenticating); Kafka's default ``connections.max.idle.ms`` (10 min),
#: after which the broker closes a silent connection.
HANDSHAKE_MAX_GAP_MS = 1_000
PAIRING_WINDOW_MS = 60_000
IDLE_MS = 600_000


def millis_between(later: Column, earlier: Column) -> Column:
    """``later - earlier`` in ms (long); null if either is null."""
    return F.unix_millis(later) - F.unix_millis(earlier)


def _same_scope(scope: Sequence[str], prefix: str) -> Column:
    """Equality of each scope column with its copy renamed ``<prefix><name>`` (the other side
    of a join); null scope values never match."""
    conditions = [F.col(name) == F.col(f"{prefix}{name}") for name in scope]
    result = conditions[0]
    for condition in conditions[1:]:
        result = result & condition
    return result


def handshakes(
    auth_events: DataFrame, max_gap_ms: int, scope: Sequence[str] = NODE_SCOPE
) -> DataFrame:
    """One row per broker-side authentication outcome, with what its handshake logged before.

    Input: silver ``auth_events`` (``schemas.auth_events``); only broker-side Kafka lines
    (``side = 'broker'``, ``source_format = 'log4j'``) are used.

    Output columns: the ``scope`` columns (node_id; and event_date (date) for ``DAY_SCOPE``),
    source_path (string), line_number (long), event_ts (timestamp, UTC), event_type (one of
    ``OUTCOMES``), is_reauthentication (boolean), peer_ip, connection_id (string; failure
    lines 3.2+, or the TRACE ``Begin re-authentication`` line), listener, security_protocol
    (string; Strimzi thread names), mechanism (string: the handshake's ``Using SASL
    mechanism``, else the one the outcome line names, else a mechanism-change failure's old
    one), handshake_mechanism (string: the ``Using SASL mechanism`` line's alone),
    failure_reason_code, reauth_old_principal, reauth_new_principal (string),
    sent_session_lifetime_ms, lifetime_line_number (long: the ``Authentication complete``
    line, null without one), reauth_begin_ts (timestamp), reauth_begin_line_number (long),
    latency_ms (long: a successful re-authentication's end minus its begin line, KIP-368
    ``reauthentication-latency``).

    DEBUG lines more than ``max_gap_ms`` (ms) before the outcome, or outside its scope, are
    not used.
    """
    keys = [*scope, "source_path", "_grp"]
    grouped = _grouped_by_outcome(auth_events, scope)
    outcome = F.col("event_type").isin(*OUTCOMES)
    debug = _handshake_debug_lines(grouped.where(~outcome), keys)
    joined = grouped.where(outcome).join(debug, keys, "left")
    return _with_handshake_fields(joined, max_gap_ms, scope)


def _grouped_by_outcome(auth_events: DataFrame, scope: Sequence[str]) -> DataFrame:
    """Broker-side handshake lines, each numbered with the handshake it belongs to.

    A network processor logs a handshake's DEBUG lines (``Using SASL mechanism``,
    ``Authentication complete; session max lifetime``, ``Beginning re-authentication``;
    ``SaslServerAuthenticator``) before its outcome line (``Successfully {re-}authenticated``
    / ``Failed {re-}authentication``, ``org.apache.kafka.common.network.Selector``): a line
    belongs to the outcome that follows it in its file.

    Input: silver ``auth_events`` (``schemas.auth_events``).
    Output: the rows with ``side = 'broker'``, ``source_format = 'log4j'`` and an event_type
    of ``OUTCOMES`` or the DEBUG kinds, their columns plus _grp (long: the number of outcome
    lines before the line in its scope and source_path, by line_number; an outcome line has
    its DEBUG lines' _grp).
    """
    broker = auth_events.where(
        (F.col("side") == "broker")
        & (F.col("source_format") == "log4j")
        & F.col("event_type").isin(*OUTCOMES, *_DEBUG)
    )
    outcome = F.col("event_type").isin(*OUTCOMES)
    order = Window.partitionBy(*scope, "source_path").orderBy("line_number")
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    return broker.withColumn("_grp", F.coalesce(F.sum(outcome.cast("int")).over(before), F.lit(0)))


def _handshake_debug_lines(debug_lines: DataFrame, keys: Sequence[str]) -> DataFrame:
    """What each handshake's DEBUG lines say, one row per handshake.

    Input: :func:`_grouped_by_outcome` rows that are not outcomes; ``keys``: the scope
    columns, source_path and _grp.
    Output columns: ``keys``, _mech (struct event_ts (timestamp, UTC), mechanism (string): the
    last ``Using SASL mechanism`` line), _life (struct event_ts, sent_session_lifetime_ms
    (long, ms), line_number (long): the last ``Authentication complete; session max lifetime``
    line, ``SaslServerAuthenticator``), _begin (struct event_ts, line_number: the first
    ``Beginning re-authentication`` line, KIP-368), _begin_connection (string: the connection
    id of a TRACE ``Begin re-authentication`` line); each null without such a line.
    """
    kind, line = F.col("event_type"), F.col("line_number")

    def last_of(event_type: str, value: Column) -> Column:
        return F.max_by(value, F.when(kind == event_type, line))

    return debug_lines.groupBy(*keys).agg(
        last_of(ae.EVENT_MECHANISM_SELECTED, F.struct("event_ts", "mechanism")).alias("_mech"),
        last_of(
            ae.EVENT_SESSION_LIFETIME,
            F.struct("event_ts", "sent_session_lifetime_ms", "line_number"),
        ).alias("_life"),
        F.min_by(
            F.struct("event_ts", "line_number"),
            F.when(kind == ae.EVENT_REAUTHENTICATION_STARTED, line),
        ).alias("_begin"),
        F.max(F.when(kind == ae.EVENT_REAUTHENTICATION_STARTED, F.col("connection_id"))).alias(
            "_begin_connection"
        ),
    )


def _with_handshake_fields(joined: DataFrame, max_gap_ms: int, scope: Sequence[str]) -> DataFrame:
    """The output columns of :func:`handshakes` from each outcome line and its handshake's
    DEBUG lines.

    A DEBUG line counts when it is at most ``max_gap_ms`` (ms) before the outcome line
    (several processors writing to one file interleave their lines). The begin line counts
    for re-authentications only; latency_ms (long, ms) = a successful re-authentication's
    outcome minus its begin line (KIP-368 ``reauthentication-latency``,
    ``SaslServerAuthenticator.ReauthInfo``). mechanism: the ``Using SASL mechanism`` line's,
    else the outcome line's, else the failure's old mechanism.

    Input: outcome rows of :func:`_grouped_by_outcome` left-joined with
    :func:`_handshake_debug_lines` on the scope columns, source_path, _grp.
    Output: the columns :func:`handshakes` documents.
    """
    kind = F.col("event_type")
    ts = F.col("event_ts")

    def recent(field: str) -> Column:
        gap = millis_between(ts, F.col(f"{field}.event_ts"))
        return F.col(field).isNotNull() & (gap >= 0) & (gap <= max_gap_ms)

    is_reauth_ok = kind == ae.EVENT_REAUTHENTICATION_SUCCEEDED
    begin_ok = recent("_begin") & F.col("is_reauthentication")
    handshake_mechanism = F.when(recent("_mech"), F.col("_mech.mechanism"))
    return joined.select(
        *scope,
        "source_path",
        "line_number",
        "event_ts",
        "event_type",
        F.coalesce(F.col("is_reauthentication"), kind.contains("reauth")).alias(
            "is_reauthentication"
        ),
        "peer_ip",
        F.coalesce(F.col("connection_id"), F.when(begin_ok, F.col("_begin_connection"))).alias(
            "connection_id"
        ),
        "listener",
        "security_protocol",
        F.coalesce(handshake_mechanism, F.col("mechanism"), F.col("reauth_old_mechanism")).alias(
            "mechanism"
        ),
        handshake_mechanism.alias("handshake_mechanism"),
        "failure_reason_code",
        "reauth_old_principal",
        "reauth_new_principal",
        F.when(recent("_life"), F.col("_life.sent_session_lifetime_ms")).alias(
            "sent_session_lifetime_ms"
        ),
        F.when(recent("_life"), F.col("_life.line_number")).alias("lifetime_line_number"),
        F.when(begin_ok, F.col("_begin.event_ts")).alias("reauth_begin_ts"),
        F.when(begin_ok, F.col("_begin.line_number")).alias("reauth_begin_line_number"),
        F.when(is_reauth_ok & begin_ok, millis_between(ts, F.col("_begin.event_ts"))).alias(
            "latency_ms"
        ),
    )


def connections(request_events: DataFrame, scope: Sequence[str] = NODE_SCOPE) -> DataFrame:
    """One row per connection the request log shows, per broker (and per day for
    ``DAY_SCOPE``).

    Input: silver ``request_events``; forwarded requests (``is_forwarded``, logged by the
    controller on the broker's connection) are left out.

    Output columns: the ``scope`` columns, connection_id (string), first_request_ts,
    last_request_ts (timestamp, UTC), request_count (long), principal (string: the first
    request's; KafkaPrincipal.toString), listener, security_protocol, remote_ip (string),
    remote_port, local_port (int), client_id, client_software_name, client_software_version
    (string), first_source_path (string), first_line_number (long).
    """
    requests = request_events.where(
        F.col("node_id").isNotNull()
        & F.col("connection_id").isNotNull()
        & F.col("event_ts").isNotNull()
        & ~F.coalesce(F.col("is_forwarded"), F.lit(False))
    )
    first = F.min_by(
        F.struct(*_FIRST_REQUEST_FIELDS, "source_path", "line_number"),
        F.struct("event_ts", "line_number"),
    )
    grouped = requests.groupBy(*scope, "connection_id").agg(
        F.min("event_ts").alias("first_request_ts"),
        F.max("event_ts").alias("last_request_ts"),
        F.count(F.lit(1)).alias("request_count"),
        first.alias("_first"),
        F.max("client_software_name").alias("client_software_name"),
        F.max("client_software_version").alias("client_software_version"),
    )
    return grouped.select(
        *scope,
        "connection_id",
        "first_request_ts",
        "last_request_ts",
        "request_count",
        *[F.col(f"_first.{name}").alias(name) for name in _FIRST_REQUEST_FIELDS],
        "client_software_name",
        "client_software_version",
        F.col("_first.source_path").alias("first_source_path"),
        F.col("_first.line_number").alias("first_line_number"),
    )


def pair_initial_authentications(
    shakes: DataFrame, conns: DataFrame, match_ms: int, scope: Sequence[str] = NODE_SCOPE
) -> DataFrame:
    """Pair each ``Successfully authenticated`` line with the connection it opened.

    Candidates: same scope (node; and day), the connection's remote address is the line's
    client address, and its first request follows the line within ``match_ms`` (ms). A pair
    is kept when each side is the other's nearest candidate (the closest first request after
    the line; the latest line before the first request).

    Input: :func:`handshakes` (or silver ``auth_events``) rows: the scope columns,
    source_path, line_number, event_ts, event_type, peer_ip; :func:`connections` rows of the
    same scope.
    Output columns: the scope columns, source_path (string), line_number (long) of the
    success line, and connection_id (string) of its connection.
    """
    ok = shakes.where(F.col("event_type") == ae.EVENT_AUTHENTICATION_SUCCEEDED).select(
        *scope, "source_path", "line_number", "event_ts", "peer_ip"
    )
    c = conns.select(
        *[F.col(name).alias(f"_c_{name}") for name in scope],
        "connection_id",
        "remote_ip",
        "first_request_ts",
    )
    gap = millis_between(F.col("first_request_ts"), F.col("event_ts"))
    candidates = ok.join(
        c,
        _same_scope(scope, "_c_")
        & (F.col("peer_ip") == F.col("remote_ip"))
        & (gap >= 0)
        & (gap <= match_ms),
    )
    per_line = Window.partitionBy(*scope, "source_path", "line_number").orderBy(
        "first_request_ts", "connection_id"
    )
    per_connection = Window.partitionBy(*scope, "connection_id").orderBy(
        F.col("event_ts").desc(), F.col("source_path").desc(), F.col("line_number").desc()
    )
    ranked = candidates.withColumns(
        {"_r1": F.row_number().over(per_line), "_r2": F.row_number().over(per_connection)}
    )
    return ranked.where((F.col("_r1") == 1) & (F.col("_r2") == 1)).select(
        *scope, "source_path", "line_number", "connection_id"
    )


def open_connections(
    rows: DataFrame, conns: DataFrame, idle_ms: int, scope: Sequence[str] = NODE_SCOPE
) -> DataFrame:
    """Each row with every connection of its client address open at its time (left join).

    A connection is open at ``event_ts`` when it is in the same scope, its remote address is
    the row's peer_ip, its first request is at or before ``event_ts`` and its last request at
    most ``idle_ms`` (ms, ``connections.max.idle.ms``: the broker closes a connection idle
    that long) before it, or after it.

    Input columns: the scope columns, source_path, line_number, event_ts, peer_ip (rows
    without a connection id); :func:`connections` rows of the same scope.
    Output: the input columns, then connection_id, _c_principal (string), _c_last_request_ts
    (timestamp, UTC); one row per open connection, one row of nulls when none is.
    """
    c = conns.select(
        *[F.col(name).alias(f"_c_{name}") for name in scope],
        "connection_id",
        F.col("remote_ip").alias("_c_ip"),
        F.col("principal").alias("_c_principal"),
        F.col("first_request_ts").alias("_c_first_request_ts"),
        F.col("last_request_ts").alias("_c_last_request_ts"),
    )
    open_then = (
        _same_scope(scope, "_c_")
        & (F.col("peer_ip") == F.col("_c_ip"))
        & (F.col("_c_first_request_ts") <= F.col("event_ts"))
        & (millis_between(F.col("event_ts"), F.col("_c_last_request_ts")) <= idle_ms)
    )
    joined = rows.join(c, open_then, "left")
    return joined.select(*rows.columns, "connection_id", "_c_principal", "_c_last_request_ts")


def attach_to_connections(
    rows: DataFrame, conns: DataFrame, idle_ms: int, scope: Sequence[str] = NODE_SCOPE
) -> DataFrame:
    """Give re-authentication outcomes and kills without a known connection their connection.

    Rows with a ``connection_id`` keep it. Others get the connection of the same scope and
    client address that is open at the row's time (:func:`open_connections`); with several,
    the one with the latest activity, flagged ``connection_ambiguous``.

    Input columns: the scope columns, source_path, line_number, event_ts, peer_ip,
    connection_id.
    Output: the input columns with connection_id filled where possible, plus
    connection_ambiguous (boolean).
    """
    known = rows.where(F.col("connection_id").isNotNull()).withColumn(
        "connection_ambiguous", F.lit(False)
    )
    unknown = rows.where(F.col("connection_id").isNull()).drop("connection_id")
    joined = open_connections(unknown, conns, idle_ms, scope)
    per_row = Window.partitionBy(*scope, "source_path", "line_number")
    ranked = joined.withColumns(
        {
            "_rank": F.row_number().over(
                per_row.orderBy(F.col("_c_last_request_ts").desc_nulls_last(), "connection_id")
            ),
            "_n": F.count("connection_id").over(per_row),
        }
    )
    attached = ranked.where(F.col("_rank") == 1).withColumn("connection_ambiguous", F.col("_n") > 1)
    columns = [*rows.columns, "connection_ambiguous"]
    return known.select(*columns).unionByName(attached.select(*columns))
