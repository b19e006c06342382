"""The JVM start-up plan (``jobs.jvm_startup``): class archive written once, then mapped only
when whole; C1 only on small inputs, less inlining up to large ones; a user's own options win.
And the lake's local size (``jobs.lake.tables.local_size_bytes``). The JVMs themselves:
tests/integration/test_jvm_startup.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from jobs import jvm_startup, session
from jobs.jvm_startup import (
    ARCHIVE_ENV,
    COMPILER_DIRECTIVES,
    FEWER_SWEEPS,
    GENERATED_C1_BYTES,
    GENERATED_C1_DIRECTIVES,
    LESS_INLINING,
    LESS_INLINING_BYTES,
    QUICK_START_BYTES,
    QUIET_CDS,
    JvmStartup,
)
from jobs.lake.tables import local_size_bytes

C1 = "-XX:TieredStopAtLevel=1"
VM_OUTPUT = "-XX:+DisplayVMOutputToStderr -XX:+UnlockDiagnosticVMOptions"
DIRECTIVES = f"{VM_OUTPUT} -XX:CompilerDirectivesFile={COMPILER_DIRECTIVES}"
GENERATED = f"{VM_OUTPUT} -XX:CompilerDirectivesFile={GENERATED_C1_DIRECTIVES}"
#: From ``QUICK_START_BYTES``: less inlining, Janino, ASM and Spark's generated classes by C1.
LOW = f"{LESS_INLINING} {GENERATED}"
#: From ``GENERATED_C1_BYTES``: less inlining, Janino and ASM by C1.
MID = f"{LESS_INLINING} {DIRECTIVES}"
SMALL = 14_462
CLASS_PATH = "/usr/lib/jvm/java-17\nJAVA_VERSION=17\nspark-core_2.13-4.2.0.jar:1000"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ARCHIVE_ENV, str(tmp_path / "jvm"))
    return tmp_path / "jvm"


def test_the_first_jvm_writes_the_archive_and_the_next_maps_it(folder: Path) -> None:
    first = jvm_startup.plan("-XX:+UseParallelGC", SMALL, CLASS_PATH)
    key = jvm_startup.archive_key(CLASS_PATH)
    archive = folder / f"spark-classes-{key}.jsa"
    writing = folder / f"spark-classes-{key}.jsa.{os.getpid()}.part"
    assert first == JvmStartup(
        options=f"{C1} -XX:ArchiveClassesAtExit={writing} {QUIET_CDS}",
        archive=archive,
        writing=writing,
    )
    writing.write_bytes(b"x" * 1000)  # what the JVM writes at exit
    assert jvm_startup.finish(first, jvm_exited=True)
    assert sorted(p.name for p in folder.iterdir()) == [archive.name, f"{archive.name}.json"]
    assert jvm_startup.archive_ready(archive)
    second = jvm_startup.plan("", QUICK_START_BYTES, CLASS_PATH)
    assert second == JvmStartup(
        options=f"{LOW} -XX:SharedArchiveFile={archive} {QUIET_CDS}", archive=archive
    )
    assert jvm_startup.finish(second, jvm_exited=True) is False  # nothing to move
    mine = jvm_startup.plan("-XX:SharedArchiveFile=/opt/mine.jsa", SMALL, CLASS_PATH)
    assert mine == JvmStartup(options=C1)  # the user's own archive: ours left out


def test_a_jvm_that_did_not_exit_cleanly_leaves_no_archive(folder: Path) -> None:
    startup = jvm_startup.plan("", None, CLASS_PATH)
    assert startup.writing is not None and startup.archive is not None
    assert C1 not in startup.options  # size unknown: C2 kept
    startup.writing.write_bytes(b"partial")
    assert jvm_startup.finish(startup, jvm_exited=False) is False
    assert list(folder.iterdir()) == []
    empty = jvm_startup.plan("", None, CLASS_PATH)
    assert empty.writing is not None
    empty.writing.touch()  # exited cleanly but wrote nothing
    assert jvm_startup.finish(empty, jvm_exited=True) is False
    assert list(folder.iterdir()) == []


def test_an_archive_is_mapped_only_whole_and_recorded(folder: Path) -> None:
    startup = jvm_startup.plan("", SMALL, CLASS_PATH)
    assert startup.writing is not None and startup.archive is not None
    startup.writing.write_bytes(b"x" * 1000)
    assert jvm_startup.finish(startup, jvm_exited=True)
    archive = startup.archive
    record = archive.with_name(f"{archive.name}.json")
    archive.write_bytes(b"x" * 999)  # truncated after it was recorded
    assert not jvm_startup.archive_ready(archive)
    assert jvm_startup.plan("", SMALL, CLASS_PATH).writing is not None  # written again
    for text in ("", "{", '{"size": "999"}', "[]", '{"bytes": 999}'):
        record.write_text(text)
        assert not jvm_startup.archive_ready(archive), text
    record.write_text('{"size": 999}')
    assert jvm_startup.archive_ready(archive)
    record.unlink()
    assert not jvm_startup.archive_ready(archive)
    assert not jvm_startup.archive_ready(folder / "missing.jsa")


def test_discard_and_without_archive_keep_the_jit_choice(folder: Path) -> None:
    startup = jvm_startup.plan("", SMALL, CLASS_PATH)
    assert startup.writing is not None and startup.archive is not None
    startup.writing.write_bytes(b"x" * 10)
    jvm_startup.finish(startup, jvm_exited=True)
    mapped = jvm_startup.plan("", SMALL, CLASS_PATH)
    assert "SharedArchiveFile" in mapped.options
    assert mapped.without_archive() == JvmStartup(options=C1)
    jvm_startup.discard(mapped)
    assert list(folder.iterdir()) == []
    jvm_startup.discard(JvmStartup())  # no archive: nothing to do


@pytest.mark.parametrize(
    ("configured", "size", "options"),
    [
        ("", SMALL, C1),
        ("", 0, C1),
        ("", QUICK_START_BYTES - 1, C1),
        ("", QUICK_START_BYTES, LOW),
        ("", GENERATED_C1_BYTES - 1, LOW),
        ("", GENERATED_C1_BYTES, MID),
        ("", LESS_INLINING_BYTES - 1, MID),
        ("", LESS_INLINING_BYTES, ""),
        ("", 10 * LESS_INLINING_BYTES, ""),
        ("", None, ""),
        ("-XX:TieredStopAtLevel=4", SMALL, ""),
        ("-XX:-TieredCompilation", SMALL, ""),
        ("-XX:FreqInlineSize=200", SMALL, C1),
        ("-XX:FreqInlineSize=200", QUICK_START_BYTES, GENERATED),
        ("-XX:FreqInlineSize=200", GENERATED_C1_BYTES, DIRECTIVES),
        ("-XX:CompilerDirectivesFile=/opt/mine.json", QUICK_START_BYTES, LESS_INLINING),
        ("-XX:CompilerDirectivesFile=/opt/mine.json", GENERATED_C1_BYTES, LESS_INLINING),
        ("-XX:CompilerDirectivesFile=/opt/mine.json", SMALL, C1),
        ("-XX:TieredStopAtLevel=1", QUICK_START_BYTES, ""),
        ("-XX:SharedArchiveFile=/opt/mine.jsa", SMALL, C1),
        ("-XX:SharedArchiveFile=/opt/mine.jsa", QUICK_START_BYTES, LOW),
        ("-Xshare:off", None, ""),
    ],
)
def test_a_users_own_options_win_and_c1_or_less_inlining_by_size(
    configured: str, size: int | None, options: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    assert jvm_startup.plan(configured, size, CLASS_PATH) == JvmStartup(options=options)


@pytest.mark.parametrize("where", ["missing/directives.json", "with space/directives.json"])
@pytest.mark.parametrize(
    ("name", "size"),
    [("GENERATED_C1_DIRECTIVES", QUICK_START_BYTES), ("COMPILER_DIRECTIVES", GENERATED_C1_BYTES)],
)
def test_no_directives_when_the_file_is_missing_or_its_path_would_be_split(
    where: str, name: str, size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    path = tmp_path / where
    if "space" in where:
        path.parent.mkdir()
        path.write_text(getattr(jvm_startup, name).read_text())
    monkeypatch.setattr(jvm_startup, name, path)
    assert jvm_startup.plan("", size, CLASS_PATH) == JvmStartup(options=LESS_INLINING)


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no", " off "])
def test_the_archive_turned_off(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, value)
    assert jvm_startup.archive_folder() is None


def test_the_default_folder_is_the_users_cache_and_stale_parts_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ARCHIVE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "kafka-security-audit" / "jvm"
    assert jvm_startup.archive_folder() == folder
    stale, fresh = folder / "a.jsa.1.part", folder / "a.jsa.2.part"
    stale.write_bytes(b"old")
    fresh.write_bytes(b"new")
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    assert jvm_startup.archive_folder() == folder
    assert sorted(p.name for p in folder.iterdir()) == [fresh.name]


def test_an_unusable_folder_means_no_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(ARCHIVE_ENV, str(blocker / "jvm"))
    assert jvm_startup.archive_folder() is None
    assert jvm_startup.plan("", SMALL, CLASS_PATH) == JvmStartup(options=C1)


def test_the_archive_is_named_by_jdk_and_class_path() -> None:
    key = jvm_startup.archive_key(CLASS_PATH)
    assert len(key) == 16 and int(key, 16) >= 0
    assert jvm_startup.archive_key(CLASS_PATH) == key
    assert jvm_startup.archive_key(CLASS_PATH.replace("1000", "1001")) != key


def test_local_size_bytes_of_a_lake(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    (lake / "auth_events" / "_delta_log").mkdir(parents=True)
    (lake / "auth_events" / "_delta_log" / "0.json").write_bytes(b"x" * 10)
    (lake / "auth_events" / "event_date=2026-11-20").mkdir()
    (lake / "auth_events" / "event_date=2026-11-20" / "part-0.parquet").write_bytes(b"x" * 100)
    (lake / "raw_lines").mkdir()
    (lake / "raw_lines" / "part-0.parquet").write_bytes(b"x" * 1000)  # not asked for
    tables = ["auth_events", "request_events"]  # request_events missing: 0
    assert local_size_bytes(str(lake), tables) == 110
    assert local_size_bytes(f"file://{lake}", tables) == 110
    assert local_size_bytes(str(tmp_path / "no-lake"), tables) == 0
    assert local_size_bytes("s3://bucket/lake", tables) is None
    assert local_size_bytes("abfss://c@a.dfs.core.windows.net/lake", tables) is None


@pytest.mark.parametrize(
    ("configured", "size", "major", "options"),
    [
        ("", QUICK_START_BYTES, 17, f"{LOW} {FEWER_SWEEPS}"),
        ("", GENERATED_C1_BYTES, 17, f"{MID} {FEWER_SWEEPS}"),
        ("", LESS_INLINING_BYTES, 17, FEWER_SWEEPS),
        ("", LESS_INLINING_BYTES, 19, FEWER_SWEEPS),
        ("", LESS_INLINING_BYTES, 20, ""),  # JDK 20 removed the sweeper
        ("", LESS_INLINING_BYTES, 21, ""),
        ("", LESS_INLINING_BYTES, None, ""),  # version unknown
        ("", None, 17, ""),  # size unknown
        ("", SMALL, 17, C1),  # C1 only: no C2 to sweep after
        ("-XX:SweeperThreshold=5", LESS_INLINING_BYTES, 17, ""),
        ("-XX:-UseCodeCacheFlushing", LESS_INLINING_BYTES, 17, ""),
        ("-XX:ReservedCodeCacheSize=512m", LESS_INLINING_BYTES, 17, ""),
    ],
)
def test_fewer_sweeps_where_c2_runs_on_a_jdk_with_a_sweeper(
    configured: str,
    size: int | None,
    major: int | None,
    options: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    startup = jvm_startup.plan(configured, size, CLASS_PATH, major)
    assert startup == JvmStartup(options=options)


def test_the_session_plans_for_the_version_its_jdk_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``jobs.session`` passes the version in ``$JAVA_HOME/release`` to ``plan``: a JDK 17
    sweeps less where C2 runs, a JDK 21 (no sweeper) gets no such option."""
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    for release, options in (
        ('JAVA_VERSION="17.0.15"\n', FEWER_SWEEPS),
        ('JAVA_VERSION="21.0.8"\n', ""),
    ):
        (tmp_path / "release").write_text(release, encoding="utf-8")
        monkeypatch.setenv("JAVA_HOME", str(tmp_path))
        assert session.startup_plan("", LESS_INLINING_BYTES, {}).options == options
    monkeypatch.delenv("JAVA_HOME")
    assert session.startup_plan("", LESS_INLINING_BYTES, {}).options == ""
