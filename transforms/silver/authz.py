"""Parse ``kafka.authorizer.logger`` records into silver.authz_decisions rows.

Formats (docs/kafka-log-formats.md section 3, checked against apache/kafka at the tags named):
* <=1.1 SimpleAclAuthorizer: ``Principal = P is Denied Operation = Read from host = H on
  resource = Topic:foo``; 2.0-2.3 adds the pattern type: ``Topic:LITERAL:foo``.
* 2.4-3.9 AclAuthorizer.logAuditMessage adds `` for request = Fetch with resourceRefCount = 1``.
* 3.3+ StandardAuthorizerData.buildAuditMessage: ``operation = READ`` (enum name) and `` based on
  rule SuperUser|DefaultAllow|DefaultDeny|MatchingAcl(acl=StandardAcl(...))`` (or ``[...]``).
* DEBUG details (SimpleAclAuthorizer, AclAuthorizer): ``No acl found for resource R, authorized =
  B``, ``principal = P is a super user, allowing operation without checking acls.``, ``operation
  = O on resource = R from host = H is Allow based on acl = A`` (R ``Topic:LITERAL:x`` up to 2.4,
  ``ResourcePattern(...)`` from 2.5; A = AclEntry.toString).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import authz_decisions as schema
from transforms.columns import LineFormat, first_format, format_fields, numbered, typed_nulls
from transforms.columns import group as _group
from transforms.quarantine import Check, first_failure

LOGGER_RE = r"^kafka\.authorizer\.logger(?::\d+)?$"

DECISION_RE = (
    r"^Principal = (.+?) is (Allowed|Denied) (Operation|operation) = (\S+) from host = (\S+)"
    r" on resource = (.+?)(?: for request = (\S+) with resourceRefCount = (-?\d+))?"
    r"(?: based on rule (.+))?$"
)
ACL_MATCH_RE = (
    r"^operation = (\S+) on resource = (.+?) from host = (\S+) is (Allow|Deny|ALLOW|DENY)"
    r" based on acl = (.+)$"
)
NO_ACL_RE = r"^No acl found for resource (.+), authorized = (true|false)$"
SUPER_USER_RE = r"^principal = (.+) is a super user, allowing operation without checking acls\.$"

#: 'Type:PATTERN:name' (2.0+) or 'Type:name' (<=1.1); split on the first two ':' only.
RESOURCE_RE = r"^([A-Za-z]+):(?:(LITERAL|PREFIXED|MATCH|ANY|UNKNOWN):)?(.*)$"
_PATTERN_TYPES = r"(?:LITERAL|PREFIXED|MATCH|ANY|UNKNOWN):"
#: ResourcePattern.toString (AclAuthorizer 2.5+ detail lines).
RESOURCE_PATTERN_RE = (
    r"^ResourcePattern\(resourceType=([A-Z_]+), name=(.*), patternType=([A-Z_]+)\)$"
)
#: AclEntry.toString (kafka.security.auth.Acl up to 2.4).
ACL_ENTRY_RE = (
    r"^(.+?) has (Allow|Deny|ALLOW|DENY) permission for operations: (\S+) from hosts: (.+)$"
)
#: StandardAuthorizerData.MatchingAclRule.toString; StandardAcl as class (...) or record [...].
MATCHING_ACL_RE = (
    r"^MatchingAcl\(acl=StandardAcl[(\[]resourceType=([A-Z_]+), resourceName=(.*?),"
    r" patternType=([A-Z_]+), principal=(.*?), host=(.*?), operation=([A-Z_]+),"
    r" permissionType=([A-Z_]+)[)\]]\)$"
)
# Section 9 (invented formats): '=' without spaces, or 'Principal' not followed by ' = '.
_NOT_KAFKA_RE = r"^Principal(?! = )|^Principal = .*\b(?:Operation|operation|host|resource|request)="
_TRUNCATED_HEAD_RE = r"^(?:Principal = |principal = |operation = \S+ on |No acl found for )\S"
_PASCAL_RE = r"^[A-Z][a-z]+(?:[A-Z][a-z]+)*$"
_ENUM_RE = r"^[A-Z]+(?:_[A-Z]+)*$"

_FIELDS: tuple[str, ...] = ("principal", "_result", "_op_word", "operation_raw", "host")
_FIELDS += ("_resource_raw", "api_name", "_ref_count", "_rule_raw", "_acl_raw")
_ACL_MATCH_FIELDS = ("operation_raw", "_resource_raw", "host", "_result", "_acl_raw")
_NOT_KAFKA, _CUT = "authz_not_kafka_format", "authz_truncated_message"
#: Quarantine reasons: check name -> (reason_code, reason_detail).
_REASONS: dict[str, tuple[str, str]] = {
    "message": ("missing_field_message", "message is null or blank"),
    "equals": (_NOT_KAFKA, "'Principal=' or 'key=value' without spaces (formats doc section 9)"),
    "cut": (_CUT, "starts like an authorizer line, then stops matching: cut short"),
    "unknown": ("authz_unrecognized_format", "no kafka.authorizer.logger format matches"),
    "no_ref_count": (_NOT_KAFKA, "'for request = X' without 'with resourceRefCount' (section 9)"),
    "cut_request": (_CUT, "cut short inside 'for request = ... with resourceRefCount = ...'"),
    "no_rule": (_NOT_KAFKA, "lower-case 'operation =' without 'based on rule' (section 9)"),
    "rule": (_NOT_KAFKA, "'Operation =' (AclAuthorizer) with 'based on rule' (StandardAuthorizer)"),
    "pascal_op": (_NOT_KAFKA, "'operation =' with a PascalCase operation (section 9)"),
    "enum_op": (_NOT_KAFKA, "'Operation =' with an enum-style operation"),
    "rule_no_api": (_NOT_KAFKA, "'based on rule' without 'for request'"),
    "no_pattern": (_NOT_KAFKA, "'for request' (2.4+) but the resource has no pattern type"),
    "cut_acl": (_CUT, "cut short inside MatchingAcl(acl=StandardAcl...)"),
    "contradiction": (_NOT_KAFKA, "Allowed/Denied contradicts the rule"),
    "acl": ("authz_unrecognized_acl", "'based on acl = ...' is not AclEntry.toString"),
    "principal_type": ("missing_field_principal_type", "principal has no 'type:' prefix"),
    "resource_type": ("missing_field_resource_type", "resource is not Type:PATTERN:name"),
}


def _groups(text: Column, regex: str, names: tuple[str, ...]) -> dict[str, Column]:
    return {name: _group(text, regex, i) for i, name in enumerate(names, 1)}


def is_authz_record(logger: Column, message: Column) -> Column:
    """True for every record of ``kafka.authorizer.logger`` (``:NNN`` line suffix allowed).

    The logger belongs to this family only, so the message is not inspected: whatever it
    writes is parsed or quarantined. A null logger gives false, never null.
    """
    del message  # Part of the classifier's predicate signature; this family needs only the logger.
    return F.coalesce(logger.rlike(LOGGER_RE), F.lit(False))


def kafka_enum_name(raw: Column) -> Column:
    """Kafka enum name from SecurityUtils' PascalCase (IdempotentWrite -> IDEMPOTENT_WRITE,
    TransactionalId -> TRANSACTIONAL_ID); enum names pass through; null stays null."""
    return F.upper(F.regexp_replace(raw, r"([a-z])([A-Z])", "$1_$2"))


def principal_type(principal: Column) -> Column:
    """KafkaPrincipal type: the text before the first ':' (null without ':', when it is empty,
    or for null); ``group(principal, "^([^:]*):", 1)`` without ``nullif``, whose common
    expression is a projection of its own in the parse (``transforms.columns.split_groups``)."""
    return F.when(F.instr(principal, ":") > 1, F.substring_index(principal, ":", 1))


#: The text after the first ':' to the end (Java's ``.`` stops at a line terminator; ``$``
#: matches before a final one).
PRINCIPAL_NAME_RE = r"^[^:]*:(.*)$"


def principal_name(principal: Column) -> Column:
    """KafkaPrincipal name: the text after the first ':' (null without ':', when it is empty,
    or for null); ``group(principal, PRINCIPAL_NAME_RE, 1)`` with one regex evaluation and
    without ``nullif`` (``principal_type``): the regex is anchored, so it finds one match at
    most, and an empty name is removed from the array."""
    found = F.regexp_extract_all(principal, F.lit(PRINCIPAL_NAME_RE), 1)
    return F.get(F.array_remove(found, F.lit("")), 0)


def authz_decision(result: Column) -> Column:
    """'ALLOWED' / 'DENIED' from Allowed/Allow/ALLOW/true and Denied/Deny/DENY/false, else null."""
    lowered = F.lower(result)
    return F.when(lowered.isin("allowed", "allow", "true"), F.lit("ALLOWED")).when(
        lowered.isin("denied", "deny", "false"), F.lit("DENIED")
    )


_FORMATS: tuple[LineFormat, ...] = (
    (schema.RECORD_DECISION, DECISION_RE, numbered(_FIELDS[:9])),
    (schema.RECORD_ACL_MATCH, ACL_MATCH_RE, numbered(_ACL_MATCH_FIELDS)),
    (schema.RECORD_NO_ACL, NO_ACL_RE, numbered(("_resource_raw", "_result"))),
    (schema.RECORD_SUPER_USER, SUPER_USER_RE, numbered(("principal",))),
)


def _resource_columns(resource_raw: Column) -> dict[str, Column]:
    p, r = RESOURCE_PATTERN_RE, RESOURCE_RE  # Mutually exclusive forms.
    type_raw = F.coalesce(_group(resource_raw, p, 1), _group(resource_raw, r, 1))
    return {
        "resource_type": kafka_enum_name(type_raw),
        "resource_type_raw": type_raw,
        "pattern_type": F.coalesce(_group(resource_raw, p, 3), _group(resource_raw, r, 2)),
        "resource_name": F.coalesce(_group(resource_raw, p, 2), _group(resource_raw, r, 3)),
    }


def _acl_columns(rule_raw: Column, acl_raw: Column) -> dict[str, Column]:
    m, e = MATCHING_ACL_RE, ACL_ENTRY_RE
    standard = _groups(rule_raw, m, ("acl_resource_type", "acl_resource_name", "acl_pattern_type"))
    return standard | {
        "acl_principal": F.coalesce(_group(rule_raw, m, 4), _group(acl_raw, e, 1)),
        "acl_host": F.coalesce(_group(rule_raw, m, 5), _group(acl_raw, e, 4)),
        "acl_operation": kafka_enum_name(F.coalesce(_group(rule_raw, m, 6), _group(acl_raw, e, 3))),
        "acl_permission_type": F.upper(F.coalesce(_group(rule_raw, m, 7), _group(acl_raw, e, 2))),
    }


def _authorizer(record_type: Column, op_word: Column, api: Column, resource_raw: Column) -> Column:
    """Authorizer class the format proves; null for the super-user line and 2.0-2.4 details."""
    decision = record_type == F.lit(schema.RECORD_DECISION)
    return (
        F.when(decision & (op_word == "operation"), F.lit("StandardAuthorizer"))
        .when(decision & api.isNotNull(), F.lit("AclAuthorizer"))
        .when(decision, F.lit("SimpleAclAuthorizer"))
        .when(resource_raw.rlike(RESOURCE_PATTERN_RE), F.lit("AclAuthorizer"))
        .when(resource_raw.rlike(f"^[A-Za-z]+:(?!{_PATTERN_TYPES})"), F.lit("SimpleAclAuthorizer"))
    )


def _rule(rule_raw: Column) -> Column:
    return F.when(rule_raw.rlike("^(?:SuperUser|DefaultAllow|DefaultDeny)$"), rule_raw).when(
        rule_raw.rlike(MATCHING_ACL_RE), F.lit("MatchingAcl")
    )


def _checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, r = F.col, _REASONS
    decision = c("record_type") == schema.RECORD_DECISION
    unknown, no_api = c("record_type").isNull(), c("api_name").isNull()
    rule_raw, resource = c("_rule_raw"), c("_resource_raw")
    lower_op = decision & (c("_op_word") == "operation")
    upper_op = decision & (c("_op_word") == "Operation")
    ruled = F.when(c("rule").isin("SuperUser", "DefaultAllow"), "ALLOWED").when(
        c("rule") == "DefaultDeny", "DENIED"
    )
    ruled = ruled.otherwise(authz_decision(c("acl_permission_type")))
    return [
        (F.trim(F.coalesce(c("message"), F.lit(""))) == "", *r["message"]),
        (unknown & c("message").rlike(_NOT_KAFKA_RE), *r["equals"]),
        (unknown & c("message").rlike(_TRUNCATED_HEAD_RE), *r["cut"]),
        (unknown, *r["unknown"]),
        (decision & no_api & resource.rlike(r" for request = \S+$"), *r["no_ref_count"]),
        (decision & no_api & resource.contains(" for request = "), *r["cut_request"]),
        (lower_op & rule_raw.isNull(), *r["no_rule"]),
        (upper_op & rule_raw.isNotNull(), *r["rule"]),
        (lower_op & ~c("operation_raw").rlike(_ENUM_RE), *r["pascal_op"]),
        (upper_op & ~c("operation_raw").rlike(_PASCAL_RE), *r["enum_op"]),
        (decision & rule_raw.isNotNull() & no_api, *r["rule_no_api"]),
        (decision & ~no_api & c("pattern_type").isNull(), *r["no_pattern"]),
        (rule_raw.rlike(r"^MatchingAcl\(") & c("rule").isNull(), *r["cut_acl"]),
        (rule_raw.isNotNull() & c("rule").isNull(), "authz_unrecognized_rule", rule_raw),
        (decision & (ruled != c("decision")), *r["contradiction"]),
        (c("_acl_raw").isNotNull() & c("acl_principal").isNull(), *r["acl"]),
        (c("principal_type").isNull() & c("principal").isNotNull(), *r["principal_type"]),
        (c("resource_type").isNull() & resource.isNotNull(), *r["resource_type"]),
    ]


def parse_authz_decisions(bronze: DataFrame) -> DataFrame:
    """Parse ``kafka.authorizer.logger`` bronze records (family 'authz'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string), log_ts (timestamp), log_date (date).

    Output columns:
        every input column, then the AUTHZ_DECISIONS columns not already in bronze (event_ts
        timestamp, record_type string, ... event_date date), then reason_code (string, null =
        parsed) and reason_detail (string). See schemas.authz_decisions for each column;
        source_format is 'log4j' and the Confluent-only columns are null.

    Null behaviour: a null or blank message gets reason_code 'missing_field_message'; fields
    a format does not carry are null.
    """
    c = F.col
    staged = bronze.withColumn("_f", first_format(c("message"), _FORMATS, "record_type"))
    fields = staged.withColumns(format_fields(c("_f"), _FORMATS, "record_type"))
    derived = fields.withColumns(
        {
            "event_ts": c("log_ts"),
            "event_date": c("log_date"),
            "authorizer": _authorizer(
                c("record_type"), c("_op_word"), c("api_name"), c("_resource_raw")
            ),
            "principal_type": principal_type(c("principal")),
            "principal_name": principal_name(c("principal")),
            "decision": F.when(c("record_type") == schema.RECORD_SUPER_USER, "ALLOWED").otherwise(
                authz_decision(c("_result"))
            ),
            "operation": kafka_enum_name(c("operation_raw")),
            **_resource_columns(c("_resource_raw")),
            "resource_ref_count": c("_ref_count").try_cast("int"),
            "rule": _rule(c("_rule_raw")),
            **_acl_columns(c("_rule_raw"), c("_acl_raw")),
            "source_format": F.lit(schema.SOURCE_FORMAT_LOG4J),
            **typed_nulls(schema.AUTHZ_DECISIONS, schema.CONFLUENT_COLUMNS),
        }
    )
    failed = derived.withColumn("_failure", first_failure(_checks()))
    silver = [name for name in schema.AUTHZ_DECISIONS.fieldNames() if name not in bronze.columns]
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(*bronze.columns, *silver, *reasons)
