"""Gold area 'connect': KIP-507 Connect internal request signing (docs/rules-connect.md).

Tables ``connect_internal_requests`` and ``connect_session_keys`` (date-partitioned) and the
``connect.*`` findings, from silver ``connect_requests``, the workers' configs and the lake's
earlier session-key rows. The rules' logic is in ``transforms.gold.kip507_connect_signing``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, StructField, StructType

from jobs.config import area_rules
from jobs.gold.context import GoldContext, GoldOutput, GoldTable
from schemas import connect_internal_requests as ir
from schemas import connect_requests as cr
from schemas import connect_session_keys as sk
from transforms.findings import to_findings
from transforms.frames import local_frame
from transforms.gold import kip507_connect_signing as signing

KIP = "KIP-507"


@dataclass(frozen=True)
class ConnectRules:
    """``[rules.connect]``.

    Attributes:
        stale_key_grace_ms: a worker's 403 at most this long after the first request of its
            retry episode is expected churn (KIP-507; ``DistributedHerder.
            isPossibleExpiredKeyException``: ``TimeUnit.MINUTES.toMillis(1)``). Leader view only:
            the follower's own stale-key line already applies Kafka's one minute.
        retry_gap_ms: a pause longer than this between a caller's requests for one connector
            and endpoint starts a new retry episode (default: twice the 60 s maximum backoff,
            ``RECONFIGURE_CONNECTOR_TASKS_BACKOFF_MAX_MS``).
        rotation_tolerance_ms: a session-key interval further than this from the worker's
            ``inter.worker.key.ttl.ms`` is off schedule.
        worker_user_agent: the User-Agent of worker-to-worker requests (``RestClient``).
    """

    stale_key_grace_ms: int = 60_000
    retry_gap_ms: int = 120_000
    rotation_tolerance_ms: int = 60_000
    worker_user_agent: str = "kafka-connect"


def _explain(template: str, *columns: str) -> Column:
    return F.format_string(
        template, *[F.coalesce(F.col(c).cast("string"), F.lit("-")) for c in columns]
    )


def _findings(
    attempts: DataFrame,
    session_keys: DataFrame,
    context: GoldContext,
    rules: ConnectRules,
) -> tuple[DataFrame, ...]:
    requests = context.silver[cr.TABLE_NAME]
    activity = signing.node_activity(context.bronze)
    run_id = context.config.run_id
    grace = rules.stale_key_grace_ms
    beyond = (
        "%s internal request(s) for connector(s) %s got 403 (invalid signature) more than "
        f"{grace} ms into the worker's retries: not a key rotation; a worker with a wrong key or "
        "a forged request"
    )
    plan = [
        (signing.beyond_grace_403s(attempts, ir.OBSERVED_BY_LEADER),
         "connect.invalid_signature_beyond_grace", "medium", "client_address",
         _explain(beyond, "count", "connectors")),
        (signing.beyond_grace_403s(attempts, ir.OBSERVED_BY_FOLLOWER),
         "connect.invalid_signature_beyond_grace", "medium", "worker",
         _explain("%s task-config forward(s) for connector(s) %s were refused with 403 after "
                  "Kafka's one-minute stale-key grace", "count", "connectors")),
        (signing.non_worker_agent_calls(attempts),
         "connect.internal_endpoint_non_worker_agent", "high", "client_address",
         _explain("%s call(s) to Connect's internal endpoints (connectors %s; statuses %s) with "
                  f"User-Agent '%s', not '{rules.worker_user_agent}': not a worker",
                  "count", "connectors", "statuses", "user_agent")),
        (signing.bad_request_400s(attempts),
         "connect.internal_request_bad_request", "medium", "client_address",
         _explain("%s internal request(s) for connector(s) %s got 400: unsigned, or signed with "
                  "an algorithm the leader's inter.worker.verification.algorithms does not "
                  "permit", "count", "connectors")),
        (signing.algorithms_not_permitted(requests),
         "connect.signature_algorithm_not_permitted", "medium", "worker",
         _explain("%s line(s): the leader refused the key signing algorithm '%s' (400)",
                  "count", "algorithm")),
        (signing.verification_disabled(requests, context.node_properties, activity),
         "connect.request_verification_disabled", "high", "worker",
         _explain("connect.protocol is '%s' (config %s): internal request verification is "
                  "disabled, anyone reaching the REST port can write task configs",
                  "protocols", "config_path")),
        (signing.unverifiable_signature_algorithms(context.node_properties, activity),
         "connect.signature_algorithm_not_verifiable", "medium", "worker",
         _explain("signs with %s, which worker %s does not verify (%s): its internal requests "
                  "get 400 whenever that worker leads (config %s)",
                  "algorithm", "discriminator", "verifier_algorithms", "config_path")),
        (signing.off_schedule_rotations(session_keys),
         "connect.session_key_rotation_off_schedule", "medium", "worker",
         _explain("%s session-key update(s) %s-%s ms after the previous one, key TTL %s ms",
                  "count", "min_interval_ms", "max_interval_ms", "key_ttl_ms")),
    ]  # fmt: skip
    return tuple(
        to_findings(
            candidates,
            rule_id=rule_id,
            kip=KIP,
            severity=severity,
            subject_type=subject_type,
            explanation=explanation,
            run_id=run_id,
        )
        for candidates, rule_id, severity, subject_type, explanation in plan
    )


def build(context: GoldContext) -> GoldOutput:
    """Plan the 'connect' area: both tables and every ``connect.*`` finding (KIP-507).

    Reads ``context.silver['connect_requests']``, ``context.node_properties`` (role
    'connect') and ``context.bronze`` (node activity); ``[rules.connect]`` as
    :class:`ConnectRules`.

    Raises:
        ConfigError: an unknown or mistyped ``[rules.connect]`` key.
    """
    rules = area_rules(context.config, "connect", ConnectRules)
    run_id = context.config.run_id
    requests = context.silver[cr.TABLE_NAME]
    attempts = signing.internal_attempts(
        requests,
        grace_ms=rules.stale_key_grace_ms,
        retry_gap_ms=rules.retry_gap_ms,
        worker_agent=rules.worker_user_agent,
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
        GoldTable(ir.TABLE_NAME, signing.internal_request_counts(attempts, run_id),
                  ir.CONNECT_INTERNAL_REQUESTS, ir.PARTITION_COLUMNS),
        GoldTable(sk.TABLE_NAME, session_keys, sk.CONNECT_SESSION_KEYS, sk.PARTITION_COLUMNS),
    )  # fmt: skip
    return GoldOutput(tables=tables, findings=_findings(attempts, session_keys, context, rules))
