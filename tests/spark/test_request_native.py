"""The request log's JVM functions (``jobs.jvm_parsers``) give the expression parse's rows.

Every record, of both forms, is parsed twice by ``parse_request_events``: with the session
functions registered (the records they answer for take their values, the rest the
expressions') and without them (the expressions alone). The whole outputs, every column of
every row, must be equal: on real lines, on the shapes the unit tests use, and on those lines
damaged at random (seeded): text inserted, deleted and repeated, numbers replaced by edge
values; for the JSON form also keys repeated or differing in case, other value types, escapes,
whitespace and bytes after the object.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType

from jobs import jvm_parsers
from schemas.raw_lines import FAMILY_REQUEST
from tests.support.bronze_rows import Record, bronze_df
from tests.support.request_lines import (
    FP_A,
    REQUEST_LOGGER,
    header,
    json_message,
    placeholder,
    pretty_printed_record,
)
from transforms.silver.request_log.native import (
    FUNCTIONS,
    JSON_FORM_FUNCTION,
    STRING_FORM_FUNCTION,
)
from transforms.silver.request_log.parse import parse_request_events

#: Kafka: The Definitive Guide, 2nd ed., ch. 11 (a 2.7 broker's DEBUG line).
BOOK = (
    "Completed request:RequestHeader(apiKey=PRODUCE, apiVersion=8, clientId=producer-1, "
    "correlationId=6) -- {acks=-1,timeout=30000,partitionSizes=[customerOrders-0=15514]},"
    "response:{responses=[{topic=customerOrders,partition_responses=[{partition=0,error_code=0,"
    "base_offset=13,log_append_time=-1,log_start_offset=0,record_errors=[],error_message=null}]}],"
    "throttle_time_ms=0} from connection 127.0.0.1:9094-127.0.0.1:61040-0;totalTime:2.42,"
    "requestQueueTime:0.112,localTime:2.15,remoteTime:0.0,throttleTime:0,responseQueueTime:0.04,"
    "sendTime:0.118,securityProtocol:SASL_SSL,principal:User:Alice,listener:SASL_SSL,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, "
    "softwareVersion=2.7.0-SNAPSHOT)"
)
_METRICS = (
    "totalTime:1.0E-4,requestQueueTime:0.5,localTime:0.25,remoteTime:0.0,throttleTime:3,"
    "responseQueueTime:0.125,sendTime:1.0,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,"
    "listener:PLAINTEXT"
)
SHAPES = [
    BOOK,
    "Completed request:RequestHeader(apiKey=SASL_HANDSHAKE, apiVersion=1, clientId=, "
    "correlationId=-1) -- {mechanism=PLAIN},response:{error_code=0,mechanisms=[PLAIN]} from "
    f"connection 10.0.0.1:9093-10.0.0.2:50000-3;{_METRICS},temporaryMemoryBytes:1024,"
    "messageConversionsTime:0.5",
    "Completed request:RequestHeader(apiKey=METADATA, apiVersion=9, clientId=a, correlationId=7"
    ") -- {topics=null},response:{throttle_time_ms=0,brokers=[{node_id=1}],topics=[{error_code=3"
    ",name=t,partitions=[{error_code=9,partition_index=0}]}],error_code=41} from connection "
    f"[::1]:9092-[::1]:4000-0;{_METRICS},messageConversionsTime:2.0",
    # Two top-level error codes before the first group, the first at the start: the
    # before-groups regex of struct_top_level_error_code takes the one after a comma.
    "Completed request:RequestHeader(apiKey=RENEW_DELEGATION_TOKEN, apiVersion=2, clientId=c, "
    "correlationId=11) -- {renew_period_ms=1},response:{error_code=0,expiry_timestamp_ms=1700000"
    f"000000,error_code=3,throttle_time_ms=0}} from connection 1.2.3.4:9092-5.6.7.8:1-0;{_METRICS}",
    # JoinGroup v0: a member id that carries a client id ",error_code=7,".
    "Completed request:RequestHeader(apiKey=JOIN_GROUP, apiVersion=0, clientId=a,error_code=7,b, "
    "correlationId=3) -- {group_id=g},response:{error_code=0,generation_id=1,group_protocol=range,"
    "leader_id=a,error_code=7,b-1,member_id=a,error_code=7,b-1,members=[{member_id=x,"
    "error_code=2}]} from connection 1.2.3.4:9092-5.6.7.8:2-0;" + _METRICS,
    "Completed request:RequestHeader(apiKey=RENEW_DELEGATION_TOKEN, apiVersion=2, clientId=c, "
    "correlationId=11) -- {hmac=[REDACTED hmac-sha256:0123456789abcdef0123456789abcdef],"
    "renew_period_ms=86400000},response:{error_code=0,expiry_timestamp_ms=1700000000000,"
    f"throttle_time_ms=0}} from connection 1.2.3.4:9092-5.6.7.8:1-0;{_METRICS}",
]
_INSERTS = [
    ",", "{", "}", "[", "]", "(", ")", "=", ":", ";", " ", "\n", "\u2028", "-", "0", "_", "x",
    "error_code=", "error_code=7", ",error_code=3", "{error_code=1,a=[{error_code=2}]}",
    ",listener:", ", softwareVersion=", ",response:", " from connection ", ";totalTime:",
    ",temporaryMemoryBytes:12", ",messageConversionsTime:1.5", ", correlationId=5) -- ",
]  # fmt: skip
_NUMBERS = ["", "-", "2147483648", "-0", "0.5", "1.0E-4", "12", "x1", "1,2", "1e3", "NaN"]


@dataclass(frozen=True)
class Damage:
    """How a form's records are damaged: the start kept, what is inserted, what replaces a
    number, what ends a record; ``bounds``, the cumulative chances of an insert, a deletion, a
    repeat and a new end (the rest: a number replaced)."""

    keep: int
    inserts: Sequence[str]
    numbers: Sequence[str]
    number_re: str
    bounds: tuple[float, float, float, float]
    tails: Sequence[str] = ()

    def __call__(self, message: str, rnd: random.Random) -> str:
        """``message`` with one to three random edits, its first ``keep`` characters kept."""
        prefix, text = message[: self.keep], message[self.keep :]
        insert, delete, repeat, tail = self.bounds
        for _ in range(rnd.choice([1, 1, 2, 3])):
            at, choice = rnd.randrange(len(text) + 1), rnd.random()
            if choice < insert:
                text = text[:at] + rnd.choice(self.inserts) + text[at:]
            elif choice < delete:
                text = text[:at] + text[at + rnd.choice([1, 2, 5, 20]) :]
            elif choice < repeat:
                text = text[:at] + text[at : at + rnd.randrange(1, 40)] + text[at:]
            elif choice < tail:
                text = text.rstrip() + rnd.choice(self.tails)
            else:
                numbers = [m.span() for m in re.finditer(self.number_re, text)]
                if numbers:
                    start, end = rnd.choice(numbers)
                    text = text[:start] + rnd.choice(self.numbers) + text[end:]
        return prefix + text


#: The string form's records: ``Completed request:RequestHeader(`` kept.
damaged = Damage(32, _INSERTS, _NUMBERS, r"-?\d+(\.\d+)?(E-?\d+)?", (0.35, 0.6, 0.8, 0.8))


_CONNECTION = "10.1.2.3:9093-10.9.8.7:51234-4"
_SAMPLES = Path(__file__).resolve().parents[2] / "samples"
_CREATE_TOKEN = json_message(
    header(38, 3, 5, "CREATE_DELEGATION_TOKEN"),
    {
        "ownerPrincipalType": "User",
        "ownerPrincipalName": "bob",
        "renewers": [],
        "maxLifetimeMs": -1,
    },
    {
        "errorCode": 0,
        "principalType": "User",
        "principalName": "bob",
        "issueTimestampMs": 1700000000000,
        "expiryTimestampMs": 1700086400000,
        "maxTimestampMs": 1700604800000,
        "tokenId": "tok-1",
        "hmac": placeholder(FP_A),
        "throttleTimeMs": 0,
    },
    _CONNECTION,
)
JSON_SHAPES = [
    # The sample's one-line record (an ENVELOPE), its logger left out.
    *[
        found.group(1)
        for line in (_SAMPLES / "request-log.log").read_text(encoding="utf-8").splitlines()
        if (found := re.match(r"^\[[^]]+\] DEBUG (Completed request:\{.*\}) \(kafka", line))
    ],
    pretty_printed_record(_SAMPLES / "request-log.log").message or "",
    _CREATE_TOKEN,
    # Nested error codes, the top-level one last; a 4.x connection id; no client information.
    json_message(
        header(3, 12, 7, "METADATA", client="c\u00e9-é"),
        {"topics": None, "allowAutoTopicCreation": True},
        {
            "throttleTimeMs": 0,
            "topics": [{"errorCode": 3, "name": "t", "partitions": [{"errorCode": 9}]}],
            "errorCode": 41,
        },
        "[::1]:9092-[::1]:4000-2-17",
        times=(1.0e-4, 0.5, 0.25, 0.0, 3, 0.125, 1.0),
        extra={"clientInformation": None, "temporaryMemoryBytes": 1024},
    ),
    # A forwarded request, a deprecated version, an empty response and a conversion time.
    json_message(
        header(0, 3, 9, "PRODUCE", client=None) | {"requestApiVersionDeprecated": True},
        {"acks": -1, "timeoutMs": 30000},
        "",
        _CONNECTION,
        forwarded=True,
        extra={"messageConversionsTime": 2.5, "unknownKey": [1, {"a": None}]},
    ),
    # A connection id that does not parse; an error code beyond an int.
    json_message(
        header(17, 1, 2, "SASL_HANDSHAKE"),
        {"mechanism": "PLAIN"},
        {"errorCode": 0, "mechanisms": ["PLAIN"], "x": {"errorCode": 99999999999}},
        "not-a-connection",
    ),
]
_JSON_INSERTS = [
    ",", "{", "}", "[", "]", '"', ":", " ", "\t", "\\", "\\u00e9", "\u00e9", "\\/", "null",
    "true", "1.0", "1e3", "-0", '"errorCode":5,', ',"errorCode":7', '"x":1,', "'", "NaN",
    ',"principal":"User:x"', ',"Principal":"User:y"', ',"_corrupt_record":"a"',
    ',"clientInformation":null', ',"temporaryMemoryBytes":5', "\ud83d\ude00", "\ud83d",
    '"requestHeader":{}', '{"errorCode":7}', "[1,2]", " }", " x",
]  # fmt: skip
#: Ends after the object: spaces pass, anything else is bytes after the object (quarantined),
#: though Spark's from_json reads the object before them.
_JSON_TAILS = [" ", "  ", " }", "x", "\t", " {}", "\n", ' {"a":1}']
_JSON_NUMBERS = [
    "", "-", "2147483648", "9223372036854775808", "-0", "0.5", "1.0E-4", "1e400", "01", '"5"',
    "null", "true", "1.50", "NaN",
]  # fmt: skip


#: The JSON form's records: ``Completed request:`` kept.
damaged_json = Damage(
    18,
    _JSON_INSERTS,
    _JSON_NUMBERS,
    r"-?\d+(\.\d+)?([eE]-?\d+)?",
    (0.4, 0.6, 0.7, 0.8),
    _JSON_TAILS,
)


def messages() -> list[str]:
    rnd = random.Random(15)
    string = [*SHAPES, *[damaged(shape, rnd) for shape in SHAPES for _ in range(150)]]
    json = [*JSON_SHAPES, *[damaged_json(shape, rnd) for shape in JSON_SHAPES for _ in range(120)]]
    return string + json


def _answered(bronze: DataFrame, function: str) -> int:
    body = F.expr("substring(message, 19)")
    return bronze.where(F.call_udf(function, body).isNotNull()).count()


def test_the_jvm_functions_change_no_row(spark: SparkSession, tmp_path: Path) -> None:
    if not all(spark.catalog.functionExists(name) for name, _, _ in FUNCTIONS):
        pytest.skip("no JDK's javac here: the request log is parsed by its expressions alone")
    bronze = bronze_df(
        spark, [Record("DEBUG", REQUEST_LOGGER, m) for m in messages()], FAMILY_REQUEST
    ).localCheckpoint()
    native = parse_request_events(bronze).localCheckpoint()
    answered = {name: _answered(bronze, name) for name, _, _ in FUNCTIONS}
    for name, _, _ in FUNCTIONS:
        spark.sql(f"DROP TEMPORARY FUNCTION {name}")
    try:
        expressions = parse_request_events(bronze).localCheckpoint()
    finally:
        assert jvm_parsers.install(spark, tmp_path)  # not the user's cache
    # Each function answered for its undamaged shapes and for some damaged records, not all.
    string_count = len(SHAPES) * 151
    assert len(SHAPES) < answered[STRING_FORM_FUNCTION] < string_count
    assert len(JSON_SHAPES) < answered[JSON_FORM_FUNCTION] < len(messages()) - string_count
    assert_same_rows(native, expressions)


def assert_same_rows(left: DataFrame, right: DataFrame) -> None:
    assert left.columns == right.columns
    assert left.count() == right.count() == len(messages())
    assert left.exceptAll(right).count() == 0
    assert right.exceptAll(left).count() == 0


def test_the_jar_is_built_against_the_jars_the_sessions_jvm_runs_with(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM says which jars it runs with (its ``SparkContext``'s jar folder), and
    ``install`` compiles against those: a ``SPARK_HOME`` that points elsewhere (a YARN
    container's, one changed after the JVM started) changes nothing. The compile itself is
    a stand-in here (``test_built_once_then_taken_from_the_cache`` runs javac)."""
    jars = jvm_parsers.session_jars(spark)
    assert jars is not None
    assert any(jar.name.startswith("spark-core_") for jar in jars.glob("*.jar"))
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "elsewhere"))
    assert jvm_parsers.built_jar(tmp_path / "other") is None  # SPARK_HOME's: no jars
    # install asks the JVM: a function this session lacks makes it build (a stand-in here).
    asked: list[tuple[Path | None, Path | None]] = []
    monkeypatch.setattr(
        jvm_parsers, "FUNCTIONS", (("kafka_audit_no_such_function", "x", BooleanType()),)
    )
    monkeypatch.setattr(
        jvm_parsers, "built_jar", lambda folder, found: asked.append((folder, found))
    )
    assert jvm_parsers.install(spark, tmp_path / "cache") is False
    assert asked == [(tmp_path / "cache", jars)]
