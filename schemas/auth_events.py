"""silver.auth_events: one row per SASL/SSL authentication outcome line (broker or client side).

Sources: ``org.apache.kafka.common.network.Selector`` (``Failed {re-}authentication with``,
``Successfully {re-}authenticated with``, pre-2.2 ``... disconnected due to authentication
exception``) and ``org.apache.kafka.clients.NetworkClient`` (``Connection to node ... failed
authentication due to: ...``); see ``transforms.auth`` and kafka-log-formats.md section 4.
"""

from __future__ import annotations

from pyspark.sql.types import (
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from schemas.lineage import EVENT_DATE_FIELD, EVENT_PARTITION_COLUMNS, LINEAGE_FIELDS

TABLE_NAME = "auth_events"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``event_type`` values.
EVENT_AUTHENTICATION_FAILED = "authentication_failed"
EVENT_REAUTHENTICATION_FAILED = "reauthentication_failed"
EVENT_AUTHENTICATION_SUCCEEDED = "authentication_succeeded"
EVENT_REAUTHENTICATION_SUCCEEDED = "reauthentication_succeeded"
EVENT_CLIENT_AUTHENTICATION_FAILED = "client_authentication_failed"
EVENT_TYPES: tuple[str, ...] = (
    EVENT_AUTHENTICATION_FAILED,
    EVENT_REAUTHENTICATION_FAILED,
    EVENT_AUTHENTICATION_SUCCEEDED,
    EVENT_REAUTHENTICATION_SUCCEEDED,
    EVENT_CLIENT_AUTHENTICATION_FAILED,
)

AUTH_EVENTS = StructType(
    [
        *LINEAGE_FIELDS,
        # One of EVENT_TYPES.
        StructField("event_type", StringType(), False),
        # 'broker' | 'client'; null when neither the prefix nor the channel id tells.
        StructField("side", StringType(), True),
        # From the broker prefix '[SocketServer listenerType=BROKER, nodeId=1]' or
        # '[SocketServer brokerId=1]' (2.x).
        StructField("listener_type", StringType(), True),
        StructField("socket_server_node_id", IntegerType(), True),
        # From a client LogContext prefix '[Producer clientId=..]', '[Consumer clientId=..,
        # groupId=..]', '[AdminClient clientId=..]' (client_type = the prefix's first word).
        StructField("client_type", StringType(), True),
        StructField("client_id", StringType(), True),
        StructField("group_id", StringType(), True),
        # The other end of the connection: the client for broker lines, the broker for client
        # lines. peer_host is the name in 'name/1.2.3.4' (null if the address has no name).
        StructField("peer_host", StringType(), True),
        StructField("peer_ip", StringType(), True),
        StructField("peer_port", IntegerType(), True),
        # channelId verbatim (3.2+): 'localIp:port-remoteIp:port-index' (<=3.9),
        # '...-processor-index' (4.x), or the node id ('-1') on the client side.
        StructField("connection_id", StringType(), True),
        StructField("local_ip", StringType(), True),
        StructField("local_port", IntegerType(), True),
        StructField("remote_ip", StringType(), True),
        StructField("remote_port", IntegerType(), True),
        # Network processor: 4.x channelId, else the Strimzi thread name's trailing id.
        StructField("processor_id", IntegerType(), True),
        # From a Strimzi thread name '...-ListenerName(TLS-9093)-SASL_SSL-8'.
        StructField("listener", StringType(), True),
        StructField("security_protocol", StringType(), True),
        # Exception message verbatim; null for success lines.
        StructField("reason", StringType(), True),
        # Stable code for reason (transforms.auth.FAILURE_REASON_CODES, else 'OTHER').
        StructField("failure_reason_code", StringType(), True),
        # SASL mechanism named by the reason, when it names one.
        StructField("mechanism", StringType(), True),
        # Client lines: the target broker (node -1 = bootstrap) and its address verbatim.
        StructField("broker_node_id", IntegerType(), True),
        StructField("broker_address", StringType(), True),
        # bronze log_date; partition column.
        EVENT_DATE_FIELD,
    ]
)
