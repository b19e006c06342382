"""The gold builders' frames computed once (``jobs.reuse.reused``): every checkpoint an output
reads is one its builder hands back to be released, and the frames several branches read are
among them (KIP-368's handshakes, KIP-507's internal attempts)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from jobs.config import RunConfig, SourceSpec
from jobs.fingerprint_keys import fingerprint_key
from jobs.gold import kip368_reauth, kip507_connect_signing
from jobs.gold.context import GoldOutput
from jobs.gold.registry import builders
from jobs.inputs import discover_sources
from jobs.lake.tables import Lake, choose_engine
from jobs.pipeline import gold_context
from jobs.reuse import release
from schemas import auth_events, connect_requests
from tests.support.plans import checkpoint_reads
from transforms.auth_links import handshakes
from transforms.gold.kip507_connect_signing import internal_attempts


def _checkpoints(df: DataFrame) -> dict[int, Any]:
    """The checkpointed scans under ``df``'s analysed plan, by RDD id."""
    return dict(checkpoint_reads(df))


@pytest.fixture(scope="module")
def outputs(
    spark: SparkSession, samples_lake: Path, samples_dir: Path
) -> Iterator[dict[str, GoldOutput]]:
    """Each builder's output on the samples lake, planned as ``jobs.pipeline`` plans gold (no
    reductions computed beforehand: each builder computes and hands back its own)."""
    config = RunConfig(sources=(SourceSpec(str(samples_dir)),), lake=str(samples_lake))
    lake = Lake(spark, str(samples_lake), choose_engine(spark, "embedded"))
    context = gold_context(
        lake, discover_sources(config.sources), config, fingerprint_key(str(samples_lake))
    )
    built = {build.__module__.rsplit(".", 1)[-1]: build(context) for build in builders()}
    yield built
    for output in built.values():
        release(output.cached)


def test_every_checkpoint_read_is_handed_back_and_released(
    outputs: dict[str, GoldOutput],
) -> None:
    for name, output in outputs.items():
        frames = [t.df for t in output.tables] + [*output.findings, *output.metrics]
        read = {rdd_id: rdd for df in frames for rdd_id, rdd in _checkpoints(df).items()}
        handed = {rdd_id for df in output.cached for rdd_id in _checkpoints(df)}
        assert set(read) <= handed, f"{name}: a checkpoint its outputs read is never released"
    for output in outputs.values():
        release(output.cached)
        for df in output.cached:
            for rdd in _checkpoints(df).values():
                assert not rdd.getStorageLevel().isValid()


def test_frames_several_branches_read_are_computed_once(
    spark: SparkSession, outputs: dict[str, GoldOutput]
) -> None:
    """KIP-368's handshakes and KIP-507's internal attempts are each one checkpoint that the
    builder hands back, and its outputs read that checkpoint (KIP-368's findings, KIP-507's
    table and findings), not a plan of their own."""
    shakes = handshakes(spark.createDataFrame([], auth_events.AUTH_EVENTS), 1000).columns
    attempts = internal_attempts(
        spark.createDataFrame([], connect_requests.CONNECT_REQUESTS),
        grace_ms=1,
        retry_gap_ms=1,
        worker_agent="w",
    ).columns
    for module, columns in ((kip368_reauth, shakes), (kip507_connect_signing, attempts)):
        output = outputs[module.__name__.rsplit(".", 1)[-1]]
        kept = [df for df in output.cached if df.columns == columns]
        assert len(kept) == 1, f"{module.__name__}: {[df.columns for df in output.cached]}"
        (rdd_id,) = _checkpoints(kept[0])
        readers = [
            df for df in [t.df for t in output.tables] + list(output.findings)
            if rdd_id in _checkpoints(df)
        ]  # fmt: skip
        assert readers, f"{module.__name__}: no output reads the checkpoint"
