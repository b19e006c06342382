"""The ground truth: what the simulated world knows happened, written to ``truth/``.

Areas report facts while they produce lines (``base.Truth``); this module keeps them in
accumulators keyed by window (never one entry per line, so memory stays flat) and writes:

* ``truth/security_metrics.jsonl``: the ``security_metrics`` rows (schemas/security_metrics.py);
* ``truth/token_lifecycle.jsonl``: the ``token_lifecycle`` rows (schemas/token_lifecycle.py);
* ``truth/findings.jsonl``: the ``findings`` rows (schemas/findings.py);
* ``truth/auth_principals.jsonl``: per authentication outcome line, whose attempt it was and
  whether the logs tie it to that principal and state its mechanism (``links``);
* ``truth/README.md``: what each file holds and which columns are compared.

Times are written as ISO-8601 UTC strings (``2026-11-20T00:00:00.000Z``); evidence tags are
resolved to (path relative to the corpus folder, 1-based line number).
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jobs.simulator.links import RequestLog, principal_rows
from jobs.simulator.shared import finding_id

#: Selector meters (``SelectorMetrics``): ``<name>-total`` (count) and ``<name>-rate`` (per s).
METERS: frozenset[str] = frozenset(
    {
        "successful-authentication",
        "failed-authentication",
        "successful-reauthentication",
        "failed-reauthentication",
    }
)
#: ``AuthorizerMetrics``: count per minute of the window.
PER_MINUTE: frozenset[str] = frozenset(
    {"authorization-denied-rate-per-minute", "authorization-allowed-rate-per-minute"}
)
#: Metrics reported under their own name as a count (CumulativeSum).
COUNTS: frozenset[str] = frozenset({"expired-connections-killed-count"})
#: Metrics whose events carry an observed value: avg / max / p99 of it.
OBSERVED: frozenset[str] = frozenset({"reauthentication-latency"})
#: Every other metric name is a ``-total`` only (``successful-authentication-no-reauth``,
#: ``forwarded-requests``, ``forwarding-failures``): give it without the suffix.
WINDOWS: dict[str, int] = {"1h": 3600, "1d": 86400}
MAX_EVIDENCE = 20

_Key = tuple[str, str, int, str | None, str | None, str | None, str | None, str | None]


def iso_ms(ts_ms: int) -> str:
    """Epoch ms -> ``yyyy-MM-ddTHH:mm:ss.SSSZ`` (UTC)."""
    second, millis = divmod(ts_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)) + f".{millis:03d}Z"


def _p99(values: list[float]) -> float:
    """Exact 99th percentile with linear interpolation between the closest ranks."""
    ordered = sorted(values)
    position = 0.99 * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    # Spark's Percentile.getPercentile, term for term (the same double rounding).
    return (high - position) * ordered[low] + (position - low) * ordered[high]


class TruthRecorder:
    """Implements ``base.Truth``; writes ``truth/`` at the end."""

    def __init__(self) -> None:
        self._counts: dict[_Key, int] = defaultdict(int)
        self._values: dict[_Key, list[float]] = defaultdict(list)
        self.tokens: list[dict[str, Any]] = []
        self.findings: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []
        self.requests = RequestLog()

    def metric_event(
        self,
        metric_name: str,
        ts_ms: int,
        broker_id: str | None,
        *,
        listener: str | None = None,
        mechanism: str | None = None,
        principal: str | None = None,
        api_key_name: str | None = None,
        value: float = 1.0,
    ) -> None:
        """Count one event into its 1h and 1d UTC windows (see ``base.Truth``).

        ``metric_name`` is the meter's base name for ``METERS`` (``failed-authentication``),
        the full name otherwise (``authorization-denied-rate-per-minute``,
        ``expired-connections-killed-count``, ``reauthentication-latency`` with ``value``
        in ms, or a ``-total`` metric without its suffix).
        """
        for window, seconds in WINDOWS.items():
            start = ts_ms // (seconds * 1000) * seconds
            key = (metric_name, window, start, broker_id, listener, mechanism, principal,
                   api_key_name)  # fmt: skip
            if metric_name in OBSERVED:
                self._values[key].append(value)
            else:
                self._counts[key] += 1

    def token(self, row: dict[str, Any]) -> None:
        """One ``token_lifecycle`` row (see ``base.Truth``)."""
        self.tokens.append(row)

    def finding(self, row: dict[str, Any]) -> None:
        """One ``findings`` row (see ``base.Truth``); ``finding_id`` and ``finding_date`` are
        derived when absent."""
        self.findings.append(row)

    def authentication(self, row: dict[str, Any]) -> None:
        """One authentication outcome line (see ``base.Truth``)."""
        self.outcomes.append(row)

    def request_logged(
        self, node_id: str, connection_id: str, client_ip: str, principal: str, ts_ms: int
    ) -> None:
        """One request-log line of a client connection (see ``base.Truth``)."""
        self.requests.add(node_id, connection_id, client_ip, principal, ts_ms)

    def metric_rows(self) -> list[dict[str, Any]]:
        """Every ``security_metrics`` row (times as ISO strings), sorted."""
        rows: list[dict[str, Any]] = []
        for key, count in self._counts.items():
            name, window, *_ = key
            seconds = WINDOWS[window]
            if name in METERS:
                values = [(f"{name}-total", float(count)), (f"{name}-rate", count / seconds)]
            elif name in PER_MINUTE:
                values = [(name, count * 60 / seconds)]
            elif name in COUNTS:
                values = [(name, float(count))]
            else:
                values = [(f"{name}-total", float(count))]
            rows.extend(self._row(key, metric, value, count) for metric, value in values)
        for key, observed in self._values.items():
            stats = {
                "avg": sum(observed) / len(observed),
                "max": max(observed),
                "p99": _p99(observed),
            }
            rows.extend(
                self._row(key, f"{key[0]}-{stat}", value, len(observed))
                for stat, value in stats.items()
            )
        return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))

    @staticmethod
    def _row(key: _Key, metric: str, value: float, count: int) -> dict[str, Any]:
        _, window, start, broker, listener, mechanism, principal, api = key
        seconds = WINDOWS[window]
        return {
            "metric_name": metric,
            "window": window,
            "window_start_ts": iso_ms(start * 1000),
            "window_end_ts": iso_ms((start + seconds) * 1000),
            "broker_id": broker,
            "listener": listener,
            "mechanism": mechanism,
            "principal": principal,
            "api_key_name": api,
            "value": value,
            "event_count": count,
            "window_date": iso_ms(start * 1000)[:10],
        }

    def write(self, out: Path, positions: dict[str, tuple[str, int]]) -> dict[str, int]:
        """Write ``out/truth/*``; returns the row count per file."""
        folder = out / "truth"
        folder.mkdir(parents=True, exist_ok=True)
        files = {
            "security_metrics.jsonl": self.metric_rows(),
            "token_lifecycle.jsonl": [resolve(r, positions) for r in self.tokens],
            "findings.jsonl": sorted(
                (_finding(resolve(r, positions)) for r in self.findings),
                key=lambda r: (r["rule_id"], r["finding_id"]),
            ),
            "auth_principals.jsonl": sorted(
                (resolve(r, positions) for r in principal_rows(self.outcomes, self.requests)),
                key=lambda r: (r["source_path"], r["line_number"]),
            ),
        }
        for name, rows in files.items():
            _write_jsonl(folder / name, rows)
        (folder / "README.md").write_text(README, encoding="utf-8")
        return {name: len(rows) for name, rows in files.items()}


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=True, ensure_ascii=False))
            handle.write("\n")


def resolve(value: Any, positions: dict[str, tuple[str, int]]) -> Any:
    """Copy of a truth row with tags resolved: a dict key ``evidence_tags`` becomes
    ``evidence`` (the first ``MAX_EVIDENCE`` positions, sorted by path and line), a key
    ``tag`` becomes ``source_path`` / ``line_number``; ``*_ts`` / ``*_ms`` epoch values stay
    as given except ``*_ts`` ints, which become ISO-8601 UTC strings."""
    if isinstance(value, list):
        return [resolve(v, positions) for v in value]
    if not isinstance(value, dict):
        return value
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key == "evidence_tags":
            found = sorted({positions[t] for t in item if t in positions})
            result["evidence"] = [
                {"source_path": p, "line_number": n} for p, n in found[:MAX_EVIDENCE]
            ]
        elif key == "tag":
            path, number = positions.get(item, (None, None)) if item else (None, None)
            result["source_path"] = path
            result["line_number"] = number
        elif key.endswith("_ts") and isinstance(item, int) and not isinstance(item, bool):
            result[key] = iso_ms(item)
        else:
            result[key] = resolve(item, positions)
    return result


def _finding(row: dict[str, Any]) -> dict[str, Any]:
    """Fill ``finding_id``, ``discriminator`` ('' when absent) and ``finding_date``."""
    discriminator = row.get("discriminator") or ""
    filled = dict(row)
    filled["discriminator"] = discriminator
    filled.setdefault(
        "finding_id",
        finding_id(row["rule_id"], row["subject_type"], row["subject"], discriminator),
    )
    last = row.get("last_seen_ts")
    filled["finding_date"] = last[:10] if isinstance(last, str) else None
    return filled


README = """\
# Ground truth of this generated corpus

Computed by the simulator from its own world state while it produced the lines (never by
parsing the logs and never with the pipeline's code). One JSON object per line; times are
ISO-8601 UTC strings; evidence paths are relative to the corpus folder (the folder holding
this `truth/`).

* `security_metrics.jsonl`: the `security_metrics` rows (1h and 1d UTC windows).
* `token_lifecycle.jsonl`: the `token_lifecycle` rows (KIP-48 delegation tokens).
* `findings.jsonl`: the `findings` rows of every rule the simulated world triggers.
* `auth_principals.jsonl`: one row per broker authentication outcome line (`source_path`,
  `line_number`, `event_type`, `node_id`, `event_ts`): the `principal` whose attempt it was
  (null for the strangers' failures: the world does not say who they tried to be) and
  `mechanism`; `linkable` / `principal_source`: whether the logs tie the line to that
  principal, and how (`request_log`: the channel id it prints is a connection of the request
  log; `session`: the connection a success opened, or the connections of the address open at a
  re-authentication, all of one principal; same broker and UTC day); `mechanism_stated` /
  `mechanism_source`: whether the line names the mechanism (`line`) or its handshake's `Using
  SASL mechanism` line does (`handshake`). The lake's `auth_events` row of the line holds the
  principal exactly when `linkable`, the mechanism exactly when `mechanism_stated`.

Every column is compared except the ones named below.

Left out of the comparison:

* `run_id` (every table): the pipeline run's own id, not a fact of the world.
* `evidence.source_path`: written relative here; the pipeline stores the local path it read,
  so the comparison joins the corpus folder in front.
* `token_lifecycle.hmac_fingerprint`: keyed by the lake's fingerprint key (a property of the
  lake, not of the world); the test recomputes it with the lake's key when a row names one.

Rows of a metric are keyed as the logs can state them: `listener` only where the line's
thread names it (Strimzi layout), `mechanism` only where the exception message names it
(`... with SASL mechanism SCRAM-SHA-256`). See docs/generator.md for the rules.
"""
