"""What a gold builder reads and what it plans: ``GoldContext``, ``PlannedTable``, ``GoldOutput``,
and the whole-lake reductions a builder reads (``Reduction``, ``reduced``).

Every builder (``jobs.gold.kip*``) imports this module and nothing else of ``jobs.gold``; the
registry (``jobs.gold.registry``) imports the builders. No cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from jobs.config import RunConfig
from jobs.reuse import reused


@dataclass(frozen=True)
class GoldContext:
    """What a gold builder may read.

    Attributes:
        spark: the session.
        silver: the lake's silver tables by name (``transforms.silver.registry.SILVER_TABLES``),
        every
            day the lake covers (this run's days just replaced).
        bronze: the lake's ``raw_lines`` rows (secrets already fingerprinted).
        node_properties: ``schemas.node_properties.NODE_PROPERTIES`` rows of the nodes' configs.
        config: the run's configuration (window, ``rules``, run id).
        token_secret: the cluster's delegation-token secret, when given by reference; never
            written anywhere.
        fingerprint_key: the lake's fingerprint key (``jobs.fingerprint_keys``): fingerprints
        computed
            in gold compare with those of silver (``transforms.bronze.redaction``).
        window: the span of the lake's evidence ``(start, end)`` in UTC
            (``jobs.coverage.evidence_window``): from the midnight of the first day a run
            window covered to the midnight after the last; None = the earliest / latest event
            time in silver.
        reduced: the builders' whole-lake reductions (``Reduction``) by name, when the
            caller computed them before the builders (``jobs.pipeline.gold_reductions`` does,
            under the run's own settings, and releases them); a builder computes one that is
            not here itself (``reduced``).
    """

    spark: SparkSession
    silver: Mapping[str, DataFrame]
    bronze: DataFrame
    node_properties: DataFrame
    config: RunConfig
    token_secret: bytes | None = None
    fingerprint_key: bytes | None = None
    window: tuple[datetime | None, datetime | None] = (None, None)
    reduced: Mapping[str, DataFrame] = field(default_factory=dict)

    @property
    def as_of(self) -> datetime | None:
        """The end of the evidence, as of which open sessions and live tokens are stated."""
        return self.window[1]


@dataclass(frozen=True)
class PlannedTable:
    """A table to write, as the gold builders plan theirs and ``jobs.pipeline`` plans bronze
    and silver: one Delta commit each.

    Attributes:
        name / schema / partition_by: the table (``schemas/``).
        df: its rows: every row of a gold table (rewritten whole by every run), or this run's
            date partitions of bronze and silver.
    """

    name: str
    df: DataFrame
    schema: StructType
    partition_by: Sequence[str]


@dataclass(frozen=True)
class GoldOutput:
    """What a builder plans: tables, findings rows (``schemas.findings.FINDINGS``), extra
    ``security_metrics`` rows (``schemas.security_metrics.SECURITY_METRICS``), and the frames
    it computed once because several outputs read them (``jobs.reuse.reused``; released after
    the writes)."""

    tables: tuple[PlannedTable, ...] = ()
    findings: tuple[DataFrame, ...] = ()
    metrics: tuple[DataFrame, ...] = ()
    cached: tuple[DataFrame, ...] = ()


Builder = Callable[[GoldContext], GoldOutput]


@dataclass(frozen=True)
class Gold:
    """Every builder's output stacked: the tables, one findings frame, extra metrics."""

    tables: list[PlannedTable]
    findings: DataFrame
    metrics: DataFrame | None
    names: list[str] = field(default_factory=list)
    cached: list[DataFrame] = field(default_factory=list)


#: A reduction of a whole silver or bronze table that a builder reads (the request log's
#: connections, its forwarded requests, the authorizer's start-up lines): a few rows out of
#: every row, computed once. Each builder module lists its own in ``REDUCTIONS`` by name;
#: ``jobs.gold.registry.reductions`` gathers them.
Reduction = Callable[[GoldContext], DataFrame]


def reduced(
    context: GoldContext, name: str, reduction: Reduction
) -> tuple[DataFrame, tuple[DataFrame, ...]]:
    """The rows of ``reduction`` for ``context``: those the caller computed
    (``context.reduced[name]``), else computed here once (``jobs.reuse.reused``).

    Returns:
        The frame, and the frames the builder must release after the writes (its
        ``GoldOutput.cached``): none when the caller computed it, which releases it.

    Why: gold alone runs with the small-input settings when the lake's silver is small (1M
    lines give 50 MB), so a scan of every request row runs interpreted there: the connections
    took 6-7 s of a 1M run's gold interpreted, 1 s compiled (issue 15, thirty-first and
    thirty-second parts). ``jobs.pipeline`` computes the reductions first, under the run's
    settings.
    """
    if name in context.reduced:
        return context.reduced[name], ()
    frame = reused(reduction(context))
    return frame, (frame,)
