"""``kafka-audit report`` for people (issue 18, "Output people can read"): the table format fits
the width it is drawn at, opens with a headline, shows findings first with evidence relative to
the folder the logs share and metric values with their units; log text is never read as rich
markup; argument mistakes exit 2. Hand-made rows, no Spark, no lake."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from jobs.cli import report as cli
from jobs.cli.main import main
from jobs.errors import ConfigError
from jobs.formatting import (
    common_folder,
    list_text,
    metric_value_text,
    positions_text,
    relative_position,
    split_position,
)
from jobs.report import Window, findings_rows, headline, parse_window, severity_counts

ESC = "\x1b"
T = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
LONG = (
    "User:alice uses librdkafka/1.0.0, which cannot re-authenticate, on a listener with "
    "connections.max.reauth.ms set: the broker will close its connections at expiry."
)


def finding(severity: str, count: int, **more: Any) -> dict[str, Any]:
    """A row as ``jobs.report.findings_rows`` shapes it."""
    row = {"severity": severity, "rule": "reauth.no_reauth_client_on_expiring_listener",
           "kip": "KIP-368", "subject": "principal: User:alice", "discriminator": None,
           "node": "1", "count": count, "first_seen": T, "last_seen": T.replace(hour=10),
           "evidence": ["/var/log/kafka/broker-1/server.log:17", "/var/log/kafka/broker-1/server.log:40"],
           "explanation": LONG, "finding_id": "f"}  # fmt: skip
    return {**row, **more}


def metric(name: str, value: float, **more: Any) -> dict[str, Any]:
    """A row as ``jobs.report.metrics_rows`` shapes it (daily window, broker 1)."""
    row = {"window_start": datetime(2026, 11, 20, tzinfo=UTC), "metric": name, "broker": "1",
           "listener": None, "mechanism": None, "principal": None, "api": None, "value": value,
           "events": 1}  # fmt: skip
    return {**row, **more}


READINESS = {"candidate_ms": 900_000, "sessions": 15, "killed": 5, "unknown_client": 1,
             "first_kill": T, "principals_killed": [f"User:app-{i:02}" for i in range(8)],
             "client_software_killed": ["librdkafka/1.0.0"]}  # fmt: skip


def full_report() -> dict[str, list[dict[str, Any]]]:
    return {
        "findings": [  # in findings_rows' order
            finding(
                "high",
                1,
                rule="tokens.renewed_past_max",
                kip="KIP-48",
                node=None,
                subject="token: hmac:ab12",
                discriminator="tok-1",
                last_seen=T,
                evidence=["/var/log/kafka/broker-2/kafka-request.log:5"],
                explanation="Token renewed past its max lifetime.",
            ),
            finding("medium", 3),
        ],
        "readiness": [READINESS],
        "metrics": [
            metric(
                "authorization-denied-rate-per-minute", 4 / 1440, principal="User:bob", events=4
            ),
            metric("failed-authentication-rate", 1 / 86400, listener="SASL_SSL-9094"),
            metric("failed-authentication-total", 1.0, listener="SASL_SSL-9094"),
            metric("reauthentication-latency-avg", 12.5, mechanism="SCRAM-SHA-512", events=2),
        ],
    }


def test_table_at_80_columns_whole_output() -> None:
    """Headline first, findings most severe first with evidence relative to the logs' common
    folder (node folders visible), readiness, then the metrics as one line."""
    text = cli.render(full_report(), "table", "all days", "/lake", width=80, metrics_hint=True)
    assert (
        text
        == """\
2 findings: 1 high, 1 medium
lake: /lake
window: all days

Findings (evidence under /var/log/kafka/)

severity  events  finding
--------- ------- --------------------------------------------------------------
high           1  tokens.renewed_past_max (KIP-48)
                  token: hmac:ab12 (tok-1)
                  seen 2026-11-20 09:00:00 in broker-2/kafka-request.log:5
                  Token renewed past its max lifetime.

medium         3  reauth.no_reauth_client_on_expiring_listener (KIP-368)
                  principal: User:alice, node 1
                  seen 2026-11-20 09:00:00 .. 10:00:00 in broker-1/server.log:17
                  (+1)
                  User:alice uses librdkafka/1.0.0, which cannot
                  re-authenticate, on a listener with connections.max.reauth.ms
                  set: the broker will close its connections at expiry.

Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...

candidate  sessions  killed  unknown client  first kill        principals killed
---------- --------- ------- --------------- ----------------- -----------------
15 min           15       5               1  2026-11-20        User:app-00,
                                             09:00:00          User:app-01,
                                                               User:app-02,
                                                               User:app-03,
                                                               User:app-04 (+3)

Security metrics (Kafka JMX names; value per window, events behind it)
4 metric values: add --section metrics (or all) to list them
"""
    )


def test_metrics_listed_one_table_per_metric_with_units() -> None:
    """Empty columns are not drawn: each metric's table has only the slices it has."""
    text = cli.render({"metrics": full_report()["metrics"]}, "table", "all days", "/lake", width=80)
    assert (
        text.split("\n\n", 2)[2]
        == """\
authorization-denied-rate-per-minute
window start  broker  principal        value  events
------------- ------- ---------- ------------ ------
2026-11-20    1       User:bob   0.00278/min       4

failed-authentication-rate
window start  broker  listener            value  events
------------- ------- -------------- ----------- ------
2026-11-20    1       SASL_SSL-9094  1.16e-05/s       1

failed-authentication-total
window start  broker  listener       value  events
------------- ------- -------------- ------ ------
2026-11-20    1       SASL_SSL-9094      1       1

reauthentication-latency-avg
window start  broker  mechanism        value  events
------------- ------- -------------- -------- ------
2026-11-20    1       SCRAM-SHA-512  12.5 ms       2
"""
    )


def test_hourly_metric_windows_keep_the_hour() -> None:
    rows = [metric("failed-authentication-total", 2.0, window_start=T)]
    text = cli.render({"metrics": rows}, "table", "all days", "/lake", width=80)
    assert "2026-11-20 09:00  1" in text


@pytest.mark.parametrize("width", [40, 60, 80, 132])
def test_no_line_wider_than_the_width(width: int) -> None:
    """Long rules, explanations, principal lists and an unbroken 150-character subject: every
    line fits, nothing is cut (folded instead)."""
    report = full_report()
    hostile = "principal: User:" + "x" * 150
    report["findings"].append(finding("low", 9, subject=hostile, evidence=[]))
    text = cli.render(report, "table", "2026-11-20 .. 2026-11-21 (UTC, end exclusive)",
                      "/data/" + "lake" * 30, width=width)  # fmt: skip
    assert max(len(line) for line in text.splitlines()) <= width
    joined = "".join(line.strip() for line in text.splitlines())  # undo wrapping and folding
    assert "x" * 150 in joined and "/data/" + "lake" * 30 in joined
    assert text.count("SCRAM-S") == 1 and "(+3)" in joined  # every table drawn


def test_metrics_hint_replaces_the_metric_tables() -> None:
    text = cli.render(full_report(), "table", "all days", "/lake", metrics_hint=True)
    assert "4 metric values: add --section metrics (or all) to list them" in text
    assert "failed-authentication-rate" not in text
    assert cli.metrics_hint_text(0) == "no metric values"
    assert cli.metrics_hint_text(1).startswith("1 metric value:")


def test_no_findings_headline_and_empty_sections() -> None:
    text = cli.render({"findings": [], "readiness": []}, "table", "all days", "/lake", width=80)
    assert text == (
        "no findings\nlake: /lake\nwindow: all days\n\nFindings\n(none)\n\n"
        "Re-authentication readiness (KIP-368): if connections.max.reauth.ms were ...\n(none)\n"
    )


def test_log_text_is_never_rich_markup_nor_a_control_sequence() -> None:
    """A principal with rich markup, an emoji code and an ANSI escape is shown literally,
    the escape as text; with colours on, the only escapes are rich's own styles."""
    sneaky = f"User:[bold red]eve[/] :smile: {ESC}[31mred"
    report = {"findings": [finding("high", 1, subject=f"principal: {sneaky}",
                                   explanation="[link=http://x]click[/link]")]}  # fmt: skip
    plain = cli.render(report, "table", "all days", "/lake[i]", width=100)
    assert "User:[bold red]eve[/] :smile: \\x1b[31mred" in plain
    assert "[link=http://x]click[/link]" in plain and "/lake[i]" in plain
    assert ESC not in plain
    coloured = cli.render(report, "table", "all days", "/lake", width=100, color=True)
    assert "\\x1b[31mred" in coloured
    assert f"{ESC}[31mred" not in coloured  # the log's escape never reaches the terminal
    assert f"{ESC}[1;31mhigh" in coloured  # rich's own: severity in bold red


def test_markdown_headline_findings_first_relative_evidence() -> None:
    text = cli.render(full_report(), "markdown", "all days", "/lake", metrics_hint=True)
    lines = text.splitlines()
    assert lines[:7] == [
        "# kafka-audit report",
        "",
        "**2 findings: 1 high, 1 medium**",
        "",
        "lake: /lake, window: all days",
        "",
        "## Findings (evidence under /var/log/kafka/)",
    ]
    high = next(line for line in lines if line.startswith("| high"))
    assert "| broker-2/kafka-request.log:5 |" in high
    assert "token: hmac:ab12 (tok-1)" in high
    assert (
        text.index("## Findings") < text.index("## Re-authentication") < text.index("## Security")
    )
    assert text.endswith("4 metric values: add --section metrics (or all) to list them\n")


def test_json_keeps_full_paths_and_every_column() -> None:
    import json  # noqa: PLC0415

    document = json.loads(cli.render(full_report(), "json", "all days", "/lake", metrics_hint=True))
    assert document["findings"][1]["evidence"] == [
        "/var/log/kafka/broker-1/server.log:17", "/var/log/kafka/broker-1/server.log:40"
    ]  # fmt: skip
    assert len(document["metrics"]) == 4  # json ignores the hint: every row
    assert document["readiness"][0]["client_software_killed"] == ["librdkafka/1.0.0"]


def test_headline_and_severity_counts() -> None:
    rows = [{"severity": s} for s in ["low"] * 13 + ["high"] * 3 + ["medium"] * 23]
    assert headline(rows) == "39 findings: 3 high, 23 medium, 13 low"
    assert headline([{"severity": "high"}]) == "1 finding: 1 high"
    assert headline([]) == "no findings"
    odd = [{"severity": "info"}, {"severity": "critical"}, {"severity": "high"}]
    assert list(severity_counts(odd).items()) == [("high", 1), ("info", 1), ("critical", 1)]


def test_findings_sorted_by_severity_then_count() -> None:
    def stored(fid: str, severity: str, count: int, rule: str = "r") -> dict[str, Any]:
        return {"finding_id": fid, "rule_id": rule, "kip": "KIP-48", "severity": severity,
                "subject_type": "principal", "subject": "User:a", "discriminator": "",
                "node_id": None, "first_seen_ts": T, "last_seen_ts": T, "count": count,
                "evidence": None, "explanation": ""}  # fmt: skip

    rows = [stored("a", "low", 50), stored("b", "high", 1), stored("c", "medium", 2),
            stored("d", "high", 7), stored("e", "medium", 2, rule="a")]  # fmt: skip
    assert [r["finding_id"] for r in findings_rows(rows)] == ["d", "b", "e", "c", "a"]


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("failed-authentication-total", 5.0, "5"),
        ("expired-connections-killed-count", 20.0, "20"),
        ("failed-authentication-rate", 1 / 86400, "1.16e-05/s"),
        ("successful-authentication-rate", 0.5, "0.5/s"),
        ("authorization-denied-rate-per-minute", 10 / 60, "0.167/min"),
        ("authorization-allowed-rate-per-minute", 0.0, "0/min"),
        ("reauthentication-latency-avg", 12.5, "12.5 ms"),
        ("reauthentication-latency-max", 1234.0, "1234 ms"),
        ("reauthentication-latency-p99", 150.4, "150 ms"),
        ("some-new-metric", 2.25, "2.25"),
        ("failed-authentication-rate", None, ""),
    ],
)
def test_metric_values_carry_their_unit(name: str, value: float | None, text: str) -> None:
    assert metric_value_text(name, value) == text


@pytest.mark.parametrize(
    ("positions", "folder"),
    [
        (["/logs/broker-1/server.log:7", "/logs/broker-2/server.log:9"], "/logs"),
        (["/logs/broker-1/server.log:7", "/logs/broker-1/server.log:9"], "/logs/broker-1"),
        (["/logs/a/b/x.log:1", "/logs/a/c/y.log:2", "/logs/a/z.log:3"], "/logs/a"),
        (["/a/x.log:1", "/b/y.log:2"], "/"),
        (["rel/x.log:1", "/abs/y.log:2"], ""),  # mixed: no common folder
        ([], ""),
    ],
)
def test_common_folder(positions: list[str], folder: str) -> None:
    assert common_folder(positions) == folder


def test_positions_relative_to_the_common_folder() -> None:
    assert positions_text(["/logs/broker-1/server.log:7", "/logs/x.log:1"], "/logs") == (
        "broker-1/server.log:7 (+1)"
    )
    assert positions_text([], "/logs") == ""
    assert relative_position("/other/server.log:7", "/logs") == "/other/server.log:7"
    assert relative_position("/logs-old/server.log:7", "/logs") == "/logs-old/server.log:7"
    assert relative_position("/a/x.log:1", "/") == "a/x.log:1"
    assert split_position("C:/logs/x.log:12") == ("C:/logs/x.log", "12")
    assert split_position("/logs/no-line") == ("/logs/no-line", "")
    assert list_text(["a", "b", "c"], most=2) == "a, b (+1)"


@pytest.mark.parametrize(
    "value",
    ["2026-11-20", "2026-11-20T00:00:00Z", "2026-11-20T01:00:00+01:00", "2026-11-20T00:00"],
)
def test_start_takes_the_forms_run_takes(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window is read before the lake: a good one gets as far as the missing lake (1)."""
    code = main(["report", "--lake", str(tmp_path / "no"), "--start", value, "--end", "2026-11-21"])
    assert (code, capsys.readouterr().err) == (
        1, f"kafka-audit: error: lake '{tmp_path / 'no'}' not found: expected the folder of a kafka-audit run\n"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--start", "2026-11-20T05:00:00Z", "--end", "2026-11-21"],
         "--start 2026-11-20T05:00:00+00:00 is not a UTC midnight"),
        (["--start", "yesterday"], "argument --start: 'yesterday' is not a date"),
        (["--end", "2026-13-01"], "argument --end: '2026-13-01' is not a date"),
        (["--start", "2026-11-20"], "--start and --end go together"),
        (["--end", "2026-11-20"], "--start and --end go together"),
        (["--start", "2026-11-21", "--end", "2026-11-21"],
         "--end 2026-11-21 must be after --start 2026-11-21"),
        (["--lake", "s3://bucket/lake"], "argument --lake: s3:// lakes are not supported"),
        (["--lake", "gs://bucket/lake"], "argument --lake: gs:// lakes are not supported"),
        (["--width", "30"], "argument --width: expected a number >= 40, got 30"),
        (["--width", "wide"], "argument --width: expected a whole number, got wide"),
        (["--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["--section", "finding"], "argument --section: invalid choice: 'finding'"),
        (["--format", "csv"], "--format csv prints one table: add --section"),
        (["--format", "csv", "--section", "all"], "--format csv prints one table"),
        (["--sections", "all"], "unrecognized arguments: --sections all"),
    ],
)  # fmt: skip
def test_argument_mistakes_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Usage and one line, exit 2, before any lake is read (the lake here does not exist)."""
    lake = [] if "--lake" in argv else ["--lake", str(tmp_path / "no")]
    assert main(["report", *lake, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: kafka-audit") and "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith(("kafka-audit report: error: ", "kafka-audit: error: ")), err
    assert message in last, err


def test_report_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Print what a lake found: a headline" in out and "--width COLUMNS" in out


@pytest.mark.parametrize(
    ("requested", "terminal", "environ", "width"),
    [
        (90, True, {"COLUMNS": "50"}, 90),
        (None, False, {}, 100),
        (None, False, {"COLUMNS": "132"}, 132),
        (None, False, {"COLUMNS": "wide"}, 100),
        (None, False, {"COLUMNS": "0"}, 100),
        (None, True, {}, 77),
    ],
)
def test_output_width(
    requested: int | None,
    terminal: bool,
    environ: dict[str, str],
    width: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fake(fallback: tuple[int, int] = (0, 0)) -> os.terminal_size:
        return os.terminal_size((77, 24))

    monkeypatch.setattr(shutil, "get_terminal_size", fake)
    assert cli.output_width(requested, terminal, environ) == width


@pytest.mark.parametrize(
    ("start", "end", "window"),
    [
        (None, None, Window()),
        ("2026-11-20", "2026-11-21", Window(date(2026, 11, 20), date(2026, 11, 21))),
        ("2026-11-20T00:00:00Z", "2026-11-22T00:00:00+00:00",
         Window(date(2026, 11, 20), date(2026, 11, 22))),
        (date(2026, 11, 20), datetime(2026, 11, 21, tzinfo=UTC),
         Window(date(2026, 11, 20), date(2026, 11, 21))),
    ],
)  # fmt: skip
def test_parse_window(start: Any, end: Any, window: Window) -> None:
    assert parse_window(start, end) == window


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("2026-11-20", None, "give both --start and --end"),
        ("2026-11-20T12:00:00Z", "2026-11-21", "--start: 2026-11-20T12:00:00Z is not the start"),
        ("2026-11-20", "tomorrow", "--end: 'tomorrow' is not a date"),
        ("2026-11-21", "2026-11-20", "--end 2026-11-20 must be after --start 2026-11-21"),
    ],
)
def test_parse_window_mistakes(start: Any, end: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_window(start, end)
