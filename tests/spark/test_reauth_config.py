"""transforms.gold.kip368_reauth.config: which ``connections.max.reauth.ms`` applies to a session, in
Kafka's precedence (``ChannelBuilders.channelBuilderConfigs`` strips the listener prefix, then
``SaslChannelBuilder.createConnectionsMaxReauthMsMap`` prefers the mechanism-prefixed key)."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.node_properties import NODE_PROPERTIES
from transforms.gold.kip368_reauth.config import max_reauth_config, with_configured_max_reauth

PROPS = "/cluster/broker-{}/server.properties"


def test_listener_mechanism_then_listener_then_unprefixed_then_default(
    spark: SparkSession,
) -> None:
    props = [
        # Broker 1: all three forms; broker 2: only a listener-prefixed value; broker 3: none.
        ("1", "broker", PROPS.format(1), "connections.max.reauth.ms", "900000", False),
        ("1", "broker", PROPS.format(1), "listener.name.sasl_ssl.connections.max.reauth.ms",
         "1800000", False),
        ("1", "broker", PROPS.format(1),
         "listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms", "3600000", False),
        ("2", "broker", PROPS.format(2), "listener.name.external.connections.max.reauth.ms",
         "600000", False),
        ("2", "broker", PROPS.format(2), "listener.name.external.connections.max.reauth.ms.x",
         "1", False),
        ("3", "broker", PROPS.format(3), "connections.max.idle.ms", "600000", False),
    ]  # fmt: skip
    config = max_reauth_config(spark.createDataFrame(props, NODE_PROPERTIES))
    sessions = spark.createDataFrame(
        [
            (1, "1", "SASL_SSL", "OAUTHBEARER"),
            (2, "1", "sasl_ssl", "SCRAM-SHA-512"),
            (3, "1", "SASL_SSL", None),  # mechanism unknown, a mechanism override exists
            (4, "1", "INTERNAL", "PLAIN"),
            (5, "2", "EXTERNAL", None),
            (6, "2", "INTERNAL", "PLAIN"),
            (7, "3", "EXTERNAL", "PLAIN"),
        ],
        "id int, node_id string, listener string, mechanism string",
    )
    actual = with_configured_max_reauth(sessions, config).select(
        "id", "configured_max_reauth_ms", "configured_source"
    )
    expected = spark.createDataFrame(
        [
            (1, 3600000, "config_listener_mechanism"),
            (2, 1800000, "config_listener"),
            (3, None, "unknown_mechanism"),
            (4, 900000, "config"),
            (5, 600000, "config_listener"),
            (6, 0, "default"),
            (7, 0, "default"),
        ],
        "id int, configured_max_reauth_ms long, configured_source string",
    )
    assertDataFrameEqual(actual, expected, checkRowOrder=False)
