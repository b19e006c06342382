"""Damaged input (issue 21): lines end at ``\\n`` only, whatever bytes a file holds."""

from __future__ import annotations

import gzip
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.config import SourceSpec
from jobs.ingest import read_lines
from jobs.inputs import discover_sources

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


def expected_lines(data: bytes) -> int:
    """``\\n``-terminated lines, plus one for a final unterminated line."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


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
