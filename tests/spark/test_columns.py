"""transforms.columns.groups (one regex evaluation for many groups), rest_of, the trim tests,
the string form's text before its metrics, its top-level error code and the error codes found
in a response, each against the slow, obviously right form it replaces."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from transforms.columns import (
    LineFormat,
    ends_before_spaces,
    first_format,
    format_fields,
    group,
    group_at,
    groups,
    rest_of,
    starts_after_spaces,
)
from transforms.silver.auth.parse import _FORMATS as AUTH_FORMATS
from transforms.silver.connect.worker import _FORMATS as WORKER_FORMATS
from transforms.silver.request_log.parse import (
    CONNECTION_ID_RE,
    PREFIX,
    _log_format,
    connection_groups,
    connection_parts,
    found_error_codes,
)
from transforms.silver.request_log.string_form import (
    HEADER_RE,
    METRICS_RE,
    split_string_form,
    string_form_struct,
    struct_top_level_error_code,
)

TAIL = (
    "10.0.0.1:9092-10.0.0.2:5000-7;totalTime:1.5,requestQueueTime:0.1,localTime:1.0,"
    "remoteTime:0.0,throttleTime:0,responseQueueTime:0.1,sendTime:0.2,securityProtocol:SASL_SSL,"
    "principal:User:CN=a,OU=b,listener:EXTERNAL"
)
TEXTS = [
    TAIL,
    TAIL + ",clientInformation:ClientInformation(softwareName=apache-kafka-java, "
    "softwareVersion=2.7.0),temporaryMemoryBytes:12",
    TAIL.replace("User:CN=a", "User:\u0001odd"),  # the separator itself: the fallback path
    TAIL.replace("totalTime:1.5", "totalTime:"),  # an empty group
    # Java's $ matches before a final line terminator: what follows the match is not a group.
    TAIL + "\n",
    TAIL + "\u2028",
    "not metrics at all",
    "",
    None,
]


def _assert_groups_equal_group(df: DataFrame, name: str, regex: str, count: int) -> Column:
    """Assert that every ``group_at`` of ``groups`` equals ``group`` on each row of ``df``
    (keyed by ``id``); return the ``groups`` column."""
    found = groups(F.col(name), regex, count)
    fast = df.select("id", *[group_at(found, i).alias(f"g{i}") for i in range(1, count + 1)])
    slow = df.select(
        "id", *[group(F.col(name), regex, i).alias(f"g{i}") for i in range(1, count + 1)]
    )
    assert_df_equality(fast, slow, ignore_nullable=True)
    return found


def test_groups_equal_one_regexp_extract_per_group(spark: SparkSession) -> None:
    df = spark.createDataFrame([(i, t) for i, t in enumerate(TEXTS)], "id int, text string")
    found = _assert_groups_equal_group(df, "text", METRICS_RE, 15)
    matched = df.select("id", found.isNotNull().alias("matched")).orderBy("id")
    assert [r["matched"] for r in matched.collect()] == [
        True,
        True,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    odd = df.where("id = 2").select(group_at(found, 10).alias("principal")).first()
    assert odd is not None and odd["principal"] == "User:\u0001odd,OU=b"


def _fields_one_group_per_field(
    text: Column, formats: tuple[LineFormat, ...], kind: str
) -> list[Column]:
    """The form ``first_format`` replaced: per field, the first matching format's ``group``."""
    kind_value = F.lit(None).cast("string")
    for name, regex, _ in reversed(formats):
        kind_value = F.when(text.rlike(regex), F.lit(name)).otherwise(kind_value)
    columns = [kind_value.alias(kind)]
    for field in dict.fromkeys(f for _, _, fields in formats for f in fields):
        value = F.lit(None).cast("string")
        for _, regex, fields in reversed(formats):
            got = group(text, regex, fields[field]) if field in fields else F.lit(None)
            value = F.when(text.rlike(regex), got).otherwise(value)
        columns.append(value.alias(field))
    return columns


@pytest.mark.parametrize(
    ("formats", "kind", "texts", "kinds"),
    [
        (
            AUTH_FORMATS,
            "_kind",
            [
                "Failed authentication with /10.0.0.5 (channelId=10.0.0.1:9093-10.0.0.5:51000-3) "
                "(Authentication failed: Invalid username or password)",
                "Successfully authenticated with /10.0.0.5",
                "Successfully re-authenticated with host.example/10.1.2.3\n",
                "Failed re-authentication with <redacted> (SASL mechanism changed)",
                "Connection to node 1 (kafka-1/10.0.0.1:9093) failed authentication due to: x\n",
                "Connection to node -1 failed authentication due to: ",  # an empty group
                "Beginning re-authentication: org.apache.kafka.common.security.authenticator."
                "SaslServerAuthenticator@1a2b3c",  # a format without groups
                "Failed during re-authentication: odd \u0001 separator",  # the fallback path
                "Using SASL mechanism 'SCRAM-SHA-512' provided by client",
                "Failed authentication with",  # cut: no format
                "",
                None,
            ],
            [
                "failed",
                "succeeded",
                "succeeded",
                "failed",
                "client_failed",
                "client_failed",
                "server_reauth",
                "failed_during",
                "mechanism_selected",
                None,
                None,
                None,
            ],
        ),
        (
            WORKER_FORMATS,
            "event_type",
            [
                "Session key updated",
                "Failed to reconfigure connector's tasks (conn), retrying after backoff.",
                "Failed to reconfigure connector's tasks, retrying after backoff:",
                "Uncaught exception in REST call to /connectors/x/tasks",
                "Uncaught exception in REST call to ",
                None,
            ],
            [
                "session_key_updated",
                "reconfigure_retry",
                "reconfigure_retry",
                "rest_call_exception",
                None,
                None,
            ],
        ),
    ],
)
def test_first_format_equals_one_group_per_field(
    spark: SparkSession,
    formats: tuple[LineFormat, ...],
    kind: str,
    texts: list[str | None],
    kinds: list[str | None],
) -> None:
    df = spark.createDataFrame(list(enumerate(texts)), "id int, text string")
    matched = first_format(F.col("text"), formats, kind)
    fields = format_fields(matched, formats, kind)
    fast = df.select("id", *[value.alias(name) for name, value in fields.items()])
    slow = df.select("id", *_fields_one_group_per_field(F.col("text"), formats, kind))
    assert_df_equality(fast, slow, ignore_nullable=True)
    assert [row[kind] for row in fast.orderBy("id").collect()] == kinds


def test_header_groups_on_the_header_match(spark: SparkSession) -> None:
    head = "RequestHeader(apiKey=FETCH, apiVersion=11, clientId=, correlationId=7) -- "
    df = spark.createDataFrame([(head,), (None,)], "head string")
    found = groups(F.col("head"), HEADER_RE, 4)
    actual = df.select(*[group_at(found, i).alias(f"g{i}") for i in range(1, 5)])
    expected = spark.createDataFrame(
        [("FETCH", "11", None, "7"), (None, None, None, None)],
        "g1 string, g2 string, g3 string, g4 string",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_connection_parts_ignore_a_final_line_terminator(spark: SparkSession) -> None:
    """A connection id ending in a line terminator (JSON may carry an escaped or a raw U+2028)
    splits as ``regexp_extract`` splits it: the terminator is not part of the last group."""
    ids = [
        "10.0.0.1:9092-10.0.0.2:5555-3",
        "10.0.0.1:9092-10.0.0.2:5555-3\n",
        "10.0.0.1:9092-10.0.0.2:5555-3\r\n",
        "10.0.0.1:9092-10.0.0.2:5555-3\u2028",
        "10.0.0.1:9092-10.0.0.2:5555-3-4\u0085",
        "10.0.0.1:9092-10.0.0.2:5555-3-4",
        "10.0.0.1:9092-10.0.0.2:5555-3\n\n",  # two terminators: no match
        None,
    ]
    df = spark.createDataFrame([(i, c) for i, c in enumerate(ids)], "id int, conn string")
    _assert_groups_equal_group(df, "conn", CONNECTION_ID_RE, 6)
    # Materialised first, as the parse does.
    staged = df.withColumn("found", connection_groups(F.col("conn")))
    parts = connection_parts(F.col("found"))
    actual = staged.select(
        "id", parts["processor_id"].alias("processor_id"), parts["connection_index"].alias("idx")
    )
    expected = spark.createDataFrame(
        [
            (0, None, 3),
            (1, None, 3),
            (2, None, 3),
            (3, None, 3),
            (4, 3, 4),
            (5, 3, 4),
            (6, None, None),
            (7, None, None),
        ],
        "id int, processor_id int, idx int",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_top_level_error_code_first_field_and_nested(spark: SparkSession) -> None:
    rows = [
        ("{error_code=34,mechanisms=[]}", 34),
        ("{error_code=7{x},a=1}", 7),  # not the fast path's shape: flattened first
        ("{throttle_time_ms=0,responses=[{error_code=5}],error_code=0}", 0),
        ("{responses=[{error_code=5,partitions=[{error_code=6}]}]}", None),
        # Top level before the first group (Fetch): found without flattening, same answer.
        ("{throttle_time_ms=0,error_code=3,session_id=0,responses=[{error_code=5}]}", 3),
        ("{error_message=a,error_code=1,error_code=2}", 1),  # the first one, as flattened
        ("{a=1,error_code=7{x},error_code=8}", 7),
        ("{throttle_time_ms=0,brokers=[],cluster_id=c}", None),  # no error_code at all
        ("{error_code=34,mechanisms=[]", None),  # cut: no closing brace
        ("error_code=3", None),
        (None, None),
    ]
    df = spark.createDataFrame(rows, "text string, expected int")
    actual = df.select("text", struct_top_level_error_code(F.col("text")).alias("expected"))
    assert_df_equality(actual, df, ignore_nullable=True)


def test_rest_of_equals_substr_to_the_length(spark: SparkSession) -> None:
    texts = ["Completed request:{}", "abc", "", "é€😀 x", "😀😀😀😀", "a\nb\u2028c", None]
    positions = [-2, 0, 1, 2, 3, 4, 19, 20, 100, None]
    df = spark.createDataFrame(
        [(i, t, p) for i, t in enumerate(texts) for p in positions],
        "id int, text string, position int",
    )
    text, position = F.col("text"), F.col("position")
    fast = df.select("id", "position", rest_of(text, position).alias("rest"))
    slow = df.select("id", "position", text.substr(position, F.length(text)).alias("rest"))
    assert_df_equality(fast, slow, ignore_nullable=True)
    literal = df.where("position = 3").select("id", rest_of(text, 3).alias("rest"))
    expected = df.where("position = 3").select("id", text.substr(3, 1 << 20).alias("rest"))
    assert_df_equality(literal, expected, ignore_nullable=True)
    assert df.where("id = 3 AND position = 2").select(rest_of(text, position)).first() == ("€😀 x",)


def test_found_error_codes_cast_each_element(spark: SparkSession) -> None:
    regex = r'"errorCode"\s*:\s*(-?\d+)'
    rows = [
        ('{"errorCode":0,"topics":[{"errorCode":-1},{"errorCode":37}]}', [0, -1, 37]),
        ('{"errorCode":99999999999,"x":{"errorCode":3}}', [None, 3]),  # past int: null element
        ('{"errorCode":-0}', [0]),
        ('{"throttleTimeMs":0}', []),
        (None, None),
    ]
    df = spark.createDataFrame(rows, "response string, expected array<int>")
    actual = df.select("response", found_error_codes(F.col("response"), regex).alias("expected"))
    assert_df_equality(actual, df, ignore_nullable=True)


def test_trim_tests_equal_ltrim_and_rtrim(spark: SparkSession) -> None:
    texts = ["{}", "  {}  ", " ", "", "\t{}\t", "x{", "}x", "é{}😀", "{", "}", None]
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id int, text string")
    text = F.col("text")
    fast = df.select(
        "id",
        starts_after_spaces(text, "{").alias("starts"),
        ends_before_spaces(text, "}").alias("ends"),
    )
    slow = df.select(
        "id",
        F.ltrim(text).startswith("{").alias("starts"),
        F.rtrim(text).endswith("}").alias("ends"),
    )
    assert_df_equality(fast, slow, ignore_nullable=True)
    assert [r["starts"] for r in fast.orderBy("id").collect()][:3] == [True, True, False]
    for bad in ("", " {"):
        with pytest.raises(ValueError, match="prefix"):
            starts_after_spaces(text, bad)
    with pytest.raises(ValueError, match="suffix"):
        ends_before_spaces(text, "} ")


def test_string_form_parts_are_the_same_inline_and_materialised(spark: SparkSession) -> None:
    """``split_string_form(materialised=False)`` (every part an expression of the body, as
    the parse plans it beside the string form's JVM function) gives the parts and groups the
    materialised stages give, on whole, cut and odd bodies."""
    sep = " from connection "
    head = "RequestHeader(apiKey=METADATA, apiVersion=5, clientId=cli, correlationId=1) -- "
    whole = f"{head}{{topics=null}},response:{{brokers=[]}}{sep}{TAIL}"
    bodies = [
        whole,
        f"{head}{{topics=[a{sep}b]}},response:{{}}{sep}{TAIL}",
        f"{head}é€😀{{}},response:{{}}{sep}{TAIL}",
        *[whole[:cut] for cut in (0, 10, len(head), len(head) + 30, len(whole) - 40)],
        f"{sep}{TAIL}",
        sep,
        f"{head}{{}}",
        "RequestHeader(apiKey=X) -- {}" + sep + "x;y",
        None,
    ]
    df = spark.createDataFrame([(i, b) for i, b in enumerate(bodies)], "id int, body string")
    staged = df
    for stage in split_string_form(F.col("body")):
        staged = staged.withColumns(stage)
    materialised = string_form_struct(F.col("_s_tail"), F.col("_s_head"), F.col("_s_rest"))
    parts = {k: v for stage in split_string_form(F.col("body"), False) for k, v in stage.items()}
    inline = string_form_struct(parts["_s_tail"], parts["_s_head"], parts["_s_rest"])
    expected = staged.select("id", materialised.alias("s"))
    actual = df.select("id", inline.alias("s"))
    assert_df_equality(actual, expected, ignore_nullable=True)
    assert expected.where("s.metric_groups IS NOT NULL").count() == 4  # the test can fail


def test_log_format_read_from_the_message(spark: SparkSession) -> None:
    """``_log_format`` (read from the message) equals the rule it replaces, read from the body
    after ``Completed request:``: JSON where the body starts with ``{`` after spaces, the
    string form where it starts ``RequestHeader(``, else null."""
    messages = [
        f"{PREFIX}{{}}",
        f"{PREFIX}  {{}}",
        f"{PREFIX} RequestHeader(",
        f"{PREFIX}RequestHeader(apiKey=X)",
        f"{PREFIX}",
        f"{PREFIX} ",
        "Completed request",
        "completed request:{}",
        f" {PREFIX}{{}}",
        f"{PREFIX}\t{{}}",
        f"{PREFIX}Request",
        "",
        None,
    ]
    df = spark.createDataFrame([(i, m) for i, m in enumerate(messages)], "id int, m string")
    body = F.when(F.col("m").startswith(PREFIX), rest_of(F.col("m"), len(PREFIX) + 1))
    old = F.when(starts_after_spaces(body, "{"), F.lit("json")).when(
        body.startswith("RequestHeader("), F.lit("string")
    )
    expected = df.select("id", old.alias("f"))
    assert_df_equality(df.select("id", _log_format(F.col("m")).alias("f")), expected)
    found = [r["f"] for r in expected.orderBy("id").collect()]
    assert found[:4] == ["json", "json", None, "string"]  # the test can fail


def test_string_form_text_before_the_last_separator(spark: SparkSession) -> None:
    """``_s_before`` (the text before the last `` from connection ``) equals the character
    arithmetic it replaces, with the separator once, twice, never, at the end, and after
    multi-byte characters."""
    sep = " from connection "
    head = "RequestHeader(apiKey=METADATA, apiVersion=5, clientId=cli, correlationId=1) -- "
    bodies = [
        f"{head}{{topics=null}},response:{{brokers=[]}}{sep}{TAIL}",
        f"{head}{{topics=[a{sep}b]}},response:{{}}{sep}{TAIL}",  # twice: the last one counts
        f"{head}é€😀{{}},response:{{}}{sep}{TAIL}",
        f"{head}{{}},response:{{}}{sep}",  # nothing after it
        f"{head}{{}},response:{{}}",  # never
        f"{sep}{TAIL}",
        sep,
        "",
        None,
    ]
    df = spark.createDataFrame([(i, b) for i, b in enumerate(bodies)], "id int, body string")
    staged = df
    for stage in split_string_form(F.col("body")):
        staged = staged.withColumns(stage)
    body, tail = F.col("body"), F.col("_s_tail")
    slow = F.when(tail.isNotNull(), body.substr(F.lit(1), F.length(body) - F.length(tail) - 17))
    expected = staged.select("id", slow.otherwise(body).alias("before"))
    actual = staged.select("id", F.col("_s_before").alias("before"))
    assert_df_equality(actual, expected, ignore_nullable=True)
    twice = staged.where("id = 1").select("_s_before", "_s_rest").first()
    assert twice is not None
    assert twice["_s_before"] == f"{head}{{topics=[a{sep}b]}},response:{{}}"
    assert twice["_s_rest"] == f"{{topics=[a{sep}b]}},response:{{}}"
