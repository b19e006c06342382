"""The 2.8+ JSON form of ``Completed request:`` (KIP-673): explicit schemas, fields, checks.

``RequestConvertToJson.requestDescMetrics`` (``core/.../RequestConvertToJson.scala`` 2.8-3.9,
``server/.../RequestConvertToJson.java`` 4.x) writes one compact Jackson object: isForwarded,
requestHeader (``RequestHeaderDataJsonConverter`` + requestApiKeyName + 3.8+
requestApiVersionDeprecated), request, response (objects, or ``""``), connection, the timings,
securityProtocol, principal, listener, clientInformation, and temporaryMemoryBytes /
messageConversionsTime only when > 0.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

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
#: Any object's top-level keys with their raw values: tells absent / null from a wrong type.
RAW_OBJECT = MapType(StringType(), StringType(), True).simpleString()

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


def parsed_json(body: Column) -> dict[str, Column]:
    """Intermediate columns to materialise before ``json_fields`` / ``json_checks``.

    Returns:
        ``_j`` (REQUEST_LOG_SCHEMA struct), ``_jm`` (map<string,string> of the top-level keys;
        null when the text is not one valid JSON object) for a JSON ``body``, else nulls.
    """
    return {
        "_j": F.from_json(body, REQUEST_LOG_SCHEMA),
        "_jm": F.from_json(body, RAW_OBJECT),
    }


def header_map(raw_object: Column) -> Column:
    """map<string,string> of the requestHeader object (null when absent or not an object)."""
    return F.from_json(F.try_element_at(raw_object, F.lit("requestHeader")), RAW_OBJECT)


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


def _raw(raw_object: Column, raw_header: Column, top: str, sub: str | None) -> Column:
    if sub is None:
        return F.try_element_at(raw_object, F.lit(top))
    return F.try_element_at(raw_header, F.lit(sub))


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
            is_json & ~F.rtrim(body).endswith("}"),
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
