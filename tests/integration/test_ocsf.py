"""kafka-audit export-ocsf: OCSF 1.8.0 events from the lake built from samples/."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from jobs.cli.export_ocsf import export
from jobs.cli.main import main
from jobs.report import Window
from schemas.ocsf import API_ACTIVITY, AUTHENTICATION, DETECTION_FINDING, OCSF_VERSION, REQUIRED
from transforms.ocsf import in_order


def _uid(class_uid: int, path: Path, line: int) -> str:
    return hashlib.sha256(f"{class_uid}\n{path}\n{line}".encode()).hexdigest()


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _get(event: dict[str, Any], dotted: str) -> Any:
    value: Any = event
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


@pytest.fixture(scope="module")
def exported(
    spark: SparkSession, samples_lake: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("ocsf")
    return out, export(spark, str(samples_lake), str(out), "jsonl", Window())


def test_export_lines_and_files(exported: tuple[Path, list[str]]) -> None:
    out, lines = exported
    assert lines == [
        f"      10 OCSF class 3002 events -> {out}/authentication.jsonl",
        f"       4 OCSF class 6003 events -> {out}/api_activity.jsonl (5 without a timestamp left out)",
        f"       0 OCSF class 2004 events -> {out}/detection_finding.jsonl",
    ]
    assert sorted(p.name for p in out.iterdir()) == [
        "api_activity.jsonl", "authentication.jsonl", "detection_finding.jsonl"]  # fmt: skip
    assert (out / "detection_finding.jsonl").read_text(encoding="utf-8") == ""  # no findings


def test_authentication_failure_exact(exported: tuple[Path, list[str]], samples_dir: Path) -> None:
    """Strimzi broker 0: 'Failed authentication with /10.42.1.38 (channelId=...) (SSL handshake
    failed)' on listener TLS-9093, samples/sasl-authentication.log line 12."""
    source = samples_dir / "sasl-authentication.log"
    events = _events(exported[0] / "authentication.jsonl")
    assert [(e["unmapped"]["source_line_number"], e["metadata"]["event_code"]) for e in events] == [
        (17, "authentication_failed"),
        (12, "authentication_failed"),
        (13, "client_authentication_failed"),
        (5, "authentication_failed"),
        (6, "authentication_failed"),
        (7, "authentication_failed"),
        (8, "authentication_failed"),
        (9, "authentication_failed"),
        (24, "authentication_failed"),
        (25, "client_authentication_failed"),
    ]
    assert events[1] == {
        "activity_id": 1, "activity_name": "Logon",
        "category_uid": 3, "category_name": "Identity & Access Management",
        "class_uid": 3002, "class_name": "Authentication",
        "type_uid": 300201, "type_name": "Authentication: Logon",
        "time": 1669235385061, "timezone_offset": 0,
        "severity_id": 2, "severity": "Low", "status_id": 2, "status": "Failure",
        "status_code": "SSL_HANDSHAKE_FAILED", "status_detail": "SSL handshake failed",
        "message": "Authentication failed: SSL handshake failed",
        "metadata": {
            "uid": _uid(3002, source, 12), "version": "1.8.0",
            "product": {"name": "Apache Kafka", "vendor_name": "Apache Software Foundation"},
            "log_source": str(source), "event_code": "authentication_failed",
        },
        "user": {"name": "unknown", "type": "Unknown", "type_id": 0},
        "auth_protocol_id": 99, "auth_protocol": "TLS",
        "logon_type_id": 3, "logon_type": "Network", "is_remote": True,
        "src_endpoint": {"ip": "10.42.1.38", "port": 43546},
        "dst_endpoint": {"uid": "0", "ip": "10.42.1.34", "port": 9093, "interface_name": "TLS-9093"},
        "session": {"uid": "10.42.1.34:9093-10.42.1.38:43546-4"},
        "unmapped": {
            "source_line_number": 12, "node_id": "0", "side": "broker",
            "failure_reason_code": "SSL_HANDSHAKE_FAILED", "security_protocol": "SASL_SSL",
            "is_reauthentication": False,
        },
    }  # fmt: skip
    # A client-side failure (OAUTHBEARER token refused): the client by client.id, the broker it
    # called, OAUTH 2.0 from the reason code.
    assert {k: events[9][k] for k in ("auth_protocol_id", "auth_protocol", "src_endpoint", "dst_endpoint")} == {
        "auth_protocol_id": 6, "auth_protocol": "OAUTH 2.0",
        "src_endpoint": {"name": "connect-adminclient-producer"},
        "dst_endpoint": {"uid": "-1", "hostname": "broker", "ip": "172.18.0.4", "port": 9092},
    }  # fmt: skip


def test_denial_exact(exported: tuple[Path, list[str]], samples_dir: Path) -> None:
    """SimpleAclAuthorizer 'Principal = User:skyDriveProducer is Denied Operation = Describe from
    host = 10.16.19.213 on resource = Topic:LITERAL:__consumer_offsets', authorizer.log line 5.
    The AclAuthorizer lines without a timestamp (12-20) are left out. The four denials share one
    millisecond: they keep their line order (5-8), whatever path the samples lie under."""
    source = samples_dir / "authorizer.log"
    events = _events(exported[0] / "api_activity.jsonl")
    assert [e["resources"][0]["name"] for e in events] == [
        "__consumer_offsets", "test", "qa.dcSacramento.skydrivetest", "__confluent.support.metrics",
    ]  # fmt: skip
    assert events[0] == {
        "activity_id": 2, "activity_name": "Read",
        "category_uid": 6, "category_name": "Application Activity",
        "class_uid": 6003, "class_name": "API Activity",
        "type_uid": 600302, "type_name": "API Activity: Read",
        "time": 1591194326298, "timezone_offset": 0,
        "severity_id": 2, "severity": "Low", "status_id": 2, "status": "Failure",
        "status_code": "DENIED",
        "message": "User:skyDriveProducer DENIED Describe on TOPIC __consumer_offsets",
        "metadata": {
            "uid": _uid(6003, source, 5), "version": "1.8.0",
            "product": {"name": "Apache Kafka", "vendor_name": "Apache Software Foundation"},
            "log_source": str(source), "event_code": "DENIED",
        },
        "actor": {
            "user": {"uid": "User:skyDriveProducer", "name": "skyDriveProducer", "type": "User", "type_id": 1},
            "authorizations": [{"decision": "DENIED", "policy": {"type": "SimpleAclAuthorizer"}}],
        },
        "api": {"operation": "Describe"},
        "resources": [{"type": "TOPIC", "name": "__consumer_offsets"}],
        "src_endpoint": {"ip": "10.16.19.213"},
        "dst_endpoint": {"uid": "samples"},
        "unmapped": {"source_line_number": 5, "node_id": "samples", "acl_operation": "DESCRIBE", "pattern_type": "LITERAL"},
    }  # fmt: skip


def test_every_event_is_valid_ocsf(exported: tuple[Path, list[str]]) -> None:
    """Every required attribute present, uids by OCSF's rules, deterministic order, no secret."""
    out = exported[0]
    for name, class_uid in (("authentication", 3002), ("api_activity", 6003)):
        text = (out / f"{name}.jsonl").read_text(encoding="utf-8")
        events = _events(out / f"{name}.jsonl")
        assert events
        for event in events:
            missing = [p for p in REQUIRED[class_uid] if _get(event, p) in (None, "", [], {})]
            assert missing == [], event
            assert (
                event["class_uid"] == class_uid == event["category_uid"] * 1000 + class_uid % 1000
            )
            assert event["type_uid"] == class_uid * 100 + event["activity_id"]
            assert event["metadata"]["version"] == OCSF_VERSION
            principal = _get(event, "user") or _get(event, "actor.user")
            assert principal.get("name") or principal.get("uid")
        keys = [
            (e["time"], e["metadata"]["log_source"], e["unmapped"]["source_line_number"],
             e["metadata"]["uid"])
            for e in events
        ]  # fmt: skip
        assert keys == sorted(keys)
        assert len({e["metadata"]["uid"] for e in events}) == len(events)
        for secret_marker in ("REDACTED", "hmac", "authBytes", "password"):
            assert secret_marker.lower() not in text.lower()


def test_json_round_trip(
    spark: SparkSession, exported: tuple[Path, list[str]], samples_lake: Path
) -> None:
    """The files read back with the declared schemas equal the transforms' output."""
    from jobs.lake.tables import Engine, Lake  # noqa: PLC0415
    from schemas import auth_events, authz_decisions  # noqa: PLC0415
    from transforms.ocsf import api_activity_events, authentication_events  # noqa: PLC0415

    lake = Lake(spark, str(samples_lake), Engine.EMBEDDED)
    cases = [
        ("authentication", AUTHENTICATION,
         authentication_events(lake.read(auth_events.TABLE_NAME, auth_events.AUTH_EVENTS))),
        ("api_activity", API_ACTIVITY,
         api_activity_events(lake.read(authz_decisions.TABLE_NAME, authz_decisions.AUTHZ_DECISIONS))),
    ]  # fmt: skip
    for name, schema, expected in cases:
        assert expected.schema == schema
        back = spark.read.schema(schema).json(str(exported[0] / f"{name}.jsonl"))
        assertDataFrameEqual(back, in_order(expected), checkRowOrder=True)


def test_parquet_empty_window(spark: SparkSession, samples_lake: Path, tmp_path: Path) -> None:
    from datetime import date  # noqa: PLC0415

    lines = export(
        spark,
        str(samples_lake),
        str(tmp_path),
        "parquet",
        Window(date(2030, 1, 1), date(2030, 1, 2)),
    )
    assert lines == [
        f"       0 OCSF class 3002 events -> {tmp_path}/authentication.parquet",
        f"       0 OCSF class 6003 events -> {tmp_path}/api_activity.parquet",
        f"       0 OCSF class 2004 events -> {tmp_path}/detection_finding.parquet",
    ]
    for name, schema in (
        ("authentication", AUTHENTICATION),
        ("api_activity", API_ACTIVITY),
        ("detection_finding", DETECTION_FINDING),
    ):
        table = pq.read_table(tmp_path / f"{name}.parquet")
        assert (table.num_rows, table.column_names) == (0, schema.fieldNames())


def test_missing_lake_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["export-ocsf", "--lake", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]
    )
    assert (code, capsys.readouterr().err) == (
        1,
        f"kafka-audit: error: lake '{tmp_path / 'nowhere'}' not found: expected the folder of a kafka-audit run\n",
    )
    assert not (tmp_path / "out").exists()


def _row(schema: Any, **values: Any) -> tuple[Any, ...]:
    lineage = {"run_id": "r", "source_path": "/logs/b1/server.log", "line_number": 1, "node_id": "1",
               "level": "INFO", "event_ts": datetime(2026, 11, 20, 10, 0, tzinfo=UTC)}  # fmt: skip
    return tuple({**lineage, **values}.get(name) for name in schema.fieldNames())


def _json_rows(events: DataFrame) -> list[dict[str, Any]]:
    """Each event as the JSON writer renders it (nulls omitted)."""
    return [json.loads(row[0]) for row in events.select(F.to_json(F.struct("*"))).collect()]


def test_principals_mechanisms_and_confluent_rows(spark: SparkSession) -> None:
    """Mappings the samples do not show: the user is the silver principal (the new principal
    of a refused re-authentication, KIP-368, as the parser reads it from the line; one linked
    from the request log, its type kept apart from its name), SCRAM is 99 with its name, GSSAPI
    2 Kerberos, OAUTHBEARER 6, a Confluent audit event is Confluent Server's; a failure nothing
    links stays 'unknown'; a principal without ':' is a name of no type; a decision without a
    host gets the 'unknown' source, CREATE is 1 Create; rows without a timestamp are left
    out."""
    from schemas.auth_events import AUTH_EVENTS  # noqa: PLC0415
    from schemas.authz_decisions import AUTHZ_DECISIONS  # noqa: PLC0415
    from transforms.ocsf import api_activity_events, authentication_events  # noqa: PLC0415

    auth = spark.createDataFrame(
        [
            _row(AUTH_EVENTS, event_type="reauthentication_failed", side="broker", mechanism="SCRAM-SHA-512",
                 mechanism_source="line", failure_reason_code="PRINCIPAL_CHANGE_DURING_REAUTH",
                 reauth_old_principal="User:alice", reauth_new_principal="User:bob", principal="User:bob",
                 principal_source="line", reason="Cannot change principals during re-authentication from User.alice: User.bob"),
            _row(AUTH_EVENTS, line_number=2, event_type="authentication_succeeded", side="broker", mechanism="GSSAPI",
                 mechanism_source="confluent_audit", source_format="confluent_audit", principal="User:kafka/host@REALM",
                 principal_source="confluent_audit", peer_ip="10.0.0.9"),
            _row(AUTH_EVENTS, line_number=3, event_type="authentication_failed", event_ts=None),
            _row(AUTH_EVENTS, line_number=4, event_type="session_lifetime"),
            _row(AUTH_EVENTS, line_number=5, event_type="reauthentication_succeeded", side="broker",
                 source_format="log4j", mechanism="OAUTHBEARER", mechanism_source="handshake",
                 principal="User:CN=app,O=corp", principal_source="request_log"),
            _row(AUTH_EVENTS, line_number=6, event_type="authentication_failed", side="broker",
                 source_format="log4j", reason="Authentication failed: Invalid username or password",
                 failure_reason_code="INVALID_USERNAME_OR_PASSWORD"),
            _row(AUTH_EVENTS, line_number=7, event_type="authentication_succeeded", side="broker",
                 source_format="log4j", principal="ANONYMOUS", principal_source="line"),
        ],
        AUTH_EVENTS,
    )  # fmt: skip
    events = sorted(
        _json_rows(authentication_events(auth)), key=lambda e: e["unmapped"]["source_line_number"]
    )
    # A principal without ':' names no type: the whole string is the name (as the Detection
    # Findings' evidence maps it, jobs.ocsf_findings.ocsf_user).
    assert events[-1]["user"] == {
        "uid": "ANONYMOUS", "name": "ANONYMOUS", "type": "Unknown", "type_id": 0,
    }  # fmt: skip
    got = [
        (
            e["user"],
            e["auth_protocol_id"],
            e["auth_protocol"],
            e["status_id"],
            e["message"],
            e["metadata"]["product"]["name"],
            {k: v for k, v in e["unmapped"].items() if k.endswith("_source")},
        )
        for e in events[:-1]
    ]
    assert got == [
        (
            {"uid": "User:bob", "name": "bob", "type": "User", "type_id": 1},
            99,
            "SCRAM-SHA-512",
            2,
            "Re-authentication failed: Cannot change principals during re-authentication from User.alice: User.bob",
            "Apache Kafka",
            {"principal_source": "line", "mechanism_source": "line"},
        ),
        (
            {
                "uid": "User:kafka/host@REALM",
                "name": "kafka/host@REALM",
                "type": "User",
                "type_id": 1,
            },
            2,
            "Kerberos",
            1,
            "Authentication succeeded",
            "Confluent Server",
            {"principal_source": "confluent_audit", "mechanism_source": "confluent_audit"},
        ),
        (
            {"uid": "User:CN=app,O=corp", "name": "CN=app,O=corp", "type": "User", "type_id": 1},
            6,
            "OAUTH 2.0",
            1,
            "Re-authentication succeeded",
            "Apache Kafka",
            {"principal_source": "request_log", "mechanism_source": "handshake"},
        ),
        (
            {"name": "unknown", "type": "Unknown", "type_id": 0},
            0,
            "Unknown",
            2,
            "Authentication failed: Authentication failed: Invalid username or password",
            "Apache Kafka",
            {},
        ),
    ]
    authz = spark.createDataFrame(
        [
            _row(AUTHZ_DECISIONS, record_type="decision", authorizer="ConfluentServerAuthorizer", principal="User:ops",
                 decision="ALLOWED", operation="CREATE", operation_raw="Create", resource_type="TOPIC",
                 resource_name="orders", pattern_type="LITERAL", api_name="CreateTopics", rule="MatchingAcl",
                 source_format="confluent_audit", client_id="admin-1", correlation_id=7),
            _row(AUTHZ_DECISIONS, line_number=2, record_type="acl_match", decision="ALLOWED"),
        ],
        AUTHZ_DECISIONS,
    )  # fmt: skip
    [event] = _json_rows(api_activity_events(authz))
    assert {k: event[k] for k in ("activity_id", "type_uid", "status_id", "actor", "api", "src_endpoint")} == {
        "activity_id": 1, "type_uid": 600301, "status_id": 1,
        "actor": {"user": {"uid": "User:ops", "name": "ops", "type": "User", "type_id": 1}, "app_name": "admin-1",
                  "authorizations": [{"decision": "ALLOWED", "policy": {"name": "MatchingAcl", "type": "ConfluentServerAuthorizer"}}]},
        "api": {"operation": "CreateTopics", "request": {"uid": "7"}},
        "src_endpoint": {"name": "unknown"},
    }  # fmt: skip


def _hostile_lake(spark: SparkSession, lake: Path) -> None:
    """A lake of silver rows the samples do not have: control characters, quotes, backslashes
    (one before a literal 'u001b'), non-ASCII and a line separator in names and reasons; empty
    strings where the mapping coalesces; a principal without ':'; times before 1970, with
    microseconds and after year 9999; rows the export leaves out. An empty findings table beside them."""
    from jobs.lake.tables import Engine, Lake  # noqa: PLC0415
    from schemas import auth_events, authz_decisions, findings  # noqa: PLC0415

    odd = 'a "quoted" \\ back\\u001b \x1b[31mred\x00 é 😀 \u2028 end'
    early = datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC)
    auth = [
        _row(auth_events.AUTH_EVENTS, event_type="authentication_failed", side="client",
             principal=f"User:{odd}", reason=odd, client_id="", mechanism="", broker_node_id=3,
             peer_host="broker-3", peer_port=9093),
        _row(auth_events.AUTH_EVENTS, line_number=2, event_type="authentication_failed",
             principal="alice", failure_reason_code="SSL_HANDSHAKE_FAILED", event_ts=early),
        _row(auth_events.AUTH_EVENTS, line_number=3, event_type="reauthentication_succeeded",
             principal="Group:ops", connection_id="1.2.3.4:9092-5.6.7.8:5000-1", local_ip="1.2.3.4",
             local_port=9092, listener="SASL_SSL", security_protocol="SASL_SSL",
             event_ts=datetime(2026, 11, 20, 10, 0, 0, 123_456, tzinfo=UTC)),
        _row(auth_events.AUTH_EVENTS, line_number=4, event_type="authentication_failed",
             failure_reason_code="OAUTH_TOKEN_EXPIRED", source_format="confluent_audit"),
        _row(auth_events.AUTH_EVENTS, line_number=5, event_type="session_lifetime"),
        _row(auth_events.AUTH_EVENTS, line_number=6, event_type="client_authentication_failed",
             event_ts=None),
        # side '' is not 'broker' (coalesce keeps it): the client-side endpoints; its time is
        # set below past year 9999, which Spark holds and a Python datetime cannot.
        _row(auth_events.AUTH_EVENTS, line_number=7, event_type="authentication_succeeded",
             side="", node_id="1", peer_ip="10.0.0.1", connection_id="c1"),
    ]  # fmt: skip
    far = F.timestamp_micros(F.lit(253_402_300_800_001_000))  # 10000-01-01T00:00:00.001Z
    authz = [
        _row(authz_decisions.AUTHZ_DECISIONS, record_type="decision", operation="UNKNOWN_OP",
             operation_raw="", correlation_id=0, rule=f"rule {odd}", resource_name=odd,
             decision=""),
        _row(authz_decisions.AUTHZ_DECISIONS, line_number=2, record_type="decision",
             decision="ALLOWED", authorizer="StandardAuthorizer", rbac_role="Role\t1",
             principal="User:ü", host="::1", resource_type="GROUP", event_ts=early),
        _row(authz_decisions.AUTHZ_DECISIONS, line_number=3, record_type="decision",
             decision="DENIED", operation="WRITE", operation_raw="Write", api_name="Produce",
             client_id=odd, source_path="/logs/a/authorizer.log"),
        _row(authz_decisions.AUTHZ_DECISIONS, line_number=4, record_type="acl_match",
             decision="ALLOWED"),
        _row(authz_decisions.AUTHZ_DECISIONS, line_number=5, record_type="decision",
             decision="DENIED", event_ts=None),
    ]  # fmt: skip
    target = Lake(spark, str(lake), Engine.EMBEDDED)
    for module, schema, rows in (
        (auth_events, auth_events.AUTH_EVENTS, auth),
        (authz_decisions, authz_decisions.AUTHZ_DECISIONS, authz),
        (findings, findings.FINDINGS, []),
    ):
        frame = spark.createDataFrame(rows, schema)
        if module is auth_events:
            last = F.col("line_number") == 7
            frame = frame.withColumn("event_ts", F.when(last, far).otherwise(F.col("event_ts")))
        target.write(frame, module.TABLE_NAME, schema=schema,
                     partition_by=module.PARTITION_COLUMNS, replace_partitions=None,
                     replace_all=True, app_id="test")  # fmt: skip


def _exports(spark: SparkSession, lake: Path, out: Path, fmt: str, window: Window) -> None:
    """Both ways into ``out/spark`` and ``out/python``: the same printed lines, the same files
    (JSON Lines byte for byte; Parquet row for row, the same columns)."""
    from jobs.ocsf_events import export_without_spark  # noqa: PLC0415

    by_spark = export(spark, str(lake), str(out / "spark"), fmt, window)[:2]
    by_python = export_without_spark(str(lake), str(out / "python"), fmt, window)
    assert [line.replace("/spark/", "/python/") for line in by_spark] == by_python
    for name in ("authentication", "api_activity"):
        spark_file, python_file = out / "spark" / f"{name}.{fmt}", out / "python" / f"{name}.{fmt}"
        if fmt == "jsonl":
            assert python_file.read_bytes() == spark_file.read_bytes(), name
        else:
            expected, got = pq.read_table(spark_file), pq.read_table(python_file)
            assert got.to_pylist() == expected.to_pylist(), name
            assert got.schema.names == expected.schema.names


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_without_spark_the_files_spark_writes(
    spark: SparkSession, samples_lake: Path, tmp_path: Path, fmt: str
) -> None:
    """jobs.ocsf_events maps as transforms.ocsf does: on the samples lake (every day, one day)
    and on hostile rows, the files are those Spark writes."""
    from datetime import date  # noqa: PLC0415

    _exports(spark, samples_lake, tmp_path / "all", fmt, Window())
    _exports(spark, samples_lake, tmp_path / "day", fmt, Window(date(2020, 6, 3), date(2020, 6, 4)))
    _hostile_lake(spark, tmp_path / "lake")
    _exports(spark, tmp_path / "lake", tmp_path / "hostile", fmt, Window())
    if fmt == "jsonl":  # the escapes Jackson writes, upper-case hex; the rest as it is
        text = (tmp_path / "hostile" / "python" / "api_activity.jsonl").read_text("utf-8")
        assert '\\"quoted\\" \\\\ back\\\\u001b \\u001B[31mred\\u0000 é 😀 \u2028 end' in text


def test_cli_exports_a_small_lake_without_spark(
    *,
    exported: tuple[Path, list[str]],
    samples_lake: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Up to MAX_ROWS rows the command maps without Spark, above it with Spark: the same
    files and lines either way."""
    import logging  # noqa: PLC0415

    from jobs import ocsf_events  # noqa: PLC0415

    caplog.set_level(logging.INFO, logger="jobs.cli.export_ocsf")
    printed = {}
    for limit, folder in ((ocsf_events.MAX_ROWS, "small"), (21, "large")):
        monkeypatch.setattr(ocsf_events, "MAX_ROWS", limit)
        caplog.clear()
        out = tmp_path / folder
        assert main(["export-ocsf", "--lake", str(samples_lake), "--out", str(out)]) == 0
        printed[folder] = capsys.readouterr().out.replace(str(out), "OUT")
        without = [r for r in caplog.records if "mapped without Spark" in r.getMessage()]
        assert len(without) == (folder == "small")
        for name in ("authentication", "api_activity", "detection_finding"):
            expected = (exported[0] / f"{name}.jsonl").read_bytes()
            assert (out / f"{name}.jsonl").read_bytes() == expected, (folder, name)
    assert printed["small"] == printed["large"]
    assert printed["small"].count("OCSF class") == 3
    # The threshold counts the window's rows only, from the Delta log.
    from datetime import date  # noqa: PLC0415

    from jobs.lake.reads import row_count  # noqa: PLC0415

    decisions = str(samples_lake / "authz_decisions")
    day = (date(2020, 6, 3), date(2020, 6, 4))
    assert (row_count(decisions), row_count(decisions, "event_date", *day)) == (12, 4)
    monkeypatch.setattr(ocsf_events, "MAX_ROWS", 4)
    assert ocsf_events.without_spark(str(samples_lake), Window(*day))
    assert not ocsf_events.without_spark(str(samples_lake), Window())
