"""Delegation-token operations (KIP-48) into silver.token_events, from two sources.

* Token-manager lines (docs/kafka-log-formats.md section 6.4), ``parse_token_manager``:
  ZooKeeper mode, ``kafka.server.DelegationTokenManagerZk`` (3.6+) /
  ``kafka.server.DelegationTokenManager`` (<3.6), prefix ``[Token Manager on Node N]: ``
  (``on Broker N`` before 3.6): ``Created a delegation token: T for owner: O``, ``Delegation
  token renewed for token: T for owner: O``, ``Token expired for token: ...`` (expire with
  period < 0), ``Updated expiry time for token: ...``, ``Delegation token expired for token:
  ...`` (sweeper), ``Loading the token cache. Total token count: N``, ``Processing Token
  Notification for tokenId: T``, ERROR ``Exception while getting token for hmac`` and ``Error
  while getting Token for tokenId: T``. KRaft (3.6+, KIP-900),
  ``org.apache.kafka.controller.DelegationTokenControlManager`` with ``[QuorumController id=N]
  ``: the sweeper line, ``Replayed DelegationTokenRecord for T.`` and ``Replayed
  RemoveDelegationTokenRecord for T.``. The broker's ``DelegationTokenPublisher`` (prefix
  ``[DelegationTokenPublisher broker id=N] ``) logs nothing itself up to 4.0; its records are
  claimed so that any future line is quarantined, not lost.
* Parsed request_events rows of APIs 38-41, ``token_events_from_requests``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import token_events as schema
from transforms.kafka_apis import (
    CREATE_DELEGATION_TOKEN,
    DESCRIBE_DELEGATION_TOKEN,
    EXPIRE_DELEGATION_TOKEN,
    RENEW_DELEGATION_TOKEN,
    TOKEN_API_KEYS,
)
from transforms.quarantine import Check, conformed, first_failure
from transforms.silver.request_log.tokens import principal_string

_ZK_LOGGER_RE = r"^kafka\.server\.DelegationTokenManager(?:Zk)?(?::\d+)?$"
_KRAFT_LOGGER_RE = (
    r"^(?:org\.apache\.kafka\.controller\.DelegationTokenControlManager"
    r"|kafka\.server\.metadata\.DelegationTokenPublisher)(?::\d+)?$"
)
#: LogContext / logIdent prefixes; group 1 is the text after them.
PREFIX_RE = (
    r"(?s)^(?:\[Token Manager on (?:Node|Broker) -?\d+\]: |\[QuorumController id=\d+\] "
    r"|\[DelegationTokenPublisher \S+ id=\d+\] )?(.*)$"
)
_OWNER = r" for owner: (.+)$"
_TOKEN_OWNER = r" for token: (\S+)" + _OWNER
#: (operation, regex on the text after the prefix, group names).
FORMATS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (schema.OP_CREATE, r"^Created a delegation token: (\S+)" + _OWNER, ("token_id", "owner")),
    (schema.OP_RENEW, r"^Delegation token renewed" + _TOKEN_OWNER, ("token_id", "owner")),
    (schema.OP_EXPIRE, r"^Token expired" + _TOKEN_OWNER, ("token_id", "owner")),
    (schema.OP_UPDATE_EXPIRY, r"^Updated expiry time" + _TOKEN_OWNER, ("token_id", "owner")),
    (schema.OP_SWEEP, r"^Delegation token expired" + _TOKEN_OWNER, ("token_id", "owner")),
    (schema.OP_CACHE_LOAD, r"^Loading the token cache\. Total token count: (\d+)$", ("_count",)),
    (schema.OP_NOTIFICATION, r"^Processing Token Notification for tokenId: (\S+)$", ("token_id",)),
    (schema.OP_ERROR, r"^Exception while getting token for hmac$", ()),
    (schema.OP_ERROR, r"^Error while getting Token for tokenId: (\S+)$", ("token_id",)),
    (schema.OP_REPLAY_RECORD, r"^Replayed DelegationTokenRecord for (\S+)\.$", ("token_id",)),
    (schema.OP_REPLAY_REMOVE, r"^Replayed RemoveDelegationTokenRecord for (\S+)\.$", ("token_id",)),
)  # fmt: skip
_FIELDS = ("token_id", "owner", "_count")
#: How the known lines start: a line that starts so but does not match was cut short.
_HEAD_RE = (
    r"^(?:Created a|Delegation tok|Token exp|Updated exp|Loading the|Processing Tok"
    r"|Exception while|Error while|Replayed)"
)
_CUT_PREFIX_RE = r"^\[(?:Token Manager|QuorumController|DelegationTokenPublisher)[^\]]*$"


def is_token_record(logger: Column, message: Column) -> Column:
    """Claim predicate of the 'token' family: every record of the token-manager loggers.

    ``kafka.server.DelegationTokenManager``, ``kafka.server.DelegationTokenManagerZk``,
    ``org.apache.kafka.controller.DelegationTokenControlManager`` and
    ``kafka.server.metadata.DelegationTokenPublisher`` (``:NNN`` suffix allowed). Everything
    they log is about tokens, so the message is only required to be non-null: a cut or
    unknown line is claimed and quarantined. Nulls give false.
    """
    loggers = logger.rlike(_ZK_LOGGER_RE) | logger.rlike(_KRAFT_LOGGER_RE)
    return F.coalesce(loggers & message.isNotNull(), F.lit(False))


def _fields(text: Column) -> Column:
    """operation plus the fields of whichever line format matched, as one struct."""
    result: Column | None = None
    for operation, regex, names in FORMATS:
        groups = {
            n: F.nullif(F.regexp_extract(text, regex, i), F.lit("")) for i, n in enumerate(names, 1)
        }
        values = [groups.get(f, F.lit(None).cast("string")).alias(f) for f in _FIELDS]
        value = F.struct(F.lit(operation).alias("operation"), *values)
        matched = text.rlike(regex)
        result = F.when(matched, value) if result is None else result.when(matched, value)
    assert result is not None
    return result


def _manager_checks() -> list[Check]:
    c = F.col
    unknown = c("operation").isNull()
    return [
        (F.trim(F.coalesce(c("message"), F.lit(""))) == "", "missing_field_message", "blank"),
        (unknown & c("message").rlike(_CUT_PREFIX_RE), "token_truncated_message", "cut in prefix"),
        (
            unknown & c("_text").rlike(_HEAD_RE),
            "token_truncated_message",
            "starts like a token line",
        ),
        (unknown, "token_unrecognized_format", "no token-manager line format matches"),
    ]


def parse_token_manager(bronze: DataFrame) -> DataFrame:
    """Parse token-manager bronze records (family 'token'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses logger, message (string), log_ts (timestamp UTC),
        log_date (date).

    Output columns:
        every input column, then the TOKEN_EVENTS columns not in bronze (event_ts, source
        'token_manager', operation, metadata_mode 'zookeeper' | 'kraft', owner, token_id,
        token_count int, the request-only columns null, event_date), then reason_code
        (string, null = parsed) and reason_detail (string).

    Null behaviour: a null or blank message gets 'missing_field_message'.
    """
    c = F.col
    text = F.regexp_extract(c("message"), PREFIX_RE, 1)
    fields = bronze.withColumn("_text", text).withColumn("_f", _fields(c("_text")))
    mode = F.when(c("logger").rlike(_KRAFT_LOGGER_RE), F.lit(schema.MODE_KRAFT)).otherwise(
        F.lit(schema.MODE_ZOOKEEPER)
    )
    known = {
        "event_ts": c("log_ts"),
        "event_date": c("log_date"),
        "source": F.lit(schema.SOURCE_TOKEN_MANAGER),
        "operation": c("_f.operation"),
        "metadata_mode": mode,
        "owner": c("_f.owner"),
        "token_id": c("_f.token_id"),
        "token_count": c("_f._count").try_cast("int"),
    }
    silver = [f for f in schema.TOKEN_EVENTS.fields if f.name not in bronze.columns]
    columns = {f.name: known.get(f.name, F.lit(None).cast(f.dataType)) for f in silver}
    parsed = fields.withColumns(columns).withColumn("_failure", first_failure(_manager_checks()))
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return parsed.select(*bronze.columns, *[f.name for f in silver], *reasons)


def _request_token_columns() -> dict[str, Column]:
    """TOKEN_EVENTS columns of a request_events row with ``_d`` (one described token)."""
    c, d = F.col, F.col("_d")
    api = c("api_key")
    create, describe = api == CREATE_DELEGATION_TOKEN, api == DESCRIBE_DELEGATION_TOKEN
    requested_owner = principal_string(
        c("token_owner_principal_type"), c("token_owner_principal_name")
    )
    operation = (
        F.when(create, F.lit(schema.OP_CREATE))
        .when(api == RENEW_DELEGATION_TOKEN, F.lit(schema.OP_RENEW))
        .when(api == EXPIRE_DELEGATION_TOKEN, F.lit(schema.OP_EXPIRE))
        .otherwise(F.lit(schema.OP_DESCRIBE))
    )

    def either(request: str, described: str) -> Column:
        return F.when(describe, d[described]).otherwise(c(request))

    def millis(request: str, described: str) -> Column:
        return F.when(describe, F.unix_millis(d[described])).otherwise(c(request))

    return {
        "event_ts": c("event_ts"),
        "event_date": c("event_date"),
        "source": F.lit(schema.SOURCE_REQUEST_LOG),
        "operation": operation,
        "requester": c("principal"),
        # CreateDelegationTokenRequest: a null owner defaults to the requester.
        "owner": F.when(describe, d["owner"]).when(
            create, F.coalesce(c("token_owner"), requested_owner, c("principal"))
        ),
        "renewers": either("token_renewers", "renewers"),
        "token_id": either("token_id", "token_id"),
        "hmac_fingerprint": either("token_hmac_fingerprint", "hmac_fingerprint"),
        "issue_timestamp_ms": millis("token_issue_timestamp_ms", "issue_ts"),
        "issue_ts": either("token_issue_ts", "issue_ts"),
        "expiry_timestamp_ms": millis("token_expiry_timestamp_ms", "expiry_ts"),
        "expiry_ts": either("token_expiry_ts", "expiry_ts"),
        "max_timestamp_ms": millis("token_max_timestamp_ms", "max_ts"),
        "max_ts": either("token_max_ts", "max_ts"),
        "max_lifetime_ms": c("token_max_lifetime_ms"),
        "renew_period_ms": c("token_renew_period_ms"),
        "expiry_time_period_ms": c("token_expiry_time_period_ms"),
        "describe_owners": c("token_describe_owners"),
    }


def token_events_from_requests(request_events: DataFrame) -> DataFrame:
    """Token operations of parsed request_events rows: one row per Create / Renew / Expire
    request, and per described token of a Describe (one row when it described none).

    Input columns:
        REQUEST_EVENTS (the table's rows, i.e. parsed); uses the lineage columns, api_key,
        principal, client_id, remote_ip, correlation_id, is_forwarded, error_code[_name] and
        the token_* columns.

    Output columns:
        exactly TOKEN_EVENTS, source 'request_log', metadata_mode and token_count null.

    Null behaviour: rows of other APIs are dropped (they are not token operations); token
    columns the request does not carry stay null (renew/expire name no owner or token id:
    the request log identifies the token only by its HMAC fingerprint). Describe timestamps
    in ms are derived from the UTC timestamps (null when Kafka logged a negative value).
    """
    c = F.col
    rows = request_events.where(c("api_key").isin(*TOKEN_API_KEYS)).withColumn(
        "_d", F.explode_outer(c("token_described"))
    )
    columns = _request_token_columns()
    copied = (
        "error_code",
        "error_code_name",
        "is_forwarded",
        "client_id",
        "remote_ip",
        "correlation_id",
    )
    columns |= {
        name: c(name)
        for name in (*copied, "run_id", "source_path", "line_number", "node_id", "level")
    }
    return rows.select(
        *[conformed(columns.get(f.name, F.lit(None)), f) for f in schema.TOKEN_EVENTS.fields]
    )
