"""Finding rules, and their rows in ``gold.findings`` (``schemas.findings``).

Every audit rule has one shape: a :class:`FindingRule`, made by :func:`finding_rule`,
holds the rule's constants (id, KIP, severity, subject type) and its explanation (a literal
sentence, or a template and the candidate columns that fill it, read by :func:`explain`). The
KIP module that owns the rule (``transforms.gold.kip*``) declares it, computes its candidate rows
and passes both to :func:`to_findings`; :func:`union_findings` stacks the results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from typing import TypeAlias

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.findings import FINDINGS, MAX_EVIDENCE, SEVERITIES, SUBJECT_TYPES
from transforms.frames import union_by_name

_KIP_RE = re.compile(r"KIP-[0-9]+")
_DIRECTIVE_RE = re.compile(r"%(.?)")


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


@dataclass(frozen=True)
class Listed:
    """An explanation value: the array column ``column`` read as 'a, b' (null when empty).
    Made by :func:`listed`."""

    column: str

    def to_column(self) -> Column:
        """The text Column (string, null for a null or empty array)."""
        return F.nullif(F.concat_ws(", ", F.col(self.column)), F.lit(""))


#: What fills a template's ``%s``: a candidate column by name, or a :class:`Listed` array.
ExplanationValue: TypeAlias = str | Listed


def listed(column: str) -> Listed:
    """An array column as an explanation value: its items joined with ', ' (in the array's
    order: sort it when building the candidates), null (read as ``if_null``) when empty."""
    return Listed(column)


def _check_template(template: str, values: int) -> None:
    """Raises: ValueError: ``template`` has another ``%`` directive than ``%s`` and ``%%``
    (a literal '%'), or not ``values`` ``%s``."""
    directives = _DIRECTIVE_RE.findall(template)
    unknown = sorted({d for d in directives if d not in ("s", "%")})
    if unknown:
        raise ValueError(f"template {template!r}: only %s and %% are allowed, not {unknown}")
    if directives.count("s") != values:
        raise ValueError(f"template {template!r} does not have {values} %s")


def explain(template: str, *values: ExplanationValue, if_null: str | None = "-") -> Column:
    """One sentence per candidate row: ``template`` with its ``%s`` filled by ``values``.

    Args:
        template: the sentence; ``%s`` per value, ``%%`` for a '%'. Without values it is the
            sentence itself, taken literally.
        values: candidate column names (str) or :func:`listed` arrays, cast to string.
        if_null: what a null value reads as; None: a null value leaves the whole sentence
            null (``to_findings`` then writes the rule id instead).

    Returns:
        A string Column, to be evaluated over the candidate rows.

    Raises:
        ValueError: the template's ``%s`` count differs from the number of values, or it has
            another ``%`` directive.
    """
    if not values:
        return F.lit(template)
    _check_template(template, len(values))
    texts = [(F.col(v) if isinstance(v, str) else v.to_column()).cast("string") for v in values]
    if if_null is not None:
        return F.format_string(template, *[F.coalesce(t, F.lit(if_null)) for t in texts])
    known = reduce(lambda a, b: a & b, [t.isNotNull() for t in texts])
    return F.when(known, F.format_string(template, *texts))


@dataclass(frozen=True)
class FindingRule:
    """One audit rule's constants and explanation; made by :func:`finding_rule`.

    Attributes:
        rule_id: stable name, '<area>.<rule>' (e.g. 'authorizer.default_allow').
        kip: the proposal the rule replays, 'KIP-<number>'.
        severity: one of ``schemas.findings.SEVERITIES``.
        subject_type: one of ``schemas.findings.SUBJECT_TYPES``.
        template: the explanation (see :func:`explain`): a literal sentence when ``values``
            is empty.
        values: what fills the template's ``%s``: candidate column names or :func:`listed`.
        if_null: how a null value reads (:func:`explain`).

    Raises:
        ValueError: on construction, an empty rule id, a kip not 'KIP-<number>', an unknown
            severity or subject type, a value that is not a column name or :func:`listed`, or a
            template whose ``%s`` do not match its values.
    """

    rule_id: str
    kip: str
    severity: str
    subject_type: str
    template: str
    values: tuple[ExplanationValue, ...] = ()
    if_null: str | None = "-"

    def __post_init__(self) -> None:
        if not self.rule_id:
            raise ValueError("a finding rule needs a rule_id")
        if not _KIP_RE.fullmatch(self.kip):
            raise ValueError(f"{self.rule_id}: kip {self.kip!r} is not 'KIP-<number>'")
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"{self.rule_id}: severity {self.severity!r} is not one of {SEVERITIES}"
            )
        if self.subject_type not in SUBJECT_TYPES:
            raise ValueError(
                f"{self.rule_id}: subject_type {self.subject_type!r} is not one of {SUBJECT_TYPES}"
            )
        if not all(isinstance(v, str | Listed) for v in self.values):
            raise ValueError(f"{self.rule_id}: values are column names or listed(column)")
        if self.values:
            try:
                _check_template(self.template, len(self.values))
            except ValueError as error:
                raise ValueError(f"{self.rule_id}: {error}") from error

    def explanation(self) -> Column:
        """The explanation Column over the candidate rows (:func:`explain`)."""
        return explain(self.template, *self.values, if_null=self.if_null)


def finding_rule(
    rule_id: str,
    kip: str,
    severity: str,
    subject_type: str,
    template: str,
    *values: ExplanationValue,
    if_null: str | None = "-",
) -> FindingRule:
    """Declare a rule: ``finding_rule(id, kip, severity, subject_type, sentence)`` for a
    literal explanation, or with the template's values after it (see :func:`explain`).

    Returns:
        The validated, frozen rule.

    Raises:
        ValueError: see :class:`FindingRule`.
    """
    return FindingRule(rule_id, kip, severity, subject_type, template, tuple(values), if_null)


def to_findings(candidates: DataFrame, rule: FindingRule, run_id: str) -> DataFrame:
    """Turn a rule's candidate rows into findings rows.

    Args:
        candidates: one row per finding with columns ``subject`` (string, not null),
            ``discriminator`` (string or null), ``node_id`` (string or null),
            ``first_seen_ts`` / ``last_seen_ts`` (timestamp, UTC), ``count`` (long),
            ``evidence`` (array of (source_path, line_number), e.g. from :func:`evidence`) and
            the columns the rule's explanation reads. Rows with a null subject are dropped: a
            finding needs a subject.
        rule: the rule (validated when declared).
        run_id: the run.

    Returns:
        Rows of ``schemas.findings.FINDINGS``, in its column order; the explanation is the
        rule id where the rule's sentence is null.
    """
    discriminator = F.coalesce(F.col("discriminator").cast("string"), F.lit(""))
    finding_id = F.sha2(
        F.concat_ws(
            "\u001f", F.lit(rule.rule_id), F.lit(rule.subject_type), F.col("subject"), discriminator
        ),
        256,
    )
    shaped = candidates.where(F.col("subject").isNotNull()).select(
        finding_id.alias("finding_id"),
        F.lit(rule.rule_id).alias("rule_id"),
        F.lit(rule.kip).alias("kip"),
        F.lit(rule.severity).alias("severity"),
        F.lit(rule.subject_type).alias("subject_type"),
        F.col("subject").cast("string").alias("subject"),
        discriminator.alias("discriminator"),
        F.col("node_id").cast("string").alias("node_id"),
        F.col("first_seen_ts").cast("timestamp").alias("first_seen_ts"),
        F.col("last_seen_ts").cast("timestamp").alias("last_seen_ts"),
        F.col("count").cast("long").alias("count"),
        F.coalesce(F.col("evidence"), F.array()).alias("evidence"),
        F.coalesce(rule.explanation(), F.lit(rule.rule_id)).alias("explanation"),
        F.lit(run_id).alias("run_id"),
        F.to_date(F.col("last_seen_ts")).alias("finding_date"),
    )
    return shaped.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in FINDINGS.fields])


def union_findings(parts: Iterable[DataFrame]) -> DataFrame | None:
    """All findings frames in one (by column name); None when there are none."""
    frames = list(parts)
    return union_by_name(frames) if frames else None
