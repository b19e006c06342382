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

import datetime as dt
import importlib
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from nbmake.nb_run import NotebookRun  # type: ignore[import-untyped]

from jobs import notebook
from jobs.delta_rs_files import arrow_schema
from jobs.errors import InputError

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
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


# --- a small lake with rows in every table the notebooks read ---------------------------------

RUN = "synthetic-run"
T0 = dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 20)


def _at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def _write(
    lake: Path, table: str, rows: Sequence[Mapping[str, Any]], partition: str | None
) -> None:
    schema = arrow_schema(getattr(importlib.import_module(f"schemas.{table}"), table.upper()))
    data = pa.Table.from_pylist([dict(row) for row in rows], schema=schema)
    write_deltalake(str(lake / table), data, partition_by=[partition] if partition else None)


def _evidence(path: str, *lines: int) -> list[dict[str, Any]]:
    return [{"source_path": path, "line_number": line} for line in lines]


def _sessions() -> Iterator[dict[str, Any]]:
    software = [
        ("apache-kafka-java", "3.7.0", True, "reauthenticated", 40.0),
        ("apache-kafka-java", "2.1.1", False, "killed", None),
        ("librdkafka", "2.3.0", True, "reauthenticated", 120.0),
        ("librdkafka", "1.9.2", None, "open_at_window_end", None),
        ("sarama", "1.38.1", False, "closed", None),
    ]
    for i in range(20):
        name, version, reauth, outcome, latency = software[i % len(software)]
        start = _at(3 * i)
        yield {
            "session_id": f"s{i:02d}",
            "broker_id": str(i % 3),
            "connection_id": f"10.0.0.{i}:9093-10.1.0.{i}:5{i:04d}-0",
            "session_seq": 1,
            "listener": "SASL_SSL" if i % 2 else "INTERNAL",
            "security_protocol": "SASL_SSL",
            "mechanism": "SCRAM-SHA-512" if i % 3 else "OAUTHBEARER",
            "principal": f"User:app{i % 6}",
            "client_ip": f"10.1.0.{i}",
            "client_software_name": name,
            "client_software_version": version,
            "supports_reauth": reauth,
            "start_ts": start,
            "start_source": "authentication_line",
            "lifetime_ms": 3_600_000,
            "lifetime_source": "config",
            "expiry_ts": start + dt.timedelta(hours=1),
            "latency_ms": None if latency is None else latency + 7 * i,
            "outcome": outcome,
            "request_count": 10 + i,
            "connection_ambiguous": False,
            "evidence": _evidence("broker-1/server.log", 100 + i, 200 + i),
            "run_id": RUN,
            "activity_date": DAY,
        }


def _readiness() -> Iterator[dict[str, Any]]:
    for candidate, killed, unknown in ((900_000, 8, 4), (3_600_000, 5, 3), (86_400_000, 1, 1)):
        yield {
            "candidate_ms": candidate,
            "sessions": 20,
            "sessions_killed": killed,
            "sessions_at_risk_unknown_client": unknown,
            "principals_killed": ["User:app1", "User:app4"][: 1 + (killed > 2)],
            "distinct_principals_killed": 1 + (killed > 2),
            "client_software_killed": ["apache-kafka-java/2.1.1", "sarama/1.38.1"],
            "first_kill_ts": _at(candidate / 60_000 + 5),
            "run_id": RUN,
            "activity_date": DAY,
        }


def _history(op: str, minutes: float, expiry_minutes: float | None) -> dict[str, Any]:
    return {
        "event_ts": _at(minutes),
        "actor": "User:owner",
        "operation": op,
        "new_expiry_ts": None if expiry_minutes is None else _at(expiry_minutes),
        "error_code": 0,
        "error_code_name": "NONE",
        "check": "ok",
        "source": "request_log",
    }


def _tokens() -> Iterator[dict[str, Any]]:
    shapes = [  # issue, renewals, expire-now, state
        (0, [30, 60, 90], None, "active"),
        (10, [], None, "expired"),
        (20, [50], 80, "expired_early"),
        (40, [70, 100, 130], None, "active"),
    ]
    for i, (issue, renewals, expired, state) in enumerate(shapes):
        history = [_history("create", issue, issue + 60)]
        history += [_history("renew", r, r + 60) for r in renewals]
        if expired is not None:
            history.append(_history("expire", expired, expired))
        expiry = history[-1]["new_expiry_ts"]
        ended = expiry if state != "active" else None
        yield {
            "token_key": f"tok{i}",
            "token_id": f"tok{i}",
            "hmac_fingerprint": f"{i:032x}",
            "owner": f"User:owner{i % 2}",
            "requester": "User:admin",
            "renewers": ["User:renewer"],
            "metadata_mode": "kraft",
            "issue_ts": _at(issue),
            "max_ts": _at(issue + 240),
            "expiry_ts": expiry,
            "max_lifetime_ms": 240 * 60_000,
            "renew_count": len(renewals),
            "history": history,
            "state": state,
            "state_as_of_ts": _at(150),
            "ended_ts": ended,
            "first_seen_ts": _at(issue),
            "last_seen_ts": history[-1]["event_ts"],
            "replay_mismatch_count": 0,
            "hmac_verified": None,
        }


def _lineage(i: int, minutes: float, path: str) -> dict[str, Any]:
    return {
        "run_id": RUN,
        "source_path": path,
        "line_number": i + 1,
        "node_id": str(i % 3),
        "level": "INFO",
        "event_ts": _at(minutes),
        "event_date": DAY,
    }


def _auth_events() -> Iterator[dict[str, Any]]:
    reasons = ["INVALID_CREDENTIALS", "SSL_HANDSHAKE_FAILED", "UNSUPPORTED_MECHANISM"]
    for i in range(30):
        yield {
            **_lineage(i, 17 * i, "broker-1/server.log"),
            "event_type": "reauthentication_failed" if i % 7 == 0 else "authentication_failed",
            "side": "broker",
            "peer_ip": f"10.1.0.{i % 4}",
            "listener": ["SASL_SSL-9093", "INTERNAL-9092", None][i % 3],
            "failure_reason_code": reasons[i % 3],
            "principal": "User:mallory" if i % 5 == 0 else None,
        }
    yield {**_lineage(30, 5, "broker-1/server.log"), "event_type": "authentication_succeeded"}


def _authz() -> Iterator[dict[str, Any]]:
    for i in range(24):
        principal = ["User:alice", "User:bob", "User:CN=svc,O=corp"][i % 3]
        yield {
            **_lineage(i, 23 * i, "broker-1/kafka-authorizer.log"),
            "record_type": "decision",
            "authorizer": "StandardAuthorizer",
            "principal": principal,
            "decision": "DENIED" if i % 4 else "ALLOWED",
            "operation": ["READ", "WRITE", "DESCRIBE"][i % 3],
            "host": "10.1.0.9",
            "resource_type": "TOPIC",
            "resource_name": f"orders-{i % 2}",
        }


def _metrics() -> Iterator[dict[str, Any]]:
    windows = [("1h", _at(60 * hour), _at(60 * hour + 60), hour + 1) for hour in range(4)]
    windows.append(("1d", _at(-480), _at(960), 10))
    for window, start, end, events in windows:
        yield {
            "metric_name": "failed-authentication-total",
            "window": window,
            "window_start_ts": start,
            "window_end_ts": end,
            "broker_id": "1",
            "listener": "SASL_SSL-9093",
            "value": float(events),
            "event_count": events,
            "run_id": RUN,
            "window_date": DAY,
        }


def _findings() -> Iterator[dict[str, Any]]:
    rules = [
        ("reauth.no_reauth_client_on_expiring_listener", "KIP-368", "high"),
        ("reauth.repeated_failed_reauthentication", "KIP-368", "low"),
        ("tokens.describe_by_non_owner", "KIP-48", "medium"),
        ("forwarding.principal_mismatch", "KIP-590", "info"),
    ]
    for i in range(9):
        rule, kip, severity = rules[i % len(rules)]
        yield {
            "finding_id": f"f{i}",
            "rule_id": rule,
            "kip": kip,
            "severity": severity,
            "subject_type": "principal",
            "subject": f"User:app{i % 3}",
            "discriminator": "",
            "node_id": "1",
            "first_seen_ts": _at(10 * i),
            "last_seen_ts": _at(10 * i + 45),
            "count": i + 1,
            "evidence": _evidence(f"broker-{i % 2}/server.log", 10 * i + 1, 10 * i + 5),
            "explanation": f"Finding {i} of rule {rule}.",
            "run_id": RUN,
            "finding_date": DAY,
        }


@pytest.fixture(scope="module")
def full_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake whose every notebook table has rows, written with deltalake (no Spark)."""
    lake = tmp_path_factory.mktemp("notebook-lake")
    _write(lake, "reauth_sessions", list(_sessions()), "activity_date")
    _write(lake, "reauth_readiness", list(_readiness()), "activity_date")
    _write(lake, "token_lifecycle", list(_tokens()), None)
    _write(lake, "auth_events", list(_auth_events()), "event_date")
    _write(lake, "authz_decisions", list(_authz()), "event_date")
    _write(lake, "security_metrics", list(_metrics()), "window_date")
    _write(lake, "findings", list(_findings()), "finding_date")
    return lake
