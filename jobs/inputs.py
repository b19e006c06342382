"""Find the log files behind the run's inputs and the node each one belongs to.

A node's logs usually sit in one folder, often beside its configuration: a ``*.properties``
file there (Kafka ``server.properties`` / ``broker.properties`` / ``controller.properties``, or a
Connect worker's ``connect-distributed.properties``) is that node's config. Properties files are
configuration, never log records; they are read with ``javaproperties``.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import logging
import os
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import javaproperties

from jobs.config import SourceSpec
from jobs.errors import ConfigError, InputError
from jobs.logging_config import LoggingLayouts, folder_logging_config
from schemas.raw_lines import LAYOUT_DECLARED, LAYOUT_LOGGING_CONFIG
from transforms.bronze.layout import (
    HEADER_PATTERN,
    JSON_LINE_PATTERN,
    JSON_TIME_PATTERN,
    DeclaredLayout,
    needs_own_regex,
)
from transforms.bronze.log4j_pattern import BUILTIN_LAYOUTS, LayoutPatternError, compile_pattern

log = logging.getLogger(__name__)

#: File names taken from folders: Kafka's and Connect's logs, rotated (``server.log.1``,
#: ``server.log.2026-11-20-13``) and gzipped, and ``*.out`` / ``*.txt`` captures.
LOG_FILE_NAME = re.compile(
    r"\.log(?:\.[\w.-]+)?$|\.log\.gz$|\.out(?:\.\d+)?(?:\.gz)?$|\.txt(?:\.gz)?$"
)


@dataclass(frozen=True)
class NodeConfig:
    """A node's properties file and what it says about the node.

    Attributes:
        path: the properties file.
        properties: every key, as Kafka would read it (Java properties syntax).
        node_id: ``node.id`` / ``broker.id`` (Kafka), ``client.id`` or
            ``connect-<rest.advertised.host.name>:<rest.advertised.port>`` (Connect), or None.
        role: ``broker``, ``controller``, ``broker,controller`` (``process.roles``) or
            ``connect``.
    """

    path: Path
    properties: Mapping[str, str]
    node_id: str | None
    role: str


@dataclass(frozen=True)
class SourceFile:
    """One log file to ingest and the node it belongs to."""

    path: Path
    node_key: str
    node_folder_name: str
    time_zone: str
    config: NodeConfig | None
    forced_node_id: str | None
    #: The log4j ConversionPattern the file was written with, if declared or found, and where
    #: it came from (``declared``: the source's layout_pattern; ``logging_config``: the node's
    #: log4j config beside its logs).
    layout_pattern: str | None = None
    layout_origin: str | None = None

    @property
    def node_id(self) -> str | None:
        """The node id the configuration gives (forced id first), else None."""
        return self.forced_node_id or (self.config.node_id if self.config else None)


def read_properties(path: Path) -> dict[str, str]:
    """Read a Java ``.properties`` file (escapes, continuations, ``:`` / ``=`` separators).

    Raises:
        ConfigError: the file cannot be read or decoded.
    """
    try:
        with path.open("r", encoding="latin-1") as handle:
            return dict(javaproperties.load(handle))
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path}: cannot read properties file ({error})") from error


def node_config(path: Path) -> NodeConfig | None:
    """Interpret a properties file as a Kafka server or Connect worker config, else None."""
    props = read_properties(path)
    if "config.storage.topic" in props or "offset.storage.topic" in props:
        host, port = props.get("rest.advertised.host.name"), props.get("rest.advertised.port")
        worker_id = props.get("client.id") or (f"connect-{host}:{port}" if host and port else None)
        return NodeConfig(path, props, worker_id, "connect")
    if any(key in props for key in ("node.id", "broker.id", "process.roles", "listeners")):
        node_id = props.get("node.id") or props.get("broker.id")
        if node_id is not None and node_id.strip() in ("", "-1"):
            node_id = None
        role = props.get("process.roles", "broker").replace(" ", "") or "broker"
        return NodeConfig(path, props, node_id.strip() if node_id else None, role)
    return None


def folder_config(folder: Path) -> NodeConfig | None:
    """The node config in ``folder``: the one properties file that describes a node.

    Several node configs with different ids in one folder are ambiguous: none is used and a
    warning says so.
    """
    configs = [c for p in sorted(folder.glob("*.properties")) if (c := node_config(p)) is not None]
    with_id = [c for c in configs if c.node_id is not None]
    if len({c.node_id for c in with_id}) > 1:
        names = ", ".join(c.path.name for c in with_id)
        log.warning("%s: several node configs (%s); node ids come from the logs", folder, names)
        return None
    return with_id[0] if with_id else (configs[0] if configs else None)


def _expand(spec: SourceSpec) -> list[Path]:
    pattern = os.path.expanduser(spec.path)
    if glob.has_magic(pattern):
        matches = [Path(p) for p in sorted(glob.glob(pattern, recursive=True))]
        if not matches:
            raise InputError(f"input {spec.path!r}: the pattern matches no file")
    else:
        matches = [Path(pattern)]
    files: list[Path] = []
    for match in matches:
        if match.is_dir():
            found = sorted(
                p
                for p in match.rglob("*")
                if p.is_file() and not p.name.startswith(".") and LOG_FILE_NAME.search(p.name)
            )
            if not found:
                log.warning("input %s: folder holds no log files (*.log*, *.out, *.txt)", match)
            files.extend(found)
        elif match.is_file():
            files.append(match)
        else:
            raise InputError(f"input {spec.path!r}: no such file or folder")
    for path in files:
        if not os.access(path, os.R_OK):
            raise InputError(f"input {path}: file is not readable")
    return files


def _logging_config(folder: Path) -> LoggingLayouts | None:
    """The node's logging config in ``folder``, or None; a config that cannot be read is
    warned about and left out (the built-in layouts still apply)."""
    try:
        return folder_logging_config(folder)
    except ConfigError as error:
        log.warning("%s; its layouts are not used", error)
        return None


def _layout(
    spec: SourceSpec, path: Path, logging: LoggingLayouts | None
) -> tuple[str | None, str | None]:
    """(pattern, origin) of a file: the source's layout_pattern, else its node's config's."""
    if spec.layout_pattern is not None:
        return spec.layout_pattern, LAYOUT_DECLARED
    found = logging.pattern_for(path) if logging is not None else None
    return (found, LAYOUT_LOGGING_CONFIG) if found is not None else (None, None)


def discover_sources(specs: Sequence[SourceSpec]) -> list[SourceFile]:
    """List every log file of the inputs with its node folder, node config and layout.

    Raises:
        InputError: a path does not exist, a glob matches nothing, a file is unreadable, or
            the inputs hold no log file at all.
        ConfigError: a properties file beside the logs cannot be read.
    """
    seen: dict[Path, SourceFile] = {}
    configs: dict[Path, NodeConfig | None] = {}
    logging_configs: dict[Path, LoggingLayouts | None] = {}
    for spec in specs:
        for path in _expand(spec):
            resolved = path.resolve()
            folder = resolved.parent
            if folder not in configs:
                configs[folder] = folder_config(folder)
                logging_configs[folder] = _logging_config(folder)
            pattern, origin = _layout(spec, resolved, logging_configs[folder])
            seen.setdefault(
                resolved,
                SourceFile(
                    path=resolved,
                    node_key=str(folder),
                    node_folder_name=folder.name,
                    time_zone=spec.time_zone,
                    config=configs[folder],
                    forced_node_id=spec.node_id,
                    layout_pattern=pattern,
                    layout_origin=origin,
                ),
            )
    if not seen:
        raise InputError("the inputs hold no log file (*.log*, *.out, *.txt, or a file path)")
    return list(seen.values())


def declared_layouts(sources: Iterable[SourceFile]) -> list[DeclaredLayout]:
    """The compiled layouts the files were declared with, each with its files' paths (as
    ``jobs.ingest.read_lines`` reports them), for ``transforms.bronze.records.number_lines``.

    Patterns the built-in header regex parses as such (Kafka's own) need no regex and are left
    out. A node's logging config whose pattern cannot be compiled is warned about and left out
    (a source's layout_pattern was compiled when the config was read).
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for source in sources:
        if source.layout_pattern is None or source.layout_origin is None:
            continue
        if needs_own_regex(source.layout_pattern):
            key = (source.layout_origin, source.layout_pattern)
            groups.setdefault(key, []).append(str(source.path))
    declared: list[DeclaredLayout] = []
    for (origin, pattern), paths in groups.items():
        try:
            declared.append((compile_pattern(pattern, origin), tuple(paths)))
        except LayoutPatternError as error:
            log.warning("%d file(s) such as %s: %s; the built-in layouts apply", len(paths),
                        paths[0], error)  # fmt: skip
    return declared


def source_rows(sources: Iterable[SourceFile]) -> list[tuple[str, str, str, str | None, str]]:
    """Rows for the small ``sources`` DataFrame: (source_path, node_key, node_folder_name,
    config_node_id, time_zone), with source_path as the local path Spark reports."""
    return [(str(s.path), s.node_key, s.node_folder_name, s.node_id, s.time_zone) for s in sources]


#: Property names whose values are secrets (never carried into a DataFrame).
SECRET_PROPERTY = re.compile(
    r"(password|secret|jaas\.config|master\.key|private\.key|credentials?)(\.|$)", re.IGNORECASE
)


def node_property_rows(
    sources: Iterable[SourceFile],
) -> list[tuple[str | None, str, str, str, str | None, bool]]:
    """Rows of ``schemas.node_properties.NODE_PROPERTIES`` for the node configs of ``sources``
    (each config once): (node_id, role, config_path, property, value, is_secret). Values of
    secret properties (``SECRET_PROPERTY``) are None."""
    rows: list[tuple[str | None, str, str, str, str | None, bool]] = []
    seen: set[Path] = set()
    for source in sources:
        config = source.config
        if config is None or config.path in seen:
            continue
        seen.add(config.path)
        node_id = source.forced_node_id or config.node_id
        for name, value in sorted(config.properties.items()):
            secret = bool(SECRET_PROPERTY.search(name))
            kept = None if secret else value.strip()
            rows.append((node_id, config.role, str(config.path), name, kept, secret))
    return rows


def _gzip_damage(path: Path) -> str | None:
    """Why a ``.gz`` file cannot be read to its end, or None. Decompresses it once (about
    as fast as Spark reads it; see docs/damaged-input.md)."""
    try:
        with gzip.open(path, "rb") as stream:
            while stream.read(1 << 20):
                pass
    except FileNotFoundError:
        return "removed after it was listed"
    except EOFError:
        return (
            "truncated gzip: the stream ends before its end marker (still being copied or "
            "rotated?); the lines before the damage were read"
        )
    except (OSError, zlib.error) as error:
        return f"damaged gzip ({error}); the lines before the damage were read"
    return None


def damaged_files(sources: Sequence[SourceFile]) -> dict[str, str]:
    """The source files that cannot be read whole, by path, with the reason in one line.

    A truncated or corrupt ``.gz`` (its readable lines are still read: ``jobs.ingest``
    reads with Spark's ``ignoreCorruptFiles``), and a file removed between listing and
    reading (``ignoreMissingFiles``). A plain file that grows while it is read is read as
    far as it was written, which is not damage. Never raises.
    """
    damaged = {}
    for source in sources:
        path = source.path
        if not path.exists():
            damaged[str(path)] = "removed after it was listed"
        elif path.name.endswith(".gz"):
            reason = _gzip_damage(path)
            if reason is not None:
                damaged[str(path)] = reason
    return damaged


#: How much of the head of each file ``require_kafka_logs`` reads (decompressed), and the
#: longest line it tries (longer ones are skipped, not matched).
SNIFF_BYTES = 256 * 1024
SNIFF_LINE_CHARS = 16 * 1024
#: The file names Kafka and Connect write, for the message of an input without any.
KAFKA_LOG_NAMES = (
    "server.log, kafka-authorizer.log, kafka-request.log, controller.log, state-change.log, "
    "connect.log"
)


def _head(path: Path) -> list[str]:
    """The lines of the first ``SNIFF_BYTES`` of ``path`` (decompressed when ``.gz``); as many
    as could be read from a damaged or vanished file."""
    data = b""
    try:
        with gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb") as stream:
            while len(data) < SNIFF_BYTES and (chunk := stream.read(64 * 1024)):
                data += chunk
    except (OSError, EOFError, zlib.error):
        pass  # damaged: jobs.inputs.damaged_files reports it; keep what was read
    return data[:SNIFF_BYTES].decode("utf-8", errors="replace").splitlines()


def _record_patterns(source: SourceFile) -> list[re.Pattern[str]]:
    """Regexes of a record's first line in the layouts the pipeline reads for ``source``."""
    texts = [HEADER_PATTERN, *(layout.regex for layout in BUILTIN_LAYOUTS)]
    if source.layout_pattern is not None:
        with contextlib.suppress(LayoutPatternError):  # warned about by declared_layouts
            texts.append(compile_pattern(source.layout_pattern, LAYOUT_DECLARED).regex)
    return [re.compile(text) for text in texts]


def holds_log_records(source: SourceFile) -> bool:
    """Whether a line of the head of ``source`` is a log record in a layout the pipeline
    reads: Kafka's, Connect's, Strimzi's and the other built-in log4j layouts, the file's
    declared or configured layout, or a JSON event with a ``time`` (Confluent audit log)."""
    patterns = _record_patterns(source)
    json_line, json_time = re.compile(JSON_LINE_PATTERN), re.compile(JSON_TIME_PATTERN)
    for line in _head(source.path):
        if len(line) > SNIFF_LINE_CHARS:
            continue
        if json_line.search(line) and json_time.search(line):
            return True
        if any(pattern.search(line) for pattern in patterns):
            return True
    return False


def require_kafka_logs(sources: Sequence[SourceFile]) -> None:
    """Stop before Spark when no input file holds a Kafka log record near its start.

    Reads the head of the files (``SNIFF_BYTES`` each) until one holds a record
    (``holds_log_records``): usually only the first file.

    Raises:
        InputError: one line saying which files were found, under which folder, and what
            was expected (a notes file, a binary, logs in a layout to declare).
    """
    if any(holds_log_records(source) for source in sources):
        return
    paths = [str(source.path) for source in sources]
    folder = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
    names = [os.path.relpath(p, folder) if folder else p for p in paths]
    shown = ", ".join(names[:3]) + (f" (+{len(names) - 3} more)" if len(names) > 3 else "")
    raise InputError(
        f"no Kafka log among the {len(paths)} input file(s) under {folder or '.'} ({shown}): "
        "no line near their start is a log record in a layout the pipeline reads; expected "
        f"Kafka or Connect log4j logs ({KAFKA_LOG_NAMES}, ...); logs in another layout: "
        "declare it with layout_pattern in [[sources]] (docs/layouts.md)"
    )
