"""``kafka-audit parse`` on ONE file mixing a record of every family, one after the other.

Most lines are real ones from ``samples/`` (authorizer, request log JSON, Selector, Strimzi,
Connect REST and herder). The bundled samples have no pre-2.8 request line, no
SaslServerAuthenticator DEBUG line, no token-manager line and no Confluent audit event: those
are rendered from Kafka's format strings (as in tests/integration/test_pipeline.py, test_auth_debug.py and
test_tokens.py) or copied from the public audit events of tests/spark/test_confluent_audit.py.
Every expected value below is read off the lines by hand.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jobs.cli.main import main

KEY = "k" * 32


def fingerprint(value: str) -> str:
    """HMAC-SHA256 under KEY, first 32 hex (computed with the standard library)."""
    return hmac.new(KEY.encode(), value.encode(), hashlib.sha256).hexdigest()[:32]


ENVELOPE_DATA = "ACwAAQAAAAMADWFkbWluY2xpZW50LTIAAgIFdGVzdAMOc2VnbWVudC5ieXRlcwAHMjA0ODAwAAtzZWdtZW50Lm1zAQAAAAAA"
HMAC_BYTES = "[102, 111, 111, 98, 97, 114, 45, 115, 101, 99]"
LINES = [
    # 1
    "# one record of every family, then an out-of-scope line and a blank line",
    # 2, 3: samples/authorizer.log lines 5 and 12
    "[2020-06-03 14:25:26,298] INFO Principal = User:skyDriveProducer is Denied Operation = Describe from host = 10.16.19.213 on resource = Topic:LITERAL:__consumer_offsets (kafka.authorizer.logger)",
    "DEBUG Principal = User:CN=producer is Allowed Operation = Describe from host = 127.0.0.1 on resource = Topic:LITERAL:ssl for request = Metadata with resourceRefCount = 1 (kafka.authorizer.logger)",
    # 4: samples/request-log.log line 5 (2.8+ JSON, ENVELOPE)
    '[2023-02-03 16:29:55,747] DEBUG Completed request:{"isForwarded":false,"requestHeader":{"requestApiKey":58,"requestApiVersion":0,"correlationId":6,"clientId":"1","requestApiKeyName":"ENVELOPE"},"request":{"requestData":"'
    + ENVELOPE_DATA
    + '","requestPrincipal":"AAAFVXNlcgpBTk9OWU1PVVMAAA==","clientHostAddress":"fwAAAQ=="},"response":{"responseData":null,"errorCode":41},"connection":"127.0.0.1:51244-127.0.0.1:51264-1","totalTimeMs":0.362,"requestQueueTimeMs":0.096,"localTimeMs":0.12,"remoteTimeMs":0.0,"throttleTimeMs":0,"responseQueueTimeMs":0.051,"sendTimeMs":0.095,"securityProtocol":"PLAINTEXT","principal":"User:ANONYMOUS","listener":"EXTERNAL","clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"unknown"}} (kafka.request.logger:275)',
    # 5: pre-2.8 string form (RequestChannel, Arrays.toString bytes)
    "[2026-11-20 10:00:04,000] DEBUG Completed request:RequestHeader(apiKey=RENEW_DELEGATION_TOKEN, apiVersion=1, "
    "clientId=adm, correlationId=8) -- RenewDelegationTokenRequestData(hmac=" + HMAC_BYTES + ", renewPeriodMs=-1),"
    "response:RenewDelegationTokenResponseData(errorCode=0, expiryTimestampMs=4, throttleTimeMs=0) from connection "
    "10.0.0.1:9093-10.0.0.9:50000-1;totalTime:1.0,requestQueueTime:0.1,localTime:0.5,remoteTime:0.0,throttleTime:0,"
    "responseQueueTime:0.1,sendTime:0.1,securityProtocol:SASL_SSL,principal:User:alice,listener:SASL_SSL,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0) (kafka.request.logger)",
    # 6, 7: samples/sasl-authentication.log lines 5 and 12 (Selector; Strimzi layout with thread)
    "[2023-01-19 19:52:33,832] INFO [SocketServer listenerType=ZK_BROKER, nodeId=1] Failed authentication with /172.22.0.2 (Unexpected Kafka request of type METADATA during SASL handshake.) (org.apache.kafka.common.network.Selector)",
    "2022-11-23 20:29:45,061 INFO [SocketServer listenerType=ZK_BROKER, nodeId=0] Failed authentication with /10.42.1.38 (channelId=10.42.1.34:9093-10.42.1.38:43546-4) (SSL handshake failed) (org.apache.kafka.common.network.Selector) [data-plane-kafka-network-thread-0-ListenerName(TLS-9093)-SASL_SSL-8]",
    # 8: SaslServerAuthenticator DEBUG
    "[2026-11-20 10:00:05,000] DEBUG Using SASL mechanism 'SCRAM-SHA-512' provided by client (org.apache.kafka.common.security.authenticator.SaslServerAuthenticator)",
    # 9: token manager (ZooKeeper mode)
    "[2026-11-20 10:00:06,000] INFO [Token Manager on Node 1]: Created a delegation token: tok-AbCdEf123 for owner: User:alice (kafka.server.DelegationTokenManagerZk)",
    # 10: samples/connect-rest-access.log line 5 (docker-compose prefix, NCSA + latency)
    'kafkaconnect_1      | [2017-09-21 11:53:11,530] INFO 172.30.0.1 - - [21/Sep/2017:11:51:41 +0000] "POST /connectors HTTP/1.1" 500 48  90011 (org.apache.kafka.connect.runtime.rest.RestServer)',
    # 11, 12: samples/connect-worker.log lines 8 and 9 (the exception line folds into 11)
    "[2026-03-04 11:29:22,368] ERROR Error forwarding REST request to http://connect:8083/connectors/filestream-sink/config?forward=true&validated=false : (org.apache.kafka.connect.runtime.rest.RestClient:221)",
    "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
    # 13, 14: Confluent Platform 7.x audit events (CloudEvents 1.0)
    r'{"specversion":"1.0","id":"91b3626d-4b1a-49e0-9921-bdf120ced00d","source":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","type":"io.confluent.kafka.server/authorization","datacontenttype":"application/json","subject":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg/topic=no.rb.no.acl","time":"2023-02-21T10:26:58.886604Z","route":"confluent-audit-log-events","data":{"serviceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","methodName":"kafka.Metadata","resourceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg/topic\u003dno.rb.no.acl","authenticationInfo":{"principal":"User:alice","principalResourceId":""},"authorizationInfo":{"granted":false,"operation":"Describe","resourceType":"Topic","resourceName":"no.rb.no.acl","patternType":"LITERAL"},"request":{"correlation_id":"53","client_id":"console-producer"},"requestMetadata":{"client_address":"/172.21.0.1"}}}',
    r'{"specversion":"1.0","id":"fbdeefc6-2ae9-4ae9-88cc-159c4f360c0e","source":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","type":"io.confluent.kafka.server/authentication","datacontenttype":"application/json","subject":"crn:///kafka=EyVCDzKYSc2vXhyD-z9PXg","time":"2023-02-21T06:07:38.958333Z","route":"confluent-audit-log-events","data":{"serviceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","methodName":"kafka.Authentication","resourceName":"crn:///kafka\u003dEyVCDzKYSc2vXhyD-z9PXg","authenticationInfo":{"principal":"User:alice","metadata":{"mechanism":"SSL","identifier":"CN\u003dalice@mydomain.example,O\u003dWorld Domination Inc.,L\u003dMcMahons Point,ST\u003dNSW,C\u003dAU"},"principalResourceId":""},"requestMetadata":{"client_address":"/172.21.0.1"},"result":{"status":"SUCCESS","message":""}}}',
    # 15: samples/sasl-authentication.log line 16 (a custom callback handler: no family)
    '[2020-09-22 12:26:30,459] WARN Authentication failed for user "foo". (no.shhsoft.kafka.auth.LdapAuthenticateCallbackHandler)',
    # 16
    "",
]  # fmt: skip

# (line, family, key of the printed document, the key fields of that document). The file holds
# two different node ids (1 and 0), so records without their own id get the folder name.
EXPECTED: list[tuple[int, str | None, str, dict[str, Any]]] = [
    (2, "authz", "authz_decisions", {
        "node_id": "broker-9", "event_ts": "2020-06-03T14:25:26.298Z", "authorizer": "SimpleAclAuthorizer",
        "principal": "User:skyDriveProducer", "decision": "DENIED", "operation": "DESCRIBE",
        "host": "10.16.19.213", "resource_type": "TOPIC", "resource_name": "__consumer_offsets",
        "api_name": None}),
    (3, "authz", "authz_decisions", {
        "event_ts": None, "level": "DEBUG", "authorizer": "AclAuthorizer", "principal": "User:CN=producer",
        "decision": "ALLOWED", "operation": "DESCRIBE", "host": "127.0.0.1", "resource_name": "ssl",
        "api_name": "Metadata", "resource_ref_count": 1}),
    (4, "request", "request_events", {
        "event_ts": "2023-02-03T16:29:55.747Z", "log_format": "json", "api_key": 58,
        "api_key_name": "ENVELOPE", "correlation_id": 6, "client_id": "1", "remote_ip": "127.0.0.1",
        "remote_port": 51264, "principal": "User:ANONYMOUS", "listener": "EXTERNAL", "error_code": 41,
        "error_code_name": "NOT_CONTROLLER", "envelope_principal": "User:ANONYMOUS",
        "envelope_client_address": "127.0.0.1",
        "request_json": '{"requestData":"[REDACTED hmac-sha256:' + fingerprint(ENVELOPE_DATA) + ']",'
        '"requestPrincipal":"AAAFVXNlcgpBTk9OWU1PVVMAAA==","clientHostAddress":"fwAAAQ=="}'}),
    (5, "request", "request_events", {
        "event_ts": "2026-11-20T10:00:04.000Z", "log_format": "string", "api_key": 39, "api_version": 1,
        "api_key_name": "RENEW_DELEGATION_TOKEN", "correlation_id": 8, "client_id": "adm",
        "remote_ip": "10.0.0.9", "principal": "User:alice", "client_software_version": "2.7.0",
        "token_hmac_fingerprint": fingerprint(HMAC_BYTES)}),
    (5, "request", "token_events", {
        "source": "request_log", "operation": "renew", "requester": "User:alice",
        "hmac_fingerprint": fingerprint(HMAC_BYTES), "client_id": "adm", "correlation_id": 8}),
    (6, "auth", "auth_events", {
        "node_id": "1", "event_ts": "2023-01-19T19:52:33.832Z", "event_type": "authentication_failed",
        "side": "broker", "peer_ip": "172.22.0.2",
        "reason": "Unexpected Kafka request of type METADATA during SASL handshake.",
        "failure_reason_code": "UNEXPECTED_REQUEST_DURING_HANDSHAKE"}),
    (7, "auth", "auth_events", {
        "node_id": "0", "event_ts": "2022-11-23T20:29:45.061Z", "event_type": "authentication_failed",
        "peer_ip": "10.42.1.38", "peer_port": 43546, "connection_id": "10.42.1.34:9093-10.42.1.38:43546-4",
        "listener": "TLS-9093", "security_protocol": "SASL_SSL", "reason": "SSL handshake failed",
        "failure_reason_code": "SSL_HANDSHAKE_FAILED"}),
    (8, "auth", "auth_events", {
        "event_ts": "2026-11-20T10:00:05.000Z", "event_type": "mechanism_selected", "side": "broker",
        "mechanism": "SCRAM-SHA-512"}),
    (9, "token", "token_events", {
        "node_id": "1", "source": "token_manager", "operation": "create", "metadata_mode": "zookeeper",
        "owner": "User:alice", "token_id": "tok-AbCdEf123"}),
    (10, "connect_rest", "connect_requests", {
        "event_ts": "2017-09-21T11:53:11.530Z", "record_kind": "rest_access", "client_address": "172.30.0.1",
        "http_method": "POST", "uri_path": "/connectors", "status": 500, "response_bytes": 48,
        "latency_ms": 90011}),
    (11, "connect_worker", "connect_requests", {
        "event_ts": "2026-03-04T11:29:22.368Z", "record_kind": "worker_event", "event_type": "forward_failed",
        "connector_name": "filestream-sink", "is_forwarded_request": True,
        "exception_class": "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException"}),
    (13, "confluent_audit", "authz_decisions", {
        "event_ts": "2023-02-21T10:26:58.886Z", "authorizer": "ConfluentServerAuthorizer",
        "principal": "User:alice", "decision": "DENIED", "operation": "DESCRIBE", "host": "172.21.0.1",
        "resource_name": "no.rb.no.acl", "api_name": "Metadata", "client_id": "console-producer",
        "correlation_id": 53}),
    (14, "confluent_audit", "auth_events", {
        "event_ts": "2023-02-21T06:07:38.958Z", "event_type": "authentication_succeeded",
        "peer_ip": "172.21.0.1", "security_protocol": "SSL", "principal": "User:alice"}),
    (15, None, "out_of_scope", {
        "level": "WARN", "logger": "no.shhsoft.kafka.auth.LdapAuthenticateCallbackHandler",
        "message": 'Authentication failed for user "foo".'}),
]  # fmt: skip


def test_every_family_in_one_file(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = tmp_path / "broker-9"
    node.mkdir()
    log = node / "mixed.log"
    log.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    lake = tmp_path / "lake"
    (lake / "_kafka_audit").mkdir(parents=True)
    (lake / "_kafka_audit" / "fingerprint.key").write_text(KEY + "\n", encoding="utf-8")

    assert main(["parse", str(log), "--lake", str(lake)]) == 0

    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {d["source"] for d in docs} == {str(log)}
    keys = [(d["line"], d["family"], next(k for k in d if k not in {"source", "line", "family"}))
            for d in docs]  # fmt: skip
    assert keys == [(line, family, key) for line, family, key, _ in EXPECTED]
    for doc, (line, _, key, fields) in zip(docs, EXPECTED, strict=True):
        got = {name: doc[key][name] for name in fields}
        assert got == fields, f"line {line}"
    # No secret reaches the output, in any document.
    printed = json.dumps(docs)
    assert ENVELOPE_DATA not in printed and "102, 111, 111" not in printed
