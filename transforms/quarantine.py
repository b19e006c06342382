"""Reason codes for unparseable records, and the split of parsed rows into table and quarantine.

A silver parser keeps every bronze row and adds ``reason_code`` (null = parsed) and
``reason_detail``. ``parsed_rows`` and ``quarantine_rows`` then split that output so that every row
lands in exactly one of the two (dqx ``apply_checks_and_split``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TypeAlias

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.quarantine import QUARANTINE, RAW_MAX_CHARS

#: A check: (condition that means failure, reason_code, reason_detail text or column).
Check: TypeAlias = tuple[Column, str, str | Column]

#: The type of ``first_failure``'s result.
FAILURE_TYPE = "struct<reason_code: string, reason_detail: string>"

# Stand-ins that only give a required column a non-null type: a null reaches raise_error first.
_NON_NULL_STAND_INS: dict[type[DataType], object] = {
    StringType: "",
    IntegerType: 0,
    LongType: 0,
    BooleanType: False,
    DateType: dt.date(1970, 1, 1),
    TimestampType: dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
}


def first_failure(checks: Sequence[Check], passes: Column | None = None) -> Column:
    """The first failing check of an ordered list, as a struct.

    Args:
        checks: (condition, reason_code, reason_detail) in priority order. A null condition
            counts as passing.
        passes: optional cheap condition that is true only for rows on which no check can
            fail (a parser's well-formed common case): those rows skip the checks. It must
            never be true where a check fails; null counts as false.

    Returns:
        ``struct<reason_code: string, reason_detail: string>``; null when no check fails.
    """
    if passes is not None:
        passed = F.lit(None).cast(FAILURE_TYPE)
        return F.when(F.coalesce(passes, F.lit(False)), passed).otherwise(first_failure(checks))
    result: Column | None = None
    for condition, code, detail in checks:
        detail_col = detail if isinstance(detail, Column) else F.lit(detail)
        value = F.struct(
            F.lit(code).alias("reason_code"), detail_col.cast("string").alias("reason_detail")
        )
        hit = F.coalesce(condition, F.lit(False))
        result = F.when(hit, value) if result is None else result.when(hit, value)
    if result is None:
        return F.lit(None).cast(FAILURE_TYPE)
    return result


def conformed(column: Column, field: StructField) -> Column:
    """``column`` cast to ``field``'s type, with ``field``'s nullability, named ``field.name``.

    A required field fails the query (``raise_error``) if the value is null: that is a parser
    bug, since parsers must quarantine such rows. An optional field is marked nullable.

    Raises:
        TypeError: a required field of a type without a non-null stand-in.
    """
    typed = column.cast(field.dataType)
    if field.nullable:
        return (
            F.when(typed.isNull(), F.lit(None).cast(field.dataType))
            .otherwise(typed)
            .alias(field.name)
        )
    stand_in = _NON_NULL_STAND_INS.get(type(field.dataType))
    if stand_in is None:
        msg = f"no non-null stand-in for required field {field.name} of type {field.dataType}"
        raise TypeError(msg)
    checked = F.when(
        typed.isNull(), F.raise_error(F.lit(f"parser bug: required column {field.name} is null"))
    ).otherwise(typed)
    return F.coalesce(checked, F.lit(stand_in).cast(field.dataType)).alias(field.name)


def conformed_rows(df: DataFrame, schema: StructType) -> DataFrame:
    """``df``'s columns named by ``schema``, each ``conformed`` to its field, in ``schema``'s
    order. A column that conforms already (an optional field's type, nullable) is taken as it
    is: the same values, type and nullability, with less for Spark to analyse in every plan
    over the result. A required field is always checked (``conformed``).

    Input columns: every field of ``schema`` by name. Output columns: exactly ``schema``.

    Raises:
        TypeError: as ``conformed``.
    """
    given = {f.name: f for f in df.schema.fields}

    def column(field: StructField) -> Column:
        source = given.get(field.name)
        if source is not None and _conforms(source, field):
            return F.col(field.name)
        return conformed(F.col(field.name), field)

    return df.select(*[column(f) for f in schema.fields])


def _conforms(source: StructField, field: StructField) -> bool:
    """Whether a column of ``source``'s type and nullability needs nothing to be the optional
    ``field``: the same type (nested nullability included), both nullable, and no metadata
    on the column that ``conformed`` would have dropped."""
    same = source.dataType == field.dataType and not source.metadata
    return field.nullable and source.nullable and same


def parsed_rows(parsed: DataFrame, schema: StructType) -> DataFrame:
    """Rows a parser accepted (``reason_code`` null), shaped to the table contract ``schema``.

    Input columns:
        reason_code (string), and every field of ``schema`` by name.

    Output columns:
        Exactly ``schema``: its fields, order, types and nullability.

    Null behaviour: a null in a required field of an accepted row fails the query.
    """
    accepted = parsed.where(F.col("reason_code").isNull())
    return conformed_rows(accepted, schema)


#: Columns of a parser's output that ``quarantine_rows`` reads, besides the reasons and raw.
_QUARANTINE_INPUTS = ("run_id", "source_path", "line_number", "node_id", "log_ts", "family",
                      "log_date")  # fmt: skip


def table_and_quarantine_columns(parsed: DataFrame, schema: StructType) -> DataFrame:
    """A parser's output narrowed to what ``parsed_rows(parsed, schema)`` and
    ``quarantine_rows`` read, the full text kept only where the quarantine needs it.

    A parser's output carries every bronze column; persisted whole, it holds the full text of
    every record a second time although only rejected records go to the quarantine with it.

    Input columns:
        reason_code, reason_detail (string), raw (string), every field of ``schema`` and the
        quarantine's (run_id, source_path, line_number, node_id, log_ts, family, log_date).

    Output columns:
        the fields of ``schema``, the quarantine's, reason_code, reason_detail and raw (null on
        accepted rows unless ``schema`` itself holds raw).
    """
    names = dict.fromkeys([*schema.fieldNames(), *_QUARANTINE_INPUTS, "reason_code",
                           "reason_detail"])  # fmt: skip
    raw = F.col("raw")
    if "raw" not in names:
        raw = F.when(F.col("reason_code").isNotNull(), raw).alias("raw")
        return parsed.select(*names, raw)
    return parsed.select(*names)


def table_and_quarantine_schema(schema: StructType) -> StructType:
    """The columns ``table_and_quarantine_columns(parsed, schema)`` returns, all nullable: the
    fields of ``schema``, the quarantine's inputs (types of ``schemas.quarantine.QUARANTINE``),
    reason_code, reason_detail and raw (strings), in that order. For a parser that had no
    record to parse, an empty frame of this schema stands for its output."""
    fields = {f.name: f.dataType for f in schema.fields}
    for name in (*_QUARANTINE_INPUTS, "reason_code", "reason_detail", "raw"):
        fields.setdefault(name, QUARANTINE[name].dataType)
    return StructType([StructField(name, kind, True) for name, kind in fields.items()])


def quarantine_rows(parsed: DataFrame) -> DataFrame:
    """Rows a parser rejected (``reason_code`` set), shaped to ``schemas.quarantine.QUARANTINE``.

    Input columns:
        run_id (string), source_path (string), line_number (long), node_id (string),
        log_ts (timestamp), family (string), reason_code (string), reason_detail (string),
        raw (string), log_date (date).

    Output columns:
        QUARANTINE: the above with ``raw`` cut to RAW_MAX_CHARS characters and raw_truncated
        (boolean) true when it was cut.

    Null behaviour: a null raw stays null (and fails the contract, raw is required).
    """
    raw = F.col("raw")
    rejected = parsed.where(F.col("reason_code").isNotNull()).select(
        "run_id",
        "source_path",
        "line_number",
        "node_id",
        "log_ts",
        "family",
        "reason_code",
        "reason_detail",
        F.substring(raw, 1, RAW_MAX_CHARS).alias("raw"),
        F.coalesce(F.length(raw) > RAW_MAX_CHARS, F.lit(False)).alias("raw_truncated"),
        "log_date",
    )
    return conformed_rows(rejected, QUARANTINE)
