"""Render a ``LogLine`` in each log4j layout the pipeline parses (``transforms/bronze/layout.py``).

Layouts (kafka-log-formats.md section 1), all with the log4j-1 ``%d`` ISO8601 timestamp
(``yyyy-MM-dd HH:mm:ss,SSS``, written here in UTC):

* ``log4j``: Kafka's ``config/log4j.properties`` / ``log4j2.yaml``: ``[%d] %p %m (%c)%n``.
* ``logger-line``: Confluent images and Connect's ``connect-log4j.properties``:
  ``[%d] %p %m (%c:%L)%n`` (the source line number of the logging call).
* ``strimzi``: ``%d %p %m (%c) [%t]%n`` (no brackets around the date; the thread appended).
* ``container``: ``log4j`` behind a container runtime's prefix (``kafka-0 kafka ``).
* ``confluent-operator``: Confluent for Kubernetes' ``[%p] %d [%t] %c %M - %m%n``.
* ``bracketed``: ``[%d] [%p] [%t] [%c] - %m%n``, a layout seen in broker files posted publicly.
* ``log4j-config``: a layout the pipeline knows only from the node's own ``log4j.properties``
  (``LOG4J_CONFIG_PATTERN``), which the writer puts beside the node's logs
  (``logging_config_text``).

The last three are not among the default layouts; ``--layouts`` picks them.

Formatting is plain string concatenation with a per-second cache of the date text: no regex,
no ``datetime`` per line.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from jobs.simulator.base import LogLine

LAYOUTS: tuple[str, ...] = (
    "log4j", "logger-line", "strimzi", "container", "confluent-operator", "bracketed",
    "log4j-config",
)  # fmt: skip
#: The layouts a corpus's nodes take in turn unless ``--layouts`` says otherwise.
DEFAULT_LAYOUTS: tuple[str, ...] = LAYOUTS[:4]
#: Layouts whose lines print the thread name (``%t``), which names the listener on Kafka's
#: network threads.
THREAD_LAYOUTS: frozenset[str] = frozenset(
    {"strimzi", "confluent-operator", "bracketed", "log4j-config"}
)
#: The ConversionPattern of the ``log4j-config`` layout.
LOG4J_CONFIG_PATTERN = "%d{ISO8601} [%t] %-5p %c - %m%n"
#: The ``%M`` (method) the ``confluent-operator`` layout prints: made up but stable.
METHOD = "log"

#: The ``%L`` a ``(%c:%L)`` layout prints per logger (the line of the logging call in Kafka's
#: source; made up but stable: the parser only needs digits).
LOGGER_LINES: dict[str, int] = {
    "kafka.request.logger": 275,
    "kafka.authorizer.logger": 98,
    "org.apache.kafka.common.network.Selector": 614,
    "kafka.network.Processor": 1182,
}
DEFAULT_LOGGER_LINE = 100


class TimestampFormatter:
    """``ts_ms`` -> ``yyyy-MM-dd HH:mm:ss,SSS`` in UTC, caching the seconds part."""

    __slots__ = ("_second", "_text")

    def __init__(self) -> None:
        self._second = -1
        self._text = ""

    def __call__(self, ts_ms: int) -> str:
        second, millis = divmod(ts_ms, 1000)
        if second != self._second:
            self._second = second
            self._text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second))
        return f"{self._text},{millis:03d}"


def renderer(layout: str, container_prefix: str = "") -> Callable[[LogLine], str]:
    """A function rendering one ``LogLine`` as the text of one record (no trailing newline).

    A multi-line message is a message and its stack trace (``log.error(msg, e)``): log4j
    prints the layout around the first line and the trace after the layout's ``%n``, its lines
    without prefix. So ``head\ntrace`` renders as ``[ts] LEVEL head (logger)\ntrace``.

    Args:
        layout: one of ``LAYOUTS``.
        container_prefix: for ``container``: the runtime's prefix, e.g. ``kafka-0 kafka ``.

    Raises:
        ValueError: an unknown layout.
    """
    stamp = TimestampFormatter()
    if layout == "log4j":
        return _with_trace(
            lambda line, m: f"[{stamp(line.ts_ms)}] {line.level} {m} ({line.logger})"
        )
    if layout == "container":
        prefix = container_prefix
        return _with_trace(
            lambda line, m: f"{prefix}[{stamp(line.ts_ms)}] {line.level} {m} ({line.logger})"
        )
    if layout == "logger-line":
        numbers = LOGGER_LINES

        def with_line(line: LogLine, message: str) -> str:
            number = numbers.get(line.logger, DEFAULT_LOGGER_LINE)
            return f"[{stamp(line.ts_ms)}] {line.level} {message} ({line.logger}:{number})"

        return _with_trace(with_line)
    if layout == "strimzi":
        return _with_trace(
            lambda line, m: (
                f"{stamp(line.ts_ms)} {line.level} {m} ({line.logger}) [{line.thread or 'main'}]"
            )
        )
    other = _other_renderer(layout, stamp)
    if other is None:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    return other


def _other_renderer(layout: str, stamp: TimestampFormatter) -> Callable[[LogLine], str] | None:
    """Renderers of the layouts other distributions ship (see the module docstring)."""
    if layout == "confluent-operator":
        return _with_trace(
            lambda line, m: (
                f"[{line.level}] {stamp(line.ts_ms)} [{line.thread or 'main'}] {line.logger} "
                f"{METHOD} - {m}"
            )
        )
    if layout == "bracketed":
        return _with_trace(
            lambda line, m: (
                f"[{stamp(line.ts_ms)}] [{line.level}] [{line.thread or 'main'}] "
                f"[{line.logger}] - {m}"
            )
        )
    if layout == "log4j-config":
        return _with_trace(
            lambda line, m: (
                f"{stamp(line.ts_ms)} [{line.thread or 'main'}] {line.level:<5} {line.logger} - {m}"
            )
        )
    return None


def logging_config_text(layout: str) -> str | None:
    """The ``log4j.properties`` a node of ``layout`` has beside its logs, or None when the
    layout needs none: ``log4j-config`` (every appender with ``LOG4J_CONFIG_PATTERN``, as
    Kafka's own file routes its loggers, section 1 of docs/kafka-log-formats.md)."""
    if layout != "log4j-config":
        return None
    appenders = {"kafkaAppender": "server.log", "requestAppender": "kafka-request.log",
                 "authorizerAppender": "kafka-authorizer.log",
                 "controllerAppender": "controller.log"}  # fmt: skip
    lines = [
        "log4j.rootLogger=INFO, stdout, kafkaAppender",
        "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
        "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
        f"log4j.appender.stdout.layout.ConversionPattern={LOG4J_CONFIG_PATTERN}",
    ]
    for name, file in appenders.items():
        lines += [
            f"log4j.appender.{name}=org.apache.log4j.DailyRollingFileAppender",
            f"log4j.appender.{name}.File=${{kafka.logs.dir}}/{file}",
            f"log4j.appender.{name}.layout=org.apache.log4j.PatternLayout",
            f"log4j.appender.{name}.layout.ConversionPattern={LOG4J_CONFIG_PATTERN}",
        ]
    return "\n".join(lines) + "\n"


def _with_trace(head: Callable[[LogLine, str], str]) -> Callable[[LogLine], str]:
    """Wrap a one-line renderer so a message's continuation lines follow the rendered head."""

    def render(line: LogLine) -> str:
        message = line.message
        if "\n" not in message:
            return head(line, message)
        first, rest = message.split("\n", 1)
        return f"{head(line, first)}\n{rest}"

    return render
