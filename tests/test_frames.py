"""transforms.frames.union_by_name: the rows of every frame, matched by name, for any count."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from transforms.frames import union_by_name


@pytest.mark.parametrize("count", [1, 2, 3, 7, 8])
def test_every_row_of_every_frame_once_matched_by_name(spark: SparkSession, count: int) -> None:
    frames = [
        # Columns in another order every other frame: matched by name, not position.
        spark.createDataFrame([(i, f"f{i}"), (i, None)], "n int, label string")
        if i % 2
        else spark.createDataFrame([(f"f{i}", i), (None, i)], "label string, n int")
        for i in range(count)
    ]
    got = union_by_name(frames)
    assert got.columns == frames[0].columns  # the first frame's order, as unionByName
    want = sorted([(f"f{i}", i) for i in range(count)] + [(None, i) for i in range(count)],
                  key=repr)  # fmt: skip
    assert sorted([tuple(r) for r in got.collect()], key=repr) == want


def test_no_frame_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one frame"):
        union_by_name([])
