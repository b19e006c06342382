"""Parse ``kafka.request.logger`` ``Completed request:`` records into silver.request_events.

Formats (docs/kafka-log-formats.md sections 2, 6, 7; ``RequestChannel.updateRequestMetrics``):
* 2.8+ JSON (KIP-673), ``transforms.silver.request_log.json_form``; 4.x connection ids add a
  processor id
  (``ServerConnectionId``, KAFKA-17776).
* 1.0-2.7 string, ``transforms.silver.request_log.string_form``.
Where the session has the JVM functions of ``transforms.silver.request_log.native``
(``jobs.jvm_parsers``), ``STRING_FORM_FUNCTION`` parses each string-form record in one scan and
``JSON_FORM_FUNCTION`` each JSON record in one Jackson pass; the expressions parse only the
records they do not answer for (issue 15). The rows are the same either way.
* Delegation-token APIs 38-41 and ENVELOPE 58 bodies, ``transforms.silver.request_log.tokens``.
Error codes are named with ``transforms.kafka_errors``. Secrets arrive redacted by bronze.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from schemas import request_events as schema
from transforms.columns import group_at, groups, rest_of, starts_after_spaces
from transforms.kafka_apis import api_key_of
from transforms.kafka_errors import error_code_name, error_code_names
from transforms.quarantine import Check, first_failure
from transforms.silver.authz import principal_name, principal_type
from transforms.silver.request_log.json_form import (
    header_map,
    json_checks,
    json_fields,
    json_passes,
    parsed_json,
    raw_top_level,
)
from transforms.silver.request_log.native import (
    JSON_FORM_FUNCTION,
    JSON_FORM_SCHEMA,
    STRING_FORM_FUNCTION,
    STRING_FORM_SCHEMA,
)
from transforms.silver.request_log.string_form import (
    split_string_form,
    string_checks,
    string_fields,
    string_form_struct,
    struct_top_level_error_code,
)
from transforms.silver.request_log.tokens import (
    envelope_columns,
    envelope_principal_columns,
    parsed_bodies,
    token_columns,
)

PREFIX = "Completed request:"
_REQUEST_LOGGER_RE = r"^kafka\.request\.logger(?::\d+)?$"
_CHANNEL_LOGGER_RE = r"^kafka\.network\.RequestChannel\$(?::\d+)?$"
#: localIp:localPort-remoteIp:remotePort[-processorId]-index; IPv6 hosts contain ':' not '-'.
CONNECTION_ID_RE = r"^([^-]+):(\d+)-([^-]+):(\d+)-(\d+)(?:-(\d+))?$"
_JSON_ERROR_CODE_RE = r'"errorCode"\s*:\s*(-?\d+)'
_STRUCT_ERROR_CODE_RE = r"(?<![A-Za-z0-9_])error_code=(-?\d+)"


def is_request_record(logger: Column, message: Column) -> Column:
    """Claim predicate of the 'request' family.

    Every record of ``kafka.request.logger`` (it writes nothing but ``Completed request:``
    in 1.0-4.x, so a cut or garbled record is still ours), and ``kafka.network.RequestChannel$``
    records starting ``Completed req``. A ``:NNN`` line suffix is allowed. Nulls give false.
    """
    request_logger = logger.rlike(_REQUEST_LOGGER_RE) & message.isNotNull()
    channel = logger.rlike(_CHANNEL_LOGGER_RE) & message.startswith("Completed req")
    return F.coalesce(request_logger | channel, F.lit(False))


def connection_groups(connection_id: Column) -> Column:
    """The six ``CONNECTION_ID_RE`` groups of a connection id (``transforms.columns.groups``).
    Materialise it as a column before ``connection_parts``, which reads it six times: inline,
    the regex ran for each part (an eighth of the parse of JSON request records, issue 15).
    Empty, not null, for an id that does not match (``empty_as_null=False``: one projection
    less in the parse); ``connection_parts`` reads both as no match. Null for a null id."""
    return groups(connection_id, CONNECTION_ID_RE, 6, empty_as_null=False)


def connection_parts(found: Column) -> dict[str, Column]:
    """local_ip, local_port, remote_ip (client), remote_port, processor_id (4.x only),
    connection_index of a connection id, from its ``connection_groups`` (null or empty); all
    null when it does not match."""
    g = [F.lit(None), *[group_at(found, i) for i in range(1, 7)]]
    four_part = g[6].isNotNull()
    return {
        "local_ip": g[1],
        "local_port": g[2].try_cast("int"),
        "remote_ip": g[3],
        "remote_port": g[4].try_cast("int"),
        "processor_id": F.when(four_part, g[5]).try_cast("int"),
        "connection_index": F.coalesce(g[6], g[5]).try_cast("int"),
    }


def found_error_codes(response: Column, regex: str) -> Column:
    """Every error code ``regex`` (group 1) finds in a response text, as array<int> (null
    for a null text). Materialise it before ``item_error_codes``: that uses it three times."""
    # A cast of the whole array (each element, null where it is no int), not ``transform``:
    # a higher-order function has no generated code and cuts the stage's generated pipeline.
    return F.regexp_extract_all(response, F.lit(regex), 1).try_cast("array<int>")


def item_error_codes(found: Column, top_level: Column) -> Column:
    """Distinct error codes below the top level of a response, ascending.

    ``found`` holds every errorCode of the text, the top-level one included. Removing one
    occurrence of the top-level code leaves exactly the nested ones, wherever the top-level
    key sits; so the top-level code is nested too when it occurs at least twice. (No lambda
    refers to ``found``: Spark would evaluate it again for every element.)

    Returns:
        array<int>; empty when none; null when ``found`` is null.
    """
    others = F.array_remove(found, top_level)
    repeated = F.size(found) - F.size(others) >= 2
    nested = F.when(top_level.isNull(), found).when(repeated, found).otherwise(others)
    return F.array_sort(F.array_distinct(nested))


def _combined(
    is_json: Column, is_string: Column, json: dict[str, Column], text: dict[str, Column]
) -> dict[str, Column]:
    """Each silver column from the form the record has: a JVM function's answer for a record
    it answered for (``_n``, ``_nj``; ``_native_fields``), else the expressions'; and ``_conn``,
    the connection id's groups (``connection_groups``), in the same projection: the connection
    id's expression is evaluated again for them (issue 15, forty-ninth part)."""
    string_native, json_native = _native_fields()
    names = dict.fromkeys([*json, *text])
    none = F.lit(None)
    combined = {
        name: F.when(_answered_string(), string_native.get(name, none))
        .when(_answered_json(), json_native.get(name, none))
        .when(is_json, json.get(name, none))
        .when(is_string, text.get(name, none))
        for name in names
    }
    return combined | {"_conn": connection_groups(combined["connection_id"])}


def _answered_string() -> Column:
    """True where the string form's JVM function answered (``_n`` not null)."""
    return F.col("_n").isNotNull()


def _answered_json() -> Column:
    """True where the JSON form's JVM function answered (``_nj`` not null)."""
    return F.col("_nj").isNotNull()


def _native_fields() -> tuple[dict[str, Column], dict[str, Column]]:
    """The silver columns the JVM functions fill: the string form's from its struct ``_n``,
    the JSON form's from ``_nj`` (error codes apart, ``_error_columns``)."""
    n, nj = F.col("_n"), F.col("_nj")
    codes = ("error_code", "found_error_codes")
    string = {f.name: n[f.name] for f in STRING_FORM_SCHEMA.fields if f.name not in codes}
    json = {f.name: nj[f.name] for f in JSON_FORM_SCHEMA.fields if f.name not in codes}
    string |= {"is_forwarded": F.lit(False), "api_key": api_key_of(n["api_key_name"])}
    return string, json


def _error_columns(is_json: Column) -> dict[str, Column]:
    """error_code (top level) and ``_found`` (every error code in the response)."""
    c = F.col
    top = (
        F.when(_answered_string(), c("_n.error_code"))
        .when(_answered_json(), c("_nj.error_code"))
        .when(is_json, F.get_json_object(c("response_json"), "$.errorCode").try_cast("int"))
        .otherwise(struct_top_level_error_code(c("response_text")))
    )
    found = (
        F.when(_answered_string(), c("_n.found_error_codes"))
        .when(_answered_json(), c("_nj.found_error_codes"))
        .when(is_json, found_error_codes(c("response_json"), _JSON_ERROR_CODE_RE))
        .otherwise(found_error_codes(c("response_text"), _STRUCT_ERROR_CODE_RE))
    )
    return {"error_code": top, "_found": found}


def _checks(is_json: Column, is_string: Column) -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c = F.col
    message, body = c("message"), c("_body")
    cut_prefix = F.lit(PREFIX).startswith(message) & (F.length(message) < len(PREFIX))
    return [
        (F.trim(F.coalesce(message, F.lit(""))) == "", "missing_field_message", "blank"),
        (cut_prefix, "request_truncated", "cut inside 'Completed request:'"),
        (body.isNull(), "request_unrecognized_format", "does not start 'Completed request:'"),
        (F.trim(body) == "", "request_truncated", "nothing after 'Completed request:'"),
        (
            c("log_format").isNull(),
            "request_unrecognized_format",
            "neither a JSON object nor RequestHeader(...) after 'Completed request:'",
        ),
        *json_checks(is_json, body, c("_j"), c("_jm"), c("_hm")),
        *string_checks(
            is_string,
            body,
            head=c("_s.head"),
            rest=c("_s.rest"),
            tail=c("_s.tail"),
            metric_groups=c("_s.metric_groups"),
            header_groups=c("_s.header_groups"),
        ),
        (
            c("local_ip").isNull(),
            "request_malformed_connection",
            F.concat(F.lit("connection id: "), F.substring(c("connection_id"), 1, 200)),
        ),
    ]


def _split_forms(bronze: DataFrame) -> DataFrame:
    """bronze + ``_body`` (text after the prefix), log_format, ``_n`` and ``_nj`` (the string
    and JSON forms' JVM functions' answers, ``STRING_FORM_SCHEMA`` and ``JSON_FORM_SCHEMA``;
    null unless the session has the function and it answered), and each form's intermediate
    columns for the records of that form that the expressions parse: ``_j`` (the JSON parsed
    by ``from_json``) and ``_s`` (the string form's parts, ``string_form_struct``).

    The parse runs its operators one by one (``jobs.pipeline.PARSE_CONF``), and each
    projection copies every column of every row: about 0.8 s of CPU per million records,
    whether or not it computes anything for them (issue 15, forty-eighth part). Where the
    string form's JVM function answers, the expressions parse only the few records it
    refuses, so their stages are one projection (``split_string_form(materialised=False)``),
    beside the JSON's; without it, they are materialised stage after stage, as every string
    record goes through them."""
    c, message = F.col, F.col("message")
    body = F.when(message.startswith(PREFIX), rest_of(message, len(PREFIX) + 1))
    log_format = _log_format(message)
    string_function, json_function = (
        name if bronze.sparkSession.catalog.functionExists(name) else None
        for name in (STRING_FORM_FUNCTION, JSON_FORM_FUNCTION)
    )
    # The JVM functions' answers in the body's projection: the body is cut from the message
    # again for them (a copy of its bytes), one projection less (issue 15, forty-ninth part).
    staged = bronze.withColumns(
        {
            "_body": body,
            "log_format": log_format,
            "_n": _native_answer(
                string_function, STRING_FORM_SCHEMA, body, log_format, schema.FORMAT_STRING
            ),
            "_nj": _native_answer(
                json_function, JSON_FORM_SCHEMA, body, log_format, schema.FORMAT_JSON
            ),
        }
    )
    is_string = _string_by_expressions()
    materialised = string_function is None
    stages = split_string_form(c("_body"), materialised)
    if materialised:
        for stage in stages:
            staged = staged.withColumns({name: F.when(is_string, v) for name, v in stage.items()})
        parts = {name: c(name) for name in ("_s_tail", "_s_head", "_s_rest")}
    else:
        parts = {name: value for stage in stages for name, value in stage.items()}
    found = string_form_struct(parts["_s_tail"], parts["_s_head"], parts["_s_rest"])
    return staged.withColumns(
        {
            "_s": F.when(is_string, found),
            "_j": F.when(_json_by_expressions(), parsed_json(c("_body"))),
        }
    )


def _log_format(message: Column) -> Column:
    """``schema.FORMAT_JSON`` where the body after ``PREFIX`` starts with ``{`` (leading spaces
    aside, ``starts_after_spaces``), ``schema.FORMAT_STRING`` where it starts
    ``RequestHeader(``, else null; read from the message, so that it is computed in the same
    projection as the body (one projection less, ``_split_forms``). The two cases exclude each
    other, so the rare spaced JSON is tested last."""
    json, string = F.lit(schema.FORMAT_JSON), F.lit(schema.FORMAT_STRING)
    spaced = F.when(
        message.startswith(PREFIX), starts_after_spaces(rest_of(message, len(PREFIX) + 1), "{")
    )
    return (
        F.when(message.startswith(PREFIX + "{"), json)
        .when(message.startswith(PREFIX + "RequestHeader("), string)
        .when(spaced, json)
    )


def _native_answer(
    function: str | None, result: StructType, body: Column, log_format: Column, form: str
) -> Column:
    """``function`` (a session function's name; None when the session has none) of ``body``
    for the records of ``form`` (``log_format``), null for the others, as ``result``."""
    answer = F.call_udf(function, body) if function is not None else F.lit(None)
    return F.when(log_format == form, answer).cast(result)


def _passes_every_check(json_expressions: Column) -> Column:
    """True for a JSON record no check can fail (the JSON form's JVM function answered, or
    ``json_passes``) whose connection id parsed; false otherwise (never null)."""
    passes = _answered_json() | json_passes(json_expressions, F.col("_body"), F.col("_j"))
    return F.coalesce(passes & F.col("local_ip").isNotNull(), F.lit(False))


def _string_by_expressions() -> Column:
    """A string-form record that the string form's JVM function did not answer for (all of
    them when no session function is registered): the expressions parse it."""
    return (F.col("log_format") == schema.FORMAT_STRING) & ~_answered_string()


def _json_by_expressions() -> Column:
    """A JSON record that the JSON form's JVM function did not answer for (all of them when no
    session function is registered): the expressions parse and check it."""
    return (F.col("log_format") == schema.FORMAT_JSON) & ~_answered_json()


def parse_request_events(bronze: DataFrame) -> DataFrame:
    """Parse ``Completed request:`` bronze records (family 'request'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string, secrets redacted), log_ts
        (timestamp, UTC), log_date (date).

    Output columns:
        every input column, then the REQUEST_EVENTS columns not in bronze (event_ts timestamp
        UTC, log_format string, ... event_date date; see schemas.request_events), then
        reason_code (string, null = parsed) and reason_detail (string).

    Null behaviour: a null or blank message gets 'missing_field_message'; keys a record does
    not carry (absent before some version, or only > 0) give null columns.
    """
    c = F.col
    is_json = c("log_format") == schema.FORMAT_JSON
    is_string, json_expressions = _string_by_expressions(), _json_by_expressions()
    json = json_fields(c("_j"))
    text = string_fields(c("_s.header_groups"), c("_s.metric_groups"), c("_s.rest"))
    fields = _split_forms(bronze).withColumns(_combined(is_json, is_string, json, text))
    fields = fields.withColumns(
        {
            "event_ts": c("log_ts"),
            "event_date": c("log_date"),
            "client_id": F.nullif(c("client_id"), F.lit("")),
            "principal_type": principal_type(c("principal")),
            "principal_name": principal_name(c("principal")),
            **connection_parts(c("_conn")),
            **_error_columns(is_json),
            **parsed_bodies(c("log_format"), c("api_key"), c("request_json"), c("response_json")),
        }
    )
    tokens = token_columns(
        c("log_format"),
        c("api_key"),
        c("_tq"),
        c("_tr"),
        request_text=c("request_text"),
        response_text=c("response_text"),
    )
    # A well-formed JSON record (nearly all) skips the checks and the raw reads they need; only
    # records that go through them keep the body and typed JSON, most of a row, from here on.
    derived = fields.withColumns(
        {
            "error_code_name": error_code_name(c("error_code")),
            "item_error_codes": item_error_codes(c("_found"), c("error_code")),
            **tokens,
            **envelope_columns(c("_env")),
            "_passes": _passes_every_check(json_expressions),
        }
    )
    slow = json_expressions & ~c("_passes")
    checked = derived.withColumns(
        {
            "item_error_code_names": error_code_names(c("item_error_codes")),
            **envelope_principal_columns(c("_envp")),
            **{name: F.when(~c("_passes"), c(name)) for name in ("_j", "_body")},
            # Read before the line above empties it: the same text, as slow rows keep it.
            "_jm": F.when(slow, raw_top_level(c("_body"))),
        }
    )
    checked = checked.withColumn("_hm", header_map(c("_jm")))
    failed = checked.withColumn(
        "_failure", first_failure(_checks(json_expressions, is_string), c("_passes"))
    )
    silver = [n for n in schema.REQUEST_EVENTS.fieldNames() if n not in bronze.columns]
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(*bronze.columns, *silver, *reasons)
