"""OCSF 1.8.0 events exported by ``kafka-audit export-ocsf`` (``transforms.ocsf``).

Three classes of the Open Cybersecurity Schema Framework, one ``StructType`` each:

- Authentication (``class_uid`` 3002, category 3 Identity & Access Management), from
  silver.auth_events.
- API Activity (``class_uid`` 6003, category 6 Application Activity), from the decisions of
  silver.authz_decisions.
- Detection Finding (``class_uid`` 2004, category 2 Findings), from gold.findings, mapped in
  Python (``jobs.ocsf_findings``; the findings table is a small aggregate read without Spark).

Only the attributes we fill are declared. Attributes OCSF requires (``activity_id``,
``category_uid``, ``class_uid``, ``metadata`` with ``product`` and ``version``, ``severity_id``,
``time``, ``type_uid``; Authentication ``user``; API Activity ``actor``, ``api.operation``,
``src_endpoint``; Detection Finding ``finding_info`` with its ``uid``) are NOT NULL at the top
level, and so are constants and captions; nested fields are nullable (the JSON writers omit
nulls). ``time`` is epoch milliseconds (OCSF ``timestamp_t``): never null (events and findings
without a timestamp are not exported), declared nullable in the two classes Spark maps, as
Spark cannot prove it. ``unmapped`` holds the Kafka facts OCSF has no attribute for, and the
source line number.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

OCSF_VERSION = "1.8.0"

AUTHENTICATION_CLASS_UID = 3002
API_ACTIVITY_CLASS_UID = 6003

#: File stems of the export, one per class.
AUTHENTICATION_NAME = "authentication"
API_ACTIVITY_NAME = "api_activity"


def _fields(*names_types: tuple[str, DataType]) -> list[StructField]:
    return [StructField(name, kind, True) for name, kind in names_types]


PRODUCT = StructType(
    _fields(("name", StringType()), ("vendor_name", StringType()), ("version", StringType()))
)

METADATA = StructType(
    [
        # sha2-256 hex of class_uid, source file and line: the same log line gives the same id.
        StructField("uid", StringType(), True),
        StructField("version", StringType(), True),
        StructField("product", PRODUCT, True),
        # The log file the event was read from.
        StructField("log_source", StringType(), True),
        # The silver event type (auth_events.event_type) or the decision (ALLOWED / DENIED).
        StructField("event_code", StringType(), True),
    ]
)

#: A KafkaPrincipal as an OCSF user: uid 'User:alice', name 'alice', type the principal type.
USER = StructType(
    _fields(
        ("uid", StringType()),
        ("name", StringType()),
        ("type", StringType()),
        ("type_id", IntegerType()),
    )
)

NETWORK_ENDPOINT = StructType(
    _fields(
        # Kafka node id of a broker endpoint.
        ("uid", StringType()),
        # client.id of a client endpoint seen from the client side.
        ("name", StringType()),
        ("hostname", StringType()),
        ("ip", StringType()),
        ("port", IntegerType()),
        # The broker's listener name (TLS-9093, EXTERNAL...).
        ("interface_name", StringType()),
    )
)

AUTH_UNMAPPED = StructType(
    _fields(
        ("source_line_number", LongType()),
        ("node_id", StringType()),
        ("side", StringType()),
        ("failure_reason_code", StringType()),
        ("security_protocol", StringType()),
        ("client_id", StringType()),
        ("is_reauthentication", BooleanType()),
        # How the user and the SASL mechanism were linked to the event
        # (auth_events.principal_source / mechanism_source: line, request_log, session,
        # handshake, confluent_audit).
        ("principal_source", StringType()),
        ("mechanism_source", StringType()),
    )
)

AUTHENTICATION = StructType(
    [
        StructField("activity_id", IntegerType(), False),
        StructField("activity_name", StringType(), False),
        StructField("category_uid", IntegerType(), False),
        StructField("category_name", StringType(), False),
        StructField("class_uid", IntegerType(), False),
        StructField("class_name", StringType(), False),
        StructField("type_uid", LongType(), False),
        StructField("type_name", StringType(), False),
        StructField("time", LongType(), True),
        StructField("timezone_offset", IntegerType(), False),
        StructField("severity_id", IntegerType(), False),
        StructField("severity", StringType(), True),
        StructField("status_id", IntegerType(), False),
        StructField("status", StringType(), True),
        StructField("status_code", StringType(), True),
        StructField("status_detail", StringType(), True),
        StructField("message", StringType(), True),
        StructField("metadata", METADATA, False),
        StructField("user", USER, False),
        StructField("auth_protocol_id", IntegerType(), False),
        StructField("auth_protocol", StringType(), True),
        StructField("logon_type_id", IntegerType(), False),
        StructField("logon_type", StringType(), False),
        StructField("is_remote", BooleanType(), False),
        StructField("src_endpoint", NETWORK_ENDPOINT, True),
        StructField("dst_endpoint", NETWORK_ENDPOINT, True),
        StructField("session", StructType(_fields(("uid", StringType()))), True),
        StructField("unmapped", AUTH_UNMAPPED, False),
    ]
)

ACTOR = StructType(
    [
        StructField("user", USER, True),
        # The request's client.id (Confluent audit events name it).
        StructField("app_name", StringType(), True),
        # One entry: the authorizer's decision and the rule / ACL behind it.
        StructField(
            "authorizations",
            ArrayType(
                StructType(
                    [
                        StructField("decision", StringType(), True),
                        StructField(
                            "policy",
                            StructType(
                                _fields(
                                    ("name", StringType()),
                                    ("type", StringType()),
                                    ("desc", StringType()),
                                )
                            ),
                            True,
                        ),
                    ]
                ),
                True,
            ),
            True,
        ),
    ]
)

API = StructType(
    [
        # The Kafka API (Produce, Metadata, CreateTopics...) when the line names it, else the ACL
        # operation as logged (Describe, Write...).
        StructField("operation", StringType(), True),
        StructField("request", StructType(_fields(("uid", StringType()))), True),
    ]
)

#: A Kafka resource: type 'TOPIC', name 'orders'.
RESOURCE = StructType(_fields(("type", StringType()), ("name", StringType())))

API_UNMAPPED = StructType(
    _fields(
        ("source_line_number", LongType()),
        ("node_id", StringType()),
        ("acl_operation", StringType()),
        ("pattern_type", StringType()),
    )
)

API_ACTIVITY = StructType(
    [
        StructField("activity_id", IntegerType(), False),
        StructField("activity_name", StringType(), True),
        StructField("category_uid", IntegerType(), False),
        StructField("category_name", StringType(), False),
        StructField("class_uid", IntegerType(), False),
        StructField("class_name", StringType(), False),
        StructField("type_uid", LongType(), False),
        StructField("type_name", StringType(), True),
        StructField("time", LongType(), True),
        StructField("timezone_offset", IntegerType(), False),
        StructField("severity_id", IntegerType(), False),
        StructField("severity", StringType(), True),
        StructField("status_id", IntegerType(), False),
        StructField("status", StringType(), True),
        StructField("status_code", StringType(), True),
        StructField("status_detail", StringType(), True),
        StructField("message", StringType(), False),
        StructField("metadata", METADATA, False),
        StructField("actor", ACTOR, False),
        StructField("api", API, False),
        StructField("resources", ArrayType(RESOURCE, True), True),
        StructField("src_endpoint", NETWORK_ENDPOINT, False),
        StructField("dst_endpoint", NETWORK_ENDPOINT, True),
        StructField("unmapped", API_UNMAPPED, False),
    ]
)


# --- Detection Finding (class 2004): the findings table (jobs.ocsf_findings) -----------------

DETECTION_FINDING_CLASS_UID = 2004
DETECTION_FINDING_NAME = "detection_finding"
#: Category 2 Findings; activity 1 Create, so type_uid = 2004 * 100 + 1.
FINDINGS_CATEGORY_UID = 2
DETECTION_FINDING_TYPE_UID = 200401

#: The rule behind a finding: uid and name the rule_id, category its KIP, type_id 1 Rule.
ANALYTIC = StructType(
    _fields(
        ("uid", StringType()),
        ("name", StringType()),
        ("category", StringType()),
        ("type", StringType()),
        ("type_id", IntegerType()),
    )
)

FINDING_INFO = StructType(
    _fields(
        ("uid", StringType()),
        ("title", StringType()),
        ("desc", StringType()),
        ("types", ArrayType(StringType(), True)),
        ("first_seen_time", LongType()),
        ("last_seen_time", LongType()),
        ("analytic", ANALYTIC),
        # The log files the evidence lines are in.
        ("data_sources", ArrayType(StringType(), True)),
        ("related_events_count", LongType()),
    )
)

#: One Evidence Artifact: the subject as an actor (a principal) or a source endpoint (a client
#: address), or one supporting log line (``uid`` 'path:line', the log file, its line number).
EVIDENCE = StructType(
    _fields(
        ("name", StringType()),
        ("uid", StringType()),
        ("actor", StructType(_fields(("user", USER)))),
        ("src_endpoint", NETWORK_ENDPOINT),
        (
            "file",
            StructType(
                _fields(
                    ("name", StringType()),
                    ("path", StringType()),
                    ("type", StringType()),
                    ("type_id", IntegerType()),
                )
            ),
        ),
        ("data", StructType(_fields(("line_number", LongType())))),
    )
)

FINDING_UNMAPPED = StructType(
    _fields(
        ("discriminator", StringType()),
        ("node_id", StringType()),
        ("run_id", StringType()),
    )
)

DETECTION_FINDING = StructType(
    [
        StructField("activity_id", IntegerType(), False),
        StructField("activity_name", StringType(), False),
        StructField("category_uid", IntegerType(), False),
        StructField("category_name", StringType(), False),
        StructField("class_uid", IntegerType(), False),
        StructField("class_name", StringType(), False),
        StructField("type_uid", LongType(), False),
        StructField("type_name", StringType(), False),
        StructField("time", LongType(), False),
        StructField("timezone_offset", IntegerType(), False),
        StructField("start_time", LongType(), True),
        StructField("end_time", LongType(), False),
        StructField("count", LongType(), False),
        StructField("severity_id", IntegerType(), False),
        StructField("severity", StringType(), False),
        StructField("status_id", IntegerType(), False),
        StructField("status", StringType(), False),
        StructField("is_alert", BooleanType(), True),
        StructField("message", StringType(), False),
        StructField("metadata", METADATA, False),
        StructField("finding_info", FINDING_INFO, False),
        StructField("evidences", ArrayType(EVIDENCE, True), True),
        # The finding's subject: type the subject_type, name the subject.
        StructField("resources", ArrayType(RESOURCE, True), False),
        StructField("unmapped", FINDING_UNMAPPED, False),
    ]
)

#: Attributes OCSF 1.8.0 requires, per class (base event + class), as dotted paths.
REQUIRED: dict[int, tuple[str, ...]] = {
    AUTHENTICATION_CLASS_UID: (
        "activity_id", "category_uid", "class_uid", "metadata.product", "metadata.version",
        "severity_id", "time", "type_uid", "user",
    ),
    API_ACTIVITY_CLASS_UID: (
        "activity_id", "category_uid", "class_uid", "metadata.product", "metadata.version",
        "severity_id", "time", "type_uid", "actor", "api.operation", "src_endpoint",
    ),
    DETECTION_FINDING_CLASS_UID: (
        "activity_id", "category_uid", "class_uid", "metadata.product", "metadata.version",
        "severity_id", "time", "type_uid", "finding_info.uid",
    ),
}  # fmt: skip
