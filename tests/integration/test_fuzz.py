"""The fuzz suite's fixed-seed slice (issue 21): a generated cluster and the real samples, each
line kept once, with as many damaged copies mixed in (every kind of ``tests.support.fuzz_corpus.DAMAGE``)
and the special files beside them. One pipeline run; the full size is ``bench/fuzz_damaged.py``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from jobs.cli.report import render
from jobs.config import RunConfig, SourceSpec
from jobs.pipeline import run
from jobs.report import build_report, parse_window
from jobs.summary import RunSummary
from tests.support.fuzz_corpus import (
    CONTROL,
    DAMAGE,
    FuzzCorpus,
    build,
    expected_lines,
    secret_pieces,
)


@pytest.fixture(scope="module")
def fuzzed(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[FuzzCorpus, Path, RunSummary]:
    root = tmp_path_factory.mktemp("fuzz")
    corpus = build(root / "corpus", seed=21, lines_target=600)
    lake = root / "lake"
    config = RunConfig(sources=(SourceSpec(str(corpus.root)),), lake=str(lake), engine="embedded")
    return corpus, lake, run(spark, config, progress=False)


def test_every_kind_of_damage_is_in_the_corpus(
    fuzzed: tuple[FuzzCorpus, Path, RunSummary],
) -> None:
    corpus, _, _ = fuzzed
    assert set(corpus.kinds) == set(DAMAGE)
    assert corpus.damaged_lines >= corpus.kept_lines * 0.9
    assert corpus.secrets, "the corpus holds no secret: the leak check would mean nothing"


def test_the_run_finishes_and_accounts_for_every_line_of_every_file(
    fuzzed: tuple[FuzzCorpus, Path, RunSummary],
) -> None:
    corpus, _, summary = fuzzed
    assert summary.balanced
    rows = {r["source_path"]: r for r in summary.accounting}
    files = [p for p in corpus.root.rglob("*") if p.is_file() and ".properties" not in p.name]
    truncated = str(corpus.root / "special" / "truncated.log.2.gz")
    for path in files:
        data = path.read_bytes()
        if path.name.endswith(".gz") and str(path) != truncated:
            data = gzip.decompress(data)
        lines = rows[str(path)]["physical_lines"] if str(path) in rows else 0
        if str(path) == truncated:
            assert 0 < lines < 3000
        else:
            assert lines == expected_lines(data), path
    assert list(summary.damaged_files) == [truncated]


def test_no_piece_of_any_secret_anywhere(fuzzed: tuple[FuzzCorpus, Path, RunSummary]) -> None:
    corpus, lake, summary = fuzzed
    pieces = secret_pieces(corpus.secrets)
    leaks = set()
    for table in sorted(p.parent for p in lake.glob("*/_delta_log")):
        for row in DeltaTable(str(table)).to_pyarrow_table().to_pylist():
            text = repr(row)
            if any(piece in text for piece in pieces):
                leaks.add((table.name, row.get("source_path"), row.get("line_number")))
    assert not leaks
    outputs = summary.render() + summary.to_json()
    assert not [p for p in pieces if p in outputs]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_no_control_character_in_any_rendered_report(
    fuzzed: tuple[FuzzCorpus, Path, RunSummary], fmt: str
) -> None:
    _, lake, summary = fuzzed
    window = parse_window(None, None)
    sections = ["findings"] if fmt == "csv" else ["metrics", "readiness", "findings"]
    text = render(build_report(str(lake), sections, window), fmt, window.describe(), str(lake))
    assert not CONTROL.findall(text)
    assert not CONTROL.findall(summary.render())


def test_export_ocsf_without_spark_writes_what_spark_writes(
    spark: SparkSession, fuzzed: tuple[FuzzCorpus, Path, RunSummary], tmp_path: Path
) -> None:
    """The damaged lines' events (control bytes, invalid UTF-8, bidi principals...) come out of
    ``jobs.ocsf_events`` byte for byte as Spark's JSON writer writes them."""
    from jobs.cli.export_ocsf import export  # noqa: PLC0415
    from jobs.ocsf_events import export_without_spark  # noqa: PLC0415
    from jobs.report import Window  # noqa: PLC0415

    _, lake, _ = fuzzed
    by_spark = export(spark, str(lake), str(tmp_path / "spark"), "jsonl", Window())[:2]
    by_python = export_without_spark(str(lake), str(tmp_path / "python"), "jsonl", Window())
    assert [line.replace("/spark/", "/python/") for line in by_spark] == by_python
    for name in ("authentication", "api_activity"):
        expected = (tmp_path / "spark" / f"{name}.jsonl").read_bytes()
        assert expected.count(b"\n") > 20, name
        assert (tmp_path / "python" / f"{name}.jsonl").read_bytes() == expected, name
