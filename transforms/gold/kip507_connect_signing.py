"""KIP-507 Connect internal request signing: internal requests, session-key rotations, the
candidate rows of the ``connect.*`` rules and the rules themselves (declared at the end,
planned by :func:`connect_findings`; docs/rules-connect.md).

Sources in apache/kafka (trunk 1eb7644349c): ``DistributedHerder.requestNotSignedProperly``
(400 / 400 / 503 / 403), ``DistributedHerder.isPossibleExpiredKeyException`` (a 403 within
``TimeUnit.MINUTES.toMillis(1)`` of the first attempt is a stale key),
``reconfigureConnectorTasksWithExponentialBackoffRetries`` (backoff 250 ms doubling to 60 s),
``checkForKeyRotation`` / ``onSessionKeyUpdate`` (rotation every ``inter.worker.key.ttl.ms``),
``RestClient.httpRequest`` (User-Agent ``kafka-connect``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType

from schemas import connect_internal_requests as ir
from schemas import connect_requests as cr
from schemas import connect_session_keys as sk
from schemas.findings import EVIDENCE_POSITION, MAX_EVIDENCE
from transforms.columns import lookup
from transforms.findings import FindingRule, evidence, finding_rule, to_findings

#: ``stale_key_class`` of a worker's 403: inside / outside the stale-key grace.
WITHIN_GRACE = "within_grace"
BEYOND_GRACE = "beyond_grace"
_ENDPOINTS = {
    cr.ENDPOINT_INTERNAL_TASKS: ir.ENDPOINT_TASKS,
    cr.ENDPOINT_INTERNAL_FENCE: ir.ENDPOINT_FENCE,
}
_STATUS = {code: str(status) for code, status in cr.SIGNATURE_FAILURE_STATUS.items()}
_STALE, _RETRY = "reconfigure_retry_expected_stale_key", "reconfigure_retry"
_ATTEMPT_COLUMNS = (
    "worker_id", "observed_by", "client_address", "connector_name", "endpoint", "status",
    "user_agent", "is_worker_agent", "stale_key_class", "event_ts", "source_path", "line_number",
)  # fmt: skip


def worker_id() -> Column:
    """The worker a connect_requests row belongs to: node_id, else the line's
    ``[Worker clientId=...]``; null when neither is known."""
    return F.coalesce(F.col("node_id"), F.col("worker_client_id"))


def _no_evidence() -> Column:
    """An empty evidence array: config-only findings have no line position."""
    return F.array().cast(ArrayType(EVIDENCE_POSITION, False))


def _ms(later: Column, earlier: Column) -> Column:
    return F.unix_millis(later) - F.unix_millis(earlier)


def _with_grace(rows: DataFrame, grace_ms: int, retry_gap_ms: int) -> DataFrame:
    """stale_key_class of the leader's 403s to workers, by retry episode: per worker, caller,
    connector and endpoint, an episode starts at the first request, after a 2xx, or after a
    pause longer than ``retry_gap_ms``; a 403 at most ``grace_ms`` after the episode's first
    request is within the grace."""
    keys = ["worker_id", "client_address", "connector_name", "endpoint"]
    order = Window.partitionBy(*keys).orderBy("event_ts", "source_path", "line_number")
    prev_ts, prev_status = F.lag("event_ts").over(order), F.lag("status").over(order)
    starts = (
        prev_ts.isNull()
        | F.coalesce(prev_status.between(200, 299), F.lit(False))
        | (_ms(F.col("event_ts"), prev_ts) > retry_gap_ms)
    )
    running = order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    episodes = rows.withColumn("_episode", F.sum(starts.cast("int")).over(running))
    start = F.min("event_ts").over(Window.partitionBy(*keys, "_episode"))
    within = _ms(F.col("event_ts"), start) <= grace_ms
    klass = F.when(F.col("status") == 403, F.when(within, WITHIN_GRACE).otherwise(BEYOND_GRACE))
    return episodes.withColumn("stale_key_class", klass).drop("_episode")


def internal_attempts(
    connect_requests: DataFrame, *, grace_ms: int, retry_gap_ms: int, worker_agent: str
) -> DataFrame:
    """One row per observed internal request (KIP-507 / KIP-618 endpoints).

    Input columns: silver ``connect_requests`` (CONNECT_REQUESTS).
    Output columns: worker_id, observed_by ('leader' | 'follower'), client_address,
        connector_name, endpoint (ENDPOINT_TASKS | ENDPOINT_FENCE) (string), status (int),
        user_agent (string), is_worker_agent (boolean: User-Agent == ``worker_agent``; null for
        the <=2.3 layout, which has none, and for follower rows), stale_key_class
        (WITHIN_GRACE | BEYOND_GRACE | null), event_ts (timestamp, UTC), source_path (string),
        line_number (long).

    Leader rows: REST access lines on an internal endpoint; stale_key_class is set for 403s of
    callers with the worker's agent (or none), by :func:`_with_grace` (``grace_ms``,
    ``retry_gap_ms``); rows without event_ts stay, unclassified. Follower rows: the herder's
    retry lines (task-config forwards only): Kafka's own stale-key DEBUG line is a 403 within
    its one-minute grace; the ERROR retry line's status comes from the folded KIP-507 message
    (403 there = beyond the grace), else null.
    """
    c = F.col
    rest = connect_requests.where(
        (c("record_kind") == cr.KIND_REST_ACCESS) & c("is_internal_endpoint")
    )
    agent = F.coalesce(c("user_agent") == worker_agent, F.lit(False))
    leader = rest.select(
        worker_id().alias("worker_id"),
        F.lit(ir.OBSERVED_BY_LEADER).alias("observed_by"),
        "client_address",
        "connector_name",
        lookup(_ENDPOINTS, c("endpoint_kind")).alias("endpoint"),
        "status",
        "user_agent",
        F.when(c("access_log_format") != cr.FORMAT_NCSA_LATENCY, agent).alias("is_worker_agent"),
        "event_ts",
        "source_path",
        "line_number",
    )
    graded = F.coalesce(c("is_worker_agent"), F.lit(True)) & c("event_ts").isNotNull()
    leader = _with_grace(leader.where(graded), grace_ms, retry_gap_ms).unionByName(
        leader.where(~graded).withColumn("stale_key_class", F.lit(None).cast("string"))
    )
    retries = connect_requests.where(
        (c("record_kind") == cr.KIND_WORKER_EVENT) & c("event_type").isin(_STALE, _RETRY)
    )
    stale = c("event_type") == _STALE
    status = F.when(stale, F.lit(403)).otherwise(
        lookup(_STATUS, c("signature_failure_code")).cast("int")
    )
    follower = retries.select(
        worker_id().alias("worker_id"),
        F.lit(ir.OBSERVED_BY_FOLLOWER).alias("observed_by"),
        F.lit(None).cast("string").alias("client_address"),
        "connector_name",
        F.lit(ir.ENDPOINT_TASKS).alias("endpoint"),
        status.alias("status"),
        F.lit(None).cast("string").alias("user_agent"),
        F.lit(None).cast("boolean").alias("is_worker_agent"),
        F.when(stale, F.lit(WITHIN_GRACE))
        .when(status == 403, F.lit(BEYOND_GRACE))
        .alias("stale_key_class"),
        "event_ts",
        "source_path",
        "line_number",
    )
    return leader.select(*_ATTEMPT_COLUMNS).unionByName(follower.select(*_ATTEMPT_COLUMNS))


def internal_request_counts(attempts: DataFrame, run_id: str) -> DataFrame:
    """Count internal requests per UTC hour into gold.connect_internal_requests.

    Input columns: see :func:`internal_attempts`.
    Output columns: exactly ``schemas.connect_internal_requests.CONNECT_INTERNAL_REQUESTS``.
    Rows without event_ts are counted in a group with null window and event_date.
    """
    c = F.col
    hour = F.date_trunc("hour", c("event_ts"))
    known = c("is_worker_agent").isNotNull()
    counts = attempts.groupBy(
        "worker_id",
        "observed_by",
        "client_address",
        "connector_name",
        "endpoint",
        "status",
        hour.alias("window_start_ts"),
    ).agg(
        F.count(F.lit(1)).alias("request_count"),
        F.sum(F.when(known, (~c("is_worker_agent")).cast("long"))).alias("non_worker_agent_count"),
        F.count(F.when(c("stale_key_class") == WITHIN_GRACE, 1)).alias("stale_key_403_count"),
        F.count(F.when(c("stale_key_class") == BEYOND_GRACE, 1)).alias("beyond_grace_403_count"),
        F.min("event_ts").alias("first_seen_ts"),
        F.max("event_ts").alias("last_seen_ts"),
    )
    shaped = counts.withColumns(
        {
            "window_end_ts": c("window_start_ts") + F.expr("INTERVAL 1 HOUR"),
            "run_id": F.lit(run_id),
            "event_date": F.to_date("window_start_ts"),
        }
    )
    return shaped.select(
        *[c(f.name).cast(f.dataType).alias(f.name) for f in ir.CONNECT_INTERNAL_REQUESTS.fields]
    )


_KEY_COLUMNS = ("worker_id", "worker_client_id", "worker_group_id", "updated_ts",
                "source_path", "line_number")  # fmt: skip


def _key_updates(connect_requests: DataFrame) -> DataFrame:
    """The run's ``Session key updated`` lines with a timestamp: worker_id, worker_client_id,
    worker_group_id, updated_ts, source_path, line_number."""
    c = F.col
    return connect_requests.where(
        (c("record_kind") == cr.KIND_WORKER_EVENT)
        & (c("event_type") == "session_key_updated")
        & c("event_ts").isNotNull()
    ).select(worker_id().alias("worker_id"), "worker_client_id", "worker_group_id",
             c("event_ts").alias("updated_ts"), "source_path", "line_number")  # fmt: skip


def _key_ttls(node_properties: DataFrame) -> DataFrame:
    """worker_id, _ttl (the configured ``inter.worker.key.ttl.ms`` text), _configured (true)
    of the Connect workers that set it."""
    c = F.col
    return (
        node_properties.where(
            (c("role") == "connect") & (c("property") == "inter.worker.key.ttl.ms")
        )
        .groupBy(c("node_id").alias("worker_id"))
        .agg(F.max("value").alias("_ttl"), F.lit(True).alias("_configured"))
    )


def session_key_rotations(
    connect_requests: DataFrame,
    node_properties: DataFrame,
    previous: DataFrame,
    replaced_dates: DataFrame,
    *,
    tolerance_ms: int,
    run_id: str,
) -> DataFrame:
    """Observed session-key rotations per worker and group, against the worker's key TTL.

    Input columns: silver ``connect_requests``; ``node_properties`` (NODE_PROPERTIES);
        ``previous``: the table's snapshot before this run (CONNECT_SESSION_KEYS);
        ``replaced_dates``: event_date (date), the partitions this run replaces.
    Output columns: exactly ``schemas.connect_session_keys.CONNECT_SESSION_KEYS``.

    One row per ``Session key updated`` line with a timestamp; its predecessor is the worker's
    previous line in this run or, for the first, in the snapshot's other dates. ``key_ttl_ms``
    is the worker's ``inter.worker.key.ttl.ms`` (role 'connect'), else 3600000; a value that
    is not a number gives null. ``off_schedule`` is ``|interval - ttl| > tolerance_ms``, null
    without an interval or a positive TTL. The leader's TTL sets the rotation: with different
    TTLs in one group, a follower's interval follows the leader's, not its own.
    """
    c = F.col
    seeds = previous.join(replaced_dates, "event_date", "left_anti").select(*_KEY_COLUMNS)
    both = (
        _key_updates(connect_requests)
        .withColumn("_current", F.lit(True))
        .unionByName(seeds.withColumn("_current", F.lit(False)))
    )
    order = Window.partitionBy("worker_id", "worker_group_id").orderBy(
        "updated_ts", "source_path", "line_number"
    )
    rows = (
        both.withColumn("previous_updated_ts", F.lag("updated_ts").over(order))
        .where(c("_current"))
        .join(_key_ttls(node_properties), "worker_id", "left")
    )
    configured = F.coalesce(c("_configured"), F.lit(False))
    ttl = F.when(configured, c("_ttl").try_cast("long")).otherwise(F.lit(sk.DEFAULT_KEY_TTL_MS))
    interval = _ms(c("updated_ts"), c("previous_updated_ts"))
    shaped = rows.withColumns(
        {
            "interval_ms": interval,
            "key_ttl_ms": ttl,
            "key_ttl_source": F.when(configured, sk.TTL_FROM_CONFIG).otherwise(sk.TTL_DEFAULT),
            "deviation_ms": interval - ttl,
        }
    ).withColumns(
        {
            "off_schedule": F.when(c("key_ttl_ms") > 0, F.abs(c("deviation_ms")) > tolerance_ms),
            "run_id": F.lit(run_id),
            "event_date": F.to_date("updated_ts"),
        }
    )
    return shaped.select(
        *[c(f.name).cast(f.dataType).alias(f.name) for f in sk.CONNECT_SESSION_KEYS.fields]
    )


# --- rule candidates (transforms.findings.to_findings input: subject, discriminator, node_id,
# first_seen_ts, last_seen_ts, count, evidence, plus the columns the explanations use) ---


def _joined(column: Column) -> Column:
    """Aggregate: the group's distinct non-null values, sorted, joined with ', '."""
    return F.array_join(F.array_sort(F.collect_set(column.cast("string"))), ", ")


def _dash(column: str) -> Column:
    return F.coalesce(F.col(column), F.lit("-"))


def _candidates(
    rows: DataFrame, subject: Column, discriminator: Column, *extra: Column
) -> DataFrame:
    """Group rows (worker_id, event_ts, source_path, line_number) into one candidate per
    subject and discriminator; ``extra`` are more aggregates."""
    keyed = rows.withColumns({"subject": subject, "discriminator": discriminator})
    return keyed.groupBy("subject", "discriminator", F.col("worker_id").alias("node_id")).agg(
        F.min("event_ts").alias("first_seen_ts"),
        F.max("event_ts").alias("last_seen_ts"),
        F.count(F.lit(1)).alias("count"),
        evidence().alias("evidence"),
        *extra,
    )


def beyond_grace_403s(attempts: DataFrame, observed_by: str) -> DataFrame:
    """Candidates of ``connect.invalid_signature_beyond_grace``: workers' 403s outside the
    stale-key grace (:func:`internal_attempts`). Leader view: subject the caller's address
    ('-' when unknown), discriminator 'worker|connector|endpoint'; follower view: subject the
    worker, discriminator 'connector|endpoint'. Extra column: connectors (string)."""
    rows = attempts.where(
        (F.col("observed_by") == observed_by) & (F.col("stale_key_class") == BEYOND_GRACE)
    )
    target = [_dash("connector_name"), F.col("endpoint")]
    if observed_by == ir.OBSERVED_BY_LEADER:
        subject, parts = _dash("client_address"), [_dash("worker_id"), *target]
    else:
        subject, parts = F.col("worker_id"), target
    return _candidates(
        rows,
        subject,
        F.concat_ws("|", *parts),
        _joined(F.col("connector_name")).alias("connectors"),
    )


def non_worker_agent_calls(attempts: DataFrame) -> DataFrame:
    """Candidates of ``connect.internal_endpoint_non_worker_agent``: leader-view requests whose
    User-Agent is not the worker's. Subject: caller address; discriminator 'worker|agent'.
    Extra columns: user_agent, statuses, connectors (string)."""
    rows = attempts.where(
        (F.col("observed_by") == ir.OBSERVED_BY_LEADER) & ~F.col("is_worker_agent")
    )
    return _candidates(
        rows,
        _dash("client_address"),
        F.concat_ws("|", _dash("worker_id"), _dash("user_agent")),
        F.max(_dash("user_agent")).alias("user_agent"),
        _joined(F.col("status")).alias("statuses"),
        _joined(F.col("connector_name")).alias("connectors"),
    )


def bad_request_400s(attempts: DataFrame) -> DataFrame:
    """Candidates of ``connect.internal_request_bad_request``: leader-view 400s to callers with
    the worker's User-Agent (or none). Subject: caller address; discriminator
    'worker|connector|endpoint'. Extra column: connectors (string)."""
    rows = attempts.where(
        (F.col("observed_by") == ir.OBSERVED_BY_LEADER)
        & (F.col("status") == 400)
        & F.coalesce(F.col("is_worker_agent"), F.lit(True))
    )
    parts = [_dash("worker_id"), _dash("connector_name"), F.col("endpoint")]
    return _candidates(
        rows,
        _dash("client_address"),
        F.concat_ws("|", *parts),
        _joined(F.col("connector_name")).alias("connectors"),
    )


def algorithms_not_permitted(connect_requests: DataFrame) -> DataFrame:
    """Candidates of ``connect.signature_algorithm_not_permitted``: worker lines carrying the
    leader's 'This worker does not support the '%s' key signing algorithm ...' error (leader:
    ConnectExceptionMapper; follower: RestClient / herder). Subject: worker; discriminator:
    the algorithm ('' when the line does not name it). Extra column: algorithm (string)."""
    algorithm = F.regexp_extract(
        F.col("exception_message"), r"does not support the '([^']*)' key signing algorithm", 1
    )
    rows = connect_requests.where(
        F.col("signature_failure_code") == "algorithm_not_permitted"
    ).withColumns({"worker_id": worker_id(), "algorithm": algorithm})
    return _candidates(
        rows, F.col("worker_id"), F.col("algorithm"), F.max("algorithm").alias("algorithm")
    )


def off_schedule_rotations(session_keys: DataFrame) -> DataFrame:
    """Candidates of ``connect.session_key_rotation_off_schedule``: rows of
    :func:`session_key_rotations` with off_schedule true. Subject: worker; discriminator ''.
    Extra columns: key_ttl_ms, min_interval_ms, max_interval_ms (long)."""
    rows = session_keys.where(F.col("off_schedule")).withColumn("event_ts", F.col("updated_ts"))
    return _candidates(
        rows,
        F.col("worker_id"),
        F.lit(""),
        F.max("key_ttl_ms").alias("key_ttl_ms"),
        F.min("interval_ms").alias("min_interval_ms"),
        F.max("interval_ms").alias("max_interval_ms"),
    )


def node_activity(bronze: DataFrame) -> DataFrame:
    """node_id, first_ts, last_ts (timestamp, UTC): the span of each node's timed log records
    in the run; a config-only finding is dated by it (the config was in force then)."""
    timed = bronze.where(F.col("log_ts").isNotNull() & F.col("node_id").isNotNull())
    return timed.groupBy("node_id").agg(
        F.min("log_ts").alias("first_ts"), F.max("log_ts").alias("last_ts")
    )


def _merged(arrays: str) -> Column:
    """Aggregate: the group's arrays in one, distinct, sorted."""
    return F.array_sort(F.array_distinct(F.flatten(F.collect_list(arrays))))


def _connect_config(node_properties: DataFrame, names: dict[str, str]) -> DataFrame:
    """node_id, config_path and one column per property (``names``: column -> property) of
    the Connect workers' configs; absent properties are null."""
    rows = node_properties.where((F.col("role") == "connect") & F.col("node_id").isNotNull())
    return rows.groupBy("node_id").agg(
        F.max("config_path").alias("config_path"),
        *[F.max(F.when(F.col("property") == p, F.col("value"))).alias(n) for n, p in names.items()],
    )


def verification_disabled(
    connect_requests: DataFrame, node_properties: DataFrame, activity: DataFrame
) -> DataFrame:
    """Candidates of ``connect.request_verification_disabled``: workers whose
    ``connect.protocol`` is not 'sessioned' (KIP-507 needs it), from the herder's WARN lines
    (``request_verification_disabled`` at start-up, ``request_verification_downgrade`` on a
    downgrade) and/or the worker's config (one event, dated by :func:`node_activity`, no line
    position). Subject: worker; discriminator ''. Extra columns: protocols (string: the values
    logged or configured), config_path (string or null)."""
    c = F.col
    logged = connect_requests.where(
        c("event_type").isin("request_verification_disabled", "request_verification_downgrade")
    ).withColumn("worker_id", worker_id())
    from_logs = logged.groupBy("worker_id").agg(
        F.min("event_ts").alias("first_ts"), F.max("event_ts").alias("last_ts"),
        F.count(F.lit(1)).alias("count"), evidence().alias("evidence"),
        F.collect_set(F.lower("config_value")).alias("protocols"),
        F.lit(None).cast("string").alias("config_path"),
    )  # fmt: skip
    config = _connect_config(node_properties, {"protocol": "connect.protocol"}).where(
        F.lower(c("protocol")) != "sessioned"
    )
    from_config = config.join(activity, "node_id").select(
        c("node_id").alias("worker_id"), "first_ts", "last_ts",
        F.lit(1).cast("long").alias("count"),
        _no_evidence().alias("evidence"),
        F.array(F.lower("protocol")).alias("protocols"), "config_path",
    )  # fmt: skip
    both = from_logs.unionByName(from_config)
    return both.groupBy(c("worker_id").alias("subject")).agg(
        F.lit("").alias("discriminator"), F.max("worker_id").alias("node_id"),
        F.min("first_ts").alias("first_seen_ts"), F.max("last_ts").alias("last_seen_ts"),
        F.sum("count").alias("count"),
        F.slice(_merged("evidence"), 1, MAX_EVIDENCE).alias("evidence"),
        F.array_join(_merged("protocols"), ", ").alias("protocols"),
        F.max("config_path").alias("config_path"),
    )  # fmt: skip


def unverifiable_signature_algorithms(node_properties: DataFrame, activity: DataFrame) -> DataFrame:
    """Candidates of ``connect.signature_algorithm_not_verifiable``: pairs of workers of one
    ``group.id`` where the signer's ``inter.worker.signature.algorithm`` (default HmacSHA256)
    is not in the verifier's ``inter.worker.verification.algorithms`` (default HmacSHA256):
    whenever the verifier leads, the signer's internal requests get 400. From the configs only
    (dated by the signer's :func:`node_activity`; count 1, no line position). Subject: signer;
    discriminator: the verifier's id. Extra columns: algorithm, verifier_algorithms,
    config_path (string)."""
    c = F.col
    names = {"group_id": "group.id", "signs": "inter.worker.signature.algorithm",
             "verifies": "inter.worker.verification.algorithms"}  # fmt: skip
    workers = _connect_config(node_properties, names).where(c("group_id").isNotNull())
    signers = workers.select(
        "node_id", "group_id", "config_path",
        F.coalesce(F.trim("signs"), F.lit("HmacSHA256")).alias("algorithm"),
    )  # fmt: skip
    verifiers = workers.select(
        c("node_id").alias("verifier"), "group_id",
        F.split(F.coalesce(F.trim("verifies"), F.lit("HmacSHA256")), r"\s*,\s*").alias("_allowed"),
    )  # fmt: skip
    pairs = signers.join(verifiers, "group_id").where(
        (c("node_id") != c("verifier")) & ~F.array_contains("_allowed", c("algorithm"))
    )
    return pairs.join(activity, "node_id").select(
        c("node_id").alias("subject"), c("verifier").alias("discriminator"), "node_id",
        c("first_ts").alias("first_seen_ts"), c("last_ts").alias("last_seen_ts"),
        F.lit(1).cast("long").alias("count"), _no_evidence().alias("evidence"), "algorithm",
        F.array_join("_allowed", ", ").alias("verifier_algorithms"), "config_path",
    )  # fmt: skip


# --- finding rules (``transforms.findings``; docs/rules-connect.md) ---

KIP = "KIP-507"
_BEYOND_GRACE = "connect.invalid_signature_beyond_grace"

#: Follower view of a 403 beyond the grace: the herder's ERROR retry line after Kafka's own
#: one-minute grace (``DistributedHerder.isPossibleExpiredKeyException``). Candidates:
#: :func:`beyond_grace_403s` (``OBSERVED_BY_FOLLOWER``).
FORWARD_REFUSED_BEYOND_GRACE = finding_rule(
    _BEYOND_GRACE, KIP, "medium", "worker",
    "%s task-config forward(s) for connector(s) %s were refused with 403 after Kafka's "
    "one-minute stale-key grace",
    "count", "connectors",
)  # fmt: skip
#: Leader-view 400s to workers: unsigned, or an algorithm not permitted
#: (``DistributedHerder.requestNotSignedProperly``). Candidates: :func:`bad_request_400s`.
INTERNAL_REQUEST_BAD_REQUEST = finding_rule(
    "connect.internal_request_bad_request", KIP, "medium", "client_address",
    "%s internal request(s) for connector(s) %s got 400: unsigned, or signed with an algorithm "
    "the leader's inter.worker.verification.algorithms does not permit",
    "count", "connectors",
)  # fmt: skip
#: The leader refused a key signing algorithm (``ConnectExceptionMapper``, ``RestClient``).
#: Candidates: :func:`algorithms_not_permitted`.
SIGNATURE_ALGORITHM_NOT_PERMITTED = finding_rule(
    "connect.signature_algorithm_not_permitted", KIP, "medium", "worker",
    "%s line(s): the leader refused the key signing algorithm '%s' (400)",
    "count", "algorithm",
)  # fmt: skip
#: ``connect.protocol`` other than 'sessioned': no request verification (``DistributedHerder``
#: WARN lines, or the config). Candidates: :func:`verification_disabled`.
REQUEST_VERIFICATION_DISABLED = finding_rule(
    "connect.request_verification_disabled", KIP, "high", "worker",
    "connect.protocol is '%s' (config %s): internal request verification is disabled, anyone "
    "reaching the REST port can write task configs",
    "protocols", "config_path",
)  # fmt: skip
#: A worker signs with an algorithm another worker of its group does not verify (configs).
#: Candidates: :func:`unverifiable_signature_algorithms`.
SIGNATURE_ALGORITHM_NOT_VERIFIABLE = finding_rule(
    "connect.signature_algorithm_not_verifiable", KIP, "medium", "worker",
    "signs with %s, which worker %s does not verify (%s): its internal requests get 400 "
    "whenever that worker leads (config %s)",
    "algorithm", "discriminator", "verifier_algorithms", "config_path",
)  # fmt: skip
#: Session-key updates off the ``inter.worker.key.ttl.ms`` schedule
#: (``DistributedHerder.checkForKeyRotation``). Candidates: :func:`off_schedule_rotations`.
SESSION_KEY_ROTATION_OFF_SCHEDULE = finding_rule(
    "connect.session_key_rotation_off_schedule", KIP, "medium", "worker",
    "%s session-key update(s) %s-%s ms after the previous one, key TTL %s ms",
    "count", "min_interval_ms", "max_interval_ms", "key_ttl_ms",
)  # fmt: skip


def signature_beyond_grace_rule(grace_ms: int) -> FindingRule:
    """Leader view of ``connect.invalid_signature_beyond_grace`` (medium): a worker's 403 more
    than ``grace_ms`` into its retry episode (``DistributedHerder
    .isPossibleExpiredKeyException``). Candidates: :func:`beyond_grace_403s`
    (``OBSERVED_BY_LEADER``). The sentence names the setting; nothing raises."""
    return finding_rule(
        _BEYOND_GRACE, KIP, "medium", "client_address",
        "%s internal request(s) for connector(s) %s got 403 (invalid signature) more than "
        f"{grace_ms} ms into the worker's retries: not a key rotation; a worker with a wrong key "
        "or a forged request",
        "count", "connectors",
    )  # fmt: skip


def non_worker_agent_rule(worker_agent: str) -> FindingRule:
    """``connect.internal_endpoint_non_worker_agent`` (high): internal endpoints called with
    another User-Agent than the workers' ``worker_agent`` (``RestClient.httpRequest``).
    Candidates: :func:`non_worker_agent_calls`. A '%' of ``worker_agent`` is kept literally;
    nothing raises."""
    agent = worker_agent.replace("%", "%%")
    return finding_rule(
        "connect.internal_endpoint_non_worker_agent", KIP, "high", "client_address",
        "%s call(s) to Connect's internal endpoints (connectors %s; statuses %s) with "
        f"User-Agent '%s', not '{agent}': not a worker",
        "count", "connectors", "statuses", "user_agent",
    )  # fmt: skip


def connect_findings(
    attempts: DataFrame,
    session_keys: DataFrame,
    connect_requests: DataFrame,
    node_properties: DataFrame,
    bronze: DataFrame,
    *,
    grace_ms: int,
    worker_agent: str,
    run_id: str,
) -> tuple[DataFrame, ...]:
    """Every KIP-507 finding, one frame (``schemas.findings.FINDINGS``) per rule:
    :func:`signature_beyond_grace_rule` (leader view), :data:`FORWARD_REFUSED_BEYOND_GRACE`,
    :func:`non_worker_agent_rule`, :data:`INTERNAL_REQUEST_BAD_REQUEST`,
    :data:`SIGNATURE_ALGORITHM_NOT_PERMITTED`, :data:`REQUEST_VERIFICATION_DISABLED`,
    :data:`SIGNATURE_ALGORITHM_NOT_VERIFIABLE`, :data:`SESSION_KEY_ROTATION_OFF_SCHEDULE`.

    Args:
        attempts: :func:`internal_attempts` rows.
        session_keys: :func:`session_key_rotations` rows.
        connect_requests: silver ``connect_requests``.
        node_properties: ``schemas.node_properties`` rows (role 'connect').
        bronze: bronze ``raw_lines`` rows (:func:`node_activity` dates config-only findings).
        grace_ms / worker_agent: ``[rules.connect]`` stale_key_grace_ms / worker_user_agent.
        run_id: the run.

    Nothing raises.
    """
    activity = node_activity(bronze)
    plan = (
        (signature_beyond_grace_rule(grace_ms),
         beyond_grace_403s(attempts, ir.OBSERVED_BY_LEADER)),
        (FORWARD_REFUSED_BEYOND_GRACE, beyond_grace_403s(attempts, ir.OBSERVED_BY_FOLLOWER)),
        (non_worker_agent_rule(worker_agent), non_worker_agent_calls(attempts)),
        (INTERNAL_REQUEST_BAD_REQUEST, bad_request_400s(attempts)),
        (SIGNATURE_ALGORITHM_NOT_PERMITTED, algorithms_not_permitted(connect_requests)),
        (REQUEST_VERIFICATION_DISABLED,
         verification_disabled(connect_requests, node_properties, activity)),
        (SIGNATURE_ALGORITHM_NOT_VERIFIABLE,
         unverifiable_signature_algorithms(node_properties, activity)),
        (SESSION_KEY_ROTATION_OFF_SCHEDULE, off_schedule_rotations(session_keys)),
    )  # fmt: skip
    return tuple(to_findings(candidates, rule, run_id) for rule, candidates in plan)
