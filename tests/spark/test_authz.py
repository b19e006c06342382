"""transforms.silver.authz: kafka.authorizer.logger records -> silver.authz_decisions rows."""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Sequence
from pathlib import Path

from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.authz_decisions import CONFLUENT_COLUMNS
from schemas.raw_lines import FAMILY_AUTHZ
from tests.support.bronze_rows import Record, assert_parsed, bronze_df, sample_file_records
from transforms.columns import group
from transforms.silver.auth.parse import is_auth_record
from transforms.silver.authz import (
    PRINCIPAL_NAME_RE,
    authz_decision,
    is_authz_record,
    kafka_enum_name,
    parse_authz_decisions,
    principal_name,
    principal_type,
)

AUTHZ = "kafka.authorizer.logger"


def parse(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_authz_decisions(bronze_df(spark, records, FAMILY_AUTHZ))


# Verbatim from samples/authorizer.log as (level, logger, message); the 4 timestamped lines carry
# log_ts as the layout parser would set it.
SAMPLE_TS = dt.datetime(2020, 6, 3, 14, 25, 26, 298000)
SAMPLE_RECORDS = [
    Record("INFO", AUTHZ, "Principal = User:skyDriveProducer is Denied Operation = Describe from host = 10.16.19.213 on resource = Topic:LITERAL:__consumer_offsets", log_ts=SAMPLE_TS),
    Record("INFO", AUTHZ, "Principal = User:skyDriveProducer is Denied Operation = Describe from host = 10.16.19.213 on resource = Topic:LITERAL:test", log_ts=SAMPLE_TS),
    Record("INFO", AUTHZ, "Principal = User:skyDriveProducer is Denied Operation = Describe from host = 10.16.19.213 on resource = Topic:LITERAL:qa.dcSacramento.skydrivetest", log_ts=SAMPLE_TS),
    Record("INFO", AUTHZ, "Principal = User:skyDriveProducer is Denied Operation = Describe from host = 10.16.19.213 on resource = Topic:LITERAL:__confluent.support.metrics", log_ts=SAMPLE_TS),
    Record("DEBUG", AUTHZ, "operation = Write on resource = Topic:LITERAL:ssl from host = 127.0.0.1 is Allow based on acl = User:CN=producer has Allow permission for operations: Write from hosts: *"),
    Record("DEBUG", AUTHZ, "Principal = User:CN=producer is Allowed Operation = Describe from host = 127.0.0.1 on resource = Topic:LITERAL:ssl for request = Metadata with resourceRefCount = 1"),
    Record("DEBUG", AUTHZ, "operation = Write on resource = Topic:LITERAL:ssl from host = 127.0.0.1 is Allow based on acl = User:CN=producer has Allow permission for operations: Write from hosts: *"),
    Record("DEBUG", AUTHZ, "Principal = User:CN=producer is Allowed Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:ssl for request = Produce with resourceRefCount = 1"),
    Record("DEBUG", AUTHZ, "operation = Read on resource = Topic:LITERAL:ssl from host = 127.0.0.1 is Allow based on acl = User:CN=consumer has Allow permission for operations: Read from hosts: *"),
    Record("DEBUG", AUTHZ, "Principal = User:CN=consumer is Allowed Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:ssl for request = Fetch with resourceRefCount = 1"),
    Record("DEBUG", AUTHZ, "Principal = User:Alice is Allowed Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:customerOrders for request = Produce with resourceRefCount = 1"),
    Record("INFO", AUTHZ, "Principal = User:Mallory is Denied Operation = Describe from host = 10.0.0.13 on resource = Topic:LITERAL:customerOrders for request = Metadata with resourceRefCount = 1"),
]  # fmt: skip

SAMPLE_COLUMNS = (
    "line_number", "event_ts", "record_type", "authorizer", "principal", "principal_type",
    "principal_name", "decision", "operation", "operation_raw", "host", "resource_type",
    "pattern_type", "resource_name", "api_name", "resource_ref_count", "acl_principal",
    "acl_operation", "acl_permission_type", "acl_host", "reason_code",
)  # fmt: skip


def test_sample_authorizer_log_lines_parse(spark: SparkSession) -> None:
    sky = (
        "decision",
        "SimpleAclAuthorizer",
        "User:skyDriveProducer",
        "User",
        "skyDriveProducer",
        "DENIED",
        "DESCRIBE",
        "Describe",
        "10.16.19.213",
        "TOPIC",
        "LITERAL",
    )
    acl_match = ("acl_match", None, None, None, None, "ALLOWED")
    acl = ("AclAuthorizer", "User:CN=producer", "User", "CN=producer", "ALLOWED")
    local = ("127.0.0.1", "TOPIC", "LITERAL", "ssl")
    no_acl = (None, None, None, None, None)
    expected = [
        (1, SAMPLE_TS, *sky, "__consumer_offsets", None, None, *no_acl),
        (2, SAMPLE_TS, *sky, "test", None, None, *no_acl),
        (3, SAMPLE_TS, *sky, "qa.dcSacramento.skydrivetest", None, None, *no_acl),
        (4, SAMPLE_TS, *sky, "__confluent.support.metrics", None, None, *no_acl),
        (5, None, *acl_match, "WRITE", "Write", *local, None, None, "User:CN=producer", "WRITE", "ALLOW", "*", None),
        (6, None, "decision", *acl, "DESCRIBE", "Describe", *local, "Metadata", 1, *no_acl),
        (7, None, *acl_match, "WRITE", "Write", *local, None, None, "User:CN=producer", "WRITE", "ALLOW", "*", None),
        (8, None, "decision", *acl, "WRITE", "Write", *local, "Produce", 1, *no_acl),
        (9, None, *acl_match, "READ", "Read", *local, None, None, "User:CN=consumer", "READ", "ALLOW", "*", None),
        (10, None, "decision", "AclAuthorizer", "User:CN=consumer", "User", "CN=consumer", "ALLOWED", "READ", "Read", *local, "Fetch", 1, *no_acl),
        (11, None, "decision", "AclAuthorizer", "User:Alice", "User", "Alice", "ALLOWED", "WRITE", "Write", "127.0.0.1", "TOPIC", "LITERAL", "customerOrders", "Produce", 1, *no_acl),
        (12, None, "decision", "AclAuthorizer", "User:Mallory", "User", "Mallory", "DENIED", "DESCRIBE", "Describe", "10.0.0.13", "TOPIC", "LITERAL", "customerOrders", "Metadata", 1, *no_acl),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, SAMPLE_RECORDS), SAMPLE_COLUMNS, expected)


def test_every_authorizer_log_line_is_claimed_and_parsed(
    spark: SparkSession, samples_dir: Path
) -> None:
    numbered = sample_file_records(samples_dir / "authorizer.log")
    numbers, records = zip(*numbered, strict=True)
    bronze = bronze_df(spark, records, FAMILY_AUTHZ, numbers)
    actual = (
        parse_authz_decisions(bronze)
        .select(
            "line_number",
            is_authz_record(F.col("logger"), F.col("message")).alias("claimed"),
            is_auth_record(F.col("logger"), F.col("message")).alias("auth_claimed"),
            "reason_code",
        )
        .orderBy("line_number")
    )
    rows = [(number, True, False, None) for number in numbers]
    schema = "line_number long, claimed boolean, auth_claimed boolean, reason_code string"
    assert len(numbered) == 12  # the file's 12 records, none skipped by the split above
    assert_df_equality(actual, spark.createDataFrame(rows, schema), ignore_nullable=True)


STANDARD_COLUMNS = (
    "line_number", "authorizer", "principal", "principal_type", "principal_name", "decision",
    "operation", "operation_raw", "host", "resource_type", "resource_type_raw", "pattern_type",
    "resource_name", "api_name", "resource_ref_count", "rule", "acl_resource_type",
    "acl_resource_name", "acl_pattern_type", "acl_principal", "acl_host", "acl_operation",
    "acl_permission_type", "reason_code",
)  # fmt: skip


def test_standard_authorizer_rules(spark: SparkSession) -> None:
    # StandardAuthorizerData.buildAuditMessage (3.3+); StandardAcl as class (...) and record [...].
    records = [
        Record("DEBUG", AUTHZ, "Principal = User:admin is Allowed operation = DESCRIBE from host = 10.0.0.1 on resource = Cluster:LITERAL:kafka-cluster for request = Metadata with resourceRefCount = 1 based on rule SuperUser"),
        Record("INFO", AUTHZ, "Principal = User:mallory is Denied operation = READ from host = 10.0.0.2 on resource = Topic:LITERAL:payments for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny"),
        Record("DEBUG", AUTHZ, "Principal = User:svc:etl is Allowed operation = DESCRIBE_CONFIGS from host = 0:0:0:0:0:0:0:1 on resource = Topic:LITERAL:orders for request = DescribeConfigs with resourceRefCount = 2 based on rule DefaultAllow"),
        Record("INFO", AUTHZ, "Principal = User:bob is Denied operation = READ from host = 10.0.0.4 on resource = Topic:LITERAL:alpha-1 for request = Fetch with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=alp, patternType=PREFIXED, principal=User:bob, host=*, operation=READ, permissionType=DENY))"),
        Record("DEBUG", AUTHZ, "Principal = User:CN=Alice Smith,OU=Data Eng,O=Acme\\, Inc. is Allowed operation = CREATE_TOKENS from host = 10.0.0.5 on resource = User:LITERAL:User:alice for request = CreateDelegationToken with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl[resourceType=USER, resourceName=User:alice, patternType=LITERAL, principal=User:CN=Alice Smith,OU=Data Eng,O=Acme\\, Inc., host=10.0.0.5, operation=CREATE_TOKENS, permissionType=ALLOW])"),
        Record("INFO", AUTHZ, "Principal = User:kafka/broker-1.example.com@EXAMPLE.COM is Denied operation = IDEMPOTENT_WRITE from host = 10.0.0.6 on resource = Cluster:LITERAL:kafka-cluster for request = InitProducerId with resourceRefCount = 1 based on rule DefaultDeny"),
        Record("INFO", AUTHZ, "Principal = User:CN=#1234 is Denied operation = DESCRIBE from host = 10.0.0.7 on resource = DelegationToken:LITERAL:Tk-9_x for request = DescribeDelegationToken with resourceRefCount = 1 based on rule DefaultDeny"),
        Record("INFO", AUTHZ, "Principal = User:app is Denied operation = WRITE from host = 10.0.0.8 on resource = TransactionalId:LITERAL:tx:1 for request = AddPartitionsToTxn with resourceRefCount = 1 based on rule DefaultDeny"),
    ]  # fmt: skip
    sa = "StandardAuthorizer"
    no_acl = (None, None, None, None, None, None, None)
    alice = "User:CN=Alice Smith,OU=Data Eng,O=Acme\\, Inc."
    expected = [
        (1, sa, "User:admin", "User", "admin", "ALLOWED", "DESCRIBE", "DESCRIBE", "10.0.0.1", "CLUSTER", "Cluster", "LITERAL", "kafka-cluster", "Metadata", 1, "SuperUser", *no_acl, None),
        (2, sa, "User:mallory", "User", "mallory", "DENIED", "READ", "READ", "10.0.0.2", "TOPIC", "Topic", "LITERAL", "payments", "Fetch", 1, "DefaultDeny", *no_acl, None),
        (3, sa, "User:svc:etl", "User", "svc:etl", "ALLOWED", "DESCRIBE_CONFIGS", "DESCRIBE_CONFIGS", "0:0:0:0:0:0:0:1", "TOPIC", "Topic", "LITERAL", "orders", "DescribeConfigs", 2, "DefaultAllow", *no_acl, None),
        (4, sa, "User:bob", "User", "bob", "DENIED", "READ", "READ", "10.0.0.4", "TOPIC", "Topic", "LITERAL", "alpha-1", "Fetch", 1, "MatchingAcl", "TOPIC", "alp", "PREFIXED", "User:bob", "*", "READ", "DENY", None),
        (5, sa, alice, "User", alice[5:], "ALLOWED", "CREATE_TOKENS", "CREATE_TOKENS", "10.0.0.5", "USER", "User", "LITERAL", "User:alice", "CreateDelegationToken", 1, "MatchingAcl", "USER", "User:alice", "LITERAL", alice, "10.0.0.5", "CREATE_TOKENS", "ALLOW", None),
        (6, sa, "User:kafka/broker-1.example.com@EXAMPLE.COM", "User", "kafka/broker-1.example.com@EXAMPLE.COM", "DENIED", "IDEMPOTENT_WRITE", "IDEMPOTENT_WRITE", "10.0.0.6", "CLUSTER", "Cluster", "LITERAL", "kafka-cluster", "InitProducerId", 1, "DefaultDeny", *no_acl, None),
        (7, sa, "User:CN=#1234", "User", "CN=#1234", "DENIED", "DESCRIBE", "DESCRIBE", "10.0.0.7", "DELEGATION_TOKEN", "DelegationToken", "LITERAL", "Tk-9_x", "DescribeDelegationToken", 1, "DefaultDeny", *no_acl, None),
        (8, sa, "User:app", "User", "app", "DENIED", "WRITE", "WRITE", "10.0.0.8", "TRANSACTIONAL_ID", "TransactionalId", "LITERAL", "tx:1", "AddPartitionsToTxn", 1, "DefaultDeny", *no_acl, None),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, records), STANDARD_COLUMNS, expected)


DETAIL_COLUMNS = (
    "line_number", "record_type", "authorizer", "principal", "decision", "operation",
    "operation_raw", "host", "resource_type", "resource_type_raw", "pattern_type",
    "resource_name", "api_name", "resource_ref_count", "acl_principal", "acl_host",
    "acl_operation", "acl_permission_type", "reason_code",
)  # fmt: skip


def test_older_formats_and_acl_authorizer_detail_lines(spark: SparkSession) -> None:
    # SimpleAclAuthorizer 1.1 / 2.0, AclAuthorizer 2.4-3.9 (logAuditMessage, isEmptyAclAndAuthorized,
    # isSuperUser, matchingAclExists), PascalCase via SecurityUtils.operationName/resourceTypeName.
    records = [
        Record("INFO", AUTHZ, "Principal = User:x is Denied Operation = Read from host = 1.2.3.4 on resource = Topic:foo"),
        Record("INFO", AUTHZ, "Principal = User:producer is Denied Operation = IdempotentWrite from host = 10.1.1.1 on resource = Cluster:LITERAL:kafka-cluster for request = InitProducerId with resourceRefCount = 1"),
        Record("INFO", AUTHZ, "Principal = User:bob is Denied Operation = CreateTokens from host = 10.1.1.2 on resource = User:LITERAL:User:alice for request = CreateDelegationToken with resourceRefCount = 1"),
        Record("DEBUG", AUTHZ, "Principal = User:app is Allowed Operation = DescribeConfigs from host = 10.1.1.3 on resource = TransactionalId:LITERAL:tx-1 for request = DescribeConfigs with resourceRefCount = 3"),
        Record("DEBUG", AUTHZ, "No acl found for resource ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL), authorized = false"),
        Record("DEBUG", AUTHZ, "No acl found for resource Topic:LITERAL:orders, authorized = true"),
        Record("DEBUG", AUTHZ, "No acl found for resource Group:g1, authorized = false"),
        Record("DEBUG", AUTHZ, "principal = User:CN=admin, O=Acme is a super user, allowing operation without checking acls."),
        Record("DEBUG", AUTHZ, "operation = READ on resource = ResourcePattern(resourceType=GROUP, name=g 1, patternType=LITERAL) from host = 10.1.1.4 is ALLOW based on acl = User:* has ALLOW permission for operations: ALL from hosts: *"),
        Record("DEBUG", AUTHZ, "operation = Describe on resource = Topic:LITERAL:secret from host = 10.1.1.5 is Deny based on acl = User:eve has Deny permission for operations: Describe from hosts: 10.1.1.5"),
    ]  # fmt: skip
    simple, acl = "SimpleAclAuthorizer", "AclAuthorizer"
    none4 = (None, None, None, None)
    expected = [
        (1, "decision", simple, "User:x", "DENIED", "READ", "Read", "1.2.3.4", "TOPIC", "Topic", None, "foo", None, None, *none4, None),
        (2, "decision", acl, "User:producer", "DENIED", "IDEMPOTENT_WRITE", "IdempotentWrite", "10.1.1.1", "CLUSTER", "Cluster", "LITERAL", "kafka-cluster", "InitProducerId", 1, *none4, None),
        (3, "decision", acl, "User:bob", "DENIED", "CREATE_TOKENS", "CreateTokens", "10.1.1.2", "USER", "User", "LITERAL", "User:alice", "CreateDelegationToken", 1, *none4, None),
        (4, "decision", acl, "User:app", "ALLOWED", "DESCRIBE_CONFIGS", "DescribeConfigs", "10.1.1.3", "TRANSACTIONAL_ID", "TransactionalId", "LITERAL", "tx-1", "DescribeConfigs", 3, *none4, None),
        (5, "no_acl", acl, None, "DENIED", None, None, None, "TOPIC", "TOPIC", "LITERAL", "orders", None, None, *none4, None),
        (6, "no_acl", None, None, "ALLOWED", None, None, None, "TOPIC", "Topic", "LITERAL", "orders", None, None, *none4, None),
        (7, "no_acl", simple, None, "DENIED", None, None, None, "GROUP", "Group", None, "g1", None, None, *none4, None),
        (8, "super_user", None, "User:CN=admin, O=Acme", "ALLOWED", None, None, None, None, None, None, None, None, None, *none4, None),
        (9, "acl_match", acl, None, "ALLOWED", "READ", "READ", "10.1.1.4", "GROUP", "GROUP", "LITERAL", "g 1", None, None, "User:*", "*", "ALL", "ALLOW", None),
        (10, "acl_match", None, None, "DENIED", "DESCRIBE", "Describe", "10.1.1.5", "TOPIC", "Topic", "LITERAL", "secret", None, None, "User:eve", "10.1.1.5", "DESCRIBE", "DENY", None),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, records), DETAIL_COLUMNS, expected)


def test_malformed_and_invented_lines_are_quarantined(spark: SparkSession) -> None:
    std = "Principal = User:a is {result} operation = {op} from host = 1.1.1.1 on resource = Topic:LITERAL:t for request = Fetch with resourceRefCount = 1 based on rule {rule}"
    cases = [
        (None, "missing_field_message"),
        ("   ", "missing_field_message"),
        ("Principal = User:alice is Denied Operation = Read from host = 10.0.0.1 on reso", "authz_truncated_message"),
        ("Principal = User:alice is Denied Operation = Read from host = 10.0.0.1 on resource = Topic:LITERAL:orders for request = Fetch with resourceRef", "authz_truncated_message"),
        (std.format(result="Denied", op="READ", rule="MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=al"), "authz_truncated_message"),
        ("principal = User:admin is a super us", "authz_truncated_message"),
        # docs/kafka-log-formats.md section 9: formats that circulate online but no Kafka writes.
        ("Principal=User:alice is Denied Operation=Write from host=10.0.0.5 on resource=Topic:LITERAL:orders for request=Produce", "authz_not_kafka_format"),
        ("Principal = User:alice is Denied operation = Write from host = 10.0.0.5 on resource = Topic:LITERAL:orders for request = Produce", "authz_not_kafka_format"),
        ("Principal = User:alice is Denied operation = Write from host = 10.0.0.5 on resource = Topic:LITERAL:orders for request = Produce with resourceRefCount = 1", "authz_not_kafka_format"),
        ("Principal = User:a is Denied Operation = Read from host = 1.1.1.1 on resource = Topic:LITERAL:t for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny", "authz_not_kafka_format"),
        (std.format(result="Denied", op="Read", rule="DefaultDeny"), "authz_not_kafka_format"),
        (std.format(result="Allowed", op="READ", rule="DefaultDeny"), "authz_not_kafka_format"),
        (std.format(result="Denied", op="READ", rule="AclFoo"), "authz_unrecognized_rule"),
        ("operation = READ on resource = Topic:LITERAL:t from host = 1.1.1.1 is ALLOW based on acl = (principal=User:a, host=*, operation=READ, permissionType=ALLOW)", "authz_unrecognized_acl"),
        ("Principal = alice is Denied Operation = Read from host = 1.1.1.1 on resource = Topic:LITERAL:t", "missing_field_principal_type"),
        ("Principal = User:a is Denied Operation = Read from host = 1.1.1.1 on resource = orders", "missing_field_resource_type"),
        ("[ReplicaManager broker=1] Completed request:{} principal:[User:x]:[x]", "authz_unrecognized_format"),
        ("Completed initial ACL load process.", "authz_unrecognized_format"),
    ]  # fmt: skip
    parsed = parse(spark, [Record("INFO", AUTHZ, message) for message, _ in cases])
    actual = parsed.select(
        "line_number", "reason_code", F.col("reason_detail").isNotNull().alias("claimed")
    )
    expected = [(i, code, True) for i, (_, code) in enumerate(cases, 1)]
    assert_parsed(spark, actual, ("line_number", "reason_code", "claimed"), expected)


def test_log_lines_are_log4j_rows_without_confluent_columns(spark: SparkSession) -> None:
    parsed = parse(spark, SAMPLE_RECORDS[:2])
    columns = ("line_number", "source_format", *CONFLUENT_COLUMNS, "reason_code")
    expected = [(n, "log4j", None, None, None, None, None, None) for n in (1, 2)]
    assert_parsed(spark, parsed, columns, expected)


def test_column_functions_including_nulls(spark: SparkSession) -> None:
    rows = [
        ("IdempotentWrite", "User:CN=a,O=b", "Allowed"),
        ("TransactionalId", "User:svc:etl", "DENY"),
        ("DelegationToken", "alice", "true"),
        ("READ", "User:", "false"),
        (None, None, None),
    ]
    df = spark.createDataFrame(rows, "raw string, principal string, result string")
    actual = df.select(
        kafka_enum_name(F.col("raw")).alias("enum"),
        principal_type(F.col("principal")).alias("type"),
        principal_name(F.col("principal")).alias("name"),
        authz_decision(F.col("result")).alias("decision"),
    )
    expected = spark.createDataFrame(
        [
            ("IDEMPOTENT_WRITE", "User", "CN=a,O=b", "ALLOWED"),
            ("TRANSACTIONAL_ID", "User", "svc:etl", "DENIED"),
            ("DELEGATION_TOKEN", None, None, "ALLOWED"),
            ("READ", "User", None, "DENIED"),
            (None, None, None, None),
        ],
        "enum string, type string, name string, decision string",
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


def test_principal_parts_equal_their_regex_groups(spark: SparkSession) -> None:
    """principal_type / principal_name (no nullif, one regex evaluation) against the
    ``group`` forms they replace, on the edges: empty type or name, no ':', several ':', line
    terminators inside and at the end (Java's '.' and '$'), null."""
    texts: list[str | None] = ["User:alice", "User:", ":alice", "alice", "", "User:a:b"]
    texts += ["User:a\nb", "User:a\n", "User:a\u2028", "User:\n", "Us\ner:a", "\n:a", None]
    df = spark.createDataFrame(list(enumerate(texts)), "id int, principal string")
    p = F.col("principal")
    fast = df.select("id", principal_type(p).alias("type"), principal_name(p).alias("name"))
    slow = df.select(
        "id",
        group(p, r"^([^:]*):", 1).alias("type"),
        group(p, PRINCIPAL_NAME_RE, 1).alias("name"),
    )
    assert_df_equality(fast, slow, ignore_nullable=True)
    names = {row["id"]: row["name"] for row in fast.collect()}
    assert (names[0], names[6], names[7], names[9]) == ("alice", None, "a", None)


def test_is_authz_record_claims_the_whole_logger(spark: SparkSession) -> None:
    rows = [
        ("kafka.authorizer.logger", "anything at all"),
        ("kafka.authorizer.logger:275", None),
        ("kafka.request.logger", "Principal = User:a is Denied Operation = Read"),
        ("org.apache.kafka.metadata.authorizer.StandardAuthorizerData", "[StandardAuthorizer 1] x"),
        (None, "Principal = User:a is Denied Operation = Read"),
    ]
    df = spark.createDataFrame(rows, "logger string, message string")
    actual = df.select(is_authz_record(F.col("logger"), F.col("message")).alias("claimed"))
    expected = spark.createDataFrame(
        [(True,), (True,), (False,), (False,), (False,)], "claimed boolean"
    )
    assert_df_equality(actual, expected, ignore_nullable=True)


# Hypothesis round trip: render decisions in each authorizer's exact format, parse them back.
_OPERATIONS = ("READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "ALL")  # fmt: skip
_RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
_NAME_CHARS = string.ascii_letters + string.digits + " ,=#/@:._-"
_TOPIC_CHARS = string.ascii_letters + string.digits + "._-"
_ROUND_TRIP_COLUMNS = (
    "line_number", "authorizer", "principal", "principal_type", "principal_name", "decision",
    "operation", "host", "resource_type", "pattern_type", "resource_name", "api_name",
    "resource_ref_count", "rule", "reason_code",
)  # fmt: skip


def pascal(enum_name: str) -> str:
    """SecurityUtils.operationName / resourceTypeName rendering."""
    return "".join(word.capitalize() for word in enum_name.split("_"))


@st.composite
def rendered_decisions(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    """(message, expected row without line_number) for one rendered audit decision."""
    authorizer = draw(st.sampled_from(("Simple11", "Simple20", "AclAuthorizer", "Standard")))
    ptype = draw(st.sampled_from(("User", "Group", "ServiceAccount")))
    name = draw(st.text(_NAME_CHARS, min_size=1, max_size=24))
    host = str(draw(st.ip_addresses()))
    op, rtype = draw(st.sampled_from(_OPERATIONS)), draw(st.sampled_from(_RESOURCE_TYPES))
    chars = _TOPIC_CHARS if authorizer == "Simple11" else _NAME_CHARS
    resource = draw(st.text(chars, min_size=1, max_size=24).filter(lambda s: s.strip() == s))
    api, refs = (
        draw(st.sampled_from(("Fetch", "Produce", "CreateDelegationToken"))),
        draw(st.integers(0, 9999)),
    )
    rule = draw(st.sampled_from(("SuperUser", "DefaultAllow", "DefaultDeny")))
    allowed = rule != "DefaultDeny" if authorizer == "Standard" else draw(st.booleans())
    result = "Allowed" if allowed else "Denied"
    pattern = None if authorizer == "Simple11" else "LITERAL"
    res = f"{pascal(rtype)}:{pattern + ':' if pattern else ''}{resource}"
    head = f"Principal = {ptype}:{name} is {result}"
    if authorizer == "Standard":
        tail = f" for request = {api} with resourceRefCount = {refs} based on rule {rule}"
        message = f"{head} operation = {op} from host = {host} on resource = {res}{tail}"
    else:
        tail = (
            f" for request = {api} with resourceRefCount = {refs}"
            if authorizer == "AclAuthorizer"
            else ""
        )
        message = f"{head} Operation = {pascal(op)} from host = {host} on resource = {res}{tail}"
    expected_authorizer = {"Simple11": "SimpleAclAuthorizer", "Simple20": "SimpleAclAuthorizer"}
    has_api = authorizer in ("AclAuthorizer", "Standard")
    return message, (
        expected_authorizer.get(authorizer, authorizer.replace("Standard", "StandardAuthorizer")),
        f"{ptype}:{name}", ptype, name, "ALLOWED" if allowed else "DENIED", op, host, rtype,
        pattern, resource, api if has_api else None, refs if has_api else None,
        rule if authorizer == "Standard" else None, None,
    )  # fmt: skip


# Few examples, each one DataFrame of up to 25 rendered lines: ~60 lines, 3 Spark jobs.
@settings(max_examples=3, deadline=None)
@given(st.lists(rendered_decisions(), min_size=5, max_size=25))
def test_round_trip_rendered_decisions(
    spark: SparkSession, decisions: list[tuple[str, tuple[object, ...]]]
) -> None:
    parsed = parse(spark, [Record("INFO", AUTHZ, message) for message, _ in decisions])
    expected = [(i, *row) for i, (_, row) in enumerate(decisions, 1)]
    assert_parsed(spark, parsed, _ROUND_TRIP_COLUMNS, expected)
