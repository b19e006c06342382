"""Helpers for the analysis notebooks in ``notebooks/``: find the lake, read a table as pandas.

The notebooks read the Delta tables with deltalake (delta-rs), without Spark: a notebook starts
in a second or two and prints no JVM log lines. The lake is the folder named by the environment
variable ``KAFKA_AUDIT_LAKE`` (the test suite sets it to a lake it built), else ``../lake``, the
lake ``bash scripts/demo.sh`` leaves beside ``notebooks/``.

Nothing here imports matplotlib: the plots live in the notebooks.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jobs.errors import InputError
from jobs.lake.reads import read_pandas

#: Environment variable naming the lake the notebooks read.
LAKE_ENV = "KAFKA_AUDIT_LAKE"
#: The lake when ``KAFKA_AUDIT_LAKE`` is unset, relative to the notebook's folder.
DEFAULT_LAKE = "../lake"
#: The tables the notebooks read (each has a ``schemas.<name>`` module).
TABLES: tuple[str, ...] = (
    "auth_events",
    "authz_decisions",
    "findings",
    "reauth_readiness",
    "reauth_sessions",
    "security_metrics",
    "token_lifecycle",
)


def lake_path() -> Path:
    """The lake the notebooks read.

    Returns:
        ``$KAFKA_AUDIT_LAKE`` if set and not blank, else ``../lake``, as an absolute path
        (relative paths are taken from the current directory, a notebook's own folder).
    """
    value = os.environ.get(LAKE_ENV, "").strip() or DEFAULT_LAKE
    return Path(value).expanduser().resolve()


def read_table(name: str, lake: Path | None = None) -> pd.DataFrame:
    """Reads the current snapshot of one of the project's Delta tables into pandas.

    Uses ``jobs.lake.reads.read_pandas`` (deltalake, no Spark). Timestamps come back as
    ``datetime64[us, UTC]``, date partition columns as ``datetime.date`` objects, arrays as
    numpy arrays, structs as dicts.

    Args:
        name: Table name, one of :data:`TABLES`.
        lake: Lake folder; :func:`lake_path` when None.

    Returns:
        Every row of the table, with the table's columns from ``schemas/`` first, in order: a
        column the table lacks (a lake written by an older version) is all null. A table the
        lake does not hold (yet) gives an empty frame with those columns, so a notebook can
        treat "no table" as "no rows".

    Raises:
        InputError: ``name`` is not one of :data:`TABLES`, or the lake folder does not exist.
    """
    if name not in TABLES:
        raise InputError(f"unknown table {name!r}: expected one of {', '.join(TABLES)}")
    root = lake_path() if lake is None else lake
    if not root.is_dir():
        raise InputError(
            f"no lake at {root}: set {LAKE_ENV} to a folder written by 'kafka-audit run --lake'"
        )
    path = root / name
    columns = table_columns(name)
    if not (path / "_delta_log").is_dir():
        return pd.DataFrame(columns=columns)
    df = read_pandas(str(path))
    # A lake written by an older version lacks the columns added since: they read as null.
    missing = [column for column in columns if column not in df.columns]
    df = df.assign(**dict.fromkeys(missing))
    return df[columns + [column for column in df.columns if column not in columns]]


def table_columns(name: str) -> list[str]:
    """The columns of a table, in order, from its ``schemas/`` contract.

    Args:
        name: Table name, one of :data:`TABLES`.

    Returns:
        The column names of ``schemas.<name>.<NAME>``.
    """
    module = importlib.import_module(f"schemas.{name}")
    return list(getattr(module, name.upper()).fieldNames())


def explode_structs(df: pd.DataFrame, key: str, column: str, fields: Sequence[str]) -> pd.DataFrame:
    """One row per element of an array-of-struct column (``evidence``, ``history``).

    Args:
        df: Rows with an array column of dicts (what ``to_pandas`` gives for Spark
            ``ArrayType(StructType)``).
        key: Column of ``df`` kept beside each element (``finding_id``, ``token_key``).
        column: The array column.
        fields: Struct fields to keep, in this order; a missing field gives None.

    Returns:
        Columns ``key`` and ``fields`` (object dtype), in the order of ``df`` and of each
        array; null arrays and null elements are left out.
    """
    rows = [
        (row_key, *(element.get(field) for field in fields))
        for row_key, elements in zip(df[key], df[column], strict=True)
        if elements is not None
        for element in elements
        if element is not None
    ]
    return pd.DataFrame(rows, columns=[key, *fields], dtype=object)


def evidence_positions(df: pd.DataFrame, key: str, column: str = "evidence") -> pd.DataFrame:
    """One row per evidence position of each row of ``df`` (gold ``evidence`` arrays).

    Args:
        df: Rows of a gold table with an array-of-struct ``column`` of
            ``{source_path: str, line_number: int}`` (``findings``, ``reauth_sessions``).
        key: Column of ``df`` to keep beside each position (``finding_id``, ``session_id``).
        column: The evidence column.

    Returns:
        Columns ``key``, ``source_path`` (str), ``line_number`` (Int64, nullable), in the
        order of ``df`` and of each array; rows with no evidence are left out.
    """
    out = explode_structs(df, key, column, ("source_path", "line_number"))
    out["line_number"] = out["line_number"].astype("Int64")
    return out


def duration_label(ms: float | None) -> str:
    """A short human label for a duration in milliseconds (candidate reauth windows, ages).

    Args:
        ms: Milliseconds; None or NaN for unknown.

    Returns:
        The largest whole unit that divides it (``'15 min'``, ``'1 h'``, ``'7 d'``, ``'250 ms'``),
        else one decimal of the largest unit below it (``'1.5 h'``); ``'unknown'`` for None/NaN.
    """
    if ms is None or math.isnan(ms):
        return "unknown"
    units = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000))
    for unit, size in units:
        if abs(ms) >= size:
            whole = ms / size
            text = f"{whole:.0f}" if whole == int(whole) else f"{whole:.1f}"
            return f"{text} {unit}"
    return f"{ms:.0f} ms"
