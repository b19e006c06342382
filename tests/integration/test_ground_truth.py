"""The pipeline against the simulator's ground truth (issue 7, docs/generator.md).

One small generated corpus, one pipeline run over its whole UTC day, then each gold table is
compared with ``truth/`` as a whole DataFrame: every column except ``run_id`` (the run's own
id, not a fact of the world).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)
from pyspark.testing import assertDataFrameEqual

from jobs.config import RunConfig, SourceSpec
from jobs.fingerprint_keys import fingerprint_key
from jobs.lake.tables import Engine, Lake
from jobs.pipeline import run
from jobs.simulator.generate import generate
from jobs.simulator.world import GenerateOptions
from schemas.auth_events import AUTH_EVENTS
from schemas.findings import FINDINGS
from schemas.security_metrics import SECURITY_METRICS
from schemas.token_lifecycle import TOKEN_LIFECYCLE
from transforms.fingerprints import FINGERPRINT_HEX_CHARS

SEED = 11
DAY = datetime(2026, 11, 20, tzinfo=UTC)
#: Rules left out of the comparison, with the reason (reported to the lead; remove an entry
#: once the area's truth and the pipeline agree).
EXCLUDED_RULES: dict[str, str] = {}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four brokers (every layout, versions 2.7 to 4.1), three hours, ~4k lines."""
    out = tmp_path_factory.mktemp("truth-corpus")
    options = GenerateOptions(out=out, brokers=4, controllers=1, connect_workers=1, clients=9,
                              hours=3.0, lines_target=4000, seed=SEED)  # fmt: skip
    generate(options, progress=None)
    return out


@pytest.fixture(scope="module")
def lake(spark: SparkSession, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pipeline run over the corpus's day; its accounting must balance."""
    root = tmp_path_factory.mktemp("truth-lake")
    config = RunConfig(sources=(SourceSpec(str(corpus)),), lake=str(root), engine="embedded",
                       start=DAY, end=datetime(2026, 11, 21, tzinfo=UTC))  # fmt: skip
    summary = run(spark, config)
    assert summary.balanced, summary.render()
    totals = summary.totals()
    assert totals.get("quarantined", 0) == 0, summary.render()
    return root


def _value(value: Any, data_type: DataType, name: str, corpus: Path) -> Any:
    """A truth JSON value as the Python value Spark expects for ``data_type``."""
    if value is None:
        return None
    if isinstance(data_type, TimestampType):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(data_type, DateType):
        return date.fromisoformat(value)
    if isinstance(data_type, StructType):
        return _row(value, data_type, corpus)
    if isinstance(data_type, ArrayType):
        return [_value(v, data_type.elementType, name, corpus) for v in value]
    if name == "source_path":
        return str(corpus / value)
    return value


def _row(record: dict[str, Any], schema: StructType, corpus: Path) -> tuple[Any, ...]:
    return tuple(_value(record.get(f.name), f.dataType, f.name, corpus) for f in schema.fields)


def _truth(
    spark: SparkSession, corpus: Path, name: str, schema: StructType
) -> Iterator[tuple[Any, ...]]:
    with open(corpus / "truth" / name, encoding="utf-8") as handle:
        for line in handle:
            yield _row(json.loads(line), schema, corpus)


def _without(schema: StructType, *names: str) -> StructType:
    return StructType([f for f in schema.fields if f.name not in names])


def _compare(actual: DataFrame, expected: DataFrame) -> None:
    assertDataFrameEqual(actual, expected, checkRowOrder=False, rtol=1e-9, atol=1e-12)


def test_security_metrics_equal_the_truth(spark: SparkSession, corpus: Path, lake: Path) -> None:
    schema = _without(SECURITY_METRICS, "run_id")
    actual = Lake(spark, str(lake), Engine.EMBEDDED).read("security_metrics", schema)
    expected = spark.createDataFrame(
        list(_truth(spark, corpus, "security_metrics.jsonl", schema)), schema
    )
    assert expected.count() > 0
    _compare(actual, expected)


def test_findings_equal_the_truth(spark: SparkSession, corpus: Path, lake: Path) -> None:
    stored = _without(FINDINGS, "run_id")
    actual = Lake(spark, str(lake), Engine.EMBEDDED).read("findings", stored)
    schema = StructType(
        [StructField(f.name, f.dataType, True) if f.name == "explanation" else f for f in stored]
    )
    expected = spark.createDataFrame(list(_truth(spark, corpus, "findings.jsonl", schema)), schema)
    if EXCLUDED_RULES:
        excluded = list(EXCLUDED_RULES)
        actual = actual.where(~F.col("rule_id").isin(excluded))
        expected = expected.where(~F.col("rule_id").isin(excluded))
    rules = {r["rule_id"] for r in expected.select("rule_id").distinct().collect()}
    assert {"authorizer.default_allow", "authorizer.denial_burst",
            "reauth.no_reauth_client_on_expiring_listener"} <= rules  # fmt: skip
    # Some areas state a rule's facts but not its sentence (explanation null in the truth):
    # for those rules the explanation, prose the pipeline builds from the compared columns,
    # is not compared. Every other column of every rule is.
    unexplained = [
        r["rule_id"]
        for r in expected.where(F.col("explanation").isNull())
        .select("rule_id")
        .distinct()
        .collect()
    ]
    blank = F.when(F.col("rule_id").isin(unexplained), F.lit(None)).otherwise(F.col("explanation"))
    actual = actual.withColumn("explanation", blank)
    _compare(actual, expected)


#: The broker outcome lines the truth's ``auth_principals.jsonl`` covers.
OUTCOMES = ("authentication_succeeded", "authentication_failed", "reauthentication_succeeded",
            "reauthentication_failed")  # fmt: skip
LINKED = StructType(
    [
        StructField("source_path", StringType(), False),
        StructField("line_number", LongType(), False),
        StructField("event_type", StringType(), False),
        StructField("principal", StringType(), True),
        StructField("principal_source", StringType(), True),
        StructField("mechanism", StringType(), True),
        StructField("mechanism_source", StringType(), True),
    ]
)


def _expected_links(corpus: Path) -> list[tuple[Any, ...]]:
    """The truth's outcomes as the lake's auth_events must hold them: the principal exactly
    when the logs link it (``linkable``), the mechanism exactly when they state it."""
    rows = []
    with open(corpus / "truth" / "auth_principals.jsonl", encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            linked, stated = r["linkable"], r["mechanism_stated"]
            rows.append((
                str(corpus / r["source_path"]), r["line_number"], r["event_type"],
                r["principal"] if linked else None, r["principal_source"] if linked else None,
                r["mechanism"] if stated else None, r["mechanism_source"] if stated else None,
            ))  # fmt: skip
    return rows


def test_auth_principals_equal_the_truth(spark: SparkSession, corpus: Path, lake: Path) -> None:
    """Every broker authentication outcome of the lake (issue 17): its principal is the
    world's exactly where the logs link it (``truth/auth_principals.jsonl``), its mechanism
    exactly where they state it; so the share of outcomes with a principal is the truth's
    linkable share."""
    auth = Lake(spark, str(lake), Engine.EMBEDDED).read("auth_events", AUTH_EVENTS)
    outcomes = auth.where(F.col("event_type").isin(*OUTCOMES) & (F.col("side") == "broker"))
    actual = outcomes.select(*LINKED.fieldNames())
    truth = _expected_links(corpus)
    expected = spark.createDataFrame(truth, LINKED)
    linkable = sum(1 for row in truth if row[3] is not None)
    assert 0 < linkable < len(truth)  # the corpus has linked and unlinked outcomes
    with_principal = actual.where(F.col("principal").isNotNull()).count()
    assert (with_principal, actual.count()) == (linkable, len(truth))
    _compare(actual, expected)


def _hmac_fingerprint(key: bytes, secret: str, token_id: str) -> str:
    """The pipeline's ``hmac_fingerprint`` of a token (``transforms.bronze.redaction``): the lake's
    HMAC-SHA256 over the token's HMAC as the JSON request log prints it (base64 of
    HMAC-SHA512(delegation.token.secret.key, token id), ``DelegationTokenManager``)."""
    mac = hmac.new(secret.encode(), token_id.encode(), hashlib.sha512).digest()
    printed = base64.b64encode(mac).decode("ascii")
    return hmac.new(key, printed.encode(), hashlib.sha256).hexdigest()[:FINGERPRINT_HEX_CHARS]


def test_token_lifecycle_equals_the_truth(spark: SparkSession, corpus: Path, lake: Path) -> None:
    actual = Lake(spark, str(lake), Engine.EMBEDDED).read("token_lifecycle", TOKEN_LIFECYCLE)
    key = fingerprint_key(str(lake))
    secret = f"sim-token-secret-{SEED}"  # tokens.py: world.settings['delegation_token_secret']
    rows = []
    for row in _truth(spark, corpus, "token_lifecycle.jsonl", TOKEN_LIFECYCLE):
        values = dict(zip(TOKEN_LIFECYCLE.fieldNames(), row, strict=True))
        if values["token_id"] is not None and values["hmac_fingerprint"] is None:
            values["hmac_fingerprint"] = _hmac_fingerprint(key, secret, values["token_id"])
        rows.append(tuple(values.values()))
    expected = spark.createDataFrame(rows, TOKEN_LIFECYCLE)
    _compare(actual, expected)
