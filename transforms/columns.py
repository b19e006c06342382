"""Small column helpers shared by the silver parsers: regex groups and typed null columns."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType


def group(text: Column, regex: str, index: int) -> Column:
    """Group ``index`` of ``regex`` in ``text``; null when ``text`` is null, does not match, or
    the group is empty."""
    return F.nullif(F.regexp_extract(text, regex, index), F.lit(""))


def typed_nulls(schema: StructType, names: Iterable[str]) -> dict[str, Column]:
    """A null column of the type ``schema`` gives each of ``names``, by name.

    Lets a parser fill the columns its source format never carries (for example the Confluent
    audit-log columns on log4j rows) so that every parser's output has the table's columns.

    Raises:
        KeyError: a name that ``schema`` does not have.
    """
    return {name: F.lit(None).cast(schema[name].dataType) for name in names}


def lookup(mapping: dict[str, str], key: Column) -> Column:
    """``mapping[key]`` as a string Column; null for a null key or one not in ``mapping``."""
    return F.create_map(*[F.lit(x) for pair in mapping.items() for x in pair])[key]
