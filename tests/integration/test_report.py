"""kafka-audit report: the gold tables of a lake as tables for people (and json, csv)."""

from __future__ import annotations

import io
import json
import logging
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from jobs.cli.main import main
from jobs.progress import Progress
from schemas import findings, reauth_readiness, security_metrics
from tests.integration.test_report_html import chromium, run_chromium
from tests.unit.test_report_html import HEADINGS, page_text


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["report", *argv]) == 0
    return capsys.readouterr().out


def test_samples_lake_table(samples_lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Daily security_metrics of the samples (auth failures of brokers 0 and 1, the denials of
    User:skyDriveProducer, the failed ENVELOPEs), one table per metric with its unit; the
    samples give no readiness or finding."""
    out = _report(capsys, "--lake", str(samples_lake), "--section", "all", "--width", "100")
    assert out == SAMPLES_TABLE.format(lake=samples_lake)


SAMPLES_TABLE = """\
no findings
lake: {lake}
window: all days

Findings
(none)

Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...
(none)

Security metrics (Kafka JMX names; value per window, events behind it)

authorization-denied-rate-per-minute
window start  broker   principal                    value  events
------------- -------- ---------------------- ------------ ------
2020-06-03    samples  User:skyDriveProducer  0.00278/min       4

failed-authentication-rate
window start  broker  listener       value  events
------------- ------- --------- ----------- ------
2020-09-22    1                 1.16e-05/s       1
2022-11-23    0       TLS-9093  1.16e-05/s       1
2023-01-19    1                 5.79e-05/s       5

failed-authentication-total
window start  broker  listener  value  events
------------- ------- --------- ------ ------
2020-09-22    1                     1       1
2022-11-23    0       TLS-9093      1       1
2023-01-19    1                     5       5

forwarding-failures-total
window start  broker   listener  principal       api       value  events
------------- -------- --------- --------------- --------- ------ ------
2023-02-03    samples  EXTERNAL  User:ANONYMOUS  ENVELOPE      2       2
"""


def test_samples_lake_json_window(samples_lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _report(
        capsys,
        "--lake",
        str(samples_lake),
        "--format",
        "json",
        "--start",
        "2022-11-23T00:00:00Z",
        "--end",
        "2022-11-24",
    )
    metric = {"window_start": "2022-11-23T00:00:00Z", "broker": "0", "listener": "TLS-9093",
              "mechanism": None, "principal": None, "api": None, "events": 1}  # fmt: skip
    assert json.loads(out) == {
        "lake": str(samples_lake),
        "window": "2022-11-23 .. 2022-11-24 (UTC, end exclusive)",
        "metrics": [
            {**metric, "metric": "failed-authentication-rate", "value": 1 / 86400},
            {**metric, "metric": "failed-authentication-total", "value": 1.0},
        ],
        "readiness": [],
        "findings": [],
    }


def test_samples_lake_hourly_csv(samples_lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _report(capsys, "--lake", str(samples_lake), "--section", "metrics", "--format", "csv",
                  "--window", "1h", "--start", "2020-01-01", "--end", "2021-01-01")  # fmt: skip
    assert out == (
        "window_start,metric,broker,listener,mechanism,principal,api,value,events\n"
        "2020-06-03T14:00:00Z,authorization-denied-rate-per-minute,samples,,,User:skyDriveProducer,,0.06666666666666667,4\n"
        "2020-09-22T12:00:00Z,failed-authentication-rate,1,,,,,0.0002777777777777778,1\n"
        "2020-09-22T12:00:00Z,failed-authentication-total,1,,,,,1.0,1\n"
    )


def test_empty_window_markdown(samples_lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _report(
        capsys,
        "--lake",
        str(samples_lake),
        "--format",
        "markdown",
        "--start",
        "2030-01-01",
        "--end",
        "2030-01-02",
    )
    assert out == EMPTY_MARKDOWN.format(lake=str(samples_lake).replace("_", "\\_"))


EMPTY_MARKDOWN = """\
# kafka-audit report

**no findings**

lake: {lake}, window: 2030-01-01 .. 2030-01-02 (UTC, end exclusive)

## Findings

_none_

## Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...

_none_

## Security metrics (Kafka JMX names; value per window, events behind it)

no metric values
"""


def _ts(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 20, hour, minute, tzinfo=UTC)


def _finding(
    fid: str, rule: str, kip_severity: str, subject: str, day: int, **more: Any
) -> dict[str, Any]:
    kind, _, name = subject.partition(": ")
    kip, severity = kip_severity.split()
    row: dict[str, Any] = {"finding_id": fid, "rule_id": rule, "kip": kip, "severity": severity, "subject_type": kind,
           "subject": name, "discriminator": "", "node_id": None, "first_seen_ts": _ts(8),
           "last_seen_ts": _ts(8), "count": 1, "evidence": [], "explanation": "", "run_id": "r",
           "finding_date": date(2026, 11, day)}  # fmt: skip
    return {**row, **more}


def _readiness(
    candidate_ms: int,
    day: int,
    counts: tuple[int, int, int],
    killed: tuple[list[str], list[str]],
    first: datetime,
) -> dict[str, Any]:
    principals, software = killed
    return {"candidate_ms": candidate_ms, "sessions": counts[0], "sessions_killed": counts[1],
            "sessions_at_risk_unknown_client": counts[2], "principals_killed": principals,
            "distinct_principals_killed": len(principals), "client_software_killed": software,
            "first_kill_ts": first, "run_id": "r", "activity_date": date(2026, 11, day)}  # fmt: skip


def _metric(name: str, value: float, events: int, **slices: str) -> dict[str, Any]:
    """A daily security_metrics row of broker 1 on 2026-11-20."""
    row = {"metric_name": name, "window": "1d", "window_start_ts": datetime(2026, 11, 20, tzinfo=UTC),
           "window_end_ts": datetime(2026, 11, 21, tzinfo=UTC), "broker_id": "1", "listener": None,
           "mechanism": None, "principal": None, "api_key_name": None, "value": value,
           "event_count": events, "run_id": "r", "window_date": date(2026, 11, 20)}  # fmt: skip
    return {**row, **slices}


@pytest.fixture
def audit_lake(tmp_path: Path) -> Path:
    """A lake with findings, readiness rows and metrics over three days, written with deltalake
    (no pipeline run; the samples have no finding)."""
    evidence = [{"source_path": "/logs/broker-1/server.log", "line_number": 17},
                {"source_path": "/logs/broker-1/server.log", "line_number": 40}]  # fmt: skip
    tables = {
        findings: [
            _finding("f1", "reauth.no_reauth_client_on_expiring_listener", "KIP-368 medium", "principal: User:alice", 20,
                     node_id="1", first_seen_ts=_ts(9), last_seen_ts=_ts(10, 30), count=3, evidence=evidence,
                     explanation="User:alice uses librdkafka/1.0.0, which cannot re-authenticate, on a listener with connections.max.reauth.ms set: the broker will close its connections at expiry."),
            _finding("f2", "tokens.renewed_past_max", "KIP-48 high", "token: hmac:ab12", 20, discriminator="tok-1",
                     evidence=[{"source_path": "/logs/broker-2/kafka-request.log", "line_number": 5}],
                     explanation="Token renewed past its max lifetime."),
            _finding("f3", "tokens.renewed_past_max", "KIP-48 high", "token: hmac:cd34", 22, explanation="Outside."),
        ],
        reauth_readiness: [
            _readiness(3_600_000, 20, (10, 2, 1), (["User:alice"], ["librdkafka/1.0.0"]), _ts(10, 5)),
            _readiness(3_600_000, 21, (5, 1, 0), (["User:bob"], ["unknown/unknown"]), _ts(9, 15)),
            _readiness(900_000, 20, (15, 5, 1), (["User:bob", "User:alice"], ["librdkafka/1.0.0"]), _ts(9, 20)),
        ],
        security_metrics: [
            _metric("failed-authentication-total", 3.0, 3, listener="SASL_SSL", mechanism="SCRAM-SHA-512"),
            _metric("failed-authentication-rate", 3 / 86400, 3, listener="SASL_SSL", mechanism="SCRAM-SHA-512"),
            _metric("authorization-denied-rate-per-minute", 240 / 1440, 240, principal="User:scanner"),
            _metric("reauthentication-latency-max", 1250.0, 7, listener="SASL_SSL", mechanism="OAUTHBEARER"),
        ],
    }  # fmt: skip
    lake = tmp_path / "lake"
    for module, rows in tables.items():
        schema = to_arrow_schema(module.__dict__[module.TABLE_NAME.upper()], timezone="UTC")
        write_deltalake(str(lake / module.TABLE_NAME), pa.Table.from_pylist(rows, schema=schema),
                        partition_by=list(module.PARTITION_COLUMNS))  # fmt: skip
    return lake


def test_report_at_80_columns(
    audit_lake: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default at 80 columns: the headline, findings most severe first (evidence relative
    to the folder the logs share), readiness summed over the window's days, the metrics as one
    line; the finding of the 22nd is outside the window."""
    monkeypatch.chdir(audit_lake.parent)  # a lake path of known length
    out = _report(capsys, "--lake", "lake", "--start", "2026-11-20", "--end", "2026-11-22",
                  "--width", "80")  # fmt: skip
    assert out == AUDIT_TABLE_80


AUDIT_TABLE_80 = """\
2 findings: 1 high, 1 medium
lake: lake
window: 2026-11-20 .. 2026-11-22 (UTC, end exclusive)

Findings (evidence under /logs/)

severity  events  finding
--------- ------- --------------------------------------------------------------
high           1  tokens.renewed_past_max (KIP-48)
                  token: hmac:ab12 (tok-1)
                  seen 2026-11-20 08:00:00 in broker-2/kafka-request.log:5
                  Token renewed past its max lifetime.

medium         3  reauth.no_reauth_client_on_expiring_listener (KIP-368)
                  principal: User:alice, node 1
                  seen 2026-11-20 09:00:00 .. 10:30:00 in broker-1/server.log:17
                  (+1)
                  User:alice uses librdkafka/1.0.0, which cannot
                  re-authenticate, on a listener with connections.max.reauth.ms
                  set: the broker will close its connections at expiry.

Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...

candidate  sessions  killed  unknown client  first kill        principals killed
---------- --------- ------- --------------- ----------------- -----------------
15 min           15       5               1  2026-11-20        User:alice,
                                             09:20:00          User:bob
1 h              15       3               1  2026-11-20        User:alice,
                                             09:15:00          User:bob

Security metrics (Kafka JMX names; value per window, events behind it)
4 metric values: add --section metrics (or all) to list them
"""


@pytest.mark.parametrize("width", ["80", "100"])
def test_every_section_fits_the_width(
    audit_lake: Path, width: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Findings, readiness and metrics (each metric its table, with its unit) on a lake with
    all three: no line wider than asked."""
    out = _report(capsys, "--lake", str(audit_lake), "--section", "all", "--width", width)
    assert max(map(len, out.splitlines())) <= int(width)
    assert out.split("Security metrics")[1] == AUDIT_METRICS


AUDIT_METRICS = """\
 (Kafka JMX names; value per window, events behind it)

authorization-denied-rate-per-minute
window start  broker  principal         value  events
------------- ------- ------------- ---------- ------
2026-11-20    1       User:scanner  0.167/min     240

failed-authentication-rate
window start  broker  listener  mechanism           value  events
------------- ------- --------- -------------- ----------- ------
2026-11-20    1       SASL_SSL  SCRAM-SHA-512  3.47e-05/s       3

failed-authentication-total
window start  broker  listener  mechanism      value  events
------------- ------- --------- -------------- ------ ------
2026-11-20    1       SASL_SSL  SCRAM-SHA-512      3       3

reauthentication-latency-max
window start  broker  listener  mechanism      value  events
------------- ------- --------- ------------ -------- ------
2026-11-20    1       SASL_SSL  OAUTHBEARER  1250 ms       7
"""


def test_width_from_columns_when_not_a_terminal(
    audit_lake: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    narrow = _report(capsys, "--lake", str(audit_lake), "--section", "findings")
    assert max(map(len, narrow.splitlines())) == 60
    monkeypatch.delenv("COLUMNS")
    default = _report(capsys, "--lake", str(audit_lake), "--section", "findings")
    assert max(map(len, default.splitlines())) == 100  # the explanations fill the width


def test_findings_csv_has_every_position(
    audit_lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _report(capsys, "--lake", str(audit_lake), "--section", "findings", "--format", "csv")
    assert out.splitlines() == [
        "severity,rule,kip,subject,discriminator,node,count,first_seen,last_seen,evidence,explanation,finding_id",
        "high,tokens.renewed_past_max,KIP-48,token: hmac:ab12,tok-1,,1,2026-11-20T08:00:00Z,2026-11-20T08:00:00Z,/logs/broker-2/kafka-request.log:5,Token renewed past its max lifetime.,f2",
        "high,tokens.renewed_past_max,KIP-48,token: hmac:cd34,,,1,2026-11-20T08:00:00Z,2026-11-20T08:00:00Z,,Outside.,f3",
        'medium,reauth.no_reauth_client_on_expiring_listener,KIP-368,principal: User:alice,,1,3,2026-11-20T09:00:00Z,2026-11-20T10:30:00Z,/logs/broker-1/server.log:17; /logs/broker-1/server.log:40,"User:alice uses librdkafka/1.0.0, which cannot re-authenticate, on a listener with connections.max.reauth.ms set: the broker will close its connections at expiry.",f1',
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--start", "2026-11-20"],
         "kafka-audit report: error: --start and --end go together: give both, or neither (every day)"),
        (["--start", "2026-11-21", "--end", "2026-11-20"],
         "kafka-audit report: error: --end 2026-11-20 must be after --start 2026-11-21"),
        (["--start", "2026-11-20T06:00:00Z", "--end", "2026-11-21"],
         "kafka-audit report: error: --start 2026-11-20T06:00:00+00:00 is not a UTC midnight: the window is whole UTC days (e.g. --start 2026-11-20)"),
        (["--start", "yesterday", "--end", "2026-11-20"],
         "kafka-audit report: error: argument --start: 'yesterday' is not a date or ISO-8601 timestamp (e.g. 2026-11-20)"),
        (["--format", "csv"],
         "kafka-audit report: error: --format csv prints one table: add --section metrics|readiness|findings"),
    ],
)  # fmt: skip
def test_argument_errors(
    audit_lake: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2: the usage and one line (README: exit codes)."""
    assert main(["report", "--lake", str(audit_lake), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: kafka-audit report [-h] --lake LAKE")
    assert err.splitlines()[-1] == message


def test_object_store_lake_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """No traceback: the usage and one line saying what works instead."""
    assert main(["report", "--lake", "s3://bucket/lake"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        "kafka-audit report: error: argument --lake: s3:// lakes are not supported (object-store "
        "URIs need Spark's Hadoop connector jars, which this install does not bundle); use a local "
        "path, a file:// URI, or the object store mounted as a folder (mountpoint-s3, gcsfuse, "
        "blobfuse2)"
    )


def test_missing_lake_and_table(
    tmp_path: Path, audit_lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--lake", str(tmp_path / "nowhere")]) == 1
    assert (
        capsys.readouterr().err
        == f"kafka-audit: error: lake '{tmp_path / 'nowhere'}' not found: expected the folder of a kafka-audit run\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", "--lake", str(empty), "--section", "findings"]) == 1
    assert (
        capsys.readouterr().err
        == f"kafka-audit: error: lake '{empty}' has no Delta table 'findings': run kafka-audit run on it first\n"
    )


# Progress of long runs (the same "CLI for people" part): jobs.progress, used by jobs.pipeline.run.


def test_progress_stage_lines_and_task_bar(
    spark: SparkSession, caplog: pytest.LogCaptureFixture
) -> None:
    """Forced on, the bar draws the stage's Spark tasks into the stream; the stage lines are
    logged; a stage that raises is logged as failed. Auto mode stays off on a non-terminal."""
    caplog.set_level(logging.INFO, logger="jobs.progress")
    stream = io.StringIO()
    with pytest.raises(ZeroDivisionError), Progress(spark, True, stream) as progress:
        progress.stage("count")
        assert spark.range(0, 1000, numPartitions=3).selectExpr("sum(id)").first() == (499500,)
        progress.stage("divide")
        _ = 1 / 0
    messages = [
        re.sub(r"\d+\.\d s \(\d+ Spark jobs, \d+ tasks\)", "N s (J, T)", r.getMessage())
        for r in caplog.records
        if r.name == "jobs.progress"
    ]
    assert messages == [
        "stage count: started",
        "stage count: done after N s (J, T)",
        "stage divide: started",
        "stage divide: failed after N s (J, T)",
    ]
    assert list(progress.durations) == ["count", "divide"]
    assert progress.spark_jobs["count"] >= 1 and progress.spark_jobs["divide"] == 0
    drawn = re.findall(r"count: 100%\|#+\| (\d+)/(\d+) ", stream.getvalue())
    assert drawn and drawn[-1][0] == drawn[-1][1] and int(drawn[-1][0]) >= 3, stream.getvalue()

    quiet = io.StringIO()
    with Progress(spark, None, quiet) as auto:
        auto.stage("count again")
        spark.range(10).count()
    assert (auto.enabled, quiet.getvalue()) == (False, "")


@pytest.mark.skipif(chromium() is None, reason="no chromium: run scripts/install_chromium.sh")
def test_samples_lake_page_renders_in_chromium(samples_lake: Path, tmp_path: Path) -> None:
    """The HTML report of the samples lake (the demo's real lines, written by a pipeline run):
    Chromium's DOM has its headline and every section; it has authentication failures and
    denials over time, so the over-time section draws figures."""
    page = tmp_path / "samples.html"
    argv = ["report", "--lake", str(samples_lake), "--format", "html", "--output", str(page)]
    assert main(argv) == 0
    dom = run_chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile")
    lines = page_text(dom)
    assert lines[:2] == ["kafka-audit report", "no findings"]
    assert [h for h in lines if h in HEADINGS] == list(HEADINGS)
    assert dom.count("<svg ") >= 1 and "<script" not in dom
