"""Bronze's JVM functions (issue 15): the keyed fingerprint of a secret value without Python,
and the secret-key pre-test without ``lower()``.

``Fingerprint.java`` and ``SecretKeyMention.java`` are compiled into the jar of the project's
JVM functions with the request-log parse's (``jobs.jvm_parsers``), which adds it to a session.
``fingerprint_function`` gives the fingerprint when the session has that jar, otherwise None,
and ``transforms.bronze.redaction`` fingerprints with its pandas UDF; the pre-test is
registered by name (``SECRET_KEY_MENTION_FUNCTION``) and used when the session has it. The
values are the same either way (``tests/spark/test_bronze.py`` checks both).

The fingerprint's key cannot be a query literal (``explain()``, the Spark UI and event logs
would show it), so that function is not registered by name: an object holding the key is made
through the jar's class loader and wrapped into the column, as PySpark wraps a Python UDF's
closure.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable

from py4j.protocol import Py4JError
from pyspark.sql import Column, SparkSession
from pyspark.sql.types import BooleanType

#: The folder of the Java source (a package resource), compiled into the functions' jar.
SOURCES: Traversable = files(__name__)
#: The class and its static ``of(Column value, byte[] key)`` method.
FINGERPRINT_CLASS = "kafkaaudit.bronze.Fingerprint"
_METHOD = "of"
#: Session function name of ``SecretKeyMention`` (boolean: the text names a secret key in any
#: ASCII case; null for null) and its class.
SECRET_KEY_MENTION_FUNCTION = "kafka_audit_mentions_secret_key"
SECRET_KEY_MENTION_CLASS = "kafkaaudit.bronze.SecretKeyMention"
#: (function name, class, result type) of the functions ``jobs.jvm_parsers`` registers by name.
FUNCTIONS = ((SECRET_KEY_MENTION_FUNCTION, SECRET_KEY_MENTION_CLASS, BooleanType()),)


def fingerprint_function(spark: SparkSession, key: bytes) -> Callable[[Column], Column] | None:
    """``Fingerprint.of(value, key)`` as a column function: the fingerprint of a secret value
    as logged (string Column: 32 lowercase hex characters, the HMAC-SHA256 of the value without
    its JSON quotes, keyed with ``key``; null for null). None when ``spark`` has not added the
    functions' jar (``jobs.jvm_parsers.install``: no JDK, a failed build, the setting off).

    The function takes any string Column, a higher-order function's lambda variable included.
    Raises nothing for a missing class; a JVM error while building a column (an empty key)
    propagates.
    """
    jvm = spark._jvm  # py4j, as PySpark's own column functions use it
    gateway = spark.sparkContext._gateway
    if jvm is None or gateway is None:
        return None
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    try:
        found = jvm.java.lang.Class.forName(FINGERPRINT_CLASS, True, loader)
    except Py4JError:  # ClassNotFoundException: the jar is not in this session
        return None
    types = gateway.new_array(jvm.java.lang.Class, 2)
    types[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.Column")
    types[1] = jvm.java.lang.Class.forName("[B")
    method = found.getMethod(_METHOD, types)

    def fingerprint(value: Column) -> Column:
        arguments = gateway.new_array(jvm.java.lang.Object, 2)
        arguments[0] = value._jc
        arguments[1] = bytearray(key)
        return Column(method.invoke(None, arguments))

    return fingerprint
