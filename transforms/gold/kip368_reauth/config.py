"""KIP-368 inputs that come from configuration: ``connections.max.reauth.ms`` per broker,
listener and SASL mechanism, the listener behind a local port, and which client software can
re-authenticate.

Rules (kafka-log-formats.md sections 4.3 and 4.4):
* ``connections.max.reauth.ms`` (``BrokerSecurityConfigs.CONNECTIONS_MAX_REAUTH_MS``) defaults
  to 0 = no session expiry. It may be prefixed with the listener and the mechanism, both lower
  case: ``listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms``; the prefixed value
  wins for that listener and mechanism (``ChannelBuilders`` reads the listener's
  ``ListenerName.saslMechanismConfigPrefix`` configs first).
* ``listeners`` (``SASL_SSL://:9093,INTERNAL://host:9094``) names the listener behind each port.
* A client can re-authenticate when it sends SaslAuthenticate v1+ (KIP-368); the version is
  not logged, so the capability comes from evidence (an observed re-authentication) or from the
  client software the request log names (``clientInformation``, sent since 2.4 via
  ApiVersions), looked up in :data:`DEFAULT_CAPABILITIES` (overridable).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from transforms.frames import local_frame

#: Kafka's default: 0 = sessions never expire.
DEFAULT_MAX_REAUTH_MS = 0

#: client software name -> first version that re-authenticates ('never' = no version does).
#: Sources: Apache Kafka Java client 2.2.0 (KIP-368 release); librdkafka v2.2.0 CHANGELOG
#: ("KIP-368: Allow SASL Connections to Periodically Re-Authenticate (#4301)"); Sarama 1.33.0
#: release notes; aiokafka: not implemented (its KIP-368 pull request was still open 2026-08).
DEFAULT_CAPABILITIES: tuple[str, ...] = (
    "apache-kafka-java>=2.2.0",
    "librdkafka>=2.2.0",
    "sarama>=1.33.0",
    "aiokafka=never",
)

CAPABILITY_SCHEMA = StructType(
    [
        StructField("client_software_name", StringType(), False),
        # Dotted numeric version, or null = no version can.
        StructField("min_version", StringType(), True),
    ]
)


def parse_capabilities(entries: Iterable[str]) -> list[tuple[str, str | None]]:
    """``name>=version`` / ``name=never`` entries as (name, min version or None).

    Raises:
        ValueError: an entry of another form.
    """
    parsed: list[tuple[str, str | None]] = []
    for entry in entries:
        if ">=" in entry:
            name, version = (part.strip() for part in entry.split(">=", 1))
            if name and version and version.replace(".", "").isdigit():
                parsed.append((name, version))
                continue
        elif entry.replace(" ", "").endswith("=never"):
            parsed.append((entry.split("=", 1)[0].strip(), None))
            continue
        raise ValueError(f"capability {entry!r}: expected 'name>=1.2.3' or 'name=never'")
    return parsed


def capabilities_frame(spark: SparkSession, entries: Iterable[str]) -> DataFrame:
    """The capability table as a DataFrame of :data:`CAPABILITY_SCHEMA`."""
    return local_frame(spark, parse_capabilities(entries), CAPABILITY_SCHEMA)


def version_key(version: Column) -> Column:
    """A string that sorts like the version's first three numeric parts ('2.10.1' >
    '2.9.0'); null when the version does not start with a number. Suffixes ('-SNAPSHOT',
    '-ccs') are ignored."""
    parts = [F.regexp_extract(version, r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?", i) for i in (1, 2, 3)]
    padded = [F.lpad(F.coalesce(F.nullif(p, F.lit("")), F.lit("0")), 6, "0") for p in parts]
    return F.when(version.rlike(r"^\d"), F.concat(*padded))


#: The librdkafka version a language binding reports inside its own version string (KIP-511
#: ``client.software.version``): confluent-kafka-python ``1.9.2-rdkafka-1.9.2``, and the Go,
#: .NET and JavaScript bindings in the same ``<own>-rdkafka-<librdkafka>`` /
#: ``-librdkafka-`` form. KIP-368 support is librdkafka's, whatever the binding's own version.
LIBRDKAFKA_IN_VERSION = r"(?:^|[-_])(?:lib)?rdkafka-v?(\d+(?:\.\d+)*)"
LIBRDKAFKA = "librdkafka"


def with_software_capability(sessions: DataFrame, capabilities: DataFrame) -> DataFrame:
    """Add ``capability_by_software`` (boolean): whether the client software and version can
    re-authenticate per the capability table; null when the software is unknown or not in it.

    A client whose version string carries a librdkafka version (``LIBRDKAFKA_IN_VERSION``) is
    judged by that version against the ``librdkafka`` entry, unless the table names its own
    software (``confluent-kafka-python>=...``), which then wins.

    Input columns: client_software_name, client_software_version (string).
    Output columns: the input's + capability_by_software (boolean).
    """
    table = capabilities.select(
        F.col("client_software_name").alias("_cap_name"), F.col("min_version").alias("_cap_min")
    )
    version = F.col("client_software_version")
    embedded = F.nullif(F.regexp_extract(version, LIBRDKAFKA_IN_VERSION, 1), F.lit(""))
    own = sessions.join(
        F.broadcast(table), sessions["client_software_name"] == F.col("_cap_name"), "left"
    )
    by_library = F.broadcast(
        table.where(F.col("_cap_name") == LIBRDKAFKA).select(
            F.col("_cap_min").alias("_lib_min"), F.lit(True).alias("_lib_listed")
        )
    )
    joined = own.withColumn("_embedded", embedded).join(
        by_library, F.col("_cap_name").isNull() & F.col("_embedded").isNotNull(), "left"
    )
    can_own = F.col("_cap_min").isNotNull() & (
        version_key(version) >= version_key(F.col("_cap_min"))
    )
    can_lib = F.col("_lib_min").isNotNull() & (
        version_key(F.col("_embedded")) >= version_key(F.col("_lib_min"))
    )
    can = (
        F.when(F.col("_cap_name").isNotNull(), can_own)
        .when(F.col("_lib_listed").isNotNull(), can_lib)
        .otherwise(F.lit(None).cast("boolean"))
    )
    return joined.withColumn("capability_by_software", can).drop(
        "_cap_name", "_cap_min", "_embedded", "_lib_min", "_lib_listed"
    )


def max_reauth_config(node_properties: DataFrame) -> DataFrame:
    """``connections.max.reauth.ms`` settings of each node's config.

    Input: ``schemas.node_properties.NODE_PROPERTIES`` rows.
    Output columns: node_id (string), listener (string, upper case as Kafka logs it; null =
    every listener), mechanism (string, upper case; null = every mechanism), max_reauth_ms
    (long). Values that are not numbers are left out. Three forms count: unprefixed,
    ``listener.name.<l>.connections.max.reauth.ms`` (``ChannelBuilders.channelBuilderConfigs``
    strips the listener prefix) and ``listener.name.<l>.<mechanism>.connections.max.reauth.ms``
    (``SaslChannelBuilder.createConnectionsMaxReauthMsMap``).
    """
    prefixed = r"^listener\.name\.([^.]+)\.(?:([^.]+)\.)?connections\.max\.reauth\.ms$"
    prop = F.col("property")
    rows = node_properties.where(
        (prop == "connections.max.reauth.ms") | prop.rlike(prefixed)
    ).select(
        "node_id",
        F.upper(F.nullif(F.regexp_extract(prop, prefixed, 1), F.lit(""))).alias("listener"),
        F.upper(F.nullif(F.regexp_extract(prop, prefixed, 2), F.lit(""))).alias("mechanism"),
        F.col("value").try_cast("long").alias("max_reauth_ms"),
    )
    return rows.where(F.col("max_reauth_ms").isNotNull())


def listener_ports(node_properties: DataFrame) -> DataFrame:
    """The listener behind each port of each node (``listeners`` property).

    Output columns: node_id (string), listener (string, upper case), port (int).
    """
    entries = node_properties.where(F.col("property") == "listeners").select(
        "node_id", F.explode(F.split(F.col("value"), r"\s*,\s*")).alias("entry")
    )
    return entries.select(
        "node_id",
        F.upper(F.regexp_extract("entry", r"^([A-Za-z0-9_]+)://", 1)).alias("listener"),
        F.regexp_extract("entry", r":(\d+)$", 1).try_cast("int").alias("port"),
    ).where((F.col("listener") != "") & F.col("port").isNotNull())


def with_configured_max_reauth(sessions: DataFrame, config: DataFrame) -> DataFrame:
    """Add ``configured_max_reauth_ms`` (long) and ``configured_source`` (string): the value of
    ``connections.max.reauth.ms`` that applies to each row's node, listener and mechanism.

    Input columns: node_id, listener, mechanism (string). Precedence, as Kafka resolves it
    (``SaslChannelBuilder.createConnectionsMaxReauthMsMap`` over the listener's configs): the
    node's listener-and-mechanism prefixed value (source 'config_listener_mechanism'); its
    listener-prefixed value ('config_listener'); its unprefixed value ('config'); Kafka's
    default 0 ('default'). When the row's mechanism is unknown and the node sets a
    mechanism-prefixed value for the listener, the value is unknown (null, source
    'unknown_mechanism').
    """
    c = config.alias("cfg")
    listener_only = _listener_values(c)
    prefixed = _listener_mechanism_values(c)
    plain = _node_values(c)
    listener_has_override = _listeners_with_mechanism_values(prefixed)
    joined = (
        sessions.join(
            prefixed,
            (F.col("node_id") == F.col("_p_node"))
            & (F.upper(F.col("listener")) == F.col("_p_listener"))
            & (F.upper(F.col("mechanism")) == F.col("_p_mechanism")),
            "left",
        )
        .join(
            listener_only,
            (F.col("node_id") == F.col("_o_node"))
            & (F.upper(F.col("listener")) == F.col("_o_listener")),
            "left",
        )
        .join(plain, F.col("node_id") == F.col("_g_node"), "left")
        .join(
            listener_has_override,
            (F.col("node_id") == F.col("_l_node"))
            & (F.upper(F.col("listener")) == F.col("_l_listener")),
            "left",
        )
    )
    return _with_precedence(joined)


def _listener_values(config: DataFrame) -> DataFrame:
    """Listener-prefixed ``listener.name.<l>.connections.max.reauth.ms`` values
    (``ChannelBuilders.channelBuilderConfigs`` strips the listener prefix).

    Input: :func:`max_reauth_config` rows.
    Output columns: _o_node (string: node_id), _o_listener (string, upper case), _o_value
    (long, ms: the largest value of the node and listener).
    """
    return (
        config.where(F.col("listener").isNotNull() & F.col("mechanism").isNull())
        .groupBy(F.col("node_id").alias("_o_node"), F.col("listener").alias("_o_listener"))
        .agg(F.max("max_reauth_ms").alias("_o_value"))
    )


def _listener_mechanism_values(config: DataFrame) -> DataFrame:
    """Listener-and-mechanism prefixed
    ``listener.name.<l>.<mechanism>.connections.max.reauth.ms`` values
    (``SaslChannelBuilder.createConnectionsMaxReauthMsMap``).

    Input: :func:`max_reauth_config` rows.
    Output columns: _p_node (string: node_id), _p_listener, _p_mechanism (string, upper
    case), _p_value (long, ms).
    """
    return config.where(F.col("listener").isNotNull() & F.col("mechanism").isNotNull()).select(
        F.col("node_id").alias("_p_node"),
        F.col("listener").alias("_p_listener"),
        F.col("mechanism").alias("_p_mechanism"),
        F.col("max_reauth_ms").alias("_p_value"),
    )


def _node_values(config: DataFrame) -> DataFrame:
    """Unprefixed ``connections.max.reauth.ms`` values
    (``BrokerSecurityConfigs.CONNECTIONS_MAX_REAUTH_MS``).

    Input: :func:`max_reauth_config` rows.
    Output columns: _g_node (string: node_id), _g_value (long, ms: the node's largest value).
    """
    return (
        config.where(F.col("listener").isNull())
        .groupBy(F.col("node_id").alias("_g_node"))
        .agg(F.max("max_reauth_ms").alias("_g_value"))
    )


def _listeners_with_mechanism_values(prefixed: DataFrame) -> DataFrame:
    """The listeners of each node with a mechanism-prefixed value: for them a row whose
    mechanism is unknown has no known value (``SaslChannelBuilder`` keys the value by
    mechanism).

    Input: :func:`_listener_mechanism_values` rows.
    Output columns: _l_node (string: node_id), _l_listener (string, upper case),
    _l_override (boolean, true).
    """
    return (
        prefixed.groupBy("_p_node", "_p_listener")
        .agg(F.lit(True).alias("_l_override"))
        .withColumnsRenamed({"_p_node": "_l_node", "_p_listener": "_l_listener"})
    )


def _with_precedence(joined: DataFrame) -> DataFrame:
    """Add configured_max_reauth_ms (long, ms) and configured_source (string) by Kafka's
    precedence (:func:`with_configured_max_reauth`; ``SaslChannelBuilder``,
    ``BrokerSecurityConfigs`` default 0) and drop the joined levels' helper columns.

    Input columns: mechanism (string), _p_value, _o_value, _g_value (long, ms), _l_override
    (boolean), the other helper columns of :func:`_listener_mechanism_values`,
    :func:`_listener_values`, :func:`_node_values` and
    :func:`_listeners_with_mechanism_values`.
    """
    unknown = F.col("mechanism").isNull() & F.col("_l_override").isNotNull()
    value = (
        F.when(F.col("_p_value").isNotNull(), F.col("_p_value"))
        .when(unknown, F.lit(None).cast("long"))
        .otherwise(
            F.coalesce(
                F.col("_o_value"), F.col("_g_value"), F.lit(DEFAULT_MAX_REAUTH_MS).cast("long")
            )
        )
    )
    source = (
        F.when(F.col("_p_value").isNotNull(), F.lit("config_listener_mechanism"))
        .when(unknown, F.lit("unknown_mechanism"))
        .when(F.col("_o_value").isNotNull(), F.lit("config_listener"))
        .when(F.col("_g_value").isNotNull(), F.lit("config"))
        .otherwise(F.lit("default"))
    )
    helper = ["_p_node", "_p_listener", "_p_mechanism", "_p_value", "_o_node", "_o_listener",
              "_o_value", "_g_node", "_g_value", "_l_node", "_l_listener",
              "_l_override"]  # fmt: skip
    return joined.withColumns(
        {"configured_max_reauth_ms": value, "configured_source": source}
    ).drop(*helper)
