"""The analysis notebooks (notebooks/*.ipynb) and their helper module jobs.notebook.

Each notebook is executed with nbmake's runner (``nbmake.nb_run.NotebookRun``, what
``pytest --nbmake`` runs) in a fresh kernel whose ``KAFKA_AUDIT_LAKE`` names a lake built by the
test: the session's ``samples_lake`` (the bundled corpus, built once per session) and a small
synthetic lake with rows in every table the notebooks read (so every plot must be drawn). Cells
tagged ``figure`` must each show one PNG figure, or, on an empty table, one sentence starting
with ``No ``. The inline backend renders figures with Agg; no display is needed.

The pytest plugin itself (``pytest --nbmake notebooks/``) cannot take a fixture and keeps no
executed copy, hence the runner here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from nbmake.nb_run import NotebookRun  # type: ignore[import-untyped]

from jobs import notebook
from jobs.errors import InputError
from tests.support.notebook_lake import write_full_lake

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOKS_DIR.glob("*.ipynb"))
#: Figure cells per notebook (cells tagged ``figure``).
FIGURE_CELLS = {
    "01_reauth_readiness.ipynb": 3,
    "02_token_timelines.ipynb": 1,
    "03_auth_failures_and_denials.ipynb": 5,
    "04_findings_review.ipynb": 3,
}
CELL_TIMEOUT_S = 120


# --- the helper module ------------------------------------------------------------------------


def test_lake_path_from_environment_else_parent_lake(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(notebook.LAKE_ENV, raising=False)
    assert notebook.lake_path() == tmp_path.parent / "lake"
    monkeypatch.setenv(notebook.LAKE_ENV, "  ")
    assert notebook.lake_path() == tmp_path.parent / "lake"
    monkeypatch.setenv(notebook.LAKE_ENV, "some/lake")
    assert notebook.lake_path() == tmp_path / "some" / "lake"


def test_read_table_errors_and_missing_table(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^no lake at .*nowhere: set KAFKA_AUDIT_LAKE"):
        notebook.read_table("findings", tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"^unknown table 'raw_lines': expected one of"):
        notebook.read_table("raw_lines", tmp_path)
    empty = notebook.read_table("reauth_readiness", tmp_path)
    assert empty.empty
    assert list(empty.columns) == [
        "candidate_ms",
        "sessions",
        "sessions_killed",
        "sessions_at_risk_unknown_client",
        "principals_killed",
        "distinct_principals_killed",
        "client_software_killed",
        "first_kill_ts",
        "run_id",
        "activity_date",
    ]


def test_read_table_conforms_an_older_table_to_the_schema(tmp_path: Path) -> None:
    """A table written before a column was added reads with that column null."""
    older = pa.table(
        {
            "metric_name": ["failed-authentication-total"],
            "value": [2.0],
            "retired_column": ["x"],
        }
    )
    write_deltalake(str(tmp_path / "security_metrics"), older)
    df = notebook.read_table("security_metrics", tmp_path)
    columns = notebook.table_columns("security_metrics")
    assert list(df.columns) == [*columns, "retired_column"]
    expected = dict.fromkeys(columns) | {
        "metric_name": "failed-authentication-total",
        "value": 2.0,
        "retired_column": "x",
    }
    assert df.to_dict("records") == [expected]


def test_evidence_positions_explodes_arrays() -> None:
    df = pd.DataFrame(
        {
            "finding_id": ["a", "b", "c", "d"],
            "evidence": [
                [
                    {"source_path": "x.log", "line_number": 3},
                    {"source_path": "y.log", "line_number": 1},
                ],
                [],
                None,
                [{"source_path": "z.log", "line_number": None}],
            ],
        }
    )
    out = notebook.evidence_positions(df, "finding_id")
    expected = pd.DataFrame(
        {
            "finding_id": ["a", "a", "d"],
            "source_path": ["x.log", "y.log", "z.log"],
            "line_number": pd.array([3, 1, None], dtype="Int64"),
        }
    )
    pd.testing.assert_frame_equal(out, expected)


@pytest.mark.parametrize(
    ("ms", "label"),
    [
        (None, "unknown"),
        (float("nan"), "unknown"),
        (0, "0 ms"),
        (250, "250 ms"),
        (1000, "1 s"),
        (90_000, "1.5 min"),
        (900_000, "15 min"),
        (3_600_000, "1 h"),
        (5_400_000, "1.5 h"),
        (604_800_000, "7 d"),
    ],
)
def test_duration_label(ms: float | None, label: str) -> None:
    assert notebook.duration_label(ms) == label


# --- committed notebooks ----------------------------------------------------------------------


def test_every_notebook_is_listed() -> None:
    assert sorted(FIGURE_CELLS) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_is_stripped(name: str) -> None:
    """No outputs, no execution counts, no per-cell run metadata; each figure cell tagged."""
    nb = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert [(i, cell.outputs) for i, cell in enumerate(code) if cell.outputs] == []
    assert [i for i, cell in enumerate(code) if cell.execution_count is not None] == []
    assert [
        (i, sorted(cell.metadata))
        for i, cell in enumerate(nb.cells)
        if set(cell.metadata) - {"tags"}
    ] == []
    assert sorted(nb.metadata) == ["kernelspec", "language_info"]
    tagged = [cell for cell in code if "figure" in cell.metadata.get("tags", [])]
    assert len(tagged) == FIGURE_CELLS[name]


def test_nbstripout_would_change_nothing() -> None:
    """The committed notebooks are exactly what nbstripout (the git filter) would commit."""
    paths = [str(NOTEBOOKS_DIR / name) for name in NOTEBOOKS]
    done = subprocess.run(
        [sys.executable, "-m", "nbstripout", "--verify", *paths],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- executed notebooks -----------------------------------------------------------------------


def _execute(name: str, lake: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Runs a notebook in a fresh kernel reading ``lake``; fails the test on a cell error."""
    monkeypatch.setenv(notebook.LAKE_ENV, str(lake))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline (Agg) backend
    result = NotebookRun(NOTEBOOKS_DIR / name, CELL_TIMEOUT_S).execute()
    if result.error is not None:
        pytest.fail(f"{name}: {result.error.summary}\n{result.error.trace}", pytrace=False)
    return result.nb


def _figure_cells(nb: Any) -> list[tuple[int, str]]:
    """Per ``figure`` cell: ('png', ...) when it shows one PNG, ('text', sentence) when it
    printed one sentence and drew nothing, else ('bad', what it output)."""
    out: list[tuple[int, str]] = []
    for index, cell in enumerate(nb.cells):
        if "figure" not in cell.metadata.get("tags", []):
            continue
        pngs = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        texts = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        if len(pngs) == 1 and not texts.strip():
            out.append((index, "png"))
        elif not pngs and texts.startswith("No ") and texts.count("\n") == 1:
            out.append((index, "text: " + texts.strip()))
        else:
            kinds = [o.output_type + ":" + ",".join(o.get("data", {})) for o in cell.outputs]
            out.append((index, f"bad: {kinds} {texts!r}"))
    return out


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_draws_every_figure_on_a_full_lake(
    name: str, full_lake: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    nb = _execute(name, full_lake, monkeypatch)
    cells = _figure_cells(nb)
    assert [kind for _, kind in cells] == ["png"] * FIGURE_CELLS[name], cells
    # The executed copy, kept under pytest's basetemp for a look.
    nbformat.write(nb, tmp_path / name)  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_on_the_samples_lake(
    name: str, samples_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nb = _execute(name, samples_lake, monkeypatch)
    cells = _figure_cells(nb)
    assert [kind for _, kind in cells if kind.startswith("bad")] == [], cells
    assert len(cells) == FIGURE_CELLS[name]
    if name.startswith("03_"):  # the samples hold authentication failures and denials
        assert [kind for _, kind in cells] == ["png"] * FIGURE_CELLS[name], cells


@pytest.fixture(scope="module")
def full_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake whose every notebook table has rows, written with deltalake (no Spark)."""
    lake = tmp_path_factory.mktemp("notebook-lake")
    write_full_lake(lake)
    return lake
