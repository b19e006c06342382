"""The driver of ``kafka-audit generate``: build the world, merge the areas by time, write.

Every area is a generator of ``LogLine`` in time order; ``heapq.merge`` interleaves them
lazily, each line is rendered and written as it comes (flat memory: nothing is kept per
line except the positions of tagged evidence lines), and the truth is written at the end.
"""

from __future__ import annotations

import heapq
import importlib
import logging
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from jobs.simulator.base import Area, LogLine, World
from jobs.simulator.layouts import renderer
from jobs.simulator.truth import TruthRecorder
from jobs.simulator.world import GenerateOptions, build_world
from jobs.simulator.writer import CorpusWriter

log = logging.getLogger(__name__)

#: Every area: (name, module, class). Modules that do not exist yet are skipped with a log line.
AREAS: tuple[tuple[str, str, str], ...] = (
    ("auth", "jobs.simulator.auth", "AuthArea"),
    ("requests", "jobs.simulator.requests", "RequestsArea"),
    ("authorizer", "jobs.simulator.authorizer", "AuthorizerArea"),
    ("tokens", "jobs.simulator.tokens", "TokensArea"),
    ("forwarding", "jobs.simulator.forwarding", "ForwardingArea"),
    ("connect", "jobs.simulator.connect", "ConnectArea"),
)
PROGRESS_EVERY = 1_000_000


def load_areas(selected: tuple[str, ...] | None = None) -> list[Area]:
    """Instantiate the registered areas (``selected`` names only, when given).

    A missing module is skipped with a warning (an area being written by someone else).

    Raises:
        ValueError: a selected name that is not registered.
    """
    known = {name for name, _, _ in AREAS}
    if selected is not None and (unknown := sorted(set(selected) - known)):
        raise ValueError(f"unknown area(s) {unknown}; expected some of {sorted(known)}")
    areas: list[Area] = []
    for name, module_name, class_name in AREAS:
        if selected is not None and name not in selected:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            log.warning("simulator area %r skipped: module %s does not exist", name, module_name)
            continue
        areas.append(getattr(module, class_name)())
    return areas


@dataclass(frozen=True)
class GenerateSummary:
    """What ``generate`` wrote."""

    out: Path
    lines: int
    files: list[str]
    lines_by_stream: dict[str, int]
    truth_rows: dict[str, int]
    areas: list[str]
    seconds: float

    def render(self) -> str:
        """A short human summary."""
        rate = self.lines / self.seconds if self.seconds > 0 else 0.0
        streams = ", ".join(f"{k} {v}" for k, v in sorted(self.lines_by_stream.items()))
        truth = ", ".join(f"{k} {v}" for k, v in sorted(self.truth_rows.items()))
        return (
            f"generated {self.lines} lines in {len(self.files)} files under {self.out} "
            f"({self.seconds:.1f} s, {rate:,.0f} lines/s)\n"
            f"  areas: {', '.join(self.areas)}\n  lines by stream: {streams}\n"
            f"  truth rows: {truth}"
        )


def _keyed(area: Area, world: World, truth: TruthRecorder) -> Iterator[tuple[int, int, LogLine]]:
    # (ts, counter, line): the counter keeps heapq.merge from comparing LogLine objects and
    # keeps each area's own order for equal times.
    for n, line in enumerate(area.lines(world, truth)):
        yield line.ts_ms, n, line


def generate(options: GenerateOptions, progress: TextIO | None = sys.stderr) -> GenerateSummary:
    """Write the corpus and its truth under ``options.out``.

    Returns:
        The summary (lines, files, truth rows, time).

    Raises:
        ValueError: invalid options (see ``world.build_world``).
        OSError: the output folder cannot be written.
    """
    began = time.monotonic()
    world = build_world(options)
    areas = load_areas(options.areas)
    for area in areas:
        area.configure(world)
    nodes = [*world.brokers, *world.controllers, *world.connect_workers]
    render = {node.name: renderer(node.layout, f"{node.name} kafka ") for node in nodes}
    options.out.mkdir(parents=True, exist_ok=True)
    writer = CorpusWriter(options.out, nodes, render, options.rotate_lines, options.gzip)
    writer.write_properties()
    truth = TruthRecorder()
    streams: Counter[str] = Counter()
    merged = heapq.merge(*(_keyed(area, world, truth) for area in areas), key=lambda t: t[0])
    write = writer.write
    for written, (_, _, line) in enumerate(merged, 1):
        write(line)
        streams[line.stream] += 1
        if progress is not None and written % PROGRESS_EVERY == 0:
            rate = written / max(time.monotonic() - began, 1e-9)
            progress.write(f"generate: {written:,} lines ({rate:,.0f} lines/s)\n")
            progress.flush()
    writer.close()
    rows = truth.write(options.out, writer.positions)
    return GenerateSummary(
        out=options.out,
        lines=writer.lines_written,
        files=writer.files,
        lines_by_stream=dict(streams),
        truth_rows=rows,
        areas=[area.name for area in areas],
        seconds=time.monotonic() - began,
    )
