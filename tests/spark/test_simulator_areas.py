"""The simulator areas of delegation tokens, forwarding / the KRaft authorizer and Connect
signing (jobs/simulator/tokens.py, forwarding.py, connect.py), each driven alone on a small
world built here: time order, determinism, the truth's own consistency, and (Spark) that
every line parses into its family with nothing quarantined."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jobs.simulator.base import Area, Client, LogLine, Node, World
from jobs.simulator.connect import ConnectArea
from jobs.simulator.forwarding import ForwardingArea
from jobs.simulator.tokens import TokensArea, token_hmac

START_MS = 1_795_132_800_000  # 2026-11-20T00:00:00Z
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


class RecordingTruth:
    """``base.Truth`` that keeps everything in lists."""

    def __init__(self) -> None:
        self.metrics: list[tuple[Any, ...]] = []
        self.tokens: list[dict[str, Any]] = []
        self.findings: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, str, str, int]] = []

    def metric_event(
        self,
        metric_name: str,
        ts_ms: int,
        broker_id: str | None,
        *,
        listener: str | None = None,
        mechanism: str | None = None,
        principal: str | None = None,
        api_key_name: str | None = None,
        value: float = 1.0,
    ) -> None:
        self.metrics.append(
            (metric_name, ts_ms, broker_id, listener, mechanism, principal, api_key_name, value)
        )

    def token(self, row: dict[str, Any]) -> None:
        self.tokens.append(row)

    def finding(self, row: dict[str, Any]) -> None:
        self.findings.append(row)

    def authentication(self, row: dict[str, Any]) -> None:
        self.outcomes.append(row)

    def request_logged(
        self, node_id: str, connection_id: str, client_ip: str, principal: str, ts_ms: int
    ) -> None:
        self.requests.append((node_id, connection_id, client_ip, principal, ts_ms))


def world(*, seed: int = 7, hours: float = 6.0, kraft: bool = True, workers: int = 3) -> World:
    """Two brokers (KRaft 3.9 with one controller pair, or ZooKeeper 3.5 without), Connect
    workers and four clients."""
    version = "3.9.1" if kraft else "3.5.2"
    brokers = []
    for i in (1, 2):
        props = {"super.users": "User:admin"}
        if kraft:
            props |= {"node.id": str(i), "process.roles": "broker",
                      "allow.everyone.if.no.acl.found": "true", "authorizer.class.name": STANDARD}  # fmt: skip
        else:
            props |= {"broker.id": str(i)}
        brokers.append(Node(f"broker-{i}", str(i), "broker", version, "log4j", props))
    controllers = [
        Node(f"controller-{i}", str(3000 + i), "controller", "3.9.1", "log4j",
             {"node.id": str(3000 + i), "process.roles": "controller",
              "controller.listener.names": "CONTROLLER", "super.users": "User:admin"})
        for i in range(2 if kraft else 0)
    ]  # fmt: skip
    connect = [
        Node(f"connect-{i}", f"connect-{i}", "connect", "3.9.1", "log4j",
             {"client.id": f"connect-{i}", "group.id": "connect-cluster"})
        for i in range(1, workers + 1)
    ]  # fmt: skip
    clients = [
        Client(f"client-{i}", f"User:app-{i}", "apache-kafka-java", "3.7.1", "SCRAM-SHA-512",
               f"10.1.0.{10 + i}")
        for i in range(4)
    ]  # fmt: skip
    return World(seed, START_MS, START_MS + int(hours * 3_600_000), brokers, controllers, connect,
                 clients, 10_000, version)  # fmt: skip


AREAS: dict[str, type[Area]] = {
    "tokens": TokensArea,
    "forwarding": ForwardingArea,
    "connect": ConnectArea,
}


def drive(area_name: str, w: World) -> tuple[list[LogLine], RecordingTruth]:
    area = AREAS[area_name]()
    area.configure(w)
    truth = RecordingTruth()
    return list(area.lines(w, truth)), truth


@pytest.mark.parametrize("area_name", sorted(AREAS))
def test_lines_are_time_ordered_and_deterministic(area_name: str) -> None:
    lines, truth = drive(area_name, world())
    assert lines, "the area produced nothing"
    assert [x.ts_ms for x in lines] == sorted(x.ts_ms for x in lines)
    again, truth2 = drive(area_name, world())
    assert again == lines
    assert truth2.findings == truth.findings and truth2.tokens == truth.tokens
    assert truth2.metrics == truth.metrics
    other, _ = drive(area_name, world(seed=8))
    assert other != lines


@pytest.mark.parametrize("area_name", sorted(AREAS))
def test_truth_names_lines_that_exist(area_name: str) -> None:
    """Every evidence tag is a line's tag; tags are unique; finding ids follow the formula."""
    lines, truth = drive(area_name, world())
    tags = [x.tag for x in lines if x.tag]
    assert len(tags) == len(set(tags))
    for row in truth.findings:
        assert set(row["evidence_tags"]) <= set(tags), row["rule_id"]
        text = "\u001f".join(
            (row["rule_id"], row["subject_type"], row["subject"], row["discriminator"])
        )
        assert row["finding_id"] == hashlib.sha256(text.encode()).hexdigest()
        assert row["first_seen_ts"] <= row["last_seen_ts"]
        assert row["count"] >= 1
    for row in truth.tokens:
        assert {h["tag"] for h in row["history"] if h["tag"]} <= set(tags)


def rules(truth: RecordingTruth) -> Counter[str]:
    return Counter(r["rule_id"] for r in truth.findings)


def test_forwarding_findings_and_metrics() -> None:
    lines, truth = drive("forwarding", world())
    assert set(rules(truth)) == {
        "forwarding.envelope_cluster_action_denied",
        "authorizer.super_user_not_in_config",
        "authorizer.early_start_client_listener",
        "authorizer.not_ready_request_failures",
    }
    denied = next(r for r in truth.findings if r["rule_id"].startswith("forwarding."))
    # three refusals, each logged by the request logger and the authorizer logger
    assert (denied["subject"], denied["discriminator"], denied["count"]) == (
        "User:mallory",
        "3000",
        3,
    )
    assert len(denied["evidence_tags"]) == 6
    forwarded = [m for m in truth.metrics if m[0] == "forwarded-requests"]
    controller_copies = [x for x in lines if '"isForwarded":true' in x.message]
    timed_out = [x for x in lines if '"errorCode":7' in x.message]
    assert len(forwarded) == len(controller_copies) + len(timed_out)
    assert {m[0] for m in truth.metrics} >= {"forwarding-failures", "forwarded-requests"}


def test_forwarding_is_silent_without_controllers() -> None:
    lines, truth = drive("forwarding", world(kraft=False))
    assert lines == [] and truth.findings == [] and truth.metrics == []


def test_token_rows_follow_kip_48() -> None:
    w = world()
    lines, truth = drive("tokens", w)
    ids = [r["token_id"] for r in truth.tokens]
    assert len(ids) == len(set(ids)) and ids
    secret = str(w.settings["delegation_token_secret"])
    for row in truth.tokens:
        assert row["max_lifetime_ms"] <= 4 * 3_600_000
        assert row["issue_ts"] < row["expiry_ts"] <= row["max_ts"]
        assert row["state"] in ("active", "expired", "expired_early", "swept")
        assert (row["ended_ts"] is None) == (row["state"] == "active")
        assert row["history"][0]["operation"] == "create"
        assert row["renew_count"] == sum(
            1 for h in row["history"] if h["operation"] == "renew" and h["error_code"] == 0
        )
        # the HMAC the create response printed is HMAC-SHA512(secret, id), base64
        create = next(x for x in lines if x.tag == row["history"][0]["tag"])
        body = json.loads(create.message.removeprefix("Completed request:"))
        assert (
            body["response"]["hmac"]
            == base64.b64encode(token_hmac(secret, row["token_id"])).decode()
        )
    found = rules(truth)
    for rule in ("tokens.creation_burst", "tokens.describe_by_non_owner",
                 "tokens.request_not_allowed"):  # fmt: skip
        assert found[rule] >= 1, rule
    assert any(x.stream == "controller" for x in lines)  # the KRaft sweeper
    assert all("on Node" not in x.message for x in lines)  # no ZooKeeper token manager


def test_tokens_in_zookeeper_mode_use_the_token_manager() -> None:
    lines, truth = drive("tokens", world(kraft=False))
    assert truth.tokens
    assert not any('"isForwarded":true' in x.message for x in lines)
    managers = Counter(x.logger for x in lines if x.stream == "server")
    assert set(managers) == {"kafka.server.DelegationTokenManager"}  # 3.5: before the Zk class
    assert {r["metadata_mode"] for r in truth.tokens} == {"zookeeper"}
    assert not [m for m in truth.metrics if m[0] == "forwarded-requests"]


def test_connect_findings() -> None:
    _, truth = drive("connect", world())
    assert rules(truth) == Counter(
        {
            "connect.invalid_signature_beyond_grace": 2,  # leader view and follower view
            "connect.internal_endpoint_non_worker_agent": 1,
            "connect.internal_request_bad_request": 1,
            "connect.session_key_rotation_off_schedule": 3,  # every worker: the stall
        }
    )
    off = {r["subject"]: r["count"] for r in truth.findings if "off_schedule" in r["rule_id"]}
    # connect-3 lagged once more: a late key and the short interval after it
    assert off == {"connect-1": 1, "connect-2": 1, "connect-3": 3}
    assert truth.metrics == []


# --- Spark: the lines parse into their families --------------------------------------------

EXPECTED_TABLE = {
    "kafka.request.logger": "request_events",
    "kafka.authorizer.logger": "authz_decisions",
    "kafka.server.DelegationTokenManager": "token_events",
    "kafka.server.DelegationTokenManagerZk": "token_events",
    "org.apache.kafka.controller.DelegationTokenControlManager": "token_events",
    "org.apache.kafka.connect.runtime.rest.RestServer": "connect_requests",
    "org.apache.kafka.connect.runtime.distributed.DistributedHerder": "connect_requests",
}


def render(lines: list[LogLine], nodes: list[Node], folder: Path) -> dict[tuple[str, int], str]:
    """Write the lines in the plain log4j layout (``[%d] %p %m (%c)%n``, UTC) into one folder
    per node with its properties; returns (file, line number) -> logger of each record."""
    files = {"server": "server.log", "request": "kafka-request.log",
             "authorizer": "kafka-authorizer.log", "controller": "controller.log",
             "connect": "connect.log"}  # fmt: skip
    written: dict[Path, list[str]] = {}
    where: dict[tuple[str, int], str] = {}
    for line in lines:
        path = folder / line.node / files[line.stream]
        rows = written.setdefault(path, [])
        stamp = dt.datetime.fromtimestamp(line.ts_ms / 1000, tz=dt.UTC)
        head, *rest = line.message.split("\n")
        prefix = f"[{stamp:%Y-%m-%d %H:%M:%S},{line.ts_ms % 1000:03d}] {line.level} "
        where[(str(path), len(rows) + 1)] = line.logger
        rows.append(f"{prefix}{head} ({line.logger})")
        rows.extend(rest)
    for path, rows in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    for node in nodes:
        name = "connect-distributed.properties" if node.role == "connect" else "server.properties"
        props = "\n".join(f"{k}={v}" for k, v in node.properties.items())
        (folder / node.name).mkdir(parents=True, exist_ok=True)
        (folder / node.name / name).write_text(props + "\n", encoding="utf-8")
    return where


def test_lines_parse_into_their_families(spark: SparkSession, tmp_path: Path) -> None:
    from jobs.config import SourceSpec  # noqa: PLC0415
    from jobs.parsed_records import parsed_json  # noqa: PLC0415

    w = world(hours=3.0)
    areas: list[Area] = [TokensArea(), ForwardingArea(), ConnectArea()]
    for area in areas:
        area.configure(w)
    truth = RecordingTruth()
    streams = [
        [(x.ts_ms, i, n, x) for n, x in enumerate(area.lines(w, truth))]
        for i, area in enumerate(areas)
    ]
    merged = [x for *_, x in sorted(item for stream in streams for item in stream)]
    nodes = [*w.brokers, *w.controllers, *w.connect_workers]
    where = render(merged, nodes, tmp_path)
    sources = [SourceSpec(str(tmp_path / n.name)) for n in nodes]
    rows = [json.loads(r.json) for r in parsed_json(spark, sources, b"k" * 32).collect()]
    tables: dict[tuple[str, int], set[str]] = {}
    for row in rows:
        key = next(k for k in row if k not in ("source", "line", "family"))
        tables.setdefault((row["source"].removeprefix("file:"), row["line"]), set()).add(key)
    quarantined = {k: v for k, v in tables.items() if "quarantine" in v}
    assert quarantined == {}
    assert set(tables) == set(where)
    wrong = {
        k: (logger, tables[k])
        for k, logger in where.items()
        if EXPECTED_TABLE.get(logger, "out_of_scope") not in tables[k]
    }
    assert wrong == {}
    # every token request line also feeds token_events (a record feeding two tables)
    token_requests = [r for r in rows if "token_events" in r]
    assert len(token_requests) >= len([x for x in merged if "DELEGATION_TOKEN" in x.message])
