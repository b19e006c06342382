"""Test helpers for the request-log and token families: Kafka's exact line formats rendered
from values, bronze-style redaction placeholders, the pretty-printed sample reassembled, and
whole-frame comparison with the silver column types."""

from __future__ import annotations

import base64
import ipaddress
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import BooleanType, DataType, LongType, StringType, StructField, StructType

from schemas.request_events import REQUEST_EVENTS
from schemas.token_events import TOKEN_EVENTS
from tests.support.bronze_rows import Record

REQUEST_LOGGER = "kafka.request.logger"
#: Fingerprints as bronze writes them (32 lowercase hex); made up, they stand for no secret.
FP_A = "0123456789abcdef0123456789abcdef"
FP_B = "fedcba9876543210fedcba9876543210"
FP_C = "00112233445566778899aabbccddeeff"

_SECRET_KEYS = ("hmac", "authBytes", "saslAuthBytes", "requestData", "responseData", "password")
_JSON_SECRET = re.compile(r'("(?:' + "|".join(_SECRET_KEYS) + r')":)"[^"]*"')


def placeholder(fingerprint: str) -> str:
    """Bronze's replacement of a secret value."""
    return f"[REDACTED hmac-sha256:{fingerprint}]"


def redacted(message: str, fingerprint: str) -> str:
    """``message`` with every JSON secret string value replaced as bronze does (one
    fingerprint for all, enough for a test); JSON null values stay null."""
    return _JSON_SECRET.sub(lambda m: f'{m.group(1)}"{placeholder(fingerprint)}"', message)


def compact(value: Any) -> str:
    """Jackson's compact rendering (key order kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_message(
    header: dict[str, Any],
    request: Any,
    response: Any,
    connection: str,
    *,
    principal: str = "User:alice",
    forwarded: bool = False,
    protocol: str = "SASL_SSL",
    listener: str = "BROKER",
    software: tuple[str, str] = ("apache-kafka-java", "3.9.0"),
    times: tuple[float, float, float, float, int, float, float] = (1.5, 0.1, 0.2, 0.3, 0, 0.4, 0.5),
    extra: dict[str, Any] | None = None,
) -> str:
    """A 2.8+ ``Completed request:`` message (RequestConvertToJson.requestDescMetrics order)."""
    total, queue, local, remote, throttle, response_queue, send = times
    body: dict[str, Any] = {
        "isForwarded": forwarded,
        "requestHeader": header,
        "request": request,
        "response": response,
        "connection": connection,
        "totalTimeMs": total,
        "requestQueueTimeMs": queue,
        "localTimeMs": local,
        "remoteTimeMs": remote,
        "throttleTimeMs": throttle,
        "responseQueueTimeMs": response_queue,
        "sendTimeMs": send,
        "securityProtocol": protocol,
        "principal": principal,
        "listener": listener,
        "clientInformation": {"softwareName": software[0], "softwareVersion": software[1]},
    }
    return "Completed request:" + compact(body | (extra or {}))


def header(
    api_key: int, version: int, correlation: int, name: str, client: str | None = "cli"
) -> dict[str, Any]:
    """RequestHeaderDataJsonConverter output plus requestApiKeyName (clientId None = v0)."""
    result: dict[str, Any] = {
        "requestApiKey": api_key,
        "requestApiVersion": version,
        "correlationId": correlation,
    }
    if client is not None:
        result["clientId"] = client
    return result | {"requestApiKeyName": name}


def string_message(head: tuple[str, int, str, int], request: str, response: str, tail: str) -> str:
    """A 1.0-2.7 ``Completed request:`` message.

    Args:
        head: RequestHeader (apiKey enum name, apiVersion, clientId, correlationId).
        request, response: their toString texts.
        tail: the text after `` from connection ``: ``<id>;totalTime:...``.
    """
    api, version, client, correlation = head
    text = f"RequestHeader(apiKey={api}, apiVersion={version}, clientId={client}, correlationId={correlation})"
    return f"Completed request:{text} -- {request},response:{response} from connection {tail}"


#: The pre-2.8 metrics after the connection id, in RequestChannel order.
METRIC_NAMES = (
    "totalTime", "requestQueueTime", "localTime", "remoteTime", "throttleTime",
    "responseQueueTime", "sendTime",
)  # fmt: skip


def string_tail(
    connection: str,
    times: Sequence[float | int],
    principal: str,
    *,
    protocol: str = "SASL_SSL",
    listener: str = "BROKER",
    software: tuple[str, str] | None = None,
    extra: dict[str, float | int] | None = None,
) -> str:
    """The text after `` from connection `` of a pre-2.8 line: ``<id>;totalTime:...``;
    clientInformation only when ``software`` (2.5+), ``extra`` keys appended in order."""
    metrics = ",".join(f"{n}:{v}" for n, v in zip(METRIC_NAMES, times, strict=True))
    info = ""
    if software is not None:
        info = f",clientInformation:ClientInformation(softwareName={software[0]}, softwareVersion={software[1]})"
    more = "".join(f",{k}:{v}" for k, v in (extra or {}).items())
    tail = f",securityProtocol:{protocol},principal:{principal},listener:{listener}"
    return f"{connection};{metrics}{tail}{info}{more}"


def pretty_printed_record(path: Path) -> Record:
    """The pretty-printed 4.x PRODUCE sample ('#> ' lines) as the one record the broker wrote:
    the JSON lines joined without their indentation, the last line being ``(logger)``."""
    fragments = [
        line[3:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#> ")
    ]
    text = "".join(fragment.strip() for fragment in fragments[:-1])
    level, message = text.split(" ", 1)
    return Record(level, fragments[-1].strip()[1:-1], message)


def principal_data(principal_type: str, name: str, token_authenticated: bool) -> str:
    """base64 ``DefaultPrincipalData`` v0 as an EnvelopeRequest carries it: int16 version 0,
    compact strings (unsigned varint length + 1, UTF-8), bool, empty tagged fields."""

    def varint(value: int) -> bytes:
        out = bytearray()
        while value >= 0x80:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        return bytes([*out, value])

    def compact(text: str) -> bytes:
        data = text.encode("utf-8")
        return varint(len(data) + 1) + data

    raw = b"\x00\x00" + compact(principal_type) + compact(name) + bytes([token_authenticated, 0])
    return base64.b64encode(raw).decode("ascii")


def address_data(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """base64 ``InetAddress.getAddress()`` bytes (EnvelopeRequest clientHostAddress)."""
    return base64.b64encode(address.packed).decode("ascii")


def java_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """``InetAddress.getHostAddress()``: IPv6 as 8 hex groups, no leading zeros, no ``::``;
    IPv4-mapped IPv6 as the IPv4 address (``getByAddress`` returns an Inet4Address)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))
    return str(address)


def _types(schemas: Sequence[StructType]) -> dict[str, DataType]:
    types: dict[str, DataType] = {}
    for schema in schemas:
        types |= {f.name: f.dataType for f in schema.fields}
    return types | {
        "reason_code": StringType(),
        "reason_detail": StringType(),
        "line_number": LongType(),
        "claimed": BooleanType(),
    }


_TYPES = _types((REQUEST_EVENTS, TOKEN_EVENTS))


def assert_rows(
    spark: SparkSession,
    actual: DataFrame,
    columns: Sequence[str],
    rows: Sequence[tuple[object, ...]],
    order_by: Sequence[str] = ("line_number",),
) -> None:
    """Whole-frame comparison of ``columns`` against hand-written rows, typed like the silver
    tables (request_events, then token_events for their own columns), in ``order_by`` order.
    Nullability is ignored on purpose: parser output is an intermediate; the table contract is
    checked separately."""
    schema = StructType([StructField(c, _TYPES[c], True) for c in columns])
    expected = spark.createDataFrame(list(rows), schema)
    ordered = actual.select(*columns).orderBy(*order_by)
    assert_df_equality(ordered, expected, ignore_nullable=True)
