"""Where a whole process's CPU goes (issue 15): a command, its JVM, and the JVM's threads by role.

    .venv/bin/python bench/process_profile.py -- .venv/bin/kafka-audit run --input samples \\
        --lake /tmp/lake --no-progress
    .venv/bin/python bench/process_profile.py --json /tmp/profile.json -- \\
        .venv/bin/python bench/bare_process.py samples --out /tmp/bare

Runs the command (a ``kafka-audit`` command, ``bench/bare_process.py``, anything that starts a
JVM) and prints, when it ends:

* its wall time and the CPU seconds of its whole process tree (user + system);
* the CPU of every JVM in the tree (``java``), split by its threads' roles: Spark's executor
  threads (the tasks), HotSpot's C2 and C1 compilers, the garbage collector and the VM thread,
  the unnamed threads, ``Thread-N`` (py4j's, which serve the Python driver's DataFrame calls:
  Catalyst's analysis, planning, the actions' waits; and any other thread left unnamed, such
  as a shutdown hook: a heuristic), Spark's other threads (its scheduler, broadcasts,
  listeners), and what threads that ended between two samples took (the JVM's own total less
  its live threads' last figures; a JVM this tool reaps itself has its final total from
  ``wait4``). ``--json`` also gives the CPU of the busiest thread names.

The Python process that starts a local Spark session leaves its JVM to end on its own: the
JVM is then no longer its child, and a plain timer (``time``, ``/usr/bin/time``, most
benchmark tools) waits for the Python process only and counts none of the JVM's CPU. This
tool makes itself a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): such orphans
become its children, it waits for every one, and their CPU is in the tree's figure. Put it in
front of both commands of a paired timing (``docs/performance.md``: "the JVM reaped by a
subreaper wrapper") and the CPU it reports is the whole processes'.

Threads are sampled every ``--interval`` seconds (psutil; their names from ``/proc``: Linux
only); a thread's CPU is its last sample, so a short-lived thread's last interval is in the
"ended between samples" row. Exits are looked for every 10 ms, so the wall time ends within
10 ms of the last process's exit whatever the interval. Figures are seconds on a shared
machine: quote them with the load (printed).

Exit status: the command's (128 + the signal when a signal ended it); 1 when the command
succeeded but left processes running past ``--reap-timeout`` (they are named, not stopped).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import resource
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
from tabulate import tabulate

PR_SET_CHILD_SUBREAPER = 36
#: (role, pattern of the thread's name as ``/proc/<pid>/task/<tid>/comm`` gives it: at most 15
#: characters), first match wins. HotSpot, Spark 4.2 and py4j name their threads so.
THREAD_ROLES: tuple[tuple[str, str], ...] = (
    ("executor threads (tasks)", r"^Executor task "),  # "launch worker", "idle worker"
    ("C2 compiler", r"^C2 CompilerThre"),
    ("C1 compiler", r"^C1 CompilerThre"),
    ("garbage collector, VM thread", r"^(GC Thread|G1 |VM Thread|VM Periodic)"),
    ("Thread-N: py4j's (the driver's calls)", r"^Thread-\d+$"),
)
OTHER_ROLE = "other JVM threads"
ENDED_ROLE = "threads ended between samples"
#: Seconds to wait, after the command exits, for the processes it left (its JVM).
REAP_TIMEOUT_S = 300.0
#: How soon an exit is seen (the wall time's resolution), whatever ``--interval`` is.
_EXIT_POLL_S = 0.01


def thread_role(name: str) -> str:
    """The role of a JVM thread from its name (``THREAD_ROLES``; ``OTHER_ROLE`` otherwise)."""
    for role, pattern in THREAD_ROLES:
        if re.match(pattern, name):
            return role
    return OTHER_ROLE


@dataclass
class Profile:
    """What ``profile`` measured: seconds, and the JVMs' CPU seconds by thread role."""

    command: list[str]
    exit_status: int
    wall_s: float
    tree_user_s: float
    tree_system_s: float
    jvm_cpu_s: float = 0.0
    jvm_roles_s: dict[str, float] = field(default_factory=dict)
    jvm_thread_names_s: dict[str, float] = field(default_factory=dict)
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: Processes of the tree still running when the wait gave up ("pid name").
    still_running: list[str] = field(default_factory=list)

    @property
    def tree_cpu_s(self) -> float:
        """CPU seconds of the whole tree, user + system."""
        return self.tree_user_s + self.tree_system_s


class _JvmSampler:
    """The last CPU figure of every JVM process and of each of its threads, by ``sample``."""

    def __init__(self) -> None:
        self.processes: dict[int, float] = {}
        self.threads: dict[tuple[int, int], tuple[str, float]] = {}

    def sample(self) -> None:
        """Read every JVM below this process: its threads first, then its own total, so that
        the total is never below the sum of its live threads."""
        for child in psutil.Process().children(recursive=True):
            try:
                if child.name() != "java":
                    continue
                for thread in child.threads():
                    self._sample_thread(child.pid, thread)
                times = child.cpu_times()
                self.processes[child.pid] = times.user + times.system
            except psutil.Error:
                continue  # the process ended while being read

    def _sample_thread(self, pid: int, thread: Any) -> None:
        try:
            name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
        except OSError:
            return  # the thread ended since it was listed: its last figure stands
        self.threads[(pid, thread.id)] = (name, thread.user_time + thread.system_time)

    def ended(self, pid: int, cpu_s: float) -> None:
        """A JVM this process reaped: its final CPU (``wait4``), the last seconds included."""
        if pid in self.processes:
            self.processes[pid] = cpu_s

    def roles(self) -> dict[str, float]:
        """CPU seconds by role, the ended threads' share included; empty without a JVM."""
        if not self.processes:
            return {}
        by_role: Counter[str] = Counter()
        for name, cpu in self.threads.values():
            by_role[thread_role(name)] += cpu
        ended = sum(self.processes.values()) - sum(by_role.values())
        by_role[ENDED_ROLE] += max(ended, 0.0)
        return dict(by_role.most_common())

    def names(self, top: int = 15) -> dict[str, float]:
        """CPU seconds by thread name (numbers in it as ``N``), the ``top`` largest."""
        by_name: Counter[str] = Counter()
        for name, cpu in self.threads.values():
            by_name[re.sub(r"\d+", "N", name)] += cpu
        return dict(by_name.most_common(top))


def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _wait_all(
    pid: int, sampler: _JvmSampler, interval_s: float, timeout_s: float
) -> tuple[int, float, list[str]]:
    """Wait for the command ``pid`` and every other descendant (the orphans this subreaper
    adopted included), sampling the JVMs every ``interval_s``; exits are seen within
    ``_EXIT_POLL_S``. Gives up ``timeout_s`` after the command's exit.

    Returns: the command's exit status (``os.waitstatus_to_exitcode``: -N for signal N), the
    time of the last exit (``time.monotonic``), and the processes still running when the wait
    gave up ("pid name"), left running.
    """
    status: int | None = None
    last_exit = deadline = float("inf")
    next_sample = time.monotonic()
    while time.monotonic() < deadline:
        if time.monotonic() >= next_sample:
            sampler.sample()
            next_sample = time.monotonic() + interval_s
        try:
            ended, wait_status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if ended == 0:
            time.sleep(_EXIT_POLL_S)
            continue
        last_exit = time.monotonic()
        sampler.ended(ended, usage.ru_utime + usage.ru_stime)
        if ended == pid:
            status = os.waitstatus_to_exitcode(wait_status)
            deadline = last_exit + timeout_s
    left = [f"{p.pid} {p.name()}" for p in psutil.Process().children(recursive=True)]
    assert status is not None  # the command is this process's child: waited for first
    return status, last_exit, left


def profile(
    command: Sequence[str], interval_s: float = 0.5, reap_timeout_s: float = REAP_TIMEOUT_S
) -> Profile:
    """Run ``command`` as this process's child, sampling its JVMs' threads, and wait for the
    whole tree it starts (orphans included, this process being their subreaper) for at most
    ``reap_timeout_s`` after the command's own exit. The wall time ends at the last exit.

    Raises:
        OSError: not Linux (no ``prctl`` or ``/proc``), or the command cannot be started.
    """
    _become_subreaper()
    sampler = _JvmSampler()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    pid = os.posix_spawnp(command[0], list(command), os.environ)
    code, last_exit, left = _wait_all(pid, sampler, interval_s, reap_timeout_s)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Profile(
        command=list(command),
        exit_status=code if code >= 0 else 128 - code,
        wall_s=last_exit - started,
        tree_user_s=after.ru_utime - before.ru_utime,
        tree_system_s=after.ru_stime - before.ru_stime,
        jvm_cpu_s=sum(sampler.processes.values()),
        jvm_roles_s=sampler.roles(),
        jvm_thread_names_s=sampler.names(),
        load_average=os.getloadavg(),
        still_running=left,
    )


def render(result: Profile) -> str:
    """The profile as a short text: the totals, then the JVM's CPU by role with shares."""
    load = ", ".join(f"{value:.2f}" for value in result.load_average)
    lines = [
        f"command: {' '.join(result.command)}",
        f"exit status {result.exit_status}; load average at the end {load}",
        f"wall {result.wall_s:.1f} s; CPU of the whole tree {result.tree_cpu_s:.1f} s "
        f"(user {result.tree_user_s:.1f} s, system {result.tree_system_s:.1f} s); "
        f"of it the JVMs {result.jvm_cpu_s:.1f} s",
    ]
    total = result.jvm_cpu_s or 1.0
    rows = [[role, f"{cpu:.1f}", f"{100 * cpu / total:.0f}%"] for role, cpu in
            result.jvm_roles_s.items()]  # fmt: skip
    if result.still_running:
        lines.append(
            "not waited for (still running when the wait gave up): "
            + ", ".join(result.still_running)
        )
    if rows:
        lines.append(tabulate(rows, headers=["JVM threads", "CPU s", "share"], stralign="left"))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, profile the command, print (and save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    parser.add_argument(
        "--reap-timeout", type=float, default=REAP_TIMEOUT_S,
        help="seconds to wait, once the command exits, for the processes it left running",
    )  # fmt: skip
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    result = profile(command, args.interval, args.reap_timeout)
    print(render(result), file=sys.stderr)
    if args.json is not None:
        figures = {**asdict(result), "tree_cpu_s": result.tree_cpu_s}
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if result.still_running and result.exit_status == 0:
        return 1  # the figures miss what those processes did and still do
    return result.exit_status


if __name__ == "__main__":
    sys.exit(main())
