"""The comparison for ``bench/end_to_end.py``: Kafka's authentication and authorization metrics
computed the way a user would by hand: one Python process, ``re`` on every line, dictionaries.

    .venv/bin/python bench/handwritten_metrics.py CORPUS [--compare-lake LAKE]

Counts, per 1h and 1d UTC window and broker: ``successful-authentication-total``,
``failed-authentication-total``, ``successful-reauthentication-total``,
``failed-reauthentication-total`` (broker-side Selector lines) and the authorization decisions
behind ``authorization-allowed/denied-rate-per-minute`` (per principal). The broker id comes
from the ``server.properties`` beside the log (``node.id`` / ``broker.id``). Layouts: any line
whose timestamp is ``yyyy-MM-dd HH:mm:ss,SSS`` (or ``T`` / ``.``) near its start; rotated and
gzipped files. With ``--compare-lake`` the counts are compared with the lake's
``security_metrics`` summed over listener and mechanism. The last stdout line is JSON.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

TS = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})[,.](\d{3})")
AUTH = re.compile(r"\b(Successfully|Failed) (re-)?authenticat(?:ed|ion) with ")
CLIENT_SIDE = re.compile(r"\[(?:Producer|Consumer|AdminClient|Admin|Share) clientId=|NetworkClient")
DECISION = re.compile(r"Principal = (\S+) is (Allowed|Denied) [Oo]peration")
NAMES = {
    ("Successfully", ""): "successful-authentication-total",
    ("Failed", ""): "failed-authentication-total",
    ("Successfully", "re-"): "successful-reauthentication-total",
    ("Failed", "re-"): "failed-reauthentication-total",
}
Key = tuple[str, str, str, str, str]  # metric, window, window start, broker, principal


def node_id(folder: Path) -> str:
    for name in ("server.properties", "broker.properties", "controller.properties"):
        path = folder / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                key, _, value = line.partition("=")
                if key.strip() in ("node.id", "broker.id"):
                    return value.strip()
    return folder.name


def lines(path: Path) -> Iterator[str]:
    with (
        gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as raw,
        io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as text,
    ):
        yield from text


def count(corpus: Path) -> tuple[Counter[Key], int]:
    counts: Counter[Key] = Counter()
    total = 0
    files = [p for p in corpus.rglob("*") if p.is_file() and ".log" in p.name]
    for path in sorted(files):
        broker = node_id(path.parent)
        for line in lines(path):
            total += 1
            ts = TS.search(line, 0, 60)
            if ts is None:
                continue
            metric, principal = None, ""
            auth = AUTH.search(line)
            if auth is not None and CLIENT_SIDE.search(line) is None:
                metric = NAMES[auth.group(1), auth.group(2) or ""]
            else:
                decision = DECISION.search(line)
                if decision is not None:
                    principal = decision.group(1)
                    metric = f"authorization-{decision.group(2).lower()}-rate-per-minute"
            if metric is None:
                continue
            day, hour = ts.group(1), ts.group(2)
            counts[metric, "1h", f"{day} {hour}:00:00", broker, principal] += 1
            counts[metric, "1d", f"{day} 00:00:00", broker, principal] += 1
    return counts, total


def lake_counts(lake: Path) -> Counter[Key]:
    """The lake's values for the same metrics, as event counts (summed over listener and
    mechanism; per-minute rates back to counts)."""
    # The project's batch reader, not deltalake's to_pandas(): a process that read a table
    # with to_pandas() aborted at exit in about half of the runs here (deltalake 1.6.6,
    # pyarrow 26: "terminate called without an active exception"), failing the benchmark.
    from jobs.lake.reads import iter_rows  # noqa: PLC0415

    counts: Counter[Key] = Counter()
    wanted = {
        *NAMES.values(),
        *(f"authorization-{d}-rate-per-minute" for d in ("allowed", "denied")),
    }
    for row in iter_rows(str(lake / "security_metrics"), "window_date", None, None):
        if row["metric_name"] not in wanted or row["api_key_name"] is not None:
            continue
        start = row["window_start_ts"].replace(tzinfo=None)
        principal = row["principal"] if isinstance(row["principal"], str) else ""
        key = (row["metric_name"], row["window"], f"{start:%Y-%m-%d %H:%M:%S}",
               row["broker_id"], principal)  # fmt: skip
        counts[key] += int(row["event_count"])
    return counts


def peak_rss_mib() -> float:
    """This process's peak resident set (``VmHWM``; ``ru_maxrss`` would report the parent's
    peak when that was higher at fork, as Linux carries it over)."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--compare-lake", type=Path)
    args = parser.parse_args()
    started = time.monotonic()
    counts, total = count(args.corpus)
    took = time.monotonic() - started
    result: dict[str, object] = {
        "lines": total,
        "seconds": round(took, 2),
        "values": len(counts),
        "peak_rss_mib": peak_rss_mib(),
        "computed_at": datetime.now(UTC).isoformat(),
    }
    if args.compare_lake is not None:
        theirs = lake_counts(args.compare_lake)
        differing = sorted(k for k in set(counts) | set(theirs) if counts[k] != theirs[k])
        result["mismatches"] = len(differing)
        result["mismatch_examples"] = [
            {"key": list(k), "handwritten": counts[k], "pipeline": theirs[k]} for k in differing[:5]
        ]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
