"""Silver: every family's parser, the table it feeds, and how their outputs are combined.

A parser takes the bronze records of its family and returns each of them exactly once with the
silver columns and a ``reason_code`` (null = parsed); ``transforms.quarantine`` splits that into
the table's rows and quarantine rows. One family may feed several tables (Confluent audit
events), and one table may be fed by several families (``connect_requests``). Derived tables
are built from parsed silver rows (``token_events`` from the delegation-token requests of
``request_events``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from schemas import (
    auth_events,
    authz_decisions,
    connect_requests,
    raw_lines,
    request_events,
    token_events,
)
from schemas.raw_lines import LAYOUT_UNRECOGNIZED
from transforms.frames import local_frame, union_by_name
from transforms.quarantine import parsed_rows, quarantine_rows, table_and_quarantine_schema
from transforms.silver.auth.parse import parse_auth_events
from transforms.silver.auth.principals import with_linked_principals
from transforms.silver.authz import parse_authz_decisions
from transforms.silver.confluent_audit.parse import (
    parse_confluent_authentication,
    parse_confluent_authorization,
)
from transforms.silver.connect.claims import parse_connect_rest, parse_connect_worker
from transforms.silver.request_log.parse import parse_request_events
from transforms.silver.tokens import parse_token_manager, token_events_from_requests


@dataclass(frozen=True)
class Parser:
    """One family's parser and the silver table it feeds."""

    family: str
    table: str
    schema: StructType
    parse: Callable[[DataFrame], DataFrame]


PARSERS: tuple[Parser, ...] = (
    Parser(raw_lines.FAMILY_AUTHZ, authz_decisions.TABLE_NAME, authz_decisions.AUTHZ_DECISIONS,
           parse_authz_decisions),
    Parser(raw_lines.FAMILY_AUTH, auth_events.TABLE_NAME, auth_events.AUTH_EVENTS,
           parse_auth_events),
    Parser(raw_lines.FAMILY_REQUEST, request_events.TABLE_NAME, request_events.REQUEST_EVENTS,
           parse_request_events),
    Parser(raw_lines.FAMILY_TOKEN, token_events.TABLE_NAME, token_events.TOKEN_EVENTS,
           parse_token_manager),
    Parser(raw_lines.FAMILY_CONNECT_REST, connect_requests.TABLE_NAME,
           connect_requests.CONNECT_REQUESTS, parse_connect_rest),
    Parser(raw_lines.FAMILY_CONNECT_WORKER, connect_requests.TABLE_NAME,
           connect_requests.CONNECT_REQUESTS, parse_connect_worker),
    Parser(raw_lines.FAMILY_CONFLUENT_AUDIT, authz_decisions.TABLE_NAME,
           authz_decisions.AUTHZ_DECISIONS, parse_confluent_authorization),
    Parser(raw_lines.FAMILY_CONFLUENT_AUDIT, auth_events.TABLE_NAME, auth_events.AUTH_EVENTS,
           parse_confluent_authentication),
)  # fmt: skip

#: Every silver table, its schema and partition columns, in write order.
SILVER_TABLES: Mapping[str, tuple[StructType, tuple[str, ...]]] = {
    authz_decisions.TABLE_NAME: (
        authz_decisions.AUTHZ_DECISIONS,
        authz_decisions.PARTITION_COLUMNS,
    ),
    auth_events.TABLE_NAME: (auth_events.AUTH_EVENTS, auth_events.PARTITION_COLUMNS),
    request_events.TABLE_NAME: (request_events.REQUEST_EVENTS, request_events.PARTITION_COLUMNS),
    token_events.TABLE_NAME: (token_events.TOKEN_EVENTS, token_events.PARTITION_COLUMNS),
    connect_requests.TABLE_NAME: (
        connect_requests.CONNECT_REQUESTS,
        connect_requests.PARTITION_COLUMNS,
    ),
}

#: Families some parser handles; bronze records of any other family count as ``pending``.
PARSED_FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(p.family for p in PARSERS))


def parse_families(
    bronze: DataFrame, families: Collection[str | None] | None = None
) -> list[tuple[Parser, DataFrame]]:
    """Run every parser on its family's bronze records.

    Args:
        bronze: ``schemas.raw_lines.RAW_LINES`` rows.
        families: the families ``bronze`` holds, when known: the parsers of every other
            family are left out (they would parse no record; planning one is seconds of a
            small run, issue 15). None: every parser.

    Returns:
        (parser, its output: bronze columns + silver columns + reason_code) pairs, in
        ``PARSERS`` order. The caller may cache each output: it feeds both a silver table and
        the quarantine.
    """
    return [(p, parsed(bronze, p)) for p in PARSERS if families is None or p.family in families]


def parsed(bronze: DataFrame, parser: Parser) -> DataFrame:
    """``parser``'s output on its family's records of ``bronze`` (``parse_families``' pairs
    are these): bronze columns + silver columns + reason_code, reason_detail; records of a
    bad time (``timed``) or of an unknown layout (``in_known_layout``) rejected."""
    records = bronze.where(F.col("family") == parser.family)
    # One projection for both rules, not one each: the parsers run their operators one by one
    # (``jobs.pipeline.PARSE_CONF``), and each projection copies every column of every row
    # (issue 15, forty-eighth part).
    return _with_reasons(parser.parse(records), _layout_reasons(*_timed_reasons(*_reasons())))


def empty_output(spark: SparkSession, parser: Parser) -> DataFrame:
    """What ``parser`` gives for no record, narrowed as ``table_and_quarantine_columns``
    narrows an output: no row, the columns of ``table_and_quarantine_schema(parser.schema)``.
    Stands for the output of a parser that ``parse_families`` left out."""
    return local_frame(spark, [], table_and_quarantine_schema(parser.schema))


#: Quarantine reason of a record whose header time does not exist (``[2026-13-45 25:61:61,000]``,
#: ``[0000-00-00 00:00:00,000]``).
BAD_TIMESTAMP = "bad_timestamp"
#: A header that starts with a date and a time (after the container / syslog prefix).
_HEADER_TIME = r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"


def timed(output: DataFrame) -> DataFrame:
    """A parser's output with every accepted record whose header has a time that does not
    parse to a real instant (``log_ts`` null) rejected as :data:`BAD_TIMESTAMP`: no such record
    reaches silver with an unknown time, and none can fail a table's NOT NULL time column
    (``reauth_sessions.start_ts``). Records of a layout that writes no time at all (log4j's
    ``%p %m (%c)``, a real sample) and JSON records are parsed as before.

    Input / output columns: a parser's output (bronze columns, its silver columns,
    reason_code, reason_detail); only reason_code and reason_detail change.
    """
    return _with_reasons(output, _timed_reasons(*_reasons()))


def _timed_reasons(code: Column, detail: Column) -> tuple[Column, Column]:
    """``timed``'s reason_code and reason_detail, from the parser's (``code``, ``detail``)."""
    header = F.substring(
        F.col("raw"), F.length(F.coalesce(F.col("line_prefix"), F.lit(""))) + 1, 200
    )
    bad = (
        code.isNull()
        & F.col("log_ts").isNull()
        & (F.col("layout") != "json")
        & header.rlike(_HEADER_TIME)
    )
    found = F.concat(
        F.lit("the record's time does not parse to a real instant: "),
        F.regexp_extract(header, r"^\s*\[?([^\]]{0,40})", 1),
    )
    return F.when(bad, F.lit(BAD_TIMESTAMP)).otherwise(code), F.when(bad, found).otherwise(detail)


#: Quarantine reason of a record a family's signature claims in a layout no parser knows.
UNRECOGNIZED_LAYOUT = "unrecognized_layout"


def in_known_layout(output: DataFrame) -> DataFrame:
    """A parser's output with every record of layout ``unrecognized`` rejected as
    :data:`UNRECOGNIZED_LAYOUT`, whatever the parser made of it: its fields cannot be told
    from the unknown prefix around them. The quarantine keeps the line (secrets fingerprinted,
    as everywhere), and the run summary says how to declare the layout (docs/layouts.md).

    Input / output columns: a parser's output (bronze columns, its silver columns,
    reason_code, reason_detail); only reason_code and reason_detail change.
    """
    return _with_reasons(output, _layout_reasons(*_reasons()))


def _layout_reasons(code: Column, detail: Column) -> tuple[Column, Column]:
    """``in_known_layout``'s reason_code and reason_detail, from (``code``, ``detail``)."""
    unknown = F.coalesce(F.col("layout") == LAYOUT_UNRECOGNIZED, F.lit(False))
    found = F.concat(
        F.lit("a record of family "),
        F.col("family"),
        F.lit(" in a log layout no parser knows; declare the file's log4j "
              "ConversionPattern (layout_pattern in [[sources]], or the node's log4j config "
              "beside its logs)"),
    )  # fmt: skip
    return (
        F.when(unknown, F.lit(UNRECOGNIZED_LAYOUT)).otherwise(code),
        F.when(unknown, found).otherwise(detail),
    )


def _reasons() -> tuple[Column, Column]:
    """A parser's own reason_code and reason_detail columns."""
    return F.col("reason_code"), F.col("reason_detail")


def _with_reasons(output: DataFrame, reasons: tuple[Column, Column]) -> DataFrame:
    """``output`` with reason_code and reason_detail replaced by ``reasons``."""
    code, detail = reasons
    return output.withColumns({"reason_code": code, "reason_detail": detail})


def silver_tables(
    outputs: Sequence[tuple[Parser, DataFrame]],
    materialise: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> dict[str, DataFrame]:
    """Every silver table's rows, exactly in its schema, from the parsers' outputs: each
    ``silver_table(name, outputs, materialise)`` of ``SILVER_TABLES``, by table name."""
    requests = silver_table(request_events.TABLE_NAME, outputs)
    return {name: silver_table(name, outputs, materialise, requests) for name in SILVER_TABLES}


def silver_table(
    name: str,
    outputs: Sequence[tuple[Parser, DataFrame]],
    materialise: Callable[[DataFrame], DataFrame] = lambda df: df,
    requests: DataFrame | None = None,
) -> DataFrame:
    """The silver table ``name``'s rows, exactly in its schema, from the parsers' outputs
    (``Parser.table``: the parsers that feed it). Each table is planned on its own: a caller
    may plan several at once, on several threads.

    ``token_events`` also receives the rows derived from the delegation-token requests of
    ``request_events`` (``transforms.silver.tokens.token_events_from_requests``);
    ``auth_events`` gets the principal and mechanism its rows link to in the same days'
    ``request_events`` and handshakes (``transforms.silver.auth.principals``).
    ``materialise``: applied to the request log's connections aggregate that the linking
    reads four times, and to the auth rows keyed by their handshake that it reads four times
    (``with_linked_principals(materialise=)``; the pipeline passes ``jobs.reuse.reused``).
    ``requests``: ``request_events``' rows as this function plans them from the same
    ``outputs``, when the caller has them already (both tables above read them); planned
    here otherwise.

    Input: ``outputs``, pairs of a parser and its output (``parsed``, or narrowed by
    ``transforms.quarantine.table_and_quarantine_columns``). Output: the table's columns
    (``SILVER_TABLES[name]``'s schema), its parsed rows only.

    Raises:
        KeyError: ``name`` is not a silver table.
    """
    if name not in SILVER_TABLES:
        raise KeyError(f"{name} is not a silver table: {sorted(SILVER_TABLES)}")
    table = _parsed_table(name, outputs)
    if name not in (token_events.TABLE_NAME, auth_events.TABLE_NAME):
        return table
    if requests is None:
        requests = _parsed_table(request_events.TABLE_NAME, outputs)
    if name == token_events.TABLE_NAME:
        return table.unionByName(token_events_from_requests(requests))
    return with_linked_principals(table, requests, materialise=materialise)


def _parsed_table(name: str, outputs: Sequence[tuple[Parser, DataFrame]]) -> DataFrame:
    """The parsed rows of the parsers that feed table ``name``, stacked (``parsed_rows``)."""
    frames = [parsed_rows(output, p.schema) for p, output in outputs if p.table == name]
    return union_by_name(frames)


def quarantine(outputs: Sequence[tuple[Parser, DataFrame]]) -> DataFrame:
    """Every parser's rejected records, in the quarantine table's schema."""
    return union_by_name([quarantine_rows(output) for _, output in outputs])
