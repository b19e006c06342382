"""Replay KIP-48 delegation-token lifecycles from silver.token_events into gold.token_lifecycle.

The replay is a pure function of (previous lifecycle rows, this run's token_events, the
cluster's token configs): every history entry of the previous rows is exploded, this run's
operations are added, duplicates of one log line are dropped, and each token's state is
recomputed from its whole sorted history with Spark's ``aggregate`` (a fold over the array, no
UDF). Re-running a day therefore leaves the table unchanged. The rules (kafka-log-formats.md
section 6.3) are those of ``kafka.server.DelegationTokenManagerZk`` (ZooKeeper mode) and
``org.apache.kafka.controller.DelegationTokenControlManager`` (KRaft, KIP-900):
``createToken`` / ``renewToken`` / ``expireToken`` / ``expireTokens`` (the sweeper).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BooleanType, StructField, StructType

from schemas import token_events as te
from schemas import token_lifecycle as tl
from transforms.columns import epoch_ms_ts

MAX_LIFETIME_MS_DEFAULT = 604_800_000
EXPIRY_TIME_MS_DEFAULT = 86_400_000
EXPIRY_CHECK_INTERVAL_MS_DEFAULT = 3_600_000
#: The secret's current name and its pre-4.0 alias (values are null in node_properties).
SECRET_KEY_PROPERTIES = ("delegation.token.secret.key", "delegation.token.master.key")
_CONFIGS = {
    "max_lifetime_ms": ("delegation.token.max.lifetime.ms", MAX_LIFETIME_MS_DEFAULT),
    "expiry_time_ms": ("delegation.token.expiry.time.ms", EXPIRY_TIME_MS_DEFAULT),
    "expiry_check_interval_ms": (
        "delegation.token.expiry.check.interval.ms",
        EXPIRY_CHECK_INTERVAL_MS_DEFAULT,
    ),
}
#: History entry fields read from the log (the rest are recomputed by the replay).
INPUT_FIELDS = ("event_ts", "actor", "operation", "error_code", "error_code_name",
                "requested_period_ms", "observed_expiry_ms", "observed_issue_ms",
                "observed_max_ms", "source", "metadata_mode", "node_id", "source_path",
                "line_number")  # fmt: skip
#: Token-manager-only operations kept (update_expiry becomes an expire with a period >= 0).
_MANAGER_OPS = (te.OP_UPDATE_EXPIRY, te.OP_SWEEP)


def token_config(node_properties: DataFrame) -> DataFrame:
    """The cluster's delegation-token configs as one row.

    Input columns: NODE_PROPERTIES (role, property, value).
    Output columns: max_lifetime_ms, expiry_time_ms, expiry_check_interval_ms (long, ms;
    the largest value over broker / controller nodes, else Kafka's default 7 d / 1 d / 1 h,
    ``DelegationTokenManagerConfigs``), tokens_enabled (boolean: a node sets
    ``delegation.token.secret.key`` or the pre-4.0 ``delegation.token.master.key``; null when
    no node config is known), metadata_mode ('kraft' when a node sets ``process.roles``,
    'zookeeper' when one sets ``zookeeper.connect``, else null).
    """
    nodes = node_properties.where(F.col("role") != "connect")
    prop, value = F.col("property"), F.col("value").try_cast("long")

    def has(*names: str) -> Column:
        return F.max(prop.isin(*names))

    return nodes.agg(
        *[
            F.coalesce(F.max(F.when(prop == name, value)), F.lit(default)).alias(column)
            for column, (name, default) in _CONFIGS.items()
        ],
        has(*SECRET_KEY_PROPERTIES).alias("tokens_enabled"),
        F.when(has("process.roles"), F.lit(te.MODE_KRAFT))
        .when(has("zookeeper.connect"), F.lit(te.MODE_ZOOKEEPER))
        .alias("metadata_mode"),
    )


def lifecycle_events(token_events: DataFrame, tolerance_ms: int) -> DataFrame:
    """This run's operations that change a token, one row per operation.

    Input columns: TOKEN_EVENTS.
    Output columns: token_id, hmac_fingerprint (string), then INPUT_FIELDS (history entry
    input fields, types of ``TOKEN_HISTORY_ENTRY``).

    Kept: request-log create / renew / expire (any error code) and token-manager create,
    renew, expire ('Token expired': period -1), update_expiry (expire with a period >= 0)
    and sweep lines. A forwarded request (``is_forwarded``, the KRaft controller's copy,
    KIP-590) is dropped when the broker's own line of the same request (operation,
    principal, client id, correlation id, error code, token) lies within ``tolerance_ms``.
    Rows without event_ts cannot be ordered and are left out; describes, cache loads,
    notifications and KRaft ``Replayed ...Record`` lines do not change a token here.
    """
    c = F.col
    manager = c("source") == te.SOURCE_TOKEN_MANAGER
    ops = (te.OP_CREATE, te.OP_RENEW, te.OP_EXPIRE)
    op = F.when(c("operation") == te.OP_UPDATE_EXPIRY, F.lit(te.OP_EXPIRE)).otherwise(
        c("operation")
    )
    requested = (
        F.when(manager & (c("operation") == te.OP_EXPIRE), F.lit(-1).cast("long"))
        .when(c("operation") == te.OP_CREATE, c("max_lifetime_ms"))
        .when(c("operation") == te.OP_RENEW, c("renew_period_ms"))
        .when(c("operation") == te.OP_EXPIRE, c("expiry_time_period_ms"))
    )
    kept = token_events.where(
        c("event_ts").isNotNull()
        & (c("operation").isin(*ops) | (manager & c("operation").isin(*_MANAGER_OPS)))
    )
    rows = kept.select(
        "token_id", "hmac_fingerprint", "event_ts", c("requester").alias("actor"),
        op.alias("operation"), "error_code", "error_code_name",
        requested.alias("requested_period_ms"),
        F.when(~manager, c("expiry_timestamp_ms")).alias("observed_expiry_ms"),
        F.when(~manager, c("issue_timestamp_ms")).alias("observed_issue_ms"),
        F.when(~manager, c("max_timestamp_ms")).alias("observed_max_ms"),
        "source",
        F.coalesce(c("metadata_mode"), F.when(c("is_forwarded"), F.lit(te.MODE_KRAFT)))
        .alias("metadata_mode"),
        "node_id", "source_path", "line_number", "is_forwarded", "client_id", "correlation_id",
    )  # fmt: skip
    same = ["operation", "actor", "client_id", "correlation_id", "error_code"]
    broker = rows.where(~F.coalesce(c("is_forwarded"), F.lit(False)))
    b = broker.select(*[c(n).alias(f"_b_{n}") for n in [*same, "event_ts", "token_id",
                                                            "hmac_fingerprint"]])  # fmt: skip
    matches = [c(n).eqNullSafe(c(f"_b_{n}")) for n in [*same, "token_id", "hmac_fingerprint"]]
    close = F.abs(F.unix_millis(c("event_ts")) - F.unix_millis(c("_b_event_ts"))) <= tolerance_ms
    cond = c("is_forwarded") & close
    for m in matches:
        cond = cond & m
    return rows.join(b, cond, "left_anti").select("token_id", "hmac_fingerprint", *INPUT_FIELDS)


def token_observations(token_events: DataFrame) -> DataFrame:
    """What this run's successful create and describe lines say about a token.

    Input columns: TOKEN_EVENTS. Output columns: token_id, hmac_fingerprint, owner,
    requester, renewers, issue_ms, max_ms, expiry_ms (long), priority (int: 0 create,
    2 describe; the previous row is 1), event_ts, source_path, line_number.
    Rows without a token id are left out (a failed Create has none).
    """
    c = F.col
    create = c("operation") == te.OP_CREATE
    return token_events.where(
        c("token_id").isNotNull()
        & c("operation").isin(te.OP_CREATE, te.OP_DESCRIBE)
        & (F.coalesce(c("error_code"), F.lit(0)) == 0)
    ).select(
        "token_id", "hmac_fingerprint", "owner",
        F.when(create, c("requester")).alias("requester"), "renewers",
        F.when(c("issue_timestamp_ms") >= 0, c("issue_timestamp_ms")).alias("issue_ms"),
        F.when(c("max_timestamp_ms") >= 0, c("max_timestamp_ms")).alias("max_ms"),
        F.when(c("expiry_timestamp_ms") >= 0, c("expiry_timestamp_ms")).alias("expiry_ms"),
        F.when(create, 0).otherwise(2).alias("priority"),
        "event_ts", "source_path", "line_number",
    )  # fmt: skip


def run_metadata_mode(token_events: DataFrame, config: DataFrame) -> DataFrame:
    """One row, metadata_mode: from the node configs (``token_config``), else the run's
    lines (a KRaft controller line or a forwarded request says 'kraft', a ZooKeeper token
    manager line 'zookeeper'; both or neither: null)."""
    c = F.col
    seen = token_events.agg(
        F.max((c("metadata_mode") == te.MODE_KRAFT) | c("is_forwarded")).alias("k"),
        F.max(c("metadata_mode") == te.MODE_ZOOKEEPER).alias("z"),
    )
    k, z = F.coalesce(c("k"), F.lit(False)), F.coalesce(c("z"), F.lit(False))
    lines = F.when(k & ~z, F.lit(te.MODE_KRAFT)).when(z & ~k, F.lit(te.MODE_ZOOKEEPER))
    return config.crossJoin(seen).select(F.coalesce(c("metadata_mode"), lines).alias("_run_mode"))


def history_events(previous: DataFrame) -> DataFrame:
    """The previous rows' history entries, one row each: token_id, hmac_fingerprint, then
    INPUT_FIELDS."""
    entries = previous.select("token_id", "hmac_fingerprint", F.explode("history").alias("h"))
    return entries.select("token_id", "hmac_fingerprint", *[F.col(f"h.{n}") for n in INPUT_FIELDS])


def fingerprint_ids(previous: DataFrame, observations: DataFrame) -> DataFrame:
    """hmac fingerprint -> token id, from the previous rows and this run's create / describe
    responses. Output columns: _fp, _id (string)."""
    c = F.col
    pairs = previous.select("token_id", "hmac_fingerprint").unionByName(
        observations.select("token_id", "hmac_fingerprint")
    )
    return (
        pairs.where(c("token_id").isNotNull() & c("hmac_fingerprint").isNotNull())
        .groupBy(c("hmac_fingerprint").alias("_fp"))
        .agg(F.min("token_id").alias("_id"))
    )


def with_token_key(df: DataFrame, ids: DataFrame) -> DataFrame:
    """Add token_key: token_id, else the id whose response carried the row's
    hmac_fingerprint (``fingerprint_ids``), else 'hmac:<fingerprint>'; null when neither."""
    c = F.col
    resolved = df.join(F.broadcast(ids), c("hmac_fingerprint") == c("_fp"), "left")
    key = F.coalesce(c("token_id"), c("_id"), F.concat(F.lit("hmac:"), c("hmac_fingerprint")))
    return resolved.withColumn("token_key", key).drop("_fp", "_id")


def keyed_events(
    previous: DataFrame, events: DataFrame, ids: DataFrame, tolerance_ms: int
) -> DataFrame:
    """Previous history and this run's events under one token_key, each line once.

    Output columns: token_key, INPUT_FIELDS, in_run (boolean: the line is this run's).
    A renew / expire line names only the HMAC fingerprint: its token is the one whose create
    or describe response (this run or an earlier one) carried that fingerprint
    (``with_token_key``). A token-manager create / renew / expire line is dropped when a
    request-log line of the same token and operation lies within ``tolerance_ms``.
    """
    c = F.col
    both = history_events(previous).withColumn("in_run", F.lit(False))
    both = both.unionByName(events.withColumn("in_run", F.lit(True)))
    keyed = with_token_key(both, ids).select("token_key", *INPUT_FIELDS, "in_run")
    keyed = keyed.where(c("token_key").isNotNull())
    line = Window.partitionBy("token_key", "source_path", "line_number", "operation")
    once = keyed.withColumn("_n", F.row_number().over(line.orderBy(c("in_run").desc())))
    once = once.where(c("_n") == 1).drop("_n")
    logged = once.where(c("source") == te.SOURCE_REQUEST_LOG).select(
        c("token_key").alias("_k"), c("operation").alias("_o"), c("event_ts").alias("_t")
    )
    near = F.abs(F.unix_millis("event_ts") - F.unix_millis("_t")) <= tolerance_ms
    manager = (c("source") == te.SOURCE_TOKEN_MANAGER) & (c("operation") != te.OP_SWEEP)
    dup = manager & (c("token_key") == c("_k")) & (c("operation") == c("_o")) & near
    return once.join(logged, dup, "left_anti")


def token_attributes(
    previous: DataFrame, observations: DataFrame, keys: DataFrame, ids: DataFrame
) -> DataFrame:
    """Per token_key: hmac_fingerprint, owner, requester, renewers, issue_ms, max_ms,
    expiry_ms (described), hmac_verified (previous), first_seen_ts, last_seen_ts.

    Each value is the first non-null one of: this run's create line, the previous row, this
    run's describe lines (earliest first); expiry_ms is the latest describe's, else the
    previous row's. ``keys`` (token_key of the histories) without any other source still get
    a row.
    """
    c = F.col
    prev = with_token_key(previous.drop("token_key"), ids).select(
        "token_key", "hmac_fingerprint", "owner", "requester", "renewers",
        F.unix_millis("issue_ts").alias("issue_ms"), F.unix_millis("max_ts").alias("max_ms"),
        F.unix_millis("expiry_ts").alias("expiry_ms"), F.lit(1).alias("priority"),
        c("last_seen_ts").alias("event_ts"), F.lit(None).cast("string").alias("source_path"),
        F.lit(None).cast("long").alias("line_number"), "hmac_verified", "first_seen_ts",
    )  # fmt: skip
    seen = observations.withColumn("token_key", c("token_id")).select(
        *[c(n) for n in prev.columns[:-2]],
        F.lit(None).cast("boolean").alias("hmac_verified"),
        c("event_ts").alias("first_seen_ts"),
    )
    hmac_key = c("token_key").startswith("hmac:")
    fps = keys.select("token_key", F.when(hmac_key, F.substring("token_key", 6, 64)).alias("_fp"))
    order = [c("priority"), c("event_ts"), c("source_path"), c("line_number")]

    def first(name: str) -> Column:
        return F.min(F.when(c(name).isNotNull(), F.struct(*order, c(name).alias("v"))))["v"]

    described = F.when(
        c("priority") > 0,
        F.struct((c("priority") == 2).alias("a"), c("event_ts").alias("b"), c("expiry_ms")),
    )
    attrs = (
        prev.unionByName(seen)
        .groupBy("token_key")
        .agg(
            *[first(n).alias(n) for n in ("hmac_fingerprint", "owner", "requester", "renewers")],
            *[first(n).alias(n) for n in ("issue_ms", "max_ms")],
            F.max(F.when(c("expiry_ms").isNotNull(), described))["expiry_ms"].alias("expiry_ms"),
            F.max("hmac_verified").alias("hmac_verified"),
            F.min("first_seen_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
        )
    )
    joined = fps.join(attrs, "token_key", "full")
    return joined.withColumn("hmac_fingerprint", F.coalesce(c("hmac_fingerprint"), c("_fp"))).drop(
        "_fp"
    )


def _expected_error(acc: Column, e: Column, now: Column, tolerance_ms: int) -> Column:
    """The error code Kafka's check order gives a renew / expire (null when unknown):
    62 once removed; ZooKeeper checks owner (63) then expiry (66), KRaft expiry then owner.
    An expire-now of an expired token depends on the version (null)."""
    c = F.col
    actor, mode = e["actor"], c("metadata_mode")
    allowed = (actor == c("owner")) | F.array_contains(c("renewers"), actor)
    expiry, max_ms = acc["expiry_ms"], c("max_ms")
    near = (F.abs(expiry - now) <= tolerance_ms) | (F.abs(max_ms - now) <= tolerance_ms)
    past = F.when(F.coalesce(near, F.lit(False)), F.lit(None)).otherwise(
        (max_ms < now) | (expiry < now)
    )
    now_expire = (e["operation"] == te.OP_EXPIRE) & (e["requested_period_ms"] < 0)
    past = F.when(now_expire & past, F.lit(None)).otherwise(past)
    denied, unknown = allowed == F.lit(False), allowed.isNull()
    zk = F.when(denied, 63).when(unknown, None).when(past, 66).when(past.isNull(), None)
    kraft = F.when(past, 66).when(past.isNull(), None).when(denied, 63).when(unknown, None)
    zk, kraft = zk.otherwise(0), kraft.otherwise(0)
    by_mode = (
        F.when(mode == te.MODE_ZOOKEEPER, zk)
        .when(mode == te.MODE_KRAFT, kraft)
        .when(zk == kraft, zk)
    )
    checked = (e["source"] == te.SOURCE_REQUEST_LOG) & e["operation"].isin(
        te.OP_RENEW, te.OP_EXPIRE
    )
    return F.when(checked, F.when(acc["removed"], 62).otherwise(by_mode)).cast("int")


def _expected_expiry(e: Column, now: Column) -> Column:
    """The expiry the rule gives a successful create / renew / expire (epoch ms; null when
    the requested period is unknown). ``createToken``: max lifetime = requested if > 0
    (capped by delegation.token.max.lifetime.ms) else the config; expiry = min(max, issue +
    delegation.token.expiry.time.ms). ``renewToken``: min(max, now + period), ZooKeeper
    period = requested (default if < 0), KRaft = min(config, requested) if > 0 else the
    config; unknown mode: whichever is closer to the observed one. ``expireToken``: now if
    the period is < 0, else min(max, now + period)."""
    c = F.col
    req, obs, op = e["requested_period_ms"], e["observed_expiry_ms"], e["operation"]
    cfg_max, cfg_exp, max_ms = c("max_lifetime_ms"), c("expiry_time_ms"), c("max_ms")
    issue = F.coalesce(e["observed_issue_ms"], now)
    life = F.when(req > 0, F.least(req, cfg_max)).otherwise(cfg_max)
    create = F.least(issue + life, issue + cfg_exp)

    def capped(period: Column) -> Column:
        return F.when(period.isNotNull(), F.least(max_ms, now + period))

    zk = capped(F.when(req < 0, cfg_exp).otherwise(req))
    kraft = capped(F.when(req > 0, F.least(cfg_exp, req)).when(req.isNotNull(), cfg_exp))
    closer = F.when(F.abs(obs - zk) <= F.abs(obs - kraft), zk).otherwise(kraft)
    mode = c("metadata_mode")
    renew = F.when(mode == te.MODE_ZOOKEEPER, zk).when(mode == te.MODE_KRAFT, kraft)
    renew = renew.otherwise(F.coalesce(closer, zk))
    expire = F.when(req < 0, now).otherwise(capped(req))
    return (F.when(op == te.OP_CREATE, create).when(op == te.OP_RENEW, renew)
            .when(op == te.OP_EXPIRE, expire))  # fmt: skip


def _with_expected_expiry(e: Column) -> Column:
    """The entry with expected_expiry_ms set (null for a failed operation)."""
    succeeded = F.coalesce(e["error_code"], F.lit(0)) == 0
    expected = _expected_expiry(e, F.unix_millis(e["event_ts"]))
    return e.withField("expected_expiry_ms", F.when(succeeded, expected).cast("long"))


def _check(acc: Column, e: Column, expected: Column, error: Column, tol: int) -> Column:
    """CHECK_* of one entry (schemas.token_lifecycle)."""
    c = F.col
    op, obs, req, code = e["operation"], e["observed_expiry_ms"], e["requested_period_ms"], \
        e["error_code"]  # fmt: skip
    ok = F.coalesce(code, F.lit(0)) == 0
    now = F.unix_millis(e["event_ts"])
    issue = F.coalesce(e["observed_issue_ms"], now)
    life = F.when(req > 0, F.least(req, c("max_lifetime_ms"))).otherwise(c("max_lifetime_ms"))
    modelled = code.isin(0, 62, 63, 66)
    quirk = ((op == te.OP_EXPIRE) & (req < 0) & (obs == req)
             & F.coalesce(c("metadata_mode") != te.MODE_ZOOKEEPER, F.lit(True)))  # fmt: skip
    compared_expiry = ok & (obs >= 0) & expected.isNotNull()
    return (
        F.when(modelled & error.isNotNull() & (error != code), tl.CHECK_ERROR_MISMATCH)
        .when(ok & quirk, tl.CHECK_KRAFT_NEGATIVE_EXPIRY)
        .when(ok & (op == te.OP_CREATE) & (e["observed_max_ms"] != issue + life),
              tl.CHECK_MAX_MISMATCH)
        .when(ok & (op == te.OP_CREATE) & (obs != expected), tl.CHECK_EXPIRY_MISMATCH)
        .when(compared_expiry & (F.abs(obs - expected) > tol), tl.CHECK_EXPIRY_MISMATCH)
        .when(ok & (op == te.OP_SWEEP) & (acc["expiry_ms"] > now + tol), tl.CHECK_SWEPT_EARLY)
        .when(compared_expiry | (modelled & error.isNotNull()), tl.CHECK_OK)
        .when((op == te.OP_SWEEP) & acc["expiry_ms"].isNotNull(), tl.CHECK_OK)
        .otherwise(tl.CHECK_UNCHECKED)
    )  # fmt: skip


def _step(acc: Column, e: Column, tolerance_ms: int) -> Column:
    """One fold step: the entry with its replayed fields appended, the state advanced."""
    op, req, obs = e["operation"], e["requested_period_ms"], e["observed_expiry_ms"]
    now = F.unix_millis(e["event_ts"])
    ok = (F.coalesce(e["error_code"], F.lit(0)) == 0) & ~acc["removed"]
    expected = F.when(ok, e["expected_expiry_ms"])
    error = _expected_error(acc, e, now, tolerance_ms)
    changes = ok & op.isin(te.OP_CREATE, te.OP_RENEW, te.OP_EXPIRE)
    new_expiry = F.when(changes, F.coalesce(F.when(obs >= 0, obs), expected))
    removal = ok & ((op == te.OP_SWEEP) | ((op == te.OP_EXPIRE) & (req < 0)))
    entry = e.withField("new_expiry_ts", epoch_ms_ts(new_expiry))
    entry = entry.withField("expected_expiry_ms", expected.cast("long"))
    entry = entry.withField("expected_error_code", error)
    entry = entry.withField("check", _check(acc, e, expected, error, tolerance_ms))
    ended = F.when(op == te.OP_SWEEP, F.lit("sweep")).otherwise(F.lit(te.OP_EXPIRE))
    return F.struct(
        F.when(changes, new_expiry).otherwise(acc["expiry_ms"]).alias("expiry_ms"),
        (acc["removed"] | removal).alias("removed"),
        F.coalesce(acc["ended_by"], F.when(removal, ended)).alias("ended_by"),
        F.coalesce(acc["ended_ms"], F.when(removal, now)).alias("ended_ms"),
        F.when(ok & (op == te.OP_RENEW), F.lit(False))
        .when(ok & (op == te.OP_EXPIRE) & ~F.coalesce(req < 0, F.lit(False)), F.lit(True))
        .otherwise(acc["expire_requested"])
        .alias("expire_requested"),
        (acc["renew_count"] + F.when(ok & (op == te.OP_RENEW), 1).otherwise(0)).alias(
            "renew_count"
        ),
        F.concat(acc["entries"], F.array(entry)).alias("entries"),
    )


#: The fold's working entry: a history entry plus in_run (the line is this run's); all
#: nullable, so that any expression can be cast to it.
WORK_ENTRY = StructType(
    [StructField(f.name, f.dataType, True) for f in tl.TOKEN_HISTORY_ENTRY.fields]
    + [StructField("in_run", BooleanType(), True)]
)


def _state(as_of_ms: Column) -> Column:
    """STATE_* as of ``as_of_ms`` from the folded ``_acc`` and ``max_ms``."""
    acc, c = F.col("_acc"), F.col
    past = (acc["expiry_ms"] < as_of_ms) | (c("max_ms") < as_of_ms)
    return (
        F.when(acc["ended_by"] == "sweep", tl.STATE_SWEPT)
        .when(acc["ended_by"] == te.OP_EXPIRE, tl.STATE_EXPIRED_EARLY)
        .when(acc["expire_requested"] & (acc["expiry_ms"] < as_of_ms), tl.STATE_EXPIRED_EARLY)
        .when(past, tl.STATE_EXPIRED)
        .otherwise(tl.STATE_ACTIVE)
    )


def replay_lifecycle(
    previous: DataFrame,
    token_events: DataFrame,
    config: DataFrame,
    *,
    as_of: datetime | None = None,
    metadata_mode: str | None = None,
    tolerance_ms: int = 60_000,
) -> DataFrame:
    """Merge this run's token operations into the previous lifecycle rows and replay each
    token's whole history (KIP-48; see the module docstring for the Kafka classes).

    Args:
        previous: TOKEN_LIFECYCLE rows before this run (empty on the first run).
        token_events: this run's TOKEN_EVENTS rows.
        config: one row of ``token_config`` (max_lifetime_ms, expiry_time_ms, ...).
        as_of: the run's end (UTC); None = the latest event time of the history.
        metadata_mode: 'zookeeper' | 'kraft' to force the rules; None = inferred
            (``run_metadata_mode``, else the previous row's).
        tolerance_ms: how far the log time may be from Kafka's ``now`` (processing,
            forwarding, clocks) before an expiry disagrees or a duplicate line is distinct.

    Returns:
        TOKEN_LIFECYCLE columns plus ``_entries`` (array of WORK_ENTRY, the history with
        in_run) and the config columns; ``lifecycle_rows`` gives the table's contract.

    Raises:
        ValueError: ``metadata_mode`` is not None, 'zookeeper' or 'kraft'.
    """
    if metadata_mode not in (None, te.MODE_ZOOKEEPER, te.MODE_KRAFT):
        raise ValueError(f"metadata_mode {metadata_mode!r} is not 'zookeeper' or 'kraft'")
    observations = token_observations(token_events)
    ids = fingerprint_ids(previous, observations)
    keyed = keyed_events(previous, lifecycle_events(token_events, tolerance_ms), ids, tolerance_ms)
    grouped = _sorted_histories(keyed)
    prev_mode = _previous_modes(previous, ids)
    attrs = token_attributes(previous, observations, grouped.select("token_key"), ids)
    rows = _token_rows(
        attrs,
        grouped,
        prev_mode,
        config,
        run_metadata_mode(token_events, config),
        as_of=as_of,
        metadata_mode=metadata_mode,
    )
    return _finished(_folded(_with_issue_and_max(rows), tolerance_ms))


def _sorted_histories(keyed: DataFrame) -> DataFrame:
    """Each token's history as fold entries in log order.

    Input: ``keyed_events`` rows (token_key, INPUT_FIELDS, in_run).
    Output columns: token_key (string), _sorted (array of WORK_ENTRY: the token's entries
    sorted by event_ts (UTC), source_path, line_number; the replayed fields null), _first,
    _last (timestamp, UTC: the earliest and latest event_ts).
    """
    c = F.col
    working = F.struct(*[
        c(f.name) if f.name in (*INPUT_FIELDS, "in_run") else F.lit(None).alias(f.name)
        for f in WORK_ENTRY.fields
    ]).cast(WORK_ENTRY)  # fmt: skip
    sort_key = F.struct("event_ts", "source_path", "line_number", working.alias("e"))
    return keyed.groupBy("token_key").agg(
        F.transform(F.sort_array(F.collect_list(sort_key)), lambda x: x["e"]).alias("_sorted"),
        F.min("event_ts").alias("_first"),
        F.max("event_ts").alias("_last"),
    )


def _previous_modes(previous: DataFrame, ids: DataFrame) -> DataFrame:
    """The metadata mode each token's previous row was replayed in (its rules: ZooKeeper
    ``DelegationTokenManagerZk`` or KRaft ``DelegationTokenControlManager``).

    Input: TOKEN_LIFECYCLE rows; ``fingerprint_ids`` rows.
    Output columns: token_key (string, ``with_token_key``), _prev_mode (string: 'zookeeper'
    | 'kraft' | null).
    """
    return (
        with_token_key(previous.drop("token_key"), ids)
        .groupBy("token_key")
        .agg(F.max("metadata_mode").alias("_prev_mode"))
    )


def _token_rows(
    attrs: DataFrame,
    grouped: DataFrame,
    prev_mode: DataFrame,
    config: DataFrame,
    run_mode: DataFrame,
    *,
    as_of: datetime | None,
    metadata_mode: str | None,
) -> DataFrame:
    """One row per token: its attributes, its sorted history, the rules' configs and
    metadata mode, and the time its state is judged at.

    Input: ``token_attributes`` rows; :func:`_sorted_histories` rows; :func:`_previous_modes`
    rows; one row of ``token_config``; one row of ``run_metadata_mode`` (_run_mode).
    Output columns: the attributes (issue_ms, max_ms, expiry_ms: long, epoch ms; first_seen_ts,
    last_seen_ts: timestamp, UTC; ...), _sorted, _first, _last, _prev_mode, the config columns,
    _run_mode, _latest (timestamp, UTC: the latest event_ts of all histories), metadata_mode
    (string: ``metadata_mode`` if forced, else _run_mode, else _prev_mode; it selects the
    KIP-48 rules of ``DelegationTokenManagerZk`` or ``DelegationTokenControlManager``),
    _as_of (timestamp, UTC: ``as_of``, else _latest, else the token's last_seen_ts).
    """
    c = F.col
    latest = grouped.agg(F.max("_last").alias("_latest"))
    end = F.lit(as_of).cast("timestamp") if as_of is not None else c("_latest")
    return (
        attrs.join(grouped, "token_key", "left")
        .join(prev_mode, "token_key", "left")
        .crossJoin(config)
        .crossJoin(run_mode)
        .crossJoin(latest)
        .withColumn("metadata_mode",
                    F.coalesce(F.lit(metadata_mode), c("_run_mode"), c("_prev_mode")))
        .withColumn("_as_of", F.coalesce(end, c("last_seen_ts")))
    )  # fmt: skip


def _sorted_entries() -> Column:
    """The token's sorted history (array of WORK_ENTRY), empty when it has none (a token
    known only from create / describe responses). Input column: _sorted."""
    return F.coalesce(F.col("_sorted"), F.array().cast(ArrayType(WORK_ENTRY, False)))


def _with_issue_and_max(rows: DataFrame) -> DataFrame:
    """Set issue_ms and max_ms (long, epoch ms, UTC) from the token's first create.

    KIP-48 ``createToken`` (``DelegationTokenManagerZk``, ``DelegationTokenControlManager``):
    issue = the create's issue timestamp, else the known one, else the create line's time;
    max = the create's max timestamp, else the known one, else issue +
    ``delegation.token.max.lifetime.ms``.

    Input: :func:`_token_rows` rows (_sorted, issue_ms, max_ms, max_lifetime_ms).
    Output: the input columns plus _fc (WORK_ENTRY: the first create entry, null without
    one), issue_ms and max_ms replaced.
    """
    c = F.col
    creates = F.filter(_sorted_entries(), lambda x: x["operation"] == te.OP_CREATE)
    rows = rows.withColumn("_fc", F.try_element_at(creates, F.lit(1)))
    first_create = c("_fc")
    issue = F.coalesce(first_create["observed_issue_ms"], c("issue_ms"),
                       F.unix_millis(first_create["event_ts"]))  # fmt: skip
    return rows.withColumn("issue_ms", issue).withColumn(
        "max_ms",
        F.coalesce(
            first_create["observed_max_ms"], c("max_ms"), c("issue_ms") + c("max_lifetime_ms")
        ),
    )


def _folded(rows: DataFrame, tolerance_ms: int) -> DataFrame:
    """Replay each token's state transitions over its sorted history (a fold with Spark's
    ``aggregate``, no UDF): create / renew / expire / sweep as ``createToken``,
    ``renewToken``, ``expireToken``, ``expireTokens`` apply them (KIP-48;
    ``DelegationTokenManagerZk``, ``DelegationTokenControlManager``), see :func:`_step`.

    Input: :func:`_with_issue_and_max` rows.
    Output: the input columns, _sorted (array of WORK_ENTRY) with expected_expiry_ms (long,
    epoch ms) set, plus _acc (struct: expiry_ms (long, epoch ms), removed (boolean), ended_by
    (string: 'sweep' | 'expire'), ended_ms (long, epoch ms), expire_requested (boolean),
    renew_count (int), entries (array of WORK_ENTRY: the replayed history)).
    """
    c = F.col
    # The rule's expiry depends on the entry and the token only: computed before the fold.
    rows = rows.withColumn("_sorted", F.transform(_sorted_entries(), _with_expected_expiry))
    zero = F.struct(
        F.lit(None).cast("long").alias("expiry_ms"), F.lit(False).alias("removed"),
        F.lit(None).cast("string").alias("ended_by"), F.lit(None).cast("long").alias("ended_ms"),
        F.lit(False).alias("expire_requested"), F.lit(0).alias("renew_count"),
        F.array().cast(ArrayType(WORK_ENTRY, False)).alias("entries"),
    )  # fmt: skip
    return rows.withColumn(
        "_acc", F.aggregate(c("_sorted"), zero, lambda a, e: _step(a, e, tolerance_ms))
    )


def _finished(folded: DataFrame) -> DataFrame:
    c, acc = F.col, F.col("_acc")
    as_of_ms = F.unix_millis("_as_of")
    expiry_ms = F.coalesce(acc["expiry_ms"], c("expiry_ms"))
    folded = folded.withColumn("_state", _state(as_of_ms))
    state = c("_state")
    ended = F.coalesce(
        acc["ended_ms"],
        F.when(state.isin(tl.STATE_EXPIRED, tl.STATE_EXPIRED_EARLY), F.least(expiry_ms, "max_ms")),
    )
    mismatches = F.filter(acc["entries"], lambda x: x["check"].isin(*tl.MISMATCH_CHECKS))
    return folded.select(
        "token_key",
        F.when(~c("token_key").startswith("hmac:"), c("token_key")).alias("token_id"),
        "hmac_fingerprint", "owner", "requester", "renewers", "metadata_mode",
        epoch_ms_ts(c("issue_ms")).alias("issue_ts"), epoch_ms_ts(c("max_ms")).alias("max_ts"),
        epoch_ms_ts(expiry_ms).alias("expiry_ts"),
        (c("max_ms") - c("issue_ms")).alias("max_lifetime_ms_of_token"),
        acc["renew_count"].alias("renew_count"),
        acc["entries"].alias("_entries"),
        state.alias("state"), c("_as_of").alias("state_as_of_ts"),
        epoch_ms_ts(ended).alias("ended_ts"),
        F.least("_first", "first_seen_ts").alias("first_seen_ts"),
        F.greatest("_last", "last_seen_ts").alias("last_seen_ts"),
        F.size(mismatches).alias("replay_mismatch_count"),
        "hmac_verified",
        "max_lifetime_ms", "expiry_time_ms", "expiry_check_interval_ms", "tokens_enabled",
    )  # fmt: skip


def lifecycle_rows(replayed: DataFrame) -> DataFrame:
    """``replay_lifecycle``'s rows in the TOKEN_LIFECYCLE contract (history without in_run).
    Nullability is the writer's to enforce (a cast cannot make a field NOT NULL)."""
    entry = tl.TOKEN_HISTORY_ENTRY
    history = F.transform(
        F.col("_entries"),
        lambda x: F.struct(*[x[f.name].cast(f.dataType).alias(f.name) for f in entry.fields]),
    )
    columns = {f.name: F.col(f.name).cast(f.dataType) for f in tl.TOKEN_LIFECYCLE.fields} | {
        "history": history,
        "max_lifetime_ms": F.col("max_lifetime_ms_of_token"),
    }
    return replayed.select(*[columns[f.name].alias(f.name) for f in tl.TOKEN_LIFECYCLE.fields])
