"""What a JVM-native request-log parse would save: a spike measured against the pipeline's.

    .venv/bin/python bench/native_parse.py LAKE [--passes 3]

``LAKE`` is a lake a run wrote (its ``raw_lines``: e.g. ``/tmp/bench-e2e/lake-1000000`` after
``bench/end_to_end.py``). The request records of each form are parsed twice over, in turn, in
one session under the parsers' settings (``jobs.pipeline.PARSE_CONF``), each to Spark's
``noop`` writer:

* **expressions**: the pipeline's own parse (``transforms.silver.request_log``), the table's
  and the quarantine's columns;
* **native**: one Java UDF call per record (``bench/native_parse/*.java``, compiled here with
  the JDK's ``javac`` against PySpark's jars), then the columns the pipeline derives from the
  same fields (the connection's parts, the principal's type and name, the error names).

Figures are the JVM's CPU seconds and wall seconds of each pass; the first pass of each is in
a colder JVM. Then the columns both fill are compared on every record (``exceptAll`` both ways,
column by column): the spike has none of the quarantine checks, so only well-formed records
count, and a difference is printed, not hidden. Needs ``javac`` (a JDK, not a JRE).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pyspark
from profile_stages import jvm_cpu_s  # bench/ is the script's folder: first on sys.path
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from jobs.lake.tables import Lake, choose_engine
from jobs.pipeline import PARSE_CONF
from jobs.session import build_session
from schemas.raw_lines import RAW_LINES
from transforms.kafka_apis import api_key_of
from transforms.kafka_errors import error_code_name, error_code_names
from transforms.quarantine import table_and_quarantine_columns
from transforms.silver.authz import principal_name, principal_type
from transforms.silver.registry import PARSERS, parsed
from transforms.silver.request_log.parse import (
    PREFIX,
    connection_groups,
    connection_parts,
    item_error_codes,
)

SOURCES = Path(__file__).resolve().parent / "native_parse"
S, N, L, D, B = StringType(), IntegerType(), LongType(), DoubleType(), BooleanType()
_TIMINGS: list[tuple[str, DataType]] = [
    ("total_time_ms", D), ("request_queue_time_ms", D), ("local_time_ms", D),
    ("remote_time_ms", D), ("throttle_time_ms", L), ("response_queue_time_ms", D),
    ("send_time_ms", D),
]  # fmt: skip
_TAIL: list[tuple[str, DataType]] = [
    ("client_software_name", S), ("client_software_version", S),
    ("temporary_memory_bytes", L), ("message_conversions_time_ms", D),
    ("error_code", N), ("_found", ArrayType(N)), ("_ok", B),
]  # fmt: skip
#: The structs the two UDFs return, field by field in the Java code's order.
JSON_FIELDS: list[tuple[str, DataType]] = [
    ("is_forwarded", B), ("api_key", N), ("api_version", N), ("correlation_id", N),
    ("client_id", S), ("api_key_name", S), ("api_version_deprecated", B), ("request_json", S),
    ("response_json", S), ("connection_id", S), *_TIMINGS, ("security_protocol", S),
    ("principal", S), ("listener", S), *_TAIL,
]  # fmt: skip
STRING_FIELDS: list[tuple[str, DataType]] = [
    ("api_key_name", S), ("api_version", N), ("client_id", S), ("correlation_id", N),
    ("request_text", S), ("response_text", S), ("connection_id", S), *_TIMINGS,
    ("security_protocol", S), ("principal", S), ("listener", S), *_TAIL,
]  # fmt: skip
#: Per form: (body prefix, UDF class, struct fields, columns compared with the pipeline's).
FORMS = {
    "json": ("{", "JsonRequestParse", JSON_FIELDS, ["request_json", "response_json"]),
    "string": (
        "RequestHeader(",
        "StringRequestParse",
        STRING_FIELDS,
        ["request_text", "response_text"],
    ),
}
COMPARED = [
    "api_key", "api_key_name", "api_version", "client_id", "correlation_id", "connection_id",
    "total_time_ms", "throttle_time_ms", "send_time_ms", "principal", "principal_name",
    "listener", "client_software_name", "client_software_version", "temporary_memory_bytes",
    "error_code", "item_error_codes", "local_ip", "remote_port",
]  # fmt: skip


def compile_jar(work: Path) -> Path:
    """``bench/native_parse/*.java`` compiled against PySpark's jars into ``work/native.jar``.

    Raises:
        SystemExit: no ``javac`` on the PATH.
    """
    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None:
        raise SystemExit("javac and jar are needed (a JDK): none on the PATH")
    classpath = str(Path(pyspark.__file__).parent / "jars" / "*")
    classes = work / "classes"
    sources = [str(p) for p in sorted(SOURCES.glob("*.java"))]
    subprocess.run([javac, "-cp", classpath, "-d", str(classes), *sources], check=True)
    out = work / "native.jar"
    subprocess.run([jar, "cf", str(out), "-C", str(classes), "."], check=True)
    return out


def native(records: DataFrame, udf: str, fields: list[tuple[str, DataType]]) -> DataFrame:
    """``records`` with the UDF's fields and the columns the pipeline derives from them."""
    c = F.col
    body = F.substring(c("message"), len(PREFIX) + 1, 1 << 30)
    out = records.withColumn("_n", F.call_udf(udf, body))
    out = out.select(*records.columns, *[c("_n")[name].alias(name) for name, _ in fields])
    if "api_key" not in dict(fields):
        out = out.withColumn("api_key", api_key_of(c("api_key_name")))
    out = out.withColumn("_conn", connection_groups(c("connection_id")))
    derived: dict[str, Column] = {
        "principal_type": principal_type(c("principal")),
        "principal_name": principal_name(c("principal")),
        **connection_parts(c("_conn")),
        "error_code_name": error_code_name(c("error_code")),
        "item_error_codes": item_error_codes(c("_found"), c("error_code")),
    }
    out = out.withColumns(derived)
    out = out.withColumn("item_error_code_names", error_code_names(c("item_error_codes")))
    return out.drop("_conn", "_found")


def timed(df: DataFrame) -> tuple[float, float]:
    """JVM CPU and wall seconds to run ``df`` to the ``noop`` writer."""
    cpu, started = jvm_cpu_s(df.sparkSession), time.monotonic()
    df.write.format("noop").mode("overwrite").save()
    return jvm_cpu_s(df.sparkSession) - cpu, time.monotonic() - started


def differences(left: DataFrame, right: DataFrame, columns: list[str]) -> dict[str, int]:
    """Rows of each column (and of all together) in one frame and not the other, both ways."""
    counts = {}
    for name, cols in [("all compared", columns), *[(col, [col]) for col in columns]]:
        a, b = left.select(*cols), right.select(*cols)
        counts[name] = a.exceptAll(b).count() + b.exceptAll(a).count()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lake", type=Path)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="native-parse-"))
    try:
        jar = compile_jar(work)
        spark: SparkSession = build_session(
            "bench-native-parse", "local[2]", {**PARSE_CONF, "spark.jars": str(jar)}
        )
        for _, udf, fields, _ in FORMS.values():
            schema = StructType([StructField(name, kind) for name, kind in fields])
            spark.udf.registerJavaFunction(udf, udf, schema)
        lake = Lake(spark, str(args.lake), choose_engine(spark))
        bronze = lake.read("raw_lines", RAW_LINES)
        request = next(p for p in PARSERS if p.table == "request_events")
        for form, (start, udf, fields, text) in FORMS.items():
            records = bronze.where(F.col("message").startswith(PREFIX + start))
            expressions = table_and_quarantine_columns(parsed(records, request), request.schema)
            ours = native(records, udf, fields)
            figures: dict[str, list[tuple[float, float]]] = {"expressions": [], "native": []}
            for _ in range(args.passes):
                for name, df in [("native", ours), ("expressions", expressions)]:
                    figures[name].append(timed(df))
                    cpu, wall = figures[name][-1]
                    print(f"{form:6s} {name:11s} JVM CPU {cpu:6.1f} s, wall {wall:6.1f} s")
            warm = {k: v[1:] or v for k, v in figures.items()}
            medians = {k: statistics.median(cpu for cpu, _ in v) for k, v in warm.items()}
            print(
                f"{form}: {records.count():,} records; warm passes' median JVM CPU "
                f"native {medians['native']:.1f} s, expressions {medians['expressions']:.1f} s "
                f"({medians['native'] / medians['expressions']:.2f}); first passes "
                f"{figures['native'][0][0]:.1f} s against {figures['expressions'][0][0]:.1f} s"
            )
            print(f"{form}: differences {differences(ours, expressions, COMPARED + text)}")
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
