"""The Detection Finding file of ``kafka-audit export-ocsf`` (issue 19, "Findings out") from a
findings table written to Delta with deltalake, typed by ``schemas.findings`` (no Spark): the
line the command prints, the file's events valid against OCSF 1.8.0, the window, the same bytes
on a second export, Parquet, and the lake errors."""

from __future__ import annotations

import importlib.metadata
import json
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from jobs.errors import InputError
from jobs.lake.embedded_files import arrow_schema
from jobs.ocsf_findings import export_detection_findings, without_nulls
from jobs.report import Window
from schemas import findings
from tests.unit.test_ocsf_findings import (
    EXPECTED_HIGH,
    HIGH,
    INFO,
    LOW,
    MEDIUM,
    ODD,
    row,
    validator,
)

UNTIMED = row("f-untimed", "high", "principal", "User:x", first_seen_ts=None, last_seen_ts=None,
              finding_date=None)  # fmt: skip
#: A finding of the day before, the only one of its partition.
EARLIER = row("f-earlier", "low", "node", "2", finding_date=date(2026, 11, 19),
              last_seen_ts=LOW["last_seen_ts"].replace(day=19),
              first_seen_ts=LOW["last_seen_ts"].replace(day=19))  # fmt: skip


def write_findings(lake: Path, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=arrow_schema(findings.FINDINGS))
    write_deltalake(str(lake / findings.TABLE_NAME), table,
                    partition_by=list(findings.PARTITION_COLUMNS))  # fmt: skip


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("findings") / "lake"
    # The table's evidence is NOT NULL: the unit test's null evidence becomes no evidence.
    write_findings(root, [UNTIMED, EARLIER, HIGH, MEDIUM, LOW, {**INFO, "evidence": []}, *ODD])
    return root


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


def test_all_days(lake: Path, tmp_path: Path) -> None:
    """Every timed finding is an event, valid OCSF 1.8.0, in time order; the untimed one is
    counted out; the high finding read back from Delta is the whole event of the unit test."""
    line = export_detection_findings(str(lake), str(tmp_path), "jsonl", Window())
    target = tmp_path / "detection_finding.jsonl"
    assert line == f"      14 OCSF class 2004 events -> {target} (1 without a timestamp left out)"
    assert [p.name for p in tmp_path.iterdir()] == ["detection_finding.jsonl"]
    found = events(target)
    check = validator()
    assert [list(check.iter_errors(e)) for e in found] == [[]] * 14
    assert [e["finding_info"]["uid"] for e in found] == [
        "f-earlier", "f-crit", "f-empty", "f-group", "f-host", "f-hostile", "f-info", "f-low",
        "f-medium", "f-nocolon", "f-nopath", "f-v6", "f-v6b", "f-high",
    ]  # fmt: skip
    product = {**EXPECTED_HIGH["metadata"]["product"],
               "version": importlib.metadata.version("kafka-security-audit")}  # fmt: skip
    assert found[-1] == {
        **EXPECTED_HIGH,
        "metadata": {**EXPECTED_HIGH["metadata"], "product": product},
    }


def test_window_and_same_bytes(lake: Path, tmp_path: Path) -> None:
    """--start/--end keep the findings last seen in the window (finding_date); a second export
    writes the same bytes."""
    day = Window(date(2026, 11, 19), date(2026, 11, 20))
    line = export_detection_findings(str(lake), str(tmp_path), "jsonl", day)
    target = tmp_path / "detection_finding.jsonl"
    assert line == f"       1 OCSF class 2004 events -> {target}"
    assert [e["finding_info"]["uid"] for e in events(target)] == ["f-earlier"]
    export_detection_findings(str(lake), str(tmp_path), "jsonl", Window())
    first = target.read_bytes()
    export_detection_findings(str(lake), str(tmp_path), "jsonl", Window())
    assert target.read_bytes() == first


def test_parquet(lake: Path, tmp_path: Path) -> None:
    """Parquet: the same events (nulls kept as nulls), the same bytes on a second export."""
    line = export_detection_findings(str(lake), str(tmp_path / "p"), "parquet", Window())
    target = tmp_path / "p" / "detection_finding.parquet"
    assert line == f"      14 OCSF class 2004 events -> {target} (1 without a timestamp left out)"
    first = target.read_bytes()
    export_detection_findings(str(lake), str(tmp_path / "p"), "parquet", Window())
    assert target.read_bytes() == first
    export_detection_findings(str(lake), str(tmp_path / "j"), "jsonl", Window())
    rows = pq.read_table(target).to_pylist()
    assert [without_nulls(r) for r in rows] == events(tmp_path / "j" / "detection_finding.jsonl")


def test_empty_findings_table(tmp_path: Path) -> None:
    """A lake without findings: an empty file, and the line says 0."""
    write_findings(tmp_path / "lake", [])
    line = export_detection_findings(
        str(tmp_path / "lake"), str(tmp_path / "out"), "jsonl", Window()
    )
    target = tmp_path / "out" / "detection_finding.jsonl"
    assert line == f"       0 OCSF class 2004 events -> {target}"
    assert target.read_bytes() == b""


def test_missing_lake_or_table(tmp_path: Path) -> None:
    """One line naming what is missing; nothing written."""
    with pytest.raises(InputError, match="not found: expected the folder of a kafka-audit run"):
        export_detection_findings(
            str(tmp_path / "nowhere"), str(tmp_path / "out"), "jsonl", Window()
        )
    (tmp_path / "lake").mkdir()
    with pytest.raises(InputError, match="has no Delta table 'findings'"):
        export_detection_findings(str(tmp_path / "lake"), str(tmp_path / "out"), "jsonl", Window())
    assert not (tmp_path / "out").exists()
