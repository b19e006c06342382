"""KIP-368 gold outputs: kills, Kafka's re-authentication metrics, the readiness what-if and
the findings (the ``reauth.*`` rules are declared here: :data:`RULES`).

Metric names are ``Selector.SelectorMetrics`` attributes verbatim (kafka-log-formats.md
section 5; group ``socket-server-metrics``, summed over network processors):
``successful-authentication-no-reauth-total`` (recorded at a connection's first successful
authentication when ``!channel.connectedClientSupportsReauthentication()``; PLAINTEXT and SSL
channels count too, their authenticators never support it), ``reauthentication-latency-avg``
and ``-max`` (ms), and ``expired-connections-killed-count`` (``SocketServer.Processor``).
``reauthentication-latency-p99`` is this project's addition: Kafka has no percentile.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from schemas import auth_events as ae
from schemas.reauth_readiness import REAUTH_READINESS
from schemas.security_metrics import SECURITY_METRICS
from transforms.findings import FindingRule, evidence, finding_rule, seen, to_findings
from transforms.frames import local_frame
from transforms.gold.kip368_reauth.replay import plus_millis
from transforms.gold.metrics import WINDOWS, windowed_counts


def reauth_metrics(sessions: DataFrame, kill_lines: DataFrame, run_id: str) -> DataFrame:
    """``successful-authentication-no-reauth-total``, ``expired-connections-killed-count``,
    ``reauthentication-latency-avg`` / ``-max`` / ``-p99`` per 1h and 1d window, broker,
    listener and mechanism.

    Input: ``reauth_sessions`` rows (no-reauth: sessions 1 started by an authentication line
    whose client does not support re-authentication; latency: sessions ended by a
    re-authentication with a measured latency, at its end time) and :func:`kills` rows.
    Output: ``schemas.security_metrics.SECURITY_METRICS`` rows; no row for windows without
    events.
    """
    none = F.lit(None).cast("string")
    no_reauth = sessions.where(
        (F.col("session_seq") == 1)
        & (F.col("start_source") == "authentication_line")
        & (F.col("supports_reauth") == F.lit(False))
    ).select(
        F.lit("successful-authentication-no-reauth").alias("meter"),
        F.lit("total").alias("kind"),
        F.col("start_ts").alias("event_ts"),
        F.col("broker_id"),
        "listener",
        "mechanism",
        none.alias("principal"),
        none.alias("api_key_name"),
    )
    killed = kill_lines.select(
        F.lit("expired-connections-killed-count").alias("meter"),
        F.lit("count").alias("kind"),
        "event_ts",
        F.col("node_id").alias("broker_id"),
        "listener",
        none.alias("mechanism"),
        none.alias("principal"),
        none.alias("api_key_name"),
    )
    counts = windowed_counts(
        no_reauth.unionByName(killed).where(F.col("event_ts").isNotNull()), run_id
    )
    return counts.unionByName(latency_metrics(sessions, run_id))


def latency_metrics(sessions: DataFrame, run_id: str) -> DataFrame:
    """``reauthentication-latency-avg`` / ``-max`` (Kafka) and ``-p99`` (exact percentile) in
    ms per 1h and 1d window (by re-authentication end), broker, listener and mechanism.

    Input: ``reauth_sessions`` rows. Output: ``SECURITY_METRICS`` rows.
    """
    measured = sessions.where(F.col("latency_ms").isNotNull() & F.col("reauth_end_ts").isNotNull())
    parts = []
    for name, (unit, seconds) in WINDOWS.items():
        start = F.date_trunc(unit, F.col("reauth_end_ts"))
        grouped = measured.groupBy(
            start.alias("window_start_ts"), "broker_id", "listener", "mechanism"
        ).agg(
            F.avg("latency_ms").alias("avg"),
            F.max("latency_ms").cast("double").alias("max"),
            F.percentile(F.col("latency_ms").cast("double"), F.lit(0.99)).alias("p99"),
            F.count(F.lit(1)).alias("event_count"),
        )
        values = F.array(
            *[
                F.struct(
                    F.lit(f"reauthentication-latency-{stat}").alias("name"),
                    F.col(stat).alias("value"),
                )
                for stat in ("avg", "max", "p99")
            ]
        )
        parts.append(
            grouped.withColumn("m", F.explode(values)).select(
                F.col("m.name").alias("metric_name"),
                F.lit(name).alias("window"),
                "window_start_ts",
                (F.col("window_start_ts") + F.expr(f"INTERVAL {seconds} SECONDS")).alias(
                    "window_end_ts"
                ),
                "broker_id",
                "listener",
                "mechanism",
                F.lit(None).cast("string").alias("principal"),
                F.lit(None).cast("string").alias("api_key_name"),
                F.col("m.value").alias("value"),
                "event_count",
                F.lit(run_id).alias("run_id"),
                F.to_date("window_start_ts").alias("window_date"),
            )
        )
    result = parts[0].unionByName(parts[1])
    return result.select(*[F.col(f.name).cast(f.dataType) for f in SECURITY_METRICS.fields])


_CANDIDATES = StructType([StructField("candidate_ms", LongType(), True)])


def _examined(sessions: DataFrame, candidates_ms: tuple[int, ...]) -> DataFrame:
    """The sessions the what-if examines, once per candidate (``candidate_ms``): SASL sessions
    on a known connection not started by a re-authentication line. Columns: broker_id,
    connection_id, start_ts, supports_reauth, principal, software ('name/version', 'unknown'
    for a missing part), activity_date, candidate_ms."""
    population = sessions.where(
        F.col("security_protocol").like("SASL%")
        & F.col("connection_id").isNotNull()
        & (F.col("start_source") != "reauthentication_line")
    ).select(
        "broker_id",
        "connection_id",
        "start_ts",
        "supports_reauth",
        "principal",
        F.concat_ws(
            "/",
            F.coalesce("client_software_name", F.lit("unknown")),
            F.coalesce("client_software_version", F.lit("unknown")),
        ).alias("software"),
        "activity_date",
    )
    spark = sessions.sparkSession
    values = local_frame(spark, [(int(v),) for v in candidates_ms], _CANDIDATES)
    return population.crossJoin(F.broadcast(values))


#: The request times of a connection are grouped by hour (``kill_times``): microseconds.
_HOUR_MICROS = 3_600_000_000


def _hour(ts: Column) -> Column:
    """The hour ``ts`` falls in, as hours since the epoch (long; null for null). Any
    non-decreasing function of time would do: ``kill_times`` relies on nothing else."""
    return F.floor(F.unix_micros(ts) / F.lit(_HOUR_MICROS))


def request_hours(requests: DataFrame) -> DataFrame:
    """Each connection's request times, one row per hour with a request.

    Input: silver ``request_events`` (node_id string, connection_id string, event_ts timestamp
    UTC; rows without event_ts are left out). Output columns: ``_r_node`` (string),
    ``_r_conn`` (string), ``_r_hour`` (long, hours since the epoch), ``_r_first`` (timestamp:
    the hour's first request) and ``_r_times`` (array<timestamp>: every request time of
    that hour, in no order). One array holds at most an hour of one connection's requests.
    """
    reqs = requests.where(F.col("event_ts").isNotNull())
    return reqs.groupBy(
        F.col("node_id").alias("_r_node"),
        F.col("connection_id").alias("_r_conn"),
        _hour(F.col("event_ts")).alias("_r_hour"),
    ).agg(F.min("event_ts").alias("_r_first"), F.collect_list("event_ts").alias("_r_times"))


def kill_times(examined: DataFrame, requests: DataFrame) -> DataFrame:
    """Per examined session and candidate: kill_ts, its connection's first request strictly
    after ``start + candidate`` (null when none: an idle connection is never killed;
    ``SocketServer.Processor`` closes an expired channel at its next request, KIP-368).

    Input: ``examined`` rows (broker_id string, connection_id string, start_ts timestamp UTC,
    candidate_ms long, supports_reauth boolean, principal string, software string,
    activity_date date); silver ``request_events`` (node_id string, connection_id string,
    event_ts timestamp UTC). Output: those columns, one row per distinct examined row, and
    kill_ts (timestamp UTC).

    Every request row is reduced once, to its connection's hours (``request_hours``); a
    session then meets only its connection's hours from the deadline's on: in the deadline's
    hour the first time strictly after the deadline is searched among that hour's times, every later
    hour gives its first time. (A join of every request row to each session after its
    deadline, then a minimum, gave the same times from far more rows: issue 15.)
    """
    hours = request_hours(requests)
    deadline = plus_millis(F.col("start_ts"), F.col("candidate_ms"))
    deadline_hour = _hour(deadline)
    late = examined.join(
        hours,
        (F.col("broker_id") == F.col("_r_node"))
        & (F.col("connection_id") == F.col("_r_conn"))
        & (F.col("_r_hour") >= deadline_hour),
        "left",
    )
    after = F.array_min(F.filter(F.col("_r_times"), lambda t: t > deadline))
    first = F.when(F.col("_r_hour") == deadline_hour, after).otherwise(F.col("_r_first"))
    return late.groupBy(
        "broker_id", "connection_id", "start_ts", "candidate_ms", "supports_reauth",
        "principal", "software", "activity_date",
    ).agg(F.min(first).alias("kill_ts"))  # fmt: skip


def readiness(
    sessions: DataFrame, requests: DataFrame, candidates_ms: tuple[int, ...], run_id: str
) -> DataFrame:
    """What each candidate ``connections.max.reauth.ms`` would have killed (KIP-368 migration:
    "check that no client would be disconnected").

    A SASL session 1 (or one continued from the previous run) on a known connection would be
    killed when its client cannot re-authenticate and the connection sends a request after
    ``start + candidate``: the first such request is refused and the connection closed
    (``Processor`` ``Disconnecting expired channel``). Idle connections are never killed.
    Clients of unknown capability are counted apart (``sessions_at_risk_unknown_client``).

    Input: ``reauth_sessions`` rows; silver ``request_events`` (node_id, connection_id,
    event_ts). Output: ``schemas.reauth_readiness.REAUTH_READINESS`` rows, one per candidate
    and activity date with at least one examined session.
    """
    per_session = kill_times(_examined(sessions, candidates_ms), requests)
    would = F.col("kill_ts").isNotNull()
    killed = would & (F.col("supports_reauth") == F.lit(False))
    unknown = would & F.col("supports_reauth").isNull()
    grouped = per_session.groupBy("candidate_ms", "activity_date").agg(
        F.count(F.lit(1)).alias("sessions"),
        F.count(F.when(killed, 1)).alias("sessions_killed"),
        F.count(F.when(unknown, 1)).alias("sessions_at_risk_unknown_client"),
        F.array_sort(F.collect_set(F.when(killed, F.col("principal")))).alias("principals_killed"),
        F.array_sort(F.collect_set(F.when(killed, F.col("software")))).alias(
            "client_software_killed"
        ),
        F.min(F.when(killed, F.col("kill_ts"))).alias("first_kill_ts"),
    )
    result = grouped.withColumns(
        {
            "distinct_principals_killed": F.size("principals_killed").cast("long"),
            "run_id": F.lit(run_id),
        }
    )
    return result.select(*[F.col(f.name).cast(f.dataType) for f in REAUTH_READINESS.fields])


# --- finding rules (``transforms.findings``; docs/rules-reauth.md). Their sentences were
# concatenations: a null value leaves the sentence null and the explanation is the rule id. ---

KIP = "KIP-368"

#: Sessions whose client cannot re-authenticate on a SASL listener where sessions expire
#: (lifetime > 0): each is killed at its first request after expiry and reconnects
#: (``SocketServer.Processor``: ``Disconnecting expired channel``). Per principal, listener
#: and client software. Candidates: :func:`_no_reauth_sessions`.
NO_REAUTH_CLIENT_ON_EXPIRING_LISTENER = finding_rule(
    "reauth.no_reauth_client_on_expiring_listener", KIP, "medium", "principal",
    "client cannot re-authenticate on a listener whose sessions expire (%s): the broker kills "
    "its connection at the first request after expiry",
    "discriminator", if_null=None,
)  # fmt: skip
#: ``Cannot change principals during re-authentication`` (``SaslServerAuthenticator.ReauthInfo
#: .ensurePrincipalUnchanged``): a connection tried to become another principal. Per old and
#: new principal.
PRINCIPAL_CHANGE_ATTEMPT = finding_rule(
    "reauth.principal_change_attempt", KIP, "high", "principal",
    "a connection authenticated as %s tried to re-authenticate as %s",
    "subject", "discriminator", if_null="another principal",
)  # fmt: skip
#: ``... not supported for re-authentication of mechanism`` (``SaslServerAuthenticator
#: .ReauthInfo.saslMechanismUnchanged``): the mechanism cannot change either. Per client
#: address and mechanism.
MECHANISM_CHANGE_ATTEMPT = finding_rule(
    "reauth.mechanism_change_attempt", KIP, "medium", "client_address",
    "a client tried to re-authenticate with another SASL mechanism",
)  # fmt: skip
#: At least ``failed_reauth_threshold`` ``Failed re-authentication with`` lines (``Selector``,
#: INFO) from one client address on one broker in a UTC day.
REPEATED_FAILED_REAUTHENTICATION = finding_rule(
    "reauth.repeated_failed_reauthentication", KIP, "medium", "client_address",
    "%s failed re-authentications from this address on one broker in a day",
    "count", if_null=None,
)  # fmt: skip
#: Every KIP-368 rule, in the order :func:`reauth_findings` returns their findings.
RULES: tuple[FindingRule, ...] = (
    NO_REAUTH_CLIENT_ON_EXPIRING_LISTENER,
    PRINCIPAL_CHANGE_ATTEMPT,
    MECHANISM_CHANGE_ATTEMPT,
    REPEATED_FAILED_REAUTHENTICATION,
)


def _no_reauth_sessions(sessions: DataFrame) -> DataFrame:
    """Candidates of :data:`NO_REAUTH_CLIENT_ON_EXPIRING_LISTENER`: subject the principal,
    discriminator 'listener=<name> software=<name>/<version>'; evidence merged from the
    sessions' own. Sessions continued from the previous run were reported by the run they
    started in (their start lies outside this run's date partitions): left out."""
    expiring = sessions.where(
        (F.col("start_source") != "previous_run")
        & (F.col("supports_reauth") == F.lit(False))
        & F.col("security_protocol").like("SASL%")
        & (F.col("lifetime_ms") > 0)
    )
    software = F.concat(
        F.lit("software="),
        F.coalesce("client_software_name", F.lit("unknown")),
        F.lit("/"),
        F.coalesce("client_software_version", F.lit("unknown")),
    )
    listener = F.concat(F.lit("listener="), F.coalesce("listener", F.lit("?")))
    return expiring.groupBy(
        F.col("principal").alias("subject"),
        F.concat_ws(" ", listener, software).alias("discriminator"),
    ).agg(
        F.min("broker_id").alias("node_id"),
        F.min("start_ts").alias("first_seen_ts"),
        F.max("start_ts").alias("last_seen_ts"),
        F.count(F.lit(1)).alias("count"),
        F.slice(F.array_sort(F.flatten(F.collect_list("evidence"))), 1, 20).alias("evidence"),
    )


def _changes(failed: DataFrame, reason: str, subject: str, discriminator: str) -> DataFrame:
    """Candidates of a change attempt: the failed re-authentications with
    ``failure_reason_code`` ``reason``, per ``subject`` and ``discriminator`` column."""
    return (
        failed.where(F.col("failure_reason_code") == reason)
        .groupBy(F.col(subject).alias("subject"), F.col(discriminator).alias("discriminator"))
        .agg(*seen())
    )


def _repeated_failures(failed: DataFrame, threshold: int) -> DataFrame:
    """Candidates of :data:`REPEATED_FAILED_REAUTHENTICATION`: per client address (subject),
    broker and UTC day (discriminator 'YYYY-MM-DD'), when at least ``threshold``."""
    return (
        failed.groupBy(
            F.col("peer_ip").alias("subject"),
            "node_id",
            F.to_date("event_ts").cast("string").alias("discriminator"),
        )
        .agg(
            F.min("event_ts").alias("first_seen_ts"),
            F.max("event_ts").alias("last_seen_ts"),
            F.count(F.lit(1)).alias("count"),
            evidence(),
        )
        .where(F.col("count") >= threshold)
    )


def reauth_findings(
    sessions: DataFrame, shakes: DataFrame, failure_threshold: int, run_id: str
) -> list[DataFrame]:
    """The KIP-368 findings: one ``schemas.findings.FINDINGS`` frame per rule of
    :data:`RULES`, in that order.

    Args:
        sessions: ``reauth_sessions`` rows.
        shakes: ``transforms.gold.kip368_reauth.replay.handshakes`` rows (the
            ``Failed re-authentication`` ones are read).
        failure_threshold: failed re-authentications per client address, broker and day that
            make a :data:`REPEATED_FAILED_REAUTHENTICATION` finding.
        run_id: the run.

    Nothing raises.
    """
    failed = shakes.where(F.col("event_type") == ae.EVENT_REAUTHENTICATION_FAILED)
    principal = _changes(failed, "PRINCIPAL_CHANGE_DURING_REAUTH", "reauth_old_principal",
                         "reauth_new_principal")  # fmt: skip
    plan = (
        (NO_REAUTH_CLIENT_ON_EXPIRING_LISTENER, _no_reauth_sessions(sessions)),
        (PRINCIPAL_CHANGE_ATTEMPT, principal),
        (
            MECHANISM_CHANGE_ATTEMPT,
            _changes(failed, "MECHANISM_CHANGE_DURING_REAUTH", "peer_ip", "mechanism"),
        ),
        (REPEATED_FAILED_REAUTHENTICATION, _repeated_failures(failed, failure_threshold)),
    )
    return [to_findings(candidates, rule, run_id) for rule, candidates in plan]
