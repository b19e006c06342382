"""Build the SparkSession for the CLI and the spark-submit driver (UTC, quiet, no UI)."""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark import SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.find_spark_home import _find_spark_home
from pyspark.sql import SparkSession

from jobs import jvm_functions, jvm_parsers, jvm_startup
from jobs.java import ensure_java, release_major

log = logging.getLogger(__name__)

JVM_LOCALE_OPTIONS = "-Duser.timezone=UTC -Duser.language=en -Duser.country=US"
"""The driver's and executors' JVM time zone and locale, whatever the machine's: UTC, and a
locale whose case mappings are the root locale's. With ICU's case mappings off
(``DEFAULT_CONF``), ``lower``/``upper`` of non-ASCII text follow the JVM's default locale,
and Turkish, Azeri and Lithuanian map ``I`` and ``i`` their own way: the same input must give
the same tables on every machine."""

DEFAULT_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.adaptive.enabled": "true",
    # Local mode runs the executor inside the driver JVM; Spark's 1g default runs out of heap
    # on a few hundred MB of logs. Only applies where this process starts the JVM.
    "spark.driver.memory": "4g",
    # Spark renders every plan as text (events, errors); the pipeline's plans are deep, and
    # unbounded rendering of a cached layer's plan has run a 1g heap out of memory.
    "spark.sql.maxPlanStringLength": "200000",
    # PySpark records the Python call site of every column function by default (4 extra JVM
    # round trips per call; a run plans ~14,000 of them): ~10% of a small run. Only error
    # messages lose the Python line.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # The UI is off, yet Spark's status store keeps the last 1,000 SQL executions, each with
    # its plan text (up to maxPlanStringLength characters), and 100,000 tasks: heap that a
    # long session (a notebook, the tests) ends up collecting over and over.
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedTasks": "10000",
    # The parallel collector: with the serial one, each pause stops both executor threads while
    # one thread collects, about 27 s of a 1M-line run (JFR). Paired 1M runs: 0.93 of the wall
    # time; on samples/ no change (issue 15, eleventh part). G1 was slower than both.
    "spark.driver.extraJavaOptions": f"-XX:+UseParallelGC {JVM_LOCALE_OPTIONS}",
    "spark.executor.extraJavaOptions": JVM_LOCALE_OPTIONS,
    # Spark sends a pandas UDF's input to Python in Arrow batches of at most 10,000 rows
    # (maxRecordsPerBatch) and, unless this is Int.MaxValue, also measures the batch's bytes
    # after every row; for the fingerprint UDF's input (an array column, null on nearly every
    # line) each measurement walks the whole batch so far: 11% of bronze's CPU, about 15 s
    # per million lines. Int.MaxValue turns the measurement off; batches stay <= 10,000 rows.
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    # A stage whose generated Java has a method over this many bytes of bytecode runs its
    # operators one by one instead (their projections split into small methods). HotSpot never
    # compiles a method over 8,000 bytes, and recompiles a large one from scratch each time a
    # branch it never saw is taken: the request-log parse had a 20,274-byte stage, run in the
    # interpreter, and a 6,681-byte one that C2 compiled five times in one pass (3-6 s each).
    # Request parse of 1M lines, first pass: JVM CPU 81 s instead of 97-121 s; whole 1M runs,
    # paired: 0.94 of the wall time (issue 15, twelfth part). Spark's default is 65,535; its
    # documentation suggests 8,000 on HotSpot, which would leave the second stage as it was.
    "spark.sql.codegen.hugeMethodLimit": "6000",
    # lower() and upper() by the JVM's case mappings instead of ICU's. Both convert ASCII text
    # the same way, byte by byte; the first ICU mapping in a JVM also builds a table of the
    # title case of all 1,114,112 code points (Spark's CollationAwareUTF8String), about 1 s of
    # a cold JVM's CPU: samples/ ran in 0.93 of the wall time (issue 15, twenty-seventh part).
    # Non-ASCII text maps alike but for letters newer than the JDK's Unicode version; the
    # locale is pinned (JVM_LOCALE_OPTIONS).
    "spark.sql.icu.caseMappings.enabled": "false",
    # Spark keeps the classes it compiled from generated Java in a cache of 100 by default; a
    # run over a large input compiles 610-670 distinct ones, so a second run in the same JVM
    # (a notebook, a rerun, bench/end_to_end.py's pairs) compiled them all again with Janino
    # and HotSpot compiled their bytecode again: 667 compilations and 141 s of JVM CPU in the
    # third 1M pass, against 23 and 106 s with this cache (issue 15, forty-ninth part). A
    # static setting: only a session this process builds gets it.
    "spark.sql.codegen.cache.maxEntries": "2000",
}


#: The log4j2 settings of a JVM this process starts (warnings and errors, no start-up noise).
QUIET_LOG4J2 = Path(__file__).with_name("spark-log4j2.properties")


def quiet_java_options(options: str, verbose: bool) -> str:
    """``spark.driver.extraJavaOptions`` with the bundled log4j2 settings (``QUIET_LOG4J2``)
    added, unless ``verbose`` (``kafka-audit -v``: Spark's own defaults) or the options already
    name a log4j2 configuration.

    Input: the options as configured; output: the options to use (unchanged or extended).
    """
    if verbose or "log4j2.configurationFile" in options or not QUIET_LOG4J2.is_file():
        return options
    return f"{options} -Dlog4j2.configurationFile={QUIET_LOG4J2.as_uri()}".strip()


def build_session(
    app_name: str,
    master: str | None,
    conf: Mapping[str, str] | None = None,
    input_bytes: int | None = None,
) -> SparkSession:
    """Return the active SparkSession, or build one with the project's settings.

    Args:
        app_name: Spark application name.
        master: ``local[*]`` and the like when the job runs as a plain Python program; None to
            keep what spark-submit configured.
        conf: extra settings; they override DEFAULT_CONF, except that the session time zone
            stays UTC (every ``*_ts`` column is UTC). Under spark-submit (``master`` None) a
            setting spark-submit was given keeps its value over DEFAULT_CONF. When a session
            is already active (a notebook's, the test suite's), only ``conf`` and the UTC
            time zone are applied to it: its own settings are not replaced by DEFAULT_CONF.
            A JVM this process starts logs through the bundled ``spark-log4j2.properties``
            (warnings and errors; Spark's defaults when the root logger is at DEBUG, i.e.
            ``kafka-audit -v``), and starts with ``jobs.jvm_startup``'s options (a class
            archive; C1 only below ``QUICK_START_BYTES`` of ``input_bytes``). Column
            functions are then resolved once, not on each call (``jobs.jvm_functions.install``:
            this process, any session).
        input_bytes: on-disk bytes the command will read, when known (``jobs.jvm_startup``).

    Raises:
        EngineError: no Java 17 / 21 available for a local session.
    """
    active = SparkSession.getActiveSession()
    if active is None and master is not None:
        log.info("%s", ensure_java())
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if master is not None and master.startswith("local"):
        # Python workers (pandas UDFs: the fingerprint without the JVM functions, KIP-48's HMAC
        # check) need this interpreter's packages; the default, ``python3`` from PATH, may lack
        # pyarrow and pandas.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    defaults = dict(DEFAULT_CONF) if active is None else {}
    if master is None and active is None:
        # Under spark-submit, what the user gave with --conf / --driver-memory wins over the
        # project's defaults (SparkConf reads spark-submit's settings from system properties).
        from pyspark import SparkConf  # noqa: PLC0415

        SparkContext._ensure_initialized()  # connects to spark-submit's JVM
        locale = own_case_locale(SparkContext._jvm)
        if locale is not None:
            log.warning(
                "the driver's JVM runs in locale %s, whose case mappings differ (I, i): give "
                'spark-submit --driver-java-options "%s" (docs/running.md; the Airflow DAG '
                "gives them unless its Variable kafka_audit_driver_java_options drops them)",
                locale,
                JVM_LOCALE_OPTIONS,
            )
        submitted = {key for key, _ in SparkConf().getAll()}
        defaults = {k: v for k, v in defaults.items() if k not in submitted}
    settings = {**defaults, **(conf or {}), "spark.sql.session.timeZone": "UTC"}
    if active is None and master is not None:  # this process starts the JVM
        spark = _start_jvm(app_name, master, settings, input_bytes)
    else:
        spark = _builder(app_name, master, settings).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm_functions.install()
    jvm_parsers.install(spark)
    return spark


#: Languages whose case mappings of ``I`` and ``i`` differ from the root locale's (Java's
#: ``String.toLowerCase``/``toUpperCase``: Turkish, Azeri, Lithuanian).
OWN_CASE_LANGUAGES = frozenset({"tr", "az", "lt"})


def own_case_locale(jvm: Any) -> str | None:
    """The running JVM's default locale (a language tag such as ``tr-TR``) when it case-maps
    ``I`` and ``i`` its own way (``OWN_CASE_LANGUAGES``); None otherwise.

    spark-submit starts the driver's JVM before the job runs, so the job cannot give it
    ``JVM_LOCALE_OPTIONS``; in local mode its executors are that JVM, where ``lower`` and
    ``upper`` follow the default locale (``spark.sql.icu.caseMappings.enabled=false``), and
    the same logs would give other tables.

    Args:
        jvm: py4j's view of the JVM (``SparkContext._jvm``).
    """
    locale = jvm.java.util.Locale.getDefault()
    return str(locale.toLanguageTag()) if str(locale.getLanguage()) in OWN_CASE_LANGUAGES else None


def _builder(
    app_name: str, master: str | None, settings: Mapping[str, str]
) -> SparkSession.Builder:
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder


_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def _start_jvm(
    app_name: str, master: str, settings: Mapping[str, str], input_bytes: int | None
) -> SparkSession:
    """Start a local JVM with the quiet log settings and ``jobs.jvm_startup``'s options; a JVM
    that does not start with a class archive is started again without it (archive removed)."""
    verbose = logging.getLogger().isEnabledFor(logging.DEBUG)
    configured = quiet_java_options(settings.get(_JAVA_OPTIONS, ""), verbose)
    startup = startup_plan(configured, input_bytes, settings)
    try:
        spark = _builder(
            app_name, master, _with_options(settings, configured, startup)
        ).getOrCreate()
    except PySparkRuntimeError:
        if startup.archive is None or startup.writing is not None:
            raise
        log.warning("the JVM did not start with its class archive %s: removed", startup.archive)
        jvm_startup.discard(startup)
        startup = startup.without_archive()
        spark = _builder(
            app_name, master, _with_options(settings, configured, startup)
        ).getOrCreate()
    if startup.options:
        log.info("JVM start-up options: %s", startup.options)
    if startup.writing is not None:
        atexit.register(_write_archive, startup)
    return spark


def startup_plan(
    configured: str, input_bytes: int | None, settings: Mapping[str, str]
) -> jvm_startup.JvmStartup:
    """``jobs.jvm_startup.plan`` for the JVM of ``$JAVA_HOME`` (its version read from the JDK's
    ``release`` file) with ``settings``' class path, given the options ``configured`` and the
    command's ``input_bytes``."""
    java_home = os.environ.get("JAVA_HOME")
    major = release_major(Path(java_home)) if java_home else None
    return jvm_startup.plan(configured, input_bytes, _class_path_identity(settings), major)


def _with_options(
    settings: Mapping[str, str], configured: str, startup: jvm_startup.JvmStartup
) -> dict[str, str]:
    return {**settings, _JAVA_OPTIONS: f"{configured} {startup.options}".strip()}


def _class_path_identity(settings: Mapping[str, str]) -> str:
    """What a local JVM's class path and JDK are made of (``jobs.jvm_startup.archive_key``):
    the JDK's location and ``release`` file, Spark's jars (names and sizes), the class-path
    and heap-size settings and the environment variables Spark's launcher adds to the class
    path."""
    java_home = Path(os.environ.get("JAVA_HOME", "")).resolve()
    release = java_home / "release"
    parts = [str(java_home), release.read_text() if release.is_file() else ""]
    jars = Path(_find_spark_home()) / "jars"
    if jars.is_dir():
        parts += sorted(f"{jar.name}:{jar.stat().st_size}" for jar in jars.glob("*.jar"))
    # A heap over 32 GB turns compressed object pointers off, which an archive must match.
    parts += [
        settings.get(key, "") for key in ("spark.driver.extraClassPath", "spark.driver.memory")
    ]
    names = (
        "SPARK_HOME",
        "SPARK_CONF_DIR",
        "SPARK_DIST_CLASSPATH",
        "HADOOP_CONF_DIR",
        "YARN_CONF_DIR",
    )
    parts += [os.environ.get(name, "") for name in names]
    return "\n".join(parts)


def _write_archive(startup: jvm_startup.JvmStartup) -> None:
    """At exit: stop the session, close the JVM's standard input (it exits on end of input,
    writing the class archive first), wait for it and move the archive in place."""
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    active = SparkContext._active_spark_context
    if active is not None:
        active.stop()
    if process is None or process.stdin is None:
        return
    log.info("writing the JVM's class archive (once per Java and Spark install)")
    try:
        process.stdin.close()
        process.wait(timeout=jvm_startup.DUMP_WAIT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        log.info("JVM class archive not written: %s", error)
    jvm_startup.finish(startup, process.poll() == 0)
