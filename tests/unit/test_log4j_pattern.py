"""log4j ConversionPattern -> header regex: every group of real-shape lines, what must not match,
the regex's portability to Java, and the errors that name the unsupported piece."""

from __future__ import annotations

import re
import time

import pytest

from transforms.bronze.log4j_pattern import (
    BUILTIN_LAYOUTS,
    FIELDS,
    CompiledLayout,
    LayoutPatternError,
    compile_pattern,
)

KAFKA = "[%d] %p %m (%c)%n"
CONNECT = "[%d] %p %X{connector.context}%m (%c:%L)%n"
STRIMZI = "%d{ISO8601} %p %m (%c) [%t]%n"
BUILTIN = {layout.name: layout for layout in BUILTIN_LAYOUTS}
SELECTOR = "org.apache.kafka.common.network.Selector"
FAILURE = (
    "[SocketServer listenerType=ZK_BROKER, nodeId=1] Failed authentication with /10.0.0.5 "
    "(channelId=10.0.0.1:9092-10.0.0.5:51234-7) (Authentication failed during authentication "
    "due to invalid credentials with SASL mechanism SCRAM-SHA-256)"
)
CFK = (
    "[INFO] 2023-06-14 09:12:01,334 [data-plane-kafka-request-handler-3] kafka.authorizer.logger "
    "logAuditMessage - Principal = User:c3 is Denied Operation = Describe from host = 172.17.0.12 "
    "on resource = Topic:LITERAL:_confluent-license for request = Metadata with resourceRefCount = 1"
)
DEBEZIUM_REST = (
    '172.18.0.1 - - [20/Feb/2023:10:15:02 +0000] "GET /connectors HTTP/1.1" 200 2 "-" '
    '"curl/7.61.1" 43'
)
NETWORK_THREAD = "data-plane-kafka-network-thread-1-ListenerName(SASL_PLAINTEXT)-SASL_PLAINTEXT-2"


def _layout(pattern_or_name: str) -> CompiledLayout:
    if pattern_or_name in BUILTIN:
        return BUILTIN[pattern_or_name]
    return compile_pattern(pattern_or_name, "test")


def _fields(layout: CompiledLayout, line: str) -> dict[str, str] | None:
    """Every captured field of ``line`` by name, or None when the regex does not match."""
    match = re.match(layout.regex, line)
    if match is None:
        return None
    assert None not in match.groups(), "every group takes part in every match"
    return {name: match.group(number) for name, number in layout.groups.items()}


MATCHES = [
    # Kafka's shipped layout, bare and behind a container prefix; a message with parentheses.
    (KAFKA, '[2024-01-01 12:00:00,123] INFO Completed request:{"requestHeader":{"a":1}} (kafka.request.logger)',
     {"prefix": "", "ts": "2024-01-01 12:00:00,123", "level": "INFO",
      "message": 'Completed request:{"requestHeader":{"a":1}}', "logger": "kafka.request.logger"}),
    (KAFKA, f"kafka-0 kafka [2024-03-01 08:00:00,001] WARN {FAILURE} ({SELECTOR})",
     {"prefix": "kafka-0 kafka ", "ts": "2024-03-01 08:00:00,001", "level": "WARN",
      "message": FAILURE, "logger": SELECTOR}),
    # Connect: the connector context stays in the message, as with the built-in header regex.
    (CONNECT, "[2024-01-01 12:00:00,123] INFO [my-conn|task-0] some msg (org.apache.kafka.connect.runtime.WorkerTask:123)",
     {"prefix": "", "ts": "2024-01-01 12:00:00,123", "level": "INFO",
      "message": "[my-conn|task-0] some msg",
      "logger": "org.apache.kafka.connect.runtime.WorkerTask", "logger_line": "123"}),
    (CONNECT, "connect_1  | [2024-01-01 12:00:00,123] ERROR boom (org.apache.Foo$Bar:?)",
     {"prefix": "connect_1  | ", "ts": "2024-01-01 12:00:00,123", "level": "ERROR",
      "message": "boom", "logger": "org.apache.Foo$Bar", "logger_line": "?"}),
    # Strimzi: log4j 1 ISO8601 (a space), log4j2 ISO8601 (a 'T'); threads with spaces, brackets.
    (STRIMZI, "2023-02-23 12:13:34,442 INFO msg (kafka.server.KafkaServer) [main]",
     {"prefix": "", "ts": "2023-02-23 12:13:34,442", "level": "INFO", "message": "msg",
      "logger": "kafka.server.KafkaServer", "thread": "main"}),
    (STRIMZI, "kafka-0 kafka 2025-02-23T12:13:34,442 WARNING a (b) c (org.apache.kafka.clients.NetworkClient) [kafka-producer-network-thread | producer-1]",
     {"prefix": "kafka-0 kafka ", "ts": "2025-02-23T12:13:34,442", "level": "WARNING",
      "message": "a (b) c", "logger": "org.apache.kafka.clients.NetworkClient",
      "thread": "kafka-producer-network-thread | producer-1"}),
    # The built-in layouts on the lines they were made for.
    ("confluent_operator", CFK,
     {"prefix": "", "level": "INFO", "ts": "2023-06-14 09:12:01,334",
      "thread": "data-plane-kafka-request-handler-3", "logger": "kafka.authorizer.logger",
      "message": CFK.split(" - ", 1)[1]}),
    ("debezium", f"2023-02-20 10:15:02,123 INFO   ||  {DEBEZIUM_REST}   [org.apache.kafka.connect.runtime.rest.RestServer]",
     {"prefix": "", "ts": "2023-02-20 10:15:02,123", "level": "INFO", "message": DEBEZIUM_REST,
      "logger": "org.apache.kafka.connect.runtime.rest.RestServer"}),
    ("debezium", "connect_1  | 2023-02-20 10:15:03,000 ERROR  Postgres|dbserver1|streaming  Producer failure   [io.debezium.pipeline.ErrorHandler]",
     {"prefix": "connect_1  | ", "ts": "2023-02-20 10:15:03,000", "level": "ERROR",
      "message": "Producer failure", "logger": "io.debezium.pipeline.ErrorHandler"}),
    ("bracketed_fields", f"[2024-03-01 08:00:00,001] [INFO] [{NETWORK_THREAD}] [{SELECTOR}] - {FAILURE}",
     {"prefix": "", "ts": "2024-03-01 08:00:00,001", "level": "INFO", "thread": NETWORK_THREAD,
      "logger": SELECTOR, "message": FAILURE}),
    ("logger_dash", f"kafka-0 kafka [2024-03-01 08:00:00,001] INFO {SELECTOR} - [SocketServer listenerType=BROKER, nodeId=2] Failed authentication with /10.0.0.6 (channelId=...) (...)",
     {"prefix": "kafka-0 kafka ", "ts": "2024-03-01 08:00:00,001", "level": "INFO",
      "logger": SELECTOR,
      "message": "[SocketServer listenerType=BROKER, nodeId=2] Failed authentication with /10.0.0.6 (channelId=...) (...)"}),
    ("category", f"[2022-11-03 14:22:10,512][INFO][category={SELECTOR}] {FAILURE}",
     {"prefix": "", "ts": "2022-11-03 14:22:10,512", "level": "INFO", "logger": SELECTOR,
      "message": FAILURE}),
    # Other layouts: no millis, padding both sides, precision, a time-zone option, log4j2 words.
    ("%d{yyyy-MM-dd HH:mm:ss} %-5p %c{1}:%L - %m%n", "2024-01-01 12:00:00 INFO  Selector:481 - a - b",
     {"prefix": "", "ts": "2024-01-01 12:00:00", "level": "INFO", "logger": "Selector",
      "logger_line": "481", "message": "a - b"}),
    ("%d{yyyy-MM-dd'T'HH:mm:ss.SSS}{UTC} [%thread] %-5level %logger{1.} - %msg%n",
     "2024-01-01T12:00:00.123 [main] ERROR o.a.k.c.n.Selector - x",
     {"prefix": "", "ts": "2024-01-01T12:00:00.123", "thread": "main", "level": "ERROR",
      "logger": "o.a.k.c.n.Selector", "message": "x"}),
    ("%5p [%t] (%F:%L) - %m%n", "  WARN [main] (Selector.java:481) - hello",
     {"prefix": "", "level": "WARN", "thread": "main", "logger_line": "481", "message": "hello"}),
    ("%r [%t] %-5p %c %x - %m%n", "176 [main] INFO  org.foo.Bar  - Located nearest gas station.",
     {"prefix": "", "thread": "main", "level": "INFO", "logger": "org.foo.Bar",
      "message": "Located nearest gas station."}),
    ("%d %-5p [%t] %C{2}.%M(%L) - %m%n%throwable", "2024-01-01 12:00:00,001 DEBUG [main] network.Selector.poll(481) - ok",
     {"prefix": "", "ts": "2024-01-01 12:00:00,001", "level": "DEBUG", "thread": "main",
      "logger": "network.Selector", "logger_line": "481", "message": "ok"}),
    ("%date{DEFAULT_PERIOD} %le %lo - %message%n", "2024-01-01 12:00:00.001 INFO a.B - ok",
     {"prefix": "", "ts": "2024-01-01 12:00:00.001", "level": "INFO", "logger": "a.B",
      "message": "ok"}),
    ("%t %p %m%n", "kafka-0 main INFO hi",  # a pattern starting with free text: no prefix
     {"prefix": "", "thread": "kafka-0 main", "level": "INFO", "message": "hi"}),
    ("100%% %p: %m%n", "100% INFO: done", {"prefix": "", "level": "INFO", "message": "done"}),
]  # fmt: skip


@pytest.mark.parametrize(("pattern", "line", "expected"), MATCHES)
def test_every_group_of_a_real_shape_line(
    pattern: str, line: str, expected: dict[str, str]
) -> None:
    assert _fields(_layout(pattern), line) == expected


NOT_HEADERS = [
    "\tat org.apache.kafka.common.network.Selector.poll(Selector.java:481)",
    "Caused by: org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed",
    "\t... 12 more",
    "",
]
LAYOUTS = [KAFKA, CONNECT, STRIMZI, *BUILTIN]


@pytest.mark.parametrize("line", NOT_HEADERS)
@pytest.mark.parametrize("pattern", LAYOUTS)
def test_continuation_lines_do_not_match(pattern: str, line: str) -> None:
    assert _fields(_layout(pattern), line) is None


# A line of one layout read with another's regex would give wrong fields: no match.
CROSS = [
    (KAFKA, MATCHES[2][1]),  # Connect's (logger:line)
    (KAFKA, MATCHES[4][1]),  # Strimzi
    (KAFKA, MATCHES[9][1]),  # bracketed fields
    (KAFKA, MATCHES[10][1]),  # logger - message, ending in (...)
    (KAFKA, MATCHES[11][1]),  # category
    (CONNECT, MATCHES[0][1]),
    (STRIMZI, MATCHES[0][1]),
    (STRIMZI, MATCHES[7][1]),  # Debezium
    ("confluent_operator", MATCHES[9][1]),
    ("debezium", MATCHES[4][1]),
    ("bracketed_fields", MATCHES[0][1]),
    ("bracketed_fields", MATCHES[11][1]),
    ("logger_dash", MATCHES[0][1]),
    ("logger_dash", MATCHES[9][1]),
    ("category", MATCHES[9][1]),
    ("category", MATCHES[0][1]),
]


@pytest.mark.parametrize(("pattern", "line"), CROSS)
def test_a_line_of_another_layout_does_not_match(pattern: str, line: str) -> None:
    assert _fields(_layout(pattern), line) is None


@pytest.mark.parametrize(
    "pattern", [KAFKA, CONNECT, STRIMZI, *(pattern for pattern, _, _ in MATCHES)]
)
def test_regex_shape_portable_to_java(pattern: str) -> None:
    layout = _layout(pattern)
    regex = layout.regex
    assert regex.startswith("^(") and regex.endswith(r"\s*$")
    assert layout.groups["prefix"] == 1
    assert set(layout.groups) <= set(FIELDS)
    assert sorted(layout.groups.values()) == list(range(1, len(layout.groups) + 1))
    assert re.compile(regex).groups == len(layout.groups)  # no other capturing group
    assert "(?P" not in regex and "(?<" not in regex  # no named group, no lookbehind
    # Java rejects a backslash before a letter it does not know; digits would be back-references.
    assert set(re.findall(r"\\([A-Za-z0-9])", regex)) <= {"s", "t", "n", "r", "f"}
    assert not re.search(r"\\[dwDWbB]", regex)  # \d, \w differ between Java and Python
    assert layout.has_time == ("ts" in layout.groups)


def test_prefix_is_lazy_and_values() -> None:
    layout = compile_pattern(KAFKA, "mine")
    assert layout.regex.startswith("^(.*?)\\[")
    assert (layout.name, layout.pattern, layout.has_time) == ("mine", KAFKA, True)
    assert compile_pattern("%p %m%n", "x").has_time is False
    assert [layout.name for layout in BUILTIN_LAYOUTS] == [
        "confluent_operator", "debezium", "bracketed_fields", "logger_dash", "category",
    ]  # fmt: skip
    with pytest.raises(TypeError):
        layout.groups["ts"] = 9  # type: ignore[index]
    assert hash(layout) == hash(compile_pattern(KAFKA, "mine"))


def test_literal_text_is_escaped_not_a_regex() -> None:
    layout = compile_pattern("%p ^$.|?*+()[]{}\\ %m%n", "x")
    assert _fields(layout, "INFO ^$.|?*+()[]{}\\ msg") == {
        "prefix": "",
        "level": "INFO",
        "message": "msg",
    }
    assert _fields(layout, "INFO ^$X|?*+()[]{}\\ msg") is None  # '.' is no wildcard


def test_padding_and_trailing_spaces() -> None:
    layout = compile_pattern("[%-5p] %m %n", "x")
    assert _fields(layout, "[INFO ] hi") == {"prefix": "", "level": "INFO", "message": "hi"}
    assert _fields(layout, "[DEBUG] hi   ") == {"prefix": "", "level": "DEBUG", "message": "hi   "}
    right = compile_pattern("%5p|%m%n", "x")
    assert _fields(right, " INFO|a") == {"prefix": "", "level": "INFO", "message": "a"}


@pytest.mark.parametrize(
    ("pattern", "piece"),
    [
        ("%highlight{%d %p} %m%n", "unsupported conversion %highlight"),
        ("%style{%d}{red} %m%n", "unsupported conversion %style"),
        ("%d %replace{%m}{a}{b}%n", "unsupported conversion %replace"),
        ("%d %p %enc{%m}%n", "unsupported conversion %enc"),
        ("%d %K{key} %m%n", "unsupported conversion %K"),
        ("%d %e %m%n", "unknown conversion %e"),
        ("%d{ABSOLUTE} %p %m%n", "unsupported date format %d{ABSOLUTE}"),
        ("%d{HH:mm:ss,SSS} %p %m%n", "unsupported date format %d{HH:mm:ss,SSS}"),
        ("%d{yyyy-MM-dd HH:mm:ss,SSSZ} %m%n", "unsupported date format"),
        ("%d{ISO8601_OFFSET_DATE_TIME_HHMM} %m%n", "unsupported date format"),
        ("%d{UNIX_MILLIS} %m%n", "unsupported date format %d{UNIX_MILLIS}"),
        ("%d{DEFAULT_MICROS} %m%n", "unsupported date format"),
        ("%d %.1p %m%n", "unsupported truncation or options of %p"),
        ("%d %level{length=1} %m%n", "unsupported truncation or options of %level"),
        ("%d %.10c %m%n", "unsupported truncation of %c"),
        ("%d %c{foo} %m%n", "unsupported options of %c"),
        ("%d %m{ansi}%n", "unsupported options of %m"),
        ("[%d] %p (%c)%n", "no message conversion"),
        ("%m %msg%n", "more than one %m"),
        ("%d%n%m%n", "after %n"),
        ("%d{yyyy %m", "unclosed '{'"),
        ("%m 100%", "'%' at position 6 is not followed by a conversion word"),
    ],
)
def test_unsupported_pieces_are_named(pattern: str, piece: str) -> None:
    with pytest.raises(LayoutPatternError) as raised:
        compile_pattern(pattern, "x")
    assert piece in str(raised.value)
    assert repr(pattern) in str(raised.value)


def test_time_zone_option_is_ignored_and_iso8601_takes_both_separators() -> None:
    plain = compile_pattern("%d{ISO8601} %m%n", "x")
    zoned = compile_pattern("%d{ISO8601}{Europe/Berlin} %m%n", "x")
    assert plain.regex == zoned.regex
    for ts in ("2024-01-01 00:00:00,000", "2024-01-01T00:00:00,000"):
        assert _fields(plain, f"{ts} hi") == {"prefix": "", "ts": ts, "message": "hi"}
    assert _fields(plain, "2024-01-01 00:00:00.000 hi") is None  # ISO8601 has a comma


ADVERSARIAL = [
    "2023-02-20 10:15:02,123 INFO   " + "|" * 150 + "  x" * 100,
    "2023-02-20 10:15:02,123 INFO   " + "| " * 100 + "  " * 100,
    "[2024-01-01 12:00:00,123] INFO " + " (a" * 1000,
    "[INFO] 2023-06-14 09:12:01,334 [" + "] a " * 500,
    "[2024-01-01 12:00:00,123] INFO " * 100,
    "x" + " " * 3000 + "y",
]


# Five uncaptured values in a row; with chained lazy groups this line took 8 s (it grows as
# the sixth power of its length), with atomic ones well under a millisecond.
CHAINED = ("%d [%t] %X %x %l %M %m (%c)%n", ["2023-06-14 09:12:01,334 [" + "] a " * 40])


@pytest.mark.parametrize(("pattern", "lines"), [*((p, ADVERSARIAL) for p in LAYOUTS), CHAINED])
def test_failing_lines_cost_little(pattern: str, lines: list[str]) -> None:
    """Chained lazy groups cost a power of the line length on a line that fails late (the
    Debezium layout took seconds on each of the first two lines here before its MDC groups
    became atomic)."""
    regex = re.compile(_layout(pattern).regex)
    started = time.perf_counter()
    for line in lines:
        assert regex.match(line) is None
    assert time.perf_counter() - started < 2.0
