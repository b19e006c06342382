"""Delegation-token and ENVELOPE columns of a request-log record.

Field names are those of the generated ``*DataJsonConverter`` for
``clients/src/main/resources/common/message/{Create,Renew,Expire,Describe}DelegationToken
{Request,Response}.json`` (KIP-48; owner in Create v3+, requester in Create/Describe v3+,
KIP-373) and ``EnvelopeRequest.json`` (KIP-590). ``bytes`` fields (hmac) arrive redacted by
bronze as ``[REDACTED hmac-sha256:<32 hex>]``; only the hex part is kept.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from schemas.request_events import FORMAT_JSON
from transforms.columns import epoch_ms_ts
from transforms.kafka_apis import (
    CREATE_DELEGATION_TOKEN,
    DESCRIBE_DELEGATION_TOKEN,
    ENVELOPE,
    EXPIRE_DELEGATION_TOKEN,
    RENEW_DELEGATION_TOKEN,
    TOKEN_API_KEYS,
)
from transforms.silver.request_log.kip590_envelope import decoded_principal, envelope_client_address

#: A bronze redaction placeholder; group 1 is the keyed fingerprint.
PLACEHOLDER_RE = r"^\[REDACTED hmac-sha256:([0-9a-f]{32})\]$"
_STRING_HMAC_RE = r"\bhmac=\[REDACTED hmac-sha256:([0-9a-f]{32})\]"

_S, _L = StringType(), LongType()
PRINCIPAL_SCHEMA = StructType(
    [StructField("principalType", _S, True), StructField("principalName", _S, True)]
)
_PRINCIPALS = ArrayType(PRINCIPAL_SCHEMA, True)
#: Union of the four token request bodies (each API fills its own fields).
TOKEN_REQUEST_SCHEMA = StructType(
    [
        StructField("ownerPrincipalType", _S, True),
        StructField("ownerPrincipalName", _S, True),
        StructField("renewers", _PRINCIPALS, True),
        StructField("maxLifetimeMs", _L, True),
        StructField("hmac", _S, True),
        StructField("renewPeriodMs", _L, True),
        StructField("expiryTimePeriodMs", _L, True),
        StructField("owners", _PRINCIPALS, True),
    ]
)
DESCRIBED_TOKEN_SCHEMA = StructType(
    [
        *PRINCIPAL_SCHEMA.fields,
        StructField("tokenRequesterPrincipalType", _S, True),
        StructField("tokenRequesterPrincipalName", _S, True),
        StructField("issueTimestamp", _L, True),
        StructField("expiryTimestamp", _L, True),
        StructField("maxTimestamp", _L, True),
        StructField("tokenId", _S, True),
        StructField("hmac", _S, True),
        StructField("renewers", _PRINCIPALS, True),
    ]
)
#: Union of the four token response bodies.
TOKEN_RESPONSE_SCHEMA = StructType(
    [
        StructField("errorCode", IntegerType(), True),
        *PRINCIPAL_SCHEMA.fields,
        StructField("tokenRequesterPrincipalType", _S, True),
        StructField("tokenRequesterPrincipalName", _S, True),
        StructField("issueTimestampMs", _L, True),
        StructField("expiryTimestampMs", _L, True),
        StructField("maxTimestampMs", _L, True),
        StructField("tokenId", _S, True),
        StructField("hmac", _S, True),
        StructField("tokens", ArrayType(DESCRIBED_TOKEN_SCHEMA, True), True),
    ]
)
ENVELOPE_SCHEMA = StructType(
    [StructField("requestPrincipal", _S, True), StructField("clientHostAddress", _S, True)]
)


def hmac_fingerprint(value: Column) -> Column:
    """The 32-hex fingerprint of a redaction placeholder; null for null or any other value
    (an unredacted value is never copied)."""
    return F.nullif(F.regexp_extract(value, PLACEHOLDER_RE, 1), F.lit(""))


def principal_string(type_: Column, name: Column) -> Column:
    """``<type>:<name>`` (KafkaPrincipal.toString); null when either part is null."""
    return F.concat(type_, F.lit(":"), name)


def principal_strings(principals: Column) -> Column:
    """array<struct<principalType, principalName>> -> array<string> of ``Type:Name``."""
    return F.transform(
        principals, lambda p: principal_string(p["principalType"], p["principalName"])
    )


def _described(tokens: Column) -> Column:
    return F.transform(
        tokens,
        lambda t: F.struct(
            principal_string(t["principalType"], t["principalName"]).alias("owner"),
            principal_string(
                t["tokenRequesterPrincipalType"], t["tokenRequesterPrincipalName"]
            ).alias("requester"),
            epoch_ms_ts(t["issueTimestamp"]).alias("issue_ts"),
            epoch_ms_ts(t["expiryTimestamp"]).alias("expiry_ts"),
            epoch_ms_ts(t["maxTimestamp"]).alias("max_ts"),
            F.nullif(t["tokenId"], F.lit("")).alias("token_id"),
            hmac_fingerprint(t["hmac"]).alias("hmac_fingerprint"),
            principal_strings(t["renewers"]).alias("renewers"),
        ),
    )


def parsed_bodies(
    log_format: Column, api_key: Column, request_json: Column, response_json: Column
) -> dict[str, Column]:
    """Intermediate columns to materialise before ``token_columns`` / ``envelope_columns``:
    ``_tq`` / ``_tr`` (token request / response structs, APIs 38-41) and ``_env`` (ENVELOPE
    request struct), each null for other records, so each body is parsed once."""
    json = log_format == FORMAT_JSON
    tokens = json & api_key.isin(*TOKEN_API_KEYS)
    return {
        "_tq": F.when(tokens, F.from_json(request_json, TOKEN_REQUEST_SCHEMA)),
        "_tr": F.when(tokens, F.from_json(response_json, TOKEN_RESPONSE_SCHEMA)),
        "_env": F.when(json & (api_key == ENVELOPE), F.from_json(request_json, ENVELOPE_SCHEMA)),
    }


def token_columns(
    log_format: Column,
    api_key: Column,
    req: Column,
    resp: Column,
    *,
    request_text: Column,
    response_text: Column,
) -> dict[str, Column]:
    """``token_*`` columns of REQUEST_EVENTS; null unless api_key is 38-41.

    Args:
        log_format: 'json' | 'string'.
        api_key: int api key.
        req, resp: ``_tq`` / ``_tr`` from ``parsed_bodies``.
        request_text, response_text: pre-2.8 toString texts.

    The JSON form fills every column; the pre-2.8 string form only token_hmac_fingerprint
    (``hmac=[REDACTED ...]`` in the Renew/Expire request or Create response text).
    """
    json = log_format == FORMAT_JSON
    create, describe = api_key == CREATE_DELEGATION_TOKEN, api_key == DESCRIBE_DELEGATION_TOKEN
    period = api_key.isin(RENEW_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN)
    expiry = create | period
    string_hmac = F.coalesce(
        F.when(create, F.regexp_extract(response_text, _STRING_HMAC_RE, 1)),
        F.when(period, F.regexp_extract(request_text, _STRING_HMAC_RE, 1)),
    )
    issue_ms, max_ms = resp["issueTimestampMs"], resp["maxTimestampMs"]
    expiry_ms = resp["expiryTimestampMs"]
    values = {
        "token_owner_principal_type": F.when(create, req["ownerPrincipalType"]),
        "token_owner_principal_name": F.when(create, req["ownerPrincipalName"]),
        "token_renewers": F.when(create, principal_strings(req["renewers"])),
        "token_max_lifetime_ms": F.when(create, req["maxLifetimeMs"]),
        "token_renew_period_ms": F.when(api_key == RENEW_DELEGATION_TOKEN, req["renewPeriodMs"]),
        "token_expiry_time_period_ms": F.when(
            api_key == EXPIRE_DELEGATION_TOKEN, req["expiryTimePeriodMs"]
        ),
        "token_owner": F.when(
            create, principal_string(resp["principalType"], resp["principalName"])
        ),
        "token_requester": F.when(
            create,
            principal_string(
                resp["tokenRequesterPrincipalType"], resp["tokenRequesterPrincipalName"]
            ),
        ),
        "token_issue_timestamp_ms": F.when(create, issue_ms),
        "token_issue_ts": F.when(create, epoch_ms_ts(issue_ms)),
        "token_expiry_timestamp_ms": F.when(expiry, expiry_ms),
        "token_expiry_ts": F.when(expiry, epoch_ms_ts(expiry_ms)),
        "token_max_timestamp_ms": F.when(create, max_ms),
        "token_max_ts": F.when(create, epoch_ms_ts(max_ms)),
        "token_id": F.when(create, F.nullif(resp["tokenId"], F.lit(""))),
        "token_hmac_fingerprint": F.coalesce(
            # A failed Create returns an empty hmac: its fingerprint would match every failure.
            F.when(create & (resp["errorCode"] == 0), hmac_fingerprint(resp["hmac"])),
            F.when(period, hmac_fingerprint(req["hmac"])),
        ),
        "token_describe_owners": F.when(describe, principal_strings(req["owners"])),
        "token_described": F.when(describe, _described(resp["tokens"])),
    }
    columns = {name: F.when(json, value) for name, value in values.items()}
    columns["token_hmac_fingerprint"] = F.when(json, values["token_hmac_fingerprint"]).otherwise(
        F.nullif(string_hmac, F.lit(""))
    )
    return columns


def envelope_columns(envelope: Column) -> dict[str, Column]:
    """``_envp`` (decoded requestPrincipal struct, to materialise before
    ``envelope_principal_columns``) and envelope_client_address, from ``_env`` (null unless a
    JSON ENVELOPE record)."""
    return {
        "_envp": decoded_principal(envelope["requestPrincipal"]),
        "envelope_client_address": envelope_client_address(envelope["clientHostAddress"]),
    }


def envelope_principal_columns(decoded: Column) -> dict[str, Column]:
    """envelope_principal and envelope_principal_token_authenticated from ``_envp``."""
    return {
        "envelope_principal": decoded["principal"],
        "envelope_principal_token_authenticated": decoded["token_authenticated"],
    }
