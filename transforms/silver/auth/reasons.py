"""What an authentication exception message says: a stable code, the SASL mechanism, and the
principals / mechanisms a re-authentication or handshake error names.

Messages (docs/kafka-log-formats.md section 4.1, checked against apache/kafka 2.2.0-4.0):
* ``SaslServerAuthenticator.ReauthInfo.ensurePrincipalUnchanged``: ``Cannot change principals
  during re-authentication from %s.%s: %s.%s`` (principal type, name; old then new).
* ``SaslServerAuthenticator.ReauthInfo.saslMechanismUnchanged``: ``SASL mechanism '%s' requested
  by client is not supported for re-authentication of mechanism '%s'`` (new, then the session's).
* ``SaslServerAuthenticator.handleHandshakeRequest`` DEBUG: ``SASL mechanism '{}' requested by
  client is not supported``, then it throws ``Unsupported SASL mechanism {}``.
* ``SaslClientAuthenticator.handleSaslHandshakeResponse``: ``Client SASL mechanism '%s' not
  enabled in the server, enabled mechanisms are %s``, ``Unexpected handshake request with client
  mechanism %s, enabled mechanisms are %s``, ``Unknown error code %s, client mechanism is %s,
  enabled mechanisms are %s``; the list is ``List.toString``: ``[PLAIN, SCRAM-SHA-256]``.
* Confluent Server's Selector: ``Failed authentication with /ip (channelId=...) (userId=<u>,
  errorMessage=<message>)``; a client's Selector (Confluent Platform): ``(errorMessage=...)``.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from transforms.columns import group

#: failure_reason_code of a GSSAPI (Kerberos) failure no more precise code matches.
KERBEROS_FAILED = "KERBEROS_FAILED"
_KERBEROS_RE = (
    r"GSSAPI|GSS initiate failed|GSSException|Kerberos|Clock skew too great"
    r"|No valid credentials provided \(Mechanism level"
)
#: A Confluent Server Selector failure's exception text: ``userId=alice, errorMessage=<the
#: exception message>``; a client's Selector prints ``errorMessage=<message>``.
CONFLUENT_USER_RE = r"(?s)^userId=([^,]*), errorMessage=(.*)$"
_ERROR_MESSAGE_PREFIX_RE = r"^errorMessage="

#: failure_reason_code -> regex on the exception message; the first match wins, else 'OTHER'.
FAILURE_REASON_CODES: dict[str, str] = {
    "INVALID_CREDENTIALS": r"^Authentication failed during (?:re-)?authentication due to invalid",
    "INVALID_USERNAME_OR_PASSWORD": r"^Authentication failed: Invalid username or password",
    "USERNAME_NOT_SPECIFIED": r"^Authentication failed: username not specified",
    "PASSWORD_NOT_SPECIFIED": r"^Authentication failed: password not specified",
    "CREDENTIALS_NOT_VERIFIED": r"^Authentication failed: credentials for user could not be",
    "AUTHORIZATION_ID_MISMATCH": r"^Authentication failed: Client requested an authorization id",
    "UNEXPECTED_REQUEST_DURING_HANDSHAKE": r"^Unexpected Kafka request .* during SASL handshake",
    "UNEXPECTED_REQUEST_DURING_AUTHENTICATION": r"^Unexpected Kafka request .* SASL authentication",
    "UNSUPPORTED_MECHANISM": (
        r"^(?:Unsupported SASL mechanism |Client SASL mechanism '[^']*' not enabled in the server"
        r"|SASL mechanism '[^']*' requested by client is not supported$)"
    ),
    "INVALID_RECEIVE_SIZE": r"^Failing SASL authentication due to invalid receive size",
    "PRINCIPAL_CHANGE_DURING_REAUTH": r"^Cannot change principals during re-authentication",
    "MECHANISM_CHANGE_DURING_REAUTH": r"^SASL mechanism .* not supported for re-authentication",
    "SSL_HANDSHAKE_FAILED": r"^SSL handshake failed",
    "SSL_POST_HANDSHAKE_FAILED": r"^Failed to process post-handshake messages",
    "MECHANISM_MISMATCH": r"^Unexpected handshake request with client mechanism ",
    "OAUTH_INVALID_TOKEN": r"\"status\"\s*:\s*\"invalid_token\"",
    # InvalidRequestException on the first request (SaslServerAuthenticator.handleKafkaRequest).
    "INVALID_REQUEST": r"^Invalid request, potential reasons: ",
    # GSSAPI (Kerberos) failures the JDK's GSS-API reports through SaslClientAuthenticator
    # (``An error: (java.security.PrivilegedActionException: javax.security.sasl.SaslException:
    # GSS initiate failed [Caused by GSSException: No valid credentials provided (Mechanism
    # level: Server not found in Kerberos database (7) - LOOKING_UP_SERVER)]) occurred when
    # evaluating SASL token received from the Kafka Broker. ...``), ``Clock skew too great``,
    # ``Failed to find any Kerberos tgt``. Last: a message a more precise code matches (``...
    # with SASL mechanism GSSAPI``, ``Unsupported SASL mechanism GSSAPI``) keeps that code.
    KERBEROS_FAILED: _KERBEROS_RE,
}

_MECHANISM_RE = (
    r"with SASL mechanism (\S+)|^Unsupported SASL mechanism (\S+)"
    r"|with client mechanism ([^,\s]+)|^SASL mechanism '([^']*)' requested"
    r"|^Client SASL mechanism '([^']*)'|client mechanism is ([^,\s]+),"
)
_MECHANISM_GROUPS = 6
#: Type and name split on the first '.', old and new split on the last ': Type.'.
PRINCIPAL_CHANGE_RE = (
    r"^Cannot change principals during re-authentication from ([^.]*)\.(.*): ([^.:\s]*)\.(.*)$"
)
_OLD_MECHANISM_RE = r"not supported for re-authentication of mechanism '([^']*)'$"
_ENABLED_RE = r"enabled mechanisms are \[([^\]]*)\]$"


def failure_reason_code(reason: Column) -> Column:
    """Stable code for an authentication exception message (FAILURE_REASON_CODES, else
    'OTHER'); null for a null reason."""
    result = F.when(reason.isNull(), F.lit(None).cast("string"))
    for code, regex in FAILURE_REASON_CODES.items():
        result = result.when(reason.rlike(regex), F.lit(code))
    return result.otherwise(F.lit("OTHER"))


def sasl_mechanism(reason: Column) -> Column:
    """SASL mechanism an exception message names (``with SASL mechanism X``, ``Unsupported SASL
    mechanism X``, ``client mechanism X,``, ``SASL mechanism 'X' requested``, ``Client SASL
    mechanism 'X'``, ``client mechanism is X,``), else ``GSSAPI`` for a Kerberos failure
    (``KERBEROS_FAILED``: the JDK's GSS-API is Kafka's GSSAPI mechanism,
    ``org.apache.kafka.common.security.kerberos``); else null (a null reason too)."""
    groups = range(1, _MECHANISM_GROUPS + 1)
    kerberos = failure_reason_code(reason) == F.lit(KERBEROS_FAILED)
    named = [group(reason, _MECHANISM_RE, i) for i in groups]
    return F.coalesce(*named, F.when(kerberos, F.lit("GSSAPI")))


def confluent_user(reason: Column) -> Column:
    """The principal (string, ``User:<userId>``; Kafka's default principal builder makes
    ``User:`` + the SASL user name) of a Confluent Server Selector failure whose exception text
    (string) is ``userId=alice, errorMessage=...``; null for other, null or userId-less
    texts."""
    return F.concat(F.lit("User:"), group(reason, CONFLUENT_USER_RE, 1))


def exception_message(reason: Column) -> Column:
    """The exception message (string) inside a Selector failure's parentheses (string): the
    ``errorMessage=`` part of Confluent Server's ``userId=<u>, errorMessage=<message>``,
    without the leading ``errorMessage=`` a Confluent Platform client's Selector prints
    (``errorMessage={"status":"invalid_token"}``); other texts as they are, null as null."""
    confluent = F.when(
        reason.rlike(CONFLUENT_USER_RE), F.regexp_extract(reason, CONFLUENT_USER_RE, 2)
    ).otherwise(reason)
    return F.regexp_replace(confluent, _ERROR_MESSAGE_PREFIX_RE, "")


def reauth_principals(reason: Column) -> dict[str, Column]:
    """reauth_old_principal / reauth_new_principal from ``Cannot change principals during
    re-authentication from User.alice: User.bob`` as ``User:alice`` / ``User:bob``; null for
    other or null reasons (and for a part with an empty type or name)."""
    r = PRINCIPAL_CHANGE_RE
    return {
        "reauth_old_principal": F.concat(group(reason, r, 1), F.lit(":"), group(reason, r, 2)),
        "reauth_new_principal": F.concat(group(reason, r, 3), F.lit(":"), group(reason, r, 4)),
    }


def reauth_old_mechanism(reason: Column) -> Column:
    """The session's mechanism Y in ``... not supported for re-authentication of mechanism
    'Y'``; null otherwise."""
    return group(reason, _OLD_MECHANISM_RE, 1)


def enabled_mechanisms(reason: Column) -> Column:
    """``array<string>`` of the broker mechanisms in ``... enabled mechanisms are [A, B]``
    (``[]`` gives an empty array); null when the reason lists none or is null."""
    inner = F.regexp_extract(reason, _ENABLED_RE, 1)
    listed = F.when(inner == "", F.array().cast("array<string>")).otherwise(F.split(inner, ", "))
    return F.when(reason.rlike(_ENABLED_RE), listed)
