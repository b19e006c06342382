"""``kafka-audit run``: run the pipeline for a window and write the Delta tables."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jobs.config import SourceSpec, build_config, check_time_zone, load_config_file, parse_instant
from jobs.inputs import discover_sources

#: Exit code of a run whose line accounting does not balance.
EXIT_UNBALANCED = 3


def register(commands: Any) -> None:
    """Add the ``run`` subparser to ``commands`` (an argparse subparsers action)."""
    run = commands.add_parser("run", help="run the pipeline and write the Delta tables")
    run.add_argument(
        "--input",
        nargs="+",
        # Repeated --input options add up (the last one alone used to win, silently).
        action="extend",
        default=[],
        metavar="PATH",
        help="log files, folders (of node folders) or globs; may be repeated",
    )
    run.add_argument("--lake", help="root folder of the Delta tables")
    run.add_argument("--start", help="window start, UTC midnight (2026-11-20)")
    run.add_argument("--end", help="window end, exclusive, UTC midnight (2026-11-21)")
    run.add_argument("--conf", type=Path, help="TOML config file (see conf/default.toml)")
    run.add_argument(
        "--engine", choices=["auto", "native", "embedded"], help="Delta engine (default: auto)"
    )
    run.add_argument("--time-zone", help="zone of the log4j timestamps of --input files")
    run.add_argument(
        "--run-id", help="run id, recorded in every row and commit (default: a new one)"
    )
    run.add_argument("--master", help="Spark master when running outside spark-submit")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="live bar of Spark tasks per stage (default: when stderr is a terminal)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run the pipeline; print its summary (``--json``: as JSON).

    Returns 0, or ``EXIT_UNBALANCED`` when the line accounting does not balance. Under
    spark-submit (``args.under_spark_submit``) the master is spark-submit's unless ``--master``.

    Raises:
        ConfigError / InputError: a bad configuration or input, before Spark starts.
    """
    from jobs.pipeline import run  # noqa: PLC0415  (keeps --help and errors fast)
    from jobs.session import build_session  # noqa: PLC0415

    file_kwargs = load_config_file(args.conf) if args.conf else {}
    zone = args.time_zone or file_kwargs.get("default_time_zone", "UTC")
    check_time_zone(zone, "--time-zone")
    config = build_config(
        file_kwargs,
        sources=[SourceSpec(path=p, time_zone=zone) for p in args.input] or None,
        lake=args.lake,
        start=parse_instant(args.start, "--start") if args.start else None,
        end=parse_instant(args.end, "--end") if args.end else None,
        engine=args.engine,
        run_id=args.run_id,
        master=args.master,
    )
    config.window_dates()  # both or neither of --start / --end
    sources = discover_sources(config.sources)  # fail on bad inputs before starting Spark
    master = args.master if getattr(args, "under_spark_submit", False) else config.master
    spark = build_session("kafka-security-audit", master, config.spark_conf)
    java = f"Java {spark.sparkContext._jvm.System.getProperty('java.version')}"  # type: ignore[union-attr]
    summary = run(spark, config, java=java, sources=sources, progress=args.progress)
    print(summary.to_json() if args.json else summary.render())
    return 0 if summary.balanced else EXIT_UNBALANCED
