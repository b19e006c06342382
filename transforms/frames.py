"""DataFrame helpers shared by every layer."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame


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
