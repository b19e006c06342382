"""The string form's JVM function (``jobs.jvm_parsers``) gives the expression parse's rows.

Every string-form record is parsed twice by ``parse_request_events``: with the session function
registered (the records it answers for take its values, the rest the expressions') and without
it (the expressions alone). The whole outputs, every column of every row, must be equal: on
real lines, on the shapes the unit tests use, and on those lines damaged at random (seeded):
text inserted, deleted and repeated, numbers replaced by edge values.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import jvm_parsers
from schemas.raw_lines import FAMILY_REQUEST
from tests.support.bronze_rows import Record, bronze_df
from tests.support.request_lines import REQUEST_LOGGER
from transforms.silver.request_log.native import STRING_FORM_FUNCTION
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


def damaged(message: str, rnd: random.Random) -> str:
    """``message`` with one to three random edits (text inserted, deleted or repeated, a number
    replaced), its ``Completed request:RequestHeader(`` start kept."""
    prefix, text = message[:32], message[32:]
    for _ in range(rnd.choice([1, 1, 2, 3])):
        at, choice = rnd.randrange(len(text) + 1), rnd.random()
        if choice < 0.35:
            text = text[:at] + rnd.choice(_INSERTS) + text[at:]
        elif choice < 0.6:
            text = text[:at] + text[at + rnd.choice([1, 2, 5, 20]) :]
        elif choice < 0.8:
            text = text[:at] + text[at : at + rnd.randrange(1, 40)] + text[at:]
        else:
            numbers = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?(E-?\d+)?", text)]
            if numbers:
                start, end = rnd.choice(numbers)
                text = text[:start] + rnd.choice(_NUMBERS) + text[end:]
    return prefix + text


def messages() -> list[str]:
    rnd = random.Random(15)
    return [*SHAPES, *[damaged(shape, rnd) for shape in SHAPES for _ in range(150)]]


def test_the_jvm_function_changes_no_row(spark: SparkSession, tmp_path: Path) -> None:
    if not spark.catalog.functionExists(STRING_FORM_FUNCTION):
        pytest.skip("no JDK's javac here: the request log is parsed by its expressions alone")
    bronze = bronze_df(
        spark, [Record("DEBUG", REQUEST_LOGGER, m) for m in messages()], FAMILY_REQUEST
    )
    native = parse_request_events(bronze).localCheckpoint()
    answered = (
        bronze.select(F.call_udf(STRING_FORM_FUNCTION, F.expr("substring(message, 19)")).alias("n"))
        .where("n IS NOT NULL")
        .count()
    )
    spark.sql(f"DROP TEMPORARY FUNCTION {STRING_FORM_FUNCTION}")
    try:
        expressions = parse_request_events(bronze).localCheckpoint()
    finally:
        assert jvm_parsers.install(spark, tmp_path)  # not the user's cache
    # The function answered for the undamaged shapes and for some damaged records, not all.
    assert len(SHAPES) < answered < len(messages())
    assert_same_rows(native, expressions)


def assert_same_rows(left: DataFrame, right: DataFrame) -> None:
    assert left.columns == right.columns
    assert left.count() == right.count() == len(messages())
    assert left.exceptAll(right).count() == 0
    assert right.exceptAll(left).count() == 0
