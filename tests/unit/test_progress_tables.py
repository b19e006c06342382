"""The run's table counter beside the task bar, and the quiet log4j2 settings of a local JVM."""

from __future__ import annotations

from typing import Any, cast

from jobs.gold.registry import GOLD_TABLES
from jobs.pipeline import TABLES_PER_RUN
from jobs.progress import Progress
from jobs.session import QUIET_LOG4J2, quiet_java_options
from transforms.silver.registry import SILVER_TABLES


def test_table_counter_only_goes_up() -> None:
    progress = Progress(cast(Any, None), enabled=False, tables_total=TABLES_PER_RUN)
    seen = [progress.tables_text()]
    for table in ("raw_lines", "auth_events", "findings"):
        progress.table_written(table)
        seen.append(progress.tables_text())
    assert seen == [f"tables {n}/{TABLES_PER_RUN}" for n in range(4)]
    assert Progress(cast(Any, None), enabled=False).tables_text() == "tables 0"


def test_tables_per_run_counts_every_layer() -> None:
    # raw_lines + silver + quarantine + run_coverage + the builders' + security_metrics + findings
    assert TABLES_PER_RUN == 1 + len(SILVER_TABLES) + 2 + len(GOLD_TABLES) + 2 == 17


def test_quiet_log4j2_is_added_unless_verbose_or_configured() -> None:
    assert QUIET_LOG4J2.is_file()
    flag = f"-Dlog4j2.configurationFile={QUIET_LOG4J2.as_uri()}"
    assert quiet_java_options("-XX:+UseSerialGC", verbose=False) == f"-XX:+UseSerialGC {flag}"
    assert quiet_java_options("", verbose=False) == flag
    assert quiet_java_options("-XX:+UseSerialGC", verbose=True) == "-XX:+UseSerialGC"
    own = "-Dlog4j2.configurationFile=file:/etc/spark/log4j2.properties"
    assert quiet_java_options(own, verbose=False) == own
    text = QUIET_LOG4J2.read_text(encoding="utf-8")
    assert "rootLogger.level = warn" in text and "NativeCodeLoader" in text
