"""transforms.gold.kip368_reauth.config: which ``connections.max.reauth.ms`` applies to a session, in
Kafka's precedence (``ChannelBuilders.channelBuilderConfigs`` strips the listener prefix, then
``SaslChannelBuilder.createConnectionsMaxReauthMsMap`` prefers the mechanism-prefixed key), and
which client software can re-authenticate (the capability table)."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.node_properties import NODE_PROPERTIES
from transforms.gold.kip368_reauth.config import (
    DEFAULT_CAPABILITIES,
    capabilities_frame,
    max_reauth_config,
    with_configured_max_reauth,
    with_software_capability,
)

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


def test_librdkafka_bindings_are_judged_by_their_librdkafka_version(spark: SparkSession) -> None:
    # Version strings as the bindings send them (KIP-511 clientInformation): the binding's own
    # version, then the librdkafka it is built on.
    sessions = spark.createDataFrame(
        [
            (1, "confluent-kafka-python", "1.9.2-rdkafka-1.9.2"),
            (2, "confluent-kafka-python", "2.3.0-rdkafka-2.3.0"),
            (3, "confluent-kafka-go", "2.1.1-rdkafka-2.2.0"),
            (4, "confluent-kafka-dotnet", "2.3.0-librdkafka-2.3.0"),
            (5, "librdkafka", "1.9.2"),
            (6, "librdkafka", "2.2.0"),
            (7, "apache-kafka-java", "2.1.0"),
            (8, "apache-kafka-java", "3.7.0"),
            (9, "my-own-client", "1.0.0"),
            (10, None, None),
            (11, "pinned-binding", "9.9.9-rdkafka-1.0.0"),
        ],
        "id int, client_software_name string, client_software_version string",
    )
    table = capabilities_frame(spark, [*DEFAULT_CAPABILITIES, "pinned-binding=never"])
    got = with_software_capability(sessions, table).select("id", "capability_by_software")
    assert sorted(tuple(r) for r in got.collect()) == [
        (1, False), (2, True), (3, True), (4, True), (5, False), (6, True), (7, False),
        (8, True), (9, None), (10, None), (11, False),
    ]  # fmt: skip
