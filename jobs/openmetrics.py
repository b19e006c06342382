"""``kafka-audit export-metrics``: gold ``security_metrics`` as OpenMetrics text with timestamps,
for ``promtool tsdb create-blocks-from openmetrics`` (backfilling Prometheus from logs, next to
the live series the Prometheus JMX exporter scrapes from the brokers). docs/prometheus.md.

Names: Kafka's JMX attribute names become the names the JMX exporter gives them under the
Kafka rule set Strimzi shipped in ``kafka-metrics.yaml`` (``lowercaseOutputName: true``;
``kafka.server<type=(.+), listener=(.+), networkProcessor=(.+)><>(.+-total)`` ->
``kafka_server_$1_$4``, COUNTER; the same pattern for any other attribute, GAUGE), which is
also the exporter's default format (``domain_beanPropertyValue1_attrName``) with its character
sanitizing: ``failed-authentication-total`` of ``kafka.server:type=socket-server-metrics`` ->
``kafka_server_socket_server_metrics_failed_authentication_total``. Metrics Kafka does not have
(``reauthentication-latency-p99``, the KIP-590 forwarding counts) are named
``kafka_audit_<name>`` so they never pass for a broker's own series.

Reads with deltalake (``jobs.report.read_gold``), rendered by ``prometheus_client``'s
OpenMetrics exposition; no Spark.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from jobs.errors import InputError
from jobs.neutralize import terminal
from jobs.report import Row, Window, check_lake, read_gold
from schemas import security_metrics

TABLE = security_metrics.TABLE_NAME
#: security_metrics column -> label name, in the order they are read. Labels are written only
#: when the value is non-empty.
LABELS: tuple[tuple[str, str], ...] = (
    ("broker_id", "broker"),
    ("listener", "listener"),
    ("mechanism", "mechanism"),
    ("principal", "principal"),
    ("api_key_name", "api"),
)
#: Prefix of the metrics Kafka itself does not have.
OWN_PREFIX = "kafka_audit"
#: The MBean ``type`` of each Kafka metric group read here (docs/prometheus.md, mapping).
SOCKET_SERVER = "socket-server-metrics"
AUTHORIZER_PLUGIN = "plugins"


@dataclass(frozen=True)
class Family:
    """How one ``security_metrics.metric_name`` is exported.

    Attributes:
        metric: Kafka's JMX attribute name (or this project's, for its own metrics).
        name: The OpenMetrics family name (a counter's samples add ``_total``).
        kind: ``counter`` or ``gauge``.
        help: The HELP text.
        cumulative: The value is a running sum over the export's windows (Kafka's ``-total``
            and ``-count`` attributes are cumulative since broker start).
    """

    metric: str
    name: str
    kind: str
    help: str
    cumulative: bool


def jmx_exporter_name(domain: str, mbean_type: str, attribute: str) -> str:
    """The name the Prometheus JMX exporter gives an attribute under the Kafka rules
    (``kafka_server_$1_$4`` with ``lowercaseOutputName: true``), or its default format.

    Args:
        domain: The MBean's domain (``kafka.server``).
        mbean_type: Its ``type`` key (``socket-server-metrics``).
        attribute: The attribute (``failed-authentication-total``).

    Returns:
        ``domain_type_attribute`` lower-cased, each character outside ``[a-zA-Z0-9:_]`` made
        ``_`` and runs of ``_`` collapsed, as the exporter's ``safeName`` does:
        ``kafka_server_socket_server_metrics_failed_authentication_total``.
    """
    name = re.sub(r"[^a-zA-Z0-9:_]", "_", f"{domain}_{mbean_type}_{attribute}")
    return re.sub(r"_+", "_", name).lower()


def _kafka(mbean_type: str, attribute: str, help_text: str) -> Family:
    """A Kafka attribute: the rule set's COUNTER for ``-total``, GAUGE otherwise."""
    name = jmx_exporter_name("kafka.server", mbean_type, attribute)
    counter = attribute.endswith("-total")
    cumulative = counter or attribute.endswith("-count")
    return Family(attribute, name.removesuffix("_total") if counter else name,
                  "counter" if counter else "gauge", help_text, cumulative)  # fmt: skip


def _own(metric: str, kind: str, help_text: str) -> Family:
    name = re.sub(r"[^a-z0-9_]", "_", f"{OWN_PREFIX}_{metric}")
    counter = kind == "counter"
    return Family(metric, name.removesuffix("_total") if counter else name, kind, help_text,
                  counter)  # fmt: skip


_REPLAYED = " (replayed from broker logs by kafka-audit)"
_SINCE = " since the first window exported"
_SELECTOR_METERS = {
    "successful-authentication": "connections with successful authentication",
    "failed-authentication": "connections with failed authentication",
    "successful-reauthentication": "successful re-authentication of connections",
    "failed-reauthentication": "failed re-authentication of connections",
}


def _families() -> Iterator[Family]:
    # Selector.SelectorMetrics (group socket-server-metrics): Kafka's own description strings.
    for meter, what in _SELECTOR_METERS.items():
        yield _kafka(SOCKET_SERVER, f"{meter}-total", f"The total number of {what}{_SINCE}")
        yield _kafka(SOCKET_SERVER, f"{meter}-rate", f"The number of {what} per second")
    yield _kafka(SOCKET_SERVER, "successful-authentication-no-reauth-total",
                 "The total number of connections with successful authentication where the "
                 f"client does not support re-authentication{_SINCE}")  # fmt: skip
    for stat in ("max", "avg"):
        yield _kafka(SOCKET_SERVER, f"reauthentication-latency-{stat}",
                     f"The {'average' if stat == 'avg' else stat} latency observed due to "
                     "re-authentication, in milliseconds")  # fmt: skip
    yield _kafka(SOCKET_SERVER, "expired-connections-killed-count",
                 f"Connections closed at re-authentication expiry (KIP-368){_SINCE}")  # fmt: skip
    # StandardAuthorizer (KIP-877 plugin metrics, group plugins).
    for decision in ("allowed", "denied"):
        yield _kafka(AUTHORIZER_PLUGIN, f"authorization-{decision}-rate-per-minute",
                     f"The number of authorizations {decision} per minute")  # fmt: skip
    yield _own("reauthentication-latency-p99", "gauge",
               "The 99th percentile of re-authentication latency, in milliseconds")  # fmt: skip
    yield _own("forwarded-requests-total", "counter",
               f"Requests a broker forwarded to the controller (KIP-590){_SINCE}")  # fmt: skip
    yield _own("forwarding-failures-total", "counter",
               f"ENVELOPE requests the controller refused (KIP-590){_SINCE}")  # fmt: skip


#: security_metrics.metric_name -> its family (docs/prometheus.md has the table).
FAMILIES: Mapping[str, Family] = {
    f.metric: Family(f.metric, f.name, f.kind, f.help + _REPLAYED, f.cumulative)
    for f in _families()
}


@dataclass(frozen=True)
class Export:
    """An OpenMetrics exposition and what went into it.

    Attributes:
        text: The exposition, ending with ``# EOF``.
        families / series / samples: How many of each it holds.
        skipped: Metric names with no family (:data:`FAMILIES`) -> rows left out.
    """

    text: str
    families: int
    series: int
    samples: int
    skipped: Mapping[str, int]


SeriesKey = tuple[str, tuple[tuple[str, str], ...]]


def series_labels(row: Row) -> dict[str, str]:
    """The labels of one security_metrics row: ``broker``, ``listener``, ``mechanism``,
    ``principal`` and ``api``, each only when non-empty, values through
    :func:`jobs.neutralize.terminal` (control and bidi characters shown escaped: a value is
    one printable line wherever the exposition is read; OpenMetrics' own escaping of ``\\``,
    ``"`` and newlines is the exposition's)."""
    labels = {}
    for column, label in LABELS:
        value = row.get(column)
        if value is not None and str(value) != "":
            labels[label] = terminal(value)
    return labels


def _grouped(
    rows: Iterable[Row], window_kind: str
) -> tuple[dict[SeriesKey, list[Row]], Counter[str]]:
    """Rows of ``window_kind`` per (family name, labels); unknown metric names counted."""
    series: dict[SeriesKey, list[Row]] = {}
    skipped: Counter[str] = Counter()
    for row in rows:
        if row.get("window") != window_kind:
            continue
        family = FAMILIES.get(row["metric_name"])
        if family is None:
            skipped[terminal(row["metric_name"])] += 1
            continue
        key = (family.name, tuple(sorted(series_labels(row).items())))
        series.setdefault(key, []).append(row)
    return series, skipped


_ISO = "%Y-%m-%dT%H:%M:%SZ"


def _seconds(row: Row, column: str) -> int:
    return int(row[column].timestamp())


def series_points(
    family: Family, labels: Mapping[str, str], rows: Sequence[Row]
) -> list[tuple[int, float]]:
    """The (timestamp s, value) points of one series, oldest first.

    Each window's value is stamped at the last second of the window (end - 1 s): what JMX
    would have read at the window's close, inside the window it describes (PromQL's ``rate``
    and ``increase`` look back from their evaluation time). A cumulative family
    (:attr:`Family.cumulative`) gives the running sum of the window counts, starting with a 0
    at the start of its first window, so ``increase()`` counts the first window too; windows
    without a row add nothing (the table has no row for a window without events). Exports of
    consecutive days therefore never stamp the same instant: the next file's 0 is a counter
    reset, which ``rate`` and ``increase`` handle.

    Raises:
        InputError: two rows for the same window (a table written twice), or a cumulative
            value that is negative or not a number.
    """
    ordered = sorted(rows, key=lambda r: r["window_end_ts"])
    points: list[tuple[int, float]] = []
    total = 0.0
    for row in ordered:
        end = _seconds(row, "window_end_ts") - 1
        value = float(row["value"])
        shown = f"{family.metric} {dict(labels)} in the window ending {row['window_end_ts']:{_ISO}}"
        if points and points[-1][0] == end:
            raise InputError(
                f"{TABLE} has two values for {shown}: rerun kafka-audit run for that day"
            )
        if not family.cumulative:
            points.append((end, value))
            continue
        if not math.isfinite(value) or value < 0:
            raise InputError(f"{TABLE} has the count {value} for {shown}: expected a number >= 0")
        if not points:
            points.append((_seconds(row, "window_start_ts"), 0.0))
        total += value
        points.append((end, total))
    return points


class _Families(Collector):
    """prometheus_client's custom collector of finished metric families."""

    def __init__(self, metrics: Sequence[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics


def render(rows: Iterable[Row], window_kind: str) -> Export:
    """security_metrics rows as an OpenMetrics exposition.

    Args:
        rows: security_metrics rows as dicts (``jobs.report.read_gold``): timestamps aware
            UTC datetimes; other window kinds are left out.
        window_kind: ``1h`` or ``1d``: one resolution per file (the two are the same events
            counted twice).

    Returns:
        The exposition: one family per metric name (:data:`FAMILIES`), families by name,
        series by their sorted labels, samples by timestamp (whole seconds), so the same rows
        give the same bytes in any order; ``# EOF`` alone when there is nothing to export.

    Raises:
        InputError: see :func:`series_points`.
    """
    grouped, skipped = _grouped(rows, window_kind)
    by_name = {f.name: f for f in FAMILIES.values()}
    metrics: dict[str, Metric] = {}
    samples = 0
    for name, labels in sorted(grouped):
        family = by_name[name]
        if name not in metrics:
            metrics[name] = Metric(name, family.help, family.kind)
        metric = metrics[name]
        sample_name = f"{name}_total" if family.kind == "counter" else name
        for timestamp, value in series_points(family, dict(labels), grouped[(name, labels)]):
            metric.add_sample(sample_name, dict(labels), value, timestamp=timestamp)
            samples += 1
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(list(metrics.values())))
    # prometheus_client leaves generate_latest unannotated; it returns the exposition's bytes.
    text = generate_latest(registry).decode("utf-8")  # type: ignore[no-untyped-call]
    return Export(text, len(metrics), len(grouped), samples, dict(sorted(skipped.items())))


def export_metrics(lake: str, window: Window, window_kind: str) -> Export:
    """The exposition of a lake's security_metrics in ``window``.

    Args:
        lake: Lake root (local path or ``file://`` URI).
        window: UTC days of the ``window_date`` partitions to read (``jobs.report.Window``).
        window_kind: ``1h`` or ``1d``.

    Returns:
        See :func:`render`.

    Raises:
        InputError: the lake or its security_metrics table is missing; see
            :func:`series_points`.
    """
    check_lake(lake, [TABLE])
    rows = read_gold(lake, TABLE, security_metrics.PARTITION_COLUMNS[0], window)
    return render(rows, window_kind)
