"""``kafka-audit``: the command line's entry point.

Each command is a module of ``jobs.cli`` with ``register(commands)`` (adds its subparser) and
``execute(args) -> int`` (runs it, returns the exit code): ``run`` runs the pipeline for a window
and writes the Delta tables; ``parse`` prints what each input record parses into, as JSON lines
(the debugging aid for parsers); ``report``, ``export-ocsf`` and ``generate``. User errors print
one line and exit non-zero, without a stack trace.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

from jobs.errors import AuditError, ConfigError

log = logging.getLogger("kafka-audit")

EXIT_ERROR = 1

# Command name -> its module. Importing one must stay cheap (no pyspark at module level): the
# parser is built on every call, --help included.
COMMAND_MODULES = {
    "run": "jobs.cli.run",
    "parse": "jobs.cli.parse",
    "generate": "jobs.cli.generate",
    "report": "jobs.cli.report",
    "export-ocsf": "jobs.cli.export_ocsf",
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
    for name in COMMAND_MODULES:
        _command_module(name).register(commands)
    return parser


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
        args.under_spark_submit = under_spark_submit
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
