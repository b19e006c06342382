"""Which family a log record belongs to, from its logger and message.

A family's claim means "this record is one of ours": its parser must then turn it into a silver
row or quarantine it with a reason. Records no family claims are out-of-scope noise and are
counted as such (kafka-log-formats.md section 1 gives the loggers).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from schemas.raw_lines import (
    FAMILY_AUTH,
    FAMILY_AUTHZ,
    FAMILY_CONNECT_REST,
    FAMILY_CONNECT_WORKER,
    FAMILY_REQUEST,
    FAMILY_TOKEN,
)
from transforms.auth import is_auth_record
from transforms.authz import is_authz_record

_TOKEN_LOGGERS = (
    "kafka.server.DelegationTokenManager",
    "kafka.server.DelegationTokenManagerZk",
    "org.apache.kafka.controller.DelegationTokenControlManager",
)
_CONNECT_WORKER_LOGGERS = (
    "org.apache.kafka.connect.runtime.distributed.DistributedHerder",
    "org.apache.kafka.connect.runtime.rest.RestClient",
)


def is_request_record(logger: Column, message: Column) -> Column:
    """``kafka.request.logger`` / ``kafka.network.RequestChannel$`` ``Completed request:`` lines
    (RequestChannel.updateRequestMetrics, all versions)."""
    return logger.isin(
        "kafka.request.logger", "kafka.network.RequestChannel$"
    ) & message.startswith("Completed request:")


def is_token_record(logger: Column, message: Column) -> Column:
    """Delegation-token manager lines (ZK ``DelegationTokenManager[Zk]``, KRaft
    ``DelegationTokenControlManager``; kafka-log-formats.md section 6.4)."""
    return logger.isin(*_TOKEN_LOGGERS) & message.rlike(r"(?i)token")


def is_connect_rest_record(logger: Column, message: Column) -> Column:
    """Jetty access-log lines of the Connect REST server (``RestServer``, section 8.5)."""
    return (logger == "org.apache.kafka.connect.runtime.rest.RestServer") & message.rlike(
        r"\] \"[A-Z]+ \S+ [^\"]*\" \d{3} "
    )


def is_connect_worker_record(logger: Column, message: Column) -> Column:
    """Herder / RestClient lines about request forwarding, task reconfiguration, session keys
    and request verification (KIP-507, section 8.4)."""
    return logger.isin(*_CONNECT_WORKER_LOGGERS) & message.rlike(
        r"(?i)forwarding REST request|reconfigur|session key|Internal request|signature"
    )


def family_of(logger: Column, message: Column) -> Column:
    """The family of a record, or null when no family claims it.

    Args:
        logger: logger name without the ``:NNN`` line suffix.
        message: the record's message text.

    Returns:
        string Column: one of ``schemas.raw_lines.FAMILIES`` or null. Null logger or message
        gives null (out of scope).
    """
    return (
        F.when(logger.isNull() | message.isNull(), F.lit(None).cast("string"))
        .when(is_authz_record(logger, message), F.lit(FAMILY_AUTHZ))
        .when(is_auth_record(logger, message), F.lit(FAMILY_AUTH))
        .when(is_request_record(logger, message), F.lit(FAMILY_REQUEST))
        .when(is_token_record(logger, message), F.lit(FAMILY_TOKEN))
        .when(is_connect_rest_record(logger, message), F.lit(FAMILY_CONNECT_REST))
        .when(is_connect_worker_record(logger, message), F.lit(FAMILY_CONNECT_WORKER))
    )
