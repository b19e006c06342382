"""What the project's JVM functions share (issue 15), in the root because two rooms need it.

``KeyedFingerprint.java``: the keyed fingerprint of a text (``transforms.fingerprints``'s
``keyed_fingerprint`` in the JVM), which bronze's fingerprint of a secret writes and KIP-48's
HMAC check recomputes. It is compiled into the jar of the project's JVM functions with the
rooms' own sources (``jobs.jvm_parsers``).

``keyed_jvm_function``: the JVM functions that take a secret (bronze's fingerprint key,
KIP-48's token secret) cannot take it as a query literal, which ``explain()``, the Spark UI and
event logs would show. Such a class has a static ``of(Column value, byte[]... keys)`` that
builds a Spark UDF around an object holding the keys (Spark ships it with each task, as it
ships a Python UDF's closure) and returns its column; ``keyed_jvm_function`` finds that method
through the session's jar class loader and gives it as a Python column function.

``registered_function``: a function ``jobs.jvm_parsers`` registered by name, when the active
session has it; the callers fall back to their Spark expressions otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from importlib.resources import files
from importlib.resources.abc import Traversable

from py4j.protocol import Py4JError
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

#: The folder of the Java source (a package resource), compiled into the functions' jar.
SOURCES: Traversable = files(__name__)
#: The static method every keyed class has: ``of(Column, byte[], ...)``.
METHOD = "of"


def keyed_jvm_function(
    spark: SparkSession, class_name: str, keys: Sequence[bytes]
) -> Callable[[Column], Column] | None:
    """``class_name.of(value, *keys)`` as a column function (``value``: any Column, a
    higher-order function's lambda variable included); None when ``spark`` has not added the
    jar that holds ``class_name`` (no JDK, a failed build, the setting off).

    Raises nothing for a missing class; a JVM error while building a column (for instance an
    empty key, which the classes refuse) propagates as py4j's error. The keys cross py4j once
    per column built, as byte arrays, and are held by the JVM object only.
    """
    jvm = spark._jvm  # py4j, as PySpark's own column functions use it
    gateway = spark.sparkContext._gateway
    if jvm is None or gateway is None:
        return None
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    try:
        found = jvm.java.lang.Class.forName(class_name, True, loader)
    except Py4JError:  # ClassNotFoundException: the jar is not in this session
        return None
    types = gateway.new_array(jvm.java.lang.Class, 1 + len(keys))
    types[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.Column")
    for index in range(len(keys)):
        types[1 + index] = jvm.java.lang.Class.forName("[B")
    method = found.getMethod(METHOD, types)

    def function(value: Column) -> Column:
        arguments = gateway.new_array(jvm.java.lang.Object, 1 + len(keys))
        arguments[0] = value._jc
        for index, key in enumerate(keys):
            arguments[1 + index] = bytearray(key)
        return Column(method.invoke(None, arguments))

    return function


def registered_function(name: str) -> Callable[[Column], Column] | None:
    """The JVM function registered by name as ``name`` (``jobs.jvm_parsers``), as a column
    function of one column, when the active session has it; None without an active session
    or without the function (no JDK, a failed build, ``KAFKA_AUDIT_NATIVE_PARSE=off``): the
    caller then uses its Spark expressions, which give the same values."""
    session = SparkSession.getActiveSession()
    if session is None or not session.catalog.functionExists(name):
        return None
    return partial(F.call_function, name)
