"""Start-up options of a JVM the command line starts: a class archive, C1 or less inlining.

Two costs of a short command are not the audit's work (issue 15, seventeenth part):

- **Loading Spark's classes.** A local session loads about 20,000 classes from Spark's jars,
  parsing and verifying each. HotSpot's dynamic class-data sharing (JEP 350, JDK 13+) dumps
  the classes a JVM loaded into an archive when it exits (``-XX:ArchiveClassesAtExit``); a
  later JVM with the same JDK and class path maps the archive instead
  (``-XX:SharedArchiveFile``). The first local session of a JDK + Spark install writes the
  archive (about 190 MB, under ``~/.cache/kafka-security-audit/jvm``; the command waits for its
  JVM to exit, a few seconds, and then moves the finished file in place); every later one maps
  it. ``KAFKA_AUDIT_JVM_ARCHIVE=off`` turns this off; a directory puts the archive there.
- **The JIT's optimising compiler (C2)** competes with the work for the machine's cores and
  pays off only on long runs. Below ``QUICK_START_BYTES`` of input the JVM compiles with C1
  only (``-XX:TieredStopAtLevel=1``). From there up to ``LESS_INLINING_BYTES`` it inlines
  less at hot call sites (``-XX:FreqInlineSize=100``; HotSpot's default is 325 bytes of
  bytecode): C2 then compiles Spark's large generated methods in less time (eighteenth part),
  and it leaves the Janino compiler's and ASM's classes to C1 (``COMPILER_DIRECTIVES``,
  twentieth part); below ``GENERATED_C1_BYTES`` Spark's generated classes too
  (``GENERATED_C1_DIRECTIVES``, twenty-first part). Wherever C2 runs on JDK 17 to 19, its
  code cache is swept less often (``FEWER_SWEEPS``, twenty-eighth part).

A JVM only maps an archive whose JDK and class path match; the check is the JVM's own. A
truncated archive crashes a JVM that maps it, so an archive is used only when its size is the
one recorded when it was moved in place, and a session that fails to start with it is started
again without it (``jobs.session.build_session``). ``-Xlog:cds`` messages are off: HotSpot
prints them on standard output, which ``--json`` keeps for its one document.

Measured on this machine (2 cores, ``kafka-audit run --input samples``, whole processes,
side by side): C1 only 0.88 of the wall time, the archive another 0.88; at 10,000 lines
(9 MB) C1 only 0.95, at 60,000 lines (51 MB) 1.09. ``FreqInlineSize=100``, whole runs paired:
0.91 of the wall time on 300k lines (253 MB), 0.90 on 1M (881 MB): C2's one thread (two cores
give one) used 31-35 s of CPU instead of 55 s; on 10M lines (8.8 GB), where the compiled code
runs ten times longer, 1.02, and the bare read + parse 1.07: hence the upper bound. The
directives, whole runs paired: 0.93 of the CPU and wall time on 300k lines, 0.99 on 1M.
Spark's generated classes by C1 only, in one process, paired: 0.91 and 0.95 of the JVM's CPU
on 300k lines (C2 6-7 s less, the executors' CPU unchanged); whole runs paired 0.92 of the
CPU on 300k lines and 0.97 on 538k (463 MiB); on 1M lines (841 MB), in one process, 1.01 and
1.02 (C2 10 s less, the executors 12 s more: there the generated code runs long enough to
earn C2 back). Measured again on 2026-12-05's code and machine (thirty-third part), whole
runs paired: C1 only for the generated classes still 0.92 of the CPU at 80k lines (68 MB) and
0.94 at 150k (127 MB), but 1.00 of the CPU and 1.05 of the wall time at 300k (253 MB), whose
request parse alone took 1.75 times the CPU with C1's code on a 1M lake: hence
``GENERATED_C1_BYTES`` between the two, at 192 MiB (it was 512 MiB).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

from jobs.java import cache_folder

log = logging.getLogger(__name__)

ARCHIVE_ENV = "KAFKA_AUDIT_JVM_ARCHIVE"
"""``off`` (or ``0``, ``false``, ``no``): no class archive; a directory: keep it there."""

QUICK_START_BYTES = 16 * 1024 * 1024
"""Input below this many on-disk bytes runs with C1 only (``-XX:TieredStopAtLevel=1``)."""

LESS_INLINING_BYTES = 2 * 1024 * 1024 * 1024
"""Input from ``QUICK_START_BYTES`` up to below this many bytes runs with ``LESS_INLINING``."""

LESS_INLINING = "-XX:FreqInlineSize=100"
"""C2 inlines methods of at most 100 bytes of bytecode at hot call sites (default 325)."""

FEWER_SWEEPS = "-XX:SweeperThreshold=20"
"""HotSpot's code cache sweeper runs when code amounting to this percentage of the code cache
has been made not entrant (default 0.5%: 1.2 MB of 240 MB). Each run walks every compiled
method; with C2 on, a run compiles tens of thousands, and the sweeper thread took 1.8 s of a
300k-line run's JVM CPU and 2.5 s of a 1M-line one's. Freeing the cache still starts when it
is 90% full (``StartAggressiveSweepingAt``). JDK 17 to 19 only: JDK 20 removed the sweeper
(issue 15, twenty-eighth part)."""

SWEEPER_MAJORS = range(17, 20)
"""Java versions whose HotSpot has the code cache sweeper (``FEWER_SWEEPS``)."""

COMPILER_DIRECTIVES = Path(__file__).with_name("jvm-compiler-directives.json")
"""HotSpot compiler directives (JEP 165) given with ``LESS_INLINING``: the Janino compiler's
and ASM's classes are compiled by C1 only. Spark runs them to compile its generated Java and
to read closures' bytecode: hot enough for C2 to spend about 3 s of a 300k-line run on them,
not long enough to earn it back (issue 15, twentieth part)."""

GENERATED_C1_BYTES = 192 * 1024 * 1024
"""Input from ``QUICK_START_BYTES`` up to below this many bytes is given
``GENERATED_C1_DIRECTIVES`` instead of ``COMPILER_DIRECTIVES``."""

GENERATED_C1_DIRECTIVES = Path(__file__).with_name("jvm-compiler-directives-generated.json")
"""``COMPILER_DIRECTIVES`` plus Spark's generated classes (``GeneratedClass`` and its nested
projections, iterators, predicates and orderings) by C1 only. A 300k-line run has Janino
compile about 600 of them and C2 compile about 1,100 of their methods; on a smaller input
(150k lines, 127 MB) the code C1 gives them runs about as fast for what is left of the run,
from 300k lines (253 MB) on C2's code pays (issue 15, twenty-first and thirty-third parts)."""

QUIET_CDS = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""HotSpot's class-sharing messages, printed on stdout by default, turned off."""

#: Options that say the user chose class sharing or the JIT themselves: ours are left out.
_ARCHIVE_OPTIONS = ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare", "SharedClassListFile")
_JIT_OPTIONS = ("TieredStopAtLevel", "TieredCompilation")
_INLINING_OPTIONS = ("FreqInlineSize", *_JIT_OPTIONS)
_SWEEPER_OPTIONS = ("SweeperThreshold", "CodeCacheFlushing", "ReservedCodeCacheSize")

#: A partly written archive older than this was left by a JVM that died: removed.
_STALE_PART_SECONDS = 3600.0
#: How long the command waits, at its end, for its JVM to write the archive and exit.
DUMP_WAIT_SECONDS = 300.0


@dataclass(frozen=True)
class JvmStartup:
    """What a JVM this process starts is given.

    Attributes:
        options: JVM options to add to ``spark.driver.extraJavaOptions`` (space-separated).
        archive: the class archive mapped, or to be written by this JVM; None: none.
        writing: the file this JVM writes the archive into at exit (moved to ``archive`` by
            ``finish``); None when it maps ``archive`` or there is none.
    """

    options: str = ""
    archive: Path | None = None
    writing: Path | None = None

    def without_archive(self) -> JvmStartup:
        """The same start-up with no class archive (the JIT choice kept)."""
        kept = " ".join(o for o in self.options.split() if not _is_archive_option(o))
        return JvmStartup(options=kept)


def _is_archive_option(option: str) -> bool:
    return any(name in option for name in _ARCHIVE_OPTIONS) or option.startswith("-Xlog:cds")


def plan(
    configured: str, input_bytes: int | None, class_path: str, java_major: int | None = None
) -> JvmStartup:
    """The start-up options for a JVM this process is about to start.

    Args:
        configured: ``spark.driver.extraJavaOptions`` as configured: a user's own class-sharing
            or JIT option turns ours off.
        input_bytes: on-disk bytes the command will read; None: unknown (C2, HotSpot's
            defaults).
        class_path: what identifies the JVM's class path (``archive_key``'s input).
        java_major: the JVM's Java version (``jobs.java.release_major``); None: unknown (no
            option that depends on it).

    Returns:
        The options, and the archive mapped or to be written (see the module docstring).
    """
    options = jit_options(configured, input_bytes)
    options += _sweeper_options(configured, input_bytes, java_major)
    folder = archive_folder()
    if folder is None or any(name in configured for name in _ARCHIVE_OPTIONS):
        return JvmStartup(options=" ".join(options))
    archive = folder / f"spark-classes-{archive_key(class_path)}.jsa"
    if archive_ready(archive):
        options += [f"-XX:SharedArchiveFile={archive}", QUIET_CDS]
        return JvmStartup(options=" ".join(options), archive=archive)
    writing = archive.with_name(f"{archive.name}.{os.getpid()}.part")
    options += [f"-XX:ArchiveClassesAtExit={writing}", QUIET_CDS]
    return JvmStartup(options=" ".join(options), archive=archive, writing=writing)


def jit_options(configured: str, input_bytes: int | None) -> list[str]:
    """The JIT options for a JVM that will read ``input_bytes``: C1 only below
    ``QUICK_START_BYTES``; ``LESS_INLINING`` and ``GENERATED_C1_DIRECTIVES``
    from there up to below ``GENERATED_C1_BYTES``, ``LESS_INLINING`` and
    ``COMPILER_DIRECTIVES`` from there up to below ``LESS_INLINING_BYTES``; nothing for an
    unknown size, a larger one, or when ``configured`` names the user's own choice (tiers;
    ``FreqInlineSize`` or a directives file for the directives).

    ``plan`` gives them to the JVM the command starts; a JVM that ``spark-submit`` starts gets
    them only from its command line (docs/running.md; the suite's spark-submit and
    standalone-cluster tests give them so)."""
    if input_bytes is None:
        return []
    if input_bytes < QUICK_START_BYTES:
        return [] if any(n in configured for n in _JIT_OPTIONS) else ["-XX:TieredStopAtLevel=1"]
    if input_bytes >= LESS_INLINING_BYTES:
        return []
    options = [] if any(n in configured for n in _INLINING_OPTIONS) else [LESS_INLINING]
    small = input_bytes < GENERATED_C1_BYTES
    return options + _directives_options(
        configured, GENERATED_C1_DIRECTIVES if small else COMPILER_DIRECTIVES
    )


def _sweeper_options(configured: str, input_bytes: int | None, java_major: int | None) -> list[str]:
    """``FEWER_SWEEPS`` where C2 runs (from ``QUICK_START_BYTES``) on a JVM with a sweeper
    (``SWEEPER_MAJORS``); nothing for an unknown size or version, or when ``configured``
    names the user's own code cache or sweeper choice."""
    if input_bytes is None or input_bytes < QUICK_START_BYTES or java_major not in SWEEPER_MAJORS:
        return []
    return [] if any(n in configured for n in _SWEEPER_OPTIONS) else [FEWER_SWEEPS]


def _directives_options(configured: str, directives: Path) -> list[str]:
    """The ``directives`` file as JVM options; none when ``configured`` names a directives
    file or a JIT tier option of the user's, or the file is missing or its path holds
    whitespace (Spark splits the options at whitespace). The VM's own messages then go to
    standard error."""
    path = str(directives)
    chosen = ("CompilerDirectivesFile", *_JIT_OPTIONS)
    if any(n in configured for n in chosen) or not directives.is_file():
        return []
    if any(c.isspace() for c in path):
        return []
    # HotSpot prints "1 compiler directives added" on standard output, which ``--json``
    # keeps for its one document: the VM's own output goes to standard error instead.
    return [
        "-XX:+DisplayVMOutputToStderr",
        "-XX:+UnlockDiagnosticVMOptions",
        f"-XX:CompilerDirectivesFile={path}",
    ]


def archive_folder() -> Path | None:
    """The folder of class archives (``KAFKA_AUDIT_JVM_ARCHIVE``, else the user's cache), made
    if missing; None when turned off or not writable (stale partial archives are removed)."""
    chosen = os.environ.get(ARCHIVE_ENV, "").strip()
    if chosen.lower() in {"off", "0", "false", "no"}:
        return None
    folder = Path(chosen) if chosen else cache_folder("jvm")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for part in folder.glob("*.part"):
            if time.time() - part.stat().st_mtime > _STALE_PART_SECONDS:
                part.unlink(missing_ok=True)
    except OSError as error:
        log.info("no JVM class archive: %s", error)
        return None
    return folder if os.access(folder, os.W_OK) else None


def archive_key(class_path: str) -> str:
    """Hex digest naming the archive of one JDK + class path: ``class_path`` is what
    ``jobs.session`` gathers (the JDK's location and ``release`` file, Spark's jars' names and
    sizes, the class-path and heap-size settings)."""
    return sha256(class_path.encode()).hexdigest()[:16]


def archive_ready(archive: Path) -> bool:
    """Whether ``archive`` exists with the size recorded when it was moved in place."""
    try:
        recorded = json.loads(_record(archive).read_text())["size"]
        return bool(archive.stat().st_size == recorded)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _record(archive: Path) -> Path:
    return archive.with_name(f"{archive.name}.json")


def discard(startup: JvmStartup) -> None:
    """Remove ``startup``'s archive and its record (a JVM did not start with it)."""
    if startup.archive is not None:
        for path in (startup.archive, _record(startup.archive)):
            path.unlink(missing_ok=True)


def finish(startup: JvmStartup, jvm_exited: bool) -> bool:
    """After the JVM exited: move the archive it wrote into place and record its size.

    Args:
        startup: the start-up ``plan`` gave this JVM.
        jvm_exited: whether the JVM exited with status 0 (it writes the archive before exiting).

    Returns:
        Whether an archive was moved into place. A partial file is removed otherwise.
    """
    writing, archive = startup.writing, startup.archive
    if writing is None or archive is None:
        return False
    try:
        if not jvm_exited or not writing.is_file() or writing.stat().st_size == 0:
            writing.unlink(missing_ok=True)
            return False
        size = writing.stat().st_size
        os.replace(writing, archive)
        _record(archive).write_text(json.dumps({"size": size}))
    except OSError as error:
        log.info("JVM class archive not kept: %s", error)
        return False
    log.info("JVM class archive written: %s (%d MB); later commands start faster", archive,
             size // 1_000_000)  # fmt: skip
    return True
