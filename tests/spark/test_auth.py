"""transforms.silver.auth.parse: Selector / NetworkClient authentication outcomes -> silver.auth_events rows."""

from __future__ import annotations

import datetime as dt
import ipaddress
import string
from collections.abc import Sequence
from pathlib import Path

from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.raw_lines import FAMILY_AUTH
from tests.support.bronze_rows import Record, assert_parsed, bronze_df, sample_file_records
from transforms.silver.auth.parse import (
    failure_reason_code,
    is_auth_record,
    parse_auth_events,
    sasl_mechanism,
)
from transforms.silver.auth.reasons import (
    confluent_user,
    enabled_mechanisms,
    exception_message,
    reauth_old_mechanism,
    reauth_principals,
)
from transforms.silver.authz import is_authz_record

SELECTOR = "org.apache.kafka.common.network.Selector"
NETWORK_CLIENT = "org.apache.kafka.clients.NetworkClient"
STRIMZI_THREAD = "data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8"


def parse(spark: SparkSession, records: Sequence[Record]) -> DataFrame:
    return parse_auth_events(bronze_df(spark, records, FAMILY_AUTH))


def ts(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")


ZK_HANDSHAKE = "[SocketServer listenerType=ZK_BROKER, nodeId=1] Failed authentication with /172.22.0.2 (Unexpected Kafka request of type METADATA during SASL handshake.)"
# Verbatim from samples/sasl-authentication.log: every Failed ...authentication line and every
# client 'failed authentication' line, as (level, logger, message, thread).
SAMPLE_RECORDS = [
    *[Record("INFO", SELECTOR, ZK_HANDSHAKE, log_ts=ts(t)) for t in ("2023-01-19 19:52:33,832", "2023-01-19 19:52:34,238", "2023-01-19 19:52:34,642", "2023-01-19 19:52:35,046", "2023-01-19 19:52:35,449")],
    Record("INFO", SELECTOR, "[SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with /10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL handshake failed)", STRIMZI_THREAD),
    Record("ERROR", NETWORK_CLIENT, "[Producer clientId=console-producer] Connection to node -1 (my-cluster-kafka-bootstrap/10.43.44.73:9093) failed authentication due to: SSL handshake failed"),
    Record("INFO", SELECTOR, "[SocketServer brokerId=1] Failed authentication with /172.27.0.1 (Unexpected Kafka request of type METADATA during SASL handshake.)"),
    Record("INFO", SELECTOR, '[AdminClient clientId=connect-adminclient-producer] Failed authentication with broker/172.18.0.4 (channelId=-1) (errorMessage={"status":"invalid_token"})'),
    Record("ERROR", NETWORK_CLIENT, '[AdminClient clientId=connect-adminclient-producer] Connection to node -1 (broker/172.18.0.4:9092) failed authentication due to: {"status":"invalid_token"}'),
]  # fmt: skip
SAMPLE_COLUMNS = (
    "line_number", "event_ts", "event_type", "side", "listener_type", "socket_server_node_id",
    "client_type", "client_id", "peer_host", "peer_ip", "peer_port", "connection_id", "local_ip",
    "local_port", "remote_ip", "remote_port", "processor_id", "listener", "security_protocol",
    "reason", "failure_reason_code", "broker_node_id", "broker_address", "reason_code",
)  # fmt: skip


def test_sample_sasl_authentication_lines_parse(spark: SparkSession) -> None:
    failed, client_failed = "authentication_failed", "client_authentication_failed"
    handshake = (
        "Unexpected Kafka request of type METADATA during SASL handshake.",
        "UNEXPECTED_REQUEST_DURING_HANDSHAKE",
    )
    zk = (
        failed,
        "broker",
        "ZK_BROKER",
        1,
        None,
        None,
        None,
        "172.22.0.2",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        *handshake,
        None,
        None,
        None,
    )
    # The client Selector's 'errorMessage=' wrapping is not part of the exception message.
    token = ('{"status":"invalid_token"}', '{"status":"invalid_token"}')
    admin = ("AdminClient", "connect-adminclient-producer", "broker", "172.18.0.4")
    expected = [
        *[(i, SAMPLE_RECORDS[i - 1].log_ts, *zk) for i in range(1, 6)],
        (6, None, failed, "broker", "ZK_BROKER", 0, None, None, None, "10.42.1.38", 43546, "10.42.1.34:9093-10.42.1.38:43546-4", "10.42.1.34", 9093, "10.42.1.38", 43546, 8, "TLS-9093", "SASL_SSL", "SSL handshake failed", "SSL_HANDSHAKE_FAILED", None, None, None),
        (7, None, client_failed, "client", None, None, "Producer", "console-producer", "my-cluster-kafka-bootstrap", "10.43.44.73", 9093, None, None, None, None, None, None, None, None, "SSL handshake failed", "SSL_HANDSHAKE_FAILED", -1, "my-cluster-kafka-bootstrap/10.43.44.73:9093", None),
        (8, None, failed, "broker", None, 1, None, None, None, "172.27.0.1", None, None, None, None, None, None, None, None, None, *handshake, None, None, None),
        (9, None, failed, "client", None, None, *admin, None, "-1", None, None, None, None, None, None, None, token[0], "OAUTH_INVALID_TOKEN", -1, None, None),
        (10, None, client_failed, "client", None, None, *admin, 9092, None, None, None, None, None, None, None, None, token[1], "OAUTH_INVALID_TOKEN", -1, "broker/172.18.0.4:9092", None),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, SAMPLE_RECORDS), SAMPLE_COLUMNS, expected)


def test_every_sasl_sample_line_is_claimed_and_parsed(
    spark: SparkSession, samples_dir: Path
) -> None:
    numbered = sample_file_records(samples_dir / "sasl-authentication.log")
    numbers, records = zip(*numbered, strict=True)
    bronze = bronze_df(spark, records, FAMILY_AUTH, numbers)
    actual = (
        parse_auth_events(bronze)
        .select(
            "line_number",
            "logger",
            is_auth_record(F.col("logger"), F.col("message")).alias("claimed"),
            is_authz_record(F.col("logger"), F.col("message")).alias("authz_claimed"),
            "reason_code",
        )
        .orderBy("line_number")
    )
    # Every record but the custom LDAP callback handler's line is a Selector/NetworkClient outcome.
    ldap = "no.shhsoft.kafka.auth.LdapAuthenticateCallbackHandler"
    rows = [
        (n, r.logger, r.logger != ldap, False, "auth_unrecognized_message" if r.logger == ldap else None)
        for n, r in numbered
    ]  # fmt: skip
    schema = "line_number long, logger string, claimed boolean, authz_claimed boolean, reason_code string"
    assert len(numbered) == 11  # the file's 11 records, none skipped by the split
    assert_df_equality(actual, spark.createDataFrame(rows, schema), ignore_nullable=True)


FORMAT_COLUMNS = (
    "line_number", "event_type", "side", "listener_type", "socket_server_node_id", "client_type",
    "client_id", "group_id", "peer_host", "peer_ip", "peer_port", "connection_id", "local_ip",
    "local_port", "remote_ip", "remote_port", "processor_id", "reason", "failure_reason_code",
    "mechanism", "broker_node_id", "reason_code",
)  # fmt: skip


def test_channel_ids_reauthentication_success_and_client_formats(spark: SparkSession) -> None:
    legacy_trace = "org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed: Invalid username or password\n\tat org.apache.kafka.common.security.plain.internals.PlainSaslServer.evaluateResponse(PlainSaslServer.java:107)"
    records = [
        # 3.2+ channelId (SocketServer.ConnectionId, 3 parts) and 4.x (ServerConnectionId, 4 parts).
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=2] Failed authentication with /10.244.0.23 (channelId=10.244.0.17:9093-10.244.0.23:38710-39) (Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256)"),
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed authentication with /172.20.0.4 (channelId=172.20.0.2:9097-172.20.0.4:33076-4-3) (Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN)"),
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed re-authentication with app-7.internal/10.0.0.7 (channelId=10.0.0.1:9092-10.0.0.7:51000-2-17) (Cannot change principals during re-authentication from User.alice: User.bob)"),
        Record("INFO", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed re-authentication with /10.0.0.8 (channelId=10.0.0.1:9092-10.0.0.8:51001-0-5) (SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512')"),
        Record("INFO", SELECTOR, "[SocketServer listenerType=CONTROLLER, nodeId=3000] Failed authentication with /0:0:0:0:0:0:0:1 (channelId=0:0:0:0:0:0:0:1:9093-0:0:0:0:0:0:0:1:40000-1) (Authentication failed: Client requested an authorization id (x) that is different from the token's principal name (y))"),
        Record("DEBUG", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Successfully authenticated with /10.0.0.5"),
        Record("DEBUG", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Successfully re-authenticated with app-7.internal/10.0.0.7"),
        # <2.2: the reason is only in the stack trace.
        Record("DEBUG", SELECTOR, "[SocketServer brokerId=0] Connection with /10.0.0.6 disconnected due to authentication exception", continuation=legacy_trace),
        # Clients: 1.x NetworkClient has no address; Consumer groupId "null" = no group.
        Record("ERROR", NETWORK_CLIENT, "[Consumer clientId=consumer-1, groupId=billing] Connection to node 2 failed authentication due to: Authentication failed: Invalid username or password"),
        Record("ERROR", NETWORK_CLIENT, "[Consumer clientId=consumer-2, groupId=null] Connection to node -1 (localhost/127.0.0.1:9092) failed authentication due to: Unexpected handshake request with client mechanism SCRAM-SHA-512, enabled mechanisms are [PLAIN]"),
        Record("ERROR", NETWORK_CLIENT, "[Producer clientId=p-1, transactionalId=tx-1] Connection to node 1 (kafka-1/[0:0:0:0:0:0:0:1]:9092) failed authentication due to: Failed to process post-handshake messages"),
        Record("ERROR", NETWORK_CLIENT, "[my-connector|task-0] [AdminClient clientId=admin-1] Connection to node -1 (kafka.example.com/<unresolved>:9092) failed authentication due to: Authentication failed: password not specified"),
    ]  # fmt: skip
    f, rf = "authentication_failed", "reauthentication_failed"
    ok, rok, cf = (
        "authentication_succeeded",
        "reauthentication_succeeded",
        "client_authentication_failed",
    )
    broker1 = ("broker", "BROKER", 1, None, None, None)
    invalid = "Authentication failed: Invalid username or password"
    expected = [
        (1, f, "broker", "BROKER", 2, None, None, None, None, "10.244.0.23", 38710, "10.244.0.17:9093-10.244.0.23:38710-39", "10.244.0.17", 9093, "10.244.0.23", 38710, None, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256", "INVALID_CREDENTIALS", "SCRAM-SHA-256", None, None),
        (2, f, *broker1, None, "172.20.0.4", 33076, "172.20.0.2:9097-172.20.0.4:33076-4-3", "172.20.0.2", 9097, "172.20.0.4", 33076, 4, "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN", "INVALID_CREDENTIALS", "PLAIN", None, None),
        (3, rf, *broker1, "app-7.internal", "10.0.0.7", 51000, "10.0.0.1:9092-10.0.0.7:51000-2-17", "10.0.0.1", 9092, "10.0.0.7", 51000, 2, "Cannot change principals during re-authentication from User.alice: User.bob", "PRINCIPAL_CHANGE_DURING_REAUTH", None, None, None),
        (4, rf, *broker1, None, "10.0.0.8", 51001, "10.0.0.1:9092-10.0.0.8:51001-0-5", "10.0.0.1", 9092, "10.0.0.8", 51001, 0, "SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512'", "MECHANISM_CHANGE_DURING_REAUTH", "PLAIN", None, None),
        (5, f, "broker", "CONTROLLER", 3000, None, None, None, None, "0:0:0:0:0:0:0:1", 40000, "0:0:0:0:0:0:0:1:9093-0:0:0:0:0:0:0:1:40000-1", "0:0:0:0:0:0:0:1", 9093, "0:0:0:0:0:0:0:1", 40000, None, "Authentication failed: Client requested an authorization id (x) that is different from the token's principal name (y)", "AUTHORIZATION_ID_MISMATCH", None, None, None),
        (6, ok, *broker1, None, "10.0.0.5", None, None, None, None, None, None, None, None, None, None, None, None),
        (7, rok, *broker1, "app-7.internal", "10.0.0.7", None, None, None, None, None, None, None, None, None, None, None, None),
        (8, f, "broker", None, 0, None, None, None, None, "10.0.0.6", None, None, None, None, None, None, None, invalid, "INVALID_USERNAME_OR_PASSWORD", None, None, None),
        (9, cf, "client", None, None, "Consumer", "consumer-1", "billing", None, None, None, None, None, None, None, None, None, invalid, "INVALID_USERNAME_OR_PASSWORD", None, 2, None),
        (10, cf, "client", None, None, "Consumer", "consumer-2", None, "localhost", "127.0.0.1", 9092, None, None, None, None, None, None, "Unexpected handshake request with client mechanism SCRAM-SHA-512, enabled mechanisms are [PLAIN]", "MECHANISM_MISMATCH", "SCRAM-SHA-512", -1, None),
        (11, cf, "client", None, None, "Producer", "p-1", None, "kafka-1", "0:0:0:0:0:0:0:1", 9092, None, None, None, None, None, None, "Failed to process post-handshake messages", "SSL_POST_HANDSHAKE_FAILED", None, 1, None),
        (12, cf, "client", None, None, "AdminClient", "admin-1", None, "kafka.example.com", None, 9092, None, None, None, None, None, None, "Authentication failed: password not specified", "PASSWORD_NOT_SPECIFIED", None, -1, None),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, records), FORMAT_COLUMNS, expected)


def test_malformed_lines_are_quarantined(spark: SparkSession) -> None:
    broker = "[SocketServer listenerType=BROKER, nodeId=1] "
    cases = [
        (None, "missing_field_message"),
        ("", "missing_field_message"),
        # samples/sasl-authentication.log '#>' fragment (cut by the poster's `cut`).
        (broker + "Failed authentication with /172.20.0.4 (channelId=172.20.0.2:9097-172.20.0.4:33076-4-3) (Authentication failed during authentication due to invalid credentials with SASL ", "auth_truncated_message"),
        (broker + "Failed authentication with /172.20.0.4 (channelId=172.20.0.2:9097-172.20.0.4:33076-4-3)", "auth_truncated_message"),
        (broker + "Failed authentication with", "auth_truncated_message"),
        ("[Producer clientId=p] Connection to node -1 (kafka/10.0.0.1:9092) failed authentication", "auth_truncated_message"),
        (broker + "FAILED AUTHENTICATION with /10.0.0.7 (x)", "auth_unrecognized_message"),
        (broker + "Authentication failed with /10.0.0.7 (bad)", "auth_unrecognized_message"),
    ]  # fmt: skip
    parsed = parse(spark, [Record("INFO", SELECTOR, message) for message, _ in cases])
    actual = parsed.select(
        "line_number", "reason_code", F.col("reason_detail").isNotNull().alias("claimed")
    )
    expected = [(i, code, True) for i, (_, code) in enumerate(cases, 1)]
    assert_parsed(spark, actual, ("line_number", "reason_code", "claimed"), expected)


def test_failure_reason_code_and_mechanism_including_nulls(spark: SparkSession) -> None:
    rows = [
        ("Authentication failed during re-authentication due to invalid credentials with SASL mechanism OAUTHBEARER", "INVALID_CREDENTIALS", "OAUTHBEARER"),
        ("Authentication failed: username not specified", "USERNAME_NOT_SPECIFIED", None),
        ("Authentication failed: credentials for user could not be verified", "CREDENTIALS_NOT_VERIFIED", None),
        ("Unexpected Kafka request of type PRODUCE during SASL authentication.", "UNEXPECTED_REQUEST_DURING_AUTHENTICATION", None),
        ("Unsupported SASL mechanism GSSAPI", "UNSUPPORTED_MECHANISM", "GSSAPI"),
        ("Failing SASL authentication due to invalid receive size", "INVALID_RECEIVE_SIZE", None),
        ("SSL handshake failed", "SSL_HANDSHAKE_FAILED", None),
        ('{"status":"invalid_token","scope":"kafka"}', "OAUTH_INVALID_TOKEN", None),
        ("Authentication failed: 1 extensions are invalid! They are: x: y", "OTHER", None),
        # Kerberos: SaslClientAuthenticator's 'An error: (...) occurred when evaluating SASL token
        # ...' around the JDK's GSS-API message, by cause; a precise code keeps its place.
        (KERBEROS_CLOCK_SKEW, "KERBEROS_FAILED", "GSSAPI"),
        ("An error: (java.security.PrivilegedActionException: javax.security.sasl.SaslException: GSS initiate failed [Caused by GSSException: No valid credentials provided (Mechanism level: Failed to find any Kerberos tgt)]) occurred when evaluating SASL token received from the Kafka Broker. Kafka Client will go to AUTHENTICATION_FAILED state.", "KERBEROS_FAILED", "GSSAPI"),
        ("javax.security.sasl.SaslException: GSS initiate failed", "KERBEROS_FAILED", "GSSAPI"),
        ("Authentication failed during authentication due to invalid credentials with SASL mechanism GSSAPI", "INVALID_CREDENTIALS", "GSSAPI"),
        ("Unexpected handshake request with client mechanism PLAIN, enabled mechanisms are [GSSAPI]", "MECHANISM_MISMATCH", "PLAIN"),
        (None, None, None),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "reason string, code string, mechanism string")
    actual = df.select(
        "reason",
        failure_reason_code(F.col("reason")).alias("code"),
        sasl_mechanism(F.col("reason")).alias("mechanism"),
    )
    assert_df_equality(actual, df, ignore_nullable=True)


def test_exception_message_and_confluent_user_including_malformed_and_nulls(
    spark: SparkSession,
) -> None:
    invalid = "Authentication failed: Invalid username or password"
    rows = [
        (f"userId=alice, errorMessage={invalid}", invalid, "User:alice"),
        ("userId=, errorMessage=" + invalid, invalid, None),
        ('errorMessage={"status":"invalid_token"}', '{"status":"invalid_token"}', None),
        # Not Confluent's shape (no ', '): left as it is.
        ("userId=alice errorMessage=x", "userId=alice errorMessage=x", None),
        ("SSL handshake failed (errorMessage=x)", "SSL handshake failed (errorMessage=x)", None),
        (None, None, None),
    ]
    df = spark.createDataFrame(rows, "reason string, message string, principal string")
    actual = df.select(
        "reason",
        exception_message(F.col("reason")).alias("message"),
        confluent_user(F.col("reason")).alias("principal"),
    )
    assert_df_equality(actual, df, ignore_nullable=True)


# JDK GSS-API failure inside SaslClientAuthenticator's message (the format of the real line of
# vdesabou/kafka-docker-playground#1195, another Kerberos cause).
KERBEROS_CLOCK_SKEW = "An error: (java.security.PrivilegedActionException: javax.security.sasl.SaslException: GSS initiate failed [Caused by GSSException: No valid credentials provided (Mechanism level: Clock skew too great (37) - PROCESS_TGS)]) occurred when evaluating SASL token received from the Kafka Broker. Kafka Client will go to AUTHENTICATION_FAILED state."
# Real lines, https://github.com/vdesabou/kafka-docker-playground/issues/1195 (2021-07-19,
# Confluent Platform client, Kerberos): the client Selector, then NetworkClient.
KERBEROS_SERVER_NOT_FOUND = "An error: (java.security.PrivilegedActionException: javax.security.sasl.SaslException: GSS initiate failed [Caused by GSSException: No valid credentials provided (Mechanism level: Server not found in Kerberos database (7) - LOOKING_UP_SERVER)]) occurred when evaluating SASL token received from the Kafka Broker. This may be caused by Java's being unable to resolve the Kafka Broker's hostname correctly. You may want to try to adding '-Dsun.net.spi.nameservice.provider.1=dns,sun' to your client's JVMFLAGS environment. Users must configure FQDN of kafka brokers when authenticating using SASL and `socketChannel.socket().getInetAddress().getHostName()` must match the hostname in `principal/hostname@realm` Kafka Client will go to AUTHENTICATION_FAILED state."
KERBEROS_PREFIX = "[Producer clientId=ConfluentBalancerSampleStoreProducer] "
CONFLUENT_AND_REDACTED_COLUMNS = (
    "line_number", "event_type", "side", "peer_host", "peer_ip", "peer_port", "connection_id",
    "peer_address_redacted", "reason", "failure_reason_code", "mechanism", "mechanism_source",
    "principal", "principal_source", "broker_node_id", "reason_code",
)  # fmt: skip


def test_confluent_kerberos_and_redacted_address_lines(spark: SparkSession) -> None:
    """Confluent Server's '(userId=<u>, errorMessage=...)' failure, Kerberos failures of a
    client (GSSAPI), and Selector lines whose poster replaced the peer address: parsed when
    the rest of the line is whole, quarantined when it is cut short."""
    broker = "[SocketServer listenerType=BROKER, nodeId=1] "
    invalid = "Authentication failed: Invalid username or password"
    scram = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
    cid = "10.0.0.1:9093-10.0.0.9:40000-3"
    records = [
        Record("INFO", SELECTOR, broker + f"Failed authentication with /10.0.0.9 (channelId=10.0.0.1:9092-10.0.0.9:51234-7) (userId=alice, errorMessage={invalid})"),
        Record("INFO", SELECTOR, broker + f"Failed authentication with /10.0.0.9 (channelId=10.0.0.1:9092-10.0.0.9:51235-8) (userId=, errorMessage={invalid})"),
        Record("INFO", SELECTOR, KERBEROS_PREFIX + f"Failed authentication with 0.0.0.0/0.0.0.0 (errorMessage={KERBEROS_SERVER_NOT_FOUND} caused by GSS initiate failed)"),
        Record("ERROR", NETWORK_CLIENT, KERBEROS_PREFIX + f"Connection to node -1 (0.0.0.0/0.0.0.0:19092) failed authentication due to: {KERBEROS_SERVER_NOT_FOUND}"),
        Record("INFO", SELECTOR, broker + f"Failed authentication with <redacted> (channelId={cid}) ({scram})"),
        Record("INFO", SELECTOR, broker + "Failed authentication with <redacted> (channelId=<redacted>) (SSL handshake failed)"),
        Record("INFO", SELECTOR, f"[SocketServer brokerId=0] Failed authentication with xxx.xxx.xxx.xxx ({invalid})"),
        Record("INFO", SELECTOR, "[SocketServer listenerType=ZK_BROKER, nodeId=1] Failed authentication with /<IP> (Unexpected Kafka request of type METADATA during SASL handshake.)"),
        Record("DEBUG", SELECTOR, broker + "Successfully authenticated with kafka-client/<redacted>"),
        Record("INFO", SELECTOR, broker + "Failed authentication with <redacted> (channelId=<redacted>) (Authentication failed during authentication due to invalid credentials with SASL "),
        Record("INFO", SELECTOR, broker + f"Failed authentication with <redacted> (channelId={cid})"),
    ]  # fmt: skip
    f, b = "authentication_failed", "broker"
    gss = (KERBEROS_SERVER_NOT_FOUND, "KERBEROS_FAILED", "GSSAPI", "line", None, None)
    handshake = "Unexpected Kafka request of type METADATA during SASL handshake."
    cut = (None, b, *[None] * 12, "auth_truncated_message")
    expected = [
        (1, f, b, None, "10.0.0.9", 51234, "10.0.0.1:9092-10.0.0.9:51234-7", False, invalid, "INVALID_USERNAME_OR_PASSWORD", None, None, "User:alice", "line", None, None),
        (2, f, b, None, "10.0.0.9", 51235, "10.0.0.1:9092-10.0.0.9:51235-8", False, invalid, "INVALID_USERNAME_OR_PASSWORD", None, None, None, None, None, None),
        (3, f, "client", "0.0.0.0", "0.0.0.0", None, None, False, KERBEROS_SERVER_NOT_FOUND + " caused by GSS initiate failed", *gss[1:4], None, None, None, None),
        (4, "client_authentication_failed", "client", "0.0.0.0", "0.0.0.0", 19092, None, False, *gss, -1, None),
        # The channel id the poster left whole still gives the client's address.
        (5, f, b, None, "10.0.0.9", 40000, cid, True, scram, "INVALID_CREDENTIALS", "SCRAM-SHA-512", "line", None, None, None, None),
        (6, f, b, None, None, None, None, True, "SSL handshake failed", "SSL_HANDSHAKE_FAILED", None, None, None, None, None, None),
        (7, f, b, None, None, None, None, True, invalid, "INVALID_USERNAME_OR_PASSWORD", None, None, None, None, None, None),
        (8, f, b, None, None, None, None, True, handshake, "UNEXPECTED_REQUEST_DURING_HANDSHAKE", None, None, None, None, None, None),
        (9, "authentication_succeeded", b, "kafka-client", None, None, None, True, None, None, None, None, None, None, None, None),
        (10, *cut),
        (11, f, b, None, None, None, None, True, "channelId=" + cid, "OTHER", None, None, None, None, None, "auth_truncated_message"),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, records), CONFLUENT_AND_REDACTED_COLUMNS, expected)


REAUTH_COLUMNS = (
    "line_number", "event_type", "is_reauthentication", "reason", "failure_reason_code",
    "mechanism", "reauth_old_principal", "reauth_new_principal", "reauth_old_mechanism",
    "enabled_mechanisms", "source_format", "principal", "event_id", "reason_code",
)  # fmt: skip


def test_reauthentication_and_handshake_details_of_outcome_lines(spark: SparkSession) -> None:
    # Exact exception texts: SaslServerAuthenticator.ReauthInfo (ensurePrincipalUnchanged,
    # saslMechanismUnchanged) and SaslClientAuthenticator.handleSaslHandshakeResponse.
    broker = "[SocketServer listenerType=BROKER, nodeId=1] "
    records = [
        Record("INFO", SELECTOR, broker + "Failed re-authentication with /10.0.0.7 (channelId=10.0.0.1:9092-10.0.0.7:51000-2-17) (Cannot change principals during re-authentication from User.alice: User.bob)"),
        Record("INFO", SELECTOR, broker + "Failed re-authentication with /10.0.0.7 (channelId=10.0.0.1:9092-10.0.0.7:51000-2-17) (Cannot change principals during re-authentication from User.CN=a.b,O=c: d: User.svc.etl)"),
        Record("INFO", SELECTOR, broker + "Failed re-authentication with /10.0.0.8 (SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512')"),
        Record("ERROR", NETWORK_CLIENT, "[Consumer clientId=c, groupId=g] Connection to node -1 (localhost/127.0.0.1:9092) failed authentication due to: Unexpected handshake request with client mechanism SCRAM-SHA-512, enabled mechanisms are [PLAIN, SCRAM-SHA-256]"),
        Record("ERROR", NETWORK_CLIENT, "[Producer clientId=p] Connection to node 1 (b/10.0.0.9:9092) failed authentication due to: Client SASL mechanism 'GSSAPI' not enabled in the server, enabled mechanisms are []"),
        Record("DEBUG", SELECTOR, broker + "Successfully authenticated with /10.0.0.5"),
    ]  # fmt: skip
    rf, cf = "reauthentication_failed", "client_authentication_failed"
    log4j = ("log4j", None, None, None)
    # A refused re-authentication prints the principal it asked for: the line's principal.
    expected = [
        (1, rf, True, "Cannot change principals during re-authentication from User.alice: User.bob", "PRINCIPAL_CHANGE_DURING_REAUTH", None, "User:alice", "User:bob", None, None, "log4j", "User:bob", None, None),
        (2, rf, True, "Cannot change principals during re-authentication from User.CN=a.b,O=c: d: User.svc.etl", "PRINCIPAL_CHANGE_DURING_REAUTH", None, "User:CN=a.b,O=c: d", "User:svc.etl", None, None, "log4j", "User:svc.etl", None, None),
        (3, rf, True, "SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism 'SCRAM-SHA-512'", "MECHANISM_CHANGE_DURING_REAUTH", "PLAIN", None, None, "SCRAM-SHA-512", None, *log4j),
        (4, cf, None, "Unexpected handshake request with client mechanism SCRAM-SHA-512, enabled mechanisms are [PLAIN, SCRAM-SHA-256]", "MECHANISM_MISMATCH", "SCRAM-SHA-512", None, None, None, ["PLAIN", "SCRAM-SHA-256"], *log4j),
        (5, cf, None, "Client SASL mechanism 'GSSAPI' not enabled in the server, enabled mechanisms are []", "UNSUPPORTED_MECHANISM", "GSSAPI", None, None, None, [], *log4j),
        (6, "authentication_succeeded", False, None, None, None, None, None, None, None, *log4j),
    ]  # fmt: skip
    assert_parsed(spark, parse(spark, records), REAUTH_COLUMNS, expected)


def test_reason_detail_functions_including_nulls(spark: SparkSession) -> None:
    rows = [
        ("Cannot change principals during re-authentication from User.alice: User.bob", "User:alice", "User:bob", None, None, "PRINCIPAL_CHANGE_DURING_REAUTH"),
        ("Cannot change principals during re-authentication from .alice: User.", None, None, None, None, "PRINCIPAL_CHANGE_DURING_REAUTH"),
        ("SASL mechanism 'A' requested by client is not supported for re-authentication of mechanism 'B'", None, None, "B", None, "MECHANISM_CHANGE_DURING_REAUTH"),
        ("SASL mechanism 'A' requested by client is not supported", None, None, None, None, "UNSUPPORTED_MECHANISM"),
        ("Unknown error code UNKNOWN_SERVER_ERROR, client mechanism is PLAIN, enabled mechanisms are [PLAIN]", None, None, None, ["PLAIN"], "OTHER"),
        ("Invalid request, potential reasons: kafka client configured with the wrong security protocol, it does not support KIP-43 or it is not a kafka client.", None, None, None, None, "INVALID_REQUEST"),
        ("enabled mechanisms are [PLAIN] and more", None, None, None, None, "OTHER"),
        (None, None, None, None, None, None),
    ]  # fmt: skip
    schema = "reason string, old string, new string, old_mechanism string, enabled array<string>, code string"
    df = spark.createDataFrame(rows, schema)
    principals = reauth_principals(F.col("reason"))
    actual = df.select(
        "reason",
        principals["reauth_old_principal"].alias("old"),
        principals["reauth_new_principal"].alias("new"),
        reauth_old_mechanism(F.col("reason")).alias("old_mechanism"),
        enabled_mechanisms(F.col("reason")).alias("enabled"),
        failure_reason_code(F.col("reason")).alias("code"),
    )
    assert_df_equality(actual, df, ignore_nullable=True)
    mechanisms = df.select(sasl_mechanism(F.col("reason")).alias("m")).collect()
    assert [r.m for r in mechanisms] == [None, None, "A", "A", "PLAIN", None, None, None]


def test_is_auth_record_claims_outcomes_only(spark: SparkSession) -> None:
    rows = [
        (SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] Failed authentication with /1.2.3.4 (x)", True),
        (SELECTOR + ":908", "[Consumer clientId=c] Failed re-authentication with b/1.2.3.4 (channelId=1) (x)", True),
        (SELECTOR, "Successfully authenticated with /1.2.3.4", True),
        (SELECTOR, "Connection with /1.2.3.4 disconnected due to authentication exception", True),
        (NETWORK_CLIENT, "[Producer clientId=p] Connection to node 1 (b/1.2.3.4:9092) failed authentication due to: x", True),
        (SELECTOR, "[SocketServer listenerType=BROKER, nodeId=1] FAILED AUTHENTICATION with /1.2.3.4", True),
        (SELECTOR, "Connection with /1.2.3.4 disconnected", False),
        (SELECTOR, "Connection with /1.2.3.4 (channelId=1.2.3.5:9092-1.2.3.4:5-0) disconnected", False),
        (SELECTOR, "Unexpected error from /1.2.3.4; closing connection", False),
        (NETWORK_CLIENT, "[Producer clientId=p] Connection to node -1 (b/1.2.3.4:9092) could not be established. Broker may not be available.", False),
        (NETWORK_CLIENT, "[Producer clientId=p] Connection to node 1 (b/1.2.3.4:9092) terminated during authentication. This may happen due to any of the following reasons: ...", False),
        ("kafka.authorizer.logger", "Failed authentication with /1.2.3.4 (x)", False),
        ("no.shhsoft.kafka.auth.LdapAuthenticateCallbackHandler", 'Authentication failed for user "foo".', False),
        (None, "Failed authentication with /1.2.3.4 (x)", False),
        (SELECTOR, None, False),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "logger string, message string, claimed boolean")
    actual = df.select(
        "logger", "message", is_auth_record(F.col("logger"), F.col("message")).alias("claimed")
    )
    assert_df_equality(actual, df, ignore_nullable=True)


# Hypothesis round trip: render outcomes in Selector's / NetworkClient's exact format, parse back.
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
_KNOWN_REASONS = (
    ("Authentication failed during {re}authentication due to invalid credentials with SASL mechanism {mech}", "INVALID_CREDENTIALS", True),
    ("Unsupported SASL mechanism {mech}", "UNSUPPORTED_MECHANISM", True),
    ("Unexpected Kafka request of type METADATA during SASL handshake.", "UNEXPECTED_REQUEST_DURING_HANDSHAKE", False),
    ("Cannot change principals during re-authentication from User.alice: User.bob", "PRINCIPAL_CHANGE_DURING_REAUTH", False),
    ("SSL handshake failed", "SSL_HANDSHAKE_FAILED", False),
    ('{{"status":"invalid_token"}}', "OAUTH_INVALID_TOKEN", False),
)  # fmt: skip
_FREE_TEXT = st.text(
    string.ascii_letters + string.digits + ' ()[]{}":,.=-', min_size=1, max_size=40
)
_ID_TEXT = st.text(string.ascii_letters + string.digits + "-._", min_size=1, max_size=12)
_HOST_NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5})?", fullmatch=True)
_ROUND_TRIP_COLUMNS = FORMAT_COLUMNS


def java_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """InetAddress.getHostAddress: IPv6 in full, without leading zeros."""
    if address.version == 4:
        return str(address)
    return ":".join(f"{int(part, 16):x}" for part in address.exploded.split(":"))


@st.composite
def rendered_reasons(draw: st.DrawFn, reauth: bool) -> tuple[str, str, str | None]:
    """(exception message, failure_reason_code, mechanism)."""
    if draw(st.booleans()):
        free = draw(_FREE_TEXT.filter(lambda s: not s.startswith("channelId=")))
        return free, "OTHER", None
    template, code, has_mechanism = draw(st.sampled_from(_KNOWN_REASONS))
    mechanism = draw(st.sampled_from(_MECHANISMS))
    reason = template.format(re="re-" if reauth else "", mech=mechanism)
    return reason, code, mechanism if has_mechanism else None


@st.composite
def broker_failures(draw: st.DrawFn) -> tuple[Record, tuple[object, ...]]:
    reauth, version = draw(st.booleans()), draw(st.sampled_from(("2.8", "3.2", "4.0")))
    listener_type, node = (
        draw(st.sampled_from(("ZK_BROKER", "BROKER", "CONTROLLER"))),
        draw(st.integers(0, 3000)),
    )
    host = draw(st.one_of(st.none(), _HOST_NAMES))
    local_ip, peer_ip = java_ip(draw(st.ip_addresses())), java_ip(draw(st.ip_addresses()))
    local_port, peer_port = draw(st.integers(1, 65535)), draw(st.integers(1, 65535))
    processor, index = draw(st.integers(0, 64)), draw(st.integers(0, 10**6))
    reason, code, mechanism = draw(rendered_reasons(reauth))
    channel = {"2.8": None, "3.2": f"{local_ip}:{local_port}-{peer_ip}:{peer_port}-{index}"}
    channel["4.0"] = f"{local_ip}:{local_port}-{peer_ip}:{peer_port}-{processor}-{index}"
    cid = channel[version]
    desc = f"{host or ''}/{peer_ip}" + (f" (channelId={cid})" if cid else "")
    message = f"[SocketServer listenerType={listener_type}, nodeId={node}] Failed {'re-' if reauth else ''}authentication with {desc} ({reason})"
    parts = (local_ip, local_port, peer_ip, peer_port) if cid else (None, None, None, None)
    expected = (
        "reauthentication_failed" if reauth else "authentication_failed", "broker", listener_type, node,
        None, None, None, host, peer_ip, peer_port if cid else None, cid, *parts,
        processor if version == "4.0" else None, reason, code, mechanism, None, None,
    )  # fmt: skip
    return Record("INFO", SELECTOR, message), expected


@st.composite
def client_failures(draw: st.DrawFn) -> tuple[Record, tuple[object, ...]]:
    client_type, client_id = (
        draw(st.sampled_from(("Producer", "Consumer", "AdminClient"))),
        draw(_ID_TEXT),
    )
    group = draw(_ID_TEXT) if client_type == "Consumer" else None
    prefix = f"[{client_type} clientId={client_id}" + (f", groupId={group}]" if group else "]")
    node, host, address = draw(st.integers(-1, 2000)), draw(_HOST_NAMES), draw(st.ip_addresses())
    port = draw(st.integers(1, 65535))
    ip = java_ip(address)
    rendered_ip = f"[{ip}]" if address.version == 6 else ip  # InetSocketAddress.toString (Java 14+)
    reason, code, mechanism = draw(rendered_reasons(False))
    message = f"{prefix} Connection to node {node} ({host}/{rendered_ip}:{port}) failed authentication due to: {reason}"
    expected = (
        "client_authentication_failed", "client", None, None, client_type, client_id,
        None if group == "null" else group, host, ip, port, None, None, None, None, None, None,
        reason, code, mechanism, node, None,
    )  # fmt: skip
    return Record("ERROR", NETWORK_CLIENT, message), expected


# Few examples, each one DataFrame of up to 25 rendered lines: ~60 lines, 3 Spark jobs.
@settings(max_examples=3, deadline=None)
@given(st.lists(st.one_of(broker_failures(), client_failures()), min_size=5, max_size=25))
def test_round_trip_rendered_outcomes(
    spark: SparkSession, events: list[tuple[Record, tuple[object, ...]]]
) -> None:
    parsed = parse(spark, [record for record, _ in events])
    expected = [(i, *row) for i, (_, row) in enumerate(events, 1)]
    assert_parsed(spark, parsed, _ROUND_TRIP_COLUMNS, expected)
