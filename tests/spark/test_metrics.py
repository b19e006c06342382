"""Gold security_metrics: Kafka's metric names, windows, rates, counts (hand-derived)."""

from __future__ import annotations

from datetime import date, datetime

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.security_metrics import SECURITY_METRICS
from transforms.gold.metrics import security_metrics

AUTH_COLUMNS = (
    "event_ts timestamp, node_id string, side string, event_type string, listener string, "
    "mechanism string, mechanism_source string, source_format string"
)
AUTHZ_COLUMNS = (
    "event_ts timestamp, node_id string, record_type string, decision string, principal string, "
    "source_format string"
)


def test_failed_authentications_and_denials_per_window(spark: SparkSession) -> None:
    t = datetime
    auth = spark.createDataFrame(
        [
            (
                t(2026, 11, 20, 10, 5),
                "1",
                "broker",
                "authentication_failed",
                "SASL_SSL",
                "PLAIN",
                "line",
                "log4j",
            ),
            (
                t(2026, 11, 20, 10, 55),
                "1",
                "broker",
                "authentication_failed",
                "SASL_SSL",
                "PLAIN",
                "line",
                "log4j",
            ),
            (
                t(2026, 11, 20, 11, 0),
                "1",
                "broker",
                "authentication_failed",
                "SASL_SSL",
                "PLAIN",
                "line",
                "log4j",
            ),
            # Client-side lines are the client's metrics, not the broker's: not counted.
            (
                t(2026, 11, 20, 10, 6),
                "1",
                "client",
                "client_authentication_failed",
                None,
                None,
                None,
                "log4j",
            ),
            # No timestamp (a pasted line): cannot be placed in a window.
            (None, "1", "broker", "authentication_failed", "SASL_SSL", "PLAIN", "line", "log4j"),
            # A success whose mechanism only its handshake's DEBUG line gives: the Selector
            # meter is keyed by what the outcome line names (none).
            (
                t(2026, 11, 20, 10, 7),
                "1",
                "broker",
                "authentication_succeeded",
                "SASL_SSL",
                "SCRAM-SHA-256",
                "handshake",
                "log4j",
            ),
            # The same failure seen through a Confluent audit event: not counted twice.
            (
                t(2026, 11, 20, 10, 5),
                "1",
                "broker",
                "authentication_failed",
                "SASL_SSL",
                "PLAIN",
                "line",
                "confluent_audit",
            ),
        ],
        AUTH_COLUMNS,
    )
    authz = spark.createDataFrame(
        [
            (t(2026, 11, 20, 10, 1), "1", "decision", "DENIED", "User:mallory", "log4j"),
            (t(2026, 11, 20, 10, 2), "1", "decision", "DENIED", "User:mallory", "log4j"),
            (
                t(2026, 11, 20, 10, 3),
                "1",
                "acl_match",
                "ALLOWED",
                "User:alice",
                "log4j",
            ),  # detail line
            (t(2026, 11, 20, 10, 4), "1", "decision", "DENIED", "User:mallory", "confluent_audit"),
        ],
        AUTHZ_COLUMNS,
    )
    h10, h11, h12 = t(2026, 11, 20, 10), t(2026, 11, 20, 11), t(2026, 11, 20, 12)
    d0, d1 = t(2026, 11, 20), t(2026, 11, 21)
    day = date(2026, 11, 20)
    fa = ("1", "SASL_SSL", "PLAIN", None, None)
    ok = ("1", "SASL_SSL", None, None, None)
    mallory = ("1", None, None, "User:mallory", None)
    expected = spark.createDataFrame(
        [
            ("failed-authentication-total", "1h", h10, h11, *fa, 2.0, 2, "r", day),
            ("failed-authentication-rate", "1h", h10, h11, *fa, 2 / 3600, 2, "r", day),
            ("failed-authentication-total", "1h", h11, h12, *fa, 1.0, 1, "r", day),
            ("failed-authentication-rate", "1h", h11, h12, *fa, 1 / 3600, 1, "r", day),
            ("failed-authentication-total", "1d", d0, d1, *fa, 3.0, 3, "r", day),
            ("failed-authentication-rate", "1d", d0, d1, *fa, 3 / 86400, 3, "r", day),
            ("successful-authentication-total", "1h", h10, h11, *ok, 1.0, 1, "r", day),
            ("successful-authentication-rate", "1h", h10, h11, *ok, 1 / 3600, 1, "r", day),
            ("successful-authentication-total", "1d", d0, d1, *ok, 1.0, 1, "r", day),
            ("successful-authentication-rate", "1d", d0, d1, *ok, 1 / 86400, 1, "r", day),
            ("authorization-denied-rate-per-minute", "1h", h10, h11, *mallory, 2 / 60, 2, "r", day),
            ("authorization-denied-rate-per-minute", "1d", d0, d1, *mallory, 2 / 1440, 2, "r", day),
        ],
        SECURITY_METRICS,
    )
    got = security_metrics(auth, authz, run_id="r")
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_no_events_no_rows(spark: SparkSession) -> None:
    auth = spark.createDataFrame([], AUTH_COLUMNS)
    authz = spark.createDataFrame([], AUTHZ_COLUMNS)
    got = security_metrics(auth, authz, run_id="r")
    assert got.schema.names == SECURITY_METRICS.names
    assert got.isEmpty()
