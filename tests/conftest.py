"""One session-scoped local SparkSession per pytest process (``scripts/test.sh`` runs two
workers; UTC, UI off, one shuffle partition, the pipeline's small-input settings: the suite's
inputs are all small; the CLI's JIT options for a medium input, as the session is long-lived), and
the longest modules collected first."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jobs import jvm_functions, jvm_parsers, jvm_startup
from jobs.jvm_startup import QUICK_START_BYTES
from jobs.session import DEFAULT_CONF, JVM_LOCALE_OPTIONS
from jobs.small_input import SMALL_INPUT_CONF

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"


_ARROW_BATCH_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
_ICU_CASE_MAPPINGS = "spark.sql.icu.caseMappings.enabled"


def jit_options() -> str:
    """The JIT options the CLI gives a JVM for a medium input (``jobs.jvm_startup``: less
    inlining by C2, the Janino compiler's and ASM's classes left to C1), without a class archive
    and without the rarer code-cache sweeps (``FEWER_SWEEPS``, given only for a known Java
    version: none is passed). One session runs some twenty pipelines and hundreds of small
    queries: long enough for C2's code to pay off (C1 only was slower), but with HotSpot's
    defaults C2 compiled for longer than the planning and the tasks ran; and its code keeps
    being replaced, so it needs the sweeps (with them rare, the profiled code heap was 97% full
    six minutes into the suite). Issue 15, thirtieth part."""
    return jvm_startup.plan("", QUICK_START_BYTES, "", java_major=None).without_archive().options


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Commands the tests start leave the user's cache alone (tests/integration/
    # test_jvm_startup.py gives its own folder).
    os.environ.setdefault(jvm_startup.ARCHIVE_ENV, "off")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-security-audit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.maxPlanStringLength", "200000")
        .config(
            "spark.driver.extraJavaOptions",
            f"-XX:+UseSerialGC {JVM_LOCALE_OPTIONS} {jit_options()}",
        )
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        # As the CLI: pandas UDF batches not measured after every row (jobs.session).
        .config(_ARROW_BATCH_BYTES, DEFAULT_CONF[_ARROW_BATCH_BYTES])
        # As the CLI: the JVM's case mappings, in its pinned locale (jobs.session).
        .config(_ICU_CASE_MAPPINGS, DEFAULT_CONF[_ICU_CASE_MAPPINGS])
        # One session runs ~16 pipelines: keep the status store (UI off) from filling the heap.
        .config("spark.sql.ui.retainedExecutions", "10")
        .config("spark.ui.retainedJobs", "100")
        .config("spark.ui.retainedStages", "100")
        .config("spark.ui.retainedTasks", "1000")
    )
    for key, value in SMALL_INPUT_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    assert jvm_functions.install()  # as build_session does for the CLI and spark-submit
    # As build_session does; the jar in a folder of the test session's, not the user's cache.
    # Without a JDK it is not: the parse then uses its expressions alone (the native test skips).
    jvm_parsers.install(session, tmp_path_factory.mktemp("jvm-parsers"))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    return SAMPLES_DIR


@pytest.fixture(scope="session")
def samples_lake(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake built once per test session by the pipeline from the bundled samples (embedded
    Delta engine). Read-only for tests: copy it before writing into it."""
    from jobs.config import RunConfig, SourceSpec  # noqa: PLC0415
    from jobs.pipeline import run  # noqa: PLC0415

    lake = tmp_path_factory.mktemp("samples-lake")
    summary = run(
        spark, RunConfig(sources=(SourceSpec(str(SAMPLES_DIR)),), lake=str(lake), engine="embedded")
    )
    assert summary.balanced, summary.render()
    return lake


#: The longest modules (several pipeline runs, JVMs started, spark-submit, a standalone cluster,
#: the notebooks' group), longest first, collected first: ``scripts/test.sh`` gives whole modules
#: (groups) to two workers in collection order, and a long module started last would run alone at
#: the end. Measured on 2026-12-06 in a whole suite, seconds with the other worker busy:
#: test_reruns 347, test_jvm_startup 200, the samples lake's group about 170, test_standalone_cluster
#: 167, test_pipeline 130, test_spark_submit 121, test_cli 102, test_ground_truth 64.
LONGEST_FIRST = (
    "test_reruns.py",
    "test_jvm_startup.py",
    "test_notebooks.py",
    "test_standalone_cluster.py",
    "test_pipeline.py",
    "test_spark_submit.py",
    "test_cli.py",
    "test_ground_truth.py",
)


#: The modules whose tests read ``samples_lake``: one unit of work for pytest-xdist, run by one
#: worker, so the lake is built once per test session, not once per worker (a pipeline run is
#: minutes).
SAMPLES_LAKE_MODULES = (
    "test_report.py",
    "test_ocsf.py",
    "test_notebooks.py",
    "test_gold_reuse.py",
)
SAMPLES_LAKE_GROUP = "samples_lake"


@pytest.hookimpl(optionalhook=True)  # pytest -p no:xdist knows no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``scripts/test.sh``), except that the ``SAMPLES_LAKE_MODULES`` are one
    unit of work: one worker runs them all, and builds ``samples_lake`` once; and the units are
    handed out in collection order (``LONGEST_FIRST`` in front), not by their number of tests.

    (pytest-xdist's own ``--dist loadgroup`` puts its group in the test's node id, which pytest 9
    no longer takes from the attribute pytest-xdist 3.8 sets: every test became its own group.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    # pytest-xdist hands the work units out largest first by their number of tests unless told
    # not to (its ``--loadscope-reorder``, on by default): test_reruns, three tests, went near
    # the end. The collection order (``pytest_collection_modifyitems``) is the schedule.
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadFileScheduling  # noqa: PLC0415

    class ModulesSharingTheSamplesLake(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return SAMPLES_LAKE_GROUP if Path(module).name in SAMPLES_LAKE_MODULES else module

    return ModulesSharingTheSamplesLake(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the ``LONGEST_FIRST`` modules to the front, in that order (the order of every other
    test is kept).

    Raises:
        pytest.UsageError: a test outside ``SAMPLES_LAKE_MODULES`` reads ``samples_lake`` (its
            worker would build the lake a second time): add its module there.
    """

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)
    outside = sorted(
        {
            item.path.name
            for item in items
            if "samples_lake" in getattr(item, "fixturenames", ())
            and item.path.name not in SAMPLES_LAKE_MODULES
        }
    )
    if outside:
        raise pytest.UsageError(f"add {outside} to SAMPLES_LAKE_MODULES in tests/conftest.py")
