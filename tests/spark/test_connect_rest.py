"""transforms.silver.connect.rest: Connect REST access-log lines -> silver.connect_requests rows."""

from __future__ import annotations

import datetime as dt
import ipaddress
import string

from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.spark.test_connect import REST, assert_rows, parse_rest
from tests.support.bronze_rows import Record
from transforms.silver.connect.rest import is_connect_rest_record

VARIANT_COLUMNS = (
    "line_number", "kafka_versions", "client_address", "remote_user", "request_ts",
    "http_method", "uri_path", "query", "status", "response_bytes", "referer", "user_agent",
    "latency_ms", "access_log_format", "connector_name", "endpoint_kind", "reason_code",
)  # fmt: skip


def test_layouts_of_every_version(spark: SparkSession) -> None:
    messages = [
        # <=2.3 Slf4jRequestLog: an authenticated user; '-' length is written ' - ' (two spaces follow).
        '172.19.0.1 - alice [16/Feb/2019:12:42:29 +0000] "GET /connectors HTTP/1.1" 200 13  1',
        '172.19.0.1 - - [16/Feb/2019:12:42:30 +0000] "DELETE /connectors/old-sink HTTP/1.1" 204 -  7',
        # 2.4-3.0: '%msT' is %m (the method) + 'sT'; no latency.
        '10.0.0.5 - - [05/Mar/2021:10:00:00 +0000] "GET /connectors/s3-sink/status HTTP/1.1" 200 170 "-" "curl/7.68.0" GETsT',
        '10.0.0.5 - - [05/Mar/2021:10:00:01 +0000] "POST /connectors/s3-sink/restart?includeTasks=true HTTP/1.1" 202 0 "http://ui.local/" "Mozilla/5.0 (X11; Linux)" POSTsT',
        # 3.1+; a %t rendered in another zone is converted by its offset.
        '10.0.0.6 - - [01/Jan/2024:01:30:00 +0200] "GET /connectors?expand=status&expand=info HTTP/1.1" 200 2048 "-" "python-requests/2.31" 12',
        '10.0.0.6 - - [01/Jan/2024:00:00:00 +0000] "PUT /admin/loggers/org.apache.kafka.connect HTTP/1.1" 200 44 "-" "curl/8.5.0" 3',
    ]  # fmt: skip
    parsed = parse_rest(spark, [Record("INFO", REST, m) for m in messages])
    old, typo, new = "ncsa_latency", "extended_ncsa_typo", "extended_ncsa_latency"
    expected = [
        (1, "<=2.3", "172.19.0.1", "alice", dt.datetime(2019, 2, 16, 12, 42, 29), "GET", "/connectors", None, 200, 13, None, None, 1, old, None, "connectors", None),
        (2, "<=2.3", "172.19.0.1", None, dt.datetime(2019, 2, 16, 12, 42, 30), "DELETE", "/connectors/old-sink", None, 204, None, None, None, 7, old, "old-sink", "connectors", None),
        (3, "2.4-3.0", "10.0.0.5", None, dt.datetime(2021, 3, 5, 10, 0, 0), "GET", "/connectors/s3-sink/status", None, 200, 170, None, "curl/7.68.0", None, typo, "s3-sink", "connectors", None),
        (4, "2.4-3.0", "10.0.0.5", None, dt.datetime(2021, 3, 5, 10, 0, 1), "POST", "/connectors/s3-sink/restart", "includeTasks=true", 202, 0, "http://ui.local/", "Mozilla/5.0 (X11; Linux)", None, typo, "s3-sink", "connectors", None),
        (5, "3.1+", "10.0.0.6", None, dt.datetime(2023, 12, 31, 23, 30, 0), "GET", "/connectors", "expand=status&expand=info", 200, 2048, None, "python-requests/2.31", 12, new, None, "connectors", None),
        (6, "3.1+", "10.0.0.6", None, dt.datetime(2024, 1, 1, 0, 0, 0), "PUT", "/admin/loggers/org.apache.kafka.connect", None, 200, 44, None, "curl/8.5.0", 3, new, None, "other", None),
    ]  # fmt: skip
    assert_rows(spark, parsed, VARIANT_COLUMNS, expected)


INTERNAL_COLUMNS = (
    "line_number", "client_address", "http_method", "status", "user_agent", "connector_name",
    "endpoint_kind", "is_internal_endpoint", "is_forwarded_request", "forward_param",
    "validated_param", "reason_code",
)  # fmt: skip


def test_internal_endpoints_statuses_and_forwarding(spark: SparkSession) -> None:
    # Section 8.3: 200 accepted, 400 missing signature / algorithm, 503 no session key yet,
    # 403 invalid signature. A worker's RestClient says 'kafka-connect'; curl is someone else.
    line = '{ip} - - [09/Jun/2024:08:00:00 +0000] "{method} {uri} HTTP/1.1" {status} 70 "-" "{agent}" 4'
    cases = [
        ("10.1.0.2", "POST", "/connectors/jdbc-sink/tasks", 200, "kafka-connect"),
        ("10.1.0.2", "POST", "/connectors/jdbc-sink/tasks", 400, "kafka-connect"),
        ("10.1.0.3", "POST", "/connectors/jdbc-sink/tasks", 503, "kafka-connect"),
        ("10.1.0.9", "POST", "/connectors/jdbc-sink/tasks", 403, "curl/8.5.0"),
        ("10.1.0.2", "PUT", "/connectors/jdbc-source/fence", 200, "kafka-connect"),
        ("10.1.0.9", "PUT", "/connectors/jdbc-source/fence", 403, "python-requests/2.31"),
        ("10.1.0.2", "POST", "/connectors/jdbc-sink/tasks?forward=false", 200, "kafka-connect"),
        ("10.1.0.2", "PUT", "/connectors/jdbc-sink/config?forward=true&validated=true", 200, "kafka-connect"),
        ("10.1.0.9", "GET", "/connectors/jdbc-sink/tasks", 200, "curl/8.5.0"),
        ("10.1.0.9", "GET", "/connectors/jdbc-sink/fence", 405, "curl/8.5.0"),
        ("10.1.0.9", "POST", "/connectors/my%20sink%2Bv2/tasks/", 403, "curl/8.5.0"),
    ]  # fmt: skip
    messages = [line.format(ip=i, method=m, uri=u, status=s, agent=a) for i, m, u, s, a in cases]
    # <=2.3 has no user agent: only the method and path tell an internal request.
    messages.append(
        '10.1.0.2 - - [09/Jun/2019:08:00:00 +0000] "POST /connectors/jdbc-sink/tasks HTTP/1.1" 403 61  2'
    )
    parsed = parse_rest(spark, [Record("INFO", REST, m) for m in messages])
    tasks, fence, kc = "internal_tasks", "internal_fence", "kafka-connect"
    expected = [
        (1, "10.1.0.2", "POST", 200, kc, "jdbc-sink", tasks, True, True, None, None, None),
        (2, "10.1.0.2", "POST", 400, kc, "jdbc-sink", tasks, True, True, None, None, None),
        (3, "10.1.0.3", "POST", 503, kc, "jdbc-sink", tasks, True, True, None, None, None),
        (4, "10.1.0.9", "POST", 403, "curl/8.5.0", "jdbc-sink", tasks, True, False, None, None, None),
        (5, "10.1.0.2", "PUT", 200, kc, "jdbc-source", fence, True, True, None, None, None),
        (6, "10.1.0.9", "PUT", 403, "python-requests/2.31", "jdbc-source", fence, True, False, None, None, None),
        (7, "10.1.0.2", "POST", 200, kc, "jdbc-sink", tasks, True, True, False, None, None),
        (8, "10.1.0.2", "PUT", 200, kc, "jdbc-sink", "connectors", False, True, True, True, None),
        (9, "10.1.0.9", "GET", 200, "curl/8.5.0", "jdbc-sink", "connectors", False, False, None, None, None),
        (10, "10.1.0.9", "GET", 405, "curl/8.5.0", "jdbc-sink", "connectors", False, False, None, None, None),
        (11, "10.1.0.9", "POST", 403, "curl/8.5.0", "my sink+v2", tasks, True, False, None, None, None),
        (12, "10.1.0.2", "POST", 403, None, "jdbc-sink", tasks, True, False, None, None, None),
    ]  # fmt: skip
    assert_rows(spark, parsed, INTERNAL_COLUMNS, expected)


def test_malformed_lines_get_reason_codes(spark: SparkSession) -> None:
    ok = '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 91 "-" "curl/8" 3'
    cases = [
        (ok, None),
        (None, "missing_field_message"),
        ("  ", "missing_field_message"),
        (ok[:-2], "connect_rest_truncated_line"),  # cut before the latency
        (ok[:40], "connect_rest_truncated_line"),  # cut inside the date
        ('10.0.0.1 - - [21/Sep/2017:11:51:41 +0000] "POST /connectors HTTP/1.1" 500 48', "connect_rest_truncated_line"),
        ("[0:0:0:0:0:0:0:1] -", "connect_rest_truncated_line"),
        ("REST server listening at http://10.0.0.1:8083/, advertising URL http://connect-0:8083/", "connect_rest_unrecognized_format"),
        (ok.replace('"GET / HTTP/1.1"', '"GET /"'), "connect_rest_bad_request_line"),
        (ok.replace(" 200 ", " 2x0 "), "connect_rest_bad_status"),
        (ok.replace(" 200 ", " 1000 "), "connect_rest_bad_status"),
        (ok.replace(" 200 ", " 099 "), "connect_rest_bad_status"),
        (ok[:-1] + "3ms", "connect_rest_bad_latency"),
        (ok.replace("01/Jan/2024", "32/Jan/2024"), "connect_rest_bad_timestamp"),
        (ok.replace("Jan", "Januar"), "connect_rest_bad_timestamp"),
        (ok.replace(" +0000]", "]"), "connect_rest_bad_timestamp"),
    ]  # fmt: skip
    parsed = parse_rest(spark, [Record("INFO", REST, m) for m, _ in cases])
    # Every rejected row says why; cut lines are claimed, the server's own messages are not.
    assert parsed.where(F.col("reason_code").isNull() != F.col("reason_detail").isNull()).isEmpty()
    claimed = is_connect_rest_record(F.col("logger"), F.col("message")).alias("claimed")
    actual = parsed.select("line_number", "reason_code", claimed)
    unclaimed = {"missing_field_message", "connect_rest_unrecognized_format"}
    expected = [(i, code, code not in unclaimed) for i, (_, code) in enumerate(cases, 1)]
    assert_rows(spark, actual, ("line_number", "reason_code", "claimed"), expected)


def test_ipv6_clients(spark: SparkSession) -> None:
    messages = [
        '[0:0:0:0:0:0:0:1] - - [14/Oct/2024:00:49:02 +0000] "GET /connectors HTTP/1.1" 200 2 "-" "curl/8" 1',
        '[2001:db8:0:0:0:0:0:7] - - [14/Oct/2024:00:49:03 +0000] "POST /connectors/a/tasks HTTP/1.1" 403 70 "-" "kafka-connect" 2',
        '[fe80:0:0:0:0:0:0:1%eth0] - - [14/Oct/2024:00:49:04 +0000] "GET / HTTP/1.1" 200 91 "-" "-" 0',
    ]  # fmt: skip
    parsed = parse_rest(spark, [Record("INFO", REST, m) for m in messages])
    expected = [
        (1, "0:0:0:0:0:0:0:1", "curl/8", "connectors", None),
        (2, "2001:db8:0:0:0:0:0:7", "kafka-connect", "internal_tasks", None),
        (3, "fe80:0:0:0:0:0:0:1%eth0", None, "root", None),
    ]
    columns = ("line_number", "client_address", "user_agent", "endpoint_kind", "reason_code")
    assert_rows(spark, parsed, columns, expected)
    claimed = parsed.select(is_connect_rest_record(F.col("logger"), F.col("message")).alias("c"))
    assert_df_equality(
        claimed, spark.createDataFrame([(True,)] * 3, "c boolean"), ignore_nullable=True
    )


def test_is_connect_rest_record(spark: SparkSession) -> None:
    rows = [
        (REST, '172.30.0.1 - - [21/Sep/2017:11:51:41 +0000] "POST /connectors HTTP/1.1" 500 48  90011', True),
        (REST + ":62", '[0:0:0:0:0:0:0:1] - - [14/Oct/2024:00:49:02 +0000] "GET / HTTP/1.1" 200 9 "-" "x" 5', True),
        (REST, "connect-0.connect.svc - bob [14/Oct/2024:00:49", True),
        (REST, "172.30.0.1 -", True),
        (REST, "REST server listening at http://10.0.0.1:8083/, advertising URL http://c:8083/", False),
        (REST, "Advertised URI: http://connect-0:8083/", False),
        (REST, "Initializing REST server", False),
        (REST, "REST resources initialized; server is started and ready to handle requests", False),
        (REST, None, False),
        ("org.apache.kafka.connect.runtime.rest.RestClient", '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 9 "-" "x" 5', False),
        (None, '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 9 "-" "x" 5', False),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "logger string, message string, expected boolean")
    actual = df.select(is_connect_rest_record(F.col("logger"), F.col("message")).alias("claimed"))
    expected = df.select(F.col("expected").alias("claimed"))
    assert_df_equality(actual, expected, ignore_nullable=True)


# Hypothesis round trip of the 3.1+ layout: render Jetty's EXTENDED_NCSA_FORMAT + " %{ms}T".
_NAME = string.ascii_letters + string.digits + "._-"
_PATHS = ("/", "/connectors", "/connectors/{n}", "/connectors/{n}/config", "/connectors/{n}/tasks",
          "/connectors/{n}/fence", "/connector-plugins/{n}/config/validate", "/admin/loggers")  # fmt: skip
_QUERIES = (
    "",
    "?forward=true",
    "?forward=false",
    "?expand=status",
    "?forward=true&validated=false",
)
ROUND_TRIP_COLUMNS = (
    "line_number", "client_address", "remote_user", "request_ts", "http_method", "uri",
    "uri_path", "query", "status", "response_bytes", "referer", "user_agent", "latency_ms",
    "access_log_format", "connector_name", "endpoint_kind", "is_internal_endpoint",
    "is_forwarded_request", "forward_param", "validated_param", "reason_code",
)  # fmt: skip


def _kind(method: str, path: str) -> str:
    if path == "/":
        return "root"
    if path.startswith("/connector-plugins"):
        return "connector_plugins"
    if method == "POST" and path.endswith("/tasks") and path.count("/") == 3:
        return "internal_tasks"
    if method == "PUT" and path.endswith("/fence") and path.count("/") == 3:
        return "internal_fence"
    return "connectors" if path.startswith("/connectors") else "other"


@st.composite
def access_lines(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    """(message, expected row without line_number) for one rendered 3.1+ access line."""
    ip = draw(st.ip_addresses())
    # Jetty prints InetAddress.getHostAddress: IPv6 uncompressed, in brackets.
    host = (
        str(ip)
        if ip.version == 4
        else ":".join(f"{int(h, 16):x}" for h in ipaddress.IPv6Address(ip).exploded.split(":"))
    )
    client = host if ip.version == 4 else f"[{host}]"
    user = draw(st.one_of(st.just("-"), st.text(_NAME + "@", min_size=1, max_size=12)))
    when = draw(st.datetimes(dt.datetime(2019, 1, 1), dt.datetime(2030, 12, 31))).replace(
        microsecond=0
    )
    method = draw(st.sampled_from(("GET", "POST", "PUT", "DELETE", "PATCH")))
    name = draw(st.text(_NAME, min_size=1, max_size=20))
    path = draw(st.sampled_from(_PATHS)).format(n=name)
    query = draw(st.sampled_from(_QUERIES))
    status, size = draw(st.integers(100, 599)), draw(st.integers(0, 10**9))
    referer = draw(st.sampled_from(("-", "http://ui.example/connectors", "https://a.b/?q=1")))
    agent = draw(
        st.one_of(
            st.sampled_from(("-", "kafka-connect")),
            st.text(string.printable.strip() + ' "', min_size=1, max_size=30)
            .map(str.strip)
            .filter(bool),
        )
    )
    latency = draw(st.integers(0, 10**7))
    message = f'{client} - {user} [{when:%d/%b/%Y:%H:%M:%S} +0000] "{method} {path}{query} HTTP/1.1" {status} {size} "{referer}" "{agent}" {latency}'
    flags = dict(p.split("=") for p in query[1:].split("&")) if query else {}
    kind = _kind(method, path)
    return message, (
        host, None if user == "-" else user, when, method, path + query, path, query[1:] or None,
        status, size, None if referer == "-" else referer, None if agent == "-" else agent, latency,
        "extended_ncsa_latency", name if path.startswith("/connectors/") else None, kind,
        kind.startswith("internal"), "forward" in flags or agent == "kafka-connect",
        {"true": True, "false": False}.get(flags.get("forward", "")),
        {"true": True, "false": False}.get(flags.get("validated", "")), None,
    )  # fmt: skip


# Few examples, each one DataFrame of up to 30 rendered lines: 3 Spark jobs.
@settings(max_examples=3, deadline=None)
@given(st.lists(access_lines(), min_size=10, max_size=30))
def test_round_trip_rendered_access_lines(
    spark: SparkSession, lines: list[tuple[str, tuple[object, ...]]]
) -> None:
    parsed = parse_rest(spark, [Record("INFO", REST, message) for message, _ in lines])
    expected = [(i, *row) for i, (_, row) in enumerate(lines, 1)]
    assert_rows(spark, parsed, ROUND_TRIP_COLUMNS, expected)
