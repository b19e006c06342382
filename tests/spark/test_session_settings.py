"""The session settings a run changes: the small-input settings apply only below the threshold
and are put back afterwards; ``build_session`` leaves an active session's settings alone."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.reuse import SMALL_INPUT_PARTITIONS, small_input_partitions
from jobs.session import DEFAULT_CONF, build_session, own_case_locale
from jobs.small_input import (
    SMALL_INPUT_BYTES,
    SMALL_INPUT_CONF,
    SMALL_INPUT_SHUFFLE_PARTITIONS,
    small_input_settings,
)
from transforms.bronze.redaction import mentions_secret_key

KEYS = tuple(SMALL_INPUT_CONF)


@pytest.fixture
def own_values(spark: SparkSession) -> Iterator[dict[str, str | None]]:
    """The test session with values other than the small-input ones (one key unset), put back
    as the suite had them afterwards."""
    suite = {key: spark.conf.get(key, None) for key in KEYS}
    own: dict[str, str | None] = {KEYS[0]: "true", KEYS[1]: "FALLBACK", KEYS[2]: None}
    for key, value in own.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
    yield {key: spark.conf.get(key, None) for key in KEYS}
    for key, value in suite.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_small_input_sets_then_restores(
    spark: SparkSession, own_values: dict[str, str | None]
) -> None:
    with small_input_settings(spark, SMALL_INPUT_BYTES - 1) as small:
        assert small is True
        assert {key: spark.conf.get(key) for key in KEYS} == dict(SMALL_INPUT_CONF)
    assert {key: spark.conf.get(key, None) for key in KEYS} == own_values


def test_small_input_runs_one_partition_per_shuffle_and_write(spark: SparkSession) -> None:
    """One shuffle partition, whatever the session's own setting, and each write or reused
    frame coalesced to one partition, its rows unchanged; all put back afterwards."""
    shuffle = "spark.sql.shuffle.partitions"
    cores = spark.sparkContext.defaultParallelism
    wide = spark.range(0, 40, 1, numPartitions=8)
    before = str(spark.conf.get(shuffle))
    assert SMALL_INPUT_SHUFFLE_PARTITIONS == 1
    try:
        for own in (str(cores + 3), str(cores), "1"):
            spark.conf.set(shuffle, own)
            with small_input_settings(spark, 0, threshold=1):
                assert (spark.conf.get(shuffle), spark.conf.get(SMALL_INPUT_PARTITIONS)) == (
                    "1", "1")  # fmt: skip
                narrowed = small_input_partitions(wide)
                assert narrowed.rdd.getNumPartitions() == 1
                assert sorted(narrowed.collect()) == sorted(wide.collect())
            assert (spark.conf.get(shuffle), spark.conf.get(SMALL_INPUT_PARTITIONS, None)) == (
                own, None)  # fmt: skip
            assert small_input_partitions(wide) is wide
    finally:
        spark.conf.set(shuffle, before)


def test_large_input_changes_nothing(
    spark: SparkSession, own_values: dict[str, str | None]
) -> None:
    with small_input_settings(spark, SMALL_INPUT_BYTES) as small:
        assert small is False
        assert {key: spark.conf.get(key, None) for key in KEYS} == own_values
    assert {key: spark.conf.get(key, None) for key in KEYS} == own_values


def test_restored_when_the_block_fails(
    spark: SparkSession, own_values: dict[str, str | None]
) -> None:
    with pytest.raises(RuntimeError), small_input_settings(spark, 0):
        raise RuntimeError("a failed stage")
    assert {key: spark.conf.get(key, None) for key in KEYS} == own_values


def test_build_session_keeps_an_active_sessions_settings(spark: SparkSession) -> None:
    """The suite's session has one shuffle partition; the CLI's default is another."""
    key = "spark.sql.shuffle.partitions"
    assert DEFAULT_CONF[key] != spark.conf.get(key)
    before = spark.conf.get(key)
    same = build_session("another-command", "local[2]", {"spark.sql.caseSensitive": "true"})
    try:
        assert same is spark
        assert spark.conf.get(key) == before
        assert spark.conf.get("spark.sql.caseSensitive") == "true"  # an explicit setting applies
        assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


def test_an_inner_block_inside_an_applied_one_changes_nothing(
    spark: SparkSession, own_values: dict[str, str | None]
) -> None:
    """A run's gold block inside a small run's block: still applied, and both restore."""
    with small_input_settings(spark, 0) as outer:
        applied = {key: spark.conf.get(key, None) for key in (*KEYS, SMALL_INPUT_PARTITIONS)}
        with small_input_settings(spark, SMALL_INPUT_BYTES * 10, what="silver") as inner:
            assert (outer, inner) == (True, True)
            assert {k: spark.conf.get(k, None) for k in applied} == applied
        assert {k: spark.conf.get(k, None) for k in applied} == applied
    assert {key: spark.conf.get(key, None) for key in KEYS} == own_values
    assert spark.conf.get(SMALL_INPUT_PARTITIONS, None) is None
    with small_input_settings(spark, SMALL_INPUT_BYTES) as large:  # a large run's input
        with small_input_settings(spark, 0, what="silver") as gold:
            assert (large, gold) == (False, True)
            assert {key: spark.conf.get(key) for key in KEYS} == dict(SMALL_INPUT_CONF)
        assert {key: spark.conf.get(key, None) for key in KEYS} == own_values


ICU_CASE_MAPPINGS = "spark.sql.icu.caseMappings.enabled"

#: Texts whose case mappings are not plain ASCII ones: the German sharp s, Turkish dotted and
#: dotless i, Greek final sigma, the Kelvin sign, a title-case digraph, secret key names and
#: Kafka values in mixed case; null and empty.
CASE_MAPPED = [
    "pAsSwOrD=hunter2", '{"HMAC":"Zm9v"}', "SaslAuthBytes", "DENIED", "Sessioned",
    "Straße", "İSTANBUL ıi", "ΟΔΥΣΣΕΥΣ", "\u212aEY", "ǅungla", "TOKEN \u212a", None, "",
]  # fmt: skip


#: A letter of Unicode 14 (GLAGOLITIC CAPITAL LETTER CAUDATE CHI), newer than Java 17's Unicode
#: 13: ICU lowercases it, the JVM leaves it. It shows each setting really ran.
NEWER_THAN_THE_JDK = "\u2c2f"


def _case_mapped(spark: SparkSession, icu: str) -> list[tuple[Any, ...]]:
    """``lower``, ``upper`` and the secret pre-test of each text, planned and run with ICU's
    case mappings ``icu`` (a frame planned under the other setting keeps its own: each call
    builds its frame)."""
    spark.conf.set(ICU_CASE_MAPPINGS, icu)
    try:
        texts = spark.createDataFrame(
            [(t,) for t in [*CASE_MAPPED, NEWER_THAN_THE_JDK]], "t string"
        )
        rows = texts.select("t", F.lower("t"), F.upper("t"), mentions_secret_key(F.col("t")))
        return sorted((tuple(row) for row in rows.collect()), key=str)
    finally:
        spark.conf.set(ICU_CASE_MAPPINGS, DEFAULT_CONF[ICU_CASE_MAPPINGS])


def test_case_mappings_are_the_jvms_in_a_pinned_locale_and_map_as_icus(
    spark: SparkSession,
) -> None:
    """The suite's session case-maps as the CLI's (``jobs.session.DEFAULT_CONF``: ICU's case
    mappings off, the JVM's locale pinned); ``lower``, ``upper`` and the secret pre-test then
    give on each text here what ICU's mappings gave, so the tables do not depend on it. Only a
    letter newer than the JDK's Unicode version maps differently."""
    assert spark.conf.get(ICU_CASE_MAPPINGS) == DEFAULT_CONF[ICU_CASE_MAPPINGS] == "false"
    jvm = spark._jvm
    assert jvm is not None
    assert str(jvm.java.util.Locale.getDefault().toString()) == "en_US"
    jvms, icus = _case_mapped(spark, "false"), _case_mapped(spark, "true")
    newer = NEWER_THAN_THE_JDK
    assert [r for r in jvms if r[0] == newer] == [(newer, newer, newer, False)]
    assert [r for r in icus if r[0] == newer] == [(newer, "\u2c5f", newer, False)]
    assert [r for r in jvms if r[0] != newer] == [r for r in icus if r[0] != newer]
    assert len(jvms) == len(CASE_MAPPED) + 1
    assert {row[0] for row in jvms if row[3]} == {
        "pAsSwOrD=hunter2",
        '{"HMAC":"Zm9v"}',
        "SaslAuthBytes",
    }


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("tr-TR", "tr-TR"), ("az-Latn-AZ", "az-Latn-AZ"), ("lt-LT", "lt-LT"), ("en", None),
     ("en-US", None), ("de-DE", None), ("und", None)],
)  # fmt: skip
def test_a_driver_jvm_whose_locale_case_maps_its_own_way_is_named(
    spark: SparkSession, tag: str, expected: str | None
) -> None:
    """``own_case_locale`` (the warning ``build_session`` logs under spark-submit, whose driver
    JVM the job cannot give ``JVM_LOCALE_OPTIONS``): real JVM locales, given as the default;
    the suite's own JVM, pinned, is named by none."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert own_case_locale(jvm) is None
    locale = jvm.java.util.Locale.forLanguageTag(tag)
    faked = SimpleNamespace(
        java=SimpleNamespace(
            util=SimpleNamespace(Locale=SimpleNamespace(getDefault=lambda: locale))
        )
    )
    assert own_case_locale(faked) == expected
