"""Spark settings for small inputs: a run over a few MB should not pay for code generation.

On a few thousand lines a run's cost is fixed cost, not data: Janino compiling the generated
Java of every whole-stage and every expression, and adaptive execution re-planning each stage
as a job of its own. Spark evaluates the same expressions interpreted (the results are the
same: Spark tests both paths against each other), so below ``SMALL_INPUT_BYTES`` the pipeline
turns both off for the duration of a command (``run``, ``parse``, ``export-ocsf``) and puts
the session's own values back afterwards (a notebook's session is left as it was). Above it,
code generation pays for itself.

Measured on this machine (2 cores, ``tests/integration/test_fuzz.py``'s one pipeline run over ~2,600
lines, back to back): 105 s with code generation and adaptive execution, 73-79 s without.

The tasks are fixed cost too: each deserialises its stage's plan. Small inputs also run with
one shuffle partition (``SMALL_INPUT_SHUFFLE_PARTITIONS``), and each table write and each
reused frame is coalesced to one partition (``jobs.reuse.SMALL_INPUT_PARTITIONS``): a run over
``samples/`` ran ~900 tasks in ~190 stages, 4 tasks per shuffle and up to 88 for a union, to
write 138 lines. One task per stage does not leave the other cores to it alone: the
independent parts of a run (parsers, gold builders, table writes) run as separate Spark jobs
side by side (``jobs.concurrency``), each on a core of its own when one is free.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from pyspark.sql import SparkSession

from jobs.lake.settings import runtime_settings
from jobs.reuse import SMALL_INPUT_PARTITIONS

log = logging.getLogger(__name__)

SMALL_INPUT_BYTES = 64 * 1024 * 1024
"""A command whose input is smaller runs without code generation: for ``run`` the log files
plus the lake's silver tables, for ``parse`` the log files, for ``export-ocsf`` the two tables
it reads (on-disk bytes, ``.gz`` compressed)."""

SMALL_INPUT_SHUFFLE_PARTITIONS = 1
"""Shuffle partitions (and partitions of each write and reused frame) of a small input. One
task per stage instead of one per core: on 2 cores, ``samples/`` ran in 0.96 of the wall time
and 0.91 of the JVM CPU with one than with two, a 300k-line run (its gold stage alone small)
in 0.98 of both, a 1M-line one in 1.00 (2026-11-29, issue 15, twenty-second part)."""

SMALL_INPUT_CONF: Mapping[str, str] = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}


def small_input_active(spark: SparkSession) -> bool:
    """Whether a ``small_input_settings`` block applies its settings to ``spark`` now."""
    return spark.conf.get(SMALL_INPUT_PARTITIONS, None) is not None


@contextmanager
def small_input_settings(
    spark: SparkSession, size_bytes: int, threshold: int = SMALL_INPUT_BYTES, what: str = "input"
) -> Iterator[bool]:
    """Within the block, when ``size_bytes < threshold``: ``SMALL_INPUT_CONF``;
    ``SMALL_INPUT_SHUFFLE_PARTITIONS`` shuffle partitions (``spark.sql.shuffle.partitions``,
    whatever the session's own setting); and ``SMALL_INPUT_PARTITIONS`` set to that same
    number, the partitions of each table write and reused frame.

    Blocks nest: inside a block whose settings apply, an inner block changes nothing and
    yields True. A run applies them to the whole run for a small input, and otherwise to its
    gold stage alone when the lake's silver tables, which gold reads, are small.

    Args:
        spark: the session; its runtime SQL settings are changed and restored.
        size_bytes: the bytes the block will read (uncompressed size unknown: on-disk size).
        threshold: the size below which the settings apply; 0 never applies them.
        what: what ``size_bytes`` measures, for the log line.

    Yields:
        Whether the small-input settings apply.
    """
    if small_input_active(spark):  # an enclosing block's
        yield True
        return
    small = size_bytes < threshold
    if not small:
        yield False
        return
    shuffle = SMALL_INPUT_SHUFFLE_PARTITIONS
    settings = {
        **SMALL_INPUT_CONF,
        "spark.sql.shuffle.partitions": str(shuffle),
        SMALL_INPUT_PARTITIONS: str(shuffle),
    }
    log.info(
        "small %s (%d bytes): code generation and adaptive execution off, %d partition(s) "
        "per shuffle, write and reused frame", what, size_bytes, shuffle,
    )  # fmt: skip
    with runtime_settings(spark, settings):
        yield True
