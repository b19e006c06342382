"""Who is on each end of an authentication line: the log prefix, the channel id, the addresses.

Sources (docs/kafka-log-formats.md sections 1 and 4): broker Selector prefix ``[SocketServer
listenerType=BROKER, nodeId=1] `` (2.8+) or ``[SocketServer brokerId=1] ``; client LogContext
``[Producer clientId=..] ``, ``[Consumer clientId=.., groupId=..] ``, ``[AdminClient
clientId=..] ``; channelId ``localIp:port-remoteIp:port-index`` (SocketServer.ConnectionId,
<=3.9) or ``...-processor-index`` (ServerConnectionId, 4.0+); NetworkClient node address
``InetSocketAddress.toString``; Strimzi network thread names.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from transforms.columns import group

#: The LogContext prefix is the last '[...] ' before the text (Connect may put its MDC first).
PREFIX_RE = r"^(?:\[[^\]]*\] )*\[([^\]]*)\] "

#: InetSocketAddress.toString: host/ip:port, host/[v6]:port (Java 14+), host/<unresolved>:port.
ADDRESS_RE = r"^([^/]*)/(?:\[([^\]]*)\]|(.*)):(\d+)$"
CHANNEL_ID_RE = r"^([^-]+):(\d+)-([^-]+):(\d+)-(\d+)(?:-(\d+))?$"
#: SocketServer Processor thread: <prefix>-kafka-network-thread-<node>-ListenerName(X)-<proto>-<id>.
THREAD_RE = r"-ListenerName\(([^)]*)\)-([A-Z_]+)-(\d+)$"


def prefix_columns(prefix: Column, header_client_id: Column) -> dict[str, Column]:
    """Fields of the broker SocketServer or client LogContext prefix (without brackets); the
    client id also from an expired channel's RequestHeader."""
    word = group(prefix, r"^(\S+)", 1)
    server = word == "SocketServer"
    client = ~server & prefix.rlike(r"^\S+ \w+=")  # 'Name key=value, ...', not a Connect MDC
    node = group(prefix, r"(?:nodeId|brokerId)=(-?\d+)", 1).try_cast("int")
    group_id = group(prefix, r"[ ,]groupId=([^,]*)", 1)
    client_id = F.when(client, group(prefix, r"[ ,]clientId=([^,]*)", 1))
    return {
        "listener_type": F.when(server, group(prefix, r"listenerType=([^,]+)", 1)),
        "socket_server_node_id": F.when(server, node),
        "client_type": F.when(client, word),
        "client_id": F.coalesce(client_id, header_client_id),
        # ConsumerUtils writes groupId.orElse("null") when the consumer has no group.
        "group_id": F.when(client & (group_id != "null"), group_id),
    }


def connection_columns(connection_id: Column, thread: Column) -> dict[str, Column]:
    """channelId parts, and listener / protocol / processor from a Strimzi thread name."""
    cid, four_part = CHANNEL_ID_RE, group(connection_id, CHANNEL_ID_RE, 6).isNotNull()
    return {
        "local_ip": group(connection_id, cid, 1),
        "local_port": group(connection_id, cid, 2).try_cast("int"),
        "remote_ip": group(connection_id, cid, 3),
        "remote_port": group(connection_id, cid, 4).try_cast("int"),
        "processor_id": F.coalesce(
            F.when(four_part, group(connection_id, cid, 5)), group(thread, THREAD_RE, 3)
        ).try_cast("int"),
        "listener": group(thread, THREAD_RE, 1),
        "security_protocol": group(thread, THREAD_RE, 2),
    }


def peer_columns(address: Column, host: Column, ip: Column, remote: Column) -> dict[str, Column]:
    """The other end: the Selector's socket description, else the NetworkClient node address,
    else the channel id's remote part (``remote`` = struct of remote_ip, remote_port)."""
    a = ADDRESS_RE
    address_ip = F.coalesce(group(address, a, 2), group(address, a, 3))
    return {
        "peer_host": F.coalesce(host, group(address, a, 1)),
        "peer_ip": F.coalesce(
            ip, F.nullif(address_ip, F.lit("<unresolved>")), remote.getField("remote_ip")
        ),
        "peer_port": F.coalesce(
            remote.getField("remote_port"), group(address, a, 4).try_cast("int")
        ),
    }
