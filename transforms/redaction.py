"""Remove secrets from log text before it becomes a row of any table.

Kafka's DEBUG request log prints delegation-token HMACs (the token's SCRAM password) and SASL
``authBytes`` in clear: ``JsonConverterGenerator`` writes ``bytes`` fields as base64 strings and
``RequestChannel.loggableRequest`` masks only (Incremental)AlterConfigs (kafka-log-formats.md
section 2.3). Envelope ``requestData`` / ``responseData`` carry a forwarded request's bytes, which
for RenewDelegationToken / ExpireDelegationToken include the HMAC (KIP-590). Pre-2.8 string logs
print ``bytes`` with ``Arrays.toString`` or as a ``java.nio.HeapByteBuffer``.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

REDACTED = "[REDACTED]"

#: JSON keys whose values are secrets or carry them (2.8+ request log).
SECRET_JSON_KEYS: tuple[str, ...] = (
    "hmac",
    "authBytes",
    "saslAuthBytes",
    "requestData",
    "responseData",
    "password",
)
_KEYS = "|".join(SECRET_JSON_KEYS)
# "key":"base64" or "key":[..] (a byte array rendered as numbers); null stays null.
_JSON_SECRET = r'("(?:' + _KEYS + r')"\s*:\s*)(?:"(?:[^"\\]|\\.)*"|\[[^\]]*\])'
# Pre-2.8 toString renderings: key=[1, 2, ...], key=java.nio.HeapByteBuffer[pos=0 lim=64 cap=64],
# key=<token up to , ) or whitespace>.
_STRING_SECRET = r"(?i)\b((?:" + _KEYS + r")=)(?:\[[^\]]*\]|java\.nio\.\w+\[[^\]]*\]|[^,)\s]+)"


def redact_secrets(text: Column) -> Column:
    """Replace every secret value in a log text with ``[REDACTED]``, keeping the key.

    Args:
        text: a log message, raw line or continuation (string).

    Returns:
        string Column with JSON ``"hmac":"..."``, ``"authBytes":"..."``, Envelope payloads and
        the pre-2.8 ``hmac=[...]`` forms redacted. Null in, null out. Values that are JSON
        ``null`` are left as they are (nothing to hide).
    """
    json_redacted = F.regexp_replace(text, _JSON_SECRET, '$1"' + REDACTED + '"')
    return F.regexp_replace(json_redacted, _STRING_SECRET, "$1" + REDACTED)
