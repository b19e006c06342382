"""Layout recognition: every log4j variant of docs/kafka-log-formats.md section 1, real lines."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType, TimestampType
from pyspark.testing import assertDataFrameEqual

from transforms.bronze.layout import local_log_ts, with_header_fields

FIELDS = StructType(
    [
        StructField("value", StringType(), True),
        StructField("layout", StringType(), True),
        StructField("line_prefix", StringType(), True),
        StructField("ts_text", StringType(), True),
        StructField("level", StringType(), True),
        StructField("logger", StringType(), True),
        StructField("logger_line", IntegerType(), True),
        StructField("thread", StringType(), True),
        StructField("message", StringType(), True),
    ]
)

SELECTOR = "org.apache.kafka.common.network.Selector"
REST = "org.apache.kafka.connect.runtime.rest.RestServer"
STRIMZI_LINE = (
    "2022-11-23 20:29:45,061 INFO [SocketServer listenerType=ZK_BROKER, nodeId=0] Failed "
    "authentication with /10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL "
    "handshake failed) (org.apache.kafka.common.network.Selector) "
    "[data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8]"
)
LOG4J_LINE = (
    "[2023-01-19 19:52:33,832] INFO [SocketServer listenerType=ZK_BROKER, nodeId=1] Failed "
    "authentication with /172.22.0.2 (Unexpected Kafka request of type METADATA during SASL "
    "handshake.) (org.apache.kafka.common.network.Selector)"
)
LINE_LAYOUT = (
    "[2025-10-29 19:19:52,708] INFO [AdminClient clientId=connect-adminclient-producer] Failed "
    "authentication with broker/172.18.0.4 (channelId=-1) "
    '(errorMessage={"status":"invalid_token"}) (org.apache.kafka.common.network.Selector:908)'
)
DOCKER_COMPOSE = (
    "kafkaconnect_1      | [2017-09-21 11:53:11,530] INFO 172.30.0.1 - - "
    '[21/Sep/2017:11:51:41 +0000] "POST /connectors HTTP/1.1" 500 48  90011 '
    "(org.apache.kafka.connect.runtime.rest.RestServer)"
)
DOCKER_DESKTOP = (
    "2025-02-16 11:46:34 [2025-02-16 08:46:34,213] INFO 172.18.0.1 - - "
    '[16/Feb/2025:08:46:34 +0000] "PUT /connectors/pg-connector/config HTTP/1.1" 200 778 "-" '
    '"curl/7.88.1" 21 (org.apache.kafka.connect.runtime.rest.RestServer)'
)
BARE = (
    "INFO Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on "
    "resource = Topic:LITERAL:customerOrders for request = Metadata with resourceRefCount = 1 "
    "(kafka.authorizer.logger)"
)
TRACE = "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: Cannot complete"
CLOUD_EVENT = (
    '{"specversion":"1.0","id":"e1","source":"crn:///kafka=abc","type":'
    '"io.confluent.kafka.server/authorization","time":"2026-11-20T10:00:00.123Z","data":{}}'
)


def test_every_layout_of_the_real_samples(spark: SparkSession) -> None:
    lines = [
        LOG4J_LINE,
        STRIMZI_LINE,
        LINE_LAYOUT,
        DOCKER_COMPOSE,
        DOCKER_DESKTOP,
        BARE,
        TRACE,
        CLOUD_EVENT + "  ",
        None,
    ]
    df = spark.createDataFrame([(v,) for v in lines], "value string")
    expected = spark.createDataFrame(
        [
            (LOG4J_LINE, "log4j", None, "2023-01-19 19:52:33,832", "INFO", SELECTOR, None, None,
             "[SocketServer listenerType=ZK_BROKER, nodeId=1] Failed authentication with "
             "/172.22.0.2 (Unexpected Kafka request of type METADATA during SASL handshake.)"),
            (STRIMZI_LINE, "strimzi", None, "2022-11-23 20:29:45,061", "INFO", SELECTOR, None,
             "data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8",
             "[SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with "
             "/10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL handshake failed)"),
            (LINE_LAYOUT, "log4j_line", None, "2025-10-29 19:19:52,708", "INFO", SELECTOR, 908,
             None, "[AdminClient clientId=connect-adminclient-producer] Failed authentication "
             'with broker/172.18.0.4 (channelId=-1) (errorMessage={"status":"invalid_token"})'),
            (DOCKER_COMPOSE, "log4j", "kafkaconnect_1      | ", "2017-09-21 11:53:11,530",
             "INFO", REST, None, None, '172.30.0.1 - - [21/Sep/2017:11:51:41 +0000] "POST '
             '/connectors HTTP/1.1" 500 48  90011'),
            (DOCKER_DESKTOP, "log4j", "2025-02-16 11:46:34 ", "2025-02-16 08:46:34,213", "INFO",
             REST, None, None, '172.18.0.1 - - [16/Feb/2025:08:46:34 +0000] "PUT '
             '/connectors/pg-connector/config HTTP/1.1" 200 778 "-" "curl/7.88.1" 21'),
            (BARE, "bare", None, None, "INFO", "kafka.authorizer.logger", None, None,
             "Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on "
             "resource = Topic:LITERAL:customerOrders for request = Metadata with "
             "resourceRefCount = 1"),
            (TRACE, None, None, None, None, None, None, None, None),
            (CLOUD_EVENT + "  ", "json", None, "2026-11-20T10:00:00.123Z", None, None, None, None,
             CLOUD_EVENT),
            (None, None, None, None, None, None, None, None, None),
        ],
        FIELDS,
    )  # fmt: skip
    assertDataFrameEqual(with_header_fields(df), expected, checkRowOrder=False)


def test_local_time_zone_is_converted_to_utc(spark: SparkSession) -> None:
    df = spark.createDataFrame(
        [
            ("2024-10-14 06:19:02,289", "Asia/Kolkata"),
            ("2024-03-31 02:30:00,000", "UTC"),
            ("2024-13-01 00:00:00,000", "UTC"),
            (None, "UTC"),
        ],
        "ts_text string, tz string",
    )
    got = df.select(local_log_ts(F.col("ts_text"), F.col("tz")).alias("log_ts"))
    expected = spark.createDataFrame(
        [
            (datetime(2024, 10, 14, 0, 49, 2, 289000),),
            (datetime(2024, 3, 31, 2, 30),),
            (None,),  # month 13: not a date, null rather than a crash
            (None,),
        ],
        StructType([StructField("log_ts", TimestampType(), True)]),
    )
    assertDataFrameEqual(got, expected, checkRowOrder=True)


_logger = st.from_regex(r"[a-z][a-z0-9]{0,8}(\.[A-Za-z][A-Za-z0-9$]{0,8}){0,4}", fullmatch=True)
_message = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u0001"),
    max_size=80,
)


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["log4j", "log4j_line", "strimzi"]),
            st.sampled_from(["TRACE", "DEBUG", "INFO", "WARN", "ERROR"]),
            _message,
            _logger,
            st.integers(min_value=1, max_value=9999),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_render_then_parse_round_trip(
    spark: SparkSession, rows: list[tuple[str, str, str, str, int]]
) -> None:
    """Render (layout, level, message, logger) as log4j would, parse, get them back."""
    ts = "2026-11-20 13:00:00,123"
    rendered = []
    for layout, level, message, logger, line in rows:
        if layout == "log4j":
            text = f"[{ts}] {level} {message} ({logger})"
        elif layout == "log4j_line":
            text = f"[{ts}] {level} {message} ({logger}:{line})"
        else:
            text = f"{ts} {level} {message} ({logger}) [thread-{line}]"
        rendered.append((text,))
    df = spark.createDataFrame(rendered, "value string")
    got = [
        (r["layout"], r["level"], r["message"], r["logger"])
        for r in with_header_fields(df).collect()
    ]
    assert got == [(layout, level, message, logger) for layout, level, message, logger, _ in rows]
