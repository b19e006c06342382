"""gold.findings as OCSF 1.8.0 Detection Finding events (class 2004), for security lakes and SIEMs.

``kafka-audit export-ocsf`` writes them to ``detection_finding.jsonl`` (or ``.parquet``) beside
the Authentication and API Activity files. The findings table is a small aggregate (tens of
rows a day), so it is read with deltalake (``jobs.report.read_gold``) and mapped here in plain
Python: no Spark session. Output schema: ``schemas.ocsf.DETECTION_FINDING``; mapping table:
docs/report-and-ocsf.md. Every event validates against the JSON Schema of the class compiled
from OCSF 1.8.0 (tests/ocsf/, ``scripts/ocsf_class_schema.py``).

No log text beyond what the findings table holds reaches an event: the subject (a principal,
an address...), the rule's one-sentence explanation, the evidence positions (file and line
number), and token ids already fingerprinted by the rules. Values keep their exact text; the
JSON writer escapes control and non-ASCII characters (``\\u001b``), so an event is one line
of ASCII whatever a hostile client name holds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import ipaddress
import json
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from jobs.report import Window, check_lake, read_gold
from schemas import findings
from schemas.ocsf import (
    DETECTION_FINDING,
    DETECTION_FINDING_CLASS_UID,
    DETECTION_FINDING_NAME,
    DETECTION_FINDING_TYPE_UID,
    FINDINGS_CATEGORY_UID,
    OCSF_VERSION,
)

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

Event = dict[str, Any]

#: findings.severity -> OCSF severity_id; any other text is 99 Other, its caption the text.
SEVERITY_IDS: Mapping[str, int] = {"high": 4, "medium": 3, "low": 2, "info": 1}
SEVERITY_CAPTIONS: Mapping[int, str] = {1: "Informational", 2: "Low", 3: "Medium", 4: "High"}
#: Severities whose findings are alertable signals (``is_alert`` true; false for the others of
#: ``schemas.findings.SEVERITIES``, absent for a severity the rules do not use).
ALERT_SEVERITIES: tuple[str, ...] = ("high", "medium")

#: ``metadata.product`` of every Detection Finding: the tool that found it.
PRODUCT_NAME = "kafka-security-audit"
DISTRIBUTION = "kafka-security-audit"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def epoch_ms(moment: datetime) -> int:
    """``moment`` (aware) as OCSF ``timestamp_t``: whole milliseconds since the Unix epoch,
    sub-millisecond part truncated (as Spark's ``unix_millis``)."""
    return (moment - _EPOCH) // _MS


def product_version() -> str | None:
    """The installed version of the ``kafka-security-audit`` distribution; None when it is not
    installed (a checkout on ``PYTHONPATH``): ``metadata.product.version`` is then left out."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def ocsf_user(principal: str) -> Event:
    """A KafkaPrincipal string as an OCSF ``user`` (as ``transforms.ocsf`` maps it): ``uid`` the
    string, ``type`` and ``name`` split on the first ':' (KafkaPrincipal.toString), ``type_id``
    1 User for the ``User`` type, 99 Other for another; a string without ':' is the name, with
    ``type`` Unknown and ``type_id`` 0 Unknown."""
    kind, colon, name = principal.partition(":")
    if not colon:
        return {"uid": principal, "name": principal, "type": "Unknown", "type_id": 0}
    return {"uid": principal, "name": name, "type": kind, "type_id": 1 if kind == "User" else 99}


def _subject_evidence(subject_type: str, subject: str) -> Event | None:
    """The subject as an Evidence Artifact: a principal as ``actor.user``, a client address as
    ``src_endpoint.ip`` (``name`` when it is not an IP literal); None for other subjects."""
    if subject_type == "principal":
        return {"name": subject_type, "actor": {"user": ocsf_user(subject)}}
    if subject_type == "client_address":
        try:
            endpoint = {"ip": str(ipaddress.ip_address(subject))}
        except ValueError:
            endpoint = {"name": subject}
        return {"name": subject_type, "src_endpoint": endpoint}
    return None


def _line_evidence(position: Mapping[str, Any]) -> Event | None:
    """One evidence position as an Evidence Artifact: ``uid`` ``path:line``, ``file`` the log
    file (type 1 Regular File), ``data.line_number``; None when both are unknown."""
    path, line = position.get("source_path"), position.get("line_number")
    if path is None and line is None:
        return None
    file = None
    if path is not None:
        file = {"name": posixpath.basename(path) or path, "path": path,
                "type": "Regular File", "type_id": 1}  # fmt: skip
    return {
        "name": "log line",
        "uid": f"{path}:{line}" if path is not None and line is not None else path,
        "file": file,
        "data": {"line_number": line} if line is not None else None,
    }


def _finding_info(row: Mapping[str, Any], first_ms: int | None, last_ms: int) -> Event:
    """finding_info: uid the finding id, the rule as analytic (category its KIP), the subject
    in the title, the explanation as desc, the evidence's log files as data sources."""
    subject = f"{row['subject_type']} {row['subject']}"
    if row["discriminator"]:
        subject += f" ({row['discriminator']})"
    paths = {p["source_path"] for p in row["evidence"] or () if p["source_path"] is not None}
    return {
        "uid": row["finding_id"],
        "title": f"{row['rule_id']}: {subject}",
        "desc": row["explanation"],
        "types": [row["rule_id"]],
        "first_seen_time": first_ms,
        "last_seen_time": last_ms,
        "analytic": {
            "uid": row["rule_id"],
            "name": row["rule_id"],
            "category": row["kip"] or None,
            "type": "Rule",
            "type_id": 1,
        },
        "data_sources": sorted(paths) or None,
        "related_events_count": row["count"],
    }


def detection_finding(row: Mapping[str, Any], version: str | None) -> Event | None:
    """One findings row as an OCSF 1.8.0 Detection Finding (class 2004, activity 1 Create,
    status 1 New): the keys and nesting of ``schemas.ocsf.DETECTION_FINDING``, None where a
    value is unknown (:func:`without_nulls` drops them for JSON).

    Args:
        row: A row of gold.findings (``schemas.findings.FINDINGS``) as a dict, timestamps aware.
        version: ``metadata.product.version`` (:func:`product_version`).

    Returns:
        The event, or None when the finding has no ``last_seen_ts`` (OCSF requires ``time``).
        ``time`` and ``end_time`` are last seen, ``start_time`` first seen (epoch ms);
        ``severity_id`` from :data:`SEVERITY_IDS` (99 Other for another severity);
        ``metadata.uid`` sha-256 of class, finding id, time and count: an unchanged finding
        exported again has the same uid, one seen again later a new one.
    """
    if row["last_seen_ts"] is None:
        return None
    last_ms = epoch_ms(row["last_seen_ts"])
    first_ms = epoch_ms(row["first_seen_ts"]) if row["first_seen_ts"] is not None else None
    severity_id = SEVERITY_IDS.get(row["severity"], 99)
    key = f"{DETECTION_FINDING_CLASS_UID}\n{row['finding_id']}\n{last_ms}\n{row['count']}"
    evidences = [_subject_evidence(row["subject_type"], row["subject"])]
    evidences += [_line_evidence(p) for p in row["evidence"] or ()]
    kept = [e for e in evidences if e is not None]
    alert = row["severity"] in ALERT_SEVERITIES if row["severity"] in SEVERITY_IDS else None
    return {
        "activity_id": 1, "activity_name": "Create",
        "category_uid": FINDINGS_CATEGORY_UID, "category_name": "Findings",
        "class_uid": DETECTION_FINDING_CLASS_UID, "class_name": "Detection Finding",
        "type_uid": DETECTION_FINDING_TYPE_UID, "type_name": "Detection Finding: Create",
        "time": last_ms, "timezone_offset": 0, "start_time": first_ms, "end_time": last_ms,
        "count": row["count"],
        "severity_id": severity_id,
        "severity": SEVERITY_CAPTIONS.get(severity_id, row["severity"]),
        "status_id": 1, "status": "New",
        "is_alert": alert,
        "message": row["explanation"],
        "metadata": {
            "uid": hashlib.sha256(key.encode()).hexdigest(), "version": OCSF_VERSION,
            "product": {"name": PRODUCT_NAME, "vendor_name": PRODUCT_NAME, "version": version},
            "log_source": None, "event_code": None,
        },
        "finding_info": _finding_info(row, first_ms, last_ms),
        "evidences": kept or None,
        "resources": [{"type": row["subject_type"], "name": row["subject"]}],
        "unmapped": {"discriminator": row["discriminator"] or None,
                     "node_id": row["node_id"], "run_id": row["run_id"]},
    }  # fmt: skip


def detection_findings(
    rows: Iterable[Mapping[str, Any]], version: str | None
) -> tuple[list[Event], int]:
    """The Detection Findings of ``rows`` (:func:`detection_finding`), ordered by ``time``,
    then ``finding_info.uid``, then ``metadata.uid``: the same rows in any order give the same
    list.

    Returns:
        The events, and how many rows were left out for want of a timestamp.
    """
    mapped = [detection_finding(row, version) for row in rows]
    events = [e for e in mapped if e is not None]
    events.sort(key=lambda e: (e["time"], e["finding_info"]["uid"], e["metadata"]["uid"]))
    return events, len(mapped) - len(events)


def without_nulls(value: Any) -> Any:
    """``value`` with every None member of a dict removed, at any depth (OCSF JSON omits
    absent attributes; the JSON Schema of a class allows no null). None elements of a list
    stay."""
    if isinstance(value, dict):
        return {k: without_nulls(v) if isinstance(v, dict | list) else v
                for k, v in value.items() if v is not None}  # fmt: skip
    if isinstance(value, list):
        return [without_nulls(v) if isinstance(v, dict | list) else v for v in value]
    return value


def jsonl_bytes(events: Sequence[Event]) -> bytes:
    """One event per line, nulls left out, compact, ASCII (control and non-ASCII characters
    escaped by ``json.dumps``), in the given order; b'' for no events."""
    lines = [json.dumps(without_nulls(e), separators=(",", ":")) + "\n" for e in events]
    return "".join(lines).encode("ascii")


def write_events(
    events: Sequence[Any],
    target: str,
    fmt: str,
    *,
    schema: StructType = DETECTION_FINDING,
    render: Callable[[Sequence[Any]], bytes] = jsonl_bytes,
) -> int:
    """Writes ``events`` to ``target`` (replaced whole, through a temporary file beside it).

    Args:
        events: Events of one class (Detection Findings of :func:`detection_findings` unless
            ``schema`` says otherwise), in the order to write; for ``jsonl``, whatever
            ``render`` takes (``jobs.ocsf_events`` passes lines already rendered).
        target: Local file path; its folder must exist.
        fmt: ``jsonl`` (``render``: :func:`jsonl_bytes` by default) or ``parquet`` (pyarrow,
            the columns of ``schema``, nulls kept as nulls).
        schema: The class's ``schemas.ocsf`` schema.
        render: Events -> the bytes of the JSON Lines file.

    Returns:
        The number of events written.
    """
    scratch = f"{target}.tmp-{os.getpid()}"
    try:
        if fmt == "parquet":
            import pyarrow as pa  # noqa: PLC0415
            import pyarrow.parquet as pq  # noqa: PLC0415

            from jobs.lake.embedded_files import arrow_schema  # noqa: PLC0415

            table = pa.Table.from_pylist(list(events), schema=arrow_schema(schema))
            pq.write_table(table, scratch)
        else:
            with open(scratch, "wb") as out:
                out.write(render(events))
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.remove(scratch)
    return len(events)


def export_detection_findings(lake: str, out: str, fmt: str, window: Window) -> str:
    """Writes the findings of ``lake`` in ``window`` to ``out/detection_finding.<fmt>``.

    Args:
        lake: Lake root (path or URI) holding the gold ``findings`` table.
        out: Local folder (created); an existing file of the same name is replaced.
        fmt: ``jsonl`` or ``parquet``.
        window: UTC days of ``finding_date`` (the day of last_seen); all days when open.

    Returns:
        The line ``export-ocsf`` prints: how many events went where, and how many findings
        were left out for want of a timestamp.

    Raises:
        InputError: the lake or its findings table is missing.
    """
    check_lake(lake, [findings.TABLE_NAME])
    rows = read_gold(lake, findings.TABLE_NAME, findings.PARTITION_COLUMNS[0], window)
    events, skipped = detection_findings(rows, product_version())
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, f"{DETECTION_FINDING_NAME}.{fmt}")
    written = write_events(events, target, fmt)
    return export_line(written, DETECTION_FINDING_CLASS_UID, target, skipped)


def export_line(written: int, class_uid: int, target: str, skipped: int) -> str:
    """The line ``export-ocsf`` prints for one file: how many events of which class went
    where, and how many were left out for want of a timestamp (when any)."""
    note = f" ({skipped} without a timestamp left out)" if skipped else ""
    return f"{written:>8} OCSF class {class_uid} events -> {target}{note}"
