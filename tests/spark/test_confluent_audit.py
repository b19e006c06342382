"""transforms.silver.confluent_audit.parse: Confluent audit-log CloudEvents -> authz_decisions / auth_events.

Real events, verbatim (single JSON lines as Confluent Server writes them):
* PLATFORM_ACL_*: Confluent Platform 5.5 with SASL/SCRAM and ACLs, specversion 0.3, from a public
  "Kafka Audit Log" playbook on GitHub (``./scripts/explore-audit-topic.sh`` output, 2020-05-12).
* PLATFORM_SUPER_USER: vdesabou/kafka-docker-playground ``other/audit-logs/README.md`` (commit
  257d4a96f8bc; pretty-printed there, re-serialized here on one line, values unchanged).
* PLATFORM_AUTHN / PLATFORM_DENIED: Confluent Platform 7.x with mTLS, specversion 1.0, from a
  public "RBAC/ACL access testing" walkthrough on GitHub (2023-02-21).
* CLOUD_MDS: Confluent Cloud docs, "Authentication and Authorization Auditable Events",
  ``mds.Authorize`` example (re-serialized on one line).
Confluent Cloud Kafka events are built from the documented shape (request.correlationId /
clientId, requestMetadata.clientAddress [{ip}], result.status, AuditLog v2 principal objects):
no verbatim public sample was found.
"""

from __future__ import annotations

import datetime as dt
import json
import string
from collections.abc import Mapping, Sequence

from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.auth_events import AUTH_EVENTS
from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.quarantine import QUARANTINE
from schemas.raw_lines import RAW_LINES
from tests.support.bronze_rows import NODE_ID, RUN_ID, SOURCE_PATH, assert_parsed
from transforms.quarantine import parsed_rows, quarantine_rows
from transforms.silver.confluent_audit.cloudevents import client_address, principal_text
from transforms.silver.confluent_audit.parse import (
    is_confluent_audit_record,
    parse_confluent_authentication,
    parse_confluent_authorization,
)

FAMILY = "confluent_audit"

PLATFORM_ACL_CREATE = r'{"data":{"serviceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","methodName":"kafka.CreateTopics","resourceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","authenticationInfo":{"principal":"User:producer"},"authorizationInfo":{"granted":true,"operation":"Create","resourceType":"Topic","resourceName":"bar","patternType":"LITERAL","aclAuthorization":{"permissionType":"ALLOW","host":"*"}},"request":{"correlation_id":"4","client_id":"adminclient-1"},"requestMetadata":{"client_address":"/172.27.0.3"}},"id":"b17cc9c7-96f0-413a-b94c-124e21834a55","source":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","specversion":"0.3","type":"io.confluent.kafka.server/authorization","time":"2020-05-12T12:24:37.838Z","datacontenttype":"application/json","subject":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","confluentRouting":{"route":"confluent-audit-log-events"}}'
PLATFORM_ACL_ALTER = r'{"data":{"serviceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","methodName":"kafka.IncrementalAlterConfigs","resourceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","authenticationInfo":{"principal":"User:producer"},"authorizationInfo":{"granted":true,"operation":"AlterConfigs","resourceType":"Topic","resourceName":"bar","patternType":"LITERAL","aclAuthorization":{"permissionType":"ALLOW","host":"*"}},"request":{"correlation_id":"4","client_id":"adminclient-1"},"requestMetadata":{"client_address":"/172.27.0.3"}},"id":"93e94659-8b45-4f44-b691-f284192ebe42","source":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","specversion":"0.3","type":"io.confluent.kafka.server/authorization","time":"2020-05-12T12:24:47.700Z","datacontenttype":"application/json","subject":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","confluentRouting":{"route":"confluent-audit-log-events"}}'
PLATFORM_ACL_PRODUCE = r'{"data":{"serviceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","methodName":"kafka.Produce","resourceName":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","authenticationInfo":{"principal":"User:producer"},"authorizationInfo":{"granted":true,"operation":"Write","resourceType":"Topic","resourceName":"bar","patternType":"LITERAL","aclAuthorization":{"permissionType":"ALLOW","host":"*"}},"request":{"correlation_id":"6","client_id":"rdkafka"},"requestMetadata":{"client_address":"/172.27.0.4"}},"id":"7789d492-df1c-404a-b494-3dc44fb01b24","source":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA","specversion":"0.3","type":"io.confluent.kafka.server/authorization","time":"2020-05-12T12:26:49.353Z","datacontenttype":"application/json","subject":"crn:///kafka=STOiZ_jWTxqgum3T5zEoqA/topic=bar","confluentRouting":{"route":"confluent-audit-log-events"}}'
PLATFORM_SUPER_USER = r'{"confluentRouting":{"route":"confluent-audit-log-events"},"data":{"authenticationInfo":{"principal":"User:admin"},"authorizationInfo":{"granted":true,"operation":"Read","patternType":"LITERAL","resourceName":"_confluent-metadata-auth","resourceType":"Topic","superUserAuthorization":true},"methodName":"kafka.FetchConsumer","request":{"client_id":"_confluent-metadata-auth-consumer-1","correlation_id":"456"},"requestMetadata":{"client_address":"/192.168.176.4"},"resourceName":"crn:///kafka=qL97v6UYSyOOwnIPIHurGg/topic=_confluent-metadata-auth","serviceName":"crn:///kafka=qL97v6UYSyOOwnIPIHurGg"},"datacontenttype":"application/json","id":"7a1bd9a9-7923-4550-8603-dc48fbc5772f","source":"crn:///kafka=qL97v6UYSyOOwnIPIHurGg","specversion":"0.3","subject":"crn:///kafka=qL97v6UYSyOOwnIPIHurGg/topic=_confluent-metadata-auth","time":"2020-03-31T10:00:03.532Z","type":"io.confluent.kafka.server/authorization"}'
PLATFORM_AUTHN = r'{"specversion":"1.0","id":"fbdeefc6-2ae9-4ae9-88cc-159c4f360c0e","source":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","type":"io.confluent.kafka.server/authentication","datacontenttype":"application/json","subject":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","time":"2023-02-21T06:07:38.958333Z","route":"confluent-audit-log-events","data":{"serviceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","methodName":"kafka.Authentication","resourceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","authenticationInfo":{"principal":"User:alice","metadata":{"mechanism":"SSL","identifier":"CN\u003dalice@mydomain.example,O\u003dWorld Domination Inc.,L\u003dMcMahons Point,ST\u003dNSW,C\u003dAU"},"principalResourceId":""},"requestMetadata":{"client_address":"/172.21.0.1"},"result":{"status":"SUCCESS","message":""}}}'
PLATFORM_DENIED = r'{"specversion":"1.0","id":"91b3626d-4b1a-49e0-9921-bdf120ced00d","source":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","type":"io.confluent.kafka.server/authorization","datacontenttype":"application/json","subject":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg/topic=no.rb.no.acl","time":"2023-02-21T10:26:58.886604Z","route":"confluent-audit-log-events","data":{"serviceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","methodName":"kafka.Metadata","resourceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg/topic\u003dno.rb.no.acl","authenticationInfo":{"principal":"User:alice","principalResourceId":""},"authorizationInfo":{"granted":false,"operation":"Describe","resourceType":"Topic","resourceName":"no.rb.no.acl","patternType":"LITERAL"},"request":{"correlation_id":"53","client_id":"console-producer"},"requestMetadata":{"client_address":"/172.21.0.1"}}}'
CLOUD_MDS = r'{"data": {"serviceName": "crn://confluent.cloud/", "methodName": "mds.Authorize", "resourceName": "crn://confluent.cloud/organization=1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/environment=env-1ab2c", "authenticationInfo": {"principal": "User:u-1abc2d"}, "authorizationInfo": {"granted": true, "operation": "CreateCloudCluster", "resourceType": "Environment", "resourceName": "environment", "patternType": "LITERAL", "rbacAuthorization": {"role": "OrganizationAdmin", "scope": {"outerScope": ["organization=1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"], "clusters": {}}}}}, "id": "f07bdde7-c633-41c9-abab-5ff3539e9967", "source": "crn://confluent.cloud/", "specversion": "1.0", "type": "io.confluent.kafka.server/authorization", "datacontenttype": "application/json", "subject": "crn://confluent.cloud/organization=1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/environment=env-1ab2c", "time": "2021-06-07T18:49:40.331Z"}'

CLOUD = "crn://confluent.cloud/organization=o-1/environment=env-1/cloud-cluster=lkc-a1b2c"


def cloud_event(kind: str, data: Mapping[str, object], **envelope: object) -> str:
    """A Confluent Cloud event in the documented envelope, as one JSON line."""
    event = {
        "id": "e-1", "source": CLOUD, "specversion": "1.0", "type": f"io.confluent.kafka.server/{kind}",
        "datacontenttype": "application/json", "subject": CLOUD, "time": "2024-01-12T13:33:46.296209728Z",
        "data": {"serviceName": CLOUD, **data},
    }  # fmt: skip
    return json.dumps({**event, **envelope})


CLOUD_DENIED_V2 = cloud_event("authorization", {
    "methodName": "kafka.Fetch",
    "authenticationInfo": {"principal": {"confluentServiceAccount": {"resourceId": "sa-aaa111"}}},
    "authorizationInfo": {"result": "DENY", "operation": "Read", "resourceType": "Topic", "resourceName": "orders", "patternType": "LITERAL",
                          "aclAuthorization": {"permissionType": "DENY", "host": "*", "patternName": "ord", "patternType": "PREFIXED", "resourceType": "Topic", "actingPrincipal": "User:pool-9"}},
    "request": {"correlationId": 17, "clientId": "consumer-1"},
    "requestMetadata": {"clientAddress": [{"ip": "203.0.113.10", "port": 51000}]},
})  # fmt: skip
CLOUD_AUTHN_FAILED = cloud_event("authentication", {
    "methodName": "kafka.Authentication",
    "authenticationInfo": {"metadata": {"mechanism": "SASL_SSL/PLAIN", "identifier": "ABCDEFGHIJKLMNOP"}},
    "requestMetadata": {"clientAddress": [{"ip": "198.51.100.7"}]},
    "result": {"status": "UNAUTHENTICATED", "message": "Authentication failed: Invalid username or password"},
}, id="e-2")  # fmt: skip
CLOUD_AUTHN_OK = cloud_event("authentication", {
    "methodName": "kafka.Authentication",
    "authenticationInfo": {"principal": "User:sa-1x2y3z", "metadata": {"mechanism": "SASL_SSL/OAUTHBEARER", "identifier": "pool-9"}},
    "requestMetadata": {"clientAddress": [{"ip": "2001:db8::1"}]},
    "result": {"status": "SUCCESS"},
}, id="e-3")  # fmt: skip
CLOUD_REQUEST = cloud_event(
    "request", {"methodName": "kafka.CreateTopics", "result": {"status": "SUCCESS"}}, id="e-4"
)


def json_bronze(
    spark: SparkSession, lines: Sequence[str | None], log_ts: Sequence[dt.datetime | None] = ()
) -> DataFrame:
    """RAW_LINES rows of layout 'json' as bronze writes them: level / logger null, message and
    raw = the line; log_ts given per line (default null), log_date its date."""
    stamps = list(log_ts) or [None] * len(lines)
    rows = [
        (RUN_ID, SOURCE_PATH, n, 1, NODE_ID, "config", "json", None, ts, None, None, None, None,
         line, None, line or "", FAMILY, ts.date() if ts else None)
        for n, (line, ts) in enumerate(zip(lines, stamps, strict=True), 1)
    ]  # fmt: skip
    return spark.createDataFrame(rows, RAW_LINES)


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


AUTHZ_COLUMNS = (
    "line_number", "event_ts", "event_id", "source_format", "authorizer", "record_type",
    "principal", "principal_type", "principal_name", "decision", "operation", "operation_raw",
    "host", "resource_type", "resource_type_raw", "pattern_type", "resource_name", "api_name",
    "rule", "acl_principal", "acl_host", "acl_permission_type", "acl_resource_type",
    "acl_resource_name", "acl_pattern_type", "client_id", "correlation_id", "rbac_role",
    "rbac_scope", "reason_code",
)  # fmt: skip


def test_real_and_documented_authorization_events_parse(spark: SparkSession) -> None:
    lines = [PLATFORM_ACL_CREATE, PLATFORM_ACL_ALTER, PLATFORM_ACL_PRODUCE, PLATFORM_SUPER_USER, PLATFORM_DENIED, CLOUD_MDS, CLOUD_DENIED_V2]  # fmt: skip
    parsed = parse_confluent_authorization(json_bronze(spark, lines))
    csa, conf = "ConfluentServerAuthorizer", "confluent_audit"
    acl = ("MatchingAcl", None, "*", "ALLOW", None, None, None)
    no_acl = (None,) * 6
    scope = '{"outerScope":["organization=1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"],"clusters":{}}'
    producer = ("User:producer", "User", "producer", "ALLOWED")
    expected = [
        (1, ts("2020-05-12T12:24:37.838"), "b17cc9c7-96f0-413a-b94c-124e21834a55", conf, csa, "decision", *producer, "CREATE", "Create", "172.27.0.3", "TOPIC", "Topic", "LITERAL", "bar", "CreateTopics", *acl, "adminclient-1", 4, None, None, None),
        (2, ts("2020-05-12T12:24:47.700"), "93e94659-8b45-4f44-b691-f284192ebe42", conf, csa, "decision", *producer, "ALTER_CONFIGS", "AlterConfigs", "172.27.0.3", "TOPIC", "Topic", "LITERAL", "bar", "IncrementalAlterConfigs", *acl, "adminclient-1", 4, None, None, None),
        (3, ts("2020-05-12T12:26:49.353"), "7789d492-df1c-404a-b494-3dc44fb01b24", conf, csa, "decision", *producer, "WRITE", "Write", "172.27.0.4", "TOPIC", "Topic", "LITERAL", "bar", "Produce", *acl, "rdkafka", 6, None, None, None),
        (4, ts("2020-03-31T10:00:03.532"), "7a1bd9a9-7923-4550-8603-dc48fbc5772f", conf, csa, "decision", "User:admin", "User", "admin", "ALLOWED", "READ", "Read", "192.168.176.4", "TOPIC", "Topic", "LITERAL", "_confluent-metadata-auth", "FetchConsumer", "SuperUser", *no_acl, "_confluent-metadata-auth-consumer-1", 456, None, None, None),
        (5, ts("2023-02-21T10:26:58.886604"), "91b3626d-4b1a-49e0-9921-bdf120ced00d", conf, csa, "decision", "User:alice", "User", "alice", "DENIED", "DESCRIBE", "Describe", "172.21.0.1", "TOPIC", "Topic", "LITERAL", "no.rb.no.acl", "Metadata", None, *no_acl, "console-producer", 53, None, None, None),
        (6, ts("2021-06-07T18:49:40.331"), "f07bdde7-c633-41c9-abab-5ff3539e9967", conf, csa, "decision", "User:u-1abc2d", "User", "u-1abc2d", "ALLOWED", "CREATE_CLOUD_CLUSTER", "CreateCloudCluster", None, "ENVIRONMENT", "Environment", "LITERAL", "environment", "mds.Authorize", "RBAC", *no_acl, None, None, "OrganizationAdmin", scope, None),
        (7, ts("2024-01-12T13:33:46.296209"), "e-1", conf, csa, "decision", "User:sa-aaa111", "User", "sa-aaa111", "DENIED", "READ", "Read", "203.0.113.10", "TOPIC", "Topic", "LITERAL", "orders", "Fetch", "MatchingAcl", "User:pool-9", "*", "DENY", "TOPIC", "ord", "PREFIXED", "consumer-1", 17, None, None, None),
    ]  # fmt: skip
    assert_parsed(spark, parsed, AUTHZ_COLUMNS, expected)


AUTHN_COLUMNS = (
    "line_number", "event_ts", "event_id", "source_format", "event_type", "side", "principal",
    "peer_host", "peer_ip", "security_protocol", "mechanism", "reason", "failure_reason_code",
    "listener", "connection_id", "principal_source", "mechanism_source", "reason_code",
)  # fmt: skip


def test_authentication_events_parse(spark: SparkSession) -> None:
    lines = [PLATFORM_AUTHN, CLOUD_AUTHN_FAILED, CLOUD_AUTHN_OK]
    parsed = parse_confluent_authentication(json_bronze(spark, lines))
    conf, t = "confluent_audit", ts("2024-01-12T13:33:46.296209")
    none2 = (None, None)
    # The audit event carries the principal and mechanism: principal_source / mechanism_source.
    expected = [
        (1, ts("2023-02-21T06:07:38.958333"), "fbdeefc6-2ae9-4ae9-88cc-159c4f360c0e", conf, "authentication_succeeded", "broker", "User:alice", None, "172.21.0.1", "SSL", None, None, None, *none2, conf, None, None),
        (2, t, "e-2", conf, "authentication_failed", "broker", None, None, "198.51.100.7", "SASL_SSL", "PLAIN", "Authentication failed: Invalid username or password", "INVALID_USERNAME_OR_PASSWORD", *none2, None, conf, None),
        (3, t, "e-3", conf, "authentication_succeeded", "broker", "User:sa-1x2y3z", None, "2001:db8::1", "SASL_SSL", "OAUTHBEARER", None, None, *none2, conf, conf, None),
    ]  # fmt: skip
    assert_parsed(spark, parsed, AUTHN_COLUMNS, expected)


MALFORMED_AUTHZ = [
    ("", "missing_field_message"),
    (None, "missing_field_message"),
    (PLATFORM_ACL_CREATE[:200], "confluent_invalid_json"),
    ('["specversion", "type"]', "confluent_invalid_json"),
    (json.dumps({"specversion": "1.0", "id": "x"}), "missing_field_type"),
    (CLOUD_REQUEST, "confluent_unsupported_event_type"),
    (PLATFORM_DENIED.replace('"specversion":"1.0",', ""), "missing_field_specversion"),
    (PLATFORM_DENIED.replace('"specversion":"1.0"', '"specversion":"2.0"'), "confluent_unsupported_specversion"),
    (PLATFORM_DENIED.replace('"id":"91b3626d-4b1a-49e0-9921-bdf120ced00d",', ""), "missing_field_id"),
    (PLATFORM_DENIED.replace("2023-02-21T10:26:58.886604Z", "yesterday"), "confluent_invalid_time"),
    (PLATFORM_DENIED.replace('"correlation_id":"53"', '"correlation_id":"x53"'), "confluent_invalid_correlation_id"),
    (cloud_event("authorization", {"methodName": "kafka.Fetch"}), "missing_field_authorization_info"),
    (PLATFORM_DENIED.replace('"granted":false', '"granted":"maybe"'), "missing_field_granted"),
    (PLATFORM_DENIED.replace('"principal":"User:alice",', ""), "missing_field_principal"),
    (PLATFORM_DENIED.replace('"User:alice"', '"alice"'), "missing_field_principal_type"),
    (PLATFORM_DENIED.replace('"operation":"Describe",', ""), "missing_field_operation"),
    (PLATFORM_DENIED.replace('"resourceType":"Topic",', ""), "missing_field_resource_type"),
    (PLATFORM_SUPER_USER.replace('"granted":true', '"granted":false'), "confluent_contradictory_decision"),
    (PLATFORM_ACL_CREATE.replace('"permissionType":"ALLOW"', '"permissionType":"DENY"'), "confluent_contradictory_decision"),
]  # fmt: skip
MALFORMED_AUTHN = [
    (PLATFORM_AUTHN.replace('"status":"SUCCESS",', ""), "missing_field_result_status"),
    (PLATFORM_AUTHN.replace('"principal":"User:alice",', ""), "missing_field_principal"),
    (PLATFORM_AUTHN.replace('"User:alice"', '"alice"'), "missing_field_principal_type"),
    (PLATFORM_AUTHN.replace('"specversion":"1.0"', '"specversion":"0.1"'), "confluent_unsupported_specversion"),
]  # fmt: skip


def test_every_record_comes_out_of_exactly_one_parser(spark: SparkSession) -> None:
    good = [PLATFORM_ACL_CREATE, PLATFORM_AUTHN, CLOUD_AUTHN_FAILED, CLOUD_MDS]
    cases = [(line, None) for line in good] + MALFORMED_AUTHZ + MALFORMED_AUTHN
    bronze = json_bronze(spark, [line for line, _ in cases])
    authz = parse_confluent_authorization(bronze).select(
        "line_number", "reason_code", F.lit("authz").alias("parser")
    )
    authn = parse_confluent_authentication(bronze).select(
        "line_number", "reason_code", F.lit("authn").alias("parser")
    )
    authn_lines = {2, 3, *range(len(good) + len(MALFORMED_AUTHZ) + 1, len(cases) + 1)}
    expected = [
        (n, code, "authn" if n in authn_lines else "authz") for n, (_, code) in enumerate(cases, 1)
    ]
    actual = authz.unionByName(authn).orderBy("line_number")
    schema = "line_number long, reason_code string, parser string"
    assert_df_equality(actual, spark.createDataFrame(expected, schema), ignore_nullable=True)


def test_table_and_quarantine_contracts_hold(spark: SparkSession) -> None:
    stamp = dt.datetime(2020, 5, 12, 12, 24, 37, 838000)
    bronze = json_bronze(
        spark, [PLATFORM_ACL_CREATE, PLATFORM_AUTHN, CLOUD_REQUEST], [stamp, None, None]
    )
    authz, authn = parse_confluent_authorization(bronze), parse_confluent_authentication(bronze)
    silver = [c for c in AUTHZ_DECISIONS.fieldNames() if c not in RAW_LINES.fieldNames()]
    assert authz.columns == [*RAW_LINES.fieldNames(), *silver, "reason_code", "reason_detail"]
    # Both table contracts hold exactly, nullability included; the event's own time wins.
    authz_row = (
        RUN_ID,
        SOURCE_PATH,
        1,
        NODE_ID,
        None,
        stamp,
        "decision",
        "ConfluentServerAuthorizer",
        "User:producer",
        "User",
        "producer",
        "ALLOWED",
        "CREATE",
        "Create",
        "172.27.0.3",
        "TOPIC",
        "Topic",
        "LITERAL",
        "bar",
        "CreateTopics",
        None,
        "MatchingAcl",
        None,
        None,
        None,
        None,
        "*",
        None,
        "ALLOW",
        "confluent_audit",
        "b17cc9c7-96f0-413a-b94c-124e21834a55",
        "adminclient-1",
        4,
        None,
        None,
        stamp.date(),
    )
    authn_row = (
        RUN_ID,
        SOURCE_PATH,
        2,
        NODE_ID,
        None,
        ts("2023-02-21T06:07:38.958333"),
        "authentication_succeeded",
        "broker",
        *[None] * 6,
        "172.21.0.1",
        *[None] * 9,
        "SSL",
        *[None] * 6,
        "confluent_audit",
        "fbdeefc6-2ae9-4ae9-88cc-159c4f360c0e",
        "User:alice",
        "confluent_audit",
        *[None] * 5,
        *[None] * 13,
        dt.date(2023, 2, 21),
    )
    assert_df_equality(
        parsed_rows(authz, AUTHZ_DECISIONS), spark.createDataFrame([authz_row], AUTHZ_DECISIONS)
    )
    assert_df_equality(
        parsed_rows(authn, AUTH_EVENTS), spark.createDataFrame([authn_row], AUTH_EVENTS)
    )
    quarantine = quarantine_rows(authz).unionByName(quarantine_rows(authn))
    assert quarantine.schema == QUARANTINE
    expected = [(RUN_ID, SOURCE_PATH, 3, NODE_ID, None, FAMILY, "confluent_unsupported_event_type", "io.confluent.kafka.server/request", CLOUD_REQUEST, False, None)]  # fmt: skip
    assert_df_equality(quarantine, spark.createDataFrame(expected, QUARANTINE))


def test_is_confluent_audit_record_claims_audit_events_only(spark: SparkSession) -> None:
    rows = [
        (PLATFORM_ACL_CREATE, True),
        (CLOUD_REQUEST, True),
        (PLATFORM_DENIED[:-40], True),  # cut after the type: claimed, then quarantined
        # Cut before specversion / type (0.3 events write "data" first): nothing tells.
        (PLATFORM_ACL_CREATE[:300], False),
        ('  {"type":"io.confluent.kafka.server/authentication","specversion":"1.0"}', True),
        ('{"specversion":"1.0","type":"io.confluent.flink.server/authentication"}', False),
        ('{"type":"io.confluent.kafka.server/authorization"}', False),
        ('Completed request:{"specversion":"1.0","type":"io.confluent.kafka.server/x"}', False),
        ("[2024-01-01 00:00:00,000] INFO x (kafka.authorizer.logger)", False),
        (None, False),
    ]
    df = spark.createDataFrame(rows, "message string, claimed boolean")
    actual = df.select("message", is_confluent_audit_record(F.col("message")).alias("claimed"))
    assert_df_equality(actual, df, ignore_nullable=True)


def test_principal_and_client_address_functions_including_nulls(spark: SparkSession) -> None:
    rows = [
        ("User:alice", "/172.21.0.1", None, "User:alice", "/172.21.0.1"),
        ('{"confluentUser":{"resourceId":"u-1"}}', None, '[{"ip":"10.0.0.1","port":9}]', "User:u-1", "10.0.0.1"),
        ('{"identityPool":{"resourceId":"pool-2"}}', "host/10.0.0.2", '[{"ip":"10.0.0.9"}]', "User:pool-2", "host/10.0.0.2"),
        ('{"email":"a@b.c"}', None, "[]", None, None),
        ("", None, None, None, None),
        (None, None, None, None, None),
    ]  # fmt: skip
    schema = "raw string, platform string, cloud string, principal string, address string"
    df = spark.createDataFrame(rows, schema)
    metadata = F.struct(
        F.col("platform").alias("client_address"), F.col("cloud").alias("clientAddress")
    )
    actual = df.select(
        "raw", "platform", "cloud",
        principal_text(F.col("raw")).alias("principal"),
        client_address(metadata).alias("address"),
    )  # fmt: skip
    assert_df_equality(actual, df, ignore_nullable=True)


# Hypothesis round trip: render events in Platform or Cloud spelling, parse them back.
_NAMES = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=20)
_OPERATIONS = (
    "Read",
    "Write",
    "Create",
    "Describe",
    "AlterConfigs",
    "IdempotentWrite",
    "DescribeConfigs",
)
_RESOURCES = ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken")


@st.composite
def authorization_events(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    platform, granted = draw(st.booleans()), draw(st.booleans())
    user, op, rtype = (
        draw(_NAMES),
        draw(st.sampled_from(_OPERATIONS)),
        draw(st.sampled_from(_RESOURCES)),
    )
    name, ip, client = draw(_NAMES), str(draw(st.ip_addresses(v=4))), draw(_NAMES)
    correlation, event_id = draw(st.integers(0, 2**31 - 1)), draw(st.uuids()).hex
    moment = draw(st.datetimes(dt.datetime(2019, 1, 1), dt.datetime(2030, 1, 1)))
    method = draw(st.sampled_from(("CreateTopics", "Fetch", "Produce", "Metadata")))
    rule = draw(st.sampled_from(("acl", "rbac", "none") + (("super",) if granted else ())))
    info: dict[str, object] = {
        "granted": granted,
        "operation": op,
        "resourceType": rtype,
        "resourceName": name,
        "patternType": "LITERAL",
    }
    if rule == "acl":
        info["aclAuthorization"] = {"permissionType": "ALLOW" if granted else "DENY", "host": "*"}
    elif rule == "rbac":
        info["rbacAuthorization"] = {
            "role": "DeveloperRead",
            "scope": {"outerScope": [], "clusters": {"kafka-cluster": "k1"}},
        }
    elif rule == "super":
        info["superUserAuthorization"] = True
    request = (
        {"correlation_id": str(correlation), "client_id": client}
        if platform
        else {"correlationId": correlation, "clientId": client}
    )
    metadata = {"client_address": f"/{ip}"} if platform else {"clientAddress": [{"ip": ip}]}
    data = {
        "methodName": f"kafka.{method}",
        "authenticationInfo": {"principal": f"User:{user}"},
        "authorizationInfo": info,
        "request": request,
        "requestMetadata": metadata,
    }
    time = moment.isoformat(timespec="microseconds") + "Z"
    line = cloud_event(
        "authorization", data, id=event_id, time=time, specversion="0.3" if platform else "1.0"
    )
    rules = {"acl": "MatchingAcl", "rbac": "RBAC", "none": None, "super": "SuperUser"}
    scope = '{"outerScope":[],"clusters":{"kafka-cluster":"k1"}}' if rule == "rbac" else None
    expected = (
        moment, event_id, f"User:{user}", "ALLOWED" if granted else "DENIED", op, ip, rtype, name, method,
        rules[rule], client, correlation, "DeveloperRead" if rule == "rbac" else None, scope, None,
    )  # fmt: skip
    return line, expected


_FAILURES = (
    ("Authentication failed: Invalid username or password", "INVALID_USERNAME_OR_PASSWORD"),
    ("Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256", "INVALID_CREDENTIALS"),
    ("bad token", "OTHER"),
    ("", "OTHER"),
)  # fmt: skip
_MECHANISMS = (
    ("SSL", "SSL", None),
    ("SASL_SSL/PLAIN", "SASL_SSL", "PLAIN"),
    ("SASL_PLAINTEXT/SCRAM-SHA-256", "SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("OAUTHBEARER", None, "OAUTHBEARER"),
)


@st.composite
def authentication_events(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    platform, ok = draw(st.booleans()), draw(st.booleans())
    user, ip, event_id = draw(_NAMES), str(draw(st.ip_addresses(v=4))), draw(st.uuids()).hex
    moment = draw(st.datetimes(dt.datetime(2019, 1, 1), dt.datetime(2030, 1, 1)))
    raw, protocol, mechanism = draw(st.sampled_from(_MECHANISMS))
    message, code = ("", None) if ok else draw(st.sampled_from(_FAILURES))
    principal = f"User:{user}" if ok or draw(st.booleans()) else None
    info: dict[str, object] = {"metadata": {"mechanism": raw, "identifier": "id-1"}}
    info |= {"principal": principal} if principal else {}
    status = "SUCCESS" if ok else draw(st.sampled_from(("UNAUTHENTICATED", "FAILURE")))
    metadata = {"client_address": f"/{ip}"} if platform else {"clientAddress": [{"ip": ip}]}
    data = {
        "methodName": "kafka.Authentication",
        "authenticationInfo": info,
        "requestMetadata": metadata,
        "result": {"status": status, "message": message},
    }
    time = moment.isoformat(timespec="microseconds") + "Z"
    line = cloud_event(
        "authentication", data, id=event_id, time=time, specversion="0.3" if platform else "1.0"
    )
    event = "authentication_succeeded" if ok else "authentication_failed"
    return line, (
        moment,
        event_id,
        event,
        principal,
        ip,
        protocol,
        mechanism,
        message or None,
        code,
        None,
    )


# Few examples, each one DataFrame of up to 25 rendered events of both types: ~60 events.
@settings(max_examples=3, deadline=None)
@given(
    st.lists(
        st.one_of(
            authorization_events().map(lambda e: ("authz", *e)),
            authentication_events().map(lambda e: ("authn", *e)),
        ),
        min_size=5,
        max_size=25,
    )
)
def test_round_trip_rendered_events(
    spark: SparkSession, events: list[tuple[str, str, tuple[object, ...]]]
) -> None:
    bronze = json_bronze(spark, [line for _, line, _ in events])
    authz_columns = (
        "line_number", "event_ts", "event_id", "principal", "decision", "operation_raw", "host",
        "resource_type_raw", "resource_name", "api_name", "rule", "client_id", "correlation_id",
        "rbac_role", "rbac_scope", "reason_code",
    )  # fmt: skip
    authn_columns = (
        "line_number", "event_ts", "event_id", "event_type", "principal", "peer_ip",
        "security_protocol", "mechanism", "reason", "failure_reason_code", "reason_code",
    )  # fmt: skip
    numbered = list(enumerate(events, 1))
    authz = [(i, *row) for i, (kind, _, row) in numbered if kind == "authz"]
    authn = [(i, *row) for i, (kind, _, row) in numbered if kind == "authn"]
    assert_parsed(spark, parse_confluent_authorization(bronze), authz_columns, authz)
    assert_parsed(spark, parse_confluent_authentication(bronze), authn_columns, authn)
