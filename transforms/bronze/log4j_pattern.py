"""Compile a log4j ConversionPattern into one header regex that Java and Python both accept.

Source of the format: the log4j 1.2 ``PatternLayout`` / ``EnhancedPatternLayout`` javadoc, the
log4j2 Pattern Layout manual (https://logging.apache.org/log4j/2.x/manual/pattern-layout.html)
and logback's conversion words; the patterns Kafka ships (``config/log4j.properties``,
``config/log4j2.yaml``, ``config/connect-log4j.properties``) and those of the Strimzi, Debezium
and Confluent for Kubernetes images (docs/kafka-log-formats.md section 1).

The regex is written for ``java.util.regex`` (Spark ``regexp_replace``) and Python ``re`` alike:
numbered groups only, ASCII classes (``[0-9]``, never ``\\d`` or ``\\w``, whose meaning differs
between the two), metacharacters escaped with a backslash, no digit escaped and no letter but in
the final ``\\s*$`` and the control escapes ``\\t \\n \\r \\f`` (Java rejects unknown letter
escapes). Every capturing group takes part in every match, so Java's ``$n`` and
Python's ``group(n)`` give the same text (``''`` when empty). The regex has no nested
quantifier: its captured free-text fields are ``.*?`` runs bounded by the text after them, and an
uncaptured one (MDC, method...) is an atomic group ``(?>.*?TEXT)`` that ends at the first
occurrence of the text after it (atomic groups: Java, and Python >= 3.11, which the project
requires).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: The canonical fields a compiled layout may capture, in the order they are documented.
FIELDS = ("prefix", "ts", "level", "message", "logger", "logger_line", "thread")

_LEVEL = "TRACE|DEBUG|INFO|WARNING|WARN|ERROR|FATAL"
_LOGGER_START = "[A-Za-z_$]"
_LOGGER_REST = r"[A-Za-z0-9_$.\-]"
_FREE = ".*?"
_TS_DATE = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TS_TIME = "[0-9]{2}:[0-9]{2}:[0-9]{2}"
_META = set("\\^$.|?*+()[]{}")
_CONTROL_ESCAPES = {"\n": r"\n", "\r": r"\r", "\t": r"\t", "\f": r"\f"}

# Conversion words of log4j 1.2, log4j2 and logback, by what they print. The longest known word
# that starts the letters after '%' is the conversion (log4j2's rule), so every word of the three
# frameworks is listed, the unsupported ones too: '%replace' must not read as '%r' + 'eplace'.
_KIND_WORDS: dict[str, str] = {
    "date": "d date",
    "level": "p le level",
    "logger": "c lo logger C class",
    "thread": "t tn thread threadName",
    "message": "m msg message",
    "line": "L line",
    "text": "X mdc MDC x NDC M method F file l location marker markerSimpleName",
    "number": "r relative sn sequenceNumber pid processId T tid threadId tp threadPriority",
    "throwable": "ex exception throwable xEx xException xThrowable rEx rException rThrowable"
    " rootException wEx wException wThrowable xwEx xwException xwThrowable nopex nopexception",
    "newline": "n",
    "unsupported": "highlight style equals equalsIgnoreCase notEmpty varsNotEmpty"
    " variablesNotEmpty replace enc encode K map MAP maxLen maxLength N nano u uuid fqcn"
    " endOfBatch repeat black blue cyan green magenta red white yellow clr caller property cn"
    " contextName prefix kvp ms micros lsn i",
}
_KINDS = {word: kind for kind, words in _KIND_WORDS.items() for word in words.split()}
_CAPTURED = {
    "date": "ts",
    "level": "level",
    "logger": "logger",
    "thread": "thread",
    "message": "message",
    "line": "logger_line",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_MODIFIER = re.compile(r"(-?)([0-9]*)(?:\.-?([0-9]+))?")
# Named dates whose shape the pipeline parses: (date-time separator regex, millis separator).
# log4j 1 ISO8601 is 'yyyy-MM-dd HH:mm:ss,SSS'; log4j2 ISO8601 has a 'T' instead of the space.
_NAMED_DATES = {
    "": (" ", ","),
    "DEFAULT": (" ", ","),
    "DEFAULT_PERIOD": (" ", "."),
    "ISO8601": ("[ T]", ","),
    "ISO8601_PERIOD": ("T", "."),
}
_DATE_FORMAT = re.compile(r"yyyy-MM-dd( |'T')HH:mm:ss(?:([,.])SSS)?")
_LOGGER_PRECISION = re.compile(r"-?[0-9]+|[0-9*.~]+")
_MESSAGE_OPTIONS = {"nolookups", "lookups"}


class LayoutPatternError(ValueError):
    """A ConversionPattern that cannot become a header regex; the message names the pattern and
    the unsupported piece."""


@dataclass(frozen=True)
class CompiledLayout:
    """A log4j ConversionPattern compiled into one anchored header regex.

    Attributes:
        name: the layout name the pipeline writes to ``raw_lines.layout`` (given by the caller).
        pattern: the ConversionPattern as given.
        regex: ``^...$``, valid in Java and Python; numbered capturing groups only.
        groups: canonical field (see ``FIELDS``) -> group number, for the fields the pattern has;
            ``prefix`` is always group 1.
        has_time: whether the pattern has a date (then ``groups`` has ``ts``).
    """

    name: str
    pattern: str
    regex: str
    groups: Mapping[str, int] = field(hash=False)
    has_time: bool


@dataclass(frozen=True)
class _Conversion:
    word: str
    kind: str
    options: tuple[str, ...]
    pad: str  # "after" (%-5p), "before" (%5p) or "" (no minimum width)
    truncated: bool


@dataclass
class _Piece:
    body: str
    field: str | None = None  # the canonical group it captures, None when not captured
    free: bool = False  # body is ".*?": any text, bounded by what follows
    pad: str = ""
    literal: bool = False
    alternation: bool = False  # body is a|b|c: needs a group of its own


def _error(pattern: str, what: str) -> LayoutPatternError:
    return LayoutPatternError(f"log4j pattern {pattern!r}: {what}")


def _escape(text: str) -> str:
    """``text`` as a regex matching itself in Java and Python: a backslash before each regex
    metacharacter, ``\\t \\n \\r \\f`` for those control characters, no other backslash (Java
    rejects unknown escapes of letters)."""
    return "".join("\\" + ch if ch in _META else _CONTROL_ESCAPES.get(ch, ch) for ch in text)


def _read_options(pattern: str, at: int) -> tuple[tuple[str, ...], int]:
    """The ``{...}`` options starting at ``at`` (braces may nest) and the index after them."""
    options: list[str] = []
    while at < len(pattern) and pattern[at] == "{":
        depth, end = 0, at
        while end < len(pattern):
            depth += {"{": 1, "}": -1}.get(pattern[end], 0)
            if depth == 0:
                break
            end += 1
        if depth:
            raise _error(pattern, f"unclosed '{{' at position {at}")
        options.append(pattern[at + 1 : end])
        at = end + 1
    return tuple(options), at


def _read_conversion(pattern: str, at: int) -> tuple[_Conversion, str, int]:
    """The conversion whose '%' is at ``at``: (conversion, literal text glued after its word,
    index after it). log4j2's rule: the longest known word starting the identifier wins and the
    rest of the identifier is literal text (``%dabc`` is ``%d`` then ``abc``)."""
    modifier = _MODIFIER.match(pattern, at + 1)
    assert modifier is not None  # every part of _MODIFIER is optional
    identifier = _WORD.match(pattern, modifier.end())
    if identifier is None:
        raise _error(pattern, f"'%' at position {at} is not followed by a conversion word")
    letters = identifier.group()
    word = next((letters[:n] for n in range(len(letters), 0, -1) if letters[:n] in _KINDS), "")
    if not word:
        raise _error(pattern, f"unknown conversion %{letters}")
    kind = _KINDS[word]
    if kind == "unsupported":
        raise _error(pattern, f"unsupported conversion %{word}")
    options, end = _read_options(pattern, identifier.end())
    left, width, precision = modifier.groups()
    pad = ("after" if left else "before") if width else ""
    conversion = _Conversion(word, kind, options, pad, precision is not None)
    return conversion, letters[len(word) :], end


def _tokenize(pattern: str) -> list[str | _Conversion]:
    """The pattern as literal strings and conversions, in order (``%%`` is a literal '%')."""
    tokens: list[str | _Conversion] = []
    literal: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern[at] != "%":
            literal.append(pattern[at])
            at += 1
        elif pattern.startswith("%%", at):
            literal.append("%")
            at += 2
        else:
            if "".join(literal):
                tokens.append("".join(literal))
            literal = []
            conversion, glued, at = _read_conversion(pattern, at)
            tokens.append(conversion)
            literal.append(glued)
    if "".join(literal):
        tokens.append("".join(literal))
    return tokens


def _header_tokens(pattern: str, tokens: list[str | _Conversion]) -> list[str | _Conversion]:
    """The tokens of the first line: cut at the first ``%n``, throwables dropped (a trace is
    printed on the next lines), trailing whitespace left to the regex's final ``\\s*$``."""
    cut = next(
        (i for i, t in enumerate(tokens) if isinstance(t, _Conversion) and t.kind == "newline"),
        len(tokens),
    )
    for token in tokens[cut:]:
        after_newline = token.strip() if isinstance(token, str) else token.kind
        if after_newline not in ("", "newline", "throwable"):
            shown = token if isinstance(token, str) else "%" + token.word
            raise _error(pattern, f"{shown!r} after %n (a record over several lines)")
    header = [t for t in tokens[:cut] if not (isinstance(t, _Conversion) and t.kind == "throwable")]
    merged: list[str | _Conversion] = []
    for token in header:  # dropping a throwable can leave two literals side by side
        if isinstance(token, str) and merged and isinstance(merged[-1], str):
            merged[-1] += token
        else:
            merged.append(token)
    if merged and isinstance(merged[-1], str):
        merged[-1] = merged[-1].rstrip()
        if not merged[-1]:
            merged.pop()
    return merged


def _date_body(pattern: str, conversion: _Conversion) -> str:
    """The ``ts`` regex of a ``%d``: only shapes the pipeline parses as
    ``yyyy-MM-dd HH:mm:ss[.SSS]`` once 'T' and ',' are turned into ' ' and '.'. A second option
    (log4j2's time zone, ``%d{ISO8601}{UTC}``) is accepted and ignored: the pipeline takes the
    zone from the source's configuration."""
    if len(conversion.options) > 2:
        raise _error(pattern, f"unsupported date options {conversion.options}")
    if conversion.truncated:
        raise _error(pattern, f"unsupported truncation of %{conversion.word}")
    fmt = conversion.options[0].strip() if conversion.options else ""
    if fmt in _NAMED_DATES:
        separator, millis = _NAMED_DATES[fmt]
    else:
        shape = _DATE_FORMAT.fullmatch(fmt)
        if shape is None:
            raise _error(pattern, f"unsupported date format %{conversion.word}{{{fmt}}}")
        separator = "T" if shape.group(1) == "'T'" else " "
        millis = shape.group(2)
    fraction = "" if millis is None else f"{_escape(millis)}[0-9]{{3}}"
    return f"{_TS_DATE}{separator}{_TS_TIME}{fraction}"


def _logger_body(pattern: str, conversion: _Conversion) -> str:
    """The ``logger`` regex of ``%c`` / ``%C``: a Java name; greedy, since every character it
    stops at (space, ')', ':', ']') is one a logger name cannot hold (a '.' after it backtracks
    to the last dot). Precision ``{N}`` / ``{1.}`` shortens the name and keeps it valid."""
    if conversion.truncated:
        raise _error(pattern, f"unsupported truncation of %{conversion.word}")
    if len(conversion.options) > 1 or not all(
        _LOGGER_PRECISION.fullmatch(option) for option in conversion.options
    ):
        raise _error(pattern, f"unsupported options of %{conversion.word}: {conversion.options}")
    rest = _LOGGER_REST[:-1] + "~]" if "~" in "".join(conversion.options) else _LOGGER_REST
    return f"{_LOGGER_START}{rest}*"


def _conversion_piece(pattern: str, conversion: _Conversion) -> _Piece:
    """The regex piece of one conversion (captured or not is decided by the caller)."""
    kind, word = conversion.kind, conversion.word
    captured = _CAPTURED.get(kind)
    if kind == "date":
        return _Piece(_date_body(pattern, conversion), captured, pad=conversion.pad)
    if kind == "level":
        if conversion.truncated or conversion.options:
            raise _error(pattern, f"unsupported truncation or options of %{word}")
        return _Piece(_LEVEL, captured, pad=conversion.pad, alternation=True)
    if kind == "logger":
        return _Piece(_logger_body(pattern, conversion), captured, pad=conversion.pad)
    if kind == "line":
        return _Piece(r"-?[0-9]+|\?", captured, pad=conversion.pad, alternation=True)
    if kind == "number":
        return _Piece("[0-9]+", None, pad=conversion.pad)
    if kind == "message" and not set(conversion.options) <= _MESSAGE_OPTIONS:
        raise _error(pattern, f"unsupported options of %{word}: {conversion.options}")
    if kind == "thread" and conversion.options:
        raise _error(pattern, f"unsupported options of %{word}: {conversion.options}")
    return _Piece(_FREE, captured, free=True, pad=conversion.pad)


def _pieces(pattern: str, tokens: list[str | _Conversion]) -> list[_Piece]:
    """The regex pieces after the prefix; a field captured twice is captured the first time
    only (a second ``%m`` is an error: it would make the message ambiguous)."""
    pieces: list[_Piece] = []
    seen: set[str] = set()
    for token in tokens:
        if isinstance(token, str):
            pieces.append(_Piece(_escape(token), literal=True))
            continue
        piece = _conversion_piece(pattern, token)
        if piece.field in seen:
            if piece.field == "message":
                raise _error(pattern, "more than one %m")
            piece.field = None
        if piece.field is not None:
            seen.add(piece.field)
        pieces.append(piece)
    if "message" not in seen:
        raise _error(pattern, "no message conversion (%m, %msg or %message)")
    return pieces


def _settle_free(pieces: list[_Piece]) -> None:
    """Fix the body of each free piece, from the end.

    The last piece takes the rest of the line (``.*``). A free piece followed by another one
    matches nothing, which is what its lazy ``.*?`` would match first anyway; this saves the
    quadratic search of a line that fails. An uncaptured piece (MDC, method...) followed by
    literal text ends at the first occurrence of that text, taken with it in an atomic group
    ``(?>.*?TEXT)`` (Java and Python >= 3.11): chained ``.*?`` would cost a power of the line
    length on a line that fails late (Debezium's three MDC values cost seconds on 300 '|').
    """
    next_absorbs = False
    for index in range(len(pieces) - 1, -1, -1):
        piece = pieces[index]
        following = pieces[index + 1] if index + 1 < len(pieces) else None
        if not piece.free:
            next_absorbs = False
        elif next_absorbs:
            piece.body = ""
        elif piece.field is None and following is not None and following.literal:
            piece.body = f"(?>.*?{following.body})"
            piece.pad = ""  # padding spaces are part of the value, before the text
            following.body = ""
        else:
            piece.body = ".*" if following is None else _FREE
            next_absorbs = True


def _assemble(pieces: list[_Piece]) -> tuple[str, dict[str, int]]:
    """The anchored regex of ``pieces`` and the group number of each captured field."""
    parts = ["^"]
    groups: dict[str, int] = {}
    for piece in pieces:
        if piece.field is not None:
            groups[piece.field] = len(groups) + 1
            body = f"({piece.body})"
        elif piece.alternation:
            body = f"(?:{piece.body})"
        else:
            body = piece.body
        before = " *" if piece.pad == "before" else ""
        after = " *" if piece.pad == "after" else ""
        parts.append(f"{before}{body}{after}")
    parts.append(r"\s*$")
    return "".join(parts), groups


def compile_pattern(pattern: str, name: str) -> CompiledLayout:
    """Compile a log4j ConversionPattern into one anchored header regex.

    Source: log4j 1.2 PatternLayout and log4j2 PatternLayout docs; Kafka
    ``config/log4j.properties`` / ``config/log4j2.yaml`` / ``config/connect-log4j.properties``.

    Args:
        pattern: the ConversionPattern, e.g. ``[%d] %p %m (%c)%n``.
        name: the layout name to record (``raw_lines.layout``).

    Returns:
        A ``CompiledLayout``. Group 1 is ``prefix`` (``(.*?)``: what a container runtime or
        syslog wrote before the line; ``()`` when the pattern starts with a free-text field,
        since a lazy prefix would match nothing there anyway). Supported: ``%d``/``%date`` in the
        shapes ``yyyy-MM-dd HH:mm:ss`` with an optional ``,SSS`` / ``.SSS`` and a space or 'T'
        (``DEFAULT``, ``DEFAULT_PERIOD``, ``ISO8601``, ``ISO8601_PERIOD`` or the explicit
        format; a log4j2 time-zone option is ignored); ``%p``/``%level``/``%le``; ``%c``/
        ``%logger``/``%lo``/``%C``/``%class`` with ``{N}`` or ``{1.}``; ``%t``/``%thread``/
        ``%tn``; ``%m``/``%msg``/``%message``; ``%L``/``%line`` (digits or ``?``); MDC, NDC,
        method, file, location and marker words as uncaptured text; ``%r``, ``%sn``, ``%pid``,
        ``%T``/``%tid`` as digits; ``%n``; ``%%``; throwable words (printed on later lines).
        Padding (``%-5p``, ``%5p``) lets spaces follow or precede the value.

    Raises:
        LayoutPatternError: a conversion word the regex cannot follow (``%highlight``,
            ``%style``, ``%replace``, ``%enc``, ``%K`` ...), a date shape other than the above,
            truncation or options of the level, truncation of the logger or date, a pattern
            without ``%m`` or with two, conversions after ``%n``, an unclosed ``{``.
    """
    tokens = _header_tokens(pattern, _tokenize(pattern))
    pieces = [_Piece(_FREE, "prefix", free=True), *_pieces(pattern, tokens)]
    _settle_free(pieces)
    regex, groups = _assemble(pieces)
    re.compile(regex)  # a bug here must not reach Spark as a Java PatternSyntaxException
    return CompiledLayout(
        name=name,
        pattern=pattern,
        regex=regex,
        groups=MappingProxyType(groups),
        has_time="ts" in groups,
    )


#: Built-in layouts the pipeline tries, in order, when its own fast header regex does not match.
BUILTIN_LAYOUTS: tuple[CompiledLayout, ...] = tuple(
    compile_pattern(pattern, name)
    for name, pattern in (
        ("confluent_operator", "[%p] %d [%t] %c %M - %m%n"),
        (
            "debezium",
            "%d{ISO8601} %-5p  %X{dbz.connectorType}|%X{dbz.connectorName}"
            "|%X{dbz.connectorContext}  %m   [%c]%n",
        ),
        ("bracketed_fields", "[%d] [%p] [%t] [%c] - %m%n"),
        ("logger_dash", "[%d] %p %c - %m%n"),
        ("category", "[%d][%p][category=%c] %m%n"),
    )
)
