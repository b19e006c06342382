"""The project's JVM functions, built with the JDK and added to a session (issue 15): the
request-log parse's, bronze's secret-key pre-test and fingerprint, and KIP-48's HMAC check.

``transforms/native/*.java`` (what the others share), ``transforms/silver/request_log/native``,
``transforms/bronze/native`` and ``transforms/gold/kip48_tokens/native`` are compiled with the
JDK's ``javac`` against the Spark jars the session's JVM runs with (``session_jars``), once
per digest of the sources and of those jars' names, into one jar in the user's cache
(``jobs.java.cache_folder("jvm")``); ``install`` adds the jar to a session (``ADD JAR``: the
driver and every executor, local or on a cluster) and registers ``FUNCTIONS`` by name (the
fingerprint and the HMAC check are made per key, ``transforms.native.keyed_jvm_function``).
Without ``javac`` (a JRE; the JDK from PyPI is one), without Spark's jars, when the compile
fails, or with ``KAFKA_AUDIT_NATIVE_PARSE=off``, nothing is added: Spark expressions parse the
request log and pre-test for secrets, and pandas UDFs fingerprint them and check token HMACs;
the tables are the same either way, only slower. A compile that fails or hangs is remembered
beside the jar (``jvm-functions-<digest>.failed``, its error inside): later sessions skip it
until the sources, Spark's jars or that file change. Each use refreshes the jar's
modification time; jars and failures unused for ``PRUNE_AFTER_DAYS`` (and those of the
earlier name, ``request-log-*``) are removed when a new jar is built.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from importlib.resources.abc import Traversable
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

from jobs.java import cache_folder
from transforms import native as shared_native
from transforms.bronze import native as bronze_native
from transforms.gold.kip48_tokens import native as token_native
from transforms.silver.request_log import native as request_log_native

log = logging.getLogger(__name__)

NATIVE_ENV = "KAFKA_AUDIT_NATIVE_PARSE"
"""``off`` (or ``0``, ``false``, ``no``): never build or add the functions."""
#: The folders of the Java sources (package resources), compiled together into one jar.
SOURCES: tuple[Traversable, ...] = (
    shared_native.SOURCES,
    request_log_native.SOURCES,
    bronze_native.SOURCES,
    token_native.SOURCES,
)
#: (function name, class, result type) of the functions ``install`` registers by name.
FUNCTIONS = (*request_log_native.FUNCTIONS, *bronze_native.FUNCTIONS)
JAR_PREFIX = "jvm-functions-"
#: The jars' name before the fingerprint joined them; pruned as the others.
_OLD_PREFIX = "request-log-"
FALLBACK = (
    "Spark expressions parse the request log, Python UDFs fingerprint secrets and check token HMACs"
)
"""What a session without the functions does instead: the end of each log line that says so."""
_COMPILE_TIMEOUT_S = 120
_RELEASE = 17
PRUNE_AFTER_DAYS = 30
"""Cached jars and failure notes of other sources (or Spark installs) older than this are
removed when a jar is built."""


def _javac() -> Path | None:
    """``javac`` of ``$JAVA_HOME`` (the JDK the session runs on), else the first on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return Path(home) / "bin" / "javac"
    found = shutil.which("javac")
    return Path(found) if found else None


def session_jars(spark: SparkSession) -> Path | None:
    """The folder of the jar that holds Spark's ``SparkContext`` in ``spark``'s JVM: the jars
    that JVM runs with, however it was started (PySpark's own, spark-submit's ``SPARK_HOME``,
    a YARN container's copies). None when the JVM cannot tell (no code source, not a file).
    """
    jvm = spark._jvm  # py4j, as PySpark's own functions reach the JVM
    if jvm is None:
        return None
    try:
        context = jvm.java.lang.Class.forName("org.apache.spark.SparkContext")
        location = context.getProtectionDomain().getCodeSource().getLocation()
        return Path(str(jvm.java.nio.file.Paths.get(location.toURI()).getParent().toString()))
    except Exception:  # any JVM answer but a file's folder: ask elsewhere
        return None


def spark_jars() -> Path:
    """The folder of the Spark jars a session's JVM runs with when there is no session to ask
    (``session_jars``): ``$SPARK_HOME/jars`` when ``SPARK_HOME`` is set (spark-submit sets
    it, and PySpark starts its own JVM from there), else the ``jars`` folder of the installed
    PySpark.

    Not from ``pyspark.__file__`` alone: under spark-submit that module is read from
    ``$SPARK_HOME/python/lib/pyspark.zip``, a file, with no ``jars`` folder beside it (the
    build then found no Spark class, and every spark-submit run fell back to the expressions
    and Python UDFs).
    """
    home = os.environ.get("SPARK_HOME", "").strip()
    if home:
        return Path(home).expanduser().resolve() / "jars"
    return Path(pyspark.__file__).resolve().parent / "jars"


def java_sources() -> dict[str, bytes]:
    """The Java sources of ``SOURCES`` by file name (unique across the folders): read as
    package resources, so that a wheel or a ``--py-files`` zip (spark-submit) has them as a
    checkout does."""
    return {
        entry.name: entry.read_bytes()
        for folder in SOURCES
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".java") and entry.is_file()
    }


def jar_key(sources: dict[str, bytes], jars: Path) -> str:
    """Hex digest naming the jar of ``sources`` compiled against the jars in ``jars``."""
    digest = hashlib.sha256()
    for name, text in sorted(sources.items()):
        digest.update(name.encode() + b"\0" + text)
    for jar in sorted(p.name for p in jars.glob("*.jar")):
        digest.update(jar.encode() + b"\0")
    return digest.hexdigest()[:16]


def built_jar(folder: Path | None = None, jars: Path | None = None) -> Path | None:
    """The jar of the project's JVM functions, compiled now if not cached.

    Args:
        folder: where the jar is cached (default: the user's cache).
        jars: the folder of Spark's jars to compile against (default: ``spark_jars``).

    Returns:
        Its path; None (and a log line saying why) when there is no ``javac``, the cache
        folder cannot be written, or the sources do not compile (now, or in an earlier
        session: its ``.failed`` note).
    """
    try:
        sources = java_sources()
        folder = folder or cache_folder("jvm")
    except (OSError, RuntimeError) as error:  # RuntimeError: Path.home() without a home
        log.info("no cache for the JVM functions (%s): %s", error, FALLBACK)
        return None
    if not sources:
        log.info("no Java sources in %s: %s", ", ".join(map(str, SOURCES)), FALLBACK)
        return None
    jars = jars or spark_jars()
    if not any(jars.glob("*.jar")):
        # Not the sources' failure: no note, so that a session that finds the jars builds.
        log.info("no Spark jars in %s: %s", jars, FALLBACK)
        return None
    target = folder / f"{JAR_PREFIX}{jar_key(sources, jars)}.jar"
    failed = target.with_suffix(".failed")
    if target.is_file():
        _touch(target)
        return target
    if failed.is_file():
        log.info(
            "the JVM functions failed to build before (%s; delete it to try again): %s",
            failed,
            FALLBACK,
        )
        return None
    javac = _javac()
    if javac is None:
        log.info("no javac (a JRE only): %s", FALLBACK)
        return None
    return _compiled(javac, sources, jars, target)


def _compiled(javac: Path, sources: dict[str, bytes], jars: Path, target: Path) -> Path | None:
    """``sources`` compiled by ``javac`` into the jar ``target``; None (a warning; a compile
    error or a hang noted in ``target``'s ``.failed`` file) when that fails."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as work:
            classes = Path(work) / "classes"
            paths = [Path(work) / name for name in sources]
            for path in paths:
                path.write_bytes(sources[path.name])
            # Class files for Java 17, the oldest Java Spark 4.2 runs on: a jar built by a newer
            # javac (one found on PATH) still loads in any JVM the session may run on.
            compile_command = [
                *(str(javac), "--release", str(_RELEASE), "-encoding", "UTF-8", "-nowarn"),
                *("-cp", str(jars / "*"), "-d", str(classes)),
            ]
            subprocess.run(
                [*compile_command, *map(str, paths)],
                check=True,
                capture_output=True,
                timeout=_COMPILE_TIMEOUT_S,
            )
            staged = Path(work) / target.name
            _jar(classes, staged)
            staged.replace(target)  # another process may have built it meanwhile: the same
    except (OSError, subprocess.SubprocessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        reason = f"{error}{': ' + detail.decode(errors='replace')[:500] if detail else ''}"
        log.warning("the JVM functions did not build (%s): %s", reason, FALLBACK)
        if isinstance(error, subprocess.SubprocessError):  # not a full disk or the like
            _note_failure(target.with_suffix(".failed"), reason)
        return None
    log.info("built the JVM functions: %s", target)
    _prune(target)
    return target


def _note_failure(note: Path, reason: str) -> None:
    try:
        note.write_text(reason + "\n", encoding="utf-8")
    except OSError as error:
        log.info("could not note the failed build in %s: %s", note, error)


def _touch(path: Path) -> None:
    """Mark ``path`` as used now (``_prune`` keeps what other installs still use)."""
    with contextlib.suppress(OSError):  # a read-only cache: the jar is still usable
        os.utime(path)


def _prune(kept: Path) -> None:
    """Remove the cache's other jars and failure notes unused for ``PRUNE_AFTER_DAYS``."""
    oldest = time.time() - PRUNE_AFTER_DAYS * 86_400
    ours = [
        f"{prefix}*{suffix}"
        for prefix in (JAR_PREFIX, _OLD_PREFIX)
        for suffix in (".jar", ".failed")
    ]
    for path in [found for pattern in ours for found in kept.parent.glob(pattern)]:
        try:
            if path != kept and path.stat().st_mtime < oldest:
                path.unlink()
        except OSError:
            continue  # removed meanwhile by another process, or not ours to remove


def _jar(classes: Path, out: Path) -> None:
    """A jar (a zip of the class files) of ``classes``, made without the JDK's ``jar`` tool."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for path in sorted(classes.rglob("*.class")):
            archive.write(path, path.relative_to(classes).as_posix())


def install(spark: SparkSession, folder: Path | None = None) -> bool:
    """Add the project's JVM functions to ``spark`` unless they are there already: the jar,
    and ``FUNCTIONS`` registered by name.

    Args:
        spark: the session.
        folder: where the jar is cached (default: the user's cache, ``built_jar``).

    Returns:
        True when the jar is added and every function of ``FUNCTIONS`` registered in the
        session afterwards.
    """
    if os.environ.get(NATIVE_ENV, "").strip().lower() in {"off", "0", "false", "no"}:
        return False
    if all(spark.catalog.functionExists(name) for name, _, _ in FUNCTIONS):
        return True
    jar = built_jar(folder, session_jars(spark))
    if jar is None:
        return False
    if "'" in jar.as_posix() or "\\" in jar.as_posix():
        log.info("the JVM functions' jar path %s cannot be quoted for ADD JAR: %s", jar, FALLBACK)
        return False
    try:
        # Once per session: Spark refuses (with an error in its log) a jar of the same name
        # from another folder, as when the functions are registered again after a drop.
        added = [row[0] for row in spark.sql("LIST JARS").collect()]
        if not any(path.rsplit("/", 1)[-1] == jar.name for path in added):
            spark.sql(f"ADD JAR '{jar.as_posix()}'")
        for name, java_class, result in FUNCTIONS:
            spark.udf.registerJavaFunction(name, java_class, result)
    except Exception as error:  # any failure leaves the expressions, as documented
        log.warning(
            "the JVM functions were not added (%s): %s",
            str(error).splitlines()[0][:300] if str(error) else type(error).__name__,
            FALLBACK,
        )
        return False
    return True
