"""Kafka Connect families (docs/kafka-log-formats.md section 8): the bronze claims and the parsers.

``connect_rest`` (Jetty access log of the REST server) and ``connect_worker`` (herder-side
forwarding, reconfiguration, session-key and request-verification lines) both feed
silver.connect_requests; the implementations live in ``transforms.silver.connect.rest`` and
``transforms.silver.connect.worker``.
"""

from __future__ import annotations

from transforms.silver.connect.rest import is_connect_rest_record, parse_connect_rest
from transforms.silver.connect.worker import is_connect_worker_record, parse_connect_worker

__all__ = [
    "is_connect_rest_record",
    "is_connect_worker_record",
    "parse_connect_rest",
    "parse_connect_worker",
]
