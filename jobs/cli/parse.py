"""``kafka-audit parse``: print what every input record parses into, as JSON lines (the
debugging aid for parsers; ``jobs.parsed_records``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jobs.cli.arguments import lake_location, spark_master, time_zone
from jobs.config import SourceSpec
from jobs.fingerprint_keys import ephemeral_key, fingerprint_key
from jobs.inputs import discover_sources


def register(commands: Any) -> None:
    """Add the ``parse`` subparser to ``commands`` (an argparse subparsers action)."""
    parse = commands.add_parser(
        "parse",
        help="print each input record's parse as JSON lines",
        description="Print what every record of the input logs parses into, one JSON object "
        "per line (source, line, family, and the silver table's row, the quarantine reason or "
        "out_of_scope): the debugging aid for parsers.",
    )
    parse.add_argument("paths", nargs="+", metavar="PATH", help="log files, folders or globs")
    parse.add_argument(
        "--time-zone",
        type=time_zone,
        default="UTC",
        help="zone of the log4j timestamps (default UTC)",
    )
    parse.add_argument(
        "--master",
        help="Spark master (default: local[*]; under spark-submit, spark-submit's own master)",
    )
    parse.add_argument(
        "--lake",
        type=lake_location,
        help="use this lake's fingerprint key (default: a throwaway key)",
    )


def execute(args: argparse.Namespace) -> int:
    """Print every input record's parse on stdout; returns 0.

    Raises:
        InputError: a missing or unreadable input, before Spark starts.
    """
    from jobs.parsed_records import print_parsed  # noqa: PLC0415  (keeps --help fast)
    from jobs.pipeline import input_bytes  # noqa: PLC0415
    from jobs.session import build_session  # noqa: PLC0415

    sources = [SourceSpec(path=p, time_zone=args.time_zone) for p in args.paths]
    size = input_bytes(discover_sources(sources))  # fails on bad inputs before Spark starts
    key = fingerprint_key(args.lake) if args.lake else ephemeral_key()
    spark = build_session("kafka-security-audit-parse", spark_master(args), input_bytes=size)
    print_parsed(spark, sources, key, sys.stdout)
    return 0
