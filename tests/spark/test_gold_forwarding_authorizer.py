"""jobs.gold.kip590_forwarding and jobs.gold.kip801_authorizer: build() on a mixed scenario gives exactly the
expected findings, the real ENVELOPE sample decodes end to end, and the tables keep their
contracts."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.testing import assertDataFrameEqual

from jobs.config import RunConfig, SourceSpec
from jobs.errors import ConfigError
from jobs.gold import kip590_forwarding as gold_forwarding
from jobs.gold import kip801_authorizer as gold_authorizer
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable
from jobs.gold.registry import _stacked, build_gold, reductions
from jobs.reuse import reused
from schemas.authorizer_readiness import AUTHORIZER_READINESS
from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.findings import FINDINGS
from schemas.forwarded_requests import FORWARDED_REQUESTS
from schemas.node_properties import NODE_PROPERTIES
from schemas.security_metrics import SECURITY_METRICS
from tests.spark.test_authorizer_rules import decision, denied, seconds, server_lines
from tests.spark.test_forwarding import (
    ELECT,
    ELECT_OK,
    Req,
    bronze,
    client_line,
    controller_line,
    envelope_line,
    properties,
    real_envelope,
    request_events,
    table_rows,
    ts,
)
from tests.support.request_lines import principal_data


def context(spark: SparkSession, tmp_path: Path, samples_dir: Path) -> GoldContext:
    """The mixed scenario; expectations in test_build_findings_are_exactly_the_expected_set."""
    requests = request_events(
        spark,
        [
            real_envelope(samples_dir),
            envelope_line(7, ts("12:00:00"), "User:mallory",
                          (principal_data("User", "alice", False), "CgAAQg=="), 31),
            client_line(("file:/logs/broker-1/kafka-request.log", 2, "1"), ts("10:00:01"),
                        Req(ELECT, 8, "admin-2", "User:bob"), ELECT_OK),
            controller_line(2, ts("10:00:00.950"), Req(ELECT, 8, "admin-2", "User:admin"),
                            ELECT_OK),
        ],
    )  # fmt: skip
    authz = table_rows(
        spark,
        AUTHZ_DECISIONS,
        [
            decision(3, "User:ghost", rule="SuperUser", event_ts=ts("09:00:02")),
            decision(7, "User:bob", rule="DefaultAllow", event_ts=ts("09:10:00")),
            *[denied(20 + i, "User:eve", seconds(s), "secret") for i, s in enumerate((0, 2, 4))],
            decision(50, "User:mallory", node_id="3000", event_ts=ts("12:00:00"),
                     decision="DENIED", rule="DefaultDeny", operation="CLUSTER_ACTION",
                     resource_type="CLUSTER", resource_name="kafka-cluster", api_name="Envelope"),
        ],
    )  # fmt: skip
    nodes = properties(
        spark,
        [
            ("1", "broker", "process.roles", "broker"),
            ("1", "broker", "super.users", "User:admin"),
            ("1", "broker", "controller.listener.names", "CONTROLLER"),
            ("1", "broker", "early.start.listeners", "CONTROLLER,EXTERNAL"),
            ("3000", "controller", "process.roles", "controller"),
        ],
    )
    config = RunConfig(
        sources=(SourceSpec("x"),),
        lake=str(tmp_path),
        run_id="r",
        rules={"authorizer": {"denial_burst_threshold": 3, "denial_burst_window_ms": 10_000}},
    )

    def previous(table: str, schema: StructType) -> DataFrame:
        del table
        return spark.createDataFrame([], schema)

    return GoldContext(
        spark=spark,
        silver={"request_events": requests, "authz_decisions": authz},
        bronze=bronze(spark, server_lines()),
        node_properties=nodes,
        config=config,
    )


def _reduced_before(given: GoldContext, monkeypatch: pytest.MonkeyPatch) -> GoldContext:
    """``given`` as ``jobs.pipeline.gold_reductions`` hands it over where gold alone is small:
    every whole-lake reduction already computed; a builder that computes one again fails."""
    reduced = {name: reused(r(given)) for name, r in reductions().items()}

    def not_again(context: GoldContext) -> DataFrame:
        raise AssertionError("a builder computed a reduction it was given")

    for builder in (gold_forwarding, gold_authorizer):
        monkeypatch.setattr(builder, "REDUCTIONS", dict.fromkeys(builder.REDUCTIONS, not_again))
    return replace(given, reduced=reduced)


@pytest.mark.parametrize("reduced_before", [False, True], ids=["by the builders", "given"])
def test_build_findings_are_exactly_the_expected_set(
    spark: SparkSession,
    tmp_path: Path,
    samples_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    reduced_before: bool,
) -> None:
    given = context(spark, tmp_path, samples_dir)
    if reduced_before:
        given = _reduced_before(given, monkeypatch)
    built: list[tuple[str, list[str]]] = []  # each output, on its builder's thread

    def seen(output: GoldOutput) -> None:
        built.append((threading.current_thread().name, [t.name for t in output.tables]))

    gold = build_gold(given, [gold_forwarding.build, gold_authorizer.build], built=seen)
    assert sorted(tables for _, tables in built) == [
        ["authorizer_readiness"],
        ["forwarded_requests"],
    ]
    assert threading.current_thread().name not in {thread for thread, _ in built}
    assert [(t.name, t.schema, t.partition_by) for t in gold.tables] == [
        ("forwarded_requests", FORWARDED_REQUESTS, ("event_date",)),
        ("authorizer_readiness", AUTHORIZER_READINESS, ("event_date",)),
    ]
    columns = ("rule_id", "kip", "severity", "subject_type", "subject", "discriminator",
               "node_id", "count", "first_seen_ts", "last_seen_ts")  # fmt: skip
    findings = gold.findings.select(*columns)
    f, a = "forwarding.", "authorizer."
    expected = spark.createDataFrame(
        [
            (f + "envelope_cluster_action_denied", "KIP-590", "high", "principal", "User:mallory",
             "3000", "3000", 1, ts("12:00:00"), ts("12:00:00")),
            (f + "principal_mismatch", "KIP-590", "medium", "node", "1", "User:bob -> User:admin",
             "1", 1, ts("10:00:00.950"), ts("10:00:01")),
            (a + "super_user_not_in_config", "KIP-801", "high", "principal", "User:ghost", "1",
             "1", 1, ts("09:00:02"), ts("09:00:02")),
            (a + "default_allow", "KIP-801", "medium", "principal", "User:bob",
             "TOPIC:LITERAL:orders", "1", 1, ts("09:10:00"), ts("09:10:00")),
            (a + "denial_burst", "KIP-801", "medium", "principal", "User:eve",
             "TOPIC:LITERAL:secret", "1", 3, seconds(0), seconds(4)),
            (a + "early_start_client_listener", "KIP-801", "low", "listener", "EXTERNAL", "1",
             "1", 1, ts("10:00:00.200"), ts("10:00:00.200")),
            (a + "early_start_client_listener", "KIP-801", "low", "listener", "PLAINTEXT", "2",
             "2", 1, ts("11:00:00.700"), ts("11:00:00.700")),
            (a + "not_ready_request_failures", "KIP-801", "low", "principal", "User:bob", "1",
             "1", 2, ts("10:00:01"), ts("10:00:02")),
            (a + "not_ready_request_failures", "KIP-801", "low", "principal", "User:carol", "1",
             "1", 1, ts("12:00:01"), ts("12:00:01")),
        ],
        findings.schema,
    )  # fmt: skip
    assertDataFrameEqual(findings, expected)
    denial = gold.findings.where(F.col("rule_id") == f + "envelope_cluster_action_denied")
    assert [r["explanation"] for r in denial.collect()] == [
        "User:mallory sent 1 ENVELOPE request(s) to node 3000 without CLUSTER_ACTION on the "
        "cluster (CLUSTER_AUTHORIZATION_FAILED): only brokers may forward, so a non-broker tried "
        "to act for client principal(s) User:alice from 10.0.0.66"
    ]
    # The real ENVELOPE sample, end to end: requestPrincipal and clientHostAddress decoded.
    forwarded = gold.tables[0].df.where(F.col("record_type") == "envelope").select(
        "principal", "client_address", "envelope_sender_principal", "error_code_name",
        "controller_line_number",
    )  # fmt: skip
    expected_envelopes = spark.createDataFrame(
        [("User:ANONYMOUS", "127.0.0.1", "User:ANONYMOUS", "NOT_CONTROLLER", 90),
         ("User:alice", "10.0.0.66", "User:mallory", "CLUSTER_AUTHORIZATION_FAILED", 7)],
        forwarded.schema,
    )  # fmt: skip
    assertDataFrameEqual(forwarded, expected_envelopes)
    assert gold.metrics is not None
    names = {r["metric_name"] for r in gold.metrics.select("metric_name").distinct().collect()}
    assert names == {"forwarded-requests-total", "forwarding-failures-total"}


def test_unknown_rules_key_is_a_config_error(spark: SparkSession, tmp_path: Path) -> None:
    """[rules.forwarding] keys are validated (jobs.config.area_rules)."""
    config = RunConfig(
        sources=(SourceSpec("x"),), lake=str(tmp_path), run_id="r",
        rules={"forwarding": {"pairing_tolerance": 5}},
    )  # fmt: skip
    empty = spark.createDataFrame([], NODE_PROPERTIES)
    bad = GoldContext(spark=spark, silver={}, bronze=empty, node_properties=empty, config=config,
                      )  # fmt: skip
    with pytest.raises(ConfigError, match="pairing_tolerance_ms"):
        gold_forwarding.build(bad)


def _finding(rule_id: str) -> tuple[object, ...]:
    """A findings row (``FINDINGS``' fields in order)."""
    return (f"id-{rule_id}", rule_id, "KIP-590", "high", "principal", "User:alice", "-", "1",
            None, None, 1, [], "why", "run", None)  # fmt: skip


def test_a_builders_findings_and_metrics_are_stacked_into_one_frame_each(
    spark: SparkSession,
) -> None:
    first = spark.createDataFrame([_finding("a"), _finding("b")], FINDINGS)
    # Another column order and a column the table does not hold: stacked by name, dropped.
    second = spark.createDataFrame([_finding("c")], FINDINGS).select(
        F.lit("x").alias("extra"), *reversed(FINDINGS.fieldNames())
    )
    start = ts("10:00:00")
    row = ("m", "1h", start, ts("11:00:00"), None, None, None, None, None, 1.0, 1, "run",
           start.date())  # fmt: skip
    metric = spark.createDataFrame([row], SECURITY_METRICS)
    table = PlannedTable("forwarded_requests", first, FORWARDED_REQUESTS, ("event_date",))
    output = GoldOutput(tables=(table,), findings=(first, second), metrics=(metric, metric))
    stacked = _stacked(output)
    assert stacked.tables == (table,)
    assert len(stacked.findings) == len(stacked.metrics) == 1
    assert stacked.findings[0].schema == FINDINGS
    assertDataFrameEqual(
        stacked.findings[0].select("rule_id"),
        spark.createDataFrame([("a",), ("b",), ("c",)], "rule_id string"),
    )
    assert stacked.metrics[0].columns == SECURITY_METRICS.fieldNames()
    assert stacked.metrics[0].count() == 2
    assert _stacked(GoldOutput(tables=(table,))) == GoldOutput(tables=(table,))
