"""Small column helpers shared by the silver parsers: regex groups and typed null columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType


def group(text: Column, regex: str, index: int) -> Column:
    """Group ``index`` of ``regex`` in ``text``; null when ``text`` is null, does not match, or
    the group is empty."""
    return F.nullif(F.regexp_extract(text, regex, index), F.lit(""))


#: A substring length that reaches the end of any string (Integer.MAX_VALUE).
_TO_THE_END = 2**31 - 1


def rest_of(text: Column, position: Column | int) -> Column:
    """``text`` from character ``position`` to its end, as ``substr(position, length(text))``
    gives it: 1-based, 0 as 1, a negative position counted from the end; "" past the end; null
    for a null text or position.

    ``substr(position, length(text))`` reads the text three times (counting its characters,
    then walking them to both ends of the substring); with a length that reaches past any end
    (Integer.MAX_VALUE) Spark's ``UTF8String.substring`` walks only to ``position`` and copies
    the bytes after it. In the request-log parse of a million lines this took the JVM's CPU
    from 70 s to 60 s (docs/performance.md, issue 15's tenth part).
    """
    start = position if isinstance(position, Column) else F.lit(position)
    return text.substr(start, F.lit(_TO_THE_END))


#: Separates the groups in ``groups``' one-pass replacement (a control character no log prints).
_GROUP_SEPARATOR = "\u0001"


def split_groups(
    parts: Column, count: int, unreadable: Column, fallback: Column, empty_as_null: bool = True
) -> Column:
    """Elements 2..``count + 1`` of ``parts``, or ``fallback`` where ``unreadable``; null when
    the result is empty. ``parts`` is evaluated once.

    For a regex rewrite split at a separator: ``parts`` is the text rewritten to a separator
    before each group and split at it, so a match gives ``["", group 1, ..., group count,
    ...]`` and a text that does not match gives ``[text]``, empty without its first element.
    ``unreadable`` (the text itself holds the separator) hands such a row to ``fallback``. A
    ``when(size(parts) == n, parts)`` evaluates the rewrite twice, once for the test and once
    for the value: Spark shares a subexpression between a condition and its branch only when
    both always run. ``nullif`` binds its argument once (a common expression), but only at
    the top of a column: inside a branch Spark inlines it again, hence the ``when`` within.
    Half the cost of the header regex of every line (issue 15, sixteenth part).

    ``empty_as_null=False`` keeps an empty result as it is, without ``nullif``: its common
    expression is a projection of its own where the operators run one by one
    (``jobs.pipeline.PARSE_CONF``, issue 15, forty-eighth part). For a caller that reads only
    elements (``group_at``), to which both mean no match.

    Input: ``parts`` array<string>, ``unreadable`` boolean, ``fallback`` array<string> (null
    or of ``count`` elements). Output: array<string> of ``count`` elements, or null (or empty,
    with ``empty_as_null=False``).
    """
    found = F.when(unreadable, fallback).otherwise(F.slice(parts, 2, count))
    return F.nullif(found, F.array().cast("array<string>")) if empty_as_null else found


def groups(text: Column, regex: str, count: int, empty_as_null: bool = True) -> Column:
    """Groups 1..``count`` of ``regex`` in ``text`` from one regex evaluation; read them with
    ``group_at``.

    ``regex`` must match from the text's start when it matches at all (anchored ``^``, or
    applied to a text that is exactly one match). The text is rewritten to the groups, each
    preceded by U+0001 and the last followed by one, with ``regexp_replace`` and split again;
    what the match leaves after it (Java's ``$`` matches before a final line terminator: ``\\n``,
    ``\\r\\n``, U+0085, U+2028, U+2029) lands after the last separator and is dropped. A text
    that itself contains U+0001 falls back to one ``regexp_extract`` per group, so ``group_at``
    always equals ``group``. The rewrite is evaluated once per row (``split_groups``).

    Returns:
        array<string> of ``count`` elements ("" for an empty or non-participating group); null
        when ``text`` is null or does not match (empty for no match with
        ``empty_as_null=False``, ``split_groups``). Element ``i`` is group ``i + 1``.
    """
    sep = _GROUP_SEPARATOR
    replacement = sep + sep.join(f"${i}" for i in range(1, count + 1)) + sep
    replaced = F.regexp_replace(text, regex, replacement)
    extracted = [F.regexp_extract(text, regex, i) for i in range(1, count + 1)]
    per_group = F.when(text.rlike(regex), F.array(*extracted))
    parts = F.split(replaced, sep)
    return split_groups(parts, count, text.contains(sep), per_group, empty_as_null)


#: A line format: (kind, regex, {field name: group number}). The regex matches from the text's
#: start when it matches at all (``groups``).
LineFormat = tuple[str, str, Mapping[str, int]]


def numbered(names: Sequence[str]) -> dict[str, int]:
    """``{name: group number}`` for groups named in order: ``names[0]`` is group 1."""
    return {name: number for number, name in enumerate(names, 1)}


def first_format(text: Column, formats: Sequence[LineFormat], kind: str) -> Column:
    """Which of ``formats`` matches ``text`` first, and that format's groups.

    Each format's regex runs at most twice per row: ``rlike``, then one rewrite for all its
    groups (``groups``). A ``group`` per field inside the ``when`` ran it twice per field, as
    Spark inlines ``nullif`` inside a branch (issue 15, forty-eighth and forty-ninth parts).
    Read the result with ``format_fields``.

    Output: struct(``kind`` string: the format's kind, ``found`` array<string>: its groups 1..n,
    n the highest group number it names); null when ``text`` is null or no format matches.
    """
    result: Column | None = None
    for name, regex, fields in formats:
        count = max(fields.values(), default=0)
        found = groups(text, regex, count, empty_as_null=False) if count else F.array()
        value = F.struct(F.lit(name).alias(kind), found.cast("array<string>").alias("found"))
        matched = text.rlike(regex)
        result = F.when(matched, value) if result is None else result.when(matched, value)
    if result is None:
        raise ValueError("no line format given")
    return result


def format_fields(matched: Column, formats: Sequence[LineFormat], kind: str) -> dict[str, Column]:
    """``kind`` (string) and every field the ``formats`` name (string, in first-named order), read
    from ``first_format``'s struct: the matched format's group, null where that format has no
    such field, the group is empty or nothing matched (as ``group`` gives it)."""
    matched_kind, found = matched[kind], matched["found"]
    columns = {kind: matched_kind}
    for field in dict.fromkeys(field for _, _, fields in formats for field in fields):
        value: Column | None = None
        for name, _, fields in formats:
            if field in fields:
                got, hit = F.get(found, fields[field] - 1), matched_kind == name
                # group_at without nullif, whose common expression would be a projection of its
                # own (split_groups): get() is cheap to read twice.
                got = F.when(got != "", got)
                value = F.when(hit, got) if value is None else value.when(hit, got)
        assert value is not None  # the field is named by some format
        columns[field] = value
    return columns


def starts_after_spaces(text: Column, prefix: str) -> Column:
    """``ltrim(text).startswith(prefix)``: whether ``text``, leading spaces (U+0020) aside,
    starts with ``prefix``; null for a null text.

    ``ltrim`` copies the whole text; a text that starts with ``prefix`` itself (a JSON
    request-log body starts with its ``{``) is answered without that copy (issue 15).

    Raises:
        ValueError: ``prefix`` is empty or starts with a space (the answers would differ).
    """
    if not prefix or prefix.startswith(" "):
        raise ValueError(f"prefix {prefix!r} must be non-empty and not start with a space")
    return F.when(text.startswith(prefix), F.lit(True)).otherwise(F.ltrim(text).startswith(prefix))


def ends_before_spaces(text: Column, suffix: str) -> Column:
    """``rtrim(text).endswith(suffix)``: whether ``text``, trailing spaces (U+0020) aside, ends
    with ``suffix``; null for a null text. Without ``rtrim``'s copy of the text when it ends
    with ``suffix`` itself (``starts_after_spaces``).

    Raises:
        ValueError: ``suffix`` is empty or ends with a space.
    """
    if not suffix or suffix.endswith(" "):
        raise ValueError(f"suffix {suffix!r} must be non-empty and not end with a space")
    return F.when(text.endswith(suffix), F.lit(True)).otherwise(F.rtrim(text).endswith(suffix))


def group_at(found: Column, index: int) -> Column:
    """Group ``index`` (1-based) of a ``groups`` array: null when the array is null or the group
    is empty, like ``group``."""
    return F.nullif(F.get(found, index - 1), F.lit(""))


def typed_nulls(schema: StructType, names: Iterable[str]) -> dict[str, Column]:
    """A null column of the type ``schema`` gives each of ``names``, by name.

    Lets a parser fill the columns its source format never carries (for example the Confluent
    audit-log columns on log4j rows) so that every parser's output has the table's columns.

    Raises:
        KeyError: a name that ``schema`` does not have.
    """
    return {name: F.lit(None).cast(schema[name].dataType) for name in names}


def lookup(mapping: dict[str, str], key: Column) -> Column:
    """``mapping[key]`` as a string Column; null for a null key or one not in ``mapping``."""
    return F.create_map(*[F.lit(x) for pair in mapping.items() for x in pair])[key]


#: 9999-12-31T23:59:59.999Z, the last instant a timestamp column holds.
MAX_EPOCH_MS = 253_402_300_799_999


def epoch_ms_ts(epoch_ms: Column) -> Column:
    """UTC timestamp of epoch milliseconds; null for null, negative (-1 = not set) or past
    9999-12-31 (Kafka saturates ``now + lifetime`` at Long.MAX_VALUE)."""
    return F.when(epoch_ms.between(0, MAX_EPOCH_MS), F.timestamp_millis(epoch_ms))
