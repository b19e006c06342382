"""Bronze's JVM functions (issue 15): the keyed fingerprints of secret values without Python,
the secret-key pre-test without ``lower()``, the node id a record prints in one scan, and the
header fields of Kafka's own layouts without the regex.

``Fingerprints.java``, ``SecretKeyMention.java``, ``NodeIdInMessage.java`` and
``HeaderFields.java`` are compiled into the jar of the project's JVM functions with the
request-log parse's (``jobs.jvm_parsers``), which adds it to a session. ``fingerprint_function``
gives the fingerprints when the session has that jar, otherwise None, and
``transforms.bronze.redaction`` fingerprints with its pandas UDF; the others are registered by
name (``SECRET_KEY_MENTION_FUNCTION``, ``NODE_ID_FUNCTION``, ``HEADER_FIELDS_FUNCTION``) and
used when the session has them, Spark expressions otherwise. The values are the same either way
(``tests/spark/test_bronze.py`` and ``tests/spark/test_layout.py`` check both).

The fingerprint's key cannot be a query literal (``explain()``, the Spark UI and event logs
would show it), so that function is not registered by name: an object holding the key is made
through the jar's class loader and wrapped into the column
(``transforms.native.keyed_jvm_function``), as PySpark wraps a Python UDF's closure.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable

from pyspark.sql import Column, SparkSession
from pyspark.sql.types import ArrayType, BooleanType, StringType

from transforms.native import keyed_jvm_function

#: The folder of the Java source (a package resource), compiled into the functions' jar.
SOURCES: Traversable = files(__name__)
#: The class; its static ``of(Column values, byte[] key)`` makes the column.
FINGERPRINT_CLASS = "kafkaaudit.bronze.Fingerprints"
#: Session function name of ``SecretKeyMention`` (boolean: the text names a secret key in any
#: ASCII case; null for null) and its class.
SECRET_KEY_MENTION_FUNCTION = "kafka_audit_mentions_secret_key"
SECRET_KEY_MENTION_CLASS = "kafkaaudit.bronze.SecretKeyMention"
#: Session function name of ``NodeIdInMessage`` (string: the node id a record's message prints
#: in its own prefix, ``transforms.bronze.records.node_id_in_message``; null for none or null)
#: and its class.
NODE_ID_FUNCTION = "kafka_audit_node_id_in_message"
NODE_ID_CLASS = "kafkaaudit.bronze.NodeIdInMessage"
#: Session function name of ``HeaderFields`` (array<string>: ``HEADER_PATTERN``'s 8 groups of
#: a line in Kafka's or Strimzi's layout, ``transforms.bronze.layout.header_fields``; null
#: where the regex must decide) and its class.
HEADER_FIELDS_FUNCTION = "kafka_audit_header_fields"
HEADER_FIELDS_CLASS = "kafkaaudit.bronze.HeaderFields"
#: (function name, class, result type) of the functions ``jobs.jvm_parsers`` registers by name.
FUNCTIONS = (
    (SECRET_KEY_MENTION_FUNCTION, SECRET_KEY_MENTION_CLASS, BooleanType()),
    (NODE_ID_FUNCTION, NODE_ID_CLASS, StringType()),
    (HEADER_FIELDS_FUNCTION, HEADER_FIELDS_CLASS, ArrayType(StringType())),
)


def fingerprint_function(spark: SparkSession, key: bytes) -> Callable[[Column], Column] | None:
    """``Fingerprints.of(values, key)`` as a column function: the fingerprints of a record's
    secret values as logged (array<string> Column in, array<string> out: per element 32
    lowercase hex characters, the HMAC-SHA256 of the value without its JSON quotes, keyed with
    ``key``; null for a null array or element). None when ``spark`` has not added the
    functions' jar (``jobs.jvm_parsers.install``: no JDK, a failed build, the setting off).

    Raises nothing for a missing class; a JVM error while building a column (an empty key)
    propagates.
    """
    return keyed_jvm_function(spark, FINGERPRINT_CLASS, [key])
