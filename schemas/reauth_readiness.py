"""gold.reauth_readiness: what turning on ``connections.max.reauth.ms`` would have done (KIP-368
migration plan), per candidate value and day.

For each SASL session of the day that started with an authentication and whose client cannot
re-authenticate, the broker would have closed the connection at its first request after
``start + candidate`` (``Disconnecting expired channel``); an idle connection is never killed.
``transforms.gold.kip368_reauth.outputs.readiness`` builds it.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "reauth_readiness"
PARTITION_COLUMNS: tuple[str, ...] = ("activity_date",)

REAUTH_READINESS = StructType(
    [
        # The candidate connections.max.reauth.ms, in ms.
        StructField("candidate_ms", LongType(), False),
        # SASL sessions of the day with a known connection (the population examined).
        StructField("sessions", LongType(), False),
        # ... that would have been killed: client known not to re-authenticate.
        StructField("sessions_killed", LongType(), False),
        # ... that would have been killed if their client (capability unknown) cannot.
        StructField("sessions_at_risk_unknown_client", LongType(), False),
        StructField("principals_killed", ArrayType(StringType(), True), False),
        StructField("distinct_principals_killed", LongType(), False),
        # 'name/version' of the killed sessions' client software ('unknown/unknown' if none).
        StructField("client_software_killed", ArrayType(StringType(), True), False),
        # UTC; the first request that would have been refused. Null when none.
        StructField("first_kill_ts", TimestampType(), True),
        StructField("run_id", StringType(), False),
        StructField("activity_date", DateType(), True),
    ]
)
