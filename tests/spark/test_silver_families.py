"""Silver plans only the parsers of the families its bronze holds (issue 15): the parsers left
out stand for empty outputs of exactly their narrowed columns, and the tables and the
quarantine are the same as when every parser runs."""

from __future__ import annotations

import datetime as dt

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import pipeline
from jobs.pipeline import build_silver, present_families
from jobs.reuse import release
from schemas.raw_lines import FAMILY_AUTH, FAMILY_AUTHZ
from tests.support.bronze_rows import Record, bronze_df
from transforms.quarantine import table_and_quarantine_columns
from transforms.silver.registry import (
    PARSERS,
    SILVER_TABLES,
    Parser,
    empty_output,
    parse_families,
    parsed,
)

AUTHZ = "kafka.authorizer.logger"
SELECTOR = "org.apache.kafka.common.network.Selector"
TS = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
THREAD = "data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8"


def test_an_empty_output_has_each_parsers_narrowed_columns(spark: SparkSession) -> None:
    """Same names, order and types (nullability aside, nested too: the table's write conforms
    it) as the narrowed output of the parser itself: the real outputs and the empty ones are
    unioned into one table."""
    no_record = bronze_df(spark, [], None)
    outputs = parse_families(no_record)
    assert [parser for parser, _ in outputs] == list(PARSERS)
    for parser, output in outputs:
        narrowed = table_and_quarantine_columns(output, parser.schema).schema
        empty = empty_output(spark, parser).schema
        assert [(f.name, f.dataType.simpleString()) for f in empty.fields] == [
            (f.name, f.dataType.simpleString()) for f in narrowed.fields
        ], parser.table
        assert all(f.nullable for f in empty.fields)


def _bronze(spark: SparkSession) -> DataFrame:
    """Records of two families: an authorizer decision, an unparsable one, an authentication
    failure and a cut authentication line (quarantined)."""
    authz = bronze_df(spark, [
        Record("INFO", AUTHZ, "Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on resource = Topic:LITERAL:customerOrders for request = Metadata with resourceRefCount = 1", log_ts=TS),
        Record("INFO", AUTHZ, None, log_ts=TS),
    ], FAMILY_AUTHZ)  # fmt: skip
    auth = bronze_df(spark, [
        Record("INFO", SELECTOR, "[SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with /10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL handshake failed)", THREAD, log_ts=TS),
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed authentication with /172.20.0.4 (channelId=172.20.0.2:9097-172.20.0.4:33076-4-3) (Authentication failed during authentication due to invalid credentials with SASL ", log_ts=TS),
    ], FAMILY_AUTH, line_numbers=[3, 4])  # fmt: skip
    return authz.unionByName(auth)


def test_tables_and_quarantine_equal_those_of_every_parser(spark: SparkSession) -> None:
    bronze = _bronze(spark)
    families = present_families(bronze)
    assert families == {FAMILY_AUTHZ, FAMILY_AUTH}
    every = build_silver(bronze)
    present = build_silver(bronze, families)
    # Every parser's output, plus (all of them run) the request log's connections aggregate
    # and the keyed auth rows that auth_events' links read; with only authz and auth present,
    # neither.
    assert len(present.cached) == 2 < len(every.cached) == len(PARSERS) + 2
    assert present.silver.keys() == every.silver.keys() == SILVER_TABLES.keys()
    order = ["source_path", "line_number"]
    for name, table in every.silver.items():
        assert_df_equality(
            present.silver[name].orderBy(*order), table.orderBy(*order), ignore_nullable=True
        )
    assert present.silver["authz_decisions"].count() == 1
    assert present.silver["auth_events"].count() == 1
    assert_df_equality(
        present.quarantine.orderBy(*order), every.quarantine.orderBy(*order), ignore_nullable=True
    )
    reasons = present.quarantine.select("line_number", F.col("reason_code").isNotNull())
    assert sorted(tuple(r) for r in reasons.collect()) == [(2, True), (4, True)]
    release([*every.cached, *present.cached])


def test_parsers_run_without_whole_stage_code_generation(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each parser is planned and computed (its checkpoint: an eager action) on a driver thread
    with ``PARSE_CONF``'s settings: their large stages would only be compiled to be dropped
    (over ``spark.sql.codegen.hugeMethodLimit``). The session's own value is back afterwards,
    for the silver writes and gold."""
    key = "spark.sql.codegen.wholeStage"
    seen: list[str | None] = []

    def recording(bronze: DataFrame, parser: Parser) -> DataFrame:
        seen.append(bronze.sparkSession.conf.get(key, None))
        return parsed(bronze, parser)

    monkeypatch.setattr(pipeline, "parsed", recording)
    spark.conf.set(key, "true")
    try:
        silver = build_silver(_bronze(spark), {FAMILY_AUTHZ, FAMILY_AUTH})
        assert seen == ["false", "false"]
        assert spark.conf.get(key) == "true"
        assert silver.silver["authz_decisions"].count() == 1
    finally:
        spark.conf.unset(key)
