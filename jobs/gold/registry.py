"""Gold: the audit replays (KIP-368, KIP-48, KIP-590, KIP-801, KIP-507) on top of silver.

Each area has a builder ``build(context) -> GoldOutput`` (``jobs.gold.kip*``): it plans its gold
tables, its findings and any extra ``security_metrics`` rows from the lake's silver and the
nodes' configuration, and from nothing else: gold is a pure function of silver, rewritten
whole by every run (docs/reruns.md). This module lists the builders and stacks their outputs;
``jobs.pipeline`` writes them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial

from pyspark.sql import DataFrame

from jobs.concurrency import concurrently
from jobs.gold import (
    kip48_tokens,
    kip368_reauth,
    kip507_connect_signing,
    kip590_forwarding,
    kip801_authorizer,
)
from jobs.gold.context import Builder, Gold, GoldContext, GoldOutput, PlannedTable, Reduction
from schemas import (
    authorizer_readiness,
    connect_internal_requests,
    connect_session_keys,
    forwarded_requests,
    reauth_readiness,
    reauth_sessions,
    token_lifecycle,
)
from schemas.findings import FINDINGS
from schemas.security_metrics import SECURITY_METRICS
from transforms.frames import local_frame, union_by_name

#: The builders' own tables, in the order ``builders()`` writes them (``jobs.pipeline`` adds
#: security_metrics and findings). ``build_gold`` checks the builders plan exactly these.
GOLD_TABLES: tuple[str, ...] = (
    reauth_sessions.TABLE_NAME,
    reauth_readiness.TABLE_NAME,
    token_lifecycle.TABLE_NAME,
    forwarded_requests.TABLE_NAME,
    authorizer_readiness.TABLE_NAME,
    connect_internal_requests.TABLE_NAME,
    connect_session_keys.TABLE_NAME,
)


def builders() -> Sequence[Builder]:
    """The gold builders, in the order of their tables in ``GOLD_TABLES`` (the run writes each
    builder's tables as soon as it is built, so not necessarily in this order)."""
    return (
        kip368_reauth.build,
        kip48_tokens.build,
        kip590_forwarding.build,
        kip801_authorizer.build,
        kip507_connect_signing.build,
    )


def reductions() -> Mapping[str, Reduction]:
    """Every builder's whole-lake reductions (``jobs.gold.context.Reduction``), by name: the
    ``REDUCTIONS`` of each builder's module, where it has one; a name belongs to one builder."""
    lists = [getattr(sys.modules[build.__module__], "REDUCTIONS", {}) for build in builders()]
    found = {name: r for listed in lists for name, r in listed.items()}
    if len(found) != sum(len(listed) for listed in lists):
        raise RuntimeError("bug: two gold builders name a reduction alike")
    return found


def build_gold(
    context: GoldContext,
    selected: Sequence[Builder] | None = None,
    built: Callable[[GoldOutput], object] | None = None,
) -> Gold:
    """Plan every gold builder (nothing runs until an action, except the frames a builder
    computes once, ``jobs.reuse.reused``). The builders are independent: they run side by side
    on several driver threads (``jobs.concurrency``), their outputs taken in their order.

    Args:
        context: the builders' inputs.
        selected: the builders to run (all of ``builders()`` when None).
        built: called with each builder's output on the builder's thread as soon as the
            builder returns (the pipeline writes the builder's tables there, beside the
            builders still planning).

    Returns:
        Their tables; their findings stacked into one frame of ``FINDINGS`` (empty when no
        builder has findings); their extra metrics stacked (None when there are none).

    Raises:
        Whatever a builder or ``built`` raises (the first in the builders' order).
        RuntimeError: every builder ran and their tables are not ``GOLD_TABLES`` (a bug).
    """
    tables: list[PlannedTable] = []
    findings: list[DataFrame] = []
    metrics: list[DataFrame] = []
    cached: list[DataFrame] = []
    chosen = builders() if selected is None else selected
    # Each builder planned (and its reused frames computed) on a driver thread of its own.
    outputs = concurrently(
        context.spark, [partial(_built, build, context, built) for build in chosen]
    )
    for output in outputs:
        tables.extend(output.tables)
        findings.extend(output.findings)
        metrics.extend(output.metrics)
        cached.extend(output.cached)
    # Each builder's findings and metrics were stacked on its thread (``_stacked``).
    stacked = union_by_name([local_frame(context.spark, [], FINDINGS), *findings])
    extra = union_by_name(metrics) if metrics else None
    names = [t.name for t in tables]
    if selected is None and tuple(names) != GOLD_TABLES:
        raise RuntimeError(f"bug: gold builders planned {names}, GOLD_TABLES lists {GOLD_TABLES}")
    return Gold(tables=tables, findings=stacked, metrics=extra, names=names, cached=cached)


def _built(
    build: Builder, context: GoldContext, built: Callable[[GoldOutput], object] | None
) -> GoldOutput:
    output = build(context)
    if built is not None:
        built(output)
    return _stacked(output)


def _stacked(output: GoldOutput) -> GoldOutput:
    """``output`` with its findings stacked into one frame of ``FINDINGS``' columns, and its
    extra metrics into one of ``SECURITY_METRICS``' (none stays none). Done on the builder's
    thread, beside the builders still planning: stacking the 29 frames of all builders after
    the last one took 0.3-0.9 s of a ``samples/`` run on one thread (issue 15)."""
    findings = [frame.select(*FINDINGS.fieldNames()) for frame in output.findings]
    metrics = [frame.select(*SECURITY_METRICS.fieldNames()) for frame in output.metrics]
    return replace(
        output,
        findings=(union_by_name(findings),) if findings else (),
        metrics=(union_by_name(metrics),) if metrics else (),
    )
