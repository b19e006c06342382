"""transforms.silver.auth.debug through transforms.silver.auth.parse: the DEBUG / TRACE authentication lines.

No public sample of these lines exists (docs/kafka-log-formats.md section 11), so every line here is
rendered from the exact format strings in apache/kafka (SaslServerAuthenticator.java,
SaslClientAuthenticator.java, SocketServer.scala, KafkaChannel.toString, RequestHeader.toString;
versions in the transforms.silver.auth.debug docstring).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import string
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.raw_lines import FAMILY_AUTH
from tests.support.bronze_rows import Record, assert_parsed, bronze_df
from transforms.silver.auth.debug import java_date_ts
from transforms.silver.auth.parse import is_auth_record, parse_auth_events

SERVER = "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"
CLIENT = "org.apache.kafka.common.security.authenticator.SaslClientAuthenticator"
PROCESSOR = "kafka.network.Processor"
CHANNEL = "org.apache.kafka.common.network.KafkaChannel@6f2a1b3c"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def java_date(moment: dt.datetime, zone: str = "UTC") -> str:
    """java.util.Date.toString: EEE MMM dd HH:mm:ss zzz yyyy (English names in every locale)."""
    day, month = _DAYS[moment.weekday()], _MONTHS[moment.month - 1]
    return f"{day} {month} {moment:%d %H:%M:%S} {zone} {moment.year}"


def parse(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_auth_events(bronze_df(spark, records, FAMILY_AUTH))


# Every column a debug line fills, in one order for all the tests below.
COLUMNS = (
    "line_number", "event_type", "side", "client_type", "client_id", "connection_id", "peer_ip",
    "remote_port", "processor_id", "reason", "failure_reason_code", "mechanism",
    "is_reauthentication", "reauth_old_mechanism", "max_reauth_ms", "credential_expiration_text",
    "credential_expiration_ts", "credential_remaining_ms", "session_expiration_text",
    "session_expiration_ts", "session_remaining_ms", "sent_session_lifetime_ms",
    "session_lifetime_ms", "reauth_after_ms", "api_key_name", "api_version", "correlation_id",
    "reason_code",
)  # fmt: skip


def row(line_number: int, **values: object) -> tuple[object, ...]:
    """An expected row: ``values`` by column name, every other column null."""
    unknown = set(values) - set(COLUMNS)
    assert not unknown, unknown
    return (line_number, *[values.get(name) for name in COLUMNS[1:]])


T0 = dt.datetime(2026, 11, 20, 12, 30)
T1 = dt.datetime(2026, 11, 20, 13, 0)
T2 = dt.datetime(2026, 11, 20, 13, 30)
ADD = "Authentication complete; session max lifetime from broker config="
EXPIRED = f"Disconnecting expired channel: {CHANNEL} id=10.0.0.1:9092-10.0.0.7:51000-2-17 : "


def test_debug_lines_in_every_source_variant_parse(spark: SparkSession) -> None:
    records = [
        # SaslServerAuthenticator, all four lifetime variants (the 4th only in 2.2-3.2).
        Record("DEBUG", SERVER, f"{ADD}3600000 ms, credential expiration={java_date(T1)} (1800000 ms); session expiration = {java_date(T1)} (1800000 ms), sending 1800000 ms to client"),
        Record("DEBUG", SERVER, f"{ADD}3600000 ms, no credential expiration; session expiration = {java_date(T2, 'GMT')} (3600000 ms), sending 3600000 ms to client"),
        Record("DEBUG", SERVER, f"{ADD}0 ms, no credential expiration; no session expiration, sending 0 ms to client"),
        Record("DEBUG", SERVER, f"{ADD}null ms, credential expiration={java_date(T0, 'CET')} (-5000 ms); no session expiration, sending 0 ms to client"),
        # kafka.network.Processor: 4.x channel id with headerVersion (3.4+); 2.2-2.3 wording.
        Record("DEBUG", PROCESSOR, EXPIRED + "RequestHeader(apiKey=METADATA, apiVersion=12, clientId=console-producer, correlationId=42, headerVersion=2)"),
        Record("DEBUG", PROCESSOR + ":1134", f"Disconnected expired channel: {CHANNEL} id=10.0.0.1:9093-10.0.0.8:40000-3 : RequestHeader(apiKey=FETCH, apiVersion=10, clientId=a, b), correlationId=7)"),
        Record("TRACE", PROCESSOR, f"Begin re-authentication: {CHANNEL} id=10.0.0.1:9092-10.0.0.7:51000-17"),
        Record("DEBUG", SERVER, "Beginning re-authentication: org.apache.kafka.common.security.authenticator.SaslServerAuthenticator@1b2c3d4e"),
        Record("DEBUG", SERVER, "Failed during authentication: Invalid request, potential reasons: kafka client configured with the wrong security protocol, it does not support KIP-43 or it is not a kafka client."),
        Record("DEBUG", SERVER, "Failed during re-authentication: Unexpected ApiVersions request received during SASL authentication state REAUTH_PROCESS_HANDSHAKE"),
        Record("DEBUG", SERVER, "Using SASL mechanism 'SCRAM-SHA-512' provided by client"),
        Record("DEBUG", SERVER, "SASL mechanism 'GSSAPI' requested by client is not supported"),
        Record("DEBUG", SERVER, "SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512'"),
        # SaslClientAuthenticator with the client's LogContext prefix.
        Record("DEBUG", CLIENT, "[Producer clientId=p1] Finished re-authentication with session expiration in 3600000 ms and session re-authentication on or after 3240000 ms"),
        Record("DEBUG", CLIENT, "[Consumer clientId=c1, groupId=g] Finished authentication with no session expiration and no session re-authentication"),
    ]  # fmt: skip
    b, sl, rs = "broker", "session_lifetime", "reauthentication_started"
    invalid = "Invalid request, potential reasons: kafka client configured with the wrong security protocol, it does not support KIP-43 or it is not a kafka client."
    expected = [
        row(1, event_type=sl, side=b, max_reauth_ms=3600000, credential_expiration_text="Fri Nov 20 13:00:00 UTC 2026", credential_expiration_ts=T1, credential_remaining_ms=1800000, session_expiration_text="Fri Nov 20 13:00:00 UTC 2026", session_expiration_ts=T1, session_remaining_ms=1800000, sent_session_lifetime_ms=1800000),
        row(2, event_type=sl, side=b, max_reauth_ms=3600000, session_expiration_text="Fri Nov 20 13:30:00 GMT 2026", session_expiration_ts=T2, session_remaining_ms=3600000, sent_session_lifetime_ms=3600000),
        row(3, event_type=sl, side=b, max_reauth_ms=0, sent_session_lifetime_ms=0),
        row(4, event_type=sl, side=b, credential_expiration_text="Fri Nov 20 12:30:00 CET 2026", credential_remaining_ms=-5000, sent_session_lifetime_ms=0),
        row(5, event_type="expired_channel_disconnected", side=b, client_id="console-producer", connection_id="10.0.0.1:9092-10.0.0.7:51000-2-17", peer_ip="10.0.0.7", remote_port=51000, processor_id=2, api_key_name="METADATA", api_version=12, correlation_id=42),
        row(6, event_type="expired_channel_disconnected", side=b, client_id="a, b)", connection_id="10.0.0.1:9093-10.0.0.8:40000-3", peer_ip="10.0.0.8", remote_port=40000, api_key_name="FETCH", api_version=10, correlation_id=7),
        row(7, event_type=rs, side=b, connection_id="10.0.0.1:9092-10.0.0.7:51000-17", peer_ip="10.0.0.7", remote_port=51000, is_reauthentication=True),
        row(8, event_type=rs, side=b, is_reauthentication=True),
        row(9, event_type="authentication_error", side=b, reason=invalid, failure_reason_code="INVALID_REQUEST", is_reauthentication=False),
        row(10, event_type="reauthentication_error", side=b, reason="Unexpected ApiVersions request received during SASL authentication state REAUTH_PROCESS_HANDSHAKE", failure_reason_code="OTHER", is_reauthentication=True),
        row(11, event_type="mechanism_selected", side=b, mechanism="SCRAM-SHA-512"),
        row(12, event_type="mechanism_rejected", side=b, reason=records[11].message, failure_reason_code="UNSUPPORTED_MECHANISM", mechanism="GSSAPI"),
        row(13, event_type="mechanism_rejected", side=b, reason=records[12].message, failure_reason_code="MECHANISM_CHANGE_DURING_REAUTH", mechanism="PLAIN", is_reauthentication=True, reauth_old_mechanism="SCRAM-SHA-512"),
        row(14, event_type="client_session_established", side="client", client_type="Producer", client_id="p1", is_reauthentication=True, session_lifetime_ms=3600000, reauth_after_ms=3240000),
        row(15, event_type="client_session_established", side="client", client_type="Consumer", client_id="c1", is_reauthentication=False),
    ]  # fmt: skip
    parsed = parse(spark, records)
    assert_parsed(spark, parsed, COLUMNS, expected)
    # Log lines carry no Confluent columns.
    lineage = parsed.select("source_format", "principal", "event_id").distinct()
    schema = "source_format string, principal string, event_id string"
    expected_lineage = spark.createDataFrame([("log4j", None, None)], schema)
    assert_df_equality(lineage, expected_lineage, ignore_nullable=True)


def test_malformed_debug_lines_are_quarantined(spark: SparkSession) -> None:
    too_big = "9" * 20
    cases = [
        (SERVER, f"{ADD}3600000 ms, credential expiration={java_date(T1)} (1800000 ms); session", "auth_malformed_message"),
        (SERVER, f"{ADD}abc ms, no credential expiration; no session expiration, sending 0 ms to client", "auth_malformed_message"),
        (SERVER, f"{ADD}3600000 ms, credential expiration=2026-11-20T13:00:00Z (1800000 ms); no session expiration, sending 0 ms to client", "auth_malformed_message"),
        (SERVER, f"{ADD}{too_big} ms, no credential expiration; no session expiration, sending 0 ms to client", "auth_invalid_number"),
        (SERVER, f"{ADD}0 ms, credential expiration=Mon Feb 30 13:00:00 UTC 2026 (1 ms); no session expiration, sending 0 ms to client", "auth_invalid_date"),
        (SERVER, f"{ADD}0 ms, no credential expiration; session expiration = {java_date(T1)} (600 ms), sending 500 ms to client", "auth_inconsistent_session_lifetime"),
        (SERVER, f"{ADD}0 ms, no credential expiration; no session expiration, sending 5 ms to client", "auth_inconsistent_session_lifetime"),
        (CLIENT, "[Producer clientId=p] Finished authentication with session expiration in 1000 ms and session re-authentication on or after 2000 ms", "auth_inconsistent_session_lifetime"),
        (CLIENT, "[Producer clientId=p] Finished authentication with session expiration in", "auth_malformed_message"),
        (PROCESSOR, f"Disconnecting expired channel: {CHANNEL} id=10.0.0.1:9092-10.0.0.7:51000-2-17 : RequestHeader(apiKey=METADATA, apiVers", "auth_malformed_message"),
        (PROCESSOR, "Disconnecting expired channel: KafkaChannel id=x : RequestHeader()", "auth_malformed_message"),
        (PROCESSOR, "Begin re-authentication: ", "auth_malformed_message"),
        (SERVER, "Using SASL mechanism PLAIN provided by client", "auth_malformed_message"),
        (SERVER, "AUTHENTICATION COMPLETE; whatever", "auth_unrecognized_message"),
    ]  # fmt: skip
    records = [Record("DEBUG", logger, message) for logger, message, _ in cases]
    claimed = is_auth_record(F.col("logger"), F.col("message")).alias("claimed")
    actual = parse(spark, records).select("line_number", "reason_code", claimed)
    expected = [(i, code, True) for i, (_, _, code) in enumerate(cases, 1)]
    assert_parsed(spark, actual, ("line_number", "reason_code", "claimed"), expected)


def test_is_auth_record_claims_the_debug_lines_only(spark: SparkSession) -> None:
    rows = [
        (SERVER, f"{ADD}0 ms, no credential expiration; no session expiration, sending 0 ms to client", True),
        (SERVER + ":705", "Beginning re-authentication: x@1", True),
        (CLIENT, "[AdminClient clientId=a] Finished authentication with no session expiration and no session re-authentication", True),
        (PROCESSOR, "Disconnecting expired channel: garbled", True),
        (SERVER, "Set SASL server state to COMPLETE during authentication", False),
        (SERVER, "Creating SaslServer for kafka/broker@EXAMPLE.COM with mechanism GSSAPI", False),
        (SERVER, "Handling Kafka request SASL_HANDSHAKE during authentication", False),
        (CLIENT, "[Producer clientId=p] Set SASL client state to RECEIVE_HANDSHAKE_RESPONSE", False),
        (PROCESSOR, "Closing selector - processor 3", False),
        ("kafka.network.SocketServer", "Disconnecting expired channel: x", False),
        (None, "Beginning re-authentication: x@1", False),
        (SERVER, None, False),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "logger string, message string, claimed boolean")
    actual = df.select(
        "logger", "message", is_auth_record(F.col("logger"), F.col("message")).alias("claimed")
    )
    assert_df_equality(actual, df, ignore_nullable=True)


@contextmanager
def session_time_zone(spark: SparkSession, zone: str) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous or "UTC")


def test_java_date_ts_reads_utc_and_gmt_only_whatever_the_session_zone(
    spark: SparkSession,
) -> None:
    rows = [
        ("Fri Nov 20 13:00:00 UTC 2026", "2026-11-20T13:00:00Z"),
        ("Thu Jan 01 00:00:00 GMT 1970", "1970-01-01T00:00:00Z"),
        ("Fri Nov 20 14:00:00 CET 2026", None),
        ("Fri Nov 20 13:00:00 GMT+01:00 2026", None),
        ("Mon Feb 30 13:00:00 UTC 2026", None),
        ("Fri Nov 20 13:00:00 UTC 292278994", None),
        ("2026-11-20 13:00:00", None),
        (None, None),
    ]
    df = spark.createDataFrame(rows, "text string, iso string")
    with session_time_zone(spark, "America/New_York"):
        actual = df.select("text", F.unix_seconds(java_date_ts(F.col("text"))).alias("epoch"))
        expected = df.select("text", F.unix_seconds(F.col("iso").cast("timestamp")).alias("epoch"))
        assert_df_equality(actual, expected, ignore_nullable=True)


# Hypothesis round trip: render each debug line in Kafka's exact format, parse it back.
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
_API_KEYS = ("PRODUCE", "FETCH", "METADATA", "OFFSET_COMMIT", "SASL_HANDSHAKE", "DESCRIBE_GROUPS")
_TEXT = st.text(string.ascii_letters + string.digits + " ,.=:()[]-_'", min_size=1, max_size=30)
_INSTANTS = st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2099, 12, 31)).map(
    lambda d: d.replace(microsecond=0)
)
_ROUND_TRIP = COLUMNS
Rendered = tuple[Record, Mapping[str, object]]


def java_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if address.version == 4:
        return str(address)
    return ":".join(f"{int(part, 16):x}" for part in address.exploded.split(":"))


@st.composite
def dates(draw: st.DrawFn) -> tuple[str, dt.datetime | None]:
    moment, zone = draw(_INSTANTS), draw(st.sampled_from(("UTC", "GMT", "CET", "PST")))
    return java_date(moment, zone), moment if zone in ("UTC", "GMT") else None


@st.composite
def session_lifetimes(draw: st.DrawFn) -> Rendered:
    max_reauth = draw(st.one_of(st.none(), st.integers(0, 10**10)))
    out: dict[str, object] = {"event_type": "session_lifetime", "side": "broker"}
    out["max_reauth_ms"] = max_reauth
    head = f"{ADD}{'null' if max_reauth is None else max_reauth} ms, "
    if draw(st.booleans()):
        text, ts = draw(dates())
        remaining = draw(st.integers(-(10**9), 10**12))
        head += f"credential expiration={text} ({remaining} ms); "
        out |= {"credential_expiration_text": text, "credential_expiration_ts": ts}
        out["credential_remaining_ms"] = remaining
    else:
        head += "no credential expiration; "
    lifetime = 0
    if draw(st.booleans()):
        text, ts = draw(dates())
        lifetime = draw(st.integers(0, 10**12))
        head += f"session expiration = {text} ({lifetime} ms), "
        out |= {"session_expiration_text": text, "session_expiration_ts": ts}
        out["session_remaining_ms"] = lifetime
    else:
        head += "no session expiration, "
    out["sent_session_lifetime_ms"] = lifetime
    return Record("DEBUG", SERVER, f"{head}sending {lifetime} ms to client"), out


@st.composite
def channels(draw: st.DrawFn) -> tuple[str, Mapping[str, object]]:
    local, remote = java_ip(draw(st.ip_addresses())), java_ip(draw(st.ip_addresses()))
    local_port, remote_port = draw(st.integers(1, 65535)), draw(st.integers(1, 65535))
    processor, index = draw(st.integers(0, 64)), draw(st.integers(0, 10**6))
    four_part = draw(st.booleans())
    tail = f"{processor}-{index}" if four_part else str(index)
    cid = f"{local}:{local_port}-{remote}:{remote_port}-{tail}"
    values = {"connection_id": cid, "peer_ip": remote, "remote_port": remote_port}
    return cid, values | ({"processor_id": processor} if four_part else {})


@st.composite
def processor_lines(draw: st.DrawFn) -> Rendered:
    cid, values = draw(channels())
    channel = f"org.apache.kafka.common.network.KafkaChannel@{draw(st.integers(0, 2**32 - 1)):x}"
    if draw(st.booleans()):
        line = f"Begin re-authentication: {channel} id={cid}"
        event = {"event_type": "reauthentication_started", "is_reauthentication": True}
        return Record("TRACE", PROCESSOR, line), {"side": "broker", **values, **event}
    api, version = draw(st.sampled_from(_API_KEYS)), draw(st.integers(0, 17))
    client_id, correlation = draw(_TEXT), draw(st.integers(-(2**31), 2**31 - 1))
    header_version = draw(st.sampled_from(("", ", headerVersion=1", ", headerVersion=2")))
    header = f"RequestHeader(apiKey={api}, apiVersion={version}, clientId={client_id}, correlationId={correlation}{header_version})"
    verb = draw(st.sampled_from(("Disconnecting", "Disconnected")))
    event = {"event_type": "expired_channel_disconnected", "api_key_name": api}
    event |= {"api_version": version, "client_id": client_id, "correlation_id": correlation}
    line = f"{verb} expired channel: {channel} id={cid} : {header}"
    return Record("DEBUG", PROCESSOR, line), {"side": "broker", **values, **event}


@st.composite
def server_lines(draw: st.DrawFn) -> Rendered:
    mechanism, kind = draw(st.sampled_from(_MECHANISMS)), draw(st.integers(0, 3))
    broker: dict[str, object] = {"side": "broker"}
    if kind == 0:
        line = f"Using SASL mechanism '{mechanism}' provided by client"
        return Record("DEBUG", SERVER, line), broker | {
            "event_type": "mechanism_selected",
            "mechanism": mechanism,
        }
    if kind == 1:
        old = draw(st.one_of(st.none(), st.sampled_from(_MECHANISMS)))
        line = f"SASL mechanism '{mechanism}' requested by client is not supported"
        values: dict[str, object] = {
            "event_type": "mechanism_rejected",
            "mechanism": mechanism,
            "failure_reason_code": "UNSUPPORTED_MECHANISM",
        }
        if old is not None:
            line += f" for re-authentication of mechanism '{old}'"
            values |= {
                "failure_reason_code": "MECHANISM_CHANGE_DURING_REAUTH",
                "reauth_old_mechanism": old,
                "is_reauthentication": True,
            }
        return Record("DEBUG", SERVER, line), broker | values | {"reason": line}
    if kind == 2:
        line = f"Beginning re-authentication: org.apache.kafka.common.security.authenticator.SaslServerAuthenticator@{draw(st.integers(0, 2**32 - 1)):x}"
        return Record("DEBUG", SERVER, line), broker | {
            "event_type": "reauthentication_started",
            "is_reauthentication": True,
        }
    again, reason = draw(st.booleans()), draw(_TEXT.filter(lambda s: s.strip() == s))
    line = f"Failed during {'re-' if again else ''}authentication: {reason}"
    event = "reauthentication_error" if again else "authentication_error"
    values = {
        "event_type": event,
        "reason": reason,
        "failure_reason_code": "OTHER",
        "is_reauthentication": again,
    }
    return Record("DEBUG", SERVER, line), broker | values


@st.composite
def client_lines(draw: st.DrawFn) -> Rendered:
    client_type, client_id = (
        draw(st.sampled_from(("Producer", "Consumer", "AdminClient"))),
        draw(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)),
    )
    again = draw(st.booleans())
    what = "re-authentication" if again else "authentication"
    values: dict[str, object] = {
        "event_type": "client_session_established",
        "side": "client",
        "client_type": client_type,
        "client_id": client_id,
        "is_reauthentication": again,
    }
    if draw(st.booleans()):
        line = f"Finished {what} with no session expiration and no session re-authentication"
    else:
        lifetime = draw(st.integers(1, 10**12))
        after = int(lifetime * draw(st.floats(0.85, 0.95)))  # SaslClientAuthenticator's jitter
        line = f"Finished {what} with session expiration in {lifetime} ms and session re-authentication on or after {after} ms"
        values |= {"session_lifetime_ms": lifetime, "reauth_after_ms": after}
    return Record("DEBUG", CLIENT, f"[{client_type} clientId={client_id}] {line}"), values


# Few examples, each one DataFrame of up to 25 rendered lines: ~60 lines, 3 Spark jobs.
@settings(max_examples=3, deadline=None)
@given(
    st.lists(
        st.one_of(session_lifetimes(), processor_lines(), server_lines(), client_lines()),
        min_size=5,
        max_size=25,
    )
)
def test_round_trip_rendered_debug_lines(spark: SparkSession, lines: list[Rendered]) -> None:
    parsed = parse(spark, [record for record, _ in lines])
    expected = [row(i, **values) for i, (_, values) in enumerate(lines, 1)]
    assert_parsed(spark, parsed, _ROUND_TRIP, expected)
