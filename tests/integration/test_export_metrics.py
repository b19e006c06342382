"""kafka-audit export-metrics: a lake's security_metrics as an OpenMetrics file, read back by
prometheus_client's parser and, where Debian's ``prometheus`` package is installed
(scripts/install_promtool.sh), backfilled into TSDB blocks by the real ``promtool``. The lake is
written with deltalake; no Spark."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from pyspark.sql.pandas.types import to_arrow_schema

from jobs.cli.main import main
from schemas import security_metrics


def _parse(text: str) -> list[Metric]:
    """prometheus_client's OpenMetrics parser (unannotated there): every family of ``text``."""
    return list(text_string_to_metric_families(text))  # type: ignore[no-untyped-call]


H = 3600
#: 2026-11-20T00:00:00Z and 2026-11-21T00:00:00Z in seconds.
DAY20, DAY21 = 1795132800, 1795219200
#: A principal as an attacker could choose it: a terminal escape and a quote.
EVIL = 'User:\x1b[2Jmallory"'


def _metric(name: str, window: str, start: datetime, value: float, **slices: Any) -> dict[str, Any]:
    length = timedelta(hours=1) if window == "1h" else timedelta(days=1)
    row = {"metric_name": name, "window": window, "window_start_ts": start,
           "window_end_ts": start + length, "broker_id": "1", "listener": None,
           "mechanism": None, "principal": None, "api_key_name": None, "value": value,
           "event_count": 1, "run_id": "r", "window_date": start.date()}  # fmt: skip
    return {**row, **slices}


def _at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, tzinfo=UTC)


SCRAM = {"listener": "SASL_SSL", "mechanism": "SCRAM-SHA-512"}
ROWS = [
    _metric("failed-authentication-total", "1h", _at(20, 9), 3.0, **SCRAM),
    _metric("failed-authentication-total", "1h", _at(20, 11), 2.0, **SCRAM),
    _metric("failed-authentication-total", "1d", _at(20), 5.0, **SCRAM),
    _metric("failed-authentication-rate", "1h", _at(20, 9), 3 / H, **SCRAM),
    _metric("failed-authentication-rate", "1h", _at(20, 11), 2 / H, **SCRAM),
    _metric("failed-authentication-rate", "1d", _at(20), 5 / 86400, **SCRAM),
    _metric("authorization-denied-rate-per-minute", "1h", _at(20, 9), 0.5, principal=EVIL),
    _metric("authorization-denied-rate-per-minute", "1d", _at(20), 30 / 1440, principal=EVIL),
    _metric("failed-authentication-total", "1h", _at(21, 0), 1.0, **SCRAM),
    _metric("failed-authentication-total", "1d", _at(21), 1.0, **SCRAM),
    _metric(
        "reauthentication-latency-max",
        "1h",
        _at(21, 0),
        1250.0,
        listener="SASL_SSL",
        mechanism="OAUTHBEARER",
    ),
]


@pytest.fixture
def metrics_lake(tmp_path: Path) -> Path:
    """A lake holding only security_metrics: two days, hourly and daily windows."""
    lake = tmp_path / "lake"
    schema = to_arrow_schema(security_metrics.SECURITY_METRICS, timezone="UTC")
    write_deltalake(str(lake / security_metrics.TABLE_NAME), pa.Table.from_pylist(ROWS, schema=schema),
                    partition_by=list(security_metrics.PARTITION_COLUMNS))  # fmt: skip
    return lake


_REPLAYED = "(replayed from broker logs by kafka-audit)"
_FA = "kafka_server_socket_server_metrics_failed_authentication"
_SCRAM = 'broker="1",listener="SASL_SSL",mechanism="SCRAM-SHA-512"'
_DENIED = "kafka_server_plugins_authorization_denied_rate_per_minute"
_LATENCY = "kafka_server_socket_server_metrics_reauthentication_latency_max"
HOURLY = f"""\
# HELP {_DENIED} The number of authorizations denied per minute {_REPLAYED}
# TYPE {_DENIED} gauge
{_DENIED}{{broker="1",principal="User:\\\\x1b[2Jmallory\\""}} 0.5 {DAY20 + 10 * H - 1}
# HELP {_FA} The total number of connections with failed authentication since the first window exported {_REPLAYED}
# TYPE {_FA} counter
{_FA}_total{{{_SCRAM}}} 0.0 {DAY20 + 9 * H}
{_FA}_total{{{_SCRAM}}} 3.0 {DAY20 + 10 * H - 1}
{_FA}_total{{{_SCRAM}}} 5.0 {DAY20 + 12 * H - 1}
{_FA}_total{{{_SCRAM}}} 6.0 {DAY21 + H - 1}
# HELP {_FA}_rate The number of connections with failed authentication per second {_REPLAYED}
# TYPE {_FA}_rate gauge
{_FA}_rate{{{_SCRAM}}} 0.0008333333333333334 {DAY20 + 10 * H - 1}
{_FA}_rate{{{_SCRAM}}} 0.0005555555555555556 {DAY20 + 12 * H - 1}
# HELP {_LATENCY} The max latency observed due to re-authentication, in milliseconds {_REPLAYED}
# TYPE {_LATENCY} gauge
{_LATENCY}{{broker="1",listener="SASL_SSL",mechanism="OAUTHBEARER"}} 1250.0 {DAY21 + H - 1}
# EOF
"""


def _export(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["export-metrics", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_hourly_export_of_every_day(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default: hourly windows of every day; the file is the whole exposition, stdout
    stays empty, stderr says what was written; no temporary file is left beside it."""
    out = tmp_path / "out" / "metrics.om"
    code, stdout, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(out))
    assert (code, stdout, out.read_text(encoding="utf-8")) == (0, "", HOURLY)
    assert stderr == (
        f"export-metrics: 8 samples of 4 series in 4 metric families (1h windows, all days) -> {out}\n"
    )
    assert sorted(p.name for p in out.parent.iterdir()) == ["metrics.om"]


def test_same_lake_same_bytes_on_stdout_too(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.om", tmp_path / "b.om"
    for out in (first, second):
        assert _export(capsys, "--lake", str(metrics_lake), "--out", str(out))[0] == 0
    code, stdout, _ = _export(capsys, "--lake", str(metrics_lake), "--out", "-")
    assert (code, first.read_bytes(), second.read_bytes()) == (0, HOURLY.encode(), HOURLY.encode())
    assert stdout == HOURLY


def test_daily_windows_of_one_day(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--window 1d with --start/--end: the 20th's daily values only; the counter of the 21st
    is not in the window."""
    out = tmp_path / "day.om"
    code, _, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(out), "--window",
                              "1d", "--start", "2026-11-20", "--end", "2026-11-21")  # fmt: skip
    assert code == 0
    assert [line for line in out.read_text().splitlines() if not line.startswith("#")] == [
        f'{_DENIED}{{broker="1",principal="User:\\\\x1b[2Jmallory\\""}} 0.020833333333333332 {DAY21 - 1}',
        f"{_FA}_total{{{_SCRAM}}} 0.0 {DAY20}",
        f"{_FA}_total{{{_SCRAM}}} 5.0 {DAY21 - 1}",
        f"{_FA}_rate{{{_SCRAM}}} 5.787037037037037e-05 {DAY21 - 1}",
    ]
    assert stderr == (
        "export-metrics: 4 samples of 3 series in 3 metric families (1d windows, "
        f"2026-11-20 .. 2026-11-21 (UTC, end exclusive)) -> {out}\n"
    )


def test_an_empty_window_writes_eof_alone(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "empty.om"
    code, _, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(out), "--start",
                              "2030-01-01", "--end", "2030-01-02")  # fmt: skip
    assert (code, out.read_text()) == (0, "# EOF\n")
    assert _parse(out.read_text()) == []
    assert stderr == (
        "export-metrics: no security metrics (1h windows, 2030-01-01 .. 2030-01-02 (UTC, end "
        f"exclusive)): wrote an empty exposition (# EOF only) to {out}\n"
    )


def test_the_parser_reads_the_file(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """prometheus_client's OpenMetrics parser: four families, the counter's samples in order,
    the attacker's principal one label value with its escape shown, not executed."""
    out = tmp_path / "m.om"
    assert _export(capsys, "--lake", str(metrics_lake), "--out", str(out))[0] == 0
    families = {f.name: f for f in _parse(out.read_text())}
    assert {n: f.type for n, f in families.items()} == {
        _DENIED: "gauge",
        _FA: "counter",
        f"{_FA}_rate": "gauge",
        _LATENCY: "gauge",
    }
    assert [s.value for s in families[_FA].samples] == [0.0, 3.0, 5.0, 6.0]
    assert families[_DENIED].samples[0].labels == {
        "broker": "1",
        "principal": 'User:\\x1b[2Jmallory"',
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--start", "2026-11-20"], "--start and --end go together: give both, or neither (every day)"),
        (["--start", "2026-11-20T01:00:00Z", "--end", "2026-11-21"],
         "--start 2026-11-20T01:00:00+00:00 is not a UTC midnight: the window is whole UTC days (e.g. --start 2026-11-20)"),
        (["--start", "yesterday", "--end", "2026-11-21"], "argument --start: "),
        (["--window", "5m"], "argument --window: invalid choice: '5m' (choose from '1h', '1d')"),
        (["--lake", "s3://bucket/lake"], "argument --lake: "),
    ],
)  # fmt: skip
def test_command_line_mistakes_exit_2(
    metrics_lake: Path, tmp_path: Path, argv: list[str], message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    out = tmp_path / "m.om"
    code, stdout, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(out), *argv)
    assert (code, stdout, out.exists()) == (2, "", False)
    assert stderr.startswith("usage: kafka-audit export-metrics")
    assert f"kafka-audit export-metrics: error: {message}" in stderr


def test_out_is_a_folder_exits_2(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(tmp_path))
    assert code == 2
    assert stderr.splitlines()[-1] == (
        f"kafka-audit export-metrics: error: --out {tmp_path} is a folder: give a file name (metrics.om)"
    )


def test_missing_lake_or_table_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    code, _, stderr = _export(capsys, "--lake", str(missing), "--out", str(tmp_path / "m.om"))
    assert (code, stderr) == (
        1, f"kafka-audit: error: lake {str(missing)!r} not found: expected the folder of a kafka-audit run\n"
    )  # fmt: skip
    empty = tmp_path / "empty-lake"
    empty.mkdir()
    code, _, stderr = _export(capsys, "--lake", str(empty), "--out", str(tmp_path / "m.om"))
    assert (code, stderr) == (
        1, f"kafka-audit: error: lake {str(empty)!r} has no Delta table 'security_metrics': run kafka-audit run on it first\n"
    )  # fmt: skip
    assert not (tmp_path / "m.om").exists()


def test_unwritable_out_exits_1(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "metrics.om"
    code, _, stderr = _export(capsys, "--lake", str(metrics_lake), "--out", str(out))
    assert (code, stderr) == (1, f"kafka-audit: error: cannot write --out {out}: File exists\n")


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not installed (Debian package prometheus: scripts/install_promtool.sh)",
)
def test_promtool_backfills_the_file(
    metrics_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real backfill: ``promtool tsdb create-blocks-from openmetrics`` makes TSDB blocks of
    the file, and ``promtool tsdb dump`` reads every sample back (timestamps in ms)."""
    out, data = tmp_path / "metrics.om", tmp_path / "data"
    assert _export(capsys, "--lake", str(metrics_lake), "--out", str(out))[0] == 0
    assert PROMTOOL is not None
    subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(out), str(data)],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    (data / "wal").mkdir()  # dump opens the database, which wants a WAL folder
    dump = subprocess.run([PROMTOOL, "tsdb", "dump", str(data)], check=True, capture_output=True,
                          text=True, timeout=120).stdout  # fmt: skip
    scram = 'broker="1", listener="SASL_SSL", mechanism="SCRAM-SHA-512"'
    assert sorted(dump.splitlines()) == sorted([
        f'{{__name__="{_DENIED}", broker="1", principal="User:\\\\x1b[2Jmallory\\""}} 0.5 {(DAY20 + 10 * H - 1) * 1000}',
        f'{{__name__="{_FA}_total", {scram}}} 0 {(DAY20 + 9 * H) * 1000}',
        f'{{__name__="{_FA}_total", {scram}}} 3 {(DAY20 + 10 * H - 1) * 1000}',
        f'{{__name__="{_FA}_total", {scram}}} 5 {(DAY20 + 12 * H - 1) * 1000}',
        f'{{__name__="{_FA}_total", {scram}}} 6 {(DAY21 + H - 1) * 1000}',
        f'{{__name__="{_FA}_rate", {scram}}} 0.0008333333333333334 {(DAY20 + 10 * H - 1) * 1000}',
        f'{{__name__="{_FA}_rate", {scram}}} 0.0005555555555555556 {(DAY20 + 12 * H - 1) * 1000}',
        f'{{__name__="{_LATENCY}", broker="1", listener="SASL_SSL", mechanism="OAUTHBEARER"}} 1250 {(DAY21 + H - 1) * 1000}',
    ])  # fmt: skip
