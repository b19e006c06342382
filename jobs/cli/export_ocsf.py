"""``kafka-audit export-ocsf``: authentication and authorization events of a lake as OCSF 1.8.0
events (``transforms.ocsf``), and its findings as OCSF Detection Findings
(``jobs.ocsf_findings``), for security lakes and SIEMs.

Writes one file per class into ``--out``: ``authentication.jsonl`` (class 3002) and
``api_activity.jsonl`` (class 6003), each written by Spark from one ordered partition (by
``time``, then source file, line and ``metadata.uid``), and ``detection_finding.jsonl`` (class
2004), written without Spark from the small findings table (by ``time``, then the finding id);
or ``.parquet``. The same lake and window give the same files. A window of at most
``jobs.ocsf_events.MAX_ROWS`` silver rows to map is exported without Spark altogether
(``jobs.ocsf_events``: the same files, in about a second instead of ten).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import uuid
from typing import Any

from jobs.cli.arguments import day_window, instant, lake_location, spark_master

log = logging.getLogger(__name__)

FORMATS = {"jsonl": "json", "parquet": "parquet"}


def register(commands: Any) -> None:
    """Add the ``export-ocsf`` subparser to ``commands`` (argparse's subparsers action)."""
    export = commands.add_parser(
        "export-ocsf",
        help="export authentication, API activity and findings as OCSF 1.8.0 events",
        description="Write the authentication events (OCSF class 3002), authorization "
        "decisions (API Activity, class 6003) and findings (Detection Finding, class 2004) of "
        "a lake as OCSF 1.8.0 events, one file per class (authentication.jsonl, "
        "api_activity.jsonl, detection_finding.jsonl, or .parquet), for security lakes and "
        "SIEMs. The same lake and window give the same files.",
    )
    export.add_argument(
        "--lake", required=True, type=lake_location, help="root folder of the Delta tables"
    )
    export.add_argument("--out", required=True, help="folder for the event files (local)")
    export.add_argument("--format", choices=tuple(FORMATS), default="jsonl", help="default: jsonl")
    export.add_argument("--start", type=instant, help="first UTC day (2026-11-20)")
    export.add_argument("--end", type=instant, help="day after the last, exclusive (2026-11-21)")
    export.add_argument(
        "--master",
        help="Spark master (default: local[*]; under spark-submit, spark-submit's own master)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``export-ocsf``; prints one line per file written. Returns the exit code (0).

    Raises:
        UsageError: a bad --start / --end pair, or --out is a file.
        InputError: missing lake or table.
    """
    from jobs.errors import UsageError  # noqa: PLC0415
    from jobs.report import Window, check_lake  # noqa: PLC0415
    from schemas import auth_events, authz_decisions, findings  # noqa: PLC0415

    days = day_window(args.start, args.end)
    window = Window(days[0].date(), days[1].date()) if days else Window()
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} is a file: give a folder")
    check_lake(args.lake, [auth_events.TABLE_NAME, authz_decisions.TABLE_NAME, findings.TABLE_NAME])
    from jobs import ocsf_events  # noqa: PLC0415

    if ocsf_events.without_spark(args.lake, window):
        log.info("at most %d silver rows in the window: mapped without Spark", ocsf_events.MAX_ROWS)
        from jobs.ocsf_findings import export_detection_findings  # noqa: PLC0415

        lines = ocsf_events.export_without_spark(args.lake, args.out, args.format, window)
        lines.append(export_detection_findings(args.lake, args.out, args.format, window))
    else:
        from jobs.session import build_session  # noqa: PLC0415

        spark = build_session("kafka-security-audit-export-ocsf", spark_master(args))
        lines = export(spark, args.lake, args.out, args.format, window)
    for line in lines:
        print(line, file=sys.stdout)
    return 0


def export(spark: Any, lake: str, out: str, fmt: str, window: Any) -> list[str]:
    """Writes the three OCSF files of ``lake``'s events and findings in ``window`` into ``out``.

    Args:
        spark: The session.
        lake: Lake root.
        out: Local folder (created); existing files of the same names are replaced.
        fmt: ``jsonl`` or ``parquet``.
        window: ``jobs.report.Window`` of UTC days (event_date partitions; findings:
            finding_date, the day last seen).

    Returns:
        One line per file: how many events of which class went where, and how many events
        (findings) were left out for want of a timestamp. The Detection Finding file is
        written last, without Spark (``jobs.ocsf_findings.export_detection_findings``).
    """
    from pyspark.sql import functions as F  # noqa: PLC0415

    from jobs.lake.tables import Lake, choose_engine  # noqa: PLC0415
    from jobs.ocsf_findings import export_detection_findings, export_line  # noqa: PLC0415
    from jobs.small_input import small_input_settings  # noqa: PLC0415
    from schemas import auth_events, authz_decisions  # noqa: PLC0415
    from schemas.ocsf import (  # noqa: PLC0415
        API_ACTIVITY_CLASS_UID,
        API_ACTIVITY_NAME,
        AUTHENTICATION_CLASS_UID,
        AUTHENTICATION_NAME,
    )
    from transforms.ocsf import (  # noqa: PLC0415
        AUTH_OUTCOMES,
        api_activity_events,
        authentication_events,
        in_order,
    )

    source = Lake(spark, lake, choose_engine(spark, "auto"))

    def read(table: str, schema: Any) -> Any:
        df = source.read(table, schema)
        if window.start is None:
            return df
        day = F.col("event_date")
        return df.where((day >= F.lit(window.start)) & (day < F.lit(window.end)))

    auth = read(auth_events.TABLE_NAME, auth_events.AUTH_EVENTS)
    authz = read(authz_decisions.TABLE_NAME, authz_decisions.AUTHZ_DECISIONS)
    untimed = {
        AUTHENTICATION_NAME: auth.where(F.col("event_type").isin(*AUTH_OUTCOMES)),
        API_ACTIVITY_NAME: authz.where(F.col("record_type") == authz_decisions.RECORD_DECISION),
    }
    plan = [
        (AUTHENTICATION_NAME, AUTHENTICATION_CLASS_UID, authentication_events(auth)),
        (API_ACTIVITY_NAME, API_ACTIVITY_CLASS_UID, api_activity_events(authz)),
    ]
    os.makedirs(out, exist_ok=True)
    lines = []
    size = source.size_bytes([auth_events.TABLE_NAME, authz_decisions.TABLE_NAME])
    with small_input_settings(spark, size):
        for name, class_uid, events in plan:
            target = os.path.join(out, f"{name}.{fmt}")
            written = _write_one_file(in_order(events), target, FORMATS[fmt])
            skipped = untimed[name].where(F.col("event_ts").isNull()).count()
            lines.append(export_line(written, class_uid, target, skipped))
    lines.append(export_detection_findings(lake, out, fmt, window))
    return lines


def _write_one_file(events: Any, target: str, spark_format: str) -> int:
    """Spark writes ``events`` (one partition) to a scratch folder beside ``target``; its one
    part file becomes ``target``. Returns the number of events."""
    scratch = f"{target}.tmp-{uuid.uuid4().hex}"
    try:
        events.write.format(spark_format).mode("overwrite").save(scratch)
        parts = sorted(p for p in os.listdir(scratch) if p.startswith("part-"))
        if len(parts) != 1:
            from jobs.errors import EngineError  # noqa: PLC0415

            raise EngineError(f"expected one part file in {scratch}, found {len(parts)}")
        os.replace(os.path.join(scratch, parts[0]), target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _count(target, spark_format)


def _count(path: str, spark_format: str) -> int:
    if spark_format == "parquet":
        import pyarrow.parquet as pq  # noqa: PLC0415

        return int(pq.ParquetFile(path).metadata.num_rows)
    with open(path, encoding="utf-8") as lines:
        return sum(1 for line in lines if line.strip())
