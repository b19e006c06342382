"""The nodes' configuration as a small DataFrame: one row per property of each node's
``server.properties`` / ``broker.properties`` / ``controller.properties`` /
``connect-distributed.properties`` found beside its logs (``jobs.inputs``).

Gold rules join it by node and property name (``connections.max.reauth.ms`` with its
``listener.name.<listener>.<mechanism>.`` overrides, ``super.users``,
``delegation.token.expiry.time.ms``, ``inter.worker.key.ttl.ms``...). Secret values
(passwords, JAAS configs, ``delegation.token.secret.key`` / ``master.key``) are never carried:
their rows have ``is_secret`` true and a null ``value``. Not a Delta table: built per run.
"""

from __future__ import annotations

from pyspark.sql.types import BooleanType, StringType, StructField, StructType

NODE_PROPERTIES = StructType(
    [
        # node.id / broker.id / Connect worker id, as jobs.inputs.NodeConfig gives it.
        StructField("node_id", StringType(), True),
        # 'broker', 'controller', 'broker,controller' or 'connect'.
        StructField("role", StringType(), False),
        StructField("config_path", StringType(), False),
        # Property name verbatim (case kept; Kafka's listener prefixes are lower case).
        StructField("property", StringType(), False),
        # Value verbatim (whitespace trimmed); null for secrets.
        StructField("value", StringType(), True),
        StructField("is_secret", BooleanType(), False),
    ]
)
