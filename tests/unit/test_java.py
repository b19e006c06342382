"""JDK selection: version parsing of `java -version` output, and the 17/21 rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs import java
from jobs.errors import EngineError


def _fake_jdk(root: Path, banner: str) -> Path:
    home = root / banner.split('"')[1]
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "java"
    script.write_text(f"#!/bin/sh\necho '{banner}' >&2\n", encoding="utf-8")
    script.chmod(0o755)
    return home


@pytest.mark.parametrize(
    ("banner", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21.0.8" 2025-07-15 LTS', 21),
        ('java version "1.8.0_402"', 8),
        ('openjdk version "25" 2025-09-16', 25),
    ],
)
def test_java_major(tmp_path: Path, banner: str, major: int) -> None:
    assert java.java_major(_fake_jdk(tmp_path, banner)) == major


def test_missing_java_is_none(tmp_path: Path) -> None:
    assert java.java_major(tmp_path) is None


def test_first_supported_candidate_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = _fake_jdk(tmp_path, 'java version "1.8.0_402"')
    new = _fake_jdk(tmp_path, 'openjdk version "25" 2025-09-16')
    good = _fake_jdk(tmp_path, 'openjdk version "21.0.8" 2025-07-15')
    monkeypatch.setattr(java, "_candidates", lambda: [old, new, good])
    assert java.find_java_home() == (good, 21)
    monkeypatch.setattr(java, "_candidates", lambda: [old, new])
    assert java.find_java_home() is None
    with pytest.raises(EngineError, match="no Java 17 or 21"):
        java.ensure_java()


@pytest.mark.parametrize(
    ("release", "major"),
    [
        ('IMPLEMENTOR="Debian"\nJAVA_VERSION="17.0.15"\nOS_NAME="Linux"\n', 17),
        ('JAVA_VERSION="21.0.8"\n', 21),
        ('JAVA_VERSION="25"\n', 25),
        ('JAVA_VERSION="1.8.0_402"\n', 8),
        ('IMPLEMENTOR="Debian"\n', None),  # no version line
        ('JAVA_RUNTIME_VERSION="17.0.15+6"\n', None),  # not the version line itself
    ],
)
def test_release_major(tmp_path: Path, release: str, major: int | None) -> None:
    (tmp_path / "release").write_text(release, encoding="utf-8")
    assert java.release_major(tmp_path) == major


def test_release_major_without_a_release_file(tmp_path: Path) -> None:
    assert java.release_major(tmp_path) is None
