"""``kafka-audit generate``: write a simulated cluster's logs with their ground truth.

No pyspark here: the simulator is pure Python (docs/generator.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from jobs.cli.arguments import at_least, instant, positive_number
from jobs.errors import InputError, UsageError

DESCRIPTION = """\
Write the logs of a simulated Kafka cluster (brokers, KRaft controllers, Connect workers and
their clients) in Kafka's own log layouts, with the ground truth of what happened in them:
the tables, metrics and findings a run over the logs should produce (docs/generator.md)."""


def register(commands: Any) -> None:
    """Add the ``generate`` subparser to ``commands`` (argparse's subparsers action)."""
    from jobs.simulator.layouts import DEFAULT_LAYOUTS, LAYOUTS  # noqa: PLC0415 - keep --help cheap

    parser = commands.add_parser(
        "generate",
        help="write a simulated cluster's logs with their ground truth",
        description=DESCRIPTION,
    )
    parser.add_argument("--out", required=True, type=Path, help="corpus folder to write")
    parser.add_argument("--brokers", type=at_least(1), default=3, help="brokers (default 3)")
    parser.add_argument("--controllers", type=at_least(0), default=1, help="KRaft controllers")
    parser.add_argument("--connect-workers", type=at_least(0), default=1, help="Connect workers")
    parser.add_argument("--clients", type=at_least(1), default=12, help="client applications")
    parser.add_argument(
        "--hours", type=positive_number, default=2.0, help="simulated time span (h)"
    )
    parser.add_argument(
        "--lines-target", type=at_least(1), default=50_000, help="about this many lines"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (same seed, same corpus)")
    parser.add_argument(
        "--kafka-version", default="mixed", help="Kafka version of every node, or 'mixed'"
    )
    parser.add_argument(
        "--layouts",
        nargs="+",
        choices=LAYOUTS,
        default=list(DEFAULT_LAYOUTS),
        help="log layouts, assigned to the nodes in turn",
    )
    parser.add_argument(
        "--rotate-lines", type=at_least(0), default=0, help="rotate files after N lines (0: never)"
    )
    parser.add_argument("--gzip", action="store_true", help="gzip the rotated files")
    parser.add_argument(
        "--start",
        type=instant,
        default="2026-11-20T00:00:00Z",
        help="simulated start (default 2026-11-20T00:00:00Z; no offset: UTC)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``generate``: writes the corpus, prints the summary; returns the exit code.

    Raises:
        UsageError: options the simulator refuses (exit 2: they are all arguments).
        InputError: the output folder cannot be written.
    """
    from jobs.simulator.generate import generate  # noqa: PLC0415
    from jobs.simulator.world import GenerateOptions  # noqa: PLC0415

    options = GenerateOptions(
        out=args.out,
        brokers=args.brokers,
        controllers=args.controllers,
        connect_workers=args.connect_workers,
        clients=args.clients,
        hours=args.hours,
        lines_target=args.lines_target,
        seed=args.seed,
        kafka_version=args.kafka_version,
        layouts=tuple(args.layouts),
        rotate_lines=args.rotate_lines,
        gzip=args.gzip,
        start=f"{args.start:%Y-%m-%dT%H:%M:%SZ}",
    )
    try:
        summary = generate(options)
    except ValueError as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise InputError(f"generate: cannot write {args.out}: {error}") from error
    print(summary.render(), file=sys.stdout)
    return 0
