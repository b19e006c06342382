"""Damaged input (issue 21): lines end at ``\\n`` only, whatever bytes a file holds; a record
whose time cannot exist is quarantined as ``bad_timestamp`` and stops nothing."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.config import RunConfig, SourceSpec
from jobs.ingest import read_lines
from jobs.inputs import discover_sources
from jobs.pipeline import run
from jobs.simulator.generate import generate
from jobs.simulator.world import GenerateOptions
from jobs.summary import RunSummary
from tests.support.fuzz_corpus import expected_lines
from transforms.silver.registry import SILVER_TABLES

AUTH = (
    "[2026-11-20 10:00:0{n},000] INFO [SocketServer listenerType=BROKER, nodeId=1] Failed "
    "authentication with /10.0.0.9 (channelId=10.0.0.1:9093-10.0.0.9:5000{n}-0-1) "
    "(Authentication failed: Invalid username or password) "
    "(org.apache.kafka.common.network.Selector)"
)

#: file name -> bytes. A lone ``\\r`` inside a value (a crafted SASL username), CRLF line ends,
#: a file without a final newline, binary junk, an empty file, a gzip file.
FILES = {
    "lone-cr.log": (AUTH.format(n=1).replace("with /", "with /\r[2026-11-20 10:00:09,000] ")
                    + "\n" + AUTH.format(n=2) + "\n").encode(),
    "crlf.log": (AUTH.format(n=3) + "\r\n" + AUTH.format(n=4) + "\r\n").encode(),
    "no-final-newline.log": (AUTH.format(n=5) + "\n" + AUTH.format(n=6)).encode(),
    "binary.log": bytes(range(256)) * 4 + b"\r\r\n\x00\r",
    "empty.log": b"",
    "zipped.log.1.gz": gzip.compress((AUTH.format(n=7) + "\r\n" + "x\ry\n").encode()),
}  # fmt: skip


def test_lines_end_at_newline_only(spark: SparkSession, tmp_path: Path) -> None:
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    sources = discover_sources([SourceSpec(str(tmp_path))])
    lines = read_lines(spark, sources)
    counts = {
        Path(r["source_path"]).name: r["n"]
        for r in lines.groupBy("source_path").agg(F.count(F.lit(1)).alias("n")).collect()
    }
    want = {
        name: expected_lines(gzip.decompress(data) if name.endswith(".gz") else data)
        for name, data in FILES.items()
    }
    assert counts == {name: n for name, n in want.items() if n}
    values = {
        (Path(r["source_path"]).name, r["value"])
        for r in lines.where(~F.col("source_path").endswith("binary.log")).collect()
    }
    assert values == {
        ("lone-cr.log", AUTH.format(n=1).replace("with /", "with /\r[2026-11-20 10:00:09,000] ")),
        ("lone-cr.log", AUTH.format(n=2)),
        ("crlf.log", AUTH.format(n=3)),
        ("crlf.log", AUTH.format(n=4)),
        ("no-final-newline.log", AUTH.format(n=5)),
        ("no-final-newline.log", AUTH.format(n=6)),
        ("zipped.log.1.gz", AUTH.format(n=7)),
        ("zipped.log.1.gz", "x\ry"),
    }


IMPOSSIBLE = ("2026-13-45 25:61:61", "0000-00-00 00:00:00")
_TS = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[tuple[str, int]]]:
    """A generated hour of a cluster in which every 7th timestamped line has an impossible
    time, plus the special files of FILES. Returns the folder and the damaged positions."""
    out = tmp_path_factory.mktemp("damaged") / "corpus"
    options = GenerateOptions(out=out, brokers=2, controllers=1, connect_workers=1, hours=1.0,
                              lines_target=1500, seed=5)  # fmt: skip
    generate(options, progress=None)
    shutil.rmtree(out / "truth")
    positions = set()
    for path in sorted(out.rglob("*.log")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if i % 7 == 3 and _TS.search(line):
                lines[i] = _TS.sub(IMPOSSIBLE[i % 2], line, count=1)
                positions.add((str(path), i + 1))
        path.write_text("\n".join(lines), encoding="utf-8")
    special = out / "special"
    special.mkdir()
    for name, data in FILES.items():
        (special / name).write_bytes(data)
    # A rotation copied half-way, and junk with a .gz name.
    whole = gzip.compress("".join(AUTH.format(n=n % 10) + "\n" for n in range(5000)).encode())
    (special / "server.log.2.gz").write_bytes(whole[: len(whole) * 2 // 3])
    (special / "server.log.3.gz").write_bytes(b"\x1f\x8b not really gzip " * 10)
    broker = out / "broker-9"
    broker.mkdir()
    (broker / "server.properties").write_text("node.id=9\nprocess.roles=broker\n", "utf-8")
    (broker / "kafka-request.log").write_text("\n".join(SECRET_LINES) + "\n", "utf-8")
    return out, positions


#: A token's HMAC in base64 (JSON, 2.8+) and as the byte array of the pre-2.8 string form.
HMAC_B64 = "Zm9vYmFyLXNlY3JldC1obWFjLXZhbHVlLTEyMzQ1Njc4OTAtYWJjZGVm"
HMAC_BYTES = "[" + ", ".join(str(b) for b in b"foobar-secret-hmac-value-1234") + "]"
_REQ = (
    '[2026-11-20 10:00:0{n},000] DEBUG Completed request:{{"isForwarded":false,'
    '"requestHeader":{{"requestApiKey":39,"requestApiVersion":2,"correlationId":{n},'
    '"clientId":"adm","requestApiKeyName":"RENEW_DELEGATION_TOKEN"}},"request":{body},'
    '"response":{{"errorCode":0,"expiryTimestampMs":4,"throttleTimeMs":0}},'
    '"connection":"10.0.0.1:9093-10.0.0.9:50000-0-1","totalTimeMs":1.0,'
    '"securityProtocol":"SASL_SSL","principal":"User:alice","listener":"SASL_SSL"}} '
    "(kafka.request.logger)"
)


def _cut_in_two(line: str, after: str) -> list[str]:
    at = line.index(after) + len(after)
    return [line[:at], line[at:]]


#: The secret whole, indented (a container prefix: a record of its own), cut before the
#: value, re-spaced, in another case, as an unterminated byte array, and at the end of a
#: 50 kB value, and cut in two inside the value.
SECRET_LINES = [
    _REQ.format(n=1, body='{"hmac":"' + HMAC_B64 + '","renewPeriodMs":-1}'),
    "    " + _REQ.format(n=2, body='{"hmac":"' + HMAC_B64 + '","renewPeriodMs":-1}'),
    _REQ.format(n=3, body='{"hmac":"' + HMAC_B64 + '"}')[:200],
    _REQ.format(n=4, body='{ "hmac" :  "' + HMAC_B64 + '" , "renewPeriodMs" : -1 }'),
    _REQ.format(n=5, body='{"HMAC":"' + HMAC_B64 + '","renewPeriodMs":-1}'),
    "[2026-11-20 10:00:06,000] DEBUG Completed request:RequestHeader(apiKey=RENEW_DELEGATION_"
    "TOKEN, apiVersion=1, clientId=adm, correlationId=8) -- RenewDelegationTokenRequestData("
    "hmac=" + HMAC_BYTES[:-1],
    # A 50 kB value: the textbook JSON-string regex recursed per character and killed the JVM.
    _REQ.format(n=7, body='{"hmac":"' + "A" * 50_000 + HMAC_B64 + '"}'),
    # A record cut in two inside the value: the rest of the HMAC starts the next line.
    *_cut_in_two(_REQ.format(n=8, body='{"hmac":"' + HMAC_B64 + '"}'), HMAC_B64[:28]),
]


def pieces(secret: str, size: int = 24) -> set[str]:
    """Every ``size``-character piece of ``secret``."""
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def strings(value: object) -> list[str]:
    """Every string inside a row value (lists and structs walked)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@pytest.fixture(scope="module")
def damaged_lake(
    spark: SparkSession,
    damaged: tuple[Path, set[tuple[str, int]]],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, RunSummary]:
    lake = tmp_path_factory.mktemp("damaged-lake")
    config = RunConfig(sources=(SourceSpec(str(damaged[0])),), lake=str(lake), engine="embedded")
    return lake, run(spark, config, progress=False)


def test_impossible_timestamps_are_quarantined_and_every_table_is_written(
    damaged: tuple[Path, set[tuple[str, int]]], damaged_lake: tuple[Path, RunSummary]
) -> None:
    lake, summary = damaged_lake
    assert summary.balanced
    quarantined = DeltaTable(str(lake / "quarantine")).to_pyarrow_table().to_pylist()
    bad = {(r["source_path"], r["line_number"]) for r in quarantined
           if r["reason_code"] == "bad_timestamp"}  # fmt: skip
    assert bad, "no record with an impossible time was quarantined"
    assert bad <= damaged[1]
    for r in quarantined:
        if r["reason_code"] == "bad_timestamp":
            assert r["raw"] and r["log_ts"] is None
    # Every silver table holds only timed rows; the gold tables were all written.
    for name in SILVER_TABLES:
        rows = DeltaTable(str(lake / name)).to_pyarrow_table().to_pylist()
        assert all(r["event_ts"] is not None for r in rows), name
        assert not {(r["source_path"], r["line_number"]) for r in rows} & bad, name
    sessions = DeltaTable(str(lake / "reauth_sessions")).to_pyarrow_table().to_pylist()
    assert sessions and all(s["start_ts"] is not None for s in sessions)
    written = {t.table for t in summary.tables}
    assert {"reauth_sessions", "token_lifecycle", "security_metrics", "findings"} <= written


def test_accounting_counts_newline_terminated_lines(
    damaged: tuple[Path, set[tuple[str, int]]], damaged_lake: tuple[Path, RunSummary]
) -> None:
    _, summary = damaged_lake
    counted = {Path(r["source_path"]).name: r["physical_lines"] for r in summary.accounting
               if Path(r["source_path"]).name in FILES}  # fmt: skip
    want = {
        name: expected_lines(gzip.decompress(data) if name.endswith(".gz") else data)
        for name, data in FILES.items()
    }
    assert counted == {name: n for name, n in want.items() if n}


def test_damaged_gzip_files_are_read_as_far_as_they_can_be_and_named(
    damaged: tuple[Path, set[tuple[str, int]]], damaged_lake: tuple[Path, RunSummary]
) -> None:
    """One truncated and one corrupt .gz in the folder: the run goes on, their readable lines
    are read, and the summary, the warnings and the accounting name each with its reason."""
    _, summary = damaged_lake
    special = damaged[0] / "special"
    truncated, corrupt = str(special / "server.log.2.gz"), str(special / "server.log.3.gz")
    assert set(summary.damaged_files) == {truncated, corrupt}
    assert summary.damaged_files[truncated].startswith("truncated gzip")
    assert summary.damaged_files[corrupt].startswith("damaged gzip")
    rows = {r["source_path"]: r for r in summary.accounting}
    assert 0 < rows[truncated]["physical_lines"] < 5000
    assert rows[truncated]["file_issue"] == summary.damaged_files[truncated]
    assert rows[corrupt]["file_issue"] == summary.damaged_files[corrupt]
    assert all(r["file_issue"] is None for p, r in rows.items() if p not in (truncated, corrupt))
    assert sum(truncated in w or corrupt in w for w in summary.warnings) == 2
    assert "truncated gzip" in summary.render()
    assert json.loads(summary.to_json())["damaged_files"] == summary.damaged_files


def test_no_piece_of_a_secret_in_any_column_of_any_table(
    damaged_lake: tuple[Path, RunSummary],
) -> None:
    """Column by column, every table: no 24-character piece of the token's HMAC, whether the
    line was whole, indented, cut, re-spaced, upper-case or pre-2.8."""
    lake, summary = damaged_lake
    secret = pieces(HMAC_B64) | pieces(HMAC_BYTES[1:-1])
    leaks = []
    for table in sorted(p.parent for p in lake.glob("*/_delta_log")):
        for row in DeltaTable(str(table)).to_pyarrow_table().to_pylist():
            for column, value in row.items():
                if any(piece in text for text in strings(value) for piece in secret):
                    leaks.append(f"{table.name}.{column}")
    assert not leaks, sorted(set(leaks))
    assert not [p for p in secret if p in summary.to_json() or p in summary.render()]
    bronze = DeltaTable(str(lake / "raw_lines")).to_pyarrow_table().to_pylist()
    got = sorted(
        (r["line_number"], r["layout"], r["line_count"], "REDACTED" in r["raw"])
        for r in bronze
        if r["source_path"].endswith("/broker-9/kafka-request.log")
    )
    # Each line is a record of its own: the indented one behind its prefix, the two cut ones
    # (no logger) of layout unrecognized; every record that held a piece of the HMAC holds a
    # placeholder instead (line 3 was cut before its "request").
    assert got == [
        (1, "log4j", 1, True), (2, "log4j", 1, True), (3, "unrecognized", 1, False),
        (4, "log4j", 1, True), (5, "log4j", 1, True), (6, "unrecognized", 1, True),
        (7, "log4j", 1, True), (8, "unrecognized", 2, True),
    ]  # fmt: skip
