"""jobs.gold.kip48_tokens.build: the tokens area planned from a GoldContext built here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from jobs.config import RunConfig, SourceSpec
from jobs.errors import ConfigError
from jobs.gold.context import GoldContext
from jobs.gold.kip48_tokens import TokenRules, build
from schemas.node_properties import NODE_PROPERTIES
from schemas.raw_lines import RAW_LINES
from schemas.token_lifecycle import TOKEN_LIFECYCLE
from tests.spark.test_token_hmac import FP_KEY, SECRET, json_form
from tests.spark.test_token_lifecycle import DAY, T0, create, frame, renew, utc


@dataclass(frozen=True)
class KeyedContext(GoldContext):
    """The field the builder needs from GoldContext (fingerprint_key), until it has it."""

    fingerprint_key: bytes | None = None


def test_build_plans_the_lifecycle_and_findings(spark: SparkSession, tmp_path: Path) -> None:
    fp = json_form("tokD")
    events = [
        create(1, T0 + 5, "tokD", fp, issue=T0, expiry=T0 + DAY, max_ts=T0 + 7 * DAY, lifetime=-1),
        renew(2, T0 + 60_000, "User:mallory", fp, -1, -1, 63),
    ]
    props = [("1", "broker", "/c/server.properties", "process.roles", "broker", False)]
    rules = {"tokens": {"creation_burst_threshold": 1, "metadata_mode": "auto"}}
    config = RunConfig(sources=(SourceSpec("x"),), lake=str(tmp_path), run_id="r", rules=rules)
    context = KeyedContext(
        spark=spark,
        silver={"token_events": frame(spark, events)},
        bronze=spark.createDataFrame([], RAW_LINES),
        node_properties=spark.createDataFrame(props, NODE_PROPERTIES),
        config=config,
        token_secret=SECRET,
        window=(None, utc(T0 + DAY // 2)),
        fingerprint_key=FP_KEY,
    )
    output = build(context)
    assert [(t.name, t.schema, t.partition_by) for t in output.tables] == [
        ("token_lifecycle", TOKEN_LIFECYCLE, ())
    ]
    lifecycle = output.tables[0].df.select(
        "token_key",
        "metadata_mode",
        "state",
        "renew_count",
        "replay_mismatch_count",
        "hmac_verified",
    )
    expected = spark.createDataFrame(
        [("tokD", "kraft", "active", 0, 0, True)],
        "token_key string, metadata_mode string, state string, renew_count int, "
        "replay_mismatch_count int, hmac_verified boolean",
    )
    assertDataFrameEqual(lifecycle, expected)
    findings = [f.select("rule_id", "subject", "discriminator") for f in output.findings]
    stacked = findings[0]
    for part in findings[1:]:
        stacked = stacked.unionByName(part)
    assertDataFrameEqual(
        stacked,
        spark.createDataFrame(
            [
                ("tokens.owner_mismatch", "User:mallory", "renew tokD"),
                ("tokens.creation_burst", "User:alice", ""),
            ],
            "rule_id string, subject string, discriminator string",
        ),
    )
    assert output.metrics == ()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"metadata_mode": "etcd"}, "metadata_mode"),
        ({"creation_burst_threshold": 0}, "creation_burst_threshold"),
        ({"lifetime_factor": 0.0}, "lifetime_factor"),
    ],
)
def test_token_rules_are_validated(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TokenRules(**values)  # type: ignore[arg-type]
