"""Authentication (3002) and API Activity (6003) events of a small lake, mapped without Spark.

``kafka-audit export-ocsf`` starts a Spark session to map the silver tables with
``transforms.ocsf``: about ten seconds of JVM start-up and planning, however few the events. A
lake whose two tables hold at most :data:`MAX_ROWS` rows in the window is read with deltalake
(``jobs.lake.reads``) and mapped here, row by row, in plain Python, as the Detection Findings are
(``jobs.ocsf_findings``): the whole export takes about a second (issue 15).

The mapping is ``transforms.ocsf``'s, rule for rule (its docstrings give the rules and their
sources; the lookup tables are imported from there), and the files are the ones Spark writes,
byte for byte: the same events in the same order (``transforms.ocsf.in_order``), the same keys
in the order of ``schemas.ocsf``, nulls left out, and strings escaped as Spark's JSON writer
(Jackson) escapes them: control characters as ``\\n``, ``\\t``... or ``\\u001B`` (upper-case
hex), everything else, non-ASCII included, as is. ``tests/integration/test_ocsf.py`` and
``test_fuzz.py`` compare the two exports file by file: the samples lake, hostile rows, and the
damaged lines of the fuzz corpus.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from jobs.lake.reads import iter_rows, row_count, table_path
from jobs.ocsf_findings import Event, export_line, ocsf_user, without_nulls, write_events
from jobs.report import Window
from schemas import auth_events as ae
from schemas import authz_decisions as az
from schemas.ocsf import (
    API_ACTIVITY,
    API_ACTIVITY_CLASS_UID,
    API_ACTIVITY_NAME,
    AUTHENTICATION,
    AUTHENTICATION_CLASS_UID,
    AUTHENTICATION_NAME,
    OCSF_VERSION,
)
from transforms.ocsf import (
    ACL_OPERATION_ACTIVITY,
    API_ACTIVITY_CAPTIONS,
    AUTH_OUTCOMES,
    AUTH_PROTOCOL_CAPTIONS,
    AUTH_PROTOCOL_IDS,
    SEVERITY_CAPTIONS,
    STATUS_CAPTIONS,
    UNKNOWN,
)

#: Rows of auth_events and authz_decisions together up to which ``export-ocsf`` maps without
#: Spark. Python maps and writes about 15,000 events a second on this project's 2-core machine
#: (48,086 in 3.0 s), so this many take about six seconds, less than a Spark process needs
#: before its first row.
MAX_ROWS = 100_000

_EVENT_TABLES = (ae.TABLE_NAME, az.TABLE_NAME)


def without_spark(lake: str, window: Window) -> bool:
    """Whether the rows of ``lake``'s auth_events and authz_decisions in ``window`` are few
    enough to map without Spark: at most :data:`MAX_ROWS` together, by the row counts of the
    Delta log (False when a file carries no row count)."""
    counts = [
        row_count(table_path(lake, table), "event_date", window.start, window.end)
        for table in _EVENT_TABLES
    ]
    return all(n is not None for n in counts) and sum(n or 0 for n in counts) <= MAX_ROWS


def _coalesce(*values: Any) -> Any:
    """The first value that is not None (SQL ``coalesce``: an empty string counts)."""
    return next((value for value in values if value is not None), None)


def _user(principal: str | None) -> Event:
    """``transforms.ocsf._user``: a principal as the Detection Findings' evidence maps it
    (``jobs.ocsf_findings.ocsf_user``); name ``unknown``, type ``Unknown``, type_id 0 when
    null."""
    if principal is None:
        return {"uid": None, "name": UNKNOWN, "type": "Unknown", "type_id": 0}
    return ocsf_user(principal)


def _endpoint(**known: Any) -> Event | None:
    """``transforms.ocsf._endpoint``: an OCSF network_endpoint, None when none of its
    identifying fields (all but the port) is known."""
    if all(value is None for key, value in known.items() if key != "port"):
        return None
    keys = ("uid", "name", "hostname", "ip", "port", "interface_name")
    return {key: known.get(key) for key in keys}


def _metadata(class_uid: int, row: Mapping[str, Any], event_code: str | None) -> Event:
    parts = (str(class_uid), row["source_path"], row["line_number"])
    uid = "\n".join(str(p) for p in parts if p is not None)
    confluent = row["source_format"] == ae.SOURCE_FORMAT_CONFLUENT_AUDIT
    return {
        "uid": hashlib.sha256(uid.encode()).hexdigest(),
        "version": OCSF_VERSION,
        "product": {
            "name": "Confluent Server" if confluent else "Apache Kafka",
            "vendor_name": "Confluent" if confluent else "Apache Software Foundation",
            "version": None,
        },
        "log_source": row["source_path"],
        "event_code": event_code,
    }


def _classified(
    of: tuple[int, str, int, str], activity: tuple[int, str | None], succeeded: bool, micros: int
) -> Event:
    """The class, category, type, time and status attributes (``_classify`` and ``_status``) of
    an event of class ``of`` (class_uid, class_name, category_uid, category_name)."""
    class_uid, class_name, category_uid, category_name = of
    activity_id, activity_name = activity
    status_id = 1 if succeeded else 2
    return {
        "activity_id": activity_id,
        "activity_name": activity_name,
        "category_uid": category_uid,
        "category_name": category_name,
        "class_uid": class_uid,
        "class_name": class_name,
        "type_uid": class_uid * 100 + activity_id,
        "type_name": None if activity_name is None else f"{class_name}: {activity_name}",
        "time": micros // 1000,  # unix_millis: whole milliseconds, floored
        "timezone_offset": 0,
        "severity_id": status_id,
        "severity": SEVERITY_CAPTIONS.get(status_id),
        "status_id": status_id,
        "status": STATUS_CAPTIONS.get(status_id),
    }


def _auth_protocol(row: Mapping[str, Any]) -> tuple[int, str | None]:
    """``transforms.ocsf._auth_protocol``: (auth_protocol_id, auth_protocol)."""
    reason_code = row["failure_reason_code"]
    mechanism = row["mechanism"]
    if mechanism is None and reason_code is not None and reason_code.startswith("OAUTH"):
        mechanism = "OAUTHBEARER"
    tls = (reason_code or "").startswith("SSL") or row["security_protocol"] == "SSL"
    protocol_id = AUTH_PROTOCOL_IDS.get(mechanism or "")
    if protocol_id is None:
        protocol_id = 99 if mechanism is not None or tls else 0
    if protocol_id == 99:
        return protocol_id, mechanism if mechanism is not None else "TLS"
    return protocol_id, AUTH_PROTOCOL_CAPTIONS.get(protocol_id)


def _auth_endpoints(row: Mapping[str, Any]) -> Event:
    """``transforms.ocsf._auth_endpoints``: src_endpoint, dst_endpoint and session."""
    peer = {"hostname": row["peer_host"], "ip": row["peer_ip"], "port": row["peer_port"]}
    if _coalesce(row["side"], "broker") == "broker":
        broker = _endpoint(uid=row["node_id"], ip=row["local_ip"], port=row["local_port"],
                           interface_name=row["listener"])  # fmt: skip
        session = {"uid": row["connection_id"]} if row["connection_id"] is not None else None
        return {"src_endpoint": _endpoint(**peer), "dst_endpoint": broker, "session": session}
    called = row["broker_node_id"]
    return {
        "src_endpoint": _endpoint(name=row["client_id"]),
        "dst_endpoint": _endpoint(uid=None if called is None else str(called), **peer),
        "session": None,
    }


def is_authentication(row: Mapping[str, Any]) -> bool:
    """Whether an auth_events row is an authentication outcome (``AUTH_OUTCOMES``)."""
    return row["event_type"] in AUTH_OUTCOMES


def authentication_event(row: Mapping[str, Any]) -> Event | None:
    """One silver.auth_events row (``schemas.auth_events.AUTH_EVENTS`` as a dict, ``event_ts``
    in microseconds since the Unix epoch, UTC) as ``transforms.ocsf.authentication_events``
    maps it (``schemas.ocsf.AUTHENTICATION`` keys in order); None for a row that function
    leaves out (not an outcome, or no time)."""
    if not is_authentication(row) or row["event_ts"] is None:
        return None
    event_type = row["event_type"]
    succeeded = AUTH_OUTCOMES[event_type]
    step = "Re-authentication " if event_type.startswith("reauthentication") else "Authentication "
    reason = row["reason"]
    protocol_id, protocol = _auth_protocol(row)
    unmapped = ("node_id", "side", "failure_reason_code", "security_protocol", "client_id",
                "is_reauthentication", "principal_source", "mechanism_source")  # fmt: skip
    event = _classified(
        (AUTHENTICATION_CLASS_UID, "Authentication", 3, "Identity & Access Management"),
        (1, "Logon"), succeeded, row["event_ts"],
    )  # fmt: skip
    event |= {
        "status_code": row["failure_reason_code"],
        "status_detail": reason,
        "message": step
        + ("succeeded" if succeeded else "failed")
        + ("" if reason is None else f": {reason}"),
        "metadata": _metadata(AUTHENTICATION_CLASS_UID, row, event_type),
        "user": _user(row["principal"]),
        "auth_protocol_id": protocol_id,
        "auth_protocol": protocol,
        "logon_type_id": 3,
        "logon_type": "Network",
        "is_remote": True,
        **_auth_endpoints(row),
        "unmapped": {"source_line_number": row["line_number"]} | {k: row[k] for k in unmapped},
    }
    return {name: event[name] for name in AUTHENTICATION.fieldNames()}


def _actor(row: Mapping[str, Any]) -> Event:
    policy = None
    if row["authorizer"] is not None or row["rule"] is not None:
        policy = {"name": row["rule"], "type": row["authorizer"], "desc": row["rbac_role"]}
    return {
        "user": _user(row["principal"]),
        "app_name": row["client_id"],
        "authorizations": [{"decision": row["decision"], "policy": policy}],
    }


def is_api_activity(row: Mapping[str, Any]) -> bool:
    """Whether an authz_decisions row is a decision (not an AclAuthorizer detail line)."""
    return bool(row["record_type"] == az.RECORD_DECISION)


def api_activity_event(row: Mapping[str, Any]) -> Event | None:
    """One silver.authz_decisions row (``schemas.authz_decisions.AUTHZ_DECISIONS`` as a dict,
    ``event_ts`` in microseconds since the Unix epoch, UTC) as
    ``transforms.ocsf.api_activity_events`` maps it (``schemas.ocsf.API_ACTIVITY`` keys in
    order); None for a row that function leaves out (not a decision, or no time)."""
    if not is_api_activity(row) or row["event_ts"] is None:
        return None
    operation = row["operation"]
    activity_id = 0 if operation is None else ACL_OPERATION_ACTIVITY.get(operation, 99)
    activity = (activity_id, API_ACTIVITY_CAPTIONS.get(activity_id))
    logged = _coalesce(row["operation_raw"], operation)
    words = (_coalesce(row["principal"], UNKNOWN), row["decision"], logged, "on",
             row["resource_type"], row["resource_name"])  # fmt: skip
    correlation = row["correlation_id"]
    resource = {"type": row["resource_type"], "name": row["resource_name"]}
    event = _classified(
        (API_ACTIVITY_CLASS_UID, "API Activity", 6, "Application Activity"), activity,
        row["decision"] == "ALLOWED", row["event_ts"],
    )  # fmt: skip
    event |= {
        "status_code": row["decision"],
        "status_detail": row["rule"],
        "message": " ".join(w for w in words if w is not None),
        "metadata": _metadata(API_ACTIVITY_CLASS_UID, row, row["decision"]),
        "actor": _actor(row),
        "api": {
            "operation": _coalesce(row["api_name"], logged, UNKNOWN),
            "request": None if correlation is None else {"uid": str(correlation)},
        },
        "resources": [resource] if any(v is not None for v in resource.values()) else None,
        "src_endpoint": _endpoint(ip=row["host"]) or _endpoint(name=UNKNOWN),
        "dst_endpoint": _endpoint(uid=row["node_id"]),
        "unmapped": {"source_line_number": row["line_number"], "node_id": row["node_id"],
                     "acl_operation": operation, "pattern_type": row["pattern_type"]},
    }  # fmt: skip
    return {name: event[name] for name in API_ACTIVITY.fieldNames()}


#: The columns each mapping reads.
AUTH_COLUMNS: tuple[str, ...] = (
    "source_path", "line_number", "node_id", "event_ts", "event_type", "side", "source_format",
    "principal", "principal_source", "mechanism", "mechanism_source", "failure_reason_code",
    "reason", "security_protocol", "listener", "peer_host", "peer_ip", "peer_port", "local_ip",
    "local_port", "connection_id", "client_id", "broker_node_id", "is_reauthentication",
)  # fmt: skip
AUTHZ_COLUMNS: tuple[str, ...] = (
    "source_path", "line_number", "node_id", "event_ts", "record_type", "source_format",
    "principal", "decision", "operation", "operation_raw", "resource_type", "resource_name",
    "pattern_type", "host", "authorizer", "rule", "rbac_role", "client_id", "api_name",
    "correlation_id",
)  # fmt: skip

#: Python's JSON escape of a control character (``\\u001b``), not preceded by an escaped
#: backslash; Jackson writes its hex digits upper-case.
_LOWER_HEX_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def jackson_line(event: Event) -> str:
    """``event`` as one line of Spark's JSON writer: compact, nulls left out, keys in the
    event's order, strings escaped as Jackson escapes them (``\\n``, ``\\"``, ``\\u001B``;
    non-ASCII characters as they are)."""
    text = json.dumps(without_nulls(event), ensure_ascii=False, separators=(",", ":"))
    if "\\u00" in text:  # a control character (rare): Jackson's hex digits
        text = _LOWER_HEX_ESCAPE.sub(lambda m: f"{m.group(1)}\\u00{m.group(2).upper()}", text)
    return text + "\n"


def _order(event: Event) -> tuple[Any, ...]:
    """``transforms.ocsf.in_order``'s sort key: time, log file, line number, uid; ascending,
    nulls first (Spark's default)."""
    log_source = event["metadata"]["log_source"]
    line = event["unmapped"]["source_line_number"]
    return (event["time"], log_source is not None, log_source or "", line is not None, line or 0,
            event["metadata"]["uid"])  # fmt: skip


def _collected(
    export: _Export, rows: Iterable[Mapping[str, Any]], fmt: str
) -> tuple[list[Any], int]:
    """The events of ``rows`` in the order of ``transforms.ocsf.in_order``, each already a JSON
    line (:func:`jackson_line`) for ``jsonl``, so that only the text stays in memory; and how
    many rows of the class were left out for want of a timestamp."""
    keyed: list[tuple[tuple[Any, ...], Any]] = []
    skipped = 0
    for row in rows:
        event = export.mapping(row)
        if event is None:
            skipped += row["event_ts"] is None and export.takes(row)
            continue
        keyed.append((_order(event), jackson_line(event) if fmt == "jsonl" else event))
    keyed.sort(key=operator.itemgetter(0))
    return [item for _, item in keyed], skipped


def _utf8(lines: Sequence[str]) -> bytes:
    return "".join(lines).encode("utf-8")


@dataclass(frozen=True)
class _Export:
    """One exported class: its table and columns, which rows it maps and how, its file."""

    table: str
    columns: tuple[str, ...]
    takes: Callable[[Mapping[str, Any]], bool]
    mapping: Callable[[Mapping[str, Any]], Event | None]
    name: str
    class_uid: int
    schema: StructType


_EXPORTS = (
    _Export(ae.TABLE_NAME, AUTH_COLUMNS, is_authentication, authentication_event,
            AUTHENTICATION_NAME, AUTHENTICATION_CLASS_UID, AUTHENTICATION),
    _Export(az.TABLE_NAME, AUTHZ_COLUMNS, is_api_activity, api_activity_event,
            API_ACTIVITY_NAME, API_ACTIVITY_CLASS_UID, API_ACTIVITY),
)  # fmt: skip


def export_without_spark(lake: str, out: str, fmt: str, window: Window) -> list[str]:
    """Writes ``out/authentication.<fmt>`` and ``out/api_activity.<fmt>`` from ``lake``'s
    silver tables: the files ``jobs.cli.export_ocsf.export`` writes with Spark.

    Args:
        lake: Lake root holding auth_events and authz_decisions (checked by the caller).
        out: Local folder (created); existing files of the same names are replaced.
        fmt: ``jsonl`` or ``parquet``.
        window: UTC days of ``event_date``; every row when open.

    Returns:
        One line per file, as ``export`` prints them: how many events of which class went
        where, and how many rows of the class were left out for want of a timestamp.
    """
    os.makedirs(out, exist_ok=True)
    lines = []
    for export in _EXPORTS:
        path = table_path(lake, export.table)
        rows = iter_rows(path, "event_date", window.start, window.end,
                         columns=export.columns, micros=("event_ts",))  # fmt: skip
        events, skipped = _collected(export, rows, fmt)
        target = os.path.join(out, f"{export.name}.{fmt}")
        written = write_events(events, target, fmt, schema=export.schema, render=_utf8)
        lines.append(export_line(written, export.class_uid, target, skipped))
    return lines
