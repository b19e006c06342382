"""Area 'requests': the brokers' request log (``kafka.request.logger``), the bulk of a corpus.

Each line is ``RequestChannel.updateRequestMetrics``' DEBUG ``Completed request:...``
(kafka-log-formats.md section 2): the KIP-673 JSON form on brokers of 2.8 and later
(``RequestConvertToJson``, Jackson compact, keys in emission order), the string form
(``RequestHeader(...) -- request,response:... from connection ...;totalTime:...``) before.
Clients send Produce, Fetch and Metadata over their connection to each broker; the connection
id, principal, listener, protocol and ``clientInformation`` (KIP-511) are the client's.
The area spreads ``share`` of ``lines_target`` evenly over the time span. No replayed metric or
finding counts request-log Produce / Fetch / Metadata lines; each line is reported to the truth
(``request_logged``) only to tell which authentication lines the logs tie to a principal
(``links``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from jobs.simulator.base import Client, LogLine, Node, Truth, World
from jobs.simulator.connections import plan
from jobs.simulator.shared import (
    REQUEST_LOGGER,
    Conn,
    render_times,
    request_message,
    request_tail,
    version_tuple,
)
from jobs.simulator.world import LISTENERS

TOPICS: tuple[str, ...] = ("orders", "payments", "clicks", "audit-events")
#: Share of ``lines_target`` this area fills.
SHARE = 0.93
#: This area's timings (ms): fixed queue and send times, a local time of 60% of the total;
#: ``.format(total, local)`` gives the text of each form.
_TIME_VALUES = ("{0:.3f}", "0.081", "{1:.3f}", "0.0", "0", "0.042", "0.113")
_JSON_TIMES = render_times(_TIME_VALUES)
_STRING_TIMES = render_times(_TIME_VALUES, json_form=False)
#: ``_json_message`` / ``_string_message``: (api, correlation, client id, topic, size, total
#: ms, tail) -> message.
_MessageOf = Callable[[int, int, str, str, int, float, str], str]


def client_request_message(broker: Node, client: Client, listener: str, connection: str, *,
                           api: int, correlation: int, topic: str, size: int,
                           total_ms: float) -> str:  # fmt: skip
    """One ``Completed request:`` message of a client's request, in the broker's version's form.

    Args:
        api: 0 Produce, 1 Fetch, 3 Metadata (ApiKeys ids).
        size: records size in bytes; total_ms: ``totalTimeMs``.
    """
    tail, message = _connection_form(broker, client, listener, connection)
    return message(api, correlation, client.client_id, topic, size, total_ms, tail)


def _connection_form(
    broker: Node, client: Client, listener: str, connection: str
) -> tuple[str, _MessageOf]:
    """The ``request_tail`` of a client's connection to ``broker`` and the function writing
    its messages (``_json_message`` or ``_string_message``, by the broker's version)."""
    json_form = version_tuple(broker.kafka_version) >= (2, 8)
    software = (client.software_name, client.software_version)
    conn = Conn(connection, client.principal, listener, LISTENERS[listener][0], software)
    tail = request_tail(conn, json_form=json_form)
    return tail, _json_message if json_form else _string_message


def _json_message(  # noqa: PLR0917
    api: int, correlation: int, client_id: str, topic: str, size: int, total: float, tail: str
) -> str:
    """A Produce (0), Fetch (1) or Metadata request's message in the KIP-673 JSON form (2.8+),
    over the connection whose ``request_tail`` is ``tail`` (positional arguments: this runs
    for most lines of a corpus)."""
    if api == 0:
        head = (
            f'{{"requestApiKey":0,"requestApiVersion":9,"correlationId":{correlation},'
            f'"clientId":"{client_id}","requestApiKeyName":"PRODUCE"}}'
        )
        request = (
            f'{{"transactionalId":null,"acks":-1,"timeoutMs":30000,"topicData":[{{"name":'
            f'"{topic}","partitionData":[{{"index":0,"recordsSizeInBytes":{size}}}]}}]}}'
        )
        response = (
            f'{{"responses":[{{"name":"{topic}","partitionResponses":[{{"index":0,"errorCode":0,'
            f'"baseOffset":{correlation * 7},"logAppendTimeMs":-1,"logStartOffset":0,'
            f'"recordErrors":[],"errorMessage":null}}]}}],"throttleTimeMs":0}}'
        )
    elif api == 1:
        head = (
            f'{{"requestApiKey":1,"requestApiVersion":12,"correlationId":{correlation},'
            f'"clientId":"{client_id}","requestApiKeyName":"FETCH"}}'
        )
        request = (
            f'{{"replicaId":-1,"maxWaitMs":500,"minBytes":1,"maxBytes":52428800,'
            f'"isolationLevel":0,"sessionId":0,"sessionEpoch":-1,"topics":[{{"topic":"{topic}",'
            f'"partitions":[{{"partition":0,"currentLeaderEpoch":0,"fetchOffset":{correlation},'
            f'"lastFetchedEpoch":-1,"logStartOffset":-1,"partitionMaxBytes":1048576}}]}}],'
            f'"forgottenTopicsData":[],"rackId":""}}'
        )
        response = (
            f'{{"throttleTimeMs":0,"errorCode":0,"sessionId":0,"responses":[{{"topic":"{topic}",'
            f'"partitions":[{{"partitionIndex":0,"errorCode":0,"highWatermark":{correlation * 7},'
            f'"recordsSizeInBytes":{size}}}]}}]}}'
        )
    else:
        head = (
            f'{{"requestApiKey":3,"requestApiVersion":12,"correlationId":{correlation},'
            f'"clientId":"{client_id}","requestApiKeyName":"METADATA"}}'
        )
        request = (
            f'{{"topics":[{{"topicId":"AAAAAAAAAAAAAAAAAAAAAA","name":"{topic}"}}],'
            f'"allowAutoTopicCreation":true,"includeTopicAuthorizedOperations":false}}'
        )
        response = (
            '{"throttleTimeMs":0,"brokers":[{"nodeId":1,"host":"broker-1","port":9093,'
            '"rack":null}],"clusterId":"q1Sh-9_ISia_zwGINzRvyQ","controllerId":1,"topics":[]}'
        )
    times = _JSON_TIMES.format(total, total * 0.6)
    return request_message(head, request, response, tail, times)


def _string_message(  # noqa: PLR0917
    api: int, correlation: int, client_id: str, topic: str, size: int, total: float, tail: str
) -> str:
    """``_json_message`` in the string form of brokers before 2.8."""
    if api == 0:
        head = f"apiKey=PRODUCE, apiVersion=8, clientId={client_id}, correlationId={correlation}"
        request = f"{{acks=-1,timeout=30000,partitionSizes=[{topic}-0={size}]}}"
        response = (
            f"{{responses=[{{topic={topic},partition_responses=[{{partition=0,error_code=0,"
            f"base_offset={correlation * 7},log_append_time=-1,log_start_offset=0,"
            f"record_errors=[],error_message=null}}]}}],throttle_time_ms=0}}"
        )
    elif api == 1:
        head = f"apiKey=FETCH, apiVersion=11, clientId={client_id}, correlationId={correlation}"
        request = (
            f"(type=FetchRequest, replicaId=-1, maxWait=500, minBytes=1, maxBytes=52428800, "
            f"fetchData={{{topic}-0=(fetchOffset={correlation}, logStartOffset=-1, "
            f"maxBytes=1048576, currentLeaderEpoch=Optional[0])}}, "
            f"isolationLevel=READ_UNCOMMITTED, "
            f"toForget=, metadata=(sessionId=INVALID, epoch=INITIAL), rackId=)"
        )
        response = "{throttle_time_ms=0,error_code=0,session_id=0,responses=[]}"
    else:
        head = f"apiKey=METADATA, apiVersion=9, clientId={client_id}, correlationId={correlation}"
        request = (
            f"{{topics=[{{name={topic}}}],allow_auto_topic_creation=true,"
            f"include_cluster_authorized_operations=false,"
            f"include_topic_authorized_operations=false}}"
        )
        response = "{throttle_time_ms=0,brokers=[],cluster_id=q1Sh-9_ISia_zwGINzRvyQ,topics=[]}"
    times = _STRING_TIMES.format(total, total * 0.6)
    return request_message(head, request, response, tail, times, json_form=False)


class RequestsArea:
    """Produce / Fetch / Metadata request-log lines filling most of ``lines_target``."""

    name = "requests"

    def configure(self, world: World) -> None:
        """Nothing to add (the request logger's DEBUG level is a log4j setting)."""

    def lines(self, world: World, truth: Truth) -> Iterator[LogLine]:
        """``SHARE * lines_target`` request lines, evenly spread, in time order. Each goes
        over the client's connection to the broker open at that time (``connections.plan``); a
        moment when that pair has none (before the first connection, between a kill or a
        failed re-authentication and the reconnection) sends nothing."""
        _, pairs = plan(world)
        rng = world.rng(self.name)
        keys = sorted(pairs)
        count = int(world.lines_target * SHARE)
        if count <= 0 or not keys:
            return
        # Requests start once the clients have connected (the auth area connects them within
        # the first 4 minutes).
        first = world.start_ms + 240_000
        step = max(1, world.end_ms - first) / count
        randrange, random = rng.randrange, rng.random
        n_keys, n_topics = len(keys), len(TOPICS)
        tails: dict[tuple[tuple[int, int], int], tuple[str, _MessageOf, str]] = {}
        logged = truth.request_logged
        cursor: dict[tuple[int, int], int] = {}
        correlation = 0
        for i in range(count):
            ts = first + int(i * step)
            key = keys[randrange(n_keys)]
            api, topic = randrange(3), TOPICS[randrange(n_topics)]
            size, total = randrange(100, 20000), 0.2 + random() * 5
            pair = pairs[key]
            at = cursor.get(key, 0)
            segments = pair.segments
            while at + 1 < len(segments) and segments[at + 1].start_ms <= ts:
                at += 1
            cursor[key] = at
            if not segments or not segments[at].start_ms < ts < segments[at].usable_ms:
                continue
            cached = tails.get((key, at))
            if cached is None:
                connection = pair.connection(segments[at])
                form = _connection_form(pair.broker, pair.client, pair.listener, connection)
                cached = (*form, connection)
                tails[(key, at)] = cached
            tail, message_of, connection = cached
            correlation += 1
            message = message_of(api, correlation, pair.client.client_id, topic, size, total, tail)
            logged(pair.broker.node_id, connection, pair.client.address, pair.client.principal, ts)
            yield LogLine(
                ts, pair.broker.name, "request", "DEBUG", REQUEST_LOGGER, message,
                "data-plane-kafka-request-handler-1",
            )  # fmt: skip
