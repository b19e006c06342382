"""What every area writes the same way: Kafka version comparisons, connection ids and the
request log's ``Completed request:`` message.

``base`` is the contract between the framework and the areas (what a world, a node and a line
are); this module is the areas' common knowledge of Kafka's formats, in one place so that two
areas never disagree on how a version compares or how a request line reads. It imports only
the standard library.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: What ``version_tuple`` gives a version that does not start with a number (``trunk``, the
#: unreleased development branch): above every release, so it gets the newest formats.
UNRELEASED: tuple[int, ...] = (sys.maxsize,)
REQUEST_LOGGER = "kafka.request.logger"
#: The placeholder ``request_tail`` leaves for the timings (``render_times``).
TIMES = "{times}"
#: The timings of a request-log message, in Kafka's order (``totalTimeMs``... in JSON,
#: ``totalTime:``... in the string form).
TIME_FIELDS: tuple[str, ...] = (
    "total",
    "requestQueue",
    "local",
    "remote",
    "throttle",
    "responseQueue",
    "send",
)
_JSON_TIMES = ",".join(f'"{name}TimeMs":{{}}' for name in TIME_FIELDS)
_STRING_TIMES = ",".join(f"{name}Time:{{}}" for name in TIME_FIELDS)
_DIGITS = "0123456789"
#: The start of a JSON ``Completed request:`` message, by ``isForwarded``.
_JSON_STARTS = (
    'Completed request:{"isForwarded":false,"requestHeader":',
    'Completed request:{"isForwarded":true,"requestHeader":',
)


def version_tuple(version: str) -> tuple[int, ...]:
    """A Kafka version as a tuple to compare with ``(major, minor)`` thresholds.

    Each dot-separated part counts by its leading digits, and a part with anything after them
    (or without digits) ends the tuple: ``3.9.1`` -> (3, 9, 1), ``4.1.0-SNAPSHOT`` ->
    (4, 1, 0), ``3.9-rc1`` -> (3, 9). A version that does not start with a number (``trunk``)
    is ``UNRELEASED``: newer than every release.
    """
    parts: list[int] = []
    for piece in version.split("."):
        digits = piece[: len(piece) - len(piece.lstrip(_DIGITS))]
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(piece):
            break
    return tuple(parts) if parts else UNRELEASED


def connection_id(
    local: tuple[str, int], remote: tuple[str, int], index: int, kafka_version: str
) -> str:
    """Kafka's connection id (``SocketServer``'s ``ConnectionId``) on a node of
    ``kafka_version``: ``localIp:localPort-remoteIp:remotePort-index`` up to 3.9,
    ``...-processor-index`` from 4.0 (KAFKA-17776; the processor here is ``index % 3``)."""
    head = f"{local[0]}:{local[1]}-{remote[0]}:{remote[1]}"
    if version_tuple(kafka_version) >= (4, 0):
        return f"{head}-{index % 3}-{index}"
    return f"{head}-{index}"


def compact(value: Any) -> str:
    """Jackson's compact JSON of ``value`` (no spaces, key order kept, non-ASCII as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Conn:
    """Who sent a request and over which connection (the request log's tail fields)."""

    connection: str
    principal: str
    listener: str
    protocol: str
    software: tuple[str, str] = ("apache-kafka-java", "3.9.0")


def request_tail(conn: Conn, *, json_form: bool = True) -> str:
    """The end of a request-log message, after the response: the connection id, the ``TIMES``
    placeholder, the security protocol, principal, listener and client software (KIP-511).

    It depends on the connection only, so a caller may render it once per connection.
    ``json_form``: the KIP-673 JSON form (2.8+), else the string form of older brokers.
    """
    name, version = conn.software
    if json_form:
        return (
            f'"connection":{compact(conn.connection)},{TIMES},'
            f'"securityProtocol":{compact(conn.protocol)},"principal":{compact(conn.principal)},'
            f'"listener":{compact(conn.listener)},"clientInformation":'
            f'{{"softwareName":{compact(name)},"softwareVersion":{compact(version)}}}}}'
        )
    return (
        f"{conn.connection};{TIMES},securityProtocol:{conn.protocol},principal:{conn.principal},"
        f"listener:{conn.listener},clientInformation:ClientInformation(softwareName={name}, "
        f"softwareVersion={version})"
    )


def render_times(values: Sequence[str], *, json_form: bool = True) -> str:
    """The timings of a request-log message, ms: ``values`` holds one formatted number per
    ``TIME_FIELDS`` entry, in that order (each area has its own timing profile)."""
    return (_JSON_TIMES if json_form else _STRING_TIMES).format(*values)


def request_message(
    header: str,
    request: str,
    response: str,
    tail: str,
    times: str,
    *,
    json_form: bool = True,
    forwarded: bool = False,
) -> str:
    """One ``Completed request:`` message (``RequestChannel.updateRequestMetrics``' DEBUG line,
    kafka-log-formats.md section 2); every request-log line of the simulator is laid out here.

    Args:
        header: the request header; request, response: the request and the response. In the
            JSON form (2.8+, KIP-673 ``RequestConvertToJson``: Jackson compact, keys in
            emission order) JSON texts; in the string form (before 2.8) Kafka's ``toString``
            texts (``header`` without its ``RequestHeader(...)`` wrapper).
        tail: ``request_tail``'s text, for the same form.
        times: ``render_times``' text, put in the tail's ``TIMES`` placeholder.
        json_form: the JSON form, else the string form.
        forwarded: ``isForwarded`` (KIP-590; the JSON form only).
    """
    if json_form:
        return (
            f'{_JSON_STARTS[forwarded]}{header},"request":{request},"response":{response},'
            f"{tail.replace(TIMES, times)}"
        )
    return (
        f"Completed request:RequestHeader({header}) -- {request},response:{response} "
        f"from connection {tail.replace(TIMES, times)}"
    )


def request_header(
    api_key: int, version: int, correlation: int, client_id: str, name: str
) -> dict[str, Any]:
    """A JSON request header (``RequestHeaderDataJsonConverter`` output plus
    ``requestApiKeyName``), as a value for ``json_request_message``."""
    return {
        "requestApiKey": api_key,
        "requestApiVersion": version,
        "correlationId": correlation,
        "clientId": client_id,
        "requestApiKeyName": name,
    }


def json_request_message(
    header: dict[str, Any],
    request: Any,
    response: Any,
    conn: Conn,
    *,
    forwarded: bool = False,
    total_ms: float = 2.0,
    remote_ms: float = 0.0,
) -> str:
    """``request_message`` in the JSON form for an exchange built as JSON values (the
    admin and token requests): queue and send times 0.1 ms, local time what the total leaves
    after the remote time and 0.3 ms (at least 0.05 ms); times in ms."""
    local = round(max(total_ms - remote_ms - 0.3, 0.05), 3)
    total, remote = compact(round(total_ms, 3)), compact(round(remote_ms, 3))
    times = render_times((total, "0.1", compact(local), remote, "0", "0.1", "0.1"))
    return request_message(
        compact(header),
        compact(request),
        compact(response),
        request_tail(conn),
        times,
        forwarded=forwarded,
    )


def broker_ip(node_id: str) -> str:
    """A broker's address, as every area prints it: ``10.0.0.<id % 250 + 1>``, or
    ``10.0.0.250`` for a non-numeric id."""
    return f"10.0.0.{int(node_id) % 250 + 1}" if node_id.isdigit() else "10.0.0.250"


def finding_id(rule_id: str, subject_type: str, subject: str, discriminator: str) -> str:
    """sha2-256 hex of rule id, subject type, subject and discriminator joined by U+001F: the
    findings table's deterministic id (``transforms.findings.to_findings``)."""
    text = "\u001f".join((rule_id, subject_type, subject, discriminator))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
