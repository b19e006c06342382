"""The kafka-audit command line: one-line errors, exit codes, ``run --fail-on`` and
``run --notify`` on a tiny generated corpus, and ``parse`` output. Argument mistakes (exit 2) without Spark:
tests/unit/test_cli_args.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jobs.cli.main import main
from jobs.pipeline import TABLES_PER_RUN


def _conf(tmp_path: Path, text: str) -> str:
    path = tmp_path / "audit.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--input", "/does/not/exist.log", "--lake", "/tmp/x"], "no such file or folder"),
        (["run", "--input", "README.md", "--lake", "/tmp/x"], "no Kafka log among the 1 input file(s)"),
        (["run", "--conf", "/does/not/exist.toml"], "cannot read config file"),
        (["run", "--conf", "{tmp}/audit.toml"], "no input"),
        (["run", "--input", "samples", "--conf", "{tmp}/audit.toml"], "no lake"),
    ],
)  # fmt: skip
def test_config_and_input_errors_are_one_line_exit_1(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _conf(tmp_path, '[run]\nengine = "embedded"\n')
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-audit: ") and message in err[0], err
    assert "Traceback" not in err[0]


def test_a_window_half_given_in_the_config_file_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same mistake on the command line exits 2 (test_cli_args): here the file is wrong.
    conf = _conf(tmp_path, '[run]\nstart = "2026-11-20"\n')
    assert main(["run", "--input", "samples", "--lake", str(tmp_path / "l"), "--conf", conf]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-audit: configuration error: "), err


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--engine", "spark"]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("kafka-audit run: error: argument")


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook receiver on loopback: its URL (with a Slack-like secret path) and the JSON
    bodies it received."""
    received: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/services/T0/B0/s3cr3t", received
    finally:
        server.shutdown()
        server.server_close()


def test_fail_on_and_notify_after_writing_every_table(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    webhook: tuple[str, list[dict[str, Any]]],
) -> None:
    """A tiny generated cluster (one broker, one hour) whose ground truth has two medium
    findings (an authorizer denial burst, a client that cannot re-authenticate): ``--fail-on
    medium`` exits 4 after every table is written, and each finding is POSTed once to the
    webhook; the rerun with ``--fail-on high`` exits 0 and posts nothing again."""
    url, received = webhook
    corpus, lake = tmp_path / "corpus", tmp_path / "lake"
    assert main(["generate", "--out", str(corpus), "--lines-target", "500", "--hours", "1",
                 "--brokers", "1", "--controllers", "0", "--connect-workers", "0",
                 "--clients", "3", "--seed", "3"]) == 0  # fmt: skip
    truth = [json.loads(line) for line in (corpus / "truth" / "findings.jsonl").open()]
    assert sorted(f["severity"] for f in truth) == ["medium", "medium"]
    capsys.readouterr()
    argv = ["run", "--input", str(corpus), "--lake", str(lake), "--engine", "embedded",
            "--notify", url, "--notify-min-severity", "medium", "--json"]  # fmt: skip
    assert main([*argv, "--fail-on", "medium"]) == 4
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["findings_by_severity"] == {"high": 0, "medium": 2, "low": 0, "info": 0}
    assert (summary["fail_on"], summary["exit_code"], summary["balanced"]) == ("medium", 4, True)
    assert summary["headline"][0] == (
        "FAILED --fail-on medium: 2 findings at or above medium (2 medium)"
    )
    assert err.splitlines()[-1] == f"kafka-audit: {summary['headline'][0]}"
    written = {t["table"]: t for t in summary["tables"]}
    assert len(written) == TABLES_PER_RUN and not [t for t in written.values() if t["skipped"]]
    assert written["findings"]["rows_written"] == 2
    # The webhook: each finding once, Slack's text first; the URL's secret never printed.
    assert summary["warnings"] == []
    posted = [body["finding"]["finding_id"] for body in received]
    assert sorted(posted) == sorted(f["finding_id"] for f in truth)
    assert [body["text"].split(" ", 2)[:2] for body in received] == [
        ["kafka-audit", "[medium]"]] * 2  # fmt: skip
    state = (lake / "_kafka_audit" / "notified.jsonl").read_text().splitlines()
    assert [json.loads(line)["finding_id"] for line in state] == posted
    assert "s3cr3t" not in out + err
    # The rerun: same findings, none at or above high, none new for the webhook.
    assert main([*argv, "--fail-on", "high"]) == 0
    rerun = json.loads(capsys.readouterr().out)
    assert (rerun["exit_code"], rerun["findings_by_severity"]["medium"]) == (0, 2)
    assert len(received) == 2


def test_parse_prints_one_json_object_per_record(
    spark: SparkSession, samples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            ["parse", str(samples_dir / "authorizer.log"), str(samples_dir / "connect-worker.log")]
        )
        == 0
    )
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    got = [
        (
            Path(d["source"]).name,
            d["line"],
            d["family"],
            sorted(set(d) - {"source", "line", "family"}),
        )
        for d in docs
    ]
    authz = [
        ("authorizer.log", n, "authz", ["authz_decisions"])
        for n in (5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 19, 20)
    ]
    worker = [("connect-worker.log", n, "connect_worker", ["connect_requests"]) for n in (5, 8)]
    assert got == authz + worker
    assert docs[0]["authz_decisions"]["principal"] == "User:skyDriveProducer"
    assert docs[0]["authz_decisions"]["event_ts"] == "2020-06-03T14:25:26.298Z"
