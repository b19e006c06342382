"""The kafka-audit command line: one-line errors, exit codes, ``run --fail-on`` on a tiny
generated corpus, and ``parse`` output. Argument mistakes (exit 2) without Spark:
tests/unit/test_cli_args.py."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_fail_on_exits_4_after_writing_every_table(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A tiny generated cluster (one broker, one hour) whose ground truth has two medium
    # findings: an authorizer denial burst and a client that cannot re-authenticate.
    corpus, lake = tmp_path / "corpus", tmp_path / "lake"
    assert main(["generate", "--out", str(corpus), "--lines-target", "500", "--hours", "1",
                 "--brokers", "1", "--controllers", "0", "--connect-workers", "0",
                 "--clients", "3", "--seed", "3"]) == 0  # fmt: skip
    truth = [json.loads(line) for line in (corpus / "truth" / "findings.jsonl").open()]
    assert sorted(f["severity"] for f in truth) == ["medium", "medium"]
    capsys.readouterr()
    argv = ["run", "--input", str(corpus), "--lake", str(lake), "--engine", "embedded"]
    assert main([*argv, "--fail-on", "medium", "--json"]) == 4
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
    assert (lake / "findings" / "_delta_log").is_dir()


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
