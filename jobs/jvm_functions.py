"""Column functions without PySpark's reflection on every call (issue 15).

Classic PySpark 4.2 resolves Spark's ``functions`` class and then the function by name through
py4j's reflection commands on each call of a column function (``F.col``, ``F.when``, ``F.lit``,
every ``F.*``; ``_get_jvm_function``, ``_create_column_from_name``,
``_create_column_from_literal``), and ``PythonUtils`` through the JVM view's imports, failing
class lookups over every jar of the classpath first, for each list of columns it converts
(``_to_seq``). Those are two to three round trips, whose answers never change, before the call
itself. A run on a few thousand lines plans some 25,000 of them: measured on 2026-11-27 (2
cores, a warm session, the suite's settings, a 3,000-line two-day corpus, 3 pairs in turn),
25-30 s per run without this module, 20-25 s with it (median ratio 0.82).

``install`` replaces those four PySpark functions by equivalents that resolve each Spark
function once per JVM gateway and then call it directly: same arguments, same JVM call, same
``Column``; a list reaches the JVM through ``java.util.List.of``, ten elements a call, rather
than py4j's ``ArrayList`` filled one ``add`` at a time (the same Scala ``Seq``). It also
replaces ``Column.cast`` for a Spark type object (``cast(LongType())``), which PySpark sends to
the JVM as JSON to be parsed on every cast, three round trips before the cast itself (a cast to
a type name is one): the JVM's type is parsed once per type and kept (a ``samples/`` run makes
some 2,250 such casts, each about 0.5 ms dearer than a cast to a type name; issue 15,
forty-fifth part). It only does so on the PySpark release it was written against
(``PYSPARK_VERSION``); on any other it changes nothing and says so in the log. The column
functions, which look their resolvers up at each call, all take the replacements, as do the
PySpark modules that import ``_to_seq`` inside their functions (windows, grouped data);
``DataFrame``'s module imported it by name when it was loaded, so its name there is replaced
too (``select``, ``withColumns``, ``groupBy``...).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import pyspark
import pyspark.sql.classic.column as classic_column
import pyspark.sql.classic.dataframe as classic_dataframe
from py4j.java_collections import JavaArray
from pyspark import SparkContext
from pyspark.sql import Column
from pyspark.sql.functions import builtin
from pyspark.sql.types import DataType
from pyspark.sql.utils import enum_to_value, get_active_spark_context

log = logging.getLogger(__name__)

PYSPARK_VERSION = "4.2.0"
"""The PySpark release whose private functions ``install`` replaces (pinned in
``pyproject.toml``)."""

FUNCTIONS_CLASS = "org.apache.spark.sql.functions"
PYTHON_UTILS_CLASS = "org.apache.spark.api.python.PythonUtils"
DATA_TYPE_CLASS = "org.apache.spark.sql.types.DataType"
JAVA_LIST_CLASS = "java.util.List"
LIST_OF_MAX = 10
"""The most elements ``java.util.List.of`` takes as separate arguments (Java 9 and later)."""


class _Resolved:
    """JVM static methods resolved once per py4j gateway client: (class, name) -> py4j
    ``JavaMember``; and the JVM's objects of Spark types, by their JSON (``DataType.json``).
    A new gateway (a new JVM in this process) empties the cache."""

    def __init__(self) -> None:
        self._client: object | None = None
        self._members: dict[tuple[str, str], Any] = {}

    def data_type(self, sc: SparkContext, data_type: DataType) -> Any:
        """The JVM's ``DataType`` for ``data_type`` (``DataType.fromJson`` of its JSON)."""
        key = (DATA_TYPE_CLASS, data_type.json())
        fromjson = self.member(sc, DATA_TYPE_CLASS, "fromJson")  # empties a stale cache
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = fromjson(key[1])
        return found

    def member(self, sc: SparkContext, fqn: str, name: str) -> Any:
        jvm = sc._jvm
        assert jvm is not None
        client = jvm._gateway_client
        if client is not self._client:
            self._client, self._members = client, {}
        key = (fqn, name)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = getattr(getattr(jvm, fqn), name)
        return found


_RESOLVED = _Resolved()
_ORIGINALS: dict[str, Callable[..., Any]] = {}


def _get_jvm_function(name: str, sc: SparkContext) -> Callable[..., Any]:
    """``pyspark.sql.functions.builtin._get_jvm_function``, resolved once."""
    return _RESOLVED.member(sc, FUNCTIONS_CLASS, name)  # type: ignore[no-any-return]


def _create_column_from_name(name: str) -> Any:
    """``pyspark.sql.classic.column._create_column_from_name``: ``functions.col(name)``."""
    return _RESOLVED.member(get_active_spark_context(), FUNCTIONS_CLASS, "col")(name)


def _create_column_from_literal(literal: Any) -> Any:
    """``pyspark.sql.classic.column._create_column_from_literal``: ``functions.lit(value)``."""
    lit = _RESOLVED.member(get_active_spark_context(), FUNCTIONS_CLASS, "lit")
    return lit(enum_to_value(literal))


def _to_seq(
    sc: SparkContext, cols: Iterable[Any], converter: Callable[[Any], Any] | None = None
) -> Any:
    """``pyspark.sql.classic.column._to_seq``: ``PythonUtils.toSeq`` of the (converted)
    columns, as a Scala ``Seq`` in the same order.

    PySpark hands py4j a Python list, which py4j copies into a new ``java.util.ArrayList``
    one ``add`` at a time: a constructor and a round trip per element before ``toSeq``. Here
    each run of up to ``LIST_OF_MAX`` elements travels in one call of ``java.util.List.of``,
    and the runs' ``Seq``s are joined (``appendedAll``): 2 round trips for up to 10 elements
    (a ``samples/`` run converts some 2,000 lists of 5 on average). ``List.of`` refuses a null
    element, and takes a lone JVM array as its elements: a list holding ``None`` or a JVM array
    takes PySpark's way."""
    items = [converter(c) for c in cols] if converter else list(cols)
    to_seq = _RESOLVED.member(sc, PYTHON_UTILS_CLASS, "toSeq")
    if any(item is None or isinstance(item, JavaArray) for item in items):
        return to_seq(items)
    list_of = _RESOLVED.member(sc, JAVA_LIST_CLASS, "of")
    seq = to_seq(list_of(*items[:LIST_OF_MAX]))
    for start in range(LIST_OF_MAX, len(items), LIST_OF_MAX):
        seq = seq.appendedAll(to_seq(list_of(*items[start : start + LIST_OF_MAX])))
    return seq


def _cast(self: classic_column.Column, dataType: DataType | str) -> Column:  # noqa: N803
    """``pyspark.sql.classic.column.Column.cast``: a Spark type object parsed by the JVM once
    per type (``_Resolved.data_type``) instead of once per cast; a type name as PySpark does."""
    if not isinstance(dataType, DataType):
        return _ORIGINALS[_CAST_KEY](self, dataType)  # type: ignore[no-any-return]
    jdt = _RESOLVED.data_type(get_active_spark_context(), dataType)
    return classic_column.Column(self._jc.cast(jdt))


_REPLACEMENTS: tuple[tuple[Any, str, Callable[..., Any]], ...] = (
    (builtin, "_get_jvm_function", _get_jvm_function),
    (classic_column, "_create_column_from_name", _create_column_from_name),
    (classic_column, "_create_column_from_literal", _create_column_from_literal),
    (classic_column, "_to_seq", _to_seq),
    (classic_dataframe, "_to_seq", _to_seq),
    (classic_column.Column, "cast", _cast),
)
_CAST_KEY = f"{classic_column.Column.__name__}.cast"


def install() -> bool:
    """Replace PySpark's per-call resolution of column functions by resolved-once calls, for
    this Python process (idempotent).

    Returns:
        True when the replacements are in place; False, changing nothing, on a PySpark other
        than ``PYSPARK_VERSION`` or one that lacks any of the functions replaced.
    """
    if _ORIGINALS:
        return True
    missing = [name for module, name, _ in _REPLACEMENTS if not hasattr(module, name)]
    if pyspark.__version__ != PYSPARK_VERSION or missing:
        log.info(
            "PySpark %s: column functions resolved by PySpark on each call (this project's "
            "shortcut is written for %s)", pyspark.__version__, PYSPARK_VERSION,
        )  # fmt: skip
        return False
    for module, name, replacement in _REPLACEMENTS:
        _ORIGINALS[f"{module.__name__}.{name}"] = getattr(module, name)
        setattr(module, name, replacement)
    return True


def uninstall() -> None:
    """Put PySpark's own functions back (tests compare both)."""
    for module, name, _ in _REPLACEMENTS:
        original = _ORIGINALS.pop(f"{module.__name__}.{name}", None)
        if original is not None:
            setattr(module, name, original)
