"""Which family a log record belongs to, from its logger and message.

A family's claim means "this record is one of ours": its parser must then turn it into a silver
row or quarantine it with a reason. Records no family claims are out-of-scope noise and are
counted as such (docs/kafka-log-formats.md section 1 gives the loggers). Each family's module owns
its claim predicate; this module only orders them.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.raw_lines import (
    FAMILY_AUTH,
    FAMILY_AUTHZ,
    FAMILY_CONFLUENT_AUDIT,
    FAMILY_CONNECT_REST,
    FAMILY_CONNECT_WORKER,
    FAMILY_REQUEST,
    FAMILY_TOKEN,
    LAYOUT_UNRECOGNIZED,
)
from transforms.silver.auth.parse import MARKER_RE as AUTH_MARKER_RE
from transforms.silver.auth.parse import is_auth_record
from transforms.silver.authz import is_authz_record
from transforms.silver.confluent_audit.parse import is_confluent_audit_record
from transforms.silver.connect.claims import is_connect_rest_record, is_connect_worker_record
from transforms.silver.connect.worker import SIGNATURE_FAILURES
from transforms.silver.request_log.parse import is_request_record
from transforms.silver.tokens import is_token_record

#: What a family's records say whatever the layout around them, in claim order: a record of an
#: unknown layout (no logger to claim it by) that carries one of these is that family's, and is
#: quarantined as ``unrecognized_layout`` instead of counted as noise (docs/layouts.md).
SIGNATURES: tuple[tuple[str, str], ...] = (
    (FAMILY_AUTHZ, r"\bis (?:Denied|Allowed) (?:Operation|operation) = "),
    (FAMILY_AUTH, AUTH_MARKER_RE),
    (FAMILY_REQUEST, r"Completed request:"),
    (FAMILY_TOKEN, r"(?i)delegation token|Token expired for token: |Token Notification for"),
    (FAMILY_CONNECT_REST,
     r'\] "(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /\S* HTTP/\d(?:\.\d)?" \d{3} '),
    (FAMILY_CONNECT_WORKER, "|".join(SIGNATURE_FAILURES.values())),
)  # fmt: skip


def signature_family(text: Column) -> Column:
    """The family whose ``SIGNATURES`` entry ``text`` carries first, else null (null in, null
    out)."""
    result = F.lit(None).cast("string")
    for family, regex in reversed(SIGNATURES):
        result = F.when(text.rlike(regex), F.lit(family)).otherwise(result)
    return result


def family_of(logger: Column, message: Column, layout: Column | None = None) -> Column:
    """The family of a record, or null when no family claims it.

    Args:
        logger: logger name without the ``:NNN`` line suffix; null for JSON-line records.
        message: the record's message text (for JSON-line records, the JSON object; for
            records of layout ``unrecognized``, the whole line).
        layout: the record's layout; a record of layout ``unrecognized`` is claimed by its
            family's signature (``signature_family``).

    Returns:
        string Column: one of ``schemas.raw_lines.FAMILIES`` or null. A null message gives null
        (a continuation line before any header: out of scope).
    """
    logged = logger.isNotNull()
    unknown = (
        F.lit(False) if layout is None else F.coalesce(layout == LAYOUT_UNRECOGNIZED, F.lit(False))
    )
    return (
        F.when(message.isNull(), F.lit(None).cast("string"))
        .when(unknown, signature_family(message))
        .when(~logged & is_confluent_audit_record(message), F.lit(FAMILY_CONFLUENT_AUDIT))
        .when(~logged, F.lit(None).cast("string"))
        .when(is_authz_record(logger, message), F.lit(FAMILY_AUTHZ))
        .when(is_auth_record(logger, message), F.lit(FAMILY_AUTH))
        .when(is_request_record(logger, message), F.lit(FAMILY_REQUEST))
        .when(is_token_record(logger, message), F.lit(FAMILY_TOKEN))
        .when(is_connect_rest_record(logger, message), F.lit(FAMILY_CONNECT_REST))
        .when(is_connect_worker_record(logger, message), F.lit(FAMILY_CONNECT_WORKER))
    )


def with_family(records: DataFrame) -> DataFrame:
    """Add ``family`` (see ``schemas.raw_lines.FAMILIES``; null = out of scope) from logger,
    message and layout, via ``family_of``."""
    family = family_of(F.col("logger"), F.col("message"), F.col("layout"))
    return records.withColumn("family", family)
