"""DEBUG / TRACE authentication lines of SaslServerAuthenticator, SaslClientAuthenticator and
kafka.network.Processor: formats, their silver columns and their quarantine checks.

``transforms.silver.auth.parse`` parses them together with the Selector / NetworkClient outcome
lines. Formats
(docs/kafka-log-formats.md section 4; apache/kafka, read at 2.2.0, 2.3.0, 2.4.0, 2.5.0, 3.0.0,
3.2.3,
3.3.0 and trunk 1eb7644349c):
* ``clients/.../security/authenticator/SaslServerAuthenticator.java``
  ``ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs`` DEBUG ``Authentication complete;
  session max lifetime from broker config={} ms, credential expiration={} ({} ms); session
  expiration = {} ({} ms), sending {} ms to client``, or ``..., no credential expiration;
  session expiration = ...``, or ``..., no credential expiration; no session expiration, sending
  0 ms to client``; 2.2-3.2 also ``..., credential expiration={} ({} ms); no session expiration,
  sending 0 ms to client`` (removed by KAFKA-13848, 3.3.0). The dates are ``new Date(ms)``, i.e.
  ``Date.toString`` ``EEE MMM dd HH:mm:ss zzz yyyy`` in the JVM's zone; ``config=null`` when the
  mechanism has no ``connections.max.reauth.ms``; the credential remainder may be negative.
* Same class: ``Beginning re-authentication: {}`` (``this``, no toString: ``...@hash``),
  ``Failed during {}: {}`` (``authentication``/``re-authentication``, ``e.getMessage()``),
  ``Using SASL mechanism '{}' provided by client``, ``SASL mechanism '{}' requested by client is
  not supported`` and (``saslMechanismUnchanged``) ``... is not supported for re-authentication
  of mechanism '{}'``. No log prefix.
* ``core/.../kafka/network/SocketServer.scala`` ``Processor.processCompletedReceives``: TRACE
  ``Begin re-authentication: $channel``; DEBUG ``Disconnecting expired channel: $channel :
  $header`` (2.4+; 2.2-2.3 ``Disconnected expired channel``). ``KafkaChannel.toString`` =
  ``org.apache.kafka.common.network.KafkaChannel@<hash> id=<connection id>``;
  ``RequestHeader.toString`` = ``RequestHeader(apiKey=<ApiKeys enum>, apiVersion=n,
  clientId=c, correlationId=n)``, with ``, headerVersion=n`` since 3.4.
* ``SaslClientAuthenticator.ReauthInfo.setAuthenticationEndAndSessionReauthenticationTimes``
  DEBUG ``Finished {} with session expiration in {} ms and session re-authentication on or after
  {} ms`` / ``Finished {} with no session expiration and no session re-authentication``, with
  the client's LogContext prefix (2.5+).
"""

from __future__ import annotations

import operator
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from schemas import auth_events as schema
from transforms.columns import group
from transforms.quarantine import Check

DEBUG_LOGGER_RE = (
    r"^(?:org\.apache\.kafka\.common\.security\.authenticator\.Sasl(?:Server|Client)Authenticator"
    r"|kafka\.network\.Processor)(?::\d+)?$"
)
#: Looser than the formats, so that cut or garbled lines are claimed, then quarantined.
DEBUG_MARKER_RE = (
    r"(?i)authentication complete;|begin(?:ning)? re-authentication|failed during (?:re-)?auth"
    r"|using sasl mechanism|sasl mechanism '|expired channel|finished (?:re-)?authentication with"
)
#: How the lines start: a claimed line that starts so but does not parse is malformed.
DEBUG_HEAD_RE = (
    r"^(?:Authentication complete;|Begin(?:ning)? re-authentication|Failed during "
    r"|Using SASL mechanism|SASL mechanism '|Disconnect(?:ing|ed) expired channel"
    r"|Finished (?:re-)?authentication)"
)

_DATE = r"[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} \S+ \d{4,}"
SESSION_LIFETIME_RE = (
    r"^Authentication complete; session max lifetime from broker config=(-?\d+|null) ms, "
    rf"(?:credential expiration=({_DATE}) \((-?\d+) ms\)|no credential expiration); "
    rf"(?:session expiration = ({_DATE}) \((-?\d+) ms\)|no session expiration), "
    r"sending (-?\d+) ms to client$"
)
_CHANNEL = r"org\.apache\.kafka\.common\.network\.KafkaChannel@[0-9a-f]+ id=(\S+)"
EXPIRED_CHANNEL_RE = (
    rf"^Disconnect(?:ing|ed) expired channel: {_CHANNEL} : RequestHeader\(apiKey=([A-Z0-9_]+), "
    r"apiVersion=(-?\d+), clientId=(.*), correlationId=(-?\d+)(?:, headerVersion=\d+)?\)$"
)
PROCESSOR_REAUTH_RE = rf"^Begin re-authentication: {_CHANNEL}$"
SERVER_REAUTH_RE = r"^Beginning re-authentication: \S+@[0-9a-f]+$"
FAILED_DURING_RE = r"(?s)^Failed during (re-)?authentication: (.*)$"
MECHANISM_SELECTED_RE = r"^Using SASL mechanism '([^']*)' provided by client$"
MECHANISM_REJECTED_RE = (
    r"^SASL mechanism '[^']*' requested by client is not supported"
    r"(?: for re-authentication of mechanism '[^']*')?$"
)
CLIENT_FINISHED_RE = (
    r"^Finished (re-)?authentication with (?:session expiration in (-?\d+) ms and session "
    r"re-authentication on or after (-?\d+) ms|no session expiration and no session "
    r"re-authentication)$"
)

#: (kind, regex, names of its groups); '_'-names are intermediate.
FORMATS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("session_lifetime", SESSION_LIFETIME_RE, (
        "_max_reauth", "credential_expiration_text", "_credential_remaining",
        "session_expiration_text", "_session_remaining", "_sent",
    )),
    ("expired_channel", EXPIRED_CHANNEL_RE, (
        "connection_id", "api_key_name", "_api_version", "_header_client_id", "_correlation_id",
    )),
    ("processor_reauth", PROCESSOR_REAUTH_RE, ("connection_id",)),
    ("server_reauth", SERVER_REAUTH_RE, ()),
    ("failed_during", FAILED_DURING_RE, ("_re", "reason")),
    ("mechanism_selected", MECHANISM_SELECTED_RE, ("_mechanism",)),
    ("mechanism_rejected", MECHANISM_REJECTED_RE, ()),
    ("client_finished", CLIENT_FINISHED_RE, ("_re", "_session_lifetime", "_reauth_after")),
)  # fmt: skip

#: kind -> (event_type, event_type when the line says re-authentication).
EVENT_TYPES: dict[str, tuple[str, str]] = {
    "session_lifetime": (schema.EVENT_SESSION_LIFETIME,) * 2,
    "expired_channel": (schema.EVENT_EXPIRED_CHANNEL_DISCONNECTED,) * 2,
    "processor_reauth": (schema.EVENT_REAUTHENTICATION_STARTED,) * 2,
    "server_reauth": (schema.EVENT_REAUTHENTICATION_STARTED,) * 2,
    "failed_during": (schema.EVENT_AUTHENTICATION_ERROR, schema.EVENT_REAUTHENTICATION_ERROR),
    "mechanism_selected": (schema.EVENT_MECHANISM_SELECTED,) * 2,
    "mechanism_rejected": (schema.EVENT_MECHANISM_REJECTED,) * 2,
    "client_finished": (schema.EVENT_CLIENT_SESSION_ESTABLISHED,) * 2,
}
CLIENT_KINDS: tuple[str, ...] = ("client_finished",)
BROKER_KINDS: tuple[str, ...] = tuple(k for k in EVENT_TYPES if k not in CLIENT_KINDS)

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
#: Date.toString in UTC/GMT: day-of-week, month, day, time, zone, year.
JAVA_DATE_UTC_RE = (
    r"^[A-Z][a-z]{2} ([A-Z][a-z]{2}) (\d{2}) (\d{2}:\d{2}:\d{2}) (?:UTC|GMT) (\d{4})$"
)
_LONGS = {
    "credential_remaining_ms": "_credential_remaining",
    "session_remaining_ms": "_session_remaining",
    "sent_session_lifetime_ms": "_sent",
    "session_lifetime_ms": "_session_lifetime",
    "reauth_after_ms": "_reauth_after",
}
_INTS = {"api_version": "_api_version", "correlation_id": "_correlation_id"}


def java_date_ts(text: Column) -> Column:
    """UTC timestamp of a ``java.util.Date.toString`` text (``Wed Nov 20 13:00:00 UTC 2026``)
    whose zone is ``UTC`` or ``GMT``; null for another zone (the offset of a zone name such as
    ``CET`` is not in the text), for a non-date or impossible date, and for null. The day of the
    week is not checked. Independent of the session time zone."""
    r = JAVA_DATE_UTC_RE
    months = F.create_map(*[F.lit(x) for i, m in enumerate(_MONTHS, 1) for x in (m, f"{i:02d}")])
    iso = F.concat(
        group(text, r, 4), F.lit("-"), months[group(text, r, 1)], F.lit("-"), group(text, r, 2),
        F.lit("T"), group(text, r, 3), F.lit("Z"),
    )  # fmt: skip
    return iso.try_cast("timestamp")


def is_reauthentication(kind: Column, re_: Column, old_mechanism: Column) -> Column:
    """true/false where the line tells re-authentication from authentication, else null."""
    return (
        F.when(
            kind.isin("failed", "succeeded", "failed_during", "client_finished"), re_.isNotNull()
        )
        .when(kind == "legacy_failed", F.lit(False))  # Before 2.2 there was no re-authentication.
        .when(kind.isin("processor_reauth", "server_reauth"), F.lit(True))
        .when((kind == "mechanism_rejected") & old_mechanism.isNotNull(), F.lit(True))
    )


def debug_columns() -> dict[str, Column]:
    """The session, request-header and counter columns of the debug formats, from the
    intermediate group columns (``_max_reauth``, ``_sent``...). Null for other kinds."""
    c = F.col
    max_reauth = F.when(c("_max_reauth") != "null", c("_max_reauth"))
    return {
        "max_reauth_ms": max_reauth.try_cast("long"),
        "credential_expiration_ts": java_date_ts(c("credential_expiration_text")),
        "session_expiration_ts": java_date_ts(c("session_expiration_text")),
        **{name: c(raw).try_cast("long") for name, raw in _LONGS.items()},
        **{name: c(raw).try_cast("int") for name, raw in _INTS.items()},
    }


def _numbers_overflow() -> Column:
    """A number the format matched that does not fit its column's type."""
    c = F.col
    pairs = [(c(raw), c(name)) for name, raw in {**_LONGS, **_INTS}.items()]
    pairs.append((F.when(c("_max_reauth") != "null", c("_max_reauth")), c("max_reauth_ms")))
    return reduce(operator.or_, [raw.isNotNull() & typed.isNull() for raw, typed in pairs])


def _bad_date(text: Column, ts: Column) -> Column:
    return text.rlike(r" (?:UTC|GMT) \d{4}$") & ts.isNull()


def debug_checks() -> list[Check]:
    """Quarantine checks for parsed debug lines, in priority order.

    Values the source computes one from the other must agree (SaslServerAuthenticator logs the
    session lifetime twice and sends 0 ms without a session expiration; SaslClientAuthenticator
    re-authenticates at 85-95 % of the lifetime).
    """
    c, kind = F.col, F.col("_kind")
    inconsistent = "auth_inconsistent_session_lifetime"
    sent, remaining = c("sent_session_lifetime_ms"), c("session_remaining_ms")
    session = c("session_expiration_text")
    return [
        (_numbers_overflow(), "auth_invalid_number", "a number does not fit a long / int"),
        (
            _bad_date(c("credential_expiration_text"), c("credential_expiration_ts"))
            | _bad_date(session, c("session_expiration_ts")),
            "auth_invalid_date",
            "a UTC/GMT Date.toString text that is not a real date",
        ),
        (
            (kind == "session_lifetime")
            & F.when(session.isNull(), sent != 0).otherwise(sent != remaining),
            inconsistent,
            "'sending N ms to client' differs from the session expiration's ms (or from 0)",
        ),
        (
            c("reauth_after_ms") > c("session_lifetime_ms"),
            inconsistent,
            "re-authentication after the session expires",
        ),
    ]
