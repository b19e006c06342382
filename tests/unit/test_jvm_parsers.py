"""jobs.jvm_parsers: the jar built once per sources, cached; no javac, a failed compile or the
setting off leave the parse to its expressions (tests/spark/test_request_native.py checks that
both give the same rows)."""

from __future__ import annotations

import logging
import os
import time
import zipfile
from pathlib import Path

import pyspark
import pytest

from jobs import jvm_parsers
from transforms.bronze.native import FINGERPRINT_CLASS
from transforms.gold.kip48_tokens.native import TOKEN_HMAC_CLASS
from transforms.silver.request_log.native import FUNCTIONS


def test_built_once_then_taken_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = jvm_parsers.built_jar(tmp_path)
    assert jar is not None and jar.parent == tmp_path
    with zipfile.ZipFile(jar) as archive:
        keyed = [FINGERPRINT_CLASS, TOKEN_HMAC_CLASS, "kafkaaudit.KeyedFingerprint"]
        for java_class in [*(java_class for _, java_class, _ in FUNCTIONS), *keyed]:
            assert f"{java_class.replace('.', '/')}.class" in archive.namelist()
    monkeypatch.setattr(jvm_parsers, "_javac", lambda: None)  # no compiler needed any more
    assert jvm_parsers.built_jar(tmp_path) == jar
    assert [p.name for p in tmp_path.iterdir()] == [jar.name]  # no work folder left


def test_every_java_source_is_compiled_once() -> None:
    """The sources are compiled from one flat folder, keyed by file name: a name two source
    folders share would drop one of the two classes (its function then falls back)."""
    names = [
        entry.name
        for folder in jvm_parsers.SOURCES
        for entry in folder.iterdir()
        if entry.name.endswith(".java")
    ]
    assert len(names) == len(set(names)) == len(jvm_parsers.java_sources())


def test_the_jar_is_named_by_its_sources(tmp_path: Path) -> None:
    sources = jvm_parsers.java_sources()
    assert {
        "StringFormParse.java",
        "JsonFormParse.java",
        "Fingerprints.java",
        "TokenHmac.java",
        "KeyedFingerprint.java",
    } <= set(sources)
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"")
    key = jvm_parsers.jar_key(sources, jars)
    name = next(iter(sources))
    assert jvm_parsers.jar_key({**sources, name: sources[name] + b"\n"}, jars) != key
    (jars / "spark-sql.jar").write_bytes(b"")
    assert jvm_parsers.jar_key(sources, jars) != key


def test_no_sources_no_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(jvm_parsers, "SOURCES", (tmp_path / "empty",))
    assert jvm_parsers.built_jar(tmp_path / "cache") is None


def test_no_javac_no_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(jvm_parsers, "_javac", lambda: None)
    with caplog.at_level(logging.INFO, logger="jobs.jvm_parsers"):
        assert jvm_parsers.built_jar(tmp_path) is None
    assert "no javac" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_a_failed_compile_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "sources"
    broken.mkdir()
    (broken / "Broken.java").write_text("public class Broken { int x = ; }\n", encoding="utf-8")
    monkeypatch.setattr(jvm_parsers, "SOURCES", (broken,))
    with caplog.at_level(logging.WARNING, logger="jobs.jvm_parsers"):
        assert jvm_parsers.built_jar(tmp_path / "cache") is None
    assert "did not build" in caplog.text and "Broken.java" in caplog.text
    # Noted beside where the jar would be, so that later sessions do not compile it again.
    [note] = list((tmp_path / "cache").iterdir())
    assert note.suffix == ".failed" and "Broken.java" in note.read_text(encoding="utf-8")
    monkeypatch.setattr(jvm_parsers, "_javac", lambda: pytest.fail("compiled again"))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="jobs.jvm_parsers"):
        assert jvm_parsers.built_jar(tmp_path / "cache") is None
    assert "failed to build before" in caplog.text and note.name in caplog.text


def test_a_build_removes_only_long_unused_jars(tmp_path: Path) -> None:
    # The jars' name before the fingerprint joined them (request-log-) is pruned as well.
    old_jar, old_note, older_name, recent = (
        tmp_path / name
        for name in (
            "jvm-functions-0.jar", "jvm-functions-1.failed", "request-log-3.jar",
            "jvm-functions-2.jar",
        )
    )  # fmt: skip
    for path in (old_jar, old_note, older_name, recent, tmp_path / "other.jar"):
        path.write_bytes(b"")
    days_ago = time.time() - (jvm_parsers.PRUNE_AFTER_DAYS + 1) * 86_400
    for path in (old_jar, old_note, older_name, tmp_path / "other.jar"):
        os.utime(path, (days_ago, days_ago))
    jar = jvm_parsers.built_jar(tmp_path)
    assert jar is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [jar.name, recent.name, "other.jar"]
    )


@pytest.mark.parametrize("value", ["off", "0", "false", "NO"])
def test_the_setting_off_installs_nothing(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(jvm_parsers.NATIVE_ENV, value)
    assert jvm_parsers.install(spark=None) is False  # type: ignore[arg-type]  # never touched


def test_the_spark_jars_are_spark_homes_when_it_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """spark-submit sets SPARK_HOME and reads pyspark from $SPARK_HOME/python/lib/pyspark.zip,
    beside which there is no jars folder: the jars are SPARK_HOME's. Without it, the installed
    PySpark's, where its JVM starts from."""
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert jvm_parsers.spark_jars() == tmp_path.resolve() / "jars"
    monkeypatch.delenv("SPARK_HOME")
    jars = jvm_parsers.spark_jars()
    assert jars.parent == Path(pyspark.__file__).resolve().parent
    assert any(jar.name.startswith("spark-core_") for jar in jars.glob("*.jar"))


def test_no_spark_jars_no_jar_and_no_failure_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A folder without Spark's jars is not the sources' failure: nothing is compiled and
    nothing noted, so that the next session, which finds them, builds the jar."""
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark"))
    monkeypatch.setattr(jvm_parsers, "_javac", lambda: pytest.fail("compiled without Spark"))
    with caplog.at_level(logging.INFO, logger=jvm_parsers.__name__):
        assert jvm_parsers.built_jar(tmp_path / "cache") is None
    assert f"no Spark jars in {(tmp_path / 'spark').resolve() / 'jars'}" in caplog.text
    assert not (tmp_path / "cache").exists() or list((tmp_path / "cache").iterdir()) == []
