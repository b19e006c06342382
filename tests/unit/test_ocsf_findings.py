"""Findings as OCSF 1.8.0 Detection Finding events (issue 19, "Findings out"): whole events for a
finding of each severity, every event valid against the JSON Schema of class 2004 compiled from
OCSF 1.8.0 (tests/ocsf/, scripts/ocsf_class_schema.py), a validator that rejects broken events,
hostile values kept as data, order and bytes. Rows made by hand, no Spark, no lake
(tests/integration/test_ocsf_findings.py reads them from Delta)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pyarrow.parquet as pq
import pytest

from jobs.ocsf_findings import (
    detection_finding,
    detection_findings,
    jsonl_bytes,
    without_nulls,
    write_events,
)
from schemas.ocsf import DETECTION_FINDING

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "ocsf" / "detection_finding-1.8.0.schema.json"
VERSION = "0.1.0"
LOG = "/var/log/kafka/server.log"
#: Control characters, a bidi override, markup, quotes, a formula and a newline.
HOSTILE = 'User:\x1b[31mevil\u202e"</script>\n=cmd|x'


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    """The committed JSON Schema, itself checked against draft 2020-12, as a validator."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def at(hour: int, minute: int = 0, second: int = 0, micro: int = 0) -> datetime:
    return datetime(2026, 11, 20, hour, minute, second, micro, tzinfo=UTC)


def row(fid: str, severity: str, subject_type: str, subject: str, **more: Any) -> dict[str, Any]:
    """A findings row with every column of ``schemas.findings.FINDINGS``."""
    base = {"finding_id": fid, "rule_id": "tokens.owner_mismatch", "kip": "KIP-48",
            "severity": severity, "subject_type": subject_type, "subject": subject,
            "discriminator": "", "node_id": "1", "first_seen_ts": at(9),
            "last_seen_ts": at(10, 30), "count": 1, "evidence": [], "explanation": "why",
            "run_id": "run-1", "finding_date": date(2026, 11, 20)}  # fmt: skip
    return {**base, **more}


HIGH = row(
    "f-high", "high", "principal", "User:alice", discriminator="renew tok-1", count=3,
    first_seen_ts=at(9, 0, 0, 123_999), last_seen_ts=at(10, 30, 5, 456_789),
    evidence=[{"source_path": LOG, "line_number": 12}, {"source_path": LOG, "line_number": 40}],
    explanation="User:alice renewed token tok-1 it does not own",
)  # fmt: skip
MEDIUM = row(
    "f-medium", "medium", "client_address", "10.99.0.66", rule_id="connect.internal_endpoint_non_worker_agent",
    kip="KIP-507", node_id="connect-1", evidence=[{"source_path": "s3://b/connect.log", "line_number": 19}],
)  # fmt: skip
LOW = row("f-low", "low", "listener", "INTERNAL", kip="KIP-801", node_id=None, first_seen_ts=None)
INFO = row("f-info", "info", "worker", "connect-1", kip="", evidence=None)

T_HIGH = 1795170605456  # 2026-11-20T10:30:05.456Z, microseconds truncated
T_DEFAULT = 1795170600000  # 2026-11-20T10:30:00Z


def common(severity_id: int, severity: str, time_ms: int, start_ms: int | None) -> dict[str, Any]:
    """The attributes every Detection Finding of these rows has, in the order of the schema."""
    return {
        "activity_id": 1, "activity_name": "Create", "category_uid": 2,
        "category_name": "Findings", "class_uid": 2004, "class_name": "Detection Finding",
        "type_uid": 200401, "type_name": "Detection Finding: Create", "time": time_ms,
        "timezone_offset": 0, "start_time": start_ms, "end_time": time_ms,
        "severity_id": severity_id, "severity": severity, "status_id": 1, "status": "New",
    }  # fmt: skip


def uid(finding_id: str, time_ms: int, count: int) -> str:
    """metadata.uid: sha-256 hex of class, finding id, time and count, one per line."""
    return hashlib.sha256(f"2004\n{finding_id}\n{time_ms}\n{count}".encode()).hexdigest()


PRODUCT = {
    "name": "kafka-security-audit",
    "vendor_name": "kafka-security-audit",
    "version": VERSION,
}


#: The Detection Finding of HIGH, nulls left out.
EXPECTED_HIGH: dict[str, Any] = {
    **common(4, "High", T_HIGH, 1795165200123),
    "count": 3,
    "is_alert": True,
    "message": "User:alice renewed token tok-1 it does not own",
    "metadata": {"uid": uid("f-high", T_HIGH, 3),
                 "version": "1.8.0", "product": PRODUCT},
    "finding_info": {
        "uid": "f-high",
        "title": "tokens.owner_mismatch: principal User:alice (renew tok-1)",
        "desc": "User:alice renewed token tok-1 it does not own",
        "types": ["tokens.owner_mismatch"],
        "first_seen_time": 1795165200123, "last_seen_time": T_HIGH,
        "analytic": {"uid": "tokens.owner_mismatch", "name": "tokens.owner_mismatch",
                     "category": "KIP-48", "type": "Rule", "type_id": 1},
        "data_sources": [LOG],
        "related_events_count": 3,
    },
    "evidences": [
        {"name": "principal", "actor": {"user": {"uid": "User:alice", "name": "alice", "type": "User", "type_id": 1}}},
        {"name": "log line", "uid": f"{LOG}:12", "data": {"line_number": 12},
         "file": {"name": "server.log", "path": LOG, "type": "Regular File", "type_id": 1}},
        {"name": "log line", "uid": f"{LOG}:40", "data": {"line_number": 40},
         "file": {"name": "server.log", "path": LOG, "type": "Regular File", "type_id": 1}},
    ],
    "resources": [{"type": "principal", "name": "User:alice"}],
    "unmapped": {"discriminator": "renew tok-1", "node_id": "1", "run_id": "run-1"},
}  # fmt: skip


def test_high_principal_finding_whole_event() -> None:
    """A principal is the evidence's actor.user; each position an artifact of its own."""
    assert without_nulls(detection_finding(HIGH, VERSION)) == EXPECTED_HIGH


def test_medium_client_address_finding_whole_event() -> None:
    """A client address is the evidence's src_endpoint.ip; an object-store path keeps its URI."""
    assert without_nulls(detection_finding(MEDIUM, VERSION)) == {
        **common(3, "Medium", T_DEFAULT, 1795165200000),
        "count": 1,
        "is_alert": True,
        "message": "why",
        "metadata": {"uid": uid("f-medium", T_DEFAULT, 1),
                     "version": "1.8.0", "product": PRODUCT},
        "finding_info": {
            "uid": "f-medium",
            "title": "connect.internal_endpoint_non_worker_agent: client_address 10.99.0.66",
            "desc": "why",
            "types": ["connect.internal_endpoint_non_worker_agent"],
            "first_seen_time": 1795165200000, "last_seen_time": T_DEFAULT,
            "analytic": {"uid": "connect.internal_endpoint_non_worker_agent",
                         "name": "connect.internal_endpoint_non_worker_agent",
                         "category": "KIP-507", "type": "Rule", "type_id": 1},
            "data_sources": ["s3://b/connect.log"],
            "related_events_count": 1,
        },
        "evidences": [
            {"name": "client_address", "src_endpoint": {"ip": "10.99.0.66"}},
            {"name": "log line", "uid": "s3://b/connect.log:19", "data": {"line_number": 19},
             "file": {"name": "connect.log", "path": "s3://b/connect.log", "type": "Regular File", "type_id": 1}},
        ],
        "resources": [{"type": "client_address", "name": "10.99.0.66"}],
        "unmapped": {"node_id": "connect-1", "run_id": "run-1"},
    }  # fmt: skip


def test_low_and_info_findings_whole_events() -> None:
    """No first_seen: no start_time; no evidence and a subject that is neither a principal nor
    an address: resources only; no node: no node_id; an empty KIP: no analytic category."""
    analytic = {
        "uid": "tokens.owner_mismatch",
        "name": "tokens.owner_mismatch",
        "type": "Rule",
        "type_id": 1,
    }
    assert [without_nulls(detection_finding(r, None)) for r in (LOW, INFO)] == [
        {
            **{k: v for k, v in common(2, "Low", T_DEFAULT, None).items() if k != "start_time"},
            "count": 1, "is_alert": False, "message": "why",
            "metadata": {"uid": uid("f-low", T_DEFAULT, 1), "version": "1.8.0",
                         "product": {"name": "kafka-security-audit", "vendor_name": "kafka-security-audit"}},
            "finding_info": {"uid": "f-low", "title": "tokens.owner_mismatch: listener INTERNAL",
                             "desc": "why", "types": ["tokens.owner_mismatch"],
                             "last_seen_time": T_DEFAULT, "analytic": {**analytic, "category": "KIP-801"},
                             "related_events_count": 1},
            "resources": [{"type": "listener", "name": "INTERNAL"}],
            "unmapped": {"run_id": "run-1"},
        },
        {
            **common(1, "Informational", T_DEFAULT, 1795165200000),
            "count": 1, "is_alert": False, "message": "why",
            "metadata": {"uid": uid("f-info", T_DEFAULT, 1), "version": "1.8.0",
                         "product": {"name": "kafka-security-audit", "vendor_name": "kafka-security-audit"}},
            "finding_info": {"uid": "f-info", "title": "tokens.owner_mismatch: worker connect-1",
                             "desc": "why", "types": ["tokens.owner_mismatch"],
                             "first_seen_time": 1795165200000, "last_seen_time": T_DEFAULT,
                             "analytic": analytic, "related_events_count": 1},
            "resources": [{"type": "worker", "name": "connect-1"}],
            "unmapped": {"node_id": "1", "run_id": "run-1"},
        },
    ]  # fmt: skip


def test_unknown_severity_is_other_with_its_text() -> None:
    """A severity the rules do not use is 99 Other, its caption the text, no is_alert."""
    event = without_nulls(detection_finding(row("f-x", "critical", "principal", "User:bob"), None))
    assert {k: event[k] for k in ("severity_id", "severity")} == {
        "severity_id": 99,
        "severity": "critical",
    }
    assert "is_alert" not in event


def test_metadata_uid_stable_for_the_same_finding_new_when_seen_again() -> None:
    """Exported again (another run, another version): the same event uid; seen later: new."""
    first = detection_finding(HIGH, VERSION)
    again = detection_finding({**HIGH, "run_id": "run-2"}, None)
    later = detection_finding({**HIGH, "last_seen_ts": at(11), "count": 4}, VERSION)
    assert first is not None and again is not None and later is not None
    uids = [e["metadata"]["uid"] for e in (first, again, later)]
    assert uids == [
        uid("f-high", T_HIGH, 3),
        uid("f-high", T_HIGH, 3),
        uid("f-high", 1795172400000, 4),
    ]


#: Rows the rules never write but the table allows, or an attacker can shape.
ODD = [
    row("f-v6", "medium", "client_address", "fe80::1%eth0"),
    row("f-v6b", "medium", "client_address", "2001:DB8::1"),
    row("f-host", "medium", "client_address", "broker-1.example.com"),
    row("f-nocolon", "low", "principal", "ANONYMOUS"),
    row("f-group", "low", "principal", "Group:ops"),
    row("f-hostile", "high", "principal", HOSTILE, discriminator=HOSTILE, explanation=HOSTILE,
        node_id=HOSTILE, evidence=[{"source_path": f"/logs/{HOSTILE}", "line_number": 1}]),
    row("f-nopath", "low", "connection", "c-1", evidence=[
        {"source_path": None, "line_number": 7}, {"source_path": "/l/", "line_number": None},
        {"source_path": None, "line_number": None}]),
    row("f-crit", "critical", "resource", "TOPIC:LITERAL:t", kip=""),
    row("f-empty", "info", "token", "", explanation=""),
]  # fmt: skip


def test_every_event_is_valid_ocsf_1_8_0() -> None:
    """The four severities and the odd rows, as written (JSON lines), against the JSON Schema of
    Detection Finding compiled from OCSF 1.8.0."""
    events, skipped = detection_findings([HIGH, MEDIUM, LOW, INFO, *ODD], VERSION)
    lines = jsonl_bytes(events).decode("ascii").splitlines()
    check = validator()
    assert (len(lines), skipped) == (13, 0)
    assert [[e.message for e in check.iter_errors(json.loads(line))] for line in lines] == [[]] * 13


def test_subjects_of_odd_rows() -> None:
    """IP literals normalised, a host name as the endpoint's name, a principal without a type
    and one of another type."""
    events = {e["finding_info"]["uid"]: without_nulls(e) for e in detection_findings(ODD, None)[0]}
    assert [events[f]["evidences"][0] for f in ("f-v6", "f-v6b", "f-host", "f-nocolon", "f-group")] == [
        {"name": "client_address", "src_endpoint": {"ip": "fe80::1%eth0"}},
        {"name": "client_address", "src_endpoint": {"ip": "2001:db8::1"}},
        {"name": "client_address", "src_endpoint": {"name": "broker-1.example.com"}},
        {"name": "principal", "actor": {"user": {"uid": "ANONYMOUS", "name": "ANONYMOUS", "type": "Unknown", "type_id": 0}}},
        {"name": "principal", "actor": {"user": {"uid": "Group:ops", "name": "ops", "type": "Group", "type_id": 99}}},
    ]  # fmt: skip
    assert events["f-nopath"]["evidences"] == [
        {"name": "log line", "data": {"line_number": 7}},
        {"name": "log line", "uid": "/l/", "file": {"name": "/l/", "path": "/l/", "type": "Regular File", "type_id": 1}},
    ]  # fmt: skip
    assert events["f-nopath"]["finding_info"]["data_sources"] == ["/l/"]


def broken(**changes: Any) -> dict[str, Any]:
    event = without_nulls(detection_finding(HIGH, VERSION))
    assert isinstance(event, dict)
    event.update(changes)
    return {k: v for k, v in event.items() if v is not None}


@pytest.mark.parametrize(
    ("event", "errors"),
    [
        (broken(class_uid=None), [("required", "$", "'class_uid' is a required property")]),
        (broken(severity_id="4"), [("enum", "$.severity_id", "'4' is not one of [3, 6, 0, 1, 2, 99, 4, 5]"),
                                   ("type", "$.severity_id", "'4' is not of type 'integer'")]),
        (broken(severity_id=7), [("enum", "$.severity_id", "7 is not one of [3, 6, 0, 1, 2, 99, 4, 5]")]),
        (broken(class_uid=3002), [("const", "$.class_uid", "2004 was expected")]),
        (broken(finding_info={"title": "t"}), [("required", "$.finding_info", "'uid' is a required property")]),
        (broken(kafka_topic="t"), [("additionalProperties", "$", "Additional properties are not allowed ('kafka_topic' was unexpected)")]),
        (broken(time="2026-11-20"), [("type", "$.time", "'2026-11-20' is not of type 'integer'")]),
        (broken(evidences=[{"name": "log line"}]), [("anyOf", "$.evidences[0]", "{'name': 'log line'} is not valid under any of the given schemas")]),
        (broken(resources=[{"type": "principal", "name": 7}]), [("type", "$.resources[0].name", "7 is not of type 'string'")]),
    ],
    ids=["no class_uid", "severity_id text", "severity_id 7", "another class", "finding without uid",
         "unknown attribute", "time as text", "evidence without artifact", "resource name a number"],
)  # fmt: skip
def test_validator_rejects_broken_events(
    event: dict[str, Any], errors: list[tuple[str, str, str]]
) -> None:
    """The schema bites: each broken copy of a valid event fails, for the reason broken."""
    found = [(e.validator, e.json_path, e.message) for e in validator().iter_errors(event)]
    assert found == errors


def test_hostile_values_stay_data_on_one_ascii_line() -> None:
    """Control, bidi and markup characters are escaped by JSON, not changed: the line is ASCII
    without a raw control character, and reads back as the very same text."""
    events, _ = detection_findings([ODD[5]], None)
    text = jsonl_bytes(events).decode("ascii")
    assert text.count("\n") == 1 and text.endswith("}\n")
    assert [c for c in text[:-1] if ord(c) < 0x20 or ord(c) > 0x7E] == []
    assert text.count(r"User:\u001b[31mevil\u202e\"</script>\n=cmd|x") == 11
    back = json.loads(text)
    assert [back["resources"][0]["name"], back["message"], back["unmapped"]["discriminator"],
            back["evidences"][0]["actor"]["user"]["name"], back["evidences"][1]["file"]["path"]] == [
        HOSTILE, HOSTILE, HOSTILE, HOSTILE[5:], f"/logs/{HOSTILE}"]  # fmt: skip


def test_order_and_bytes_do_not_depend_on_row_order() -> None:
    """Sorted by time, then finding uid: any order of the rows gives the same bytes."""
    rows = [HIGH, MEDIUM, LOW, INFO, *ODD]
    expected = jsonl_bytes(detection_findings(rows, VERSION)[0])
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert jsonl_bytes(detection_findings(shuffled, VERSION)[0]) == expected
    order = [json.loads(line)["finding_info"]["uid"] for line in expected.decode().splitlines()]
    assert order == ["f-crit", "f-empty", "f-group", "f-host", "f-hostile", "f-info", "f-low",
                     "f-medium", "f-nocolon", "f-nopath", "f-v6", "f-v6b", "f-high"]  # fmt: skip


def test_findings_without_timestamp_are_left_out_and_counted() -> None:
    """OCSF requires time: a finding without last_seen is not an event; the count says so."""
    untimed = row("f-none", "high", "principal", "User:x", first_seen_ts=None, last_seen_ts=None)
    events, skipped = detection_findings([untimed, LOW], None)
    assert ([e["finding_info"]["uid"] for e in events], skipped) == (["f-low"], 1)
    assert detection_findings([untimed], None) == ([], 1)


def test_no_findings_empty_files(tmp_path: Path) -> None:
    """No rows: an empty JSON lines file, a Parquet file of no rows with the class's columns."""
    assert detection_findings([], VERSION) == ([], 0)
    assert write_events([], str(tmp_path / "d.jsonl"), "jsonl") == 0
    assert (tmp_path / "d.jsonl").read_bytes() == b""
    assert write_events([], str(tmp_path / "d.parquet"), "parquet") == 0
    table = pq.read_table(tmp_path / "d.parquet")
    assert (table.num_rows, table.column_names) == (0, DETECTION_FINDING.fieldNames())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "d.parquet"]


def test_parquet_holds_the_same_events(tmp_path: Path) -> None:
    """Parquet keeps the nesting; without its nulls each row is the JSON line's event."""
    events, _ = detection_findings([HIGH, MEDIUM, LOW, INFO, *ODD], VERSION)
    assert write_events(events, str(tmp_path / "d.parquet"), "parquet") == 13
    rows = pq.read_table(tmp_path / "d.parquet").to_pylist()
    lines = jsonl_bytes(events).decode("ascii").splitlines()
    assert [without_nulls(r) for r in rows] == [json.loads(line) for line in lines]
