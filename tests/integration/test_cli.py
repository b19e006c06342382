"""The kafka-audit command line: one-line errors, exit codes, and `parse` output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jobs.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--lake", "/tmp/x"], "no input"),
        (["run", "--input", "/does/not/exist.log", "--lake", "/tmp/x"], "no such file or folder"),
        (["run", "--input", "samples", "--lake", "/tmp/x", "--start", "2026-11-20"], "both --start and --end"),
        (["run", "--input", "samples", "--lake", "/tmp/x", "--start", "nope", "--end", "x"], "--start: 'nope'"),
        (["run", "--input", "samples", "--lake", "/tmp/x", "--time-zone", "Mars/Base"], "Mars/Base"),
        (["run", "--conf", "/does/not/exist.toml"], "cannot read config file"),
    ],
)  # fmt: skip
def test_user_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-audit: ") and message in err[0], err
    assert "Traceback" not in err[0]


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["run", "--engine", "spark"])
    assert raised.value.code == 2


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
