"""Every Delta table of a lake as a multiset of rows (no Spark), for equality tests of whole
lakes: reruns, day-by-day runs, backfills, late files, crashed runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

#: Columns that name the run that wrote a row: the only ones allowed to differ between lakes
#: built from the same input (issue 14's contract).
RUN_COLUMNS = frozenset({"run_id"})


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def table_names(lake: Path) -> list[str]:
    """The Delta tables under ``lake`` (folders with a ``_delta_log``), sorted."""
    return sorted(p.parent.name for p in lake.glob("*/_delta_log"))


def table_rows(lake: Path, name: str) -> Counter[tuple[Any, ...]]:
    """Rows of ``lake/name`` (current snapshot) without the run columns, as a multiset of
    tuples of ``(column, value)`` pairs (lists and structs frozen)."""
    table = DeltaTable(str(lake / name)).to_pyarrow_table()
    rows = table.to_pylist()
    del table
    return Counter(
        tuple(sorted((k, _frozen(v)) for k, v in row.items() if k not in RUN_COLUMNS))
        for row in rows
    )


def lake_contents(lake: Path) -> dict[str, Counter[tuple[Any, ...]]]:
    """Every table of ``lake`` as :func:`table_rows`."""
    return {name: table_rows(lake, name) for name in table_names(lake)}


def differences(got: Path, want: Path) -> list[str]:
    """One line per table whose rows differ between two lakes (missing and extra counts, and
    one example of each), empty when the lakes hold the same tables and rows."""
    a, b = lake_contents(got), lake_contents(want)
    lines = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            lines.append(f"{name}: only in {'want' if name not in a else 'got'}")
            continue
        extra, missing = a[name] - b[name], b[name] - a[name]
        if extra or missing:
            example = next(iter(extra or missing))
            lines.append(
                f"{name}: {sum(extra.values())} extra, {sum(missing.values())} missing row(s), "
                f"e.g. {'extra' if extra else 'missing'} {dict(example)}"
            )
    return lines
