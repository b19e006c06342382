"""``kafka-audit report --format html`` on a lake, in a real browser (issue 19): the gold rows of
tests/unit/test_report_html.py written to Delta with deltalake (no Spark), the page written by
the CLI, then opened by headless Chromium (Debian's ``chromium``; scripts/install_chromium.sh):
a screenshot (kept as a test artifact) and the DOM, whose text must hold the headline and each
section; the severity filter is checked in the browser too. Skipped only without Chromium."""

from __future__ import annotations

import importlib
import shutil
import struct
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from jobs.cli.main import main
from jobs.lake.embedded_files import arrow_schema
from jobs.report import Window
from jobs.report_html import build_html
from tests.unit.test_report_html import HEADINGS, gold_tables, page_text

#: Where the screenshot is kept for a person to look at (ignored by git).
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
#: The command of the browser test (issue 19), with a window as wide as a laptop's.
CHROMIUM = ("--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
            "--no-first-run", "--window-size=1280,2000")  # fmt: skip


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def html_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every table the page reads, written with deltalake from rows typed by ``schemas/``."""
    lake = tmp_path_factory.mktemp("html") / "lake"
    for table, rows in gold_tables().items():
        module = importlib.import_module(f"schemas.{table}")
        data = pa.Table.from_pylist(rows, schema=arrow_schema(getattr(module, table.upper())))
        write_deltalake(
            str(lake / table), data, partition_by=list(module.PARTITION_COLUMNS) or None
        )
    return lake


@pytest.fixture(scope="module")
def report_file(html_lake: Path) -> Path:
    out = html_lake.parent / "report.html"
    assert main(["report", "--lake", str(html_lake), "--format", "html", "--output", str(out)]) == 0
    return out


def test_cli_writes_the_page_read_back_from_delta(report_file: Path, html_lake: Path) -> None:
    """The rows read back from Delta give the page the rows give directly (unit tests), byte
    for byte on a second run."""
    html = report_file.read_text(encoding="utf-8")
    lines = page_text(html)
    assert lines[:3] == [
        "kafka-audit report",
        "3 findings: 1 high, 1 medium, 1 critical",
        f"lake: {html_lake} · window: all days",
    ]
    assert [h for h in lines if h in HEADINGS] == list(HEADINGS)
    assert build_html(str(html_lake), Window()) == html


def test_window_keeps_its_days(html_lake: Path, tmp_path: Path) -> None:
    """--start/--end: the 2020 metrics drop out of the totals; the Connect rotations and the
    findings of the 20th stay."""
    out = tmp_path / "day.html"
    argv = ["report", "--lake", str(html_lake), "--format", "html", "--output", str(out),
            "--start", "2026-11-20", "--end", "2026-11-21"]  # fmt: skip
    assert main(argv) == 0
    assert page_text(out.read_text(encoding="utf-8"))[1:6] == [
        "3 findings: 1 high, 1 medium, 1 critical",
        f"lake: {html_lake} · window: 2026-11-20 .. 2026-11-21 (UTC, end exclusive)",
        "5 authentication failures",
        "4 authorization denials",
        "2 delegation tokens",
    ]


def test_output_of_a_text_format(
    html_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--output takes every format: the file holds what stdout would."""
    argv = ["report", "--lake", str(html_lake), "--format", "markdown"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert main([*argv, "--output", str(tmp_path / "report.md")]) == 0
    assert capsys.readouterr().out == ""
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == printed


def run_chromium(*args: str, profile: Path) -> str:
    browser = chromium()
    assert browser is not None
    done = subprocess.run(
        [browser, *CHROMIUM, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@pytest.mark.skipif(chromium() is None, reason="no chromium: run scripts/install_chromium.sh")
def test_chromium_renders_the_page(report_file: Path, tmp_path: Path) -> None:
    """Chromium draws the page to a 1280x2000 PNG (kept in tests/artifacts/) and its DOM has
    the headline, every section heading, the three figures and the hostile principal as text
    (no script element)."""
    png = tmp_path / "report.png"
    run_chromium(f"--screenshot={png}", report_file.as_uri(), profile=tmp_path / "profile")
    assert _png_size(png) == (1280, 2000)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(png, ARTIFACTS / "report-html.png")

    dom = run_chromium("--dump-dom", report_file.as_uri(), profile=tmp_path / "profile")
    lines = page_text(dom)
    assert lines[1] == "3 findings: 1 high, 1 medium, 1 critical"
    assert [h for h in lines if h in HEADINGS] == list(HEADINGS)
    assert dom.count("<svg ") == 3
    assert "<script" not in dom
    assert "User:&lt;script&gt;alert(1)&lt;/script&gt; renewed a token" in dom


@pytest.mark.skipif(chromium() is None, reason="no chromium: run scripts/install_chromium.sh")
def test_chromium_severity_filter(report_file: Path, tmp_path: Path) -> None:
    """Unticking 'high' hides the high finding in the browser (CSS only): a copy of the page
    with the box unticked and a probe script that writes what is displayed into the DOM."""
    html = report_file.read_text(encoding="utf-8")
    unticked = html.replace('id="show-sev-high" checked>', 'id="show-sev-high">')
    assert unticked != html
    probe = ("<script>document.body.dataset.shown = [...document.querySelectorAll('.finding')]"
             ".filter(e => getComputedStyle(e).display !== 'none')"
             ".map(e => e.querySelector('.sev').textContent).join(',');</script></body>")  # fmt: skip
    copies = {"all": html, "no-high": unticked}
    shown = {}
    for name, text in copies.items():
        page = tmp_path / f"{name}.html"
        page.write_text(text.replace("</body>", probe), encoding="utf-8")
        dom = run_chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile")
        shown[name] = dom.split('data-shown="', 1)[1].split('"', 1)[0]
    assert shown == {"all": "high,medium,critical", "no-high": "medium,critical"}
