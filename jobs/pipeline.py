"""The pipeline: raw log files -> bronze -> silver (+ quarantine) -> gold, into Delta tables.

``build_bronze`` and ``build_silver`` are the lazy plans; ``run`` writes bronze, parses silver
from the bronze it wrote (a table scan, so silver's plans stay small) and writes it, then gold.
``build_frames`` plans both in memory for ``kafka-audit parse``.

Reruns converge (docs/reruns.md): bronze, silver and quarantine replace the run's date
partitions; ``run_coverage`` records the days; gold is then recomputed from the lake's whole
silver and rewritten whole, so it is a pure function of the lake's silver, whatever the
order, size or repetition of the runs that built it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import partial
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from jobs.concurrency import beside, concurrently
from jobs.config import RunConfig
from jobs.coverage import attempt_app_id, coverage_frame, evidence_window
from jobs.fingerprint_keys import fingerprint_key, token_secret
from jobs.gold.context import Gold, GoldContext, GoldOutput, PlannedTable, Reduction
from jobs.gold.registry import GOLD_TABLES, build_gold, reductions
from jobs.ingest import read_lines, sources_frame
from jobs.inputs import (
    SourceFile,
    damaged_files,
    declared_layouts,
    discover_sources,
    node_property_rows,
)
from jobs.lake.settings import runtime_settings
from jobs.lake.tables import Lake, WriteResult, choose_engine
from jobs.neutralize import terminal
from jobs.progress import Progress
from jobs.reuse import release, reused, small_input_partitions
from jobs.small_input import SMALL_INPUT_BYTES, small_input_active, small_input_settings
from jobs.summary import RunSummary, TableWrite, unrecognized_layout_warnings
from schemas import (
    auth_events,
    authz_decisions,
    findings,
    quarantine,
    raw_lines,
    reauth_readiness,
    request_events,
    run_coverage,
    security_metrics,
)
from schemas.findings import SEVERITIES
from schemas.node_properties import NODE_PROPERTIES
from transforms.bronze.accounting import BUCKETS, file_line_counts, line_accounting
from transforms.bronze.records import (
    RECORD_STARTS,
    continuation_runs,
    fold_records,
    narrow_lines,
    numbered_lines,
    record_dates,
    to_raw_lines,
    with_line_headers,
    with_node_id,
)
from transforms.frames import local_frame
from transforms.gold.metrics import security_metrics as compute_security_metrics
from transforms.quarantine import table_and_quarantine_columns
from transforms.silver.families import with_family
from transforms.silver.registry import (
    PARSED_FAMILIES,
    PARSERS,
    SILVER_TABLES,
    Parser,
    empty_output,
    parsed,
    silver_table,
    silver_tables,
)
from transforms.silver.registry import quarantine as quarantine_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Bronze:
    """The run's bronze layers: the numbered lines (a plan over the persisted
    ``transforms.bronze.records.with_line_headers``), the same without their text
    (``transforms.bronze.records.narrow_lines``, persisted), the folded records without their
    text (every record, in or out of the window: what the accounting counts), the folded
    records with node ids and families, the bronze rows of the window
    (``schemas.raw_lines.RAW_LINES``), and the records' distinct ``log_date`` values
    (``transforms.bronze.records.record_dates``)."""

    numbered: DataFrame
    narrow: DataFrame
    folded: DataFrame
    records: DataFrame
    bronze: DataFrame
    dates: DataFrame
    cached: tuple[DataFrame, ...]


@dataclass(frozen=True)
class Silver:
    """The silver tables and quarantine parsed from some bronze rows, lazily planned."""

    silver: dict[str, DataFrame]
    quarantine: DataFrame
    cached: tuple[DataFrame, ...]


@dataclass(frozen=True)
class Parsed:
    """The parsers' outputs on some bronze rows (``parse_bronze``), each computed once, and
    the frames the silver tables planned from them compute once.

    Attributes:
        outputs: (parser, output) pairs in ``PARSERS`` order, each output narrowed by
            ``transforms.quarantine.table_and_quarantine_columns``.
        materialise: what ``transforms.silver.registry.silver_table`` applies to the
            linking's shared frames: each computed once (``jobs.reuse.reused``) and added to
            ``cached``.
        cached: the outputs computed, and each shared frame once a table that reads it is
            planned (the tables may be planned on several threads). Release them
            (``jobs.reuse.release``) once every table is written.
    """

    outputs: list[tuple[Parser, DataFrame]]
    materialise: Callable[[DataFrame], DataFrame]
    cached: list[DataFrame]


@dataclass(frozen=True)
class Frames:
    """The run's DataFrames, lazily planned."""

    numbered: DataFrame
    records: DataFrame
    bronze: DataFrame
    silver: dict[str, DataFrame]
    quarantine: DataFrame
    cached: tuple[DataFrame, ...]


def in_window(ts: Column, start: datetime | None, end: datetime | None) -> Column:
    """True for timestamps inside [start, end); everything when there is no window."""
    if start is None or end is None:
        return F.lit(True)
    return ts.isNotNull() & (ts >= F.lit(start)) & (ts < F.lit(end))


#: Session settings while bronze's layers are computed (``build_bronze``): no compression of
#: the persisted columns. To choose an encoding, Spark's columnar cache hashes every value of
#: every string column (dictionary encoding's statistics), each line's full text twice (line
#: and message) though no encoding ever shrinks those: a third of the cache's CPU. Without it
#: the full-text layer takes 3% more memory, the small narrow layer a third more (issue 15,
#: forty-seventh part).
LAYERS_CONF: Mapping[str, str] = {"spark.sql.inMemoryColumnarStorage.compressed": "false"}


def build_bronze(
    spark: SparkSession, sources: Sequence[SourceFile], config: RunConfig, key: bytes
) -> Bronze:
    """Plan the bronze layers for the given source files.

    One layer of full text is persisted: the lines with their header fields
    (``with_line_headers``: each line's header regex evaluated once, the files read once);
    the numbered lines are a plan over it (``numbered_lines``: the line counts per split are
    a scan of the persisted layer, joined back by broadcast). Beside it, the same lines
    without their text (``narrow_lines``) feed everything that reads every line but no text
    (the continuation runs, the record dates, the node ids each file prints, the
    accounting): at scale the full-text layer spills to disk, and a scan of it reads every
    column back. The continuation runs (stack traces:
    rare lines) are persisted too; one job here computes the three, so that Spark knows the
    runs' true size and broadcasts them to the header lines instead of shuffling every
    record to fold them. The records and the bronze rows are plans over those; a run writes
    bronze once and reads it back from the lake for everything after.

    Args:
        spark: the session.
        sources: the files to read.
        config: the run's window and id.
        key: the fingerprint key for secrets (``jobs.fingerprint_keys``).
    """
    disk = StorageLevel.MEMORY_AND_DISK
    # A persisted frame's cache is built with the settings of a copy of the session taken at
    # ``persist`` (Spark's cache manager, with adaptive execution or bucketed scans on), else
    # with the session's own when it is computed: the settings are held over both.
    with runtime_settings(spark, LAYERS_CONF):
        lines = read_lines(spark, sources)
        headed = with_line_headers(lines, declared_layouts(sources)).persist(disk)
        numbered = numbered_lines(headed)
        narrow = narrow_lines(numbered).persist(disk)
        runs = continuation_runs(narrow).persist(disk)
        # The three computed by one job (``runs.count``) while the plans over them are made
        # on another driver thread: those plans are analysed only, and the first query
        # planned for running (a write, after this returns) sizes the broadcast from the
        # cached rows.
        _, (records, bronze, dates, folded) = beside(
            spark,
            runs.count,
            partial(_over_lines, spark, sources, config, key, (numbered, narrow, runs)),
        )
    return Bronze(numbered, narrow, folded, records, bronze, dates, cached=(headed, narrow, runs))


def _over_lines(
    spark: SparkSession,
    sources: Sequence[SourceFile],
    config: RunConfig,
    key: bytes,
    layers: tuple[DataFrame, DataFrame, DataFrame],
) -> tuple[DataFrame, DataFrame, DataFrame, DataFrame]:
    """``build_bronze``'s plans over its layers (the numbered lines, the narrow lines, the
    continuation runs): the records with node ids and families, the bronze rows of the
    window, the records' dates and the folded records without their text. Plans only:
    nothing here runs a Spark job."""
    numbered, narrow, runs = layers
    files = sources_frame(spark, sources)
    printed = narrow.where(F.col("line_kind").isin(*RECORD_STARTS))
    records = (
        fold_records(numbered, runs)
        .transform(with_node_id, files, printed.select("source_path", "own_node_id"))
        .transform(with_family)
    )
    in_run = records.where(in_window(F.col("log_ts"), config.start, config.end))
    bronze = to_raw_lines(in_run, config.run_id, key)
    return records, bronze, record_dates(narrow, runs, files), fold_records(narrow, runs)


def present_families(bronze: DataFrame) -> set[str | None]:
    """The distinct ``family`` values of ``bronze`` (``schemas.raw_lines.RAW_LINES`` rows;
    None for records of no family), collected on the driver: at most one row per family."""
    return {row["family"] for row in bronze.select("family").distinct().collect()}


#: Session settings while the parsers' outputs are planned and computed (``parse_bronze``):
#: no whole-stage code generation. The large parsers' stages are over
#: ``spark.sql.codegen.hugeMethodLimit`` (``jobs.session``): each was compiled in full (Janino,
#: up to 52 kB of bytecode, 0.4 s), found too long, dropped, and its operators run one by one
#: all the same. A 300k-line run compiled six such stages for nothing. Off, the operators run
#: one by one from the start; the rows are the same (issue 15, twenty-eighth part).
PARSE_CONF: Mapping[str, str] = {"spark.sql.codegen.wholeStage": "false"}
#: The families whose parsers take longest, started first in this order, so that the short
#: ones fill in beside them on the other driver threads (a ``samples/`` run: the request log's
#: 2.2 s, the authentication lines' 1.5 s, the others 0.8 s or less; in ``PARSERS``' order
#: the request log's began last on one thread while the other went idle).
LONGEST_PARSES: tuple[str, ...] = (raw_lines.FAMILY_REQUEST, raw_lines.FAMILY_AUTH)


def parse_bronze(bronze: DataFrame, families: Collection[str | None] | None = None) -> Parsed:
    """Every parser on ``bronze`` (``schemas.raw_lines.RAW_LINES`` rows), its output computed
    once (``jobs.reuse.reused``: its consumers' plans start at a scan of it) and narrowed to
    the columns its table and the quarantine read (the full text only on rejected records): it
    feeds a silver table and the quarantine (a run's accounting and gold read those back from
    the lake). The parsers are planned and computed side by side, on several driver threads
    (``jobs.concurrency``), with ``PARSE_CONF``'s settings.

    ``families``: the families ``bronze`` holds (``present_families``), when known. A parser
    of any other family is neither planned nor run: an empty frame of its narrowed output's
    columns stands for what it would give (no row). The tables are the same either way.

    Raises:
        Whatever computing a parser's output raises (``pyspark.errors`` exceptions).
    """
    run = {id(parser) for parser in PARSERS if families is None or parser.family in families}
    cached: list[DataFrame] = []
    links_run = {parser.table for parser in PARSERS if id(parser) in run} >= {
        auth_events.TABLE_NAME,
        request_events.TABLE_NAME,
    }

    def materialise(df: DataFrame) -> DataFrame:
        # The linking's shared frames (the connections aggregate, the keyed auth rows)
        # computed once when auth_events has rows to link to requests; otherwise the joins
        # have an empty side and Spark computes nothing, which a checkpoint would undo.
        if not links_run:
            return df
        shared = reused(df)
        cached.append(shared)
        return shared

    def output(parser: Parser) -> DataFrame:
        if id(parser) not in run:
            return empty_output(bronze.sparkSession, parser)
        return reused(table_and_quarantine_columns(parsed(bronze, parser), parser.schema))

    # Each parser planned and its output computed on a driver thread (``jobs.concurrency``),
    # without whole-stage code generation (PARSE_CONF), the longest first (LONGEST_PARSES).
    spark = bronze.sparkSession
    started = sorted(PARSERS, key=_parse_rank)
    with runtime_settings(spark, PARSE_CONF):
        computed = concurrently(spark, [partial(output, parser) for parser in started])
    by_parser = {id(parser): df for parser, df in zip(started, computed, strict=True)}
    outputs = [(parser, by_parser[id(parser)]) for parser in PARSERS]
    cached.extend(output for parser, output in outputs if id(parser) in run)
    return Parsed(outputs=outputs, materialise=materialise, cached=cached)


def _parse_rank(parser: Parser) -> int:
    """A parser's place in the start order: ``LONGEST_PARSES``' first, then ``PARSERS``'."""
    family = parser.family
    return LONGEST_PARSES.index(family) if family in LONGEST_PARSES else len(LONGEST_PARSES)


def build_silver(bronze: DataFrame, families: Collection[str | None] | None = None) -> Silver:
    """Plan every parser on ``bronze`` (``parse_bronze``, whose outputs are computed here) and
    from their outputs the silver tables (``transforms.silver.registry.silver_tables``) and
    the quarantine.

    Raises:
        Whatever computing a parser's output or a shared frame raises (``pyspark.errors``).
    """
    outputs = parse_bronze(bronze, families)
    tables = silver_tables(outputs.outputs, outputs.materialise)
    return Silver(
        silver=tables, quarantine=quarantine_of(outputs.outputs), cached=tuple(outputs.cached)
    )


def build_frames(
    spark: SparkSession, sources: Sequence[SourceFile], config: RunConfig, key: bytes
) -> Frames:
    """Plan every layer for the given source files in memory, silver parsed straight from the
    planned bronze (``kafka-audit parse``; a run parses the bronze it wrote instead).

    Args:
        spark: the session.
        sources: the files to read.
        config: the run's window and id.
        key: the fingerprint key for secrets (``jobs.fingerprint_keys``).
    """
    bronze = build_bronze(spark, sources, config, key)
    # Materialised here, its plan cut to a scan of the rows (a run reads it back from the lake
    # instead): every parser reads it, and Spark would otherwise analyse the whole bronze plan
    # again under each of them.
    rows = reused(bronze.bronze)
    silver = build_silver(rows, present_families(rows))
    return Frames(
        numbered=bronze.numbered,
        records=bronze.records,
        bronze=rows,
        silver=silver.silver,
        quarantine=silver.quarantine,
        cached=(*bronze.cached, rows, *silver.cached),
    )


def replaced_dates(dates: DataFrame, config: RunConfig) -> list[date | None]:
    """Date partitions this run owns: the window's days, else every date of the records
    (``Bronze.dates``: distinct ``log_date``; None = records without a timestamp). Collects
    that small frame on the driver."""
    window = config.window_dates()
    if window is not None:
        return list(window)
    rows = dates.select("log_date").distinct().collect()
    return sorted({row["log_date"] for row in rows}, key=lambda d: (d is None, d))


#: A table planned by the write that writes it, on that write's driver thread (``_write_tables``):
#: tables that are costly to plan are then planned side by side, each beside other writes.
Deferred = Callable[[], PlannedTable]
#: The tables of one group of writes, each planned already or deferred.
Plan = list[PlannedTable | Deferred]


#: The tables one run writes, in the run's order: raw_lines; silver, quarantine and
#: run_coverage; the gold builders' tables, security_metrics and findings (a table's place
#: here is its ``k`` in the log's ``writing <table> (k/N)``).
RUN_TABLES: tuple[str, ...] = (
    raw_lines.TABLE_NAME,
    *SILVER_TABLES,
    quarantine.TABLE_NAME,
    run_coverage.TABLE_NAME,
    *GOLD_TABLES,
    security_metrics.TABLE_NAME,
    findings.TABLE_NAME,
)
#: How many tables one run writes (the progress bar's ``tables k/N``).
TABLES_PER_RUN = len(RUN_TABLES)


def _write_tables(
    lake: Lake,
    plan: Plan,
    dates: list[date | None] | None,
    app_id: str,
    stages: Progress | None = None,
) -> list[WriteResult]:
    """Write each planned table in one commit: replacing the date partitions ``dates``, or the
    whole table when ``dates`` is None; each table written is counted on ``stages``.

    The tables of a plan are independent (each its own rows and its own commit): they are
    written from several driver threads at once (``jobs.concurrency``), a deferred table
    planned on the thread that writes it; the results come in the plan's order. The caller
    holds a ``Lake.writes`` block (the session settings the engine's writes need) around the
    call, and around any calls made beside it from other threads.
    """

    def write(entry: PlannedTable | Deferred) -> WriteResult:
        table = entry if isinstance(entry, PlannedTable) else entry()
        if stages is None or table.name not in RUN_TABLES:
            position = ""
        else:
            position = f" ({RUN_TABLES.index(table.name) + 1}/{TABLES_PER_RUN})"
        log.info("writing %s%s", table.name, position)
        result = lake.write(
            small_input_partitions(table.df),
            table.name,
            schema=table.schema,
            partition_by=table.partition_by,
            replace_partitions=dates,
            replace_all=dates is None,
            app_id=app_id,
        )
        if stages is not None:
            stages.table_written(table.name)
        return result

    return concurrently(lake.spark, [partial(write, entry) for entry in plan])


def bronze_plan(bronze: Bronze) -> Plan:
    """Bronze (``raw_lines``): the run's date partitions, written first; silver is parsed
    from what it wrote."""
    return [
        PlannedTable(
            raw_lines.TABLE_NAME, bronze.bronze, raw_lines.RAW_LINES, raw_lines.PARTITION_COLUMNS
        ),
    ]


def silver_plan(parsed: Parsed, coverage: DataFrame) -> Plan:
    """Silver, quarantine and the run's ``run_coverage`` rows: the run's date partitions,
    written before gold, which reads them back. ``request_events`` is planned here (two other
    tables read it); the other silver tables and the quarantine are deferred (``Deferred``):
    each is planned from the parsers' outputs by its own write, ``auth_events``' linking (its
    checkpoints included) beside the other writes.

    Args:
        parsed: the parsers' outputs (``parse_bronze``); a deferred table's shared frames are
            added to its ``cached``.
        coverage: the run's ``run_coverage`` rows (``jobs.coverage.coverage_frame``).

    Returns:
        The tables of ``SILVER_TABLES``, quarantine and run_coverage, in that order.
    """
    requests = silver_table(request_events.TABLE_NAME, parsed.outputs)
    return [
        *[
            PlannedTable(name, requests, *SILVER_TABLES[name])
            if name == request_events.TABLE_NAME
            else partial(_silver_table, parsed, name, requests)
            for name in SILVER_TABLES
        ],
        partial(_quarantine_table, parsed),
        PlannedTable(
            run_coverage.TABLE_NAME,
            coverage,
            run_coverage.RUN_COVERAGE,
            run_coverage.PARTITION_COLUMNS,
        ),
    ]


def _silver_table(parsed: Parsed, name: str, requests: DataFrame) -> PlannedTable:
    rows = silver_table(name, parsed.outputs, parsed.materialise, requests)
    return PlannedTable(name, rows, *SILVER_TABLES[name])


def _quarantine_table(parsed: Parsed) -> PlannedTable:
    return PlannedTable(
        quarantine.TABLE_NAME,
        quarantine_of(parsed.outputs),
        quarantine.QUARANTINE,
        quarantine.PARTITION_COLUMNS,
    )


def stacked_plan(context: GoldContext, gold: Gold) -> Plan:
    """The gold tables that stack every builder's output, rewritten whole: security_metrics
    (the lake's silver counts, ``transforms.gold.metrics.security_metrics``, + the builders'
    metrics) and the findings of every builder.

    Args:
        context: gold's inputs (the lake's silver).
        gold: every builder's output (``build_gold``).

    Returns:
        security_metrics, planned by the write that writes it (``Deferred``: its silver
        counts are planned beside the findings' write), and findings, planned.
    """

    def metrics_table() -> PlannedTable:
        metrics = compute_security_metrics(
            context.silver[auth_events.TABLE_NAME],
            context.silver[authz_decisions.TABLE_NAME],
            context.config.run_id,
        )
        if gold.metrics is not None:
            metrics = metrics.unionByName(gold.metrics)
        return PlannedTable(
            security_metrics.TABLE_NAME,
            metrics,
            security_metrics.SECURITY_METRICS,
            security_metrics.PARTITION_COLUMNS,
        )

    return [
        metrics_table,
        PlannedTable(
            findings.TABLE_NAME, gold.findings, findings.FINDINGS, findings.PARTITION_COLUMNS
        ),
    ]


def written(
    lake: Lake, table: str, schema: StructType, partition: str, dates: list[date | None]
) -> DataFrame:
    """This run's rows of ``table`` read back from the lake (the date partitions it just
    replaced).

    Gold reads bronze and silver from the Delta tables rather than from the in-memory plan:
    its plans stay small (a scan, not the whole parse) and nothing is parsed twice.
    """
    known = [d for d in dates if d is not None]
    column = F.col(partition)
    keep = column.isin(*known) if known else F.lit(False)
    if None in dates:
        keep = keep | column.isNull()
    return lake.read(table, schema).where(keep)


def account(
    lake: Lake, line_counts: DataFrame, bronze_rows: DataFrame, dates: list[date | None]
) -> DataFrame:
    """The run's per-file accounting (``transforms.bronze.accounting.line_accounting``, one row
    per file, ordered by source_path): what became of each record, read back from what the run
    wrote, its bronze rows and the silver and quarantine rows of the date partitions it
    replaced (``written``).

    Args:
        lake: the lake the run wrote.
        line_counts: ``file_line_counts`` of the run's lines.
        bronze_rows: the run's ``raw_lines`` rows (``written``).
        dates: the date partitions the run replaced.

    Reading the tables, rather than the parsers' outputs the run kept, reads two columns of
    each (issue 15: at 10M lines the kept outputs had spilled to disk, and the accounting read
    the request log's three times over, every column).
    """
    parsed = [
        written(lake, name, schema, partition[0], dates)
        for name, (schema, partition) in SILVER_TABLES.items()
    ]
    rejected = written(
        lake, quarantine.TABLE_NAME, quarantine.QUARANTINE, quarantine.PARTITION_COLUMNS[0], dates
    )
    return line_accounting(
        line_counts,
        bronze=bronze_rows,
        parsed=parsed,
        quarantine=rejected,
        parsed_families=PARSED_FAMILIES,
    ).orderBy("source_path")


def gold_context(
    lake: Lake, sources: Sequence[SourceFile], config: RunConfig, key: bytes
) -> GoldContext:
    """The gold builders' inputs: the lake's whole silver and bronze (every run's days, this
    one's included), the nodes' properties (secret values dropped), the token secret by
    reference, and the span of the lake's evidence (``jobs.coverage.evidence_window``).

    Gold reads no earlier gold: state that crosses days (sessions, token histories, session
    keys) is replayed from silver each run, so it cannot be applied twice (docs/reruns.md).
    """
    spark = lake.spark
    node_properties = local_frame(spark, node_property_rows(sources), NODE_PROPERTIES)
    configs = [s.config.properties for s in sources if s.config is not None]
    return GoldContext(
        spark=spark,
        silver={name: lake.read(name, schema) for name, (schema, _) in SILVER_TABLES.items()},
        bronze=lake.read(raw_lines.TABLE_NAME, raw_lines.RAW_LINES),
        node_properties=node_properties,
        config=config,
        token_secret=token_secret(config.token_secret_env, config.token_secret_file, configs),
        fingerprint_key=key,
        window=evidence_window(lake),
    )


def gold_reductions(context: GoldContext, silver_bytes: int) -> GoldContext:
    """``context`` with the gold builders' whole-lake reductions (``jobs.gold.registry
    .reductions``: the request log's connections, its forwarded requests, the authorizer's
    start-up lines) computed now, under the session's current settings, side by side on the
    driver's threads, when gold alone will run with the small-input ones (``silver_bytes``
    under ``SMALL_INPUT_BYTES`` while no small-input block applies: a large input whose
    silver is small, about 1M lines for 50 MB); ``context`` itself otherwise, and each
    builder computes its own. Release ``context.reduced`` after gold's writes.

    Each reduction scans every row of a table for a few: under the small-input settings, row
    by row and interpreted (the connections 6-7 s of a 1M-line run's gold, 1 s compiled;
    issue 15, thirty-first and thirty-second parts).
    """
    if silver_bytes >= SMALL_INPUT_BYTES or small_input_active(context.spark):
        return context
    named = list(reductions().items())
    frames = concurrently(context.spark, [partial(_reused, r, context) for _, r in named])
    return replace(
        context, reduced={name: frame for (name, _), frame in zip(named, frames, strict=True)}
    )


def _reused(reduction: Reduction, context: GoldContext) -> DataFrame:
    return reused(reduction(context))


def audit_summary(
    lake: Lake, dates: list[date | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The run summary's audit part, read back from what the run wrote (small aggregates
    collected on the driver): the KIP-368 readiness per candidate over the run's days, and
    the findings per rule and severity."""
    ready = written(lake, reauth_readiness.TABLE_NAME, reauth_readiness.REAUTH_READINESS,
                    reauth_readiness.PARTITION_COLUMNS[0], dates)  # fmt: skip
    per_candidate = (
        ready.groupBy("candidate_ms")
        .agg(
            F.sum("sessions").alias("sessions"),
            F.sum("sessions_killed").alias("sessions_killed"),
            F.sum("sessions_at_risk_unknown_client").alias("sessions_at_risk_unknown_client"),
            F.array_sort(F.array_distinct(F.flatten(F.collect_list("principals_killed")))).alias(
                "principals_killed"
            ),
            F.min("first_kill_ts").alias("first_kill_ts"),
        )
        .orderBy("candidate_ms")
    )
    found = written(lake, findings.TABLE_NAME, findings.FINDINGS,
                    findings.PARTITION_COLUMNS[0], dates)  # fmt: skip
    order = F.array_position(F.array(*[F.lit(s) for s in SEVERITIES]), F.col("severity"))
    per_rule = (
        found.groupBy("rule_id", "severity")
        .agg(F.count(F.lit(1)).alias("findings"))
        .orderBy(order, "rule_id")
    )
    return (
        [row.asDict() for row in per_candidate.collect()],
        [row.asDict() for row in per_rule.collect()],
    )


def run(
    spark: SparkSession,
    config: RunConfig,
    java: str | None = None,
    sources: Sequence[SourceFile] | None = None,
    progress: bool | None = None,
) -> RunSummary:
    """Run the pipeline for ``config``'s inputs and window and write every table.

    Below ``jobs.small_input.SMALL_INPUT_BYTES`` of input (the files plus the lake's silver)
    the run turns off code generation and adaptive execution, and restores them afterwards;
    above it, its gold stage alone does so when the lake's silver tables are below it.

    Args:
        spark: the session (built by the CLI or spark-submit).
        config: the validated run configuration.
        java: a description of the JVM, for the summary.
        sources: the files of ``config.sources`` when the caller already discovered them.
        progress: show a live bar of Spark tasks per stage (``jobs.progress``); None: only
            when stderr is a terminal. Stage start / end lines are logged either way.

    Returns:
        The run summary: engine, tables written, per-file accounting, duration.

    Raises:
        InputError / ConfigError: bad inputs or configuration (before anything is written).
        EngineError: the Delta engine cannot be used or a commit failed.
    """
    sources = sources if sources is not None else discover_sources(config.sources)
    engine = choose_engine(spark, config.engine)
    lake = Lake(spark, config.lake, engine)
    size = input_bytes(sources) + lake.size_bytes(list(SILVER_TABLES))
    with (
        Progress(spark, progress, tables_total=TABLES_PER_RUN) as stages,
        small_input_settings(spark, size),
    ):
        return _run(config, java, sources, lake, stages)


def input_bytes(sources: Sequence[SourceFile]) -> int:
    """On-disk bytes of the source files (a file gone since listing counts 0)."""
    total = 0
    for source in sources:
        try:
            total += source.path.stat().st_size
        except OSError:
            continue
    return total


def _line_counts(bronze: Bronze) -> DataFrame:
    """The accounting's counts of every line (``file_line_counts``: one row per file), computed
    now, while the lines are in memory: by the end of a 10M-line run the persisted layers have
    spilled to disk. Release it when the accounting is done."""
    return reused(file_line_counts(bronze.narrow, bronze.folded))


def _write_bronze(
    lake: Lake, bronze: Bronze, config: RunConfig, app_id: str, stages: Progress
) -> tuple[list[date | None], list[WriteResult]]:
    """The date partitions the run replaces (``replaced_dates``) and bronze written into them
    (``raw_lines``), inside a ``Lake.writes`` block the caller holds."""
    dates = replaced_dates(bronze.dates, config)
    return dates, _write_tables(lake, bronze_plan(bronze), dates, app_id, stages)


def _gold_and_accounting(
    lake: Lake,
    gold_inputs: Callable[[], GoldContext],
    tally: Callable[[], list[dict[str, Any]]],
    app_id: str,
    stages: Progress,
) -> tuple[Gold, list[WriteResult], list[dict[str, Any]]]:
    """Gold planned and written (``build_gold``, ``stacked_plan``) from ``gold_inputs()``
    (``gold_context``), and the accounting's rows (``tally``); gold's whole-lake reductions
    released.

    Gold reads the lake's silver tables, not the logs: a large input's silver can be small
    (50 MB for 1M lines), and gold's many small stages then run as a small input's do
    (``small_input_settings``). The accounting reads the lake's bronze and silver, not gold:
    it runs beside gold (``jobs.concurrency.beside``) unless gold alone runs with those
    settings, which are the session's and would apply to it too. Each builder's tables are
    written on its own thread as soon as it is built, one after the other, beside the
    builders still planning; then the two tables that stack every builder's output.

    Returns:
        The gold outputs, the writes' results (the builders' tables in ``GOLD_TABLES`` order,
        then security_metrics and findings) and the accounting's rows.

    Raises:
        RuntimeError: a builder planned a table ``GOLD_TABLES`` does not list (before it is
            written). Whatever a builder, a write or the accounting raises.
    """
    spark = lake.spark
    silver_bytes = lake.size_bytes(list(SILVER_TABLES))
    together = small_input_active(spark) or silver_bytes >= SMALL_INPUT_BYTES
    stages.stage("gold and accounting: replay rules, write, count" if together
                 else "gold: replay rules, write")  # fmt: skip
    context = gold_reductions(gold_inputs(), silver_bytes)
    written: dict[str, WriteResult] = {}

    def write(output: GoldOutput) -> None:
        unlisted = [t.name for t in output.tables if t.name not in GOLD_TABLES]
        if unlisted:
            raise RuntimeError(f"bug: a gold builder planned {unlisted}, not in GOLD_TABLES")
        for table in output.tables:
            (written[table.name],) = _write_tables(lake, [table], None, app_id, stages)

    def gold_written() -> Gold:
        with small_input_settings(spark, silver_bytes, what="silver for gold"):
            gold = build_gold(context, built=write)
            written.update(
                (r.table, r)
                for r in _write_tables(lake, stacked_plan(context, gold), None, app_id, stages)
            )
        return gold

    # The writes' session settings held around both parts (a part must not change them).
    with lake.writes():
        if together:
            gold, accounted = beside(spark, gold_written, tally)
            stages.stage("summary")
        else:
            gold = gold_written()
            stages.stage("accounting and summary")
            accounted = tally()
    release(context.reduced.values())
    order = [*gold.names, security_metrics.TABLE_NAME, findings.TABLE_NAME]
    return gold, [written[name] for name in order], accounted


def _accounted(
    lake: Lake, line_counts: DataFrame, bronze_rows: DataFrame, dates: list[date | None]
) -> list[dict[str, Any]]:
    """The rows of ``account``, collected on the driver (one per file)."""
    return [row.asDict() for row in account(lake, line_counts, bronze_rows, dates).collect()]


def _run(
    config: RunConfig,
    java: str | None,
    sources: Sequence[SourceFile],
    lake: Lake,
    stages: Progress,
) -> RunSummary:
    started = time.monotonic()
    spark = lake.spark
    log.info("run %s: %d log file(s)", config.run_id, len(sources))
    damaged = damaged_files(sources)
    for path, reason in damaged.items():
        log.warning("%s: %s", terminal(path), reason)
    key = fingerprint_key(config.lake, config.fingerprint_key_env, config.fingerprint_key_file)
    stages.stage("bronze and silver: parse, write")
    bronze = build_bronze(spark, sources, config, key)
    app_id = attempt_app_id(config.run_id)
    with lake.writes():  # the writes' session settings, held around both parts
        line_counts, (dates, results) = beside(
            spark,
            partial(_line_counts, bronze),
            partial(_write_bronze, lake, bronze, config, app_id, stages),
        )
    # Nothing reads the lines' layers from here on: their memory goes to silver and gold.
    release(bronze.cached)
    # Silver parses the bronze rows just written, read back from the lake: every parser's plan
    # then starts at a table scan instead of the whole bronze plan (which Spark would analyse
    # again for each parser, each union and each write), and silver is exactly what bronze
    # holds.
    bronze_rows = written(lake, raw_lines.TABLE_NAME, raw_lines.RAW_LINES,
                          raw_lines.PARTITION_COLUMNS[0], dates)  # fmt: skip
    parsed_bronze = parse_bronze(bronze_rows, present_families(bronze_rows))
    coverage = coverage_frame(spark, dates, config.window_dates() is not None, config.run_id)
    with lake.writes():
        results += _write_tables(lake, silver_plan(parsed_bronze, coverage), dates, app_id, stages)
    # Gold and the accounting read silver back from the lake.
    release(parsed_bronze.cached)
    gold_inputs = partial(gold_context, lake, sources, config, key)
    tally = partial(_accounted, lake, line_counts, bronze_rows, dates)
    gold, gold_results, accounted = _gold_and_accounting(lake, gold_inputs, tally, app_id, stages)
    results += gold_results
    rows = with_file_issues(accounted, damaged)
    readiness, found = audit_summary(lake, dates)
    release([line_counts, *gold.cached])
    return RunSummary(
        run_id=config.run_id,
        engine=str(lake.engine),
        java=java,
        lake=config.lake,
        window=(config.start, config.end),
        tables=[TableWrite.from_result(r) for r in results],
        accounting=rows,
        duration_s=time.monotonic() - started,
        readiness=readiness,
        findings=found,
        damaged_files=damaged,
        warnings=[
            *[f"{path}: {reason}" for path, reason in damaged.items()],
            *unrecognized_layout_warnings(rows),
        ],
    )


def with_file_issues(
    rows: list[dict[str, Any]], damaged: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Accounting rows with ``file_issue`` (the reason a file could not be read whole, else
    None), and a row of zeros for each damaged file of which no line could be read, so that
    every input file appears in the accounting."""
    seen = {row["source_path"] for row in rows}
    missing = [
        {"source_path": path, **dict.fromkeys(BUCKETS, 0), "balanced": True}
        for path in sorted(set(damaged) - seen)
    ]
    return [{**row, "file_issue": damaged.get(row["source_path"])} for row in rows + missing]
