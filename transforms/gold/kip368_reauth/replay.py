"""KIP-368 replay: authentication handshakes, connections and kills from silver events.

What the logs say, and how it is tied together (kafka-log-formats.md sections 4 and 5;
``org.apache.kafka.common.network.Selector.pollSelectionKeys``,
``SaslServerAuthenticator.ReauthInfo``, ``kafka.network.Processor``):

* Handshakes (an outcome line with its DEBUG lines) and the request log's connections, and how
  a success line is paired with the connection it opened: ``transforms.auth_links`` (shared
  with silver, which names the principal of each authentication outcome by the same rules).
  The replay uses them per broker over the whole lake (``NODE_SCOPE``).
* Sessions: the first authentication of a connection starts session 1; each successful
  re-authentication starts the next one (the principal cannot change, KIP-368).
  ``Disconnecting expired channel: ... id=c`` (Processor DEBUG) is a kill: the session had
  expired and a request other than re-authentication arrived. A failed re-authentication
  closes the connection. An idle connection is never killed; the broker closes connections
  idle for ``connections.max.idle.ms`` (default 10 min).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import auth_events as ae
from transforms.auth_links import (
    OUTCOMES,
    attach_to_connections,
    connections,
    handshakes,
    millis_between,
    pair_initial_authentications,
)

__all__ = [
    "NOT_SASL",
    "OUTCOMES",
    "attach_to_connections",
    "connections",
    "handshakes",
    "kills",
    "millis_between",
    "pair_initial_authentications",
    "plus_millis",
]

NOT_SASL = ("PLAINTEXT", "SSL")


def plus_millis(ts: Column, ms: Column) -> Column:
    """``ts + ms`` as a timestamp; null if either is null."""
    return F.timestamp_millis(F.unix_millis(ts) + ms)


def kills(auth_events: DataFrame, conns: DataFrame, ports: DataFrame) -> DataFrame:
    """``Disconnecting expired channel`` lines (``kafka.network.Processor``, KIP-368), each one
    ``expired-connections-killed-count``, with the connection's listener.

    Input: silver ``auth_events``; ``transforms.gold.kip368_reauth.replay.connections``;
    ``listener_ports``.
    Output columns: node_id, connection_id, peer_ip (string), event_ts (timestamp), listener
    (string: the connection's request-log listener, else the one ``listeners`` puts on the
    connection id's local port), client_id, api_key_name (string: the refused request),
    source_path (string), line_number (long).
    """
    lines = auth_events.where(F.col("event_type") == ae.EVENT_EXPIRED_CHANNEL_DISCONNECTED).select(
        "node_id",
        "connection_id",
        F.coalesce("remote_ip", F.regexp_extract("connection_id", r"-([^-]+):\d+-\d+", 1)).alias(
            "peer_ip"
        ),
        F.regexp_extract("connection_id", r"^[^-]*:(\d+)-", 1).try_cast("int").alias("_port"),
        "event_ts",
        "client_id",
        "api_key_name",
        "source_path",
        "line_number",
    )
    by_conn = conns.select(
        F.col("node_id").alias("_c_node"),
        F.col("connection_id").alias("_c_id"),
        F.col("listener").alias("_c_listener"),
    )
    by_port = ports.select(
        F.col("node_id").alias("_p_node"),
        F.col("port").alias("_p_port"),
        F.col("listener").alias("_p_listener"),
    )
    joined = lines.join(
        by_conn,
        (F.col("node_id") == F.col("_c_node")) & (F.col("connection_id") == F.col("_c_id")),
        "left",
    ).join(
        F.broadcast(by_port),
        (F.col("node_id") == F.col("_p_node")) & (F.col("_port") == F.col("_p_port")),
        "left",
    )
    return joined.select(
        "node_id",
        "connection_id",
        "peer_ip",
        "event_ts",
        F.coalesce("_c_listener", "_p_listener").alias("listener"),
        "client_id",
        "api_key_name",
        "source_path",
        "line_number",
    )
