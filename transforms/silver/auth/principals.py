"""Who authenticated, and how: the principal and mechanism of ``auth_events`` rows, linked to
the request log and to the handshake they end, wherever the logs support it.

Kafka's Selector outcome lines name the client's address, never its principal (``Successfully
{re-}authenticated with /ip``, ``Failed {re-}authentication with /ip (channelId=...) (...)``,
``org.apache.kafka.common.network.Selector``); the request log names the principal of every
connection (``kafka.request.logger``: ``connection``, ``principal``, docs/kafka-log-formats.md
section 2). The links, in precedence order, each recorded in ``principal_source``
(``schemas.auth_events.PRINCIPAL_SOURCES``):

* ``line`` / ``confluent_audit``: the parsers already took the principal from the line
  (``transforms.silver.auth.parse``, ``transforms.silver.confluent_audit.parse``).
* ``request_log``: the row's connection id (a failure's ``channelId``, 3.2+ KAFKA-13539; an
  expired-channel kill's or a TRACE ``Begin re-authentication`` line's ``id=``, also the one
  of the re-authentication outcome whose handshake that TRACE line starts) is a connection of
  the same broker and day in ``request_events``: its principal. A channel id the request log
  does not show links nothing (a failed initial authentication: the broker closes the
  connection before any request).
* ``session``: the KIP-368 pairing of gold ``reauth_sessions`` (``transforms.auth_links``):
  a ``Successfully authenticated`` line with the connection whose first request follows it
  (mutual nearest, within ``PAIRING_WINDOW_MS``); a re-authentication outcome without a
  connection id with the connections of its address open at its time (first request at or
  before it, active within ``IDLE_MS``), when they all have one principal (KIP-368: a
  re-authentication cannot change the principal, ``SaslServerAuthenticator.ReauthInfo``).
  A failed initial authentication is never linked by address: it opened no connection.

``mechanism`` comes from the line (``mechanism_source`` 'line' / 'confluent_audit'), else from
its handshake's ``Using SASL mechanism 'X' provided by client`` line (SaslServerAuthenticator,
'handshake'; at most ``HANDSHAKE_MAX_GAP_MS`` before the outcome in the same file).

Every link uses the evidence of the row's own broker and UTC day (``DAY_SCOPE``): silver is
written one day partition at a time, so a run per day and a run over many days give the same
rows (docs/reruns.md). A success a second before midnight whose first request comes after it
stays unlinked in silver (gold ``reauth_sessions``, which replays the whole lake, pairs it).
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import auth_events as ae
from transforms.auth_links import (
    DAY_SCOPE,
    HANDSHAKE_MAX_GAP_MS,
    IDLE_MS,
    PAIRING_WINDOW_MS,
    connections,
    handshakes,
    open_connections,
    pair_initial_authentications,
)

_KEY = ("source_path", "line_number")
_REAUTH_OUTCOMES = (ae.EVENT_REAUTHENTICATION_SUCCEEDED, ae.EVENT_REAUTHENTICATION_FAILED)
#: principal_source of each link, in precedence order (the first wins).
_LINK_ORDER = {ae.PRINCIPAL_FROM_REQUEST_LOG: 1, ae.PRINCIPAL_FROM_SESSION: 2}


def _broker_lines(auth_events: DataFrame) -> DataFrame:
    """The rows Kafka's broker wrote (``side = 'broker'``, ``source_format = 'log4j'``)."""
    return auth_events.where(
        (F.col("side") == "broker") & (F.col("source_format") == ae.SOURCE_FORMAT_LOG4J)
    )


def _by_connection_id(lines: DataFrame, conns: DataFrame) -> DataFrame:
    """``request_log`` links: rows whose connection id (``_connection``: their own, else
    their handshake's TRACE ``Begin re-authentication`` line's) is a connection of the same
    broker and day in the request log.

    Input: broker rows with node_id, event_date, source_path, line_number, _connection
    (string); :func:`transforms.auth_links.connections` rows (``DAY_SCOPE``).
    Output columns: source_path (string), line_number (long), _principal (string: the
    connection's first request's principal), _source ('request_log').
    """
    c = conns.select(*DAY_SCOPE, F.col("connection_id").alias("_connection"), "principal")
    named = lines.select(*DAY_SCOPE, *_KEY, "_connection")
    return named.join(c, [*DAY_SCOPE, "_connection"]).select(
        *_KEY,
        F.col("principal").alias("_principal"),
        F.lit(ae.PRINCIPAL_FROM_REQUEST_LOG).alias("_source"),
    )


def _by_pairing(lines: DataFrame, conns: DataFrame, pairing_window_ms: int) -> DataFrame:
    """``session`` links of ``Successfully authenticated`` lines: the connection each one
    opened (``transforms.auth_links.pair_initial_authentications``: same broker, day and
    address, first request within ``pairing_window_ms`` ms after the line, mutual nearest).

    Input: broker rows (``schemas.auth_events``); connections (``DAY_SCOPE``).
    Output columns: source_path (string), line_number (long), _principal (string), _source
    ('session').
    """
    pairs = pair_initial_authentications(lines, conns, pairing_window_ms, DAY_SCOPE)
    c = conns.select(*DAY_SCOPE, "connection_id", "principal")
    return pairs.join(c, [*DAY_SCOPE, "connection_id"]).select(
        *_KEY,
        F.col("principal").alias("_principal"),
        F.lit(ae.PRINCIPAL_FROM_SESSION).alias("_source"),
    )


def _by_open_connections(lines: DataFrame, conns: DataFrame, idle_ms: int) -> DataFrame:
    """``session`` links of re-authentication outcomes without a connection id: the
    connections of the line's address open at its time
    (``transforms.auth_links.open_connections``, ``idle_ms`` ms), kept when they all have
    the same principal (KIP-368: re-authentication keeps the principal; a host that runs
    clients of several principals gives no link).

    Input: broker rows with _connection (string) null; connections (``DAY_SCOPE``).
    Output columns: source_path (string), line_number (long), _principal (string), _source
    ('session').
    """
    reauths = lines.where(
        F.col("event_type").isin(*_REAUTH_OUTCOMES) & F.col("_connection").isNull()
    ).select(*DAY_SCOPE, *_KEY, "event_ts", "peer_ip")
    candidates = open_connections(reauths, conns, idle_ms, DAY_SCOPE)
    grouped = candidates.groupBy(*_KEY).agg(
        F.count_distinct("_c_principal").alias("_principals"),
        F.max("_c_principal").alias("_principal"),
    )
    return grouped.where(F.col("_principals") == 1).select(
        *_KEY, "_principal", F.lit(ae.PRINCIPAL_FROM_SESSION).alias("_source")
    )


def _links(lines: DataFrame, conns: DataFrame, pairing_window_ms: int, idle_ms: int) -> DataFrame:
    """One link per linked row: the first of ``_LINK_ORDER`` that applies.

    Input: broker rows with _connection (string); connections (``DAY_SCOPE``).
    Output columns: source_path (string), line_number (long), _principal, _source (string).
    """
    found = (
        _by_connection_id(lines.where(F.col("_connection").isNotNull()), conns)
        .unionByName(_by_pairing(lines, conns, pairing_window_ms))
        .unionByName(_by_open_connections(lines, conns, idle_ms))
    )
    order = F.coalesce(
        *[F.when(F.col("_source") == name, F.lit(rank)) for name, rank in _LINK_ORDER.items()]
    )
    best = F.min_by(F.struct("_principal", "_source"), order)
    return found.groupBy(*_KEY).agg(best.alias("_link")).select(*_KEY, "_link.*")


def _filled(column: str, source: str, value: Column, value_source: Column) -> dict[str, Column]:
    """``column`` and ``source`` kept where set, else ``value`` with ``value_source``."""
    keep = F.col(column).isNotNull()
    return {
        column: F.when(keep, F.col(column)).otherwise(value),
        source: F.when(keep, F.col(source)).otherwise(F.when(value.isNotNull(), value_source)),
    }


def with_linked_principals(
    auth_events: DataFrame,
    request_events: DataFrame,
    *,
    handshake_max_gap_ms: int = HANDSHAKE_MAX_GAP_MS,
    pairing_window_ms: int = PAIRING_WINDOW_MS,
    idle_ms: int = IDLE_MS,
    materialise: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> DataFrame:
    """``auth_events`` rows with principal, principal_source, mechanism and mechanism_source
    filled wherever the logs link them (rules: the module docstring).

    Args:
        auth_events: silver rows (``schemas.auth_events.AUTH_EVENTS``), of one or more days.
        request_events: silver rows (``schemas.request_events.REQUEST_EVENTS``) of the same
            days; forwarded requests are not used.
        handshake_max_gap_ms, pairing_window_ms, idle_ms: time limits in ms
            (``transforms.auth_links``; gold's ``[rules.reauth]`` defaults).
        materialise: applied to the connections aggregate of ``request_events``
            (``transforms.auth_links.connections``, ``DAY_SCOPE``), which four joins read.
            Each join needs other columns of it, so Spark plans the aggregate over every
            request once per join; the pipeline passes ``jobs.reuse.reused``, which computes
            it once (at 1M lines: 1.5 s instead of four times that). Then to the auth rows
            keyed by their handshake (one row per auth row), which the three link rules and
            the final join read: each would otherwise carry its own copy of the handshakes'
            windows (on ``samples/``, bronze and silver about 2 s shorter). The rows are the
            same either way.

    Returns:
        The same rows and columns (``AUTH_EVENTS``, in its order): a principal or mechanism
        the row already has is kept with its source; else principal (string,
        KafkaPrincipal.toString) and principal_source ('request_log' | 'session'), mechanism
        (string) and mechanism_source ('handshake') when linked; null otherwise. Client-side
        rows, Confluent audit rows and rows without node_id, event_ts or event_date are never
        linked.
    """
    conns = materialise(connections(request_events, DAY_SCOPE))
    shakes = handshakes(auth_events, handshake_max_gap_ms, DAY_SCOPE).select(
        *_KEY,
        F.col("connection_id").alias("_shake_connection"),
        F.col("handshake_mechanism").alias("_shake_mechanism"),
    )
    keyed = materialise(
        auth_events.join(shakes, list(_KEY), "left").withColumn(
            "_connection", F.coalesce(F.col("connection_id"), F.col("_shake_connection"))
        )
    )
    links = _links(_broker_lines(keyed), conns, pairing_window_ms, idle_ms)
    linked = keyed.join(links, list(_KEY), "left")
    handshake = F.lit(ae.MECHANISM_FROM_HANDSHAKE)
    return linked.withColumns(
        {
            **_filled("principal", "principal_source", F.col("_principal"), F.col("_source")),
            **_filled("mechanism", "mechanism_source", F.col("_shake_mechanism"), handshake),
        }
    ).select(*auth_events.columns)
