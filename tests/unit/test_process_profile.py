"""bench/process_profile.py: the whole tree's CPU, orphans included; the JVM's threads by role."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "bench" / "process_profile.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("process_profile", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while being defined
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("Executor task l", "executor threads (tasks)"),
        ("Executor task i", "executor threads (tasks)"),
        ("C2 CompilerThre", "C2 compiler"),
        ("C1 CompilerThre", "C1 compiler"),
        ("GC Thread#1", "garbage collector, VM thread"),
        ("VM Thread", "garbage collector, VM thread"),
        ("Thread-12", "Thread-N: py4j's (the driver's calls)"),
        ("Thread-12-x", "other JVM threads"),
        ("dag-scheduler-e", "other JVM threads"),
        ("java", "other JVM threads"),
    ],
)
def test_thread_roles_from_the_names_proc_gives(tool: ModuleType, name: str, role: str) -> None:
    assert tool.thread_role(name) == role


def test_roles_count_what_ended_threads_took(tool: ModuleType) -> None:
    """The JVM's own total less its live threads' figures is the ended threads' share."""
    sampler = tool._JvmSampler()
    sampler.processes = {10: 10.0}
    sampler.threads = {
        (10, 11): ("Executor task l", 5.0),
        (10, 12): ("Executor task l", 1.0),
        (10, 13): ("C2 CompilerThre", 3.0),
    }
    assert sampler.roles() == {
        "executor threads (tasks)": 6.0,
        "C2 compiler": 3.0,
        "threads ended between samples": 1.0,
    }


#: Starts a child in a session of its own that burns CPU for a while, and exits at once: the
#: child is orphaned, as a PySpark driver's JVM is when the driver exits first.
ORPHANING = textwrap.dedent(
    """
    import subprocess, sys
    burn = "import time\\nend = time.process_time() + 0.6\\nwhile time.process_time() < end: pass"
    subprocess.Popen([sys.executable, "-c", burn], start_new_session=True)
    sys.exit(3)
    """
)


def test_an_orphan_is_waited_for_and_its_cpu_counted(tmp_path: Path) -> None:
    """A plain timer would stop when the command exits and miss the orphan's CPU; the tool,
    its subreaper, waits for it. The command's exit status is the tool's."""
    out = tmp_path / "profile.json"
    command = [sys.executable, str(TOOL), "--interval", "0.05", "--json", str(out), "--",
               sys.executable, "-c", ORPHANING]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["exit_status"] == 3
    assert figures["tree_cpu_s"] >= 0.55
    assert figures["wall_s"] >= 0.55
    assert figures["jvm_cpu_s"] == 0.0 and figures["jvm_roles_s"] == {}
    assert "CPU of the whole tree" in done.stderr


def _profiled(tmp_path: Path, code: str, *options: str) -> tuple[int, dict[str, Any], str]:
    """The tool run on ``python -c code``: its exit status, its JSON figures, its report."""
    out = tmp_path / "profile.json"
    command = [sys.executable, str(TOOL), *options, "--json", str(out), "--",
               sys.executable, "-c", code]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return done.returncode, figures, done.stderr


def test_a_reaped_jvm_counts_its_last_seconds(tmp_path: Path) -> None:
    """A process named java (this Python under that name) orphaned like a PySpark driver's
    JVM, burning 1 s of CPU: sampled every 0.5 s its last sample misses up to half a second;
    the tool reaps it and takes its final CPU from ``wait4``. Its threads' roles and the ended
    threads' share add up to that total."""
    java = tmp_path / "java"
    java.symlink_to(sys.executable)
    burn = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass"
    code = f"import subprocess; subprocess.Popen([{str(java)!r}, '-c', {burn!r}], start_new_session=True)"
    status, figures, _ = _profiled(tmp_path, code)
    assert status == 0
    assert figures["jvm_cpu_s"] >= 0.95
    assert abs(sum(figures["jvm_roles_s"].values()) - figures["jvm_cpu_s"]) < 0.01
    assert set(figures["jvm_roles_s"]) <= {"other JVM threads", "threads ended between samples"}


def test_the_wall_time_ends_at_the_exit_not_at_the_next_sample(tmp_path: Path) -> None:
    """Samples every 2 s, a command of about 0.2 s: its wall time is not rounded up to a
    sample (it was at least 2 s when exits were only looked for between samples)."""
    status, figures, _ = _profiled(tmp_path, "import time; time.sleep(0.2)", "--interval", "2")
    assert status == 0
    assert 0.2 <= figures["wall_s"] < 1.5


def test_a_signal_gives_128_plus_its_number(tmp_path: Path) -> None:
    status, figures, _ = _profiled(
        tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    )
    assert status == figures["exit_status"] == 128 + signal.SIGTERM


def test_a_process_left_running_is_named_not_waited_for_forever(tmp_path: Path) -> None:
    """The command exits 0 but leaves a process that outlives --reap-timeout: exit status 1,
    the process named in the figures and the report, and left running (stopped here)."""
    code = (
        "import subprocess; subprocess.Popen(['sleep', '30'], start_new_session=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
    )
    status, figures, report = _profiled(tmp_path, code, "--reap-timeout", "1", "--interval", "0.1")
    try:
        assert status == 1
        assert figures["exit_status"] == 0
        [left] = figures["still_running"]
        assert left.endswith(" sleep")
        assert f"not waited for (still running when the wait gave up): {left}" in report
    finally:
        for entry in figures["still_running"]:
            os.kill(int(entry.split()[0]), signal.SIGKILL)


def test_no_command_is_an_argument_error() -> None:
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "give the command to run after --" in done.stderr
