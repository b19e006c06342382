"""Gold: the audit replays (KIP-368, KIP-48, KIP-590, KIP-801, KIP-507) on top of silver.

Each area has a builder ``build(context) -> GoldOutput`` (``jobs.gold_*``): it plans its gold
tables, its findings and any extra ``security_metrics`` rows from the lake's silver and the
nodes' configuration, and from nothing else: gold is a pure function of silver, rewritten
whole by every run (docs/reruns.md). This module lists the builders and stacks their outputs;
``jobs.pipeline`` writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from jobs.config import RunConfig
from schemas.findings import FINDINGS
from schemas.security_metrics import SECURITY_METRICS
from transforms.frames import local_frame, union_by_name


@dataclass(frozen=True)
class GoldContext:
    """What a gold builder may read.

    Attributes:
        spark: the session.
        silver: the lake's silver tables by name (``transforms.silver.SILVER_TABLES``), every
            day the lake covers (this run's days just replaced).
        bronze: the lake's ``raw_lines`` rows (secrets already fingerprinted).
        node_properties: ``schemas.node_properties.NODE_PROPERTIES`` rows of the nodes' configs.
        config: the run's configuration (window, ``rules``, run id).
        token_secret: the cluster's delegation-token secret, when given by reference; never
            written anywhere.
        fingerprint_key: the lake's fingerprint key (``jobs.secrets``): fingerprints computed
            in gold compare with those of silver (``transforms.redaction``).
        window: the span of the lake's evidence ``(start, end)`` in UTC
            (``jobs.coverage.evidence_window``): from the midnight of the first day a run
            window covered to the midnight after the last; None = the earliest / latest event
            time in silver.
    """

    spark: SparkSession
    silver: Mapping[str, DataFrame]
    bronze: DataFrame
    node_properties: DataFrame
    config: RunConfig
    token_secret: bytes | None = None
    fingerprint_key: bytes | None = None
    window: tuple[datetime | None, datetime | None] = (None, None)

    @property
    def as_of(self) -> datetime | None:
        """The end of the evidence, as of which open sessions and live tokens are stated."""
        return self.window[1]


@dataclass(frozen=True)
class GoldTable:
    """A gold table to write.

    Attributes:
        name / schema / partition_by: the table (``schemas/``).
        df: all its rows (every run rewrites every gold table whole, in one commit).
    """

    name: str
    df: DataFrame
    schema: StructType
    partition_by: tuple[str, ...]


@dataclass(frozen=True)
class GoldOutput:
    """What a builder plans: tables, findings rows (``schemas.findings.FINDINGS``), extra
    ``security_metrics`` rows (``schemas.security_metrics.SECURITY_METRICS``), and the frames
    it persisted because several outputs read them (unpersisted after the writes)."""

    tables: tuple[GoldTable, ...] = ()
    findings: tuple[DataFrame, ...] = ()
    metrics: tuple[DataFrame, ...] = ()
    cached: tuple[DataFrame, ...] = ()


Builder = Callable[[GoldContext], GoldOutput]


@dataclass(frozen=True)
class Gold:
    """Every builder's output stacked: the tables, one findings frame, extra metrics."""

    tables: list[GoldTable]
    findings: DataFrame
    metrics: DataFrame | None
    names: list[str] = field(default_factory=list)
    cached: list[DataFrame] = field(default_factory=list)


def builders() -> Sequence[Builder]:
    """The gold builders, in the order their tables are written."""
    from jobs import (  # noqa: PLC0415 - the builders import this module
        gold_authorizer,
        gold_connect,
        gold_forwarding,
        gold_reauth,
        gold_tokens,
    )

    return (
        gold_reauth.build,
        gold_tokens.build,
        gold_forwarding.build,
        gold_authorizer.build,
        gold_connect.build,
    )


def build_gold(context: GoldContext, selected: Sequence[Builder] | None = None) -> Gold:
    """Plan every gold builder (nothing runs until an action).

    Returns:
        Their tables; their findings stacked into one frame of ``FINDINGS`` (empty when no
        builder has findings); their extra metrics stacked (None when there are none).
    """
    tables: list[GoldTable] = []
    findings: list[DataFrame] = []
    metrics: list[DataFrame] = []
    cached: list[DataFrame] = []
    for build in builders() if selected is None else selected:
        output = build(context)
        tables.extend(output.tables)
        findings.extend(output.findings)
        metrics.extend(output.metrics)
        cached.extend(output.cached)
    stacked = union_by_name(
        [local_frame(context.spark, [], FINDINGS)]
        + [frame.select(*FINDINGS.fieldNames()) for frame in findings]
    )
    parts = [frame.select(*SECURITY_METRICS.fieldNames()) for frame in metrics]
    extra = union_by_name(parts) if parts else None
    names = [t.name for t in tables]
    return Gold(tables=tables, findings=stacked, metrics=extra, names=names, cached=cached)
