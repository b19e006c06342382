"""Shape rule outputs into ``gold.findings`` rows (``schemas.findings``).

Every gold rule builds a DataFrame of candidate findings with the columns below and passes it
to :func:`to_findings` with its rule's constants; :func:`union_findings` stacks them.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.findings import FINDINGS, MAX_EVIDENCE, SEVERITIES, SUBJECT_TYPES
from transforms.frames import union_by_name


def evidence(source_path: str = "source_path", line_number: str = "line_number") -> Column:
    """Aggregate expression ``evidence``: the first ``MAX_EVIDENCE`` positions (file, line) of
    the group's rows, sorted. Use inside ``groupBy(...).agg(...)``; null positions are
    skipped."""
    position = F.struct(
        F.col(source_path).alias("source_path"), F.col(line_number).alias("line_number")
    )
    positions = F.array_sort(F.collect_set(position))
    return F.slice(positions, 1, MAX_EVIDENCE).alias("evidence")


def seen(ts: str = "event_ts", node: str = "node_id") -> list[Column]:
    """Aggregate expressions of a finding's group: ``node_id`` (the smallest), ``first_seen_ts``
    / ``last_seen_ts`` (min / max of ``ts``), ``count`` (rows) and ``evidence``."""
    return [
        F.min(node).alias("node_id"),
        F.min(ts).alias("first_seen_ts"),
        F.max(ts).alias("last_seen_ts"),
        F.count(F.lit(1)).alias("count"),
        evidence(),
    ]


def to_findings(
    candidates: DataFrame,
    *,
    rule_id: str,
    kip: str,
    severity: str,
    subject_type: str,
    explanation: Column | str,
    run_id: str,
) -> DataFrame:
    """Turn a rule's candidate rows into findings rows.

    Args:
        candidates: one row per finding with columns ``subject`` (string, not null),
            ``discriminator`` (string or null), ``node_id`` (string or null),
            ``first_seen_ts`` / ``last_seen_ts`` (timestamp, UTC), ``count`` (long) and
            ``evidence`` (array of (source_path, line_number), e.g. from :func:`evidence`).
            Rows with a null subject are dropped: a finding needs a subject.
        rule_id / kip / severity / subject_type: the rule's constants.
        explanation: a sentence (a literal, or a Column built from the row's values).
        run_id: the run.

    Returns:
        Rows of ``schemas.findings.FINDINGS``, in its column order.

    Raises:
        ValueError: an unknown severity or subject type.
    """
    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r} is not one of {SEVERITIES}")
    if subject_type not in SUBJECT_TYPES:
        raise ValueError(f"subject_type {subject_type!r} is not one of {SUBJECT_TYPES}")
    text = F.lit(explanation) if isinstance(explanation, str) else explanation
    discriminator = F.coalesce(F.col("discriminator").cast("string"), F.lit(""))
    finding_id = F.sha2(
        F.concat_ws("\u001f", F.lit(rule_id), F.lit(subject_type), F.col("subject"), discriminator),
        256,
    )
    shaped = candidates.where(F.col("subject").isNotNull()).select(
        finding_id.alias("finding_id"),
        F.lit(rule_id).alias("rule_id"),
        F.lit(kip).alias("kip"),
        F.lit(severity).alias("severity"),
        F.lit(subject_type).alias("subject_type"),
        F.col("subject").cast("string").alias("subject"),
        discriminator.alias("discriminator"),
        F.col("node_id").cast("string").alias("node_id"),
        F.col("first_seen_ts").cast("timestamp").alias("first_seen_ts"),
        F.col("last_seen_ts").cast("timestamp").alias("last_seen_ts"),
        F.col("count").cast("long").alias("count"),
        F.coalesce(F.col("evidence"), F.array()).alias("evidence"),
        F.coalesce(text, F.lit(rule_id)).alias("explanation"),
        F.lit(run_id).alias("run_id"),
        F.to_date(F.col("last_seen_ts")).alias("finding_date"),
    )
    return shaped.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in FINDINGS.fields])


def union_findings(parts: Iterable[DataFrame]) -> DataFrame | None:
    """All findings frames in one (by column name); None when there are none."""
    frames = list(parts)
    return union_by_name(frames) if frames else None
