"""Spark-less reads of the lake's Delta tables (deltalake / delta-rs), for ``kafka-audit report``
and the notebooks: no JVM, a table read in well under a second.

No pyspark import here: the callers start without Spark.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def table_path(lake: str, table: str) -> str:
    """``lake/table`` (a local path is made absolute)."""
    root = lake if "://" in lake else os.path.abspath(lake)
    return f"{root.rstrip('/')}/{table}"


def is_delta_table(path: str) -> bool:
    """Whether ``path`` holds a Delta table (a ``_delta_log`` with at least one commit)."""
    from deltalake import DeltaTable  # noqa: PLC0415  (keeps the CLI's --help fast)

    return bool(DeltaTable.is_deltatable(path))


def read_rows(
    path: str, partition_column: str, start: date | None, end: date | None
) -> list[dict[str, Any]]:
    """The rows of one small table whose date partition is in ``[start, end)``.

    Args:
        path: the table's path or URI.
        partition_column: its ``DateType`` partition column.
        start / end: the days to keep (end exclusive); both None = every row, null partitions
            included.

    Returns:
        The rows as dicts (timestamps as aware UTC datetimes, dates as ``datetime.date``).
    """
    return list(iter_rows(path, partition_column, start, end))


def iter_rows(
    path: str,
    partition_column: str,
    start: date | None,
    end: date | None,
    *,
    columns: Sequence[str] | None = None,
    micros: Sequence[str] = (),
) -> Iterator[dict[str, Any]]:
    """``read_rows``' rows (``columns`` only, when given), one Arrow batch at a time: the
    whole table is never held as Python objects at once. The timestamp columns named in
    ``micros`` come as int microseconds since the Unix epoch: a ``datetime`` cannot hold a
    year past 9999, Spark's timestamps can."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.dataset as ds  # noqa: PLC0415
    from deltalake import DeltaTable  # noqa: PLC0415

    dataset = DeltaTable(path).to_pyarrow_dataset()
    where = None
    if start is not None and end is not None:
        day = ds.field(partition_column)
        where = (day >= start) & (day < end)
    chosen = None if columns is None else list(columns)
    for read in dataset.to_batches(columns=chosen, filter=where):
        batch = read
        for name in micros:
            at = batch.schema.get_field_index(name)
            batch = batch.set_column(at, name, batch.column(at).cast(pa.int64()))
        yield from batch.to_pylist()
        del batch, read  # release Arrow memory before exit (docs/architecture.md, Delta pitfalls)
    del dataset


def row_count(
    path: str,
    partition_column: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> int | None:
    """The rows of a table's current snapshot, summed from the row counts its Delta log keeps
    for each file (no data file is read): every file, or with ``start`` and ``end`` only those
    whose ``partition_column`` day is in ``[start, end)`` (as ``read_rows`` keeps them). None
    when a counted file has no row count (written without statistics)."""
    from deltalake import DeltaTable  # noqa: PLC0415

    actions = DeltaTable(path).get_add_actions(flatten=True)
    counts: list[int | None] = []
    if actions.num_rows:
        counts = list(actions.column("num_records").to_pylist())
        if partition_column is not None and start is not None and end is not None:
            days = actions.column(f"partition.{partition_column}").to_pylist()
            counts = [n for n, day in zip(counts, days, strict=True)
                      if day is not None and start <= day < end]  # fmt: skip
    del actions
    if any(count is None for count in counts):
        return None
    return sum(count for count in counts if count is not None)


def read_pandas(path: str) -> pd.DataFrame:
    """The current snapshot of a table as pandas, through deltalake's ``to_pandas()`` (Arrow
    tables from deltalake can abort the process at exit unless released first; pandas frames
    do not). Timestamps come back as ``datetime64[us, UTC]``, date partition columns as
    ``datetime.date`` objects, arrays as numpy arrays, structs as dicts."""
    from deltalake import DeltaTable  # noqa: PLC0415

    return DeltaTable(path).to_pandas()
