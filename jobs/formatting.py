"""Small text helpers shared by the run summary and ``kafka-audit report`` (no Spark import)."""

from __future__ import annotations


def duration_text(ms: int) -> str:
    """``900000`` -> ``15 min``, ``3600000`` -> ``1 h``, other values in ms."""
    if ms % 3_600_000 == 0:
        return f"{ms // 3_600_000} h"
    if ms % 60_000 == 0:
        return f"{ms // 60_000} min"
    return f"{ms} ms"
