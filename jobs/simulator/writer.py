"""Write rendered lines into node folders: one file per stream, rotated and gzipped on request.

Rotation follows log4j's ``RollingFileAppender``: the live file keeps its name
(``server.log``), the most recent rotated file is ``server.log.1``, older ones ``.2``, ``.3``
...; with ``gzip``, rotated files are compressed (``server.log.1.gz``), the live one never.
Since the number of parts is only known at the end, parts are written under temporary names
and renamed by :meth:`CorpusWriter.close`. Tagged lines (``LogLine.tag``) are recorded as
(file, 1-based line number) once the names are final.
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jobs.simulator.base import STREAM_FILES, LogLine, Node
from jobs.simulator.layouts import logging_config_text

_BUFFER_BYTES = 1 << 20


def properties_text(properties: dict[str, str]) -> str:
    """A Java ``.properties`` file of ``properties`` (keys sorted; values escaped as
    ``java.util.Properties.store`` does for ``\\``, newlines and leading spaces)."""

    def escape(text: str) -> str:
        text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        return "\\" + text if text.startswith(" ") else text

    return "".join(f"{escape(k)}={escape(v)}\n" for k, v in sorted(properties.items()))


def properties_file_name(node: Node) -> str:
    """``connect-distributed.properties`` for Connect workers, else ``server.properties``."""
    return "connect-distributed.properties" if node.role == "connect" else "server.properties"


@dataclass
class _Sink:
    """One (node, stream): its current part's handle and line counts."""

    folder: Path
    file_name: str
    rotate_lines: int
    handle: object | None = None
    part: int = 0
    lines_in_part: int = 0
    parts: list[Path] = field(default_factory=list)
    hold: bool = False  # the previous line asked to stay with this one

    def _open(self) -> None:
        path = self.folder / f".{self.file_name}.part{len(self.parts):05d}"
        self.parts.append(path)
        self.handle = open(path, "w", encoding="utf-8", buffering=_BUFFER_BYTES)  # noqa: SIM115
        self.lines_in_part = 0

    def write(self, text: str, physical_lines: int, keep_with_next: bool) -> tuple[int, int]:
        """Write one record; returns (part index, 1-based line number of its first line)."""
        held, self.hold = self.hold, keep_with_next
        if self.handle is None or (
            not held
            and self.rotate_lines > 0
            and self.lines_in_part + physical_lines > self.rotate_lines
        ):
            if self.handle is not None:
                self.handle.close()  # type: ignore[attr-defined]
            self._open()
        self.handle.write(text)  # type: ignore[attr-defined]
        self.handle.write("\n")  # type: ignore[attr-defined]
        first = self.lines_in_part + 1
        self.lines_in_part += physical_lines
        return len(self.parts) - 1, first

    def finish(self, compress: bool) -> list[str]:
        """Close and rename the parts; returns their final file names, part index order."""
        if self.handle is not None:
            self.handle.close()  # type: ignore[attr-defined]
        count = len(self.parts)
        names: list[str] = []
        for index, path in enumerate(self.parts):
            age = count - 1 - index  # 0 = the live file
            name = self.file_name if age == 0 else f"{self.file_name}.{age}"
            if age > 0 and compress:
                name += ".gz"
                # mtime=0: the header would carry the write time, and the same seed must give
                # the same bytes.
                with (
                    open(path, "rb") as source,
                    gzip.GzipFile(self.folder / name, "wb", mtime=0) as target,
                ):
                    shutil.copyfileobj(source, target, _BUFFER_BYTES)
                os.remove(path)
            else:
                os.replace(path, self.folder / name)
            names.append(name)
        return names


class CorpusWriter:
    """Writes every node's streams under ``out``.

    Args:
        out: the corpus folder (node folders are created in it).
        nodes: every node; its folder is ``out / node.name``.
        render: per node name, the function rendering a line in that node's layout.
        rotate_lines: rotate a stream's file after this many lines (0 = never).
        compress: gzip rotated files.
    """

    def __init__(
        self,
        out: Path,
        nodes: list[Node],
        render: dict[str, Callable[[LogLine], str]],
        rotate_lines: int = 0,
        compress: bool = False,
    ) -> None:
        self.out = out
        self.nodes = {node.name: node for node in nodes}
        self.render = render
        self.rotate_lines = rotate_lines
        self.compress = compress
        self.lines_written = 0
        self._sinks: dict[tuple[str, str], _Sink] = {}
        self._tags: dict[str, tuple[tuple[str, str], int, int]] = {}
        self.positions: dict[str, tuple[str, int]] = {}
        self.files: list[str] = []
        for node in nodes:
            (out / node.name).mkdir(parents=True, exist_ok=True)

    def write(self, line: LogLine) -> None:
        """Render and write one line to its node's stream; record its position if tagged."""
        key = (line.node, line.stream)
        sink = self._sinks.get(key)
        if sink is None:
            sink = _Sink(self.out / line.node, STREAM_FILES[line.stream], self.rotate_lines)
            self._sinks[key] = sink
        text = self.render[line.node](line)
        physical = text.count("\n") + 1 if "\n" in line.message else 1
        part, number = sink.write(text, physical, line.keep_with_next)
        self.lines_written += physical
        if line.tag is not None:
            self._tags[line.tag] = (key, part, number)

    def write_properties(self) -> None:
        """Each node's properties file (``server.properties`` / ``connect-distributed...``),
        and its ``log4j.properties`` when its layout is known only from one
        (``layouts.logging_config_text``)."""
        for node in self.nodes.values():
            path = self.out / node.name / properties_file_name(node)
            path.write_text(properties_text(node.properties), encoding="utf-8")
            logging = logging_config_text(node.layout)
            if logging is not None:
                (self.out / node.name / "log4j.properties").write_text(logging, encoding="utf-8")

    def close(self) -> None:
        """Finish every file; fills ``positions`` (tag -> (path relative to ``out``, line))
        and ``files`` (every log file written, relative, sorted)."""
        names: dict[tuple[str, str], list[str]] = {}
        for key, sink in sorted(self._sinks.items()):
            names[key] = sink.finish(self.compress)
            self.files.extend(f"{key[0]}/{name}" for name in names[key])
        self.files.sort()
        for tag, (key, part, number) in self._tags.items():
            self.positions[tag] = (f"{key[0]}/{names[key][part]}", number)
