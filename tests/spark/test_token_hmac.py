"""transforms.gold.kip48_tokens.hmac: a logged HMAC's fingerprint checked against HMAC-SHA512(secret,
token id). The test vectors are computed here with the standard library's hmac / hashlib /
struct, independently of the code under test."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from transforms.gold.kip48_tokens import hmac as token_hmac
from transforms.gold.kip48_tokens.hmac import (
    expected_fingerprints,
    hmac_verified,
    with_hmac_verified,
)
from transforms.gold.kip48_tokens.native import token_hmac_function

SECRET = b"cluster-secret-\xc3\xa9"  # the UTF-8 bytes of 'cluster-secret-é'
OTHER_SECRET = b"another-cluster"
FP_KEY = bytes(range(32))


def fingerprint(printed: str) -> str:
    """Bronze's fingerprint of a value as logged: HMAC-SHA256, first 32 hex characters."""
    return hmac.new(FP_KEY, printed.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def minted(secret: bytes, token_id: str) -> bytes:
    return hmac.new(secret, token_id.encode("utf-8"), hashlib.sha512).digest()


def json_form(token_id: str, secret: bytes = SECRET) -> str:
    """Fingerprint of the HMAC as the 2.8+ JSON request log prints it (base64)."""
    return fingerprint(base64.b64encode(minted(secret, token_id)).decode())


def string_form(token_id: str) -> str:
    """Fingerprint of the HMAC as the pre-2.8 string log prints it (Arrays.toString)."""
    signed = struct.unpack("64b", minted(SECRET, token_id))
    return fingerprint("[" + ", ".join(map(str, signed)) + "]")


@pytest.fixture(params=["jvm", "python"])
def checked_by(
    request: pytest.FixtureRequest, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> str:
    """HMACs checked by the JVM function (the session has the project's jar), or by the pandas
    UDF (as a session without it: no JDK, a failed build, the setting off)."""
    if request.param == "jvm":
        if token_hmac_function(spark, SECRET, FP_KEY) is None:
            pytest.skip("no JVM functions in this session (no JDK to build them)")
    else:
        monkeypatch.setattr(token_hmac, "token_hmac_function", lambda *_: None)
    return str(request.param)


def test_hmac_verified_true_false_and_null(spark: SparkSession, checked_by: str) -> None:
    rows = [
        (1, "tokA", json_form("tokA")),  # minted by this cluster
        (2, "MJ0AH_Ke-Q0uI9bkdWZkXA", string_form("MJ0AH_Ke-Q0uI9bkdWZkXA")),  # pre-2.8 form
        (3, "tokB", json_form("tokB", OTHER_SECRET)),  # another cluster's secret
        (4, "tokC", json_form("tokA")),  # tokA's HMAC presented for tokC
        (5, None, json_form("tokA")),
        (6, "tokD", None),
    ]
    df = spark.createDataFrame(rows, "n int, token_id string, fp string")
    actual = df.select(
        "n", hmac_verified(F.col("token_id"), F.col("fp"), SECRET, FP_KEY).alias("v")
    )
    expected = spark.createDataFrame(
        [(1, True), (2, True), (3, False), (4, False), (5, None), (6, None)], "n int, v boolean"
    )
    assertDataFrameEqual(actual, expected)
    python_udf = "ArrowEvalPython" in actual._jdf.queryExecution().executedPlan().toString()
    assert python_udf == (checked_by == "python")


def test_the_jvm_hmac_check_is_the_python_one(spark: SparkSession) -> None:
    """``TokenHmac.java`` against the standard library's HMAC-SHA512 and both printed forms, on
    token ids at the edges of UTF-8 (empty, astral characters, long); neither the secret nor
    the fingerprint key is in the plan."""
    if token_hmac_function(spark, SECRET, FP_KEY) is None:
        pytest.skip("no JVM functions in this session (no JDK to build them)")
    ids = ["tokA", "MJ0AH_Ke-Q0uI9bkdWZkXA", "", "é", "日本語", "\U0001f600", "x" * 5000]
    df = spark.createDataFrame([(i,) for i in [*ids, None]], "token_id string")
    got = df.select(
        "token_id", expected_fingerprints(F.col("token_id"), SECRET, FP_KEY).alias("fp")
    )
    expected = spark.createDataFrame(
        [(i, [json_form(i), string_form(i)]) for i in ids] + [(None, None)],
        "token_id string, fp array<string>",
    )
    assertDataFrameEqual(got, expected)
    plan = got._jdf.queryExecution().toString()
    assert "kafka_audit_token_hmac_fingerprints" in plan and "ArrowEvalPython" not in plan
    for secret in (SECRET, FP_KEY):
        assert secret.hex() not in plan and str(list(secret)) not in plan
    assert "cluster-secret" not in plan


def test_with_hmac_verified_keeps_earlier_results_without_secret(
    spark: SparkSession, checked_by: str
) -> None:
    schema = "token_id string, hmac_fingerprint string, hmac_verified boolean"
    rows = [
        ("tokA", json_form("tokA"), None),
        ("tokB", json_form("tokB", OTHER_SECRET), None),
        ("tokE", None, True),
    ]
    lifecycle = spark.createDataFrame(rows, schema)
    assertDataFrameEqual(with_hmac_verified(lifecycle, None, FP_KEY), lifecycle)
    assertDataFrameEqual(with_hmac_verified(lifecycle, b"", FP_KEY), lifecycle)
    expected = spark.createDataFrame(
        [
            ("tokA", json_form("tokA"), True),
            ("tokB", json_form("tokB", OTHER_SECRET), False),
            ("tokE", None, True),
        ],
        schema,
    )
    verified = with_hmac_verified(lifecycle, SECRET, FP_KEY)
    assertDataFrameEqual(verified, expected)
    # The frame's own session picks the function, whichever session is active in this thread.
    python_udf = "ArrowEvalPython" in verified._jdf.queryExecution().executedPlan().toString()
    assert python_udf == (checked_by == "python")
