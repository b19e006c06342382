"""Gold area 'connect': KIP-507 Connect internal request signing (docs/rules-connect.md).

Tables ``connect_internal_requests`` and ``connect_session_keys`` (date-partitioned) and the
``connect.*`` findings, from silver ``connect_requests``, the workers' configs and the lake's
earlier session-key rows. The rules (their logic and declarations) are in
``transforms.gold.kip507_connect_signing``.
"""

from __future__ import annotations

from pyspark.sql.types import DateType, StructField, StructType

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, PlannedTable
from jobs.reuse import reused
from jobs.rules import ConnectRules
from schemas import connect_internal_requests as ir
from schemas import connect_requests as cr
from schemas import connect_session_keys as sk
from transforms.frames import local_frame
from transforms.gold import kip507_connect_signing as signing

#: The area's rules class lives in jobs.rules (checked when the config is loaded).
__all__ = ["ConnectRules", "build"]


def build(context: GoldContext) -> GoldOutput:
    """Plan the 'connect' area: both tables and every ``connect.*`` finding (KIP-507).

    Reads ``context.silver['connect_requests']``, ``context.node_properties`` (role
    'connect') and ``context.bronze`` (node activity); ``[rules.connect]`` as
    :class:`ConnectRules`.

    The internal attempts, which the table and four findings read, are computed here, once
    (``jobs.reuse.reused``; released by the pipeline through ``GoldOutput.cached``).

    Raises:
        ConfigError: an unknown or mistyped ``[rules.connect]`` key.
        pyspark.errors.PySparkException: computing the internal attempts failed.
    """
    rules = area_rules(context.config, "connect", ConnectRules)
    run_id = context.config.run_id
    requests = context.silver[cr.TABLE_NAME]
    # The table and four findings read the attempts: computed once, so that no later step is
    # planned over five copies of their windows (KIP-507's planning and running on
    # ``samples/``, warm: 2.9 s before, 1.7-2.0 s after).
    attempts = reused(
        signing.internal_attempts(
            requests,
            grace_ms=rules.stale_key_grace_ms,
            retry_gap_ms=rules.retry_gap_ms,
            worker_agent=rules.worker_user_agent,
        )
    )
    session_keys = signing.session_key_rotations(
        requests,
        context.node_properties,
        # Every update's predecessor is in the lake's silver: no earlier row is read.
        local_frame(context.spark, [], sk.CONNECT_SESSION_KEYS),
        local_frame(context.spark, [], StructType([StructField("event_date", DateType())])),
        tolerance_ms=rules.rotation_tolerance_ms,
        run_id=run_id,
    )
    tables = (
        PlannedTable(ir.TABLE_NAME, signing.internal_request_counts(attempts, run_id),
                     ir.CONNECT_INTERNAL_REQUESTS, ir.PARTITION_COLUMNS),
        PlannedTable(sk.TABLE_NAME, session_keys, sk.CONNECT_SESSION_KEYS, sk.PARTITION_COLUMNS),
    )  # fmt: skip
    findings = signing.connect_findings(
        attempts,
        session_keys,
        requests,
        context.node_properties,
        context.bronze,
        grace_ms=rules.stale_key_grace_ms,
        worker_agent=rules.worker_user_agent,
        run_id=run_id,
    )
    return GoldOutput(tables=tables, findings=findings, cached=(attempts,))
