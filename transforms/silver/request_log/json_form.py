"""The 2.8+ JSON form of ``Completed request:`` (KIP-673): explicit schemas, fields, checks.

``RequestConvertToJson.requestDescMetrics`` (``core/.../RequestConvertToJson.scala`` 2.8-3.9,
``server/.../RequestConvertToJson.java`` 4.x) writes one compact Jackson object: isForwarded,
requestHeader (``RequestHeaderDataJsonConverter`` + requestApiKeyName + 3.8+
requestApiVersionDeprecated), request, response (objects, or ``""``), connection, the timings,
securityProtocol, principal, listener, clientInformation, and temporaryMemoryBytes /
messageConversionsTime only when > 0.
"""

from __future__ import annotations

import operator
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from transforms.columns import ends_before_spaces
from transforms.quarantine import Check

HEADER_SCHEMA = StructType(
    [
        StructField("requestApiKey", IntegerType(), True),
        StructField("requestApiVersion", IntegerType(), True),
        StructField("correlationId", IntegerType(), True),
        StructField("clientId", StringType(), True),
        StructField("requestApiKeyName", StringType(), True),
        StructField("requestApiVersionDeprecated", BooleanType(), True),
    ]
)
CLIENT_INFORMATION_SCHEMA = StructType(
    [
        StructField("softwareName", StringType(), True),
        StructField("softwareVersion", StringType(), True),
    ]
)
_DOUBLE, _LONG, _STRING = DoubleType(), LongType(), StringType()
#: Top-level keys: (JSON key, type when read, silver column or None). request / response are
#: read as strings: Spark keeps an object's JSON text (compact) and "" as "".
TOP_LEVEL: tuple[tuple[str, DataType, str | None], ...] = (
    ("isForwarded", BooleanType(), "is_forwarded"),
    ("requestHeader", HEADER_SCHEMA, None),
    ("request", _STRING, None),
    ("response", _STRING, None),
    ("connection", _STRING, "connection_id"),
    ("totalTimeMs", _DOUBLE, "total_time_ms"),
    ("requestQueueTimeMs", _DOUBLE, "request_queue_time_ms"),
    ("localTimeMs", _DOUBLE, "local_time_ms"),
    ("remoteTimeMs", _DOUBLE, "remote_time_ms"),
    ("throttleTimeMs", _LONG, "throttle_time_ms"),
    ("responseQueueTimeMs", _DOUBLE, "response_queue_time_ms"),
    ("sendTimeMs", _DOUBLE, "send_time_ms"),
    ("securityProtocol", _STRING, "security_protocol"),
    ("principal", _STRING, "principal"),
    ("listener", _STRING, "listener"),
    ("clientInformation", CLIENT_INFORMATION_SCHEMA, None),
    ("temporaryMemoryBytes", _LONG, "temporary_memory_bytes"),
    ("messageConversionsTime", _DOUBLE, "message_conversions_time_ms"),
)
REQUEST_LOG_SCHEMA = StructType([StructField(key, kind, True) for key, kind, _ in TOP_LEVEL])
#: Holds the text of a record that is not one valid JSON object (from_json's PERMISSIVE mode).
_CORRUPT = "_corrupt_record"
_RAW_OPTIONS = {"columnNameOfCorruptRecord": _CORRUPT}


def _raw_schema(keys: list[str]) -> StructType:
    """Every key as its raw JSON value (a string, an object's or array's JSON text; null when
    absent or JSON null), and the corrupt-record column."""
    return StructType([StructField(key, StringType(), True) for key in [*keys, _CORRUPT]])


#: The top-level keys, and the requestHeader's, with their raw values: tells absent / null
#: from a wrong type.
RAW_TOP_LEVEL = _raw_schema([key for key, _, _ in TOP_LEVEL])
RAW_HEADER = _raw_schema(HEADER_SCHEMA.fieldNames())
#: What the typed read returns: ``REQUEST_LOG_SCHEMA`` and the corrupt-record column.
PARSED_SCHEMA = StructType([*REQUEST_LOG_SCHEMA.fields, StructField(_CORRUPT, StringType(), True)])

#: Keys every JSON record carries: (reason suffix, top key, header key or None).
_REQUIRED: tuple[tuple[str, str, str | None], ...] = (
    ("is_forwarded", "isForwarded", None),
    ("request_header", "requestHeader", None),
    ("api_key", "requestHeader", "requestApiKey"),
    ("api_version", "requestHeader", "requestApiVersion"),
    ("correlation_id", "requestHeader", "correlationId"),
    ("api_key_name", "requestHeader", "requestApiKeyName"),
    ("request", "request", None),
    ("response", "response", None),
    ("connection", "connection", None),
    ("total_time_ms", "totalTimeMs", None),
    ("request_queue_time_ms", "requestQueueTimeMs", None),
    ("local_time_ms", "localTimeMs", None),
    ("remote_time_ms", "remoteTimeMs", None),
    ("throttle_time_ms", "throttleTimeMs", None),
    ("response_queue_time_ms", "responseQueueTimeMs", None),
    ("send_time_ms", "sendTimeMs", None),
    ("security_protocol", "securityProtocol", None),
    ("principal", "principal", None),
    ("listener", "listener", None),
)
#: Keys that may be absent but, when present, must have their type.
_OPTIONAL: tuple[tuple[str, str, str | None], ...] = (
    ("api_version_deprecated", "requestHeader", "requestApiVersionDeprecated"),
    ("client_information", "clientInformation", None),
    ("temporary_memory_bytes", "temporaryMemoryBytes", None),
    ("message_conversions_time_ms", "messageConversionsTime", None),
)


def raw_values(text: Column, schema: StructType) -> Column:
    """``schema``'s keys (``RAW_TOP_LEVEL`` / ``RAW_HEADER``) of a JSON object text, each as
    its raw value; null when the text is null or not one valid JSON object. Key lookups are
    struct field reads (a map's are a scan of its keys)."""
    raw = F.from_json(text, schema, _RAW_OPTIONS)
    return F.when(raw.isNotNull() & raw[_CORRUPT].isNull(), raw)


def parsed_json(body: Column) -> Column:
    """The typed record (``REQUEST_LOG_SCHEMA`` and the corrupt-record column: set when the
    text is not one valid JSON object or a key has the wrong type); materialise it as ``_j``
    before ``json_fields`` / ``json_passes``."""
    return F.from_json(body, PARSED_SCHEMA, _RAW_OPTIONS)


def raw_top_level(body: Column) -> Column:
    """``RAW_TOP_LEVEL`` of the record (``raw_values``): only needed by ``json_checks``."""
    return raw_values(body, RAW_TOP_LEVEL)


def header_map(raw_top_level: Column) -> Column:
    """``RAW_HEADER`` struct of the requestHeader object (null when absent or not an object)."""
    return raw_values(raw_top_level["requestHeader"], RAW_HEADER)


def json_fields(parsed: Column) -> dict[str, Column]:
    """Silver columns of the JSON form from the ``_j`` struct.

    Returns:
        name -> Column for every column the JSON form fills directly (``request_json`` /
        ``response_json`` with "" as null); timings ms double, throttle long.
    """
    header = parsed["requestHeader"]
    client = parsed["clientInformation"]
    columns = {silver: parsed[key] for key, _, silver in TOP_LEVEL if silver is not None}
    return columns | {
        "api_key": header["requestApiKey"],
        "api_version": header["requestApiVersion"],
        "api_key_name": header["requestApiKeyName"],
        "api_version_deprecated": header["requestApiVersionDeprecated"],
        "correlation_id": header["correlationId"],
        "client_id": header["clientId"],
        "request_json": F.nullif(parsed["request"], F.lit("")),
        "response_json": F.nullif(parsed["response"], F.lit("")),
        "client_software_name": client["softwareName"],
        "client_software_version": client["softwareVersion"],
    }


def _typed(parsed: Column, top: str, sub: str | None) -> Column:
    value = parsed[top]
    return value if sub is None else value[sub]


def _read_type(top: str, sub: str | None) -> DataType:
    kind = REQUEST_LOG_SCHEMA[top].dataType
    return kind[sub].dataType if sub is not None and isinstance(kind, StructType) else kind


def _raw(raw_top_level: Column, raw_header: Column, top: str, sub: str | None) -> Column:
    return raw_top_level[top] if sub is None else raw_header[sub]


def json_checks(
    is_json: Column, body: Column, parsed: Column, raw_object: Column, raw_header: Column
) -> list[Check]:
    """Quarantine checks of the JSON form, in priority order.

    Order: cut (invalid and more ``{`` than ``}``), malformed (invalid, or bytes after the
    closing brace), then key by key in emission order: absent or null when required
    (``request_missing_field_<x>``), present with the wrong JSON type
    (``request_wrong_type_<x>``; Spark's from_json leaves such a value null).
    """
    invalid = is_json & raw_object.isNull()
    opens = F.length(body) - F.length(F.replace(body, F.lit("{"), F.lit("")))
    closes = F.length(body) - F.length(F.replace(body, F.lit("}"), F.lit("")))
    checks: list[Check] = [
        (invalid & (opens > closes), "request_truncated", "JSON object cut short"),
        (invalid, "request_malformed_json", "not valid JSON"),
        (
            is_json & ~ends_before_spaces(body, "}"),
            "request_malformed_json",
            "bytes after the JSON object",
        ),
    ]
    for name, top, sub in _REQUIRED + _OPTIONAL:
        raw = _raw(raw_object, raw_header, top, sub)
        if (name, top, sub) in _REQUIRED:
            missing = is_json & raw.isNull()
            if sub is not None:  # reported once, as the header's wrong type
                missing &= raw_header.isNotNull()
            checks.append((missing, f"request_missing_field_{name}", f"no {sub or top}"))
        if _read_type(top, sub) == _STRING:
            continue  # Spark reads any JSON value as a string: no wrong type
        typed = raw_header if (top == "requestHeader" and sub is None) else _typed(parsed, top, sub)
        wrong = is_json & raw.isNotNull() & typed.isNull()
        detail = F.concat(F.lit(f"{sub or top}: "), F.substring(raw, 1, 200))
        checks.append((wrong, f"request_wrong_type_{name}", detail))
    return checks


def json_passes(is_json: Column, body: Column, parsed: Column) -> Column:
    """True only for a JSON record on which no ``json_checks`` check can fail, from the typed
    read alone: a valid object ending with its closing brace, no key of the wrong type (the
    corrupt-record column is null), and every required key present and not null. Such a
    record needs neither ``raw_top_level`` nor ``header_map`` (a typed value that is not null
    implies a raw one; an optional key typed null is then absent or null). Null or false
    otherwise; see ``first_failure(passes=)``.
    """
    conditions = [
        is_json,
        parsed.isNotNull(),
        parsed[_CORRUPT].isNull(),
        ends_before_spaces(body, "}"),
        *[_typed(parsed, top, sub).isNotNull() for _, top, sub in _REQUIRED],
    ]
    return reduce(operator.and_, conditions)
