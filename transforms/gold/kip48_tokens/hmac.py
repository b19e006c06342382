"""Verify delegation-token HMACs seen in the request log against the cluster's secret (KIP-48).

Kafka mints a token's HMAC (its SCRAM password) as HMAC-SHA512 keyed with
``delegation.token.secret.key`` (its UTF-8 bytes) over the token id's UTF-8 bytes
(``kafka.server.DelegationTokenManager.createHmac`` / ``createSecretKey``; KRaft:
``DelegationTokenControlManager.createHmac``). The request log prints it base64 in JSON
(2.8+, ``JsonConverterGenerator`` writes ``bytes`` as a Jackson ``BinaryNode``) and as
``Arrays.toString`` in the older string form. Bronze never keeps it: it keeps
``HMAC-SHA256(fingerprint key, the value as printed)`` truncated to 32 hex characters
(``transforms.bronze.redaction``). So a logged HMAC is verified by fingerprinting, for its token id,
the HMAC the secret would give, in both printed forms, and comparing fingerprints.
"""

from __future__ import annotations

import base64

import pandas as pd
from cryptography.hazmat.primitives import hashes, hmac
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.functions import pandas_udf

from transforms.fingerprints import keyed_fingerprint
from transforms.gold.kip48_tokens.native import token_hmac_function


def _printed_forms(token_hmac: bytes) -> tuple[str, str]:
    """The HMAC as the JSON request log prints it (base64) and as the pre-2.8 string form
    does (``Arrays.toString``: signed decimal bytes)."""
    signed = ", ".join(str(b - 256 if b > 127 else b) for b in token_hmac)
    return base64.b64encode(token_hmac).decode("ascii"), f"[{signed}]"


def _mac(key: bytes, algorithm: hashes.HashAlgorithm, data: bytes) -> bytes:
    mac = hmac.HMAC(key, algorithm)
    mac.update(data)
    return mac.finalize()


def expected_fingerprints(
    token_id: Column, secret: bytes, fingerprint_key: bytes, spark: SparkSession | None = None
) -> Column:
    """Fingerprints of the HMAC the secret gives ``token_id``, one per printed form.

    Args:
        token_id: string token id (null gives null).
        secret: the cluster's ``delegation.token.secret.key`` (or pre-4.0
            ``delegation.token.master.key``) as bytes; held by the function object only.
        fingerprint_key: the lake's fingerprint key (``jobs.fingerprint_keys``).
        spark: the session the column is for; the active one when None.

    Returns:
        array<string> Column: [fingerprint of the base64 form, of the Arrays.toString form].

    Spark has no HMAC function, and composing one from ``sha2`` would put the secret into the
    query plan (visible in ``explain()``, the UI and event logs). So the secret is held by a
    function object: the JVM function ``TokenHmac`` (``transforms.gold.kip48_tokens.native``)
    when the session has the project's jar, else a pandas UDF with the secret in its closure
    (vectorised over Arrow batches, in Python workers), with the same values.
    """
    session = spark or SparkSession.getActiveSession()
    native = None
    if session is not None and secret and fingerprint_key:
        native = token_hmac_function(session, secret, fingerprint_key)
    if native is not None:
        return native(token_id)

    def forms(value: str) -> list[str]:
        minted = _mac(secret, hashes.SHA512(), value.encode("utf-8"))
        return [keyed_fingerprint(fingerprint_key, p) for p in _printed_forms(minted)]

    @pandas_udf("array<string>")  # type: ignore[call-overload, untyped-decorator]
    def _fingerprints(batch: pd.Series) -> pd.Series:
        return batch.map(lambda v: None if v is None else forms(v))

    return _fingerprints(token_id)  # type: ignore[no-any-return]


def hmac_verified(
    token_id: Column,
    fingerprint: Column,
    secret: bytes,
    fingerprint_key: bytes,
    spark: SparkSession | None = None,
) -> Column:
    """True when ``fingerprint`` (a logged HMAC's bronze fingerprint) is the fingerprint of
    HMAC-SHA512(secret, token_id) in either printed form, false when not; null when the
    token id or the fingerprint is null (nothing to verify). ``spark``: the session of the
    frame the column is for (``expected_fingerprints``; the active one when None)."""
    known = token_id.isNotNull() & fingerprint.isNotNull()
    expected = expected_fingerprints(token_id, secret, fingerprint_key, spark)
    return F.when(known, F.array_contains(expected, fingerprint))


def with_hmac_verified(
    lifecycle: DataFrame, secret: bytes | None, fingerprint_key: bytes | None
) -> DataFrame:
    """Set TOKEN_LIFECYCLE.hmac_verified from token_id and hmac_fingerprint.

    Input / output columns: TOKEN_LIFECYCLE (token_id, hmac_fingerprint, hmac_verified).
    Without a secret or a fingerprint key (or with an empty secret: tokens disabled) the
    frame is returned unchanged, so a row keeps what an earlier run with the secret found;
    with both, rows that can be verified get true / false and the rest keep their value.
    """
    if not secret or not fingerprint_key:
        return lifecycle
    c = F.col
    verified = hmac_verified(
        c("token_id"), c("hmac_fingerprint"), secret, fingerprint_key, lifecycle.sparkSession
    )
    return lifecycle.withColumn("hmac_verified", F.coalesce(verified, c("hmac_verified")))
