"""gold.findings: one row per finding of any audit rule (KIP-368, KIP-48, KIP-590, KIP-801,
KIP-507), written by ``transforms.findings.to_findings``.

A finding names a rule, a subject (the principal, client address, worker, token fingerprint,
node... the rule is about), when the evidence was first and last seen, how many events support
it, and where those events are (source file and line number). ``finding_id`` is deterministic:
the same rule, subject and discriminator give the same id on every run, so a re-run replaces
its rows (date partitions of ``finding_date``) instead of adding duplicates.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "findings"
PARTITION_COLUMNS: tuple[str, ...] = ("finding_date",)

#: ``severity`` values, most severe first.
SEVERITIES: tuple[str, ...] = ("high", "medium", "low", "info")

#: ``subject_type`` values.
SUBJECT_TYPES: tuple[str, ...] = (
    "principal",
    "client_address",
    "client_software",
    "connection",
    "token",
    "node",
    "listener",
    "worker",
    "connector",
    "resource",
)

#: Where one supporting log line is: the file and its 1-based line number.
EVIDENCE_POSITION = StructType(
    [
        StructField("source_path", StringType(), True),
        StructField("line_number", LongType(), True),
    ]
)

#: Evidence keeps at most this many positions (the first ones, in file order); ``count``
#: still counts every event.
MAX_EVIDENCE = 20

FINDINGS = StructType(
    [
        # sha2-256 hex of rule_id, subject_type, subject and discriminator.
        StructField("finding_id", StringType(), False),
        # Stable rule name, e.g. 'reauth.no_reauth_client_on_expiring_listener'.
        StructField("rule_id", StringType(), False),
        # The proposal behind the rule: 'KIP-368', 'KIP-48', 'KIP-590', 'KIP-801', 'KIP-507'.
        StructField("kip", StringType(), False),
        # One of SEVERITIES.
        StructField("severity", StringType(), False),
        # One of SUBJECT_TYPES, and the subject itself (a KafkaPrincipal string 'User:alice',
        # an ip, a worker id, an hmac fingerprint...).
        StructField("subject_type", StringType(), False),
        StructField("subject", StringType(), False),
        # What makes two findings of one rule and subject different (a resource, a token id,
        # a listener...); '' when nothing does.
        StructField("discriminator", StringType(), False),
        # The broker / controller / worker whose logs hold the evidence, when one does.
        StructField("node_id", StringType(), True),
        # UTC; first and last supporting event.
        StructField("first_seen_ts", TimestampType(), True),
        StructField("last_seen_ts", TimestampType(), True),
        # Supporting events.
        StructField("count", LongType(), False),
        # Up to MAX_EVIDENCE positions, sorted by (source_path, line_number).
        StructField("evidence", ArrayType(EVIDENCE_POSITION, True), False),
        # One sentence for a human: what happened and why it matters.
        StructField("explanation", StringType(), False),
        StructField("run_id", StringType(), False),
        # UTC date of last_seen_ts (null when the evidence has no timestamp); partition column.
        StructField("finding_date", DateType(), True),
    ]
)
