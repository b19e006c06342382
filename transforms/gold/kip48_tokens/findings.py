"""The KIP-48 findings (rule ids ``tokens.*``, docs/rules-tokens.md) from this run's
token_events and the replayed lifecycles
(``transforms.gold.kip48_tokens.lifecycle.replay_lifecycle``).

Every finding is built from this run's evidence only (history entries with ``in_run``, this
run's token_events), so its ``finding_date`` is a date of the run and a re-run replaces it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import token_events as te
from schemas.token_lifecycle import MISMATCH_CHECKS
from transforms.findings import evidence, seen, to_findings
from transforms.gold.kip48_tokens.hmac import hmac_verified
from transforms.gold.kip48_tokens.lifecycle import lifecycle_events

KIP = "KIP-48"
#: Rejections of renew / expire by error code: (rule_id, severity, what it means).
REJECTIONS: dict[int, tuple[str, str, str]] = {
    62: (
        "tokens.token_not_found",
        "medium",
        "presented an HMAC the cluster does not know (DELEGATION_TOKEN_NOT_FOUND): a removed "
        "token, another cluster's, or a guessed one",
    ),
    63: (
        "tokens.owner_mismatch",
        "medium",
        "is neither the token's owner nor a listed renewer (DELEGATION_TOKEN_OWNER_MISMATCH) "
        "but holds its HMAC",
    ),
    66: (
        "tokens.expired_token_used",
        "low",
        "tried to use a token past its expiry or max timestamp (DELEGATION_TOKEN_EXPIRED)",
    ),
}


def _grouped(rows: DataFrame, subject: Column, discriminator: Column) -> DataFrame:
    """Candidate findings: one per (subject, discriminator), with time span and evidence.
    Input columns: event_ts, node_id, source_path, line_number."""
    return (
        rows.withColumn("subject", subject)
        .withColumn("discriminator", discriminator)
        .groupBy("subject", "discriminator")
        .agg(*seen())
    )


def run_entries(replayed: DataFrame) -> DataFrame:
    """This run's history entries, one row each, with the token's columns.

    Output columns: token_key, token_id, issue_ts, max_lifetime_ms (config, ms) and the
    WORK_ENTRY fields (event_ts, actor, operation, error_code, check, ...)."""
    exploded = replayed.select(
        "token_key", "token_id", "issue_ts", "max_lifetime_ms", F.explode("_entries").alias("e")
    )
    return exploded.where(F.col("e.in_run")).select(
        "token_key", "token_id", "issue_ts", "max_lifetime_ms", "e.*"
    )


def rejection_findings(entries: DataFrame, run_id: str) -> list[DataFrame]:
    """tokens.token_not_found (62), tokens.owner_mismatch (63), tokens.expired_token_used
    (66): renew / expire requests Kafka rejected, per principal that tried, operation and
    token (``KafkaApis.handleRenewTokenRequest`` / ``handleExpireTokenRequest``).

    Input columns: ``run_entries`` rows. Subject: the principal (actor); discriminator:
    '<operation> <token_key>'.
    """
    out = []
    c = F.col
    for code, (rule_id, severity, meaning) in REJECTIONS.items():
        rows = entries.where((c("error_code") == code) & c("actor").isNotNull())
        candidates = _grouped(rows, c("actor"), F.concat_ws(" ", "operation", "token_key"))
        text = F.concat(c("subject"), F.lit(f" {meaning}; "), c("discriminator"))
        out.append(
            to_findings(
                candidates,
                rule_id=rule_id,
                kip=KIP,
                severity=severity,
                subject_type="principal",
                explanation=text,
                run_id=run_id,
            )
        )
    return out


def not_allowed_findings(token_events: DataFrame, run_id: str) -> DataFrame:
    """tokens.request_not_allowed: token requests answered DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    (64): sent over PLAINTEXT, 1-way SSL as ANONYMOUS, or on a token-authenticated
    connection (``KafkaApis.allowTokenRequests``). Subject: the principal; discriminator:
    the operation. In KRaft a refused request forwarded to the controller is logged twice,
    by the broker and by the controller (``isForwarded``; ``ControllerApis.allowTokenRequests``
    refuses it again): ``count`` is the larger of the two line counts, so each request counts
    once, ``node_id`` the broker's; evidence keeps both lines."""
    forwarded = F.coalesce(F.col("is_forwarded"), F.lit(False))
    candidates = (
        token_events.where(F.col("error_code") == 64)
        .withColumn("subject", F.col("requester"))
        .withColumn("discriminator", F.col("operation"))
        .groupBy("subject", "discriminator")
        .agg(
            F.coalesce(F.min(F.when(~forwarded, F.col("node_id"))), F.min("node_id")).alias(
                "node_id"
            ),
            F.min("event_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
            F.greatest(F.sum((~forwarded).cast("long")), F.sum(forwarded.cast("long"))).alias(
                "count"
            ),
            evidence(),
        )
    )
    text = F.concat(
        F.col("subject"),
        F.lit(" sent delegation-token "),
        F.col("discriminator"),
        F.lit(
            " requests over a channel that does not allow them (PLAINTEXT, 1-way SSL or a "
            "token-authenticated connection): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"
        ),
    )
    return to_findings(
        candidates,
        rule_id="tokens.request_not_allowed",
        kip=KIP,
        severity="medium",
        subject_type="principal",
        explanation=text,
        run_id=run_id,
    )


def mismatch_findings(entries: DataFrame, run_id: str) -> DataFrame:
    """tokens.replay_mismatch: an observed expiry, max timestamp or error code that disagrees
    with the replayed rule (a broker misconfigured, or logs from another cluster); the KRaft
    3.6-3.9 negative expiry is recognised, not reported. Subject: the token (id, else
    'hmac:<fingerprint>'); discriminator: the check."""
    rows = entries.where(F.col("check").isin(*MISMATCH_CHECKS))
    candidates = _grouped(rows, F.col("token_key"), F.col("check"))
    text = F.concat(
        F.lit("Kafka's answer disagrees with the replayed KIP-48 rule ("),
        F.col("discriminator"),
        F.lit(") for token "),
        F.col("subject"),
        F.lit(": a broker with other delegation.token.* settings, or logs of another cluster"),
    )
    return to_findings(
        candidates,
        rule_id="tokens.replay_mismatch",
        kip=KIP,
        severity="medium",
        subject_type="token",
        explanation=text,
        run_id=run_id,
    )


def burst_findings(
    token_events: DataFrame, threshold: int, window_ms: int, tolerance_ms: int, run_id: str
) -> DataFrame:
    """tokens.creation_burst: a principal sent at least ``threshold`` CreateDelegationToken
    requests (any outcome; forwarded copies counted once) within ``window_ms``.
    Subject: the principal; count: the most requests in one window; evidence: its creates."""
    c = F.col
    creates = lifecycle_events(token_events, tolerance_ms).where(
        (c("operation") == te.OP_CREATE) & (c("source") == te.SOURCE_REQUEST_LOG)
    )
    trailing = (
        Window.partitionBy("actor")
        .orderBy(F.unix_millis("event_ts"))
        .rangeBetween(-(window_ms - 1), 0)
    )
    counted = creates.where(c("actor").isNotNull()).withColumn(
        "_n", F.count(F.lit(1)).over(trailing)
    )
    per = counted.groupBy(c("actor").alias("subject")).agg(
        F.max("_n").alias("count"),
        F.min("node_id").alias("node_id"),
        F.min("event_ts").alias("first_seen_ts"),
        F.max("event_ts").alias("last_seen_ts"),
        evidence(),
    )
    candidates = per.where(c("count") >= threshold).withColumn("discriminator", F.lit(""))
    text = F.concat(
        c("subject"),
        F.lit(" created "),
        c("count").cast("string"),
        F.lit(f" delegation tokens within {window_ms} ms (threshold {threshold})"),
    )
    return to_findings(
        candidates,
        rule_id="tokens.creation_burst",
        kip=KIP,
        severity="medium",
        subject_type="principal",
        explanation=text,
        run_id=run_id,
    )


def lifetime_findings(
    entries: DataFrame, replayed: DataFrame, token_events: DataFrame, factor: float, run_id: str
) -> DataFrame:
    """tokens.lifetime_exceeds_max: a token seen in use or described more than ``factor``
    times the cluster's ``delegation.token.max.lifetime.ms`` after its issue time (a token
    Kafka should have removed, or one minted by another cluster). Subject: the token."""
    c = F.col
    used = entries.where(F.coalesce(c("error_code"), F.lit(0)) == 0).select(
        "token_key", "event_ts", "node_id", "source_path", "line_number"
    )
    described = token_events.where(
        (c("operation") == te.OP_DESCRIBE) & c("token_id").isNotNull() & c("event_ts").isNotNull()
    ).select(c("token_id").alias("token_key"), "event_ts", "node_id", "source_path", "line_number")
    tokens = replayed.select("token_key", "issue_ts", "max_lifetime_ms")
    age = F.unix_millis("event_ts") - F.unix_millis("issue_ts")
    rows = (
        used.unionByName(described)
        .join(tokens, "token_key")
        .where(age > F.lit(factor) * c("max_lifetime_ms"))
    )
    candidates = _grouped(rows, c("token_key"), F.lit(""))
    text = F.concat(
        F.lit("token "),
        c("subject"),
        F.lit(f" was alive more than {factor} x delegation.token.max.lifetime.ms after issue"),
    )
    return to_findings(
        candidates,
        rule_id="tokens.lifetime_exceeds_max",
        kip=KIP,
        severity="high",
        subject_type="token",
        explanation=text,
        run_id=run_id,
    )


def describe_findings(token_events: DataFrame, run_id: str) -> DataFrame:
    """tokens.describe_by_non_owner: a DescribeDelegationToken response listed a token to a
    principal that is neither its owner nor a renewer (allowed only through DESCRIBE on
    ``DelegationToken:<id>`` or DESCRIBE_TOKENS on the owner: ``KafkaApis
    .handleDescribeTokensRequest``). Subject: the principal; discriminator: the token id."""
    c = F.col
    rows = token_events.where(
        (c("operation") == te.OP_DESCRIBE)
        & c("token_id").isNotNull()
        & (c("requester") != c("owner"))
        & ~F.coalesce(F.array_contains(c("renewers"), c("requester")), F.lit(False))
    )
    candidates = _grouped(rows, c("requester"), c("token_id"))
    text = F.concat(
        c("subject"),
        F.lit(" described token "),
        c("discriminator"),
        F.lit(" without being its owner or a renewer"),
    )
    return to_findings(
        candidates,
        rule_id="tokens.describe_by_non_owner",
        kip=KIP,
        severity="low",
        subject_type="principal",
        explanation=text,
        run_id=run_id,
    )


def hmac_findings(
    token_events: DataFrame, secret: bytes, fingerprint_key: bytes, run_id: str
) -> DataFrame:
    """tokens.hmac_not_verified: a create or describe response paired a token id with an HMAC
    that is not HMAC-SHA512(delegation.token.secret.key, token id)
    (``transforms.gold.kip48_tokens.hmac``):
    not minted by this cluster's secret. Subject: the token id; discriminator: the HMAC
    fingerprint."""
    c = F.col
    pairs = token_events.where(c("token_id").isNotNull() & c("hmac_fingerprint").isNotNull())
    candidates = _grouped(pairs, c("token_id"), c("hmac_fingerprint"))
    verified = hmac_verified(c("subject"), c("discriminator"), secret, fingerprint_key)
    text = F.concat(
        F.lit("the HMAC logged for token "),
        c("subject"),
        F.lit(" is not HMAC-SHA512 of its id under this cluster's delegation.token.secret.key"),
    )
    return to_findings(
        candidates.where(~verified),
        rule_id="tokens.hmac_not_verified",
        kip=KIP,
        severity="high",
        subject_type="token",
        explanation=text,
        run_id=run_id,
    )
