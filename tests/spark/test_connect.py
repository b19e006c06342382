"""transforms.silver.connect.claims: every line of the Connect samples, the claims, the contract, shared columns.

Also the shared helpers of tests/spark/test_connect_rest.py and tests/spark/test_connect_worker.py.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path

from chispa import assert_df_equality
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

from schemas.connect_requests import CONNECT_REQUESTS
from schemas.quarantine import QUARANTINE
from schemas.raw_lines import FAMILY_CONNECT_REST, FAMILY_CONNECT_WORKER
from tests.support.bronze_rows import Record, bronze_df
from transforms.columns import lookup
from transforms.quarantine import parsed_rows, quarantine_rows
from transforms.silver.connect.claims import (
    is_connect_rest_record,
    is_connect_worker_record,
    parse_connect_rest,
    parse_connect_worker,
)
from transforms.silver.connect.rest import (
    client_address,
    connector_in_path,
    endpoint_kind,
    is_internal_endpoint,
    query_flag,
    request_path,
    request_query,
)

REST = "org.apache.kafka.connect.runtime.rest.RestServer"
HERDER = "org.apache.kafka.connect.runtime.distributed.DistributedHerder"
REST_CLIENT = "org.apache.kafka.connect.runtime.rest.RestClient"
MAPPER = "org.apache.kafka.connect.runtime.rest.errors.ConnectExceptionMapper"
WORKER = "[Worker clientId=connect-1:8083, groupId=connect-cluster] "

_TYPES = {f.name: f.dataType for f in CONNECT_REQUESTS.fields}
_TYPES |= {"line_number": LongType(), "reason_code": StringType(), "claimed": BooleanType()}


def assert_rows(
    spark: SparkSession,
    parsed: DataFrame,
    columns: Sequence[str],
    rows: Sequence[tuple[object, ...]],
) -> None:
    """Whole-frame comparison in line order against rows typed like CONNECT_REQUESTS.

    Nullability is ignored on purpose: the parse output is an intermediate; the table contract
    is tested through parsed_rows below."""
    schema = StructType([StructField(c, _TYPES[c], True) for c in columns])
    actual = parsed.select(*columns).orderBy("line_number")
    assert_df_equality(actual, spark.createDataFrame(rows, schema), ignore_nullable=True)


def parse_rest(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_connect_rest(bronze_df(spark, records, FAMILY_CONNECT_REST))


def parse_worker(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_connect_worker(bronze_df(spark, records, FAMILY_CONNECT_WORKER))


# A log4j header after an optional container prefix: '[ts] LEVEL msg (logger[:line])' or
# Strimzi 'ts LEVEL msg (logger) [thread]'. Lines without one continue the previous record.
_HEADER = re.compile(
    r"^.*?\[?\d{4}-\d{2}-\d{2} [\d:,]+\]? (?P<level>[A-Z]+) (?P<message>.*?)"
    r" \((?P<logger>[^()\s:]+)(?::\d+)?\)(?: \[(?P<thread>.*)\])?$"
)


def sample_records(path: Path, log_ts: dict[int, dt.datetime]) -> list[tuple[int, Record]]:
    """(line number, Record) per record of a sample file, folded as bronze folds them: '#' lines
    skipped, header-less lines joined into the previous record's continuation. ``log_ts`` is
    the UTC time bronze derives from each header line and the source's declared zone."""
    records: list[tuple[int, Record]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _HEADER.match(line)
        if match is None:
            start, record = records[-1]
            more = f"{record.continuation}\n{line}" if record.continuation else line
            records[-1] = (start, record._replace(continuation=more))
            continue
        level, message, logger, thread = match.group("level", "message", "logger", "thread")
        records.append((number, Record(level, logger, message, thread, None, log_ts[number])))
    return records


def sample_df(
    spark: SparkSession, path: Path, log_ts: dict[int, dt.datetime], family: str
) -> DataFrame:
    numbers, records = zip(*sample_records(path, log_ts), strict=True)
    return bronze_df(spark, records, family, numbers)


def claims() -> tuple[Column, Column]:
    """Both Connect claims on a bronze frame's logger and message."""
    logger, message = F.col("logger"), F.col("message")
    return (
        is_connect_rest_record(logger, message).alias("rest_claimed"),
        is_connect_worker_record(logger, message).alias("worker_claimed"),
    )


REST_SAMPLE_COLUMNS = (
    "line_number", "event_ts", "record_kind", "kafka_versions", "client_address", "remote_user",
    "request_ts", "http_method", "uri", "uri_path", "query", "http_protocol", "status",
    "response_bytes", "referer", "user_agent", "latency_ms", "access_log_format",
    "connector_name", "endpoint_kind", "is_internal_endpoint", "is_forwarded_request",
    "forward_param", "validated_param", "event_date", "reason_code",
)  # fmt: skip


def test_every_rest_access_sample_line(spark: SparkSession, samples_dir: Path) -> None:
    # log_ts as bronze derives it: line 8's worker runs at +05:30, the others at UTC. request_ts
    # is Jetty's GMT request start, so it differs from event_ts by the latency (line 5: 90 s).
    log_ts = {
        5: dt.datetime(2017, 9, 21, 11, 53, 11, 530000),
        8: dt.datetime(2024, 10, 14, 0, 49, 2, 289000),
        11: dt.datetime(2025, 2, 16, 8, 46, 34, 213000),
        14: dt.datetime(2025, 5, 6, 6, 8, 24, 950000),
    }
    bronze = sample_df(spark, samples_dir / "connect-rest-access.log", log_ts, FAMILY_CONNECT_REST)
    parsed = parse_connect_rest(bronze)
    plugin = "/connector-plugins/io.debezium.connector.postgresql.PostgresConnector/config/validate"
    expected = [
        (5, log_ts[5], "rest_access", "<=2.3", "172.30.0.1", None, dt.datetime(2017, 9, 21, 11, 51, 41), "POST", "/connectors", "/connectors", None, "HTTP/1.1", 500, 48, None, None, 90011, "ncsa_latency", None, "connectors", False, False, None, None, dt.date(2017, 9, 21), None),
        (8, log_ts[8], "rest_access", "3.1+", "0:0:0:0:0:0:0:1", None, dt.datetime(2024, 10, 14, 0, 49, 2), "POST", plugin, plugin, None, "HTTP/1.1", 405, 58, None, "PostmanRuntime/7.42.0", 5, "extended_ncsa_latency", None, "connector_plugins", False, False, None, None, dt.date(2024, 10, 14), None),
        (11, log_ts[11], "rest_access", "3.1+", "172.18.0.1", None, dt.datetime(2025, 2, 16, 8, 46, 34), "PUT", "/connectors/pg-connector/config", "/connectors/pg-connector/config", None, "HTTP/1.1", 200, 778, None, "curl/7.88.1", 21, "extended_ncsa_latency", "pg-connector", "connectors", False, False, None, None, dt.date(2025, 2, 16), None),
        (14, log_ts[14], "rest_access", "3.1+", "172.25.1.8", None, dt.datetime(2025, 5, 6, 6, 8, 24), "GET", "/", "/", None, "HTTP/1.1", 200, 91, None, "kube-probe/1.31", 1, "extended_ncsa_latency", None, "root", False, False, None, None, dt.date(2025, 5, 6), None),
    ]  # fmt: skip
    assert_rows(spark, parsed, REST_SAMPLE_COLUMNS, expected)
    actual = parsed.select("line_number", *claims()).orderBy("line_number")
    schema = "line_number long, rest_claimed boolean, worker_claimed boolean"
    claimed = spark.createDataFrame([(n, True, False) for n in log_ts], schema)
    assert_df_equality(actual, claimed, ignore_nullable=True)


WORKER_SAMPLE_COLUMNS = (
    "line_number", "event_ts", "level", "record_kind", "event_type", "kafka_versions",
    "worker_client_id", "worker_group_id", "mdc_connector", "mdc_task", "connector_name",
    "target_url", "uri_path", "query", "endpoint_kind", "is_internal_endpoint",
    "is_forwarded_request", "forward_param", "validated_param", "forward_failure_kind",
    "exception_class", "exception_message", "signature_failure_code", "reason_code",
)  # fmt: skip


def test_every_worker_sample_line(spark: SparkSession, samples_dir: Path) -> None:
    log_ts = {
        5: dt.datetime(2025, 12, 19, 22, 9, 58, 628000),
        8: dt.datetime(2026, 3, 4, 11, 29, 22, 368000),
    }
    bronze = sample_df(spark, samples_dir / "connect-worker.log", log_ts, FAMILY_CONNECT_WORKER)
    parsed = parse_connect_worker(bronze)
    url = "http://connect:8083/connectors/filestream-sink/config?forward=true&validated=false"
    expected = [
        # 'tasks , retrying': the connector name was removed by the reporter (section 11).
        (5, log_ts[5], "ERROR", "worker_event", "reconfigure_retry", "3.5+", "connect-240.2.43.153:3000", "kafka-connect-cluster-production", None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None),
        (8, log_ts[8], "ERROR", "worker_event", "forward_failed", "3.9+", None, None, None, None, "filestream-sink", url, "/connectors/filestream-sink/config", "forward=true&validated=false", "connectors", False, True, True, False, "error", "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException", "Cannot complete request because of a conflicting operation (e.g. worker rebalance)", None, None),
    ]  # fmt: skip
    assert_rows(spark, parsed, WORKER_SAMPLE_COLUMNS, expected)
    actual = parsed.select("line_number", "line_count", *claims()).orderBy("line_number")
    schema = "line_number long, line_count int, rest_claimed boolean, worker_claimed boolean"
    claimed = spark.createDataFrame([(5, 1, False, True), (8, 2, False, True)], schema)
    assert_df_equality(actual, claimed, ignore_nullable=True)


def test_both_kinds_split_into_the_table_and_quarantine(spark: SparkSession) -> None:
    rest = parse_rest(spark, [
        Record("INFO", REST, '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 91 "-" "curl/8" 3', log_ts=dt.datetime(2024, 1, 1, 0, 0, 1)),
        Record("INFO", REST, '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTT'),
    ])  # fmt: skip
    worker = parse_worker(spark, [
        Record("INFO", HERDER, WORKER + "Session key updated", log_ts=dt.datetime(2024, 1, 1, 0, 0, 2)),
        Record("INFO", HERDER, None),
    ])  # fmt: skip
    both = rest.unionByName(worker)
    table = parsed_rows(both, CONNECT_REQUESTS)
    assert table.schema == CONNECT_REQUESTS
    expected_table = [
        (1, "rest_access", None, 200, "root", dt.date(2024, 1, 1)),
        (1, "worker_event", "session_key_updated", None, None, dt.date(2024, 1, 1)),
    ]
    columns = ("line_number", "record_kind", "event_type", "status", "endpoint_kind", "event_date")
    schema = StructType([StructField(c, _TYPES[c], True) for c in columns])
    assert_df_equality(
        table.select(*columns).orderBy("record_kind"),
        spark.createDataFrame(expected_table, schema),
        ignore_nullable=True,
    )
    quarantine = quarantine_rows(both)
    assert quarantine.schema == QUARANTINE
    assert_df_equality(
        quarantine.select("line_number", "family", "reason_code").orderBy("family"),
        spark.createDataFrame(
            [
                (2, "connect_rest", "connect_rest_truncated_line"),
                (2, "connect_worker", "missing_field_message"),
            ],
            "line_number long, family string, reason_code string",
        ),
        ignore_nullable=True,
    )


def test_column_functions_including_nulls(spark: SparkSession) -> None:
    rows = [
        ("[::1]", "POST", "/connectors/a%2Fb/tasks?forward=TRUE&validated=false", "3.1+"),
        ("10.0.0.1", "PUT", "http://leader:8083/connectors/x/fence?forward=maybe", "<=2.3"),
        ("-", "GET", "/connectors/x/fence#frag", "other"),
        ("h.example", "DELETE", "/", None),
        (None, None, None, None),
    ]
    df = spark.createDataFrame(rows, "client string, method string, uri string, versions string")
    c, path = F.col, request_path(F.col("uri"))
    actual = df.select(
        client_address(c("client")).alias("client"),
        path.alias("path"),
        request_query(c("uri")).alias("query"),
        query_flag(request_query(c("uri")), "forward").alias("forward"),
        query_flag(request_query(c("uri")), "validated").alias("validated"),
        connector_in_path(path, decode=True).alias("decoded"),
        connector_in_path(path, decode=False).alias("raw_name"),
        endpoint_kind(c("method"), path).alias("kind"),
        is_internal_endpoint(endpoint_kind(c("method"), path)).alias("internal"),
        lookup({"3.1+": "new", "<=2.3": "old"}, c("versions")).alias("looked_up"),
    )
    expected = spark.createDataFrame(
        [
            ("::1", "/connectors/a%2Fb/tasks", "forward=TRUE&validated=false", True, False, "a/b", "a%2Fb", "internal_tasks", True, "new"),
            ("10.0.0.1", "/connectors/x/fence", "forward=maybe", None, None, "x", "x", "internal_fence", True, "old"),
            (None, "/connectors/x/fence", None, None, None, "x", "x", "connectors", False, None),
            ("h.example", "/", None, None, None, None, None, "root", False, None),
            (None, None, None, None, None, None, None, None, None, None),
        ],
        "client string, path string, query string, forward boolean, validated boolean, "
        "decoded string, raw_name string, kind string, internal boolean, looked_up string",
    )  # fmt: skip
    assert_df_equality(actual, expected, ignore_nullable=True)
