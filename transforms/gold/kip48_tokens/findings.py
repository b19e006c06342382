"""The KIP-48 findings (rule ids ``tokens.*``, docs/rules-tokens.md) from this run's
token_events and the replayed lifecycles
(``transforms.gold.kip48_tokens.lifecycle.replay_lifecycle``).

The rules are declared here (``transforms.findings.FindingRule``): :data:`REJECTIONS`,
:data:`REQUEST_NOT_ALLOWED`, :data:`REPLAY_MISMATCH`, :data:`DESCRIBE_BY_NON_OWNER`,
:data:`HMAC_NOT_VERIFIED`, and :func:`creation_burst_rule` / :func:`lifetime_rule`, whose
sentences name a setting. Each ``*_findings`` function computes its rule's candidates and
returns ``schemas.findings.FINDINGS`` rows; none raises.

Every finding is built from this run's evidence only (history entries with ``in_run``, this
run's token_events), so its ``finding_date`` is a date of the run and a re-run replaces it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas import token_events as te
from schemas.token_lifecycle import MISMATCH_CHECKS
from transforms.findings import FindingRule, evidence, finding_rule, seen, to_findings
from transforms.gold.kip48_tokens.hmac import hmac_verified
from transforms.gold.kip48_tokens.lifecycle import lifecycle_events

KIP = "KIP-48"

# The rules (``transforms.findings``). Their sentences were concatenations: a null value leaves
# the sentence null and the finding's explanation is its rule id (``if_null=None``).

#: Rejections of renew / expire by error code (``KafkaApis.handleRenewTokenRequest`` /
#: ``handleExpireTokenRequest``). Candidates: :func:`rejection_findings`.
REJECTIONS: dict[int, FindingRule] = {
    62: finding_rule(
        "tokens.token_not_found", KIP, "medium", "principal",
        "%s presented an HMAC the cluster does not know (DELEGATION_TOKEN_NOT_FOUND): a removed "
        "token, another cluster's, or a guessed one; %s",
        "subject", "discriminator", if_null=None,
    ),
    63: finding_rule(
        "tokens.owner_mismatch", KIP, "medium", "principal",
        "%s is neither the token's owner nor a listed renewer (DELEGATION_TOKEN_OWNER_MISMATCH) "
        "but holds its HMAC; %s",
        "subject", "discriminator", if_null=None,
    ),
    66: finding_rule(
        "tokens.expired_token_used", KIP, "low", "principal",
        "%s tried to use a token past its expiry or max timestamp (DELEGATION_TOKEN_EXPIRED); %s",
        "subject", "discriminator", if_null=None,
    ),
}  # fmt: skip
#: Token requests on a channel that does not allow them (``KafkaApis.allowTokenRequests``,
#: ``ControllerApis.allowTokenRequests``). Candidates: :func:`not_allowed_findings`.
REQUEST_NOT_ALLOWED = finding_rule(
    "tokens.request_not_allowed", KIP, "medium", "principal",
    "%s sent delegation-token %s requests over a channel that does not allow them (PLAINTEXT, "
    "1-way SSL or a token-authenticated connection): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    "subject", "discriminator", if_null=None,
)  # fmt: skip
#: Kafka's answer disagrees with the lifecycle replayed by the rules of
#: ``DelegationTokenManagerZk`` / ``DelegationTokenControlManager``
#: (``transforms.gold.kip48_tokens.lifecycle``). Candidates: :func:`mismatch_findings`.
REPLAY_MISMATCH = finding_rule(
    "tokens.replay_mismatch", KIP, "medium", "token",
    "Kafka's answer disagrees with the replayed KIP-48 rule (%s) for token %s: a broker with "
    "other delegation.token.* settings, or logs of another cluster",
    "discriminator", "subject", if_null=None,
)  # fmt: skip
#: A DescribeDelegationToken answer listed a token to a non-owner, non-renewer
#: (``KafkaApis.handleDescribeTokensRequest``). Candidates: :func:`describe_findings`.
DESCRIBE_BY_NON_OWNER = finding_rule(
    "tokens.describe_by_non_owner", KIP, "low", "principal",
    "%s described token %s without being its owner or a renewer",
    "subject", "discriminator", if_null=None,
)  # fmt: skip
#: A token id logged with an HMAC that is not HMAC-SHA512(secret, id)
#: (``kafka.server.DelegationTokenManager.createHmac``; KRaft:
#: ``DelegationTokenControlManager.createHmac``). Candidates: :func:`hmac_findings`.
HMAC_NOT_VERIFIED = finding_rule(
    "tokens.hmac_not_verified", KIP, "high", "token",
    "the HMAC logged for token %s is not HMAC-SHA512 of its id under this cluster's "
    "delegation.token.secret.key",
    "subject", if_null=None,
)  # fmt: skip


def creation_burst_rule(threshold: int, window_ms: int) -> FindingRule:
    """``tokens.creation_burst`` (medium): ``threshold`` CreateDelegationToken requests by one
    principal within ``window_ms`` (the project's rule; Kafka has no such limit). Candidates:
    :func:`burst_findings`. The sentence names the settings; nothing raises."""
    return finding_rule(
        "tokens.creation_burst", KIP, "medium", "principal",
        f"%s created %s delegation tokens within {window_ms} ms (threshold {threshold})",
        "subject", "count", if_null=None,
    )  # fmt: skip


def lifetime_rule(factor: float) -> FindingRule:
    """``tokens.lifetime_exceeds_max`` (high): a token alive more than ``factor`` x
    ``delegation.token.max.lifetime.ms`` after issue (the max timestamp of
    ``DelegationTokenManagerZk`` / ``DelegationTokenControlManager``). Candidates:
    :func:`lifetime_findings`. The sentence names the setting; nothing raises."""
    return finding_rule(
        "tokens.lifetime_exceeds_max", KIP, "high", "token",
        f"token %s was alive more than {factor} x delegation.token.max.lifetime.ms after issue",
        "subject", if_null=None,
    )  # fmt: skip


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
    for code, rule in REJECTIONS.items():
        rows = entries.where((c("error_code") == code) & c("actor").isNotNull())
        candidates = _grouped(rows, c("actor"), F.concat_ws(" ", "operation", "token_key"))
        out.append(to_findings(candidates, rule, run_id))
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
    return to_findings(candidates, REQUEST_NOT_ALLOWED, run_id)


def mismatch_findings(entries: DataFrame, run_id: str) -> DataFrame:
    """tokens.replay_mismatch: an observed expiry, max timestamp or error code that disagrees
    with the replayed rule (a broker misconfigured, or logs from another cluster); the KRaft
    3.6-3.9 negative expiry is recognised, not reported. Subject: the token (id, else
    'hmac:<fingerprint>'); discriminator: the check."""
    rows = entries.where(F.col("check").isin(*MISMATCH_CHECKS))
    candidates = _grouped(rows, F.col("token_key"), F.col("check"))
    return to_findings(candidates, REPLAY_MISMATCH, run_id)


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
    return to_findings(candidates, creation_burst_rule(threshold, window_ms), run_id)


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
    return to_findings(candidates, lifetime_rule(factor), run_id)


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
    return to_findings(candidates, DESCRIBE_BY_NON_OWNER, run_id)


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
    verified = hmac_verified(
        c("subject"), c("discriminator"), secret, fingerprint_key, token_events.sparkSession
    )
    return to_findings(candidates.where(~verified), HMAC_NOT_VERIFIED, run_id)
