"""Compare a benchmark lake with its generated corpus's ground truth (``truth/``), at any size.

``tests/integration/test_ground_truth.py`` holds the pipeline to the truth exactly on a small
corpus; this
is the same check, lighter, for the benchmark's 1M and 10M corpora: no Spark, the lake read
with ``deltalake``. Per table, each truth record and each lake row becomes a key of its scalar
columns (timestamps in ISO-8601 UTC to the millisecond, floats to 9 significant digits; nested
columns by their length), and the two multisets are compared.

    python bench/truth_check.py CORPUS LAKE
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections import Counter
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

#: table -> columns left out: the run's own id; prose built from compared columns; the
#: lake-keyed fingerprint, which the truth cannot know; and what depends on the run's "as of"
#: time: the truth is as of the end of the simulated UTC day
#: (``tests/integration/test_ground_truth.py``
#: runs with that window and compares these too), the benchmark runs without a window, so its
#: "as of" is the last record's time and a token that expires in between is still active.
SKIPPED: dict[str, set[str]] = {
    "security_metrics": {"run_id"},
    "findings": {"run_id", "explanation"},
    "token_lifecycle": {"run_id", "hmac_fingerprint", "state_as_of_ts", "state", "ended_ts"},
}


def _scalar(value: Any) -> Any:
    """One comparable form for a truth JSON value or a lake value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if type(value).__name__ == "NaTType":
        return None
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")[:23] + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and len(value) == 24 and value.endswith("Z") and value[10] == "T":
        return value  # truth timestamps are already in this form
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if not isinstance(value, str) and hasattr(value, "__len__"):  # lists, arrays, dicts
        return ("len", len(value))
    return value.item() if hasattr(value, "item") else value


def _key(record: Mapping[Any, Any], columns: list[str]) -> tuple[Any, ...]:
    return tuple(_scalar(record.get(c)) for c in columns)


def compare(corpus: Path, lake: Path) -> dict[str, dict[str, int]]:
    """Per table: truth rows, lake rows, rows only in the truth, rows only in the lake."""
    from deltalake import DeltaTable  # noqa: PLC0415 (only the benchmark needs it)

    report: dict[str, dict[str, int]] = {}
    for table, skipped in SKIPPED.items():
        with open(corpus / "truth" / f"{table}.jsonl", encoding="utf-8") as handle:
            truth = [json.loads(line) for line in handle]
        rows = DeltaTable(str(lake / table)).to_pandas().to_dict("records")
        columns = sorted({c for r in truth for c in r} - skipped)
        expected = Counter(_key(r, columns) for r in truth)
        actual = Counter(_key(r, columns) for r in rows)
        report[table] = {
            "truth": len(truth),
            "lake": len(rows),
            "only_truth": sum((expected - actual).values()),
            "only_lake": sum((actual - expected).values()),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("lake", type=Path)
    args = parser.parse_args()
    report = compare(args.corpus, args.lake)
    print(json.dumps(report), flush=True)
    # os._exit: a deltalake table object alive at interpreter exit can abort the process.
    os._exit(0 if all(r["only_truth"] == r["only_lake"] == 0 for r in report.values()) else 1)


if __name__ == "__main__":
    main()
