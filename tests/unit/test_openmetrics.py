"""jobs.openmetrics: security_metrics rows as OpenMetrics text (names, types, labels, cumulative
counters, escaping, order), checked whole and through prometheus_client's OpenMetrics parser.
No Spark, no lake."""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.samples import Timestamp

from jobs.errors import InputError
from jobs.neutralize import terminal
from jobs.openmetrics import FAMILIES, Export, jmx_exporter_name, render


def _parse(text: str) -> list[Metric]:
    """prometheus_client's OpenMetrics parser (unannotated there): every family of ``text``."""
    return list(text_string_to_metric_families(text))  # type: ignore[no-untyped-call]


def _sec(timestamp: float | Timestamp | None) -> int:
    """A parsed sample's timestamp in whole seconds (it must have one, without a fraction)."""
    assert isinstance(timestamp, Timestamp) and timestamp.nsec == 0, timestamp
    return timestamp.sec


H = 3600


def _row(name: str, hour: int, value: float, window: str = "1h", **slices: Any) -> dict[str, Any]:
    """A security_metrics row of broker 1 for the window starting ``hour`` h after
    2026-11-20T00:00Z (``window`` '1h' or '1d')."""
    start = datetime(2026, 11, 20, tzinfo=UTC) + timedelta(hours=hour)
    length = timedelta(hours=1 if window == "1h" else 24)
    row = {"metric_name": name, "window": window, "window_start_ts": start,
           "window_end_ts": start + length, "broker_id": "1", "listener": None,
           "mechanism": None, "principal": None, "api_key_name": None, "value": value,
           "event_count": 1, "run_id": "r", "window_date": date(2026, 11, 20)}  # fmt: skip
    return {**row, **slices}


#: 2026-11-20T00:00:00Z in seconds.
T0 = 1795132800


def test_every_metric_has_the_jmx_exporter_name_and_type() -> None:
    """The whole mapping: Kafka's socket-server-metrics attributes as the JMX exporter's Kafka
    rules name them (counter family without _total), the StandardAuthorizer's plugin metrics,
    and the project's own metrics under kafka_audit_."""
    table = {m: (f.name, f.kind, f.cumulative) for m, f in FAMILIES.items()}
    s = "kafka_server_socket_server_metrics_"
    assert table == {
        "successful-authentication-total": (s + "successful_authentication", "counter", True),
        "successful-authentication-rate": (s + "successful_authentication_rate", "gauge", False),
        "failed-authentication-total": (s + "failed_authentication", "counter", True),
        "failed-authentication-rate": (s + "failed_authentication_rate", "gauge", False),
        "successful-reauthentication-total": (s + "successful_reauthentication", "counter", True),
        "successful-reauthentication-rate": (
            s + "successful_reauthentication_rate",
            "gauge",
            False,
        ),
        "failed-reauthentication-total": (s + "failed_reauthentication", "counter", True),
        "failed-reauthentication-rate": (s + "failed_reauthentication_rate", "gauge", False),
        "successful-authentication-no-reauth-total": (
            s + "successful_authentication_no_reauth",
            "counter",
            True,
        ),
        "reauthentication-latency-max": (s + "reauthentication_latency_max", "gauge", False),
        "reauthentication-latency-avg": (s + "reauthentication_latency_avg", "gauge", False),
        "expired-connections-killed-count": (s + "expired_connections_killed_count", "gauge", True),
        "authorization-allowed-rate-per-minute": (
            "kafka_server_plugins_authorization_allowed_rate_per_minute",
            "gauge",
            False,
        ),
        "authorization-denied-rate-per-minute": (
            "kafka_server_plugins_authorization_denied_rate_per_minute",
            "gauge",
            False,
        ),
        "reauthentication-latency-p99": (
            "kafka_audit_reauthentication_latency_p99",
            "gauge",
            False,
        ),
        "forwarded-requests-total": ("kafka_audit_forwarded_requests", "counter", True),
        "forwarding-failures-total": ("kafka_audit_forwarding_failures", "counter", True),
    }


@pytest.mark.parametrize(
    ("domain", "mbean_type", "attribute", "expected"),
    [
        ("kafka.server", "socket-server-metrics", "failed-authentication-total",
         "kafka_server_socket_server_metrics_failed_authentication_total"),
        ("kafka.server", "BrokerTopicMetrics", "Count", "kafka_server_brokertopicmetrics_count"),
        ("kafka.server", "a--b", "c.d e", "kafka_server_a_b_c_d_e"),
    ],
)  # fmt: skip
def test_jmx_exporter_name(domain: str, mbean_type: str, attribute: str, expected: str) -> None:
    assert jmx_exporter_name(domain, mbean_type, attribute) == expected


ROWS = [
    # Failed authentications of one listener/mechanism in hours 9 and 11 (none in 10).
    _row("failed-authentication-total", 9, 3.0, listener="SASL_SSL", mechanism="SCRAM-SHA-512"),
    _row("failed-authentication-total", 11, 2.0, listener="SASL_SSL", mechanism="SCRAM-SHA-512"),
    _row("failed-authentication-rate", 9, 3 / H, listener="SASL_SSL", mechanism="SCRAM-SHA-512"),
    # Empty texts are no label.
    _row("failed-authentication-total", 9, 1.0, listener="", mechanism=""),
    _row("authorization-denied-rate-per-minute", 9, 0.5, principal="User:scanner"),
    _row("expired-connections-killed-count", 10, 4.0, listener="EXTERNAL"),
    _row(
        "forwarding-failures-total",
        9,
        2.0,
        broker_id="3000",
        listener="CONTROLLER",
        principal="User:ANONYMOUS",
        api_key_name="ENVELOPE",
    ),
    # The daily window and an unknown name are left out of an hourly export.
    _row("failed-authentication-total", 0, 6.0, window="1d", listener="SASL_SSL"),
    _row("made-up-total", 9, 1.0),
]

HOURLY = f"""\
# HELP kafka_audit_forwarding_failures ENVELOPE requests the controller refused (KIP-590) since the first window exported (replayed from broker logs by kafka-audit)
# TYPE kafka_audit_forwarding_failures counter
kafka_audit_forwarding_failures_total{{api="ENVELOPE",broker="3000",listener="CONTROLLER",principal="User:ANONYMOUS"}} 0.0 {T0 + 9 * H}
kafka_audit_forwarding_failures_total{{api="ENVELOPE",broker="3000",listener="CONTROLLER",principal="User:ANONYMOUS"}} 2.0 {T0 + 10 * H - 1}
# HELP kafka_server_plugins_authorization_denied_rate_per_minute The number of authorizations denied per minute (replayed from broker logs by kafka-audit)
# TYPE kafka_server_plugins_authorization_denied_rate_per_minute gauge
kafka_server_plugins_authorization_denied_rate_per_minute{{broker="1",principal="User:scanner"}} 0.5 {T0 + 10 * H - 1}
# HELP kafka_server_socket_server_metrics_expired_connections_killed_count Connections closed at re-authentication expiry (KIP-368) since the first window exported (replayed from broker logs by kafka-audit)
# TYPE kafka_server_socket_server_metrics_expired_connections_killed_count gauge
kafka_server_socket_server_metrics_expired_connections_killed_count{{broker="1",listener="EXTERNAL"}} 0.0 {T0 + 10 * H}
kafka_server_socket_server_metrics_expired_connections_killed_count{{broker="1",listener="EXTERNAL"}} 4.0 {T0 + 11 * H - 1}
# HELP kafka_server_socket_server_metrics_failed_authentication The total number of connections with failed authentication since the first window exported (replayed from broker logs by kafka-audit)
# TYPE kafka_server_socket_server_metrics_failed_authentication counter
kafka_server_socket_server_metrics_failed_authentication_total{{broker="1"}} 0.0 {T0 + 9 * H}
kafka_server_socket_server_metrics_failed_authentication_total{{broker="1"}} 1.0 {T0 + 10 * H - 1}
kafka_server_socket_server_metrics_failed_authentication_total{{broker="1",listener="SASL_SSL",mechanism="SCRAM-SHA-512"}} 0.0 {T0 + 9 * H}
kafka_server_socket_server_metrics_failed_authentication_total{{broker="1",listener="SASL_SSL",mechanism="SCRAM-SHA-512"}} 3.0 {T0 + 10 * H - 1}
kafka_server_socket_server_metrics_failed_authentication_total{{broker="1",listener="SASL_SSL",mechanism="SCRAM-SHA-512"}} 5.0 {T0 + 12 * H - 1}
# HELP kafka_server_socket_server_metrics_failed_authentication_rate The number of connections with failed authentication per second (replayed from broker logs by kafka-audit)
# TYPE kafka_server_socket_server_metrics_failed_authentication_rate gauge
kafka_server_socket_server_metrics_failed_authentication_rate{{broker="1",listener="SASL_SSL",mechanism="SCRAM-SHA-512"}} 0.0008333333333333334 {T0 + 10 * H - 1}
# EOF
"""


def test_hourly_export_whole_text() -> None:
    """Families by name, series by labels, samples by time; counters cumulative from a 0 at
    their first window's start, stamped at each window's last second; empty labels left out;
    the daily row and the unknown metric are not exported."""
    export = render(ROWS, "1h")
    assert export == Export(HOURLY, families=5, series=6, samples=11, skipped={"made-up-total": 1})


def test_the_parser_reads_every_sample_back() -> None:
    """prometheus_client's OpenMetrics parser accepts the text; what it reads is the rows."""
    families = _parse(render(ROWS, "1h").text)
    read = [(f.name, f.type, [(s.name, s.labels, s.value, _sec(s.timestamp))
                               for s in f.samples]) for f in families]  # fmt: skip
    fwd = {
        "api": "ENVELOPE",
        "broker": "3000",
        "listener": "CONTROLLER",
        "principal": "User:ANONYMOUS",
    }
    sasl = {"broker": "1", "listener": "SASL_SSL", "mechanism": "SCRAM-SHA-512"}
    killed = {"broker": "1", "listener": "EXTERNAL"}
    f, s = "kafka_audit_forwarding_failures", "kafka_server_socket_server_metrics_"
    assert read == [
        (f, "counter", [(f + "_total", fwd, 0.0, T0 + 9 * H), (f + "_total", fwd, 2.0, T0 + 10 * H - 1)]),
        ("kafka_server_plugins_authorization_denied_rate_per_minute", "gauge",
         [("kafka_server_plugins_authorization_denied_rate_per_minute",
           {"broker": "1", "principal": "User:scanner"}, 0.5, T0 + 10 * H - 1)]),
        (s + "expired_connections_killed_count", "gauge",
         [(s + "expired_connections_killed_count", killed, 0.0, T0 + 10 * H),
          (s + "expired_connections_killed_count", killed, 4.0, T0 + 11 * H - 1)]),
        (s + "failed_authentication", "counter",
         [(s + "failed_authentication_total", {"broker": "1"}, 0.0, T0 + 9 * H),
          (s + "failed_authentication_total", {"broker": "1"}, 1.0, T0 + 10 * H - 1),
          (s + "failed_authentication_total", sasl, 0.0, T0 + 9 * H),
          (s + "failed_authentication_total", sasl, 3.0, T0 + 10 * H - 1),
          (s + "failed_authentication_total", sasl, 5.0, T0 + 12 * H - 1)]),
        (s + "failed_authentication_rate", "gauge",
         [(s + "failed_authentication_rate", sasl, 3 / H, T0 + 10 * H - 1)]),
    ]  # fmt: skip


def test_daily_export_keeps_the_daily_rows_only() -> None:
    name = "kafka_server_socket_server_metrics_failed_authentication_total"
    assert render(ROWS, "1d").text.splitlines()[2:] == [
        f'{name}{{broker="1",listener="SASL_SSL"}} 0.0 {T0}',
        f'{name}{{broker="1",listener="SASL_SSL"}} 6.0 {T0 + 24 * H - 1}',
        "# EOF",
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_row_order_gives_the_same_bytes(seed: int) -> None:
    shuffled = list(ROWS)
    random.Random(seed).shuffle(shuffled)
    assert render(shuffled, "1h").text == HOURLY


@pytest.mark.parametrize(
    "rows",
    [[], [_row("failed-authentication-total", 0, 6.0, window="1d")], [_row("made-up", 1, 1.0)]],
    ids=["no rows", "other window kind", "unknown metric only"],
)
def test_nothing_to_export_is_eof_alone(rows: list[dict[str, Any]]) -> None:
    export = render(rows, "1h")
    assert (export.text, export.families, export.series, export.samples) == ("# EOF\n", 0, 0, 0)
    assert _parse(export.text) == []


def test_label_values_from_the_logs_are_escaped() -> None:
    """A principal with quotes, a backslash, a newline, an ANSI escape, braces, a comma, a
    '#' and a bidi override stays one label value on one line: control and bidi characters
    shown escaped (jobs.neutralize.terminal), then OpenMetrics' own escapes."""
    evil = 'User:"a\\b\n}\x1b[31m,x="y" # \u202eé'
    text = render([_row("authorization-denied-rate-per-minute", 9, 0.5, principal=evil)], "1h").text
    sample = text.splitlines()[2]
    assert sample == (
        'kafka_server_plugins_authorization_denied_rate_per_minute{broker="1",principal='
        '"User:\\"a\\\\b\\\\x0a}\\\\x1b[31m,x=\\"y\\" # \\\\u202eé"} 0.5 '
        f"{T0 + 10 * H - 1}"
    )
    (family,) = _parse(text)
    assert family.samples[0].labels["principal"] == 'User:"a\\b\\x0a}\\x1b[31m,x="y" # \\u202eé'


@settings(max_examples=60, deadline=None)
@given(
    principal=st.text(min_size=1, max_size=30),
    counts=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=6),
)
def test_round_trip_any_principal_and_counts(principal: str, counts: list[int]) -> None:
    """Any principal and any hourly counts (hours 0, 2, 4, ...): the parser reads back the
    neutralized principal and the running sums after a 0 at the first window's start."""
    rows = [_row("forwarded-requests-total", 2 * i, float(c), principal=principal)
            for i, c in enumerate(counts)]  # fmt: skip
    (family,) = _parse(render(rows, "1h").text)
    sums = [sum(counts[: i + 1]) for i in range(len(counts))]
    assert [(s.labels, s.value, _sec(s.timestamp)) for s in family.samples] == [
        ({"broker": "1", "principal": terminal(principal)}, float(v), t)
        for v, t in zip(
            [0, *sums], [T0] + [T0 + (2 * i + 1) * H - 1 for i in range(len(counts))], strict=True
        )
    ]


def test_a_gauge_may_be_nan_a_counter_may_not() -> None:
    text = render([_row("reauthentication-latency-avg", 0, math.nan)], "1h").text
    assert (
        text.splitlines()[2]
        == f'kafka_server_socket_server_metrics_reauthentication_latency_avg{{broker="1"}} NaN {T0 + H - 1}'
    )
    (family,) = _parse(text)
    assert math.isnan(family.samples[0].value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1.0, "security_metrics has the count -1.0 for failed-authentication-total {'broker': '1'} in the window ending 2026-11-20T01:00:00Z: expected a number >= 0"),
        (math.nan, "security_metrics has the count nan for failed-authentication-total {'broker': '1'} in the window ending 2026-11-20T01:00:00Z: expected a number >= 0"),
        (math.inf, "security_metrics has the count inf for failed-authentication-total {'broker': '1'} in the window ending 2026-11-20T01:00:00Z: expected a number >= 0"),
    ],
)  # fmt: skip
def test_a_count_that_is_no_count_is_an_input_error(value: float, message: str) -> None:
    with pytest.raises(InputError) as raised:
        render([_row("failed-authentication-total", 0, value)], "1h")
    assert str(raised.value) == message


def test_two_values_for_one_window_is_an_input_error() -> None:
    """Two rows of one series and window (a table written twice, or '' and null in the same
    label) cannot both be exported: OpenMetrics has one value per series and time."""
    rows = [_row("failed-authentication-rate", 0, 1.0, listener=None),
            _row("failed-authentication-rate", 0, 2.0, listener="")]  # fmt: skip
    with pytest.raises(InputError) as raised:
        render(rows, "1h")
    assert str(raised.value) == (
        "security_metrics has two values for failed-authentication-rate {'broker': '1'} in the "
        "window ending 2026-11-20T01:00:00Z: rerun kafka-audit run for that day"
    )
