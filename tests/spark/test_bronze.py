"""Bronze: line numbering, multi-line folding, node identity, secret redaction."""

from __future__ import annotations

import hashlib
import hmac
import random
import re
from datetime import date, datetime

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from transforms.bronze import native, redaction
from transforms.bronze.records import (
    NODE_ID_PREFIXES,
    fold_records,
    narrow_lines,
    node_id_in_message,
    node_id_in_message_by_expressions,
    number_lines,
    numbered_lines,
    with_line_headers,
    with_node_id,
)
from transforms.bronze.redaction import redact_with, with_secrets_fingerprinted
from transforms.fingerprints import keyed_fingerprint

HEADER = "[2026-11-20 10:00:0{}.000] ERROR boom {} (kafka.server.KafkaApis)"


def _lines(spark: SparkSession, values: list[tuple[str, str | None]]) -> DataFrame:
    """Physical lines of files, as ingest reads them: split 0, increasing row order."""
    return spark.createDataFrame(
        [(path, 0, i, value) for i, (path, value) in enumerate(values)],
        "source_path string, block_start long, row_order long, value string",
    )


def test_stack_traces_fold_into_their_header(spark: SparkSession) -> None:
    lines = _lines(
        spark,
        [
            ("/a.log", "\tat orphan.Frame(Frame.java:1)"),  # the file starts mid-trace
            ("/a.log", "# source: a comment"),
            ("/a.log", HEADER.format(1, "one")),
            ("/a.log", "java.lang.IllegalStateException: x"),
            ("/a.log", "\tat a.B(B.java:2)"),
            ("/a.log", ""),
            ("/a.log", HEADER.format(2, "two")),
            ("/b.log", HEADER.format(3, "three")),
            ("/b.log", "   "),  # a blank line inside a trace does not end it
            ("/b.log", "\tat b.C(C.java:3)"),
            ("/b.log", HEADER.format(4, "four")),
            ("/b.log", "\tat b.D(D.java:4)"),  # the file's last line
            ("/c.log", "\tat c.E(E.java:5)"),  # two orphan lines around a blank one
            ("/c.log", ""),
            ("/c.log", "\tat c.F(F.java:6)"),
            ("/c.log", HEADER.format(5, "five")),
        ],
    )
    numbered = number_lines(lines)
    got = fold_records(numbered).select(
        "source_path", "line_number", "line_count", "layout", "message", "continuation"
    )
    expected = spark.createDataFrame(
        [
            ("/a.log", 1, 1, "unknown", None, None),
            ("/a.log", 3, 3, "log4j", "boom one",
             "java.lang.IllegalStateException: x\n\tat a.B(B.java:2)"),
            ("/a.log", 7, 1, "log4j", "boom two", None),
            ("/b.log", 1, 2, "log4j", "boom three", "\tat b.C(C.java:3)"),
            ("/b.log", 4, 2, "log4j", "boom four", "\tat b.D(D.java:4)"),
            ("/c.log", 1, 2, "unknown", None, "\tat c.F(F.java:6)"),
            ("/c.log", 4, 1, "log4j", "boom five", None),
        ],
        "source_path string, line_number long, line_count int, layout string, message string, "
        "continuation string",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    # Without the lines' text (what the accounting counts), the same records and sizes, and
    # the same continuations: a record-start line keeps no text, the others keep theirs.
    narrow = narrow_lines(numbered)
    keys = ["source_path", "line_number", "line_count", "layout", "continuation"]
    assertDataFrameEqual(
        fold_records(narrow).select(*keys), expected.select(*keys), checkRowOrder=False
    )
    texts = narrow.where(F.col("value").isNotNull()).select("source_path", "line_number", "value")
    assertDataFrameEqual(
        texts,
        numbered.where(~F.col("line_kind").isin("header", "unrecognized")).select(
            "source_path", "line_number", "value"
        ),
        checkRowOrder=False,
    )
    assert texts.count() == 11  # 16 lines, 5 of them start a record


def test_line_order_follows_split_offsets_not_row_ids(spark: SparkSession) -> None:
    """A file read in two splits: the second split's rows can carry smaller row ids."""
    lines = spark.createDataFrame(
        [
            ("/a.log", 100, 1, HEADER.format(2, "second")),
            ("/a.log", 0, 9, HEADER.format(1, "first")),
        ],
        "source_path string, block_start long, row_order long, value string",
    )
    got = number_lines(lines).select("line_number", "message")
    expected = spark.createDataFrame(
        [(1, "boom first"), (2, "boom second")], "line_number long, message string"
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def _records(spark: SparkSession, rows: list[tuple[str, str | None, str | None]]) -> DataFrame:
    records = spark.createDataFrame(
        [(path, i + 1, "log4j", ts, msg) for i, (path, ts, msg) in enumerate(rows)],
        "source_path string, line_number long, layout string, ts_text string, message string",
    )
    # As number_lines computes it for each header line, and fold_records carries it.
    return records.withColumn("own_node_id", node_id_in_message(F.col("message")))


def test_node_id_precedence(spark: SparkSession) -> None:
    sources = spark.createDataFrame(
        [
            ("/n1/server.log", "/n1", "n1", "7", "UTC"),  # config says 7
            ("/b2/server.log", "/b2", "b2", None, "Europe/Berlin"),
            ("/b2/kafka-authorizer.log", "/b2", "b2", None, "UTC"),
            ("/mix/a.log", "/mix", "mix", None, "UTC"),
            ("/mix/b.log", "/mix", "mix", None, "UTC"),
        ],
        "source_path string, node_key string, node_folder_name string, "
        "config_node_id string, time_zone string",
    )
    records = _records(
        spark,
        [
            ("/n1/server.log", "2026-11-20 10:00:00,000", "[SocketServer brokerId=3] x"),
            ("/b2/server.log", "2026-11-20 10:00:00,000", "[SocketServer listenerType=BROKER, nodeId=2] x"),
            ("/b2/server.log", "2026-11-20 10:00:00,000", "no id here"),
            ("/b2/kafka-authorizer.log", "2026-11-20 23:30:00,000", "Principal = User:a ..."),
            ("/mix/a.log", None, "[SocketServer brokerId=1] x"),
            ("/mix/a.log", None, "[QuorumController id=4] y"),
            ("/mix/a.log", None, "no id"),
            ("/mix/b.log", None, "no id"),
        ],
    )  # fmt: skip
    got = with_node_id(records, sources).select(
        "source_path", "line_number", "node_id", "node_id_source", "log_ts", "log_date"
    )
    berlin = datetime(2026, 11, 20, 9, 0)
    utc = datetime(2026, 11, 20, 23, 30)
    expected = spark.createDataFrame(
        [
            ("/n1/server.log", 1, "7", "config", datetime(2026, 11, 20, 10), date(2026, 11, 20)),
            ("/b2/server.log", 2, "2", "log_prefix", berlin, date(2026, 11, 20)),
            ("/b2/server.log", 3, "2", "log_prefix", berlin, date(2026, 11, 20)),
            ("/b2/kafka-authorizer.log", 4, "2", "log_prefix", utc, date(2026, 11, 20)),
            ("/mix/a.log", 5, "1", "log_prefix", None, None),
            ("/mix/a.log", 6, "4", "log_prefix", None, None),
            ("/mix/a.log", 7, "mix", "folder", None, None),  # two ids in file and folder
            ("/mix/b.log", 8, "mix", "folder", None, None),
        ],
        "source_path string, line_number long, node_id string, node_id_source string, "
        "log_ts timestamp, log_date date",
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    # The ids printed in each file read from another frame of the records (``printed``).
    columns = ["source_path", "line_number", "node_id", "node_id_source"]
    printed = records.select("source_path", "own_node_id")
    assertDataFrameEqual(
        with_node_id(records, sources, printed).select(*columns),
        expected.select(*columns),
        checkRowOrder=False,
    )
    # What ``printed`` lacks is not printed: /b2/server.log's id no longer names its
    # record without one, nor /b2's other file; the record that prints it keeps it.
    elsewhere = printed.where(F.col("source_path") != "/b2/server.log")
    folder = {3: ("b2", "folder"), 4: ("b2", "folder")}
    assertDataFrameEqual(
        with_node_id(records, sources, elsewhere).select(*columns),
        spark.createDataFrame(
            [(r[0], r[1], *folder.get(r[1], (r[2], r[3]))) for r in expected.collect()],
            expected.select(*columns).schema,
        ),
        checkRowOrder=False,
    )


KEY = b"k" * 32


def fp(value: str) -> str:
    """The expected placeholder, computed with the standard library (not the code under test)."""
    digest = hmac.new(KEY, value.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
    return f"[REDACTED hmac-sha256:{digest}]"


@pytest.fixture(params=["jvm", "python"])
def fingerprinted_by(
    request: pytest.FixtureRequest, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Secrets fingerprinted by the JVM function (the session has the project's jar), or by
    the pandas UDF (as a session without it: no JDK, a failed build, the setting off)."""
    if request.param == "jvm":
        if native.fingerprint_function(spark, KEY) is None:
            pytest.skip("no JVM functions in this session (no JDK to build them)")
    else:
        monkeypatch.setattr(redaction, "fingerprint_function", lambda spark, key: None)
    return str(request.param)


def test_secrets_become_keyed_fingerprints_in_every_rendering(
    spark: SparkSession, fingerprinted_by: str
) -> None:
    token = (
        "lRd1Ylj4ZcEkmYyDxXF4bSPcdYd4J+vWgVj2gR9q1E2a0o7/ZgB3dJ5y7W7kE6yk0J0oFqK2e1aH3CvX6tJ2XA=="
    )
    rows = [
        ('{"request":{"hmac":"' + token + '","renewPeriodMs":1}}',
         '{"request":{"hmac":"' + fp(token) + '","renewPeriodMs":1}}'),
        # The same token twice in one record, and a second secret key.
        ('{"response":{"hmac":"' + token + '"},"x":{"hmac":"' + token + '","authBytes":"AHVzZXIA"}}',
         '{"response":{"hmac":"' + fp(token) + '"},"x":{"hmac":"' + fp(token) + '","authBytes":"' + fp("AHVzZXIA") + '"}}'),
        ('{"request":{"requestData":"ACwAAQ==","requestPrincipal":"AAAFVXNlcg=="}}',
         '{"request":{"requestData":"' + fp("ACwAAQ==") + '","requestPrincipal":"AAAFVXNlcg=="}}'),
        ('{"request":{"hmac":[1, 2, 3]}}', '{"request":{"hmac":"' + fp("[1, 2, 3]") + '"}}'),
        ('{"response":{"hmac":null}}', '{"response":{"hmac":null}}'),
        ("RenewDelegationTokenRequestData(hmac=[12, -3, 44], renewPeriodMs=-1)",
         "RenewDelegationTokenRequestData(hmac=" + fp("[12, -3, 44]") + ", renewPeriodMs=-1)"),
        # A ByteBuffer's toString shows no byte of the HMAC: kept, and no (shared) fingerprint.
        ("x(hmac=java.nio.HeapByteBuffer[pos=0 lim=64 cap=64], y=1)",
         "x(hmac=java.nio.HeapByteBuffer[pos=0 lim=64 cap=64], y=1)"),
        ("no secret here", "no secret here"),
        (None, None),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "text string, expected string")
    # Each output row keeps its expected value beside it: compare the pairs.
    got = with_secrets_fingerprinted(df, ["text"], KEY)
    pairs = df.select(F.col("expected").alias("text"), "expected")
    assertDataFrameEqual(got, pairs, checkRowOrder=False)
    # The JVM function needs no Python worker: no Python UDF in the plan.
    python_udf = "ArrowEvalPython" in got._jdf.queryExecution().executedPlan().toString()
    assert python_udf == (fingerprinted_by == "python")


def test_the_jvm_fingerprint_is_the_python_one(spark: SparkSession) -> None:
    """``Fingerprints.java`` against ``transforms.fingerprints.keyed_fingerprint`` (the JSON
    quotes removed first, as ``redaction._fingerprint`` does), on values at the edges of the
    quote rule and of UTF-8; the key is in no plan."""
    function = native.fingerprint_function(spark, KEY)
    if function is None:
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    values = [
        '"Zm9v"', "Zm9v", "[1, -2, 3]", '"', '""', '"""', "", '"a', 'a"', ' "a" ', "é",
        '"\u00e9\"x"', "日本語", "\U0001f600",
        '"' + "\U0001f600" + '"', "x" * 5000,
    ]  # fmt: skip
    rows = [(values,), (None,), ([],), (["Zm9v", None],)]
    df = spark.createDataFrame(rows, "values array<string>")
    got = df.select(function(F.col("values")).alias("fingerprints"))
    expected = spark.createDataFrame(
        [([keyed_fingerprint(KEY, v[1:-1] if len(v) >= 2 and v[0] == v[-1] == '"' else v)
           for v in values],), (None,), ([],), ([keyed_fingerprint(KEY, "Zm9v"), None],)],
        "fingerprints array<string>",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    plan = got._jdf.queryExecution().toString()
    assert "kafka_audit_fingerprints" in plan
    assert KEY.hex() not in plan and "k" * 32 not in plan


def test_the_jvm_secret_key_pretest_is_the_expressions(spark: SparkSession) -> None:
    """``SecretKeyMention.java`` against ``lower()`` and the substring searches: every key in
    other cases, at either end, cut short, and beside characters that lower to ASCII letters
    (the Kelvin sign, a dotted capital I) or that match one only case-insensitively (a long s:
    ``regionMatches`` would take it for an s)."""
    if not spark.catalog.functionExists(native.SECRET_KEY_MENTION_FUNCTION):
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    texts = [
        *redaction.SECRET_JSON_KEYS,
        *(key.upper() for key in redaction.SECRET_JSON_KEYS),
        *(key.swapcase() + "x" for key in redaction.SECRET_JSON_KEYS),
        *("x" + key[:-1] for key in redaction.SECRET_JSON_KEYS),
        '{"request":{"HmAc":"x"}}', "renew(hm", "passwor", "PASSWORD=", "authbyte",
        "\u212a hmac", "\u0130 hmac", "pas\u017fword", "hm\u0430c", "hmac\u0000", "",
        " ", "no secret here", "x" * 3000 + "Password", None,
    ]  # fmt: skip
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    got = df.select("text", F.call_function(native.SECRET_KEY_MENTION_FUNCTION, "text").alias("m"))
    expected = df.select(
        "text", redaction.mentions_secret_key_by_expressions(F.col("text")).alias("m")
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    assert got.where("m").count() == 24  # the keys in three forms and six texts


def test_the_jvm_secret_key_pretest_probes_every_offset(spark: SparkSession) -> None:
    """``SecretKeyMention.java`` reads one character in four: each key at every offset from
    the start and the end of a text, in mixed case, whole and with one character changed, and
    seeded texts made of keys' pieces, all against the expressions."""
    if not spark.catalog.functionExists(native.SECRET_KEY_MENTION_FUNCTION):
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    rng = random.Random(47)
    keys = [k.lower() for k in redaction.SECRET_JSON_KEYS]
    texts = [
        "x" * before + "".join(rng.choice((c, c.upper())) for c in text) + "y" * after
        for key in keys
        for text in (key, *(key[:i] + "_" + key[i + 1 :] for i in range(len(key))))
        for before in range(8)
        for after in range(3)
    ]
    pieces = [*keys, *(k[:i] for k in keys for i in (2, 3)), *(k[i:] for k in keys for i in (1, 2))]
    pieces += ["x", "A", '"', "\u212a", "\u017f", ":"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(600)]
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    got = df.select("text", F.call_function(native.SECRET_KEY_MENTION_FUNCTION, "text").alias("m"))
    expected = df.select(
        "text", redaction.mentions_secret_key_by_expressions(F.col("text")).alias("m")
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    # 5 whole keys x 24 placings, and some of the near misses and seeded texts.
    assert 120 < got.where("m").count() < len(texts) - 500


def test_secret_without_fingerprint_is_still_removed(spark: SparkSession) -> None:
    """The safety net: a value the fingerprint map does not cover is still redacted."""
    df = spark.createDataFrame([('{"hmac":"c2VjcmV0","authBytes":"YQ=="}',)], "text string")
    partial = F.create_map(F.lit('"c2VjcmV0"'), F.lit("0" * 32))
    got = df.select(redact_with(F.col("text"), partial).alias("text"))
    expected = spark.createDataFrame(
        [('{"hmac":"[REDACTED hmac-sha256:' + "0" * 32 + ']","authBytes":"[REDACTED]"}',)],
        "text string",
    )
    assertDataFrameEqual(got, expected)


def test_a_secret_cut_in_two_is_redacted_wherever_the_cut_falls(spark: SparkSession) -> None:
    """A record cut in two at every character of ``"hmac":"<value>"`` (and of the pre-2.8
    ``hmac=[...]``): the rest folds into the record as its continuation (number_lines), and
    neither the raw line nor the continuation keeps 6 characters of the value."""
    value = "Zm9vYmFyLXNlY3JldA=="
    json_record = '[2026-11-20 10:00:01.000] DEBUG Completed request:{"request":{"hmac":"'
    json_record += value + '","renewPeriodMs":-1}} (kafka.request.logger)'
    byte_record = "[2026-11-20 10:00:01.000] DEBUG Completed request:Renew(hmac=[102, 111, "
    byte_record += "111, 98, 97, 114], renewPeriodMs=-1) (kafka.request.logger)"
    cuts = []
    for record, secret in ((json_record, value), (byte_record, "102, 111, 111, 98, 97, 114")):
        key = record.index("hmac")
        cuts += [
            (record, at, key, secret) for at in range(key - 1, record.index(secret) + len(secret))
        ]
    lines = spark.createDataFrame(
        [(f"/{i}.log", 0, n, half)
         for i, (record, at, _, _) in enumerate(cuts)
         for n, half in enumerate((record[:at], record[at:]))],
        "source_path string, block_start long, row_order long, value string",
    )  # fmt: skip
    got = with_secrets_fingerprinted(
        fold_records(number_lines(lines)), ["raw", "continuation"], KEY
    )
    texts: dict[str, list[str]] = {}
    for r in got.collect():
        texts.setdefault(r["source_path"], []).append(f"{r['raw']}\n{r['continuation']}")
    leaks, unfolded = [], []
    for i, (_, at, key, secret) in enumerate(cuts):
        text = "\n".join(texts[f"/{i}.log"])
        leaks += [(at, text) for j in range(len(secret) - 5) if secret[j : j + 6] in text]
        # A cut inside the key's name or later folds; one before it leaves two whole halves.
        if at > key and len(texts[f"/{i}.log"]) != 1:
            unfolded.append((at, text))
    assert not leaks
    assert not unfolded


def test_node_id_in_message_reads_every_prefix_kafka_writes(spark: SparkSession) -> None:
    messages = [
        "[SocketServer listenerType=BROKER, nodeId=2] Failed authentication with /10.0.0.5",
        "[SocketServer brokerId=3] Started 1 acceptor threads",
        "[QuorumController id=4] Created topic t",
        "[Token Manager on Node 5]: Created a delegation token",
        "[StandardAuthorizer 6] Initialized with 3 acl(s).",
        "[KafkaServer id=7] started",
        # ReplicaManager / state-change.log, the ZooKeeper-mode controller, KafkaApis:
        "[Broker id=8] Handling LeaderAndIsr request correlationId 1 from controller 1 epoch 1",
        "[Controller id=9] Processing automatic preferred replica leader election",
        "[Controller id=10, targetBrokerId=1] Connection to node 1 could not be established.",
        "[KafkaApi-11] Auto creation of topic __consumer_offsets with 50 partitions",
        "[Worker clientId=connect-1, groupId=connect-cluster] Rebalance started",
        # No node id: clientId= / correlationId= of a request line, and none at all.
        "Completed request:RequestHeader(apiKey=FETCH, clientId=consumer-1, correlationId=5)",
        "no id here",
        None,
    ]
    frame = spark.createDataFrame([(m,) for m in messages], "message string")
    got = [r[0] for r in frame.select(node_id_in_message(F.col("message"))).collect()]
    assert got == [
        "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "connect-1", None, None, None,
    ]  # fmt: skip


def test_the_jvm_node_id_prefixes_are_the_patterns() -> None:
    """``NodeIdInMessage.java`` looks for ``NODE_ID_PREFIXES``, in that order."""
    source = (native.SOURCES / "NodeIdInMessage.java").read_text(encoding="utf-8")
    named = dict(re.findall(r'static final String (NODE|BROKER) = "([^"]*)";', source))
    bracketed = re.search(r"BRACKETED = \{(.*?)\};", source, re.DOTALL)
    assert bracketed is not None
    java = [named["NODE"], named["BROKER"], *re.findall(r'"([^"]*)"', bracketed.group(1))]
    assert java == list(NODE_ID_PREFIXES)


def test_the_jvm_node_id_is_the_expressions(spark: SparkSession) -> None:
    """``NodeIdInMessage.java`` against the substring searches and the regex: every prefix
    followed by an id, by each character that ends one and by nothing, an empty match before a
    later one, two prefixes in either order, and seeded texts made of prefixes, their pieces and
    the characters around ids."""
    if not spark.catalog.functionExists(native.NODE_ID_FUNCTION):
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    ends = [",", "]", " ", "\t", "\n", "\u000b", "\f", "\r"]
    texts: list[str | None] = [
        f"x {prefix}{after}"
        for prefix in NODE_ID_PREFIXES
        for after in ("7]", "connect-1, groupId=g", "", *ends, "\u00857", "\U0001f600,", "é1")
    ]
    texts += [
        "[Broker id=,[Broker id=3]", "brokerId=2 nodeId=1", "nodeId=1 brokerId=2",
        "[[KafkaApi-4]", "[BrokerServer id=5]", "clientId=c-1, correlationId=5", "", None,
    ]  # fmt: skip
    rng = random.Random(47)
    pieces = [*NODE_ID_PREFIXES, *(p[: len(p) // 2] for p in NODE_ID_PREFIXES), *ends]
    pieces += ["[", "x", "42", "é", "\U0001f600", "Id=", " id=", "clientId="]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(600)]
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    got = df.select("text", F.call_function(native.NODE_ID_FUNCTION, "text").alias("id"))
    expected = df.select("text", node_id_in_message_by_expressions(F.col("text")).alias("id"))
    assertDataFrameEqual(got, expected, checkRowOrder=False)
    assert 300 < got.where("id is not null").count() < len(texts) - 100


def test_lines_of_an_unknown_layout_are_records_never_folds(spark: SparkSession) -> None:
    # A Kafka record in a layout no parser knows, between records Kafka's layout wrote: it must
    # not fold into the record before it (as a stack trace would), and what follows it that
    # looks like a continuation folds into it.
    denial = (
        "2023-06-14T09:12:01.334Z | INFO | kafka.authorizer.logger | Principal = User:c3 is "
        "Denied Operation = Describe from host = 172.17.0.12 on resource = Topic:LITERAL:t"
    )
    lines = _lines(
        spark,
        [
            ("/a.log", HEADER.format(1, "one")),
            ("/a.log", denial),
            ("/a.log", "org.apache.kafka.common.errors.SaslAuthenticationException: bad"),
            ("/a.log", "\tat a.B(B.java:2)"),
            ("/a.log", "Caused by: java.io.EOFException"),
            ("/a.log", "\t... 3 more"),
            ("/a.log", "plain words with no header"),
            ("/a.log", HEADER.format(2, "two")),
            ("/a.log", "  indented text folds"),
            ("/a.log", 'Exception in thread "main" java.lang.IllegalStateException'),
        ],
    )
    got = fold_records(number_lines(lines)).select(
        "line_number", "line_count", "layout", "ts_text", "level", "logger", "message",
        "continuation",
    )  # fmt: skip
    expected = spark.createDataFrame(
        [
            (1, 1, "log4j", "2026-11-20 10:00:01.000", "ERROR", "kafka.server.KafkaApis",
             "boom one", None),
            (2, 5, "unrecognized", "2023-06-14T09:12:01.334", None, None, denial,
             "org.apache.kafka.common.errors.SaslAuthenticationException: bad\n"
             "\tat a.B(B.java:2)\nCaused by: java.io.EOFException\n\t... 3 more"),
            (7, 1, "unrecognized", None, None, None, "plain words with no header", None),
            (8, 3, "log4j", "2026-11-20 10:00:02.000", "ERROR", "kafka.server.KafkaApis",
             "boom two",
             "  indented text folds\nException in thread \"main\" java.lang.IllegalStateException"),
        ],
        "line_number long, line_count int, layout string, ts_text string, level string, "
        "logger string, message string, continuation string",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_a_record_cut_inside_a_secret_keeps_the_rest_of_the_secret_as_its_continuation(
    spark: SparkSession,
) -> None:
    # A record cut in two inside a token's HMAC: the second line starts with the rest of the
    # value and looks like no continuation, yet it folds into the cut record (where
    # redact_split_values removes the rest), also when the cut falls on a split boundary.
    # A cut record has no logger: it is a record of layout unrecognized. A line after a record
    # that does not end inside a secret, or a header after a cut, stays a record of its own.
    cut = '[2026-11-20 10:00:01.000] DEBUG Completed request:{"request":{"hmac":"Zm9vYmFy'
    cut_bytes = "[2026-11-20 10:00:02.000] DEBUG Completed request:RequestHeader(hmac=[102, 111"
    lines = spark.createDataFrame(
        [
            ("/a.log", 0, 0, cut),
            ("/a.log", 0, 1, 'LXNlY3JldC1obWFj","renewPeriodMs":-1}} (kafka.request.logger)'),
            ("/a.log", 0, 2, cut_bytes),  # the split's last line
            ("/a.log", 50, 7, "111, 98, 97, 114]) (kafka.request.logger)"),
            ("/a.log", 50, 8, '[2026-11-20 10:00:03.000] DEBUG {"hmac":"Zm9v'),
            ("/a.log", 50, 9, HEADER.format(4, "four")),
            ("/a.log", 50, 10, "plain words after a header"),
        ],
        "source_path string, block_start long, row_order long, value string",
    )
    got = number_lines(lines).select("line_number", "line_kind")
    expected = spark.createDataFrame(
        [(1, "unrecognized"), (2, "continuation"), (3, "unrecognized"), (4, "continuation"),
         (5, "unrecognized"), (6, "header"), (7, "unrecognized")],
        "line_number long, line_kind string",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_lines_numbered_from_the_persisted_layer_keep_each_kinds_node_id(
    spark: SparkSession,
) -> None:
    # As a run numbers them: from the persisted with_line_headers layer, across two splits. A
    # header's id is read in its message, an unrecognized line's in the whole line; a line that
    # only continues a record (a stack frame, the rest of a record cut inside a secret, here
    # in the next split) has none of its own, whatever it prints.
    cut = '2023-06-14T09:12:01.334Z [Broker id=8] Completed request:{"request":{"hmac":"Zm9v'
    lines = spark.createDataFrame(
        [
            ("/a.log", 0, 0, HEADER.format(1, "[KafkaApi-3] handled")),
            ("/a.log", 0, 1, "\tat a.B(B.java:2) [Broker id=9]"),
            ("/a.log", 0, 2, "2023-06-14T09:12:01.334Z | INFO | [Broker id=7] started"),
            ("/a.log", 0, 3, ""),
            ("/a.log", 0, 4, cut),  # the split's last line
            ("/a.log", 90, 40, '[Controller id=5] rest","x":1}} (kafka.request.logger)'),
            ("/a.log", 90, 41, HEADER.format(2, "no id here")),
        ],
        "source_path string, block_start long, row_order long, value string",
    )
    headed = with_line_headers(lines).persist()
    try:
        got = numbered_lines(headed).select("line_number", "line_kind", "own_node_id")
        expected = spark.createDataFrame(
            [(1, "header", "3"), (2, "continuation", None), (3, "unrecognized", "7"),
             (4, "blank", None), (5, "unrecognized", "8"), (6, "continuation", None),
             (7, "header", None)],
            "line_number long, line_kind string, own_node_id string",
        )  # fmt: skip
        assertDataFrameEqual(got, expected, checkRowOrder=False)
        composed = number_lines(lines).select("line_number", "line_kind", "own_node_id")
        assertDataFrameEqual(composed, expected, checkRowOrder=False)
    finally:
        headed.unpersist()


def test_ends_inside_secret_line_by_line(spark: SparkSession) -> None:
    """A line ending in ')', ']' or '}' (multi-byte text before it too) never ends inside a
    secret; one ending inside a value, after a key or inside a key's name does; null and ''
    do not."""
    from transforms.bronze.redaction import ends_inside_secret  # noqa: PLC0415

    lines = [
        (None, False),
        ("", False),
        (")", False),
        ("[2026-11-20 10:00:00,000] INFO Completed request:{} (kafka.request.logger)", False),
        ('{"hmac":"Zm9v"}', False),
        ('é "hmac":"Zm9v]', False),
        ('Completed request:{"request":{"hmac":"Zm9v', True),
        ('Completed request:{"request":{"HMAC":', True),
        ('Completed request:{"request":{"hm', True),
        ("RenewDelegationTokenRequestData(hmac=[1, 2", True),
        ("Renew(hm", True),
        ("é ü no secret here", False),
        ("a line ending in ) ", False),
    ]
    df = spark.createDataFrame([(i, v) for i, (v, _) in enumerate(lines)], "i int, value string")
    got = df.select("i", ends_inside_secret(F.col("value")).alias("open")).orderBy("i").collect()
    assert [row["open"] for row in got] == [expected for _, expected in lines]
