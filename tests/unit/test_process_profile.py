"""bench/process_profile.py: the whole tree's CPU, orphans included; the JVM's threads by role."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

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
        ("Thread-12", "py4j threads (the driver's calls)"),
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


def test_no_command_is_an_argument_error() -> None:
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "give the command to run after --" in done.stderr
