"""KIP-48's HMAC check as a JVM function (issue 15): the fingerprints of the HMAC a token
secret mints for a token id, without a Python worker.

``TokenHmac.java`` is compiled into the jar of the project's JVM functions
(``jobs.jvm_parsers``), which adds it to a session. ``token_hmac_function`` gives it when the
session has that jar, otherwise None, and ``transforms.gold.kip48_tokens.hmac`` computes the
same values with its pandas UDF (``tests/spark/test_token_hmac.py`` checks both). The secret and
the fingerprint key are held by a JVM object, never a query literal
(``transforms.native.keyed_jvm_function``).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable

from pyspark.sql import Column, SparkSession

from transforms.native import keyed_jvm_function

#: The folder of the Java source (a package resource), compiled into the functions' jar.
SOURCES: Traversable = files(__name__)
#: The class; its static ``of(Column tokenId, byte[] secret, byte[] key)`` makes the column.
TOKEN_HMAC_CLASS = "kafkaaudit.gold.TokenHmac"


def token_hmac_function(
    spark: SparkSession, secret: bytes, fingerprint_key: bytes
) -> Callable[[Column], Column] | None:
    """``TokenHmac.of(token_id, secret, fingerprint_key)`` as a column function: for a string
    token id, array<string> of the fingerprints of HMAC-SHA512(secret, token id) printed in
    base64 and as ``Arrays.toString`` (``transforms.gold.kip48_tokens.hmac``; null for null).
    None when ``spark`` has not added the functions' jar (no JDK, a failed build, the setting
    off).

    Raises nothing for a missing class; py4j's error for an empty secret or key.
    """
    return keyed_jvm_function(spark, TOKEN_HMAC_CLASS, [secret, fingerprint_key])
