"""transforms.silver.request_log.parse: kafka.request.logger records -> silver.request_events rows."""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from chispa import assert_df_equality
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.raw_lines import FAMILY_REQUEST
from schemas.request_events import REQUEST_EVENTS
from tests.support.bronze_rows import Record, bronze_df, sample_file_records
from tests.support.request_lines import (
    FP_A,
    FP_B,
    REQUEST_LOGGER,
    address_data,
    assert_rows,
    header,
    java_ip,
    json_message,
    placeholder,
    pretty_printed_record,
    principal_data,
    redacted,
    string_message,
    string_tail,
)
from transforms.kafka_apis import api_key_of
from transforms.kafka_errors import error_code_name, error_code_names
from transforms.quarantine import parsed_rows, quarantine_rows
from transforms.silver.request_log.kip590_envelope import (
    decoded_principal,
    envelope_client_address,
    envelope_principal,
)
from transforms.silver.request_log.parse import (
    connection_groups,
    connection_parts,
    is_request_record,
    item_error_codes,
    parse_request_events,
)
from transforms.silver.request_log.string_form import struct_top_level_error_code
from transforms.silver.request_log.tokens import hmac_fingerprint


def parse(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_request_events(bronze_df(spark, records, FAMILY_REQUEST))


def debug(message: str | None, level: str = "DEBUG") -> Record:
    return Record(level, REQUEST_LOGGER, message)


COMMON = (
    "line_number", "log_format", "is_forwarded", "api_key", "api_version", "api_key_name",
    "api_version_deprecated", "correlation_id", "client_id", "connection_id", "local_ip",
    "local_port", "remote_ip", "remote_port", "processor_id", "connection_index",
    "total_time_ms", "request_queue_time_ms", "local_time_ms", "remote_time_ms",
    "throttle_time_ms", "response_queue_time_ms", "send_time_ms", "security_protocol",
    "principal", "principal_type", "principal_name", "listener", "client_software_name",
    "client_software_version", "temporary_memory_bytes", "message_conversions_time_ms",
    "error_code", "error_code_name", "item_error_codes", "item_error_code_names", "reason_code",
)  # fmt: skip
BODIES = ("line_number", "request_json", "response_json", "request_text", "response_text")
ENVELOPE = (
    "line_number", "envelope_principal", "envelope_principal_token_authenticated",
    "envelope_client_address",
)  # fmt: skip


def sample_records(samples_dir: Path) -> list[Record]:
    """Lines 1-3: forwarding.log and request-log.log hold the same real ENVELOPE line (PR
    #13197), here with requestData redacted as bronze would; the 4.x PRODUCE sample was
    pretty-printed by its poster and is reassembled into the one line the broker wrote."""
    ((_, forwarded),) = sample_file_records(samples_dir / "forwarding.log")
    ((_, logged),) = sample_file_records(samples_dir / "request-log.log")
    produce = pretty_printed_record(samples_dir / "request-log.log")
    return [r._replace(message=redacted(r.message or "", FP_A)) for r in (forwarded, logged)] + [
        produce
    ]


@pytest.fixture(scope="module")
def parsed(spark: SparkSession, samples_dir: Path) -> Iterator[DataFrame]:
    """Every fixed case of this module parsed once (lines 1-3 samples, 11-15 JSON variants,
    21-25 string form, 101.. malformed), cached: building the plan is the costly part."""
    records = [*sample_records(samples_dir), *json_variant_records(), *string_form_records()]
    malformed = [debug(message) for message, _ in malformed_cases()]
    numbers = [1, 2, 3, *range(11, 16), *range(21, 26), *range(101, 101 + len(malformed))]
    bronze = bronze_df(spark, [*records, *malformed], FAMILY_REQUEST, numbers)
    result = parse_request_events(bronze).withColumn(
        "claimed", is_request_record(F.col("logger"), F.col("message"))
    )
    result.persist()
    yield result
    result.unpersist()


def test_real_samples_parse(spark: SparkSession, parsed: DataFrame) -> None:
    parsed = parsed.where(F.col("line_number") <= 3)
    envelope: tuple[object, ...] = (
        "json", False, 58, 0, "ENVELOPE", None, 6, "1", "127.0.0.1:51244-127.0.0.1:51264-1",
        "127.0.0.1", 51244, "127.0.0.1", 51264, None, 1, 0.362, 0.096, 0.12, 0.0, 0, 0.051, 0.095,
        "PLAINTEXT", "User:ANONYMOUS", "User", "ANONYMOUS", "EXTERNAL", "apache-kafka-java",
        "unknown", None, None, 41, "NOT_CONTROLLER", [], [], None,
    )  # fmt: skip
    expected = [
        (1, *envelope),
        (2, *envelope),
        (3, "json", False, 0, 13, "PRODUCE", None, 283, "cagri-producer",
         "172.80.0.11:9092-172.80.0.43:52486-0-4", "172.80.0.11", 9092, "172.80.0.43", 52486, 0,
         4, 4.67, 0.118, 2.304, 2.109, 0, 0.031, 0.106, "SASL_SSL", "User:kafka-admin", "User",
         "kafka-admin", "BROKER", "apache-kafka-java", "4.2.0", None, None, None, None, [0],
         ["NONE"], None),
    ]  # fmt: skip
    assert_rows(spark, parsed, COMMON, expected)
    envelope_request = (
        f'{{"requestData":"{placeholder(FP_A)}","requestPrincipal":"AAAFVXNlcgpBTk9OWU1PVVMAAA==",'
        '"clientHostAddress":"fwAAAQ=="}'
    )
    envelope_response = '{"responseData":null,"errorCode":41}'
    produce_response = (
        '{"responses":[{"topicId":"r3IRhpJiTnOM9i0B4tRT5g","partitionResponses":[{"index":8,'
        '"errorCode":0,"baseOffset":72,"logAppendTimeMs":-1,"logStartOffset":0,"recordErrors":[],'
        '"errorMessage":null}]}],"throttleTimeMs":0}'
    )
    produce_request = (
        '{"transactionalId":null,"acks":-1,"timeoutMs":3000,"topicData":[{"topicId":'
        '"r3IRhpJiTnOM9i0B4tRT5g","partitionData":[{"index":8,"recordsSizeInBytes":115}]}]}'
    )
    bodies = [
        (1, envelope_request, envelope_response, None, None),
        (2, envelope_request, envelope_response, None, None),
        (3, produce_request, produce_response, None, None),
    ]
    assert_rows(spark, parsed, BODIES, bodies)
    decoded = [(1, "User:ANONYMOUS", False, "127.0.0.1"), (2, "User:ANONYMOUS", False, "127.0.0.1")]
    assert_rows(
        spark,
        parsed,
        (*ENVELOPE, "claimed"),
        [(*d, True) for d in decoded] + [(3, None, None, None, True)],
    )


SASL_AFTER_AUTH = "SaslAuthenticate request received after successful authentication"


def json_variant_records() -> list[Record]:
    """Lines 11-15: JSON-form variants."""
    fetch_response = {
        "throttleTimeMs": 0, "errorCode": 0, "sessionId": 0,
        "responses": [{"topic": "t", "partitions": [
            {"partitionIndex": 0, "errorCode": 0}, {"partitionIndex": 1, "errorCode": 3},
            {"partitionIndex": 2, "errorCode": 3}]}],
    }  # fmt: skip
    records = [
        # KAFKA-18272 / KIP-896: a deprecated version is logged at INFO with the flag.
        debug(json_message(header(41, 0, 3, "DESCRIBE_DELEGATION_TOKEN") | {"requestApiVersionDeprecated": True}, {"owners": None}, {"errorCode": 0, "tokens": [], "throttleTimeMs": 0}, "10.0.0.1:9093-10.0.0.7:40000-2"), "INFO"),
        # SaslAuthenticate after authentication (KafkaApis): ILLEGAL_SASL_STATE, secrets redacted.
        debug(json_message(header(36, 2, 4, "SASL_AUTHENTICATE"), {"authBytes": placeholder(FP_A)}, {"errorCode": 34, "errorMessage": SASL_AFTER_AUTH, "authBytes": placeholder(FP_B), "sessionLifetimeMs": 0}, "10.0.0.1:9093-10.0.0.8:40001-0")),
        # SaslHandshake to a PLAINTEXT listener; header v0 carries no clientId (ControlledShutdown v0).
        debug(json_message(header(17, 1, 5, "SASL_HANDSHAKE"), {"mechanism": "PLAIN"}, {"errorCode": 34, "mechanisms": []}, "10.0.0.1:9092-10.0.0.9:40002-1", principal="User:ANONYMOUS", protocol="PLAINTEXT", listener="PLAINTEXT")),
        debug(json_message(header(7, 0, 6, "CONTROLLED_SHUTDOWN", client=None), "", "", "10.0.0.1:9091-10.0.0.2:40003-3", principal="User:CN=broker:2,O=Acme", protocol="SSL", listener="INTERNAL", software=("unknown", "unknown"))),
        # Forwarded (KIP-590) on a KRaft controller over IPv6; 4.x id with processor; >0-only keys.
        debug(json_message(header(1, 11, 7, "FETCH", client="consumer-1"), {"replicaId": -1}, fetch_response, "0:0:0:0:0:0:0:1:9093-0:0:0:0:0:0:0:1:51000-2-7", forwarded=True, listener="CONTROLLER", times=(10.25, 0.5, 1.0, 8.0, 25, 0.25, 0.5), extra={"temporaryMemoryBytes": 2048, "messageConversionsTime": 0.75})),
    ]  # fmt: skip
    return records


def test_json_variants(spark: SparkSession, parsed: DataFrame) -> None:
    parsed = parsed.where(F.col("line_number").between(11, 15))
    cid = ("10.0.0.1", 9093, "10.0.0.7", 40000, None, 2)
    times = (1.5, 0.1, 0.2, 0.3, 0, 0.4, 0.5)
    java = ("apache-kafka-java", "3.9.0", None, None)
    expected = [
        (11, "json", False, 41, 0, "DESCRIBE_DELEGATION_TOKEN", True, 3, "cli", "10.0.0.1:9093-10.0.0.7:40000-2", *cid, *times, "SASL_SSL", "User:alice", "User", "alice", "BROKER", *java, 0, "NONE", [], [], None),
        (12, "json", False, 36, 2, "SASL_AUTHENTICATE", None, 4, "cli", "10.0.0.1:9093-10.0.0.8:40001-0", "10.0.0.1", 9093, "10.0.0.8", 40001, None, 0, *times, "SASL_SSL", "User:alice", "User", "alice", "BROKER", *java, 34, "ILLEGAL_SASL_STATE", [], [], None),
        (13, "json", False, 17, 1, "SASL_HANDSHAKE", None, 5, "cli", "10.0.0.1:9092-10.0.0.9:40002-1", "10.0.0.1", 9092, "10.0.0.9", 40002, None, 1, *times, "PLAINTEXT", "User:ANONYMOUS", "User", "ANONYMOUS", "PLAINTEXT", *java, 34, "ILLEGAL_SASL_STATE", [], [], None),
        (14, "json", False, 7, 0, "CONTROLLED_SHUTDOWN", None, 6, None, "10.0.0.1:9091-10.0.0.2:40003-3", "10.0.0.1", 9091, "10.0.0.2", 40003, None, 3, *times, "SSL", "User:CN=broker:2,O=Acme", "User", "CN=broker:2,O=Acme", "INTERNAL", "unknown", "unknown", None, None, None, None, None, None, None),
        (15, "json", True, 1, 11, "FETCH", None, 7, "consumer-1", "0:0:0:0:0:0:0:1:9093-0:0:0:0:0:0:0:1:51000-2-7", "0:0:0:0:0:0:0:1", 9093, "0:0:0:0:0:0:0:1", 51000, 2, 7, 10.25, 0.5, 1.0, 8.0, 25, 0.25, 0.5, "SASL_SSL", "User:alice", "User", "alice", "CONTROLLER", "apache-kafka-java", "3.9.0", 2048, 0.75, 0, "NONE", [0, 3], ["NONE", "UNKNOWN_TOPIC_OR_PARTITION"], None),
    ]  # fmt: skip
    assert_rows(spark, parsed, COMMON, expected)
    sasl_response = (
        f'{{"errorCode":34,"errorMessage":"{SASL_AFTER_AUTH}","authBytes":"{placeholder(FP_B)}",'
        '"sessionLifetimeMs":0}'
    )
    bodies = [
        (12, f'{{"authBytes":"{placeholder(FP_A)}"}}', sasl_response, None, None),
        (14, None, None, None, None),
    ]
    assert_rows(spark, parsed.where(F.col("line_number").isin(12, 14)), BODIES, bodies)


def string_form_records() -> list[Record]:
    """Lines 21-25: 1.0-2.7 string-form lines."""
    book = (  # Kafka: The Definitive Guide, 2nd ed., ch. 11 (a 2.7 broker's DEBUG line).
        "Completed request:RequestHeader(apiKey=PRODUCE, apiVersion=8, clientId=producer-1, correlationId=6) -- "
        "{acks=-1,timeout=30000,partitionSizes=[customerOrders-0=15514]},response:{responses=[{topic=customerOrders,"
        "partition_responses=[{partition=0,error_code=0,base_offset=13,log_append_time=-1,log_start_offset=0,"
        "record_errors=[],error_message=null}]}],throttle_time_ms=0} from connection 127.0.0.1:9094-127.0.0.1:61040-0;"
        "totalTime:2.42,requestQueueTime:0.112,localTime:2.15,remoteTime:0.0,throttleTime:0,responseQueueTime:0.04,"
        "sendTime:0.118,securityProtocol:SASL_SSL,principal:User:Alice,listener:SASL_SSL,"
        "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0-SNAPSHOT)"
    )
    metrics = "totalTime:1.0E-4,requestQueueTime:0.5,localTime:0.25,remoteTime:0.0,throttleTime:3,responseQueueTime:0.125,sendTime:1.0"
    records = [
        debug(book),
        # 2.4 and older: no clientInformation; the >0-only metrics at the end.
        debug(string_message(("FETCH", 10, "consumer-2", 9), "{replica_id=-1,max_wait_time=500}", "{throttle_time_ms=0,error_code=0,session_id=0,responses=[{topic=t,partition_responses=[{partition_header={partition=0,error_code=1}}]}]}", f"10.1.1.1:9092-10.1.1.2:33000-5;{metrics},securityProtocol:SSL,principal:User:CN=a,O=b,listener:SSL,temporaryMemoryBytes:4096,messageConversionsTime:2.5")),
        debug(string_message(("SASL_HANDSHAKE", 1, "cli", 3), "{mechanism=PLAIN}", "{error_code=34,mechanisms=[]}", f"10.1.1.1:9092-10.1.1.3:33001-0;{metrics},securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT,clientInformation:ClientInformation(softwareName=unknown, softwareVersion=unknown)")),
        debug(string_message(("RENEW_DELEGATION_TOKEN", 1, "admin", 4), f"{{hmac={placeholder(FP_B)},renew_period_ms=3600000}}", "{error_code=62,expiry_timestamp_ms=-1,throttle_time_ms=0}", f"10.1.1.1:9094-10.1.1.4:33002-1;{metrics},securityProtocol:SASL_SSL,principal:User:bob,listener:SASL_SSL,clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.6.0)")),
        debug(string_message(("NOT_AN_API", 0, "", 5), "{}", "{}", f"10.1.1.1:9094-10.1.1.4:33002-2;{metrics},securityProtocol:SASL_SSL,principal:User:bob,listener:SASL_SSL")),
    ]  # fmt: skip
    return records


def test_pre_2_8_string_form(spark: SparkSession, parsed: DataFrame) -> None:
    parsed = parsed.where(F.col("line_number").between(21, 25))
    t = (0.0001, 0.5, 0.25, 0.0, 3, 0.125, 1.0)
    expected = [
        (21, "string", False, 0, 8, "PRODUCE", None, 6, "producer-1", "127.0.0.1:9094-127.0.0.1:61040-0", "127.0.0.1", 9094, "127.0.0.1", 61040, None, 0, 2.42, 0.112, 2.15, 0.0, 0, 0.04, 0.118, "SASL_SSL", "User:Alice", "User", "Alice", "SASL_SSL", "apache-kafka-java", "2.7.0-SNAPSHOT", None, None, None, None, [0], ["NONE"], None),
        (22, "string", False, 1, 10, "FETCH", None, 9, "consumer-2", "10.1.1.1:9092-10.1.1.2:33000-5", "10.1.1.1", 9092, "10.1.1.2", 33000, None, 5, *t, "SSL", "User:CN=a,O=b", "User", "CN=a,O=b", "SSL", None, None, 4096, 2.5, 0, "NONE", [1], ["OFFSET_OUT_OF_RANGE"], None),
        (23, "string", False, 17, 1, "SASL_HANDSHAKE", None, 3, "cli", "10.1.1.1:9092-10.1.1.3:33001-0", "10.1.1.1", 9092, "10.1.1.3", 33001, None, 0, *t, "PLAINTEXT", "User:ANONYMOUS", "User", "ANONYMOUS", "PLAINTEXT", "unknown", "unknown", None, None, 34, "ILLEGAL_SASL_STATE", [], [], None),
        (24, "string", False, 39, 1, "RENEW_DELEGATION_TOKEN", None, 4, "admin", "10.1.1.1:9094-10.1.1.4:33002-1", "10.1.1.1", 9094, "10.1.1.4", 33002, None, 1, *t, "SASL_SSL", "User:bob", "User", "bob", "SASL_SSL", "apache-kafka-java", "2.6.0", None, None, 62, "DELEGATION_TOKEN_NOT_FOUND", [], [], None),
        (25, "string", False, None, 0, "NOT_AN_API", None, 5, None, "10.1.1.1:9094-10.1.1.4:33002-2", "10.1.1.1", 9094, "10.1.1.4", 33002, None, 2, *t, "SASL_SSL", "User:bob", "User", "bob", "SASL_SSL", None, None, None, None, None, None, [], [], None),
    ]  # fmt: skip
    assert_rows(spark, parsed, COMMON, expected)
    texts = [
        (23, None, None, "{mechanism=PLAIN}", "{error_code=34,mechanisms=[]}", None),
        (24, None, None, f"{{hmac={placeholder(FP_B)},renew_period_ms=3600000}}", "{error_code=62,expiry_timestamp_ms=-1,throttle_time_ms=0}", FP_B),
    ]  # fmt: skip
    columns = (*BODIES, "token_hmac_fingerprint")
    assert_rows(spark, parsed.where(F.col("line_number").isin(23, 24)), columns, texts)


def _valid(correlation: int = 1, connection: str = "10.0.0.1:9092-10.0.0.2:5000-0") -> str:
    return json_message(
        header(3, 12, correlation, "METADATA"),
        {"topics": None},
        {"throttleTimeMs": 0, "brokers": []},
        connection,
    )


def _big_response(partitions: int) -> dict[str, object]:
    items = [{"partitionIndex": i, "errorCode": 0, "highWatermark": i} for i in range(partitions)]
    return {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "responses": [{"topic": "big", "partitions": items}],
    }


STRING_METRICS = "10.0.0.1:9092-10.0.0.2:5000-0;totalTime:1.0,requestQueueTime:0.1,localTime:0.2,remoteTime:0.0,throttleTime:0,responseQueueTime:0.1,sendTime:0.1,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT"


def malformed_cases() -> list[tuple[str | None, str | None]]:
    """(message, expected reason_code) for cut, garbled and invented request-log lines."""
    valid = _valid()
    big = json_message(
        header(1, 16, 2, "FETCH"),
        {"replicaId": -1},
        _big_response(20_000),
        "10.0.0.1:9092-10.0.0.2:5000-0",
    )
    assert len(big) > 1_000_000
    good_string = string_message(
        ("METADATA", 5, "cli", 1), "{topics=null}", "{brokers=[]}", STRING_METRICS
    )
    return [
        (valid, None),
        (big, None),  # a 1 MB line parses
        (big[:1_000_000], "request_truncated"),  # and cut at 1 MB is quarantined
        (None, "missing_field_message"),
        ("Completed req", "request_truncated"),
        ("Completed request:", "request_truncated"),
        ("Completed request:   ", "request_truncated"),
        ("Completed request:hello", "request_unrecognized_format"),
        ("Processor 3 received request", "request_unrecognized_format"),
        # docs/kafka-log-formats.md section 9: an invented format (third-party parser test).
        ("[ReplicaManager broker=1] Completed request:RequestHeader(apiKey=PRODUCE, apiVersion=8, clientId=p, correlationId=42) -- x from connection y; principal:[User:x]:[x]", "request_unrecognized_format"),
        (valid[:200], "request_truncated"),
        (valid.replace(',"connection"', ',\u0000\u0001"connection"'), "request_malformed_json"),
        (valid + "\u0007trailing", "request_malformed_json"),
        (valid.replace('"requestApiKey":3', '"requestApiKey":"3"'), "request_wrong_type_api_key"),
        (valid.replace('"isForwarded":false', '"isForwarded":"false"'), "request_wrong_type_is_forwarded"),
        (valid.replace('"totalTimeMs":1.5', '"totalTimeMs":"slow"'), "request_wrong_type_total_time_ms"),
        (valid.replace('"throttleTimeMs":0,"responseQueueTimeMs"', '"throttleTimeMs":0.5,"responseQueueTimeMs"'), "request_wrong_type_throttle_time_ms"),
        (valid.replace('"correlationId":1,', '"correlationId":99999999999,'), "request_wrong_type_correlation_id"),
        (valid.replace('"clientInformation":{', '"clientInformation":"x","ignored":{'), "request_wrong_type_client_information"),
        # Optional keys of the wrong type on an otherwise well-formed record (not the fast path).
        (valid.replace('"clientInformation":{', '"temporaryMemoryBytes":"many","clientInformation":{'), "request_wrong_type_temporary_memory_bytes"),
        (valid.replace('"requestApiKeyName":"METADATA"', '"requestApiKeyName":"METADATA","requestApiVersionDeprecated":"no"'), "request_wrong_type_api_version_deprecated"),
        (valid.replace('"principal":"User:alice",', ""), "request_missing_field_principal"),
        (valid.replace('"requestApiKeyName":"METADATA"', '"requestApiKeyName":null'), "request_missing_field_api_key_name"),
        ('Completed request:{"isForwarded":false,"requestHeader":"METADATA"}', "request_wrong_type_request_header"),
        (_valid(connection="broker-1"), "request_malformed_connection"),
        (good_string, None),
        (good_string[:60], "request_truncated"),  # inside RequestHeader(...)
        (good_string[:110], "request_truncated"),  # before ',response:'
        (good_string[: good_string.index(",principal:")], "request_truncated"),
        (good_string.replace("totalTime:1.0", "totalTime:abc"), "request_wrong_type_total_time_ms"),
        (good_string + ",foo:bar", "request_malformed_metrics"),
        ("Completed request:RequestHeader(apiKey=METADATA) -- {topics=null},response:{} from connection x", "request_malformed_header"),
        (good_string.replace("10.0.0.1:9092-10.0.0.2:5000-0", "conn-1"), "request_malformed_connection"),
    ]  # fmt: skip


def test_malformed_lines_are_quarantined_and_every_row_comes_out_once(
    spark: SparkSession, parsed: DataFrame
) -> None:
    cases = malformed_cases()
    parsed = parsed.where(F.col("line_number") > 100)
    # A null message is not claimed (family_of gives it no family), but parsed defensively.
    expected = [(100 + i, code, m is not None) for i, (m, code) in enumerate(cases, 1)]
    assert_rows(spark, parsed, ("line_number", "reason_code", "claimed"), expected)
    # Table contract: accepted rows have exactly REQUEST_EVENTS; every input row lands once.
    table = parsed_rows(parsed, REQUEST_EVENTS)
    assert table.schema == REQUEST_EVENTS
    both = table.select("line_number", F.lit(True).alias("parsed")).unionByName(
        quarantine_rows(parsed).select("line_number", F.lit(False).alias("parsed"))
    )
    rows = [(100 + i, code is None) for i, (_, code) in enumerate(cases, 1)]
    expected_split = spark.createDataFrame(rows, "line_number long, parsed boolean")
    assert_df_equality(both.orderBy("line_number"), expected_split, ignore_nullable=True)


def test_is_request_record_claims_the_request_logger(spark: SparkSession) -> None:
    rows = [
        ("kafka.request.logger", "Completed request:{}"),
        ("kafka.request.logger", "garbled"),  # the logger writes nothing else: claimed, quarantined
        ("kafka.request.logger:275", "Completed request:{}"),
        ("kafka.network.RequestChannel$", "Completed request:RequestHeader(apiKey=PRODUCE"),
        ("kafka.network.RequestChannel$", "Completed req"),
        ("kafka.network.RequestChannel$", "Processor 1 received request"),
        ("kafka.server.KafkaApis", "Completed request:{}"),
        ("kafka.request.logger", None),
        (None, "Completed request:{}"),
    ]
    df = spark.createDataFrame(rows, "logger string, message string")
    actual = df.select(is_request_record(F.col("logger"), F.col("message")).alias("claimed"))
    claimed = [True, True, True, True, True, False, False, False, False]
    expected = spark.createDataFrame([(c,) for c in claimed], "claimed boolean")
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_envelope_decoding_including_nulls(spark: SparkSession) -> None:
    long_name = "CN=" + "x" * 197  # 200 bytes: a 2-byte varint length
    rows = [
        ("AAAFVXNlcgpBTk9OWU1PVVMAAA==", "fwAAAQ=="),  # the real sample
        (principal_data("User", "alice", True), "CgAA/w=="),
        (principal_data("User", long_name, False), "AAAAAAAAAAAAAAAAAAAAAQ=="),
        ("AAEFVXNlcgZhbGljZQAA", "/oAAAAAAAAAAAAAAAAGrzQ=="),  # version 1; fe80::1:abcd
        ("AAAFVXNlcgZhbGk=", "AAAAAAAAAAAAAP//CgECAw=="),  # cut; IPv4-mapped ::ffff:10.1.2.3
        ("!!!", "AQIDBAU="),  # not base64; 5 bytes
        (None, None),
    ]
    df = spark.createDataFrame(rows, "principal string, address string")
    decoded = decoded_principal(F.col("principal"))
    actual = df.select(
        decoded["principal"].alias("principal"),
        decoded["token_authenticated"].alias("token"),
        envelope_principal(F.col("principal")).alias("principal_only"),
        envelope_client_address(F.col("address")).alias("address"),
    )
    expected = [
        ("User:ANONYMOUS", False, "User:ANONYMOUS", "127.0.0.1"),
        ("User:alice", True, "User:alice", "10.0.0.255"),
        (f"User:{long_name}", False, f"User:{long_name}", "0:0:0:0:0:0:0:1"),
        (None, None, None, "fe80:0:0:0:0:0:1:abcd"),
        (None, None, None, "10.1.2.3"),
        (None, None, None, None),
        (None, None, None, None),
    ]
    schema = "principal string, token boolean, principal_only string, address string"
    assert_df_equality(actual, spark.createDataFrame(expected, schema), ignore_nullable=True)


def test_error_codes_and_column_functions_including_nulls(spark: SparkSession) -> None:
    rows = [
        (41, [34, 999], "10.0.0.1:9092-10.0.0.2:5000-7", "{error_code=34,mechanisms=[]}", placeholder(FP_A), "ALTER_ISR"),
        (-1, [], "0:0:0:0:0:0:0:1:9093-0:0:0:0:0:0:0:1:6000-3-8", "{responses=[{error_code=5}],error_code=0}", "[REDACTED]", "CREATE_DELEGATION_TOKEN"),
        (133, [0, None], "broker-1", "{responses=[{error_code=5}]}", "c2VjcmV0", "NOT_AN_API"),
        (999, None, None, None, None, None),
        (None, None, None, None, None, None),
    ]  # fmt: skip
    schema = "code int, codes array<int>, cid string, text string, hmac string, api string"
    df = spark.createDataFrame(rows, schema)
    parts = connection_parts(connection_groups(F.col("cid")))
    actual = df.select(
        error_code_name(F.col("code")).alias("name"),
        error_code_names(F.col("codes")).alias("names"),
        *[
            parts[k].alias(k)
            for k in (
                "local_ip",
                "local_port",
                "remote_ip",
                "remote_port",
                "processor_id",
                "connection_index",
            )
        ],
        struct_top_level_error_code(F.col("text")).alias("top"),
        hmac_fingerprint(F.col("hmac")).alias("fingerprint"),
        api_key_of(F.col("api")).alias("api_key"),
    )
    expected = [
        ("NOT_CONTROLLER", ["ILLEGAL_SASL_STATE", None], "10.0.0.1", 9092, "10.0.0.2", 5000, None, 7, 34, FP_A, 56),
        ("UNKNOWN_SERVER_ERROR", [], "0:0:0:0:0:0:0:1", 9093, "0:0:0:0:0:0:0:1", 6000, 3, 8, 0, None, 38),
        ("SHARE_SESSION_LIMIT_REACHED", ["NONE", None], None, None, None, None, None, None, None, None, None),
        (None, None, None, None, None, None, None, None, None, None, None),
        (None, None, None, None, None, None, None, None, None, None, None),
    ]  # fmt: skip
    out = (
        "name string, names array<string>, local_ip string, local_port int, remote_ip string,"
        " remote_port int, processor_id int, connection_index int, top int, fingerprint string,"
        " api_key int"
    )
    assert_df_equality(actual, spark.createDataFrame(expected, out), ignore_nullable=True)
    found = [
        ([0, 3, 3], 0, [3]),
        ([0, 0, 5], 0, [0, 5]),
        ([7, 2], None, [2, 7]),
        ([], 34, []),
        (None, None, None),
    ]
    codes = spark.createDataFrame(found, "found array<int>, top int, expected array<int>")
    nested = codes.select(item_error_codes(F.col("found"), F.col("top")).alias("items"))
    assert_df_equality(nested, codes.select(F.col("expected").alias("items")), ignore_nullable=True)


# Hypothesis round trip: render events in each form's exact format, parse them back.
_CODES = {0: "NONE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 34: "ILLEGAL_SASL_STATE", 41: "NOT_CONTROLLER", 62: "DELEGATION_TOKEN_NOT_FOUND", 65: "DELEGATION_TOKEN_AUTHORIZATION_FAILED"}  # fmt: skip
_APIS = (("PRODUCE", 0), ("METADATA", 3), ("SASL_HANDSHAKE", 17), ("CREATE_DELEGATION_TOKEN", 38))
_TEXT = string.ascii_letters + string.digits + "-_."
_NAME_CHARS = string.ascii_letters + string.digits + " ,=#/@:._-"
_ROUND_TRIP_COLUMNS = (
    "line_number", "log_format", "is_forwarded", "api_key", "api_version", "api_key_name",
    "correlation_id", "client_id", "local_ip", "local_port", "remote_ip", "remote_port",
    "processor_id", "connection_index", "total_time_ms", "request_queue_time_ms",
    "local_time_ms", "remote_time_ms", "throttle_time_ms", "response_queue_time_ms",
    "send_time_ms", "security_protocol", "principal_type", "principal_name", "listener",
    "client_software_name", "client_software_version", "temporary_memory_bytes",
    "message_conversions_time_ms", "error_code", "error_code_name", "item_error_codes",
    "envelope_principal", "envelope_principal_token_authenticated", "envelope_client_address",
    "reason_code",
)  # fmt: skip


@st.composite
def connections(draw: st.DrawFn, processor_ids: bool) -> tuple[str, tuple[object, ...]]:
    """(connection id, its expected parts) in SocketServer / ServerConnectionId format."""
    local, remote = draw(st.ip_addresses()), draw(st.ip_addresses())
    ports = draw(st.tuples(st.integers(1, 65535), st.integers(1, 65535)))
    processor = draw(st.none() | st.integers(0, 64)) if processor_ids else None
    index = draw(st.integers(0, 10_000))
    parts = (java_ip(local), ports[0], java_ip(remote), ports[1], processor, index)
    ids = [str(n) for n in (processor, index) if n is not None]
    return f"{parts[0]}:{ports[0]}-{parts[2]}:{ports[1]}-" + "-".join(ids), parts


# fmt: off
@st.composite
def rendered_requests(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    """(message, expected row without line_number) for one rendered request-log record."""
    form = draw(st.sampled_from(("json", "string", "envelope")))
    api, key = ("ENVELOPE", 58) if form == "envelope" else draw(st.sampled_from(_APIS))
    version, correlation = draw(st.integers(0, 15)), draw(st.integers(0, 2**31 - 1))
    client = draw(st.text(_TEXT, min_size=1, max_size=12))
    connection, parts = draw(connections(form != "string"))
    floats = st.floats(0, 1e6, allow_nan=False, allow_infinity=False)
    times = draw(st.tuples(floats, floats, floats, floats, st.integers(0, 10**6), floats, floats))
    protocol = draw(st.sampled_from(("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")))
    ptype, pname = draw(st.sampled_from(("User", "Group"))), draw(st.text(_NAME_CHARS, min_size=1, max_size=20))
    listener = draw(st.text(string.ascii_uppercase + "_", min_size=1, max_size=10))
    software = draw(st.none() | st.tuples(st.text(_TEXT, min_size=1, max_size=10), st.text(_TEXT, min_size=1, max_size=10)))
    memory, conversions = draw(st.none() | st.integers(1, 10**9)), draw(st.none() | st.floats(0.001, 1e4))
    top, nested = draw(st.sampled_from(sorted(_CODES))), draw(st.lists(st.sampled_from(sorted(_CODES)), max_size=4))
    extra = {k: v for k, v in (("temporaryMemoryBytes", memory), ("messageConversionsTime", conversions)) if v is not None}
    principal = f"{ptype}:{pname}"
    envelope: tuple[object, ...] = (None, None, None)
    if form == "string":
        response = f"{{error_code={top},items=[" + ",".join(f"{{error_code={c}}}" for c in nested) + "]}"
        tail = string_tail(connection, times, principal, protocol=protocol, listener=listener, software=software, extra=extra)
        message = string_message((api, version, client, correlation), "{x=1}", response, tail)
    else:
        software = software or ("unknown", "unknown")
        request: dict[str, object] = {"x": 1}
        if form == "envelope":
            owner, address, token = draw(st.text(_NAME_CHARS, min_size=1, max_size=300)), draw(st.ip_addresses()), draw(st.booleans())
            request = {"requestData": placeholder(FP_A), "requestPrincipal": principal_data("User", owner, token), "clientHostAddress": address_data(address)}
            envelope = (f"User:{owner}", token, java_ip(address))
        response_json = {"errorCode": top, "items": [{"errorCode": c} for c in nested]}
        message = json_message(header(key, version, correlation, api, client), request, response_json, connection, principal=principal, protocol=protocol, listener=listener, software=software, times=times, extra=extra)
    name, release = software or (None, None)
    return message, (
        "string" if form == "string" else "json", False, key, version, api, correlation, client,
        *parts, *times, protocol, ptype, pname, listener, name, release, memory, conversions,
        top, _CODES[top], sorted(set(nested)), *envelope, None,
    )
# fmt: on


# Few examples, each one DataFrame of up to 15 rendered lines: one plan and one job each.
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rendered_requests(), min_size=6, max_size=15))
def test_round_trip_rendered_requests(
    spark: SparkSession, events: list[tuple[str, tuple[object, ...]]]
) -> None:
    parsed = parse(spark, [debug(message) for message, _ in events])
    expected = [(i, *row) for i, (_, row) in enumerate(events, 1)]
    assert_rows(spark, parsed, _ROUND_TRIP_COLUMNS, expected)
