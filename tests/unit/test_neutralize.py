"""Log-derived values cannot reach the operator's screen or spreadsheet as control sequences,
formulas or markup (issue 21, point 5): every format of ``kafka-audit report`` and the run
summary, fed hostile principals, client ids, paths and explanations. No Spark."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from jobs.cli.report import render
from jobs.neutralize import csv_cell, markdown, terminal
from jobs.summary import RunSummary, TableWrite
from tests.support.fuzz_corpus import CONTROL
from transforms.bronze.accounting import BUCKETS

ESC = "\x1b"
#: A SASL username that recolours, a mechanism with a cursor move, a client id with a
#: newline and a bidi override (Trojan Source), a formula, markup.
HOSTILE_PRINCIPAL = f"User{ESC}[31m:app-02"
HOSTILE_SUBJECT = 'principal: =HYPERLINK("http://x","y")'
HOSTILE_EXPLANATION = f"client id a\nb\r\u202egnp.exe {ESC}]0;title\x07 | *bold* <b>x</b>"
HOSTILE_PATH = f"/logs/broker-1/server{ESC}[2J.log"

T = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def report() -> dict[str, list[dict[str, Any]]]:
    finding = {
        "severity": "high", "rule": "reauth.principal_change_attempt", "kip": "KIP-368",
        "subject": HOSTILE_SUBJECT, "discriminator": None, "node": f"1{ESC}[0m", "count": 2,
        "first_seen": T, "last_seen": T, "evidence": [f"{HOSTILE_PATH}:7", "/x/y.log:9"],
        "explanation": HOSTILE_EXPLANATION, "finding_id": "f1",
    }  # fmt: skip
    readiness = {
        "candidate_ms": 900_000, "candidate": "15 min", "sessions": 3, "killed": 1,
        "unknown_client": 0, "first_kill": T, "principals_killed": [HOSTILE_PRINCIPAL],
    }  # fmt: skip
    return {"readiness": [readiness], "findings": [finding]}


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_no_control_character_reaches_any_format(fmt: str) -> None:
    text = render(report(), fmt, "all days", f"/lake{ESC}[31m")
    assert not CONTROL.findall(text)
    if fmt == "table":  # shown, escaped: still readable
        assert "User\\x1b[31m:app-02" in text
        assert "a\\x0ab\\x0d\\u202egnp.exe" in text
    if fmt == "markdown":  # the same, with Markdown's own escapes (renders as the above)
        assert "User\\\\x1b\\[31m:app-02" in text


def test_json_keeps_the_values_exactly() -> None:
    document = json.loads(render(report(), "json", "all days", "/lake"))
    assert document["readiness"][0]["principals_killed"] == [HOSTILE_PRINCIPAL]
    assert document["findings"][0]["explanation"] == HOSTILE_EXPLANATION


def test_markdown_cells_cannot_break_the_table_or_add_markup() -> None:
    text = render(report(), "markdown", "all days", "/lake")
    row = next(line for line in text.splitlines() if line.startswith("| high"))
    # The table's own borders only: 10 shown columns -> 11 unescaped pipes.
    assert len(re.findall(r"(?<!\\)\|", row)) == 11
    assert "\\*bold\\*" in row
    assert "\\<b\\>x\\</b\\>" in row
    assert "<b>" not in text


def test_csv_cells_are_never_formulas() -> None:
    rows = [
        {"subject": HOSTILE_SUBJECT.split(": ", 1)[1], "count": -3, "note": "+1", "who": "@x",
         "tab": "\tx", "cr": "\rx", "ok": "User:alice", "dash": "-2+3", "none": None}
    ]  # fmt: skip
    text = render({"findings": rows}, "csv", "all days", "/lake")
    assert not CONTROL.findall(text)
    header, values = list(csv.reader(io.StringIO(text)))
    got = dict(zip(header, values, strict=True))
    assert got == {
        "subject": '\'=HYPERLINK("http://x","y")',
        "count": "-3",  # a number, not text
        "note": "'+1",
        "who": "'@x",
        "tab": "'\\x09x",
        "cr": "'\\x0dx",
        "ok": "User:alice",
        "dash": "'-2+3",
        "none": "",
    }


def test_run_summary_escapes_paths_principals_and_warnings() -> None:
    summary = RunSummary(
        run_id="r", engine="embedded", java=None, lake=f"/lake{ESC}[8m", window=(None, None),
        tables=[TableWrite("raw_lines", f"/lake/raw_lines{ESC}[1A", 3, 10, False)],
        accounting=[{"source_path": HOSTILE_PATH, "balanced": True,
                     **{bucket: 1 for bucket in BUCKETS}}],
        duration_s=1.0,
        warnings=[f"file {HOSTILE_PATH} unreadable"],
        readiness=[{"candidate_ms": 900_000, "sessions": 1, "sessions_killed": 1,
                    "sessions_at_risk_unknown_client": 0, "principals_killed": [HOSTILE_PRINCIPAL],
                    "first_kill_ts": T}],
        findings=[{"rule_id": f"x{ESC}[31m", "severity": "high", "findings": 1}],
    )  # fmt: skip
    text = summary.render()
    assert not CONTROL.findall(text)
    assert "server\\x1b[2J.log" in text
    assert HOSTILE_PRINCIPAL.replace(ESC, "\\x1b") in text


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, ""),
        ("plain", "plain"),
        ("tab\there", "tab\\x09here"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f c1\x9b", "del\\x7f c1\\x9b"),
        ("rtl\u202eoverride\u2066iso\u200bzw", "rtl\\u202eoverride\\u2066iso\\u200bzw"),
        ("ünïcödé 日本 User:é", "ünïcödé 日本 User:é"),
        (42, "42"),
    ],
)
def test_terminal(value: object, shown: str) -> None:
    assert terminal(value) == shown


def test_markdown_and_csv_helpers() -> None:
    assert markdown("a|b_c`d") == "a\\|b\\_c\\`d"
    assert markdown(f"x{ESC}") == "x\\\\x1b"
    assert csv_cell(-1.5) == -1.5
    assert csv_cell(True) is True
    assert csv_cell("=1+1") == "'=1+1"
    assert csv_cell("a=1") == "a=1"
