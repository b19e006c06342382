"""Find the log4j ConversionPattern that wrote each log file of a node, from its logging config.

Source of the formats: log4j 1.2 ``PropertyConfigurator`` (``log4j.appender.<name>``,
``.File``, ``.layout.ConversionPattern``, ``${key}`` from the same file) and the log4j2
configuration manual (YAML / JSON, properties and XML files; ``${name}`` from the
``Properties``, ``${sys:..}`` / ``${env:..}`` lookups, ``${name:-default}``); the files Kafka
ships (``config/log4j.properties`` <= 3.9, ``config/log4j2.yaml`` 4.x,
``config/connect-log4j.properties``) and Strimzi's ``log4j.properties`` (docs/layouts.md).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO

import javaproperties
import yaml

from jobs.errors import ConfigError

#: The logging configs looked for in a node folder, in preference order (``tools-log4j*``
#: configure the command-line tools, not the node, and are never read).
LOGGING_CONFIG_NAMES: tuple[str, ...] = (
    "log4j2.yaml",
    "log4j2.yml",
    "log4j2.properties",
    "log4j2.xml",
    "log4j.properties",
    "connect-log4j2.yaml",
    "connect-log4j.properties",
)

#: log4j 1 and log4j2 PatternLayout print ``%m%n`` when no pattern is set.
DEFAULT_PATTERN = "%m%n"
_LOOKUP_PREFIX = re.compile(r"^(?:sys|env|ctx|main|bundle|jndi|jvmrunargs|log4j|marker|map):")
_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst|zip|lz4)$", re.IGNORECASE)
_ROTATION_SUFFIX = re.compile(r"\.[0-9][0-9_T-]*$")  # server.log.1, server.log.2024-01-01-13
_ROTATION_INFIX = re.compile(r"-[0-9][0-9_T-]*(?=\.log$)")  # connect-2024-01-01-13.log (log4j2)
_MAX_NESTING = 8


@dataclass(frozen=True)
class _Appender:
    kind: str  # "console", "file" or "other"
    file_name: str | None  # as written, ${...} not yet substituted
    pattern: str | None  # None: not a PatternLayout


@dataclass(frozen=True)
class LoggingLayouts:
    """The ConversionPatterns of a node's logging config.

    Attributes:
        path: the config file read.
        by_file: log file name (``server.log``, ``kafka-authorizer.log``, ``connect.log``) ->
            the pattern of the appender that writes it.
        console: the pattern of the (first) console appender, which writes stdout captures and
            container logs; None when there is none.
    """

    path: Path
    by_file: Mapping[str, str] = field(hash=False)
    console: str | None

    def pattern_for(self, log_file: Path) -> str | None:
        """The pattern that wrote ``log_file``.

        Args:
            log_file: a log file of the node; only its name counts.

        Returns:
            The pattern of the appender whose file has this name once rotation suffixes are
            removed (``server.log.1``, ``server.log.2024-01-01-13``,
            ``kafka-request.log.2026-11-20-13.gz``, log4j2's ``connect-2024-01-01-13.log``);
            else the console pattern (captures such as ``*.out`` / ``*.txt``, or any other
            name); else the pattern every file appender shares; else None.
        """
        for name in _log_names(log_file.name):
            if name in self.by_file:
                return self.by_file[name]
        if self.console is not None:
            return self.console
        shared = set(self.by_file.values())
        return shared.pop() if len(shared) == 1 else None


def _log_names(name: str) -> Iterator[str]:
    """``name``, then the names it had before compression and rotation."""
    yield name
    base = _COMPRESSED.sub("", name)
    yield base
    while _ROTATION_SUFFIX.search(base):
        base = _ROTATION_SUFFIX.sub("", base)
        yield base
    yield _ROTATION_INFIX.sub("", base)


def _closing_brace(text: str, opening: int) -> int | None:
    """The index of the '}' that closes the '{' at ``opening`` (braces nest), or None."""
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return None


def _substitute(value: str, properties: Mapping[str, str], depth: int = 0) -> str:
    """``value`` with each ``${name}`` / ``${prefix:name}`` replaced by the file's own property
    ``name`` (log4j2 falls back to its Properties when a lookup finds nothing; log4j 1 reads the
    file's keys after the system properties), else by its ``:-default`` (which may hold braces:
    ``${env:P:-%d{ISO8601} %m%n}``); any other reference (a system property or environment
    variable the file does not define) is left as it is. Nesting stops at a depth of 8."""
    parts: list[str] = []
    at = 0
    while (start := value.find("${", at)) >= 0:
        end = _closing_brace(value, start + 1)
        if end is None:
            break
        parts.append(value[at:start])
        whole = value[start : end + 1]
        reference, separator, default = value[start + 2 : end].partition(":-")
        name = _LOOKUP_PREFIX.sub("", reference)
        if depth >= _MAX_NESTING:
            parts.append(whole)
        elif name in properties:
            parts.append(_substitute(properties[name], properties, depth + 1))
        else:
            parts.append(_substitute(default, properties, depth + 1) if separator else whole)
        at = end + 1
    parts.append(value[at:])
    return "".join(parts)


def _basename(file_name: str) -> str:
    return re.split(r"[/\\]", file_name)[-1]


def _layouts(
    path: Path, appenders: list[_Appender], properties: Mapping[str, str]
) -> LoggingLayouts:
    """The ``LoggingLayouts`` of ``appenders``, their references substituted; a file whose name
    still holds an unresolved reference (``${sys:log.file}``) cannot be matched and is left
    out."""
    by_file: dict[str, str] = {}
    console: str | None = None
    for appender in appenders:
        if appender.pattern is None:
            continue
        pattern = _substitute(appender.pattern, properties)
        if appender.kind == "console" and console is None:
            console = pattern
        if appender.file_name is not None:
            name = _basename(_substitute(appender.file_name, properties))
            if name and "${" not in name:
                by_file[name] = pattern
    return LoggingLayouts(path=path, by_file=MappingProxyType(by_file), console=console)


def _log4j1_appenders(props: Mapping[str, str]) -> list[_Appender]:
    """The appenders of a log4j 1 properties file (option names are case-insensitive)."""
    lower = {key.lower(): value for key, value in props.items()}
    appenders = []
    for key, class_name in props.items():
        name = key[len("log4j.appender.") :]
        if not key.startswith("log4j.appender.") or not name or "." in name:
            continue
        base = f"log4j.appender.{name}".lower()
        layout = lower.get(f"{base}.layout", "")
        pattern = lower.get(f"{base}.layout.conversionpattern")
        if pattern is None and layout.strip().endswith("PatternLayout"):
            pattern = DEFAULT_PATTERN
        file_name = lower.get(f"{base}.file")
        kind = "console" if class_name.strip().endswith("ConsoleAppender") else "other"
        appenders.append(_Appender("file" if file_name else kind, file_name, pattern))
    return appenders


def _log4j2_properties_appenders(props: Mapping[str, str]) -> list[_Appender]:
    """The appenders of a log4j2 properties file (``appender.<id>.type`` ...)."""
    lower = {key.lower(): value for key, value in props.items()}
    ids = [
        key.split(".")[1]
        for key in lower
        if key.startswith("appender.") and key.count(".") == 2 and key.endswith(".type")
    ]
    appenders = []
    for appender_id in ids:
        base = f"appender.{appender_id}"
        kind = lower[f"{base}.type"].strip().lower()
        layout_type = lower.get(f"{base}.layout.type", "PatternLayout").strip().lower()
        pattern = lower.get(f"{base}.layout.pattern")
        if pattern is None and layout_type == "patternlayout":
            pattern = DEFAULT_PATTERN
        file_name = lower.get(f"{base}.filename")
        appenders.append(_Appender(_kind(kind, file_name), file_name, pattern))
    return appenders


def _kind(type_name: str, file_name: str | None) -> str:
    if type_name.lower() == "console":
        return "console"
    return "file" if file_name is not None else "other"


def _read_properties(path: Path, handle: BinaryIO) -> tuple[list[_Appender], dict[str, str]]:
    """Appenders and properties of a properties file: log4j2 when it has ``appender.`` or
    ``property.`` keys, else log4j 1; read as ISO-8859-1, as Java does."""
    try:
        props: dict[str, str] = javaproperties.load(handle)
    except ValueError as error:  # a bad \\u escape
        raise ConfigError(f"{path}: not a valid properties file ({error})") from error
    if not any(key.startswith(("appender.", "property.")) for key in props):
        return _log4j1_appenders(props), props
    named = {k[len("property.") :]: v for k, v in props.items() if k.startswith("property.")}
    return _log4j2_properties_appenders(props), named


def _child(node: object, key: str) -> Any:
    """The value of ``key`` in mapping ``node``, key case ignored (log4j2 reads
    ``Appenders`` / ``appenders`` alike); None when absent or ``node`` is no mapping."""
    if isinstance(node, Mapping):
        for name, value in node.items():
            if str(name).lower() == key:
                return value
    return None


def _entries(path: Path, node: object, what: str) -> list[Mapping[str, Any]]:
    """``node`` as a list of mappings (YAML allows one mapping or a list of them)."""
    if node is None:
        return []
    items: list[object] = list(node) if isinstance(node, list) else [node]
    entries = [item for item in items if isinstance(item, Mapping)]
    if len(entries) != len(items):
        raise ConfigError(f"{path}: {what} must be a mapping or a list of mappings")
    return entries


def _text(path: Path, value: object, what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict | list):
        raise ConfigError(f"{path}: {what} must be a string, got {value!r}")
    return str(value)


def _tree_layout(path: Path, appender: Mapping[str, Any]) -> str | None:
    """The pattern of a YAML / JSON appender: ``PatternLayout: {pattern}`` or, in the strict
    form, ``layout: {type: PatternLayout, pattern}``; None for another layout."""
    layout = _child(appender, "patternlayout")
    if layout is None:
        strict = _child(appender, "layout")
        if strict is None or str(_child(strict, "type")).lower() != "patternlayout":
            return None
        layout = strict
    if not isinstance(layout, Mapping):
        return DEFAULT_PATTERN if layout in (None, "") else _text(path, layout, "PatternLayout")
    return _text(path, _child(layout, "pattern"), "PatternLayout pattern") or DEFAULT_PATTERN


def _read_tree(path: Path, data: object) -> tuple[list[_Appender], dict[str, str]]:
    """Appenders and properties of a log4j2 YAML / JSON configuration."""
    root = _child(data, "configuration")
    if not isinstance(root, Mapping):
        raise ConfigError(f"{path}: no 'Configuration' mapping at the top")
    properties: dict[str, str] = {}
    for prop in _entries(path, _child(_child(root, "properties"), "property"), "Property"):
        name = _text(path, _child(prop, "name"), "Property name")
        if name is not None:
            properties[name] = _text(path, _child(prop, "value"), "Property value") or ""
    appenders_node = _child(root, "appenders")
    if appenders_node is not None and not isinstance(appenders_node, Mapping):
        raise ConfigError(f"{path}: Appenders must be a mapping")
    appenders = []
    for type_name, node in (appenders_node or {}).items():
        for entry in _entries(path, node, f"Appenders.{type_name}"):
            kind = str(type_name)
            if kind.lower() == "appender":  # strict form: {type: Console, ...}
                kind = str(_child(entry, "type"))
            file_name = _text(path, _child(entry, "filename"), f"{type_name} fileName")
            pattern = _tree_layout(path, entry)
            appenders.append(_Appender(_kind(kind, file_name), file_name, pattern))
    return appenders, properties


def _local(tag: str) -> str:
    """An XML tag or attribute name without its namespace, lower-cased."""
    return tag.rsplit("}", 1)[-1].lower()


def _xml_attribute(element: ET.Element, name: str) -> str | None:
    return next((v for k, v in element.attrib.items() if _local(k) == name), None)


def _xml_layout(element: ET.Element) -> str | None:
    """The pattern of an XML appender: ``<PatternLayout pattern=".."/>``, its ``<Pattern>``
    child, or the strict ``<Layout type="PatternLayout" ...>``; None for another layout."""
    for child in element:
        tag = _local(child.tag)
        is_strict = tag == "layout" and (_xml_attribute(child, "type") or "").lower() == (
            "patternlayout"
        )
        if tag == "patternlayout" or is_strict:
            pattern = _xml_attribute(child, "pattern")
            nested = next((c for c in child if _local(c.tag) == "pattern"), None)
            if pattern is None and nested is not None:
                pattern = nested.text or ""
            return pattern if pattern is not None else DEFAULT_PATTERN
    return None


def _read_xml(path: Path, root: ET.Element) -> tuple[list[_Appender], dict[str, str]]:
    """Appenders and properties of a log4j2 XML configuration."""
    if _local(root.tag) != "configuration" or "jakarta.apache.org/log4j" in root.tag:
        raise ConfigError(f"{path}: the root element is <{root.tag}>, not log4j2's <Configuration>")
    properties: dict[str, str] = {}
    appenders = []
    for section in root:
        if _local(section.tag) == "properties":
            for prop in section:
                name = _xml_attribute(prop, "name")
                if _local(prop.tag) == "property" and name is not None:
                    properties[name] = _xml_attribute(prop, "value") or (prop.text or "").strip()
        elif _local(section.tag) == "appenders":
            for element in section:
                kind = _local(element.tag)
                if kind == "appender":  # strict form: <Appender type="Console" ...>
                    kind = (_xml_attribute(element, "type") or "").lower()
                file_name = _xml_attribute(element, "filename")
                appenders.append(_Appender(_kind(kind, file_name), file_name, _xml_layout(element)))
    return appenders, properties


def _parse(path: Path) -> tuple[list[_Appender], dict[str, str]]:
    """Appenders and properties of the config at ``path``, by its suffix."""
    suffix = path.suffix.lower()
    if suffix == ".properties":
        with path.open("rb") as handle:
            return _read_properties(path, handle)
    parsers: dict[str, Callable[[str], object]] = {
        ".yaml": yaml.safe_load,
        ".yml": yaml.safe_load,
        ".json": json.loads,
        ".xml": ET.fromstring,
    }
    if suffix not in parsers:
        raise ConfigError(
            f"{path}: unknown logging config format (expected {LOGGING_CONFIG_NAMES})"
        )
    text = path.read_text(encoding="utf-8")
    try:
        data = parsers[suffix](text)
    except (yaml.YAMLError, json.JSONDecodeError, ET.ParseError) as error:
        reason = " ".join(str(error).split())
        raise ConfigError(f"{path}: not valid {suffix[1:].upper()} ({reason})") from error
    if isinstance(data, ET.Element):
        return _read_xml(path, data)
    return _read_tree(path, data)


def read_logging_config(path: Path) -> LoggingLayouts:
    """Read the appenders' ConversionPatterns of a log4j 1 or log4j2 logging config.

    Source: log4j 1.2 PropertyConfigurator; log4j2 configuration manual (YAML, JSON,
    properties, XML); Kafka ``config/log4j.properties``, ``config/log4j2.yaml``,
    ``config/connect-log4j.properties``.

    Args:
        path: ``*.properties`` (log4j 1 ``log4j.appender.<name>...`` or log4j2
            ``appender.<id>...``), ``*.yaml`` / ``*.yml`` / ``*.json`` or ``*.xml`` (log4j2).

    Returns:
        The file appenders' patterns by log file name and the console appender's pattern,
        ``${...}`` references substituted from the file's own properties. An appender with
        another layout than PatternLayout (JSON, ...) is left out; a PatternLayout without a
        pattern prints ``%m%n``. The patterns are not compiled here.

    Raises:
        ConfigError: the file cannot be read or decoded, is not valid YAML / JSON / XML /
            properties, has an unknown suffix, or has the wrong structure (no
            ``Configuration``, an appender or property that is not a mapping, a pattern that
            is not a string); the message names the file and the reason.
    """
    try:
        appenders, properties = _parse(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read logging config ({error})") from error
    return _layouts(path, appenders, properties)


def folder_logging_config(folder: Path) -> LoggingLayouts | None:
    """The node's logging config in ``folder``: the first of ``LOGGING_CONFIG_NAMES`` there.

    Args:
        folder: the node folder (where its ``server.properties`` and logs are).

    Returns:
        Its ``LoggingLayouts``, or None when the folder holds none of those files.

    Raises:
        ConfigError: the config found cannot be read (``read_logging_config``).
    """
    for name in LOGGING_CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return read_logging_config(candidate)
    return None
