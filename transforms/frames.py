"""DataFrame helpers shared by every layer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType


def union_by_name(frames: Sequence[DataFrame]) -> DataFrame:
    """Every row of ``frames`` (matched by column name), as ``unionByName`` one after the other
    gives them, but built as a balanced tree of unions.

    Spark analyses the whole plan at each ``unionByName``: stacking n frames one by one
    analyses the growing union n times (quadratic; the findings of the gold builders are 29
    frames), a balanced tree about log2(n) times. The rows are the same multiset; their order
    is not specified in either case.

    Raises:
        ValueError: ``frames`` is empty.
    """
    if not frames:
        raise ValueError("union_by_name needs at least one frame")
    level = list(frames)
    while len(level) > 1:
        pairs = [a.unionByName(b) for a, b in zip(level[::2], level[1::2], strict=False)]
        level = pairs + level[len(pairs) * 2 :]
    return level[0]


def local_frame(
    spark: SparkSession, rows: Iterable[Sequence[Any]], schema: StructType
) -> DataFrame:
    """A small frame of driver-side rows, held in the plan (a ``LocalRelation``).

    ``spark.createDataFrame`` of a Python list builds an RDD that Spark's Python workers
    unpickle each time a query reads it (two Python tasks per read, even for no rows); rows
    passed as Arrow are held in the plan and read by the JVM alone. For configuration rows,
    empty frames of a table's schema and other small lists; not for data.

    Args:
        spark: the session.
        rows: tuples (or lists) with one value per field of ``schema``, in its order; dates
            as ``datetime.date``, timestamps as UTC-aware ``datetime``.
        schema: the frame's columns, types and nullability.

    Returns:
        The rows with exactly ``schema``.

    Raises:
        ValueError: a row without exactly one value per field.
        pyarrow.ArrowInvalid / ArrowTypeError: a value does not fit its field's type.
    """
    names = schema.fieldNames()
    records = [dict(zip(names, row, strict=True)) for row in rows]
    table = pa.Table.from_pylist(records, schema=to_arrow_schema(schema, timezone="UTC"))
    return spark.createDataFrame(table, schema)
