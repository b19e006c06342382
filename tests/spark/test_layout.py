"""Layout recognition: every log4j variant of docs/kafka-log-formats.md section 1, real lines."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType, TimestampType
from pyspark.testing import assertDataFrameEqual

from transforms.bronze.layout import (
    _GROUPS,
    _REPLACEMENT,
    _SEP,
    HEADER_PATTERN,
    header_fields,
    header_fields_by_regex,
    local_log_ts,
    with_header_fields,
)
from transforms.bronze.log4j_pattern import compile_pattern
from transforms.bronze.native import HEADER_FIELDS_FUNCTION
from transforms.silver.families import family_of
from transforms.silver.registry import in_known_layout

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


def test_header_fields_equal_the_two_pass_form(spark: SparkSession) -> None:
    """``header_fields`` runs its regex once per line; it gives what the form that tests the
    split's size, then takes it (two regex runs), gives on every line: real ones, a line
    with a final line terminator, and lines holding the separator, matched (null: more than
    8 parts) or not (with exactly 7 separators: the 8 parts, as the two-pass form has it)."""
    lines = [STRIMZI_LINE, LOG4J_LINE, LINE_LAYOUT, DOCKER_COMPOSE, DOCKER_DESKTOP, BARE, TRACE,
             CLOUD_EVENT, LOG4J_LINE + "\n", LOG4J_LINE.replace("Failed", "Fa\u0001iled"),
             "no header" + "\u0001" * 7, "\u0001", "", None]  # fmt: skip
    df = spark.createDataFrame(list(enumerate(lines)), "id int, value string")
    parts = F.split(F.regexp_replace("value", HEADER_PATTERN, _REPLACEMENT), _SEP)
    two_pass = df.select("id", F.when(F.size(parts) == _GROUPS, parts).alias("fields"))
    actual = df.select("id", header_fields(F.col("value")).alias("fields"))
    assertDataFrameEqual(actual, two_pass)
    matched = {row["id"] for row in actual.where(F.col("fields").isNotNull()).collect()}
    assert matched == {0, 1, 2, 3, 4, 5, 8, 10}


#: What the damage in ``test_the_jvm_header_fields_are_the_regexs`` inserts: what the header's
#: reading turns on (spaces, brackets, the logger's and the thread's delimiters, level letters,
#: every line terminator, the separator, non-ASCII).
_DAMAGE = [" ", "(", ")", " (", ") [", "[", "]", ":", ":7", "7", "a", "$", ".", "-", "\t", "\u000b",
           "\f", "\n", "\r", "\u0085", "\u2028", "\u2029", "\u0001", "I", "WARN", "ING ", "é",
           "\U0001f600", "T", ","]  # fmt: skip


def test_the_jvm_header_fields_are_the_regexs(spark: SparkSession, samples_dir: Path) -> None:
    """``HeaderFields.java`` against ``HEADER_PATTERN``: the real samples' lines, the layouts
    above, lines rendered in each of Kafka's and Strimzi's layouts with every level, messages
    holding tails of their own, and each of those damaged at seeded places (inserted, deleted
    or replaced characters, cut short). Where it answers, the regex's groups; it answers for
    every undamaged line in those layouts, and ``header_fields`` equals the regex on every
    line."""
    if not spark.catalog.functionExists(HEADER_FIELDS_FUNCTION):
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    ts = "2026-11-20 13:00:00,123"
    rendered = [
        line
        for level in ("TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL")
        for message in ("m", "", "a (b.C) [t] x", "x (kafka.Fake:12) (y", "end (k.L) [t]  ")
        for line in (f"[{ts}] {level} {message} (kafka.server.X)",
                     f"[{ts.replace(' ', 'T')}] {level} {message} (X$1-y:42) ",
                     f"{ts.replace(',', '.')} {level} {message} (k.L) [thread (x) ] ]\t",
                     f"{ts} {level} {message} (k.L) []")
    ]  # fmt: skip
    real = [
        line
        for path in sorted(samples_dir.glob("*.log"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    base = [*rendered, *real, STRIMZI_LINE, LOG4J_LINE, LINE_LAYOUT, DOCKER_COMPOSE,
            DOCKER_DESKTOP, BARE, TRACE, CLOUD_EVENT]  # fmt: skip
    rng = random.Random(47)
    damaged = []
    for line in base:
        for _ in range(6):
            at = rng.randrange(len(line) + 1)
            cut = rng.randrange(at, len(line) + 1)
            damaged.append(line[:at] + rng.choice(_DAMAGE) + line[cut:])
        damaged.append(line[: rng.randrange(len(line) + 1)])
    lines = [*base, *damaged, "", None]
    df = spark.createDataFrame(list(enumerate(lines)), "id int, value string")
    fast = F.call_function(HEADER_FIELDS_FUNCTION, F.col("value"))
    regex = header_fields_by_regex(F.col("value"))
    got = df.select("id", fast.alias("fast"), regex.alias("regex"))
    assert got.where("fast is not null and not (fast <=> regex)").count() == 0
    # It answers wherever the regex's first attempt matches (no prefix, a timestamp) on a line
    # without a line terminator or the separator, damaged lines included.
    first_attempt = (
        F.col("regex").isNotNull()
        & (F.get("regex", 0) == "")
        & (F.get("regex", 2) != "")
        & ~F.col("value").rlike("[\\n\\r\\u0085\\u2028\\u2029\\u0001]")
    )
    assert got.where(first_attempt & F.col("fast").isNull()).count() == 0
    answered = {row["id"] for row in got.where("fast is not null").collect()}
    assert set(range(len(rendered))) <= answered
    assert len(answered - set(range(len(base)))) > 150  # damaged lines it still reads
    assertDataFrameEqual(
        df.select("id", header_fields(F.col("value")).alias("fields")),
        df.select("id", regex.alias("fields")),
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
# A message that carries a logger-and-thread tail of its own (a client id can hold any text):
# the line's logger is still the last one.
@example(rows=[("strimzi", "INFO", "x (kafka.authorizer.logger) [t", "kafka.server", 1)])
@example(rows=[("strimzi", "WARN", "a (b) [c] (d) [e", "kafka.x", 2)])
@example(rows=[("log4j_line", "INFO", "a (kafka.Fake:12) (b)", "kafka.y", 3)])
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


def test_signatures_claim_records_of_an_unknown_layout(spark: SparkSession) -> None:
    rows = [
        ("| INFO | Principal = User:c3 is Denied Operation = Describe from host = 1.2.3.4 on "
         "resource = Topic:LITERAL:t", "authz"),
        ("[ts][INFO][category=x.Selector] [SocketServer listenerType=ZK_BROKER, nodeId=0] Failed "
         "authentication with /10.1.2.3 (Authentication failed during authentication due to "
         "invalid credentials with SASL mechanism SCRAM-SHA-512)", "auth"),
        ("~ DEBUG Completed request:{\"isForwarded\":false}", "request"),
        ("~ INFO [Token Manager on Node 1]: Created a delegation token: t1 for owner: User:a",
         "token"),
        ('~ INFO 172.18.0.1 - - [20/Feb/2023:10:15:02 +0000] "GET /connectors HTTP/1.1" 200 2 '
         '"-" "curl/7.61.1" 43', "connect_rest"),
        ("~ WARN Internal request contained invalid signature", "connect_worker"),
        ("~ INFO Kafka version: 3.7.0", None),
        (None, None),
    ]  # fmt: skip
    df = spark.createDataFrame([(m, f) for m, f in rows], "message string, expected string")
    unknown = family_of(F.lit(None).cast("string"), F.col("message"), F.lit("unrecognized"))
    # In a known layout the logger claims, not the signature: no logger, no family.
    known = family_of(F.lit(None).cast("string"), F.col("message"), F.lit("log4j"))
    got = df.select("expected", unknown.alias("unknown"), known.alias("known")).collect()
    assert [(r["unknown"], r["known"]) for r in got] == [(f, None) for _, f in rows]


def test_records_of_an_unknown_layout_are_quarantined_whatever_the_parser_made(
    spark: SparkSession,
) -> None:
    output = spark.createDataFrame(
        [
            (1, "unrecognized", "authz", None, None),
            (2, "unrecognized", "auth", "auth_malformed", "cut"),
            (3, "log4j", "authz", None, None),
            (4, "log4j", "auth", "auth_malformed", "cut"),
        ],
        "line_number long, layout string, family string, reason_code string, reason_detail string",
    )
    got = in_known_layout(output).select("line_number", "reason_code", "reason_detail")
    detail = (
        " in a log layout no parser knows; declare the file's log4j ConversionPattern "
        "(layout_pattern in [[sources]], or the node's log4j config beside its logs)"
    )
    assert sorted(tuple(r) for r in got.collect()) == [
        (1, "unrecognized_layout", "a record of family authz" + detail),
        (2, "unrecognized_layout", "a record of family auth" + detail),
        (3, None, None),
        (4, "auth_malformed", "cut"),
    ]


CFK = (
    "[INFO] 2023-06-14 09:12:01,334 [data-plane-kafka-request-handler-3] kafka.authorizer.logger "
    "logAuditMessage - Principal = User:c3 is Denied Operation = Describe from host = "
    "172.17.0.12 on resource = Topic:LITERAL:_confluent-license for request = Metadata with "
    "resourceRefCount = 1"
)
DEBEZIUM = (
    '2023-02-20 10:15:02,123 INFO   ||  172.18.0.1 - - [20/Feb/2023:10:15:02 +0000] "GET '
    '/connectors HTTP/1.1" 200 2 "-" "curl/7.61.1" 43   '
    "[org.apache.kafka.connect.runtime.rest.RestServer]"
)
FAILURE = (
    "[SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with /10.1.2.3 "
    "(Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism SCRAM-SHA-512)"
)
BRACKETED = (
    "[2024-03-01 08:00:00,001] [INFO] [data-plane-kafka-network-thread-1-ListenerName"
    f"(SASL_PLAINTEXT)-SASL_PLAINTEXT-2] [{SELECTOR}] - {FAILURE}"
)
LOGGER_DASH = f"[2024-03-01 08:00:00,001] WARN {SELECTOR} - {FAILURE}"
CATEGORY = f"[2022-11-03 14:22:10,512][INFO][category={SELECTOR}] {FAILURE}"
DECLARED = f"2024-03-01 08:00:00 <WARN> {SELECTOR}: {FAILURE}"


def test_layouts_other_distributions_ship_and_a_declared_one(spark: SparkSession) -> None:
    declared = compile_pattern("%d{yyyy-MM-dd HH:mm:ss} <%p> %c: %m%n", "declared")
    rows = [("/n/x.log", v) for v in (CFK, DEBEZIUM, BRACKETED, LOGGER_DASH, CATEGORY)]
    # The declared layout applies to its own file only: elsewhere the line is no header.
    rows += [("/n/declared.log", DECLARED), ("/n/x.log", DECLARED)]
    df = spark.createDataFrame(rows, "source_path string, value string")
    got = with_header_fields(df, [(declared, ["/n/declared.log"])]).drop("source_path")
    expected = spark.createDataFrame(
        [
            (CFK, "confluent_operator", None, "2023-06-14 09:12:01,334", "INFO",
             "kafka.authorizer.logger", None, "data-plane-kafka-request-handler-3",
             CFK.split(" - ", 1)[1]),
            (DEBEZIUM, "debezium", None, "2023-02-20 10:15:02,123", "INFO", REST, None, None,
             '172.18.0.1 - - [20/Feb/2023:10:15:02 +0000] "GET /connectors HTTP/1.1" 200 2 "-" '
             '"curl/7.61.1" 43'),
            (BRACKETED, "bracketed_fields", None, "2024-03-01 08:00:00,001", "INFO", SELECTOR,
             None, "data-plane-kafka-network-thread-1-ListenerName(SASL_PLAINTEXT)-SASL_PLAINTEXT-2",
             FAILURE),
            (LOGGER_DASH, "logger_dash", None, "2024-03-01 08:00:00,001", "WARN", SELECTOR, None,
             None, FAILURE),
            (CATEGORY, "category", None, "2022-11-03 14:22:10,512", "INFO", SELECTOR, None, None,
             FAILURE),
            (DECLARED, "declared", None, "2024-03-01 08:00:00", "WARN", SELECTOR, None, None,
             FAILURE),
            (DECLARED, None, None, None, None, None, None, None, None),
        ],
        FIELDS,
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    # A time without milliseconds (a declared %d{yyyy-MM-dd HH:mm:ss}) is still a time.
    ts = df.select(local_log_ts(F.lit("2024-03-01 08:00:00"), F.lit("UTC")).alias("t")).first()
    assert ts is not None and ts["t"] == datetime(2024, 3, 1, 8, 0)
