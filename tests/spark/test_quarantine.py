"""transforms.quarantine: reason codes and the exact split of parser output."""

from __future__ import annotations

import datetime as dt

import pytest
from chispa import assert_df_equality
from pyspark.errors import SparkRuntimeException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

from schemas.auth_events import AUTH_EVENTS
from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.quarantine import QUARANTINE, RAW_MAX_CHARS
from schemas.raw_lines import FAMILY_AUTH, FAMILY_AUTHZ, RAW_LINES
from tests.support.bronze_rows import NODE_ID, RUN_ID, SOURCE_PATH, Record, bronze_df
from transforms.quarantine import (
    Check,
    conformed,
    conformed_rows,
    first_failure,
    parsed_rows,
    quarantine_rows,
    table_and_quarantine_columns,
)
from transforms.silver.auth.parse import parse_auth_events
from transforms.silver.authz import parse_authz_decisions

AUTHZ = "kafka.authorizer.logger"
SELECTOR = "org.apache.kafka.common.network.Selector"
TS = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
LONG_CUT = "No acl found for resource Topic:LITERAL:" + "x" * 9000


def test_authz_rows_split_exactly_into_table_and_quarantine(spark: SparkSession) -> None:
    records = [
        Record("INFO", AUTHZ, "Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on resource = Topic:LITERAL:customerOrders for request = Metadata with resourceRefCount = 1", log_ts=TS),
        Record("INFO", AUTHZ, None, log_ts=TS),
        Record("INFO", AUTHZ, "Principal = User:bob is Denied operation = READ from host = 10.0.0.4 on resource = Topic:LITERAL:alpha for request = Fetch with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=alp, patternType=PREFIXED, principal=User:bob, host=*, operation=READ, permissionType=DENY))"),
        Record("INFO", AUTHZ, "Principal=User:alice is Denied Operation=Write from host=10.0.0.5 on resource=Topic:LITERAL:orders for request=Produce"),
        Record("DEBUG", AUTHZ, LONG_CUT),
        Record("INFO", AUTHZ, "Principal = User:a is Denied operation = READ from host = 1.1.1.1 on resource = Topic:LITERAL:t for request = Fetch with resourceRefCount = 1 based on rule AclFoo"),
    ]  # fmt: skip
    parsed = parse_authz_decisions(bronze_df(spark, records, FAMILY_AUTHZ))
    table, quarantine = parsed_rows(parsed, AUTHZ_DECISIONS), quarantine_rows(parsed)
    # The parser keeps every bronze column, adds the silver ones, then the reason.
    silver = [c for c in AUTHZ_DECISIONS.fieldNames() if c not in RAW_LINES.fieldNames()]
    assert parsed.columns == [*RAW_LINES.fieldNames(), *silver, "reason_code", "reason_detail"]

    lineage = (RUN_ID, SOURCE_PATH)
    table_rows = [
        (*lineage, 1, NODE_ID, "INFO", TS, "decision", "AclAuthorizer", "User:Mallory", "User", "Mallory", "DENIED", "DESCRIBE", "Describe", "10.0.0.13", "TOPIC", "Topic", "LITERAL", "customerOrders", "Metadata", 1, None, None, None, None, None, None, None, None, "log4j", None, None, None, None, None, TS.date()),
        (*lineage, 3, NODE_ID, "INFO", None, "decision", "StandardAuthorizer", "User:bob", "User", "bob", "DENIED", "READ", "READ", "10.0.0.4", "TOPIC", "Topic", "LITERAL", "alpha", "Fetch", 1, "MatchingAcl", "TOPIC", "alp", "PREFIXED", "User:bob", "*", "READ", "DENY", "log4j", None, None, None, None, None, None),
    ]  # fmt: skip
    raw = "INFO {} (kafka.authorizer.logger)"
    quarantine_rows_expected = [
        (*lineage, 2, NODE_ID, TS, FAMILY_AUTHZ, "missing_field_message", "message is null or blank", raw.format(None), False, TS.date()),
        (*lineage, 4, NODE_ID, None, FAMILY_AUTHZ, "authz_not_kafka_format", "'Principal=' or 'key=value' without spaces (formats doc section 9)", raw.format(records[3].message), False, None),
        (*lineage, 5, NODE_ID, None, FAMILY_AUTHZ, "authz_truncated_message", "starts like an authorizer line, then stops matching: cut short", f"DEBUG {LONG_CUT}"[:RAW_MAX_CHARS], True, None),
        (*lineage, 6, NODE_ID, None, FAMILY_AUTHZ, "authz_unrecognized_rule", "AclFoo", raw.format(records[5].message), False, None),
    ]  # fmt: skip
    # The table and quarantine contracts hold exactly, nullability included.
    assert table.schema == AUTHZ_DECISIONS
    assert quarantine.schema == QUARANTINE
    assert_df_equality(
        table.orderBy("line_number"), spark.createDataFrame(table_rows, AUTHZ_DECISIONS)
    )
    expected_quarantine = spark.createDataFrame(quarantine_rows_expected, QUARANTINE)
    assert_df_equality(quarantine.orderBy("line_number"), expected_quarantine)


def test_narrowed_output_gives_the_same_table_and_quarantine(spark: SparkSession) -> None:
    """What the pipeline persists of a parser's output: the table's and the quarantine's columns,
    the full text only on rejected records; both frames built from it are unchanged."""
    records = [
        Record("INFO", AUTHZ, "Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on resource = Topic:LITERAL:customerOrders for request = Metadata with resourceRefCount = 1", log_ts=TS),
        Record("INFO", AUTHZ, None, log_ts=TS),
        Record("DEBUG", AUTHZ, LONG_CUT),
    ]  # fmt: skip
    parsed = parse_authz_decisions(bronze_df(spark, records, FAMILY_AUTHZ))
    narrowed = table_and_quarantine_columns(parsed, AUTHZ_DECISIONS)
    quarantine_inputs = ["family", "log_ts", "log_date", "raw", "reason_code", "reason_detail"]
    assert set(narrowed.columns) == {*AUTHZ_DECISIONS.fieldNames(), *quarantine_inputs}
    assert_df_equality(
        parsed_rows(narrowed, AUTHZ_DECISIONS).orderBy("line_number"),
        parsed_rows(parsed, AUTHZ_DECISIONS).orderBy("line_number"),
    )
    assert_df_equality(
        quarantine_rows(narrowed).orderBy("line_number"),
        quarantine_rows(parsed).orderBy("line_number"),
    )
    kept = narrowed.select("line_number", F.col("raw").isNotNull().alias("has_raw"))
    assert sorted(tuple(r) for r in kept.collect()) == [(1, False), (2, True), (3, True)]


def test_auth_rows_split_exactly_into_table_and_quarantine(spark: SparkSession) -> None:
    thread = "data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8"
    records = [
        Record("INFO", SELECTOR, "[SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with /10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL handshake failed)", thread, log_ts=TS),
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed authentication with /172.20.0.4 (channelId=172.20.0.2:9097-172.20.0.4:33076-4-3) (Authentication failed during authentication due to invalid credentials with SASL ", log_ts=TS),
    ]  # fmt: skip
    parsed = parse_auth_events(bronze_df(spark, records, FAMILY_AUTH))
    table, quarantine = parsed_rows(parsed, AUTH_EVENTS), quarantine_rows(parsed)
    silver = [c for c in AUTH_EVENTS.fieldNames() if c not in RAW_LINES.fieldNames()]
    assert parsed.columns == [*RAW_LINES.fieldNames(), *silver, "reason_code", "reason_detail"]
    table_rows = [
        (RUN_ID, SOURCE_PATH, 1, NODE_ID, "INFO", TS, "authentication_failed", "broker", "ZK_BROKER", 0, None, None, None, None, "10.42.1.38", 43546, False, "10.42.1.34:9093-10.42.1.38:43546-4", "10.42.1.34", 9093, "10.42.1.38", 43546, 8, "TLS-9093", "SASL_SSL", "SSL handshake failed", "SSL_HANDSHAKE_FAILED", None, None, None, None, "log4j", None, None, None, False, *[None] * 17, TS.date()),
    ]  # fmt: skip
    quarantined = [
        (RUN_ID, SOURCE_PATH, 2, NODE_ID, TS, FAMILY_AUTH, "auth_truncated_message", "starts like an authentication outcome line, then stops matching: cut short", f"INFO {records[1].message} ({SELECTOR})", False, TS.date()),
    ]  # fmt: skip
    assert table.schema == AUTH_EVENTS
    assert quarantine.schema == QUARANTINE
    assert_df_equality(table, spark.createDataFrame(table_rows, AUTH_EVENTS))
    assert_df_equality(quarantine, spark.createDataFrame(quarantined, QUARANTINE))


def test_parsed_rows_fails_loudly_on_a_null_required_column(spark: SparkSession) -> None:
    # A parser that lets a null reach a required column is buggy: the query fails, no row is lost.
    schema = StructType([StructField("record_type", StringType(), False)])
    df = spark.createDataFrame(
        [("decision", None), (None, None)], "record_type string, reason_code string"
    )
    with pytest.raises(SparkRuntimeException, match="required column record_type is null"):
        parsed_rows(df, schema).collect()


def test_conformed_rows_take_conforming_columns_as_they_are(spark: SparkSession) -> None:
    # Optional columns of the field's type pass as they are; the others are conformed: cast,
    # marked nullable, a required one checked. The rows and the schema are conformed's.
    schema = StructType(
        [
            StructField("kept", StringType(), True),
            StructField("cast", LongType(), True),
            StructField("marked", StringType(), True),
            StructField("required", StringType(), False),
        ]
    )
    df = spark.createDataFrame([("a", 1, "m", "r"), (None, None, "n", "s")], "kept string, "
                               "cast int, marked string not null, required string")  # fmt: skip
    rows = conformed_rows(df, schema)
    every = df.select(*[conformed(F.col(f.name), f) for f in schema.fields])
    assert rows.schema == schema == every.schema
    assert_df_equality(rows, every)
    projected = rows._jdf.queryExecution().analyzed().toString()
    assert "kept#" in projected and "AS kept#" not in projected
    assert "AS cast#" in projected and "AS marked#" in projected and "AS required#" in projected


def test_conformed_rejects_a_required_type_without_stand_in() -> None:
    field = StructField("names", ArrayType(StringType()), False)
    with pytest.raises(TypeError, match="names"):
        conformed(F.col("names"), field)


def test_first_failure_takes_the_first_failing_check_and_passes_nulls(spark: SparkSession) -> None:
    df = spark.createDataFrame([(10,), (3,), (0,), (None,)], "a int")
    checks: list[Check] = [
        (F.col("a") > 5, "too_big", "a > 5"),
        (F.col("a") > 1, "big", F.format_string("a = %d", F.col("a"))),
    ]  # fmt: skip
    failure = first_failure(checks)
    actual = df.select(
        "a", failure.reason_code.alias("code"), failure.reason_detail.alias("detail")
    )
    expected = spark.createDataFrame(
        [(10, "too_big", "a > 5"), (3, "big", "a = 3"), (0, None, None), (None, None, None)],
        "a int, code string, detail string",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_first_failure_skips_the_checks_where_they_cannot_fail(spark: SparkSession) -> None:
    df = spark.createDataFrame(
        [(10, True), (10, False), (10, None), (0, False)], "a int, well_formed boolean"
    )
    checks: list[Check] = [(F.col("a") > 5, "too_big", "a > 5")]
    failure = first_failure(checks, passes=F.col("well_formed"))
    actual = df.select("a", "well_formed", failure.reason_code.alias("code"))
    # ``passes`` true: no failure, whatever the checks say (the caller vouches); false or null:
    # the checks decide.
    expected = spark.createDataFrame(
        [(10, True, None), (10, False, "too_big"), (10, None, "too_big"), (0, False, None)],
        "a int, well_formed boolean, code string",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)
