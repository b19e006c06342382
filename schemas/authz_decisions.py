"""silver.authz_decisions: one row per ``kafka.authorizer.logger`` record (decision or detail).

Source formats: SimpleAclAuthorizer (<=2.3), AclAuthorizer (2.4-3.9), StandardAuthorizer (3.3+,
KRaft); see ``transforms.silver.authz`` and docs/kafka-log-formats.md section 3. Confluent audit-log
authorization events (ConfluentServerAuthorizer, CloudEvents JSON); see
``transforms.silver.confluent_audit.parse``.
"""

from __future__ import annotations

from pyspark.sql.types import (
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from schemas.lineage import EVENT_DATE_FIELD, EVENT_PARTITION_COLUMNS, LINEAGE_FIELDS

TABLE_NAME = "authz_decisions"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``record_type`` values.
RECORD_DECISION = "decision"
RECORD_ACL_MATCH = "acl_match"
RECORD_SUPER_USER = "super_user"
RECORD_NO_ACL = "no_acl"
RECORD_TYPES: tuple[str, ...] = (
    RECORD_DECISION,
    RECORD_ACL_MATCH,
    RECORD_SUPER_USER,
    RECORD_NO_ACL,
)

#: ``source_format`` values.
SOURCE_FORMAT_LOG4J = "log4j"
SOURCE_FORMAT_CONFLUENT_AUDIT = "confluent_audit"
#: Columns only Confluent audit-log events fill (null on log4j rows).
CONFLUENT_COLUMNS: tuple[str, ...] = (
    "event_id",
    "client_id",
    "correlation_id",
    "rbac_role",
    "rbac_scope",
)

AUTHZ_DECISIONS = StructType(
    [
        *LINEAGE_FIELDS,
        # One of RECORD_TYPES.
        StructField("record_type", StringType(), False),
        # 'SimpleAclAuthorizer' | 'AclAuthorizer' | 'StandardAuthorizer' |
        # 'ConfluentServerAuthorizer'; null when the format is shared by several authorizers
        # (super-user line, 2.0-2.4 ACL detail lines).
        StructField("authorizer", StringType(), True),
        # KafkaPrincipal.toString verbatim (may contain spaces , = # / @ :); null for acl_match and
        # no_acl records, which do not name the requesting principal.
        StructField("principal", StringType(), True),
        # principal split on its first ':' only.
        StructField("principal_type", StringType(), True),
        StructField("principal_name", StringType(), True),
        # 'ALLOWED' | 'DENIED' (super_user: ALLOWED; acl_match: the matching ACL's permission).
        StructField("decision", StringType(), False),
        # AclOperation enum name (READ, IDEMPOTENT_WRITE...); operation_raw as logged (Read...).
        StructField("operation", StringType(), True),
        StructField("operation_raw", StringType(), True),
        # Client IP address (InetAddress.getHostAddress).
        StructField("host", StringType(), True),
        # ResourceType enum name (TOPIC, TRANSACTIONAL_ID...); resource_type_raw as logged.
        StructField("resource_type", StringType(), True),
        StructField("resource_type_raw", StringType(), True),
        # PatternType (LITERAL...); null for the <=1.1 'Type:name' resource format.
        StructField("pattern_type", StringType(), True),
        # Resource name (everything after the second ':', e.g. 'User:alice').
        StructField("resource_name", StringType(), True),
        # ApiKeys.name (Fetch, Produce, CreateDelegationToken...) or a numeric request type;
        # Confluent methodName without 'kafka.' (other services keep theirs: 'mds.Authorize').
        StructField("api_name", StringType(), True),
        StructField("resource_ref_count", IntegerType(), True),
        # StandardAuthorizer rule: 'SuperUser' | 'DefaultAllow' | 'DefaultDeny' | 'MatchingAcl';
        # Confluent: 'SuperUser' | 'MatchingAcl' | 'RBAC', null when the event names none.
        StructField("rule", StringType(), True),
        # The matching ACL: from StandardAuthorizer MatchingAcl(acl=StandardAcl...) or the
        # AclAuthorizer 'based on acl = ...' detail line (that one names no resource pattern).
        StructField("acl_resource_type", StringType(), True),
        StructField("acl_resource_name", StringType(), True),
        StructField("acl_pattern_type", StringType(), True),
        StructField("acl_principal", StringType(), True),
        StructField("acl_host", StringType(), True),
        StructField("acl_operation", StringType(), True),
        StructField("acl_permission_type", StringType(), True),
        # 'log4j' (a kafka.authorizer.logger line) | 'confluent_audit' (a CloudEvents JSON line).
        StructField("source_format", StringType(), True),
        # CloudEvents id of a confluent_audit row.
        StructField("event_id", StringType(), True),
        # Request client.id and correlation id (confluent_audit rows: data.request).
        StructField("client_id", StringType(), True),
        StructField("correlation_id", IntegerType(), True),
        # Confluent rbacAuthorization: the role, and its scope object as compact JSON text.
        StructField("rbac_role", StringType(), True),
        StructField("rbac_scope", StringType(), True),
        # bronze log_date; partition column.
        EVENT_DATE_FIELD,
    ]
)
