"""Gold area 'tokens': KIP-48 delegation-token lifecycles, their findings and HMAC checks.

Reads silver ``token_events`` (every day of the lake), the nodes' ``delegation.token.*``
properties and ``[rules.tokens]`` (``TokenRules``); plans the ``token_lifecycle`` table (one
row per token, replayed from its whole history in silver, so a re-run gives the same table)
and the ``tokens.*`` findings (docs/rules-tokens.md).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable
from jobs.reuse import reused
from jobs.rules import TokenRules
from schemas import token_lifecycle as tl
from transforms.frames import local_frame
from transforms.gold.kip48_tokens import findings as tf
from transforms.gold.kip48_tokens.hmac import with_hmac_verified
from transforms.gold.kip48_tokens.lifecycle import lifecycle_rows, replay_lifecycle, token_config

#: The area's rules class lives in jobs.rules (checked when the config is loaded).
__all__ = ["AREA", "TokenRules", "build"]

AREA = "tokens"


def build(context: GoldContext) -> GoldOutput:
    """Plan ``token_lifecycle`` and the ``tokens.*`` findings (KIP-48).

    The HMAC checks run when the context has both the cluster's token secret
    (``context.token_secret``) and the lake's fingerprint key (``context.fingerprint_key``).

    Raises:
        ConfigError: a bad ``[rules.tokens]`` table.
    """
    rules = area_rules(context.config, AREA, TokenRules)
    run_id = context.config.run_id
    events = context.silver["token_events"]
    config = token_config(context.node_properties)
    mode = None if rules.metadata_mode == "auto" else rules.metadata_mode
    # The table and every rule read the replay: computed once (tiny: one row per token).
    # Every token's whole history is replayed from silver: no earlier lifecycle row is merged.
    replayed = reused(
        replay_lifecycle(
            local_frame(context.spark, [], tl.TOKEN_LIFECYCLE),
            events,
            config,
            as_of=context.as_of,
            metadata_mode=mode,
            tolerance_ms=rules.clock_tolerance_ms,
        )
    )
    fingerprint_key = context.fingerprint_key
    secret = context.token_secret
    lifecycle = with_hmac_verified(lifecycle_rows(replayed), secret, fingerprint_key)
    entries = tf.run_entries(replayed)
    findings: list[DataFrame] = [
        *tf.rejection_findings(entries, run_id),
        tf.not_allowed_findings(events, run_id),
        tf.mismatch_findings(entries, run_id),
        tf.burst_findings(
            events,
            rules.creation_burst_threshold,
            rules.creation_burst_window_ms,
            rules.clock_tolerance_ms,
            run_id,
        ),
        tf.lifetime_findings(entries, replayed, events, rules.lifetime_factor, run_id),
        tf.describe_findings(events, run_id),
    ]
    if secret and fingerprint_key:
        findings.append(tf.hmac_findings(events, secret, fingerprint_key, run_id))
    table = PlannedTable(
        name=tl.TABLE_NAME,
        df=lifecycle,
        schema=tl.TOKEN_LIFECYCLE,
        partition_by=tl.PARTITION_COLUMNS,
    )
    return GoldOutput(tables=(table,), findings=tuple(findings), cached=(replayed,))
