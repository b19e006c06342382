"""JVM functions of the request-log parse (issue 15): their names, classes and result types.

``StringFormParse.java`` parses the 1.0-2.7 string form in one scan, for the records on which
the expression parse (``transforms.silver.request_log.string_form``) finds nothing to
quarantine; ``JsonFormParse.java`` parses the 2.8+ JSON form in one Jackson pass, for the
records on which ``transforms.silver.request_log.json_form`` finds nothing to quarantine. Each
returns null for every other record, which the expressions then parse. The parse calls them
only when a session has them registered (``jobs.jvm_parsers``); the rows are the same either
way.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

#: The folder of the Java sources (a package resource: a checkout's folder, or inside a
#: wheel or zip), compiled together into one jar.
SOURCES: Traversable = files(__name__)
#: Session function name of ``StringFormParse`` and its class.
STRING_FORM_FUNCTION = "kafka_audit_request_string_form"
STRING_FORM_CLASS = "kafkaaudit.requestlog.StringFormParse"
#: Its result: ``StringFormParse.FIELDS`` (silver column names; ``found_error_codes`` is every
#: ``error_code`` of the response, the ``_found`` of the expression parse).
_S, _I, _L, _D = StringType(), IntegerType(), LongType(), DoubleType()
STRING_FORM_SCHEMA = StructType(
    [
        StructField(name, kind, True)
        for name, kind in [
            ("api_key_name", _S), ("api_version", _I), ("client_id", _S),
            ("correlation_id", _I), ("request_text", _S), ("response_text", _S),
            ("connection_id", _S), ("total_time_ms", _D), ("request_queue_time_ms", _D),
            ("local_time_ms", _D), ("remote_time_ms", _D), ("throttle_time_ms", _L),
            ("response_queue_time_ms", _D), ("send_time_ms", _D), ("security_protocol", _S),
            ("principal", _S), ("listener", _S), ("client_software_name", _S),
            ("client_software_version", _S), ("temporary_memory_bytes", _L),
            ("message_conversions_time_ms", _D), ("error_code", _I),
            ("found_error_codes", ArrayType(_I, True)),
        ]
    ]
)  # fmt: skip

#: Session function name of ``JsonFormParse`` and its class.
JSON_FORM_FUNCTION = "kafka_audit_request_json_form"
JSON_FORM_CLASS = "kafkaaudit.requestlog.JsonFormParse"
#: Its result: ``JsonFormParse.FIELDS`` (silver column names, request_json / response_json
#: with "" as null; ``found_error_codes`` as in ``STRING_FORM_SCHEMA``).
_B = BooleanType()
JSON_FORM_SCHEMA = StructType(
    [
        StructField(name, kind, True)
        for name, kind in [
            ("is_forwarded", _B), ("api_key", _I), ("api_version", _I), ("correlation_id", _I),
            ("client_id", _S), ("api_key_name", _S), ("api_version_deprecated", _B),
            ("request_json", _S), ("response_json", _S), ("connection_id", _S),
            ("total_time_ms", _D), ("request_queue_time_ms", _D), ("local_time_ms", _D),
            ("remote_time_ms", _D), ("throttle_time_ms", _L), ("response_queue_time_ms", _D),
            ("send_time_ms", _D), ("security_protocol", _S), ("principal", _S),
            ("listener", _S), ("client_software_name", _S), ("client_software_version", _S),
            ("temporary_memory_bytes", _L), ("message_conversions_time_ms", _D),
            ("error_code", _I), ("found_error_codes", ArrayType(_I, True)),
        ]
    ]
)  # fmt: skip
#: (function name, class, result type) of every function, as ``jobs.jvm_parsers`` registers.
FUNCTIONS = (
    (STRING_FORM_FUNCTION, STRING_FORM_CLASS, STRING_FORM_SCHEMA),
    (JSON_FORM_FUNCTION, JSON_FORM_CLASS, JSON_FORM_SCHEMA),
)
