"""Replace secrets in log text with keyed fingerprints before the text becomes a row.

Kafka's DEBUG request log prints delegation-token HMACs (the token's SCRAM password) and SASL
``authBytes`` in clear: ``JsonConverterGenerator`` writes ``bytes`` fields as base64 strings and
``RequestChannel.loggableRequest`` masks only (Incremental)AlterConfigs (docs/kafka-log-formats.md
section 2.3). Envelope ``requestData`` / ``responseData`` carry a forwarded request's bytes, which
for RenewDelegationToken / ExpireDelegationToken include the HMAC (KIP-590). Pre-2.8 string logs
print ``bytes`` with ``Arrays.toString`` (a secret) or as a ``java.nio.HeapByteBuffer`` (only the
buffer's positions: not a secret, kept as is).

Each secret value becomes ``[REDACTED hmac-sha256:<32 hex>]``: the first 128 bits of
HMAC-SHA256(fingerprint key, the value as logged without JSON quotes, UTF-8), so the same token
is recognisable across lines and runs of one lake without its password being stored.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import reduce

import pandas as pd
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.functions import pandas_udf

from transforms.bronze.native import SECRET_KEY_MENTION_FUNCTION, fingerprint_function
from transforms.fingerprints import keyed_fingerprint
from transforms.native import registered_function

#: JSON keys whose values are secrets or carry them (2.8+ request log).
SECRET_JSON_KEYS: tuple[str, ...] = (
    "hmac",
    "authBytes",
    "saslAuthBytes",
    "requestData",
    "responseData",
    "password",
)
PLACEHOLDER_PREFIX = "[REDACTED hmac-sha256:"
#: A placeholder as it appears in redacted text; group 1 is the fingerprint.
PLACEHOLDER_PATTERN = r"\[REDACTED hmac-sha256:([0-9a-f]{32})\]"

_KEYS = "|".join(SECRET_JSON_KEYS)
# A value cut short (a line cut at a random byte, a disk that filled up) ends at the end of
# its line: ``"hmac":"Zm9v`` and ``hmac=[1, 2, 3`` are secrets too, or pieces of them.
# JSON strings are matched as an unrolled loop with possessive quantifiers: the textbook
# ``(?:[^"\\]|\\.)*`` recurses once per character in Java's regex engine, and a 50 kB value
# overflowed the executor's stack and killed the JVM.
_CUT = r"(?=\n|\z)"
# Group 1: the key and separator; group 2: the value ("base64" or a byte array [1, 2]), also
# when the line ends inside it. Keys in any ASCII case (a damaged or crafted line).
_JSON_STRING = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'
_JSON_VALUE = r"(?:" + _JSON_STRING + r'(?:"|' + _CUT + r")|\[[^\]\n]*+(?:\]|" + _CUT + r"))"
# A JSON key's opening quote may be missing: a record cut in two right after it (the rest,
# ``hmac":"Zm9v..."``, starts the next line).
_KEY_START = r'(?:"|\b)'
_JSON_SECRET = r"(?i)(" + _KEY_START + r"(?:" + _KEYS + r')"\s*:\s*)(' + _JSON_VALUE + ")"
# Pre-2.8 toString renderings: key=[1, 2, ...] or key=<token>. A ByteBuffer's toString
# (``java.nio.HeapByteBuffer[pos=0 lim=64 cap=64]``) prints no byte of the value: it is no
# secret, and fingerprinting it would give every token the same identity, so it is kept.
_STRING_SECRET = (
    r"(?i)\b((?:" + _KEYS + r")=)(\[[^\]\n]*(?:\]|" + _CUT + r")|(?!java\.nio\.)[^,)\s]+)"
)
_ANY_SECRET = r"(?i)" + _KEY_START + r"(?:" + _KEYS + r')"\s*:\s*["\[]|\b(?:' + _KEYS + r")="
# A line that ends inside a secret value (a record cut in two: the rest of the value starts
# the next line, which folds into this record as continuation text with no key before it):
# inside the value, right after the key and its separator, after the key alone, or inside
# the key's name (``"hm``: the next line starts ``ac":"Zm9v...``).
_OPEN_VALUE = (
    r'(?:"(?:' + _KEYS + r')"\s*:\s*(?:' + _JSON_STRING + r"|\[[^\]\n]*+)?"
    r'|"(?:' + _KEYS + r')"\s*'
    r"|\b(?:" + _KEYS + r")=(?:\[[^\]\n]*)?)"
)
# A key's name cut short: after a JSON key's opening quote, or after the ``(`` or ``, `` that
# starts a field of a pre-2.8 toString (``Renew(hm`` + ``ac=[1, 2]``).
_KEY_PREFIXES = "|".join(sorted({k[:i] for k in SECRET_JSON_KEYS for i in range(1, len(k) + 1)}))
_OPEN_KEY = r'(?:(?:"|\(|, )(?:' + _KEY_PREFIXES + "))"
_OPEN_END = r"(?i)(?:" + _OPEN_VALUE + "|" + _OPEN_KEY + r")\z"
# The start of the next line, up to the value's end: what :func:`redact_split_values`
# removes. The rest of a key's name and its separator, then a whole value or the rest of one.
_VALUE_REST = (
    r'(?:[A-Za-z]*"\s*(?::\s*)?|[A-Za-z]*=|:\s*)?(?:"[^"\n]*+"?|\[[^\]\n]*+\]?|[^"\]\n]*+)'
)


def _fingerprint(key: bytes, value: str) -> str:
    """HMAC-SHA256 of the value as Kafka printed it, JSON quotes removed, as 32 hex chars."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return keyed_fingerprint(key, value)


def fingerprints(values: Column, key: bytes, spark: SparkSession | None = None) -> Column:
    """Keyed fingerprints of an array of secret values.

    Args:
        values: array<string> of secret values as logged (null array = nothing to do).
        key: the lake's fingerprint key (``jobs.fingerprint_keys``); held by the function
            object, never a literal of the plan.
        spark: the session the column is for; the active one when None.

    Returns:
        array<string> Column, one 32-hex fingerprint per value; null for a null array.

    Spark has no HMAC function. One could be composed from ``sha2`` over ``key XOR ipad/opad``
    literals, but that would put key material into the query plan, where ``explain()``, the
    Spark UI and event logs show it. So the key is held by a function object: the JVM function
    ``transforms.bronze.native.fingerprint_function`` when the session has the project's jar
    (``jobs.jvm_parsers``), one call per array (generated code, where ``transform`` over a
    function per value had none); else a pandas UDF that keeps
    the key in its closure, vectorised over Arrow batches, which Spark evaluates on every row
    in Python workers (issue 15: starting them alone cost a run on ``samples/`` seconds). Both
    give the same fingerprints.
    """
    session = spark or SparkSession.getActiveSession()
    native = None if session is None else fingerprint_function(session, key)
    if native is not None:
        return native(values)

    @pandas_udf("array<string>")  # type: ignore[call-overload, untyped-decorator]
    def _hmac_sha256(batch: pd.Series) -> pd.Series:
        return batch.map(
            lambda items: None if items is None else [_fingerprint(key, v) for v in items]
        )

    return _hmac_sha256(values)  # type: ignore[no-any-return]


def _replace_all(text: Column, pattern: str, fp_map: Column, quoted: bool) -> Column:
    """Replace each ``pattern`` match (key + value) in ``text`` with key + placeholder."""
    pairs = F.arrays_zip(
        F.regexp_extract_all(text, F.lit(pattern), 1).alias("k"),
        F.regexp_extract_all(text, F.lit(pattern), 2).alias("v"),
    )

    def step(acc: Column, x: Column) -> Column:
        placeholder = F.concat(F.lit(PLACEHOLDER_PREFIX), fp_map[x["v"]], F.lit("]"))
        if quoted:
            placeholder = F.concat(F.lit('"'), placeholder, F.lit('"'))
        replaced = F.replace(acc, F.concat(x["k"], x["v"]), F.concat(x["k"], placeholder))
        return F.coalesce(replaced, acc)

    return F.aggregate(pairs, text, step)


def mentions_secret_key(text: Column) -> Column:
    """Whether ``text`` contains a secret key's name, in any ASCII case: a cheap pre-test.

    Every text that a redaction pattern matches passes this test (each pattern needs one of
    ``SECRET_JSON_KEYS`` spelled out, ASCII case-insensitively), so rows that fail it can skip
    the regexes: a substring search is several times cheaper than a case-insensitive
    alternation tried at every position of a long line. Null in, null out.

    With the project's JVM functions in the active session (``jobs.jvm_parsers``), one scan of
    the text (``transforms.bronze.native.SECRET_KEY_MENTION_FUNCTION``, the same answers);
    otherwise ``lower()`` and five substring searches, whose ``lower()`` alone cost 4.4 s of
    CPU per million lines (issue 15).
    """
    native = registered_function(SECRET_KEY_MENTION_FUNCTION)
    return native(text) if native else mentions_secret_key_by_expressions(text)


def mentions_secret_key_by_expressions(text: Column) -> Column:
    """``mentions_secret_key`` by Spark expressions alone: ``lower()`` and five substring
    searches."""
    lowered = F.lower(text)
    # saslAuthBytes contains authBytes: one search covers both.
    needles = dict.fromkeys(k.lower() for k in SECRET_JSON_KEYS if k != "saslAuthBytes")
    return reduce(operator.or_, [lowered.contains(needle) for needle in needles])


def secret_values(text: Column) -> Column:
    """The distinct secret values in ``text``, as logged (JSON strings keep their quotes).

    Args:
        text: the texts of one record, joined by ``\\n``.

    Returns:
        array<string> Column, JSON-form values first, then ``key=value`` values, duplicates
        removed; empty when there are none. Null in, empty array out.
    """
    return F.array_distinct(
        F.concat(
            F.regexp_extract_all(text, F.lit(_JSON_SECRET), 2),
            F.regexp_extract_all(text, F.lit(_STRING_SECRET), 2),
        )
    )


def secret_fingerprint_map(texts: list[Column], key: bytes) -> Column:
    """Map each secret value found in ``texts`` (JSON and string forms) to its fingerprint.

    Args:
        texts: the texts of one record (raw line, continuation).
        key: the fingerprint key.

    Returns:
        map<string,string> Column (value as logged -> 32-hex fingerprint); null when no text
        mentions a secret key, so the UDF does no work for ordinary records. In a DataFrame,
        prefer ``with_secrets_fingerprinted``: here the values are extracted twice (keys and
        UDF input).
    """
    joined = F.concat_ws("\n", *texts)
    found = F.when(joined.rlike(_ANY_SECRET), secret_values(joined))
    return F.map_from_arrays(found, fingerprints(found, key))


def redact_with(text: Column, fp_map: Column) -> Column:
    """``text`` with every secret value replaced by ``[REDACTED hmac-sha256:<fingerprint>]``.

    Args:
        text: a log message, raw line or continuation (string).
        fp_map: a column holding the record's ``secret_fingerprint_map``, already computed
            (Spark refuses a Python UDF inside the higher-order function used here: use
            ``with_secrets_fingerprinted``).

    Returns:
        string Column. JSON values stay valid JSON (the placeholder is quoted); JSON ``null``
        values are left as they are. Null in, null out. A value without a fingerprint is still
        removed: ``redact_secrets`` runs last as a safety net. As one expression, the JSON
        pass is evaluated three times (Spark does not share it inside the string pass's
        higher-order functions); ``with_secrets_fingerprinted`` runs the passes as separate
        projections instead.
    """
    with_json = _replace_all(text, _JSON_SECRET, fp_map, quoted=True)
    with_string = _replace_all(with_json, _STRING_SECRET, fp_map, quoted=False)
    return redact_secrets(F.when(fp_map.isNull(), text).otherwise(with_string))


def with_secrets_fingerprinted(
    df: DataFrame,
    columns: Sequence[str],
    key: bytes,
    covering: Sequence[str] | None = None,
) -> DataFrame:
    """Replace the secrets in ``columns`` with keyed fingerprints.

    ``covering``: the columns whose texts together contain every text of ``columns`` (a
    record's raw line contains its message), so the pre-test scans each character once;
    ``columns`` when None.

    Input columns: ``columns`` (string). Output columns: the same columns, redacted; nothing
    else changes. One fingerprint map per row is computed from all ``columns`` together, so a
    token appearing in two columns gets one fingerprint. Only rows that mention a secret key
    at all go through the regexes and the UDF (a substring pre-test, ``mentions_secret_key``,
    then ``_ANY_SECRET``); the rest (nearly every log line) keep their text, in one pass over
    ``df``: the rows are never split and united again, which would evaluate ``df``'s plan
    twice.

    The result equals ``redact_with`` applied to each column with ``secret_fingerprint_map``,
    but over columns computed once: the candidate flag, the secret values, then their
    fingerprints (``fingerprints``: the JVM function, one call per row's array; or the pandas
    UDF, one Arrow evaluation per row, null and no work for rows that are not candidates),
    then the JSON pass, the ``key=value`` pass and the safety net in one projection
    (``_redacted``). A secret value split across two lines (``redact_split_values``) loses the
    rest that starts the next line first.
    """
    texts = [F.col(c) for c in columns]
    pretest = reduce(operator.or_, [mentions_secret_key(F.col(c)) for c in covering or columns])
    joined = F.concat_ws("\n", *texts)
    flag, values, fp_map = "_secret_candidate", "_secret_values", "_secret_fingerprints"
    candidate = F.col(flag)

    def only_candidates(updates: dict[str, Column]) -> dict[str, Column]:
        return {c: F.when(candidate, expr).otherwise(F.col(c)) for c, expr in updates.items()}

    # ``when``, not ``&``: the pre-test is null for a null text (most rows have no
    # continuation), and ``null AND x`` evaluates x, the regex, on every row.
    candidate_flag = F.coalesce(F.when(pretest, joined.rlike(_ANY_SECRET)), F.lit(False))
    split = {}
    if "raw" in columns and "continuation" in columns:
        split["continuation"] = redact_split_values(F.col("raw"), F.col("continuation"))
        # A record cut inside a key's name (``"hm`` + ``ac":"Zm9v..."``) names no key at all.
        candidate_flag = candidate_flag | (
            F.col("continuation").isNotNull() & ends_inside_secret(F.col("raw"))
        )
    return (
        df.withColumn(flag, candidate_flag)
        .withColumns(only_candidates(split))
        .withColumn(values, F.when(candidate, secret_values(joined)))
        .withColumn(
            fp_map,
            F.map_from_arrays(F.col(values), fingerprints(F.col(values), key, df.sparkSession)),
        )
        .withColumns(only_candidates({c: _redacted(F.col(c), F.col(fp_map)) for c in columns}))
        .drop(flag, values, fp_map)
    )


def _redacted(text: Column, fp_map: Column) -> Column:
    """``text`` through the JSON pass, the ``key=value`` pass and the safety net, as one
    expression: the JSON pass is evaluated again for each of the three reads the ``key=value``
    pass makes of it, on the rows that mention a secret (few), where three projections of
    their own, each a higher-order function without generated code, copied every row of the
    write (issue 15, forty-eighth part). ``fp_map`` is a column, computed once per row."""
    with_json = _replace_all(text, _JSON_SECRET, fp_map, quoted=True)
    return redact_secrets(_replace_all(with_json, _STRING_SECRET, fp_map, quoted=False))


def ends_inside_secret(line: Column) -> Column:
    """Whether ``line`` (one physical line) ends inside a secret: inside its value
    (``"hmac":"Zm9v``, ``hmac=[1, 2``), right after its key (``"hmac":``, ``"hmac"``,
    ``hmac=``) or inside its key's name (``"hm``). That is the first half of a record cut in two
    (a disk that filled up, a writer killed mid-line): the rest starts the next line, which
    ``transforms.bronze.records.number_lines`` therefore folds into this record as a
    continuation, where ``redact_split_values`` removes it.

    Boolean Column, false for null. Cheap for nearly every line: one that ends in ``)``, ``]``
    or ``}`` (a log4j ``(logger)``, a Strimzi ``[thread]``, a JSON object) skips the regexes,
    as no base64 or byte-array value and no key name ends in those; the key-name test reads
    the last 16 characters only, the value test runs on lines that name a secret key. The
    last character is tested with ``endswith`` (the last bytes): ``substring(line, -1, 1)``
    counts every character of the line first, which cost 8 s per million lines.
    """
    closes = reduce(operator.or_, [line.endswith(end) for end in (")", "]", "}")])
    open_key = F.substring(line, -16, 16).rlike(r"(?i)" + _OPEN_KEY + r"\z")
    open_value = F.when(mentions_secret_key(line), line.rlike(r"(?i)" + _OPEN_VALUE + r"\z"))
    return F.coalesce(F.when(~closes, open_key | open_value), F.lit(False))


def redact_split_values(first_line: Column, rest: Column) -> Column:
    """``rest`` (the record's continuation lines) with the start of each line that follows a
    line ending inside a secret (``ends_inside_secret``) replaced by ``[REDACTED]``: the rest
    of the key's name and its separator if the cut fell there, then the value or the rest of
    it. The first continuation line when ``first_line`` (the record's raw line) ends open, and
    any continuation line after one that does. Null ``rest`` stays null.
    """
    after_first = F.when(
        ends_inside_secret(first_line), F.regexp_replace(rest, "^" + _VALUE_REST, "[REDACTED]")
    ).otherwise(rest)
    within = r"(?mi)((?:" + _OPEN_VALUE + "|" + _OPEN_KEY + r")\n)" + _VALUE_REST
    return F.regexp_replace(after_first, within, "$1[REDACTED]")


def redact_secrets(text: Column) -> Column:
    """Replace any secret value still in ``text`` with a bare ``[REDACTED]`` (no fingerprint).

    Placeholders already in the text are kept. Null in, null out.
    """
    not_placeholder = r'(?!"\[REDACTED)'
    json_pattern = r"(?i)(" + _KEY_START + r"(?:" + _KEYS + r')"\s*:\s*)' + not_placeholder
    json_pattern += _JSON_VALUE
    json_redacted = F.regexp_replace(text, json_pattern, '$1"[REDACTED]"')
    string_pattern = r"(?i)\b((?:" + _KEYS + r")=)(?!\[REDACTED)"
    string_pattern += r"(?:\[[^\]\n]*(?:\]|" + _CUT + r")|(?!java\.nio\.)[^,)\s]+)"
    return F.regexp_replace(json_redacted, string_pattern, "$1[REDACTED]")
