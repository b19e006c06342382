"""``kafka-audit``: the command line.

``run`` runs the pipeline for a window and writes the Delta tables; ``parse`` prints what each
input record parses into, as JSON lines (the debugging aid for parsers). User errors print one
line and exit non-zero, without a stack trace.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from jobs.config import SourceSpec, build_config, check_time_zone, load_config_file, parse_instant
from jobs.errors import AuditError, ConfigError
from jobs.inputs import discover_sources
from jobs.secrets import ephemeral_key, fingerprint_key

log = logging.getLogger("kafka-audit")

EXIT_ERROR = 1
EXIT_UNBALANCED = 3

# Further commands, each a module with ``register(commands)`` (adds its subparser, whose name
# maps back here) and ``execute(args) -> int``. Importing them must stay cheap (no pyspark at
# module level): the parser is built on every call, --help included.
COMMAND_MODULES = {
    "generate": "jobs.generate_command",
    "report": "jobs.report_command",
    "export-ocsf": "jobs.ocsf_command",
}


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(COMMAND_MODULES[name])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-audit", description="Audit analytics over Apache Kafka security logs."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run the pipeline and write the Delta tables")
    run.add_argument(
        "--input",
        nargs="+",
        default=[],
        metavar="PATH",
        help="log files, folders (of node folders) or globs",
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

    parse = commands.add_parser("parse", help="print each input record's parse as JSON lines")
    parse.add_argument("paths", nargs="+", metavar="PATH")
    parse.add_argument("--time-zone", default="UTC", help="zone of the log4j timestamps")
    parse.add_argument("--master", default="local[*]", help="Spark master")
    parse.add_argument("--lake", help="use this lake's fingerprint key (default: a throwaway key)")
    for name in COMMAND_MODULES:
        _command_module(name).register(commands)
    return parser  # fmt: skip


def _run(args: argparse.Namespace, under_spark_submit: bool) -> int:
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
    master = args.master if under_spark_submit else config.master
    spark = build_session("kafka-security-audit", master, config.spark_conf)
    java = f"Java {spark.sparkContext._jvm.System.getProperty('java.version')}"  # type: ignore[union-attr]
    summary = run(spark, config, java=java, sources=sources, progress=args.progress)
    print(summary.to_json() if args.json else summary.render())
    return 0 if summary.balanced else EXIT_UNBALANCED


def _parse(args: argparse.Namespace) -> int:
    from jobs.parse_command import print_parsed  # noqa: PLC0415
    from jobs.session import build_session  # noqa: PLC0415

    check_time_zone(args.time_zone, "--time-zone")
    sources = [SourceSpec(path=p, time_zone=args.time_zone) for p in args.paths]
    discover_sources(sources)  # fail on bad inputs before starting Spark
    key = fingerprint_key(args.lake) if args.lake else ephemeral_key()
    spark = build_session("kafka-security-audit-parse", args.master)
    print_parsed(spark, sources, key, sys.stdout)
    return 0


def main(argv: Sequence[str] | None = None, under_spark_submit: bool = False) -> int:
    """Entry point of the ``kafka-audit`` console script and of ``jobs/submit.py``.

    Returns the exit code: 0 success, 1 user or engine error (one line on stderr), 2 bad
    arguments (argparse), 3 the run's line accounting does not balance.
    """
    args = _parser().parse_args(argv)
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        if args.command == "run":
            return _run(args, under_spark_submit)
        if args.command == "parse":
            return _parse(args)
        result: int = _command_module(args.command).execute(args)
        return result
    except ConfigError as error:
        print(f"kafka-audit: configuration error: {error}", file=sys.stderr)
    except AuditError as error:
        print(f"kafka-audit: error: {error}", file=sys.stderr)
    return EXIT_ERROR


def console_main() -> None:
    """``kafka-audit`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
