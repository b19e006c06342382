"""``kafka-audit``: the command line's entry point.

Each command is a module of ``jobs.cli`` with ``register(commands)`` (adds its subparser) and
``execute(args) -> int`` (runs it, returns the exit code): ``run`` runs the pipeline for a window
and writes the Delta tables; ``parse`` prints what each input record parses into, as JSON lines
(the debugging aid for parsers); ``report``, ``export-ocsf``, ``export-metrics`` and
``generate``.

Exit codes (``jobs.errors``, docs/running.md): argument mistakes exit 2 with the usage and one
line (argparse's, or a ``UsageError`` a command raises); configuration, input and engine errors
exit 1 with one line and no stack trace; ``run`` also exits 3 (accounting) and 4 (``--fail-on``).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.metadata
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

from jobs.errors import EXIT_ERROR, EXIT_USAGE, AuditError, ConfigError, UsageError

log = logging.getLogger("kafka-audit")

#: The distribution whose version ``--version`` prints.
DISTRIBUTION = "kafka-security-audit"

# Command name -> its module. Importing one must stay cheap (no pyspark at module level): the
# parser is built on every call, --help included.
COMMAND_MODULES = {
    "run": "jobs.cli.run",
    "parse": "jobs.cli.parse",
    "generate": "jobs.cli.generate",
    "report": "jobs.cli.report",
    "export-ocsf": "jobs.cli.export_ocsf",
    "export-metrics": "jobs.cli.export_metrics",
}

EXIT_CODES = """\
exit codes:
  0  done (run: nothing at or above --fail-on)
  1  configuration, input or engine error (one line); run: no Kafka record read (warning)
  2  command-line mistake (usage and one line)
  3  run: the line accounting does not balance (a bug; wins over 4)
  4  run: findings at or above --fail-on (every table written)
"""


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(COMMAND_MODULES[name])


def version() -> str:
    """The installed version of the ``kafka-security-audit`` distribution, or ``unknown`` when
    it is not installed (a checkout on ``PYTHONPATH``, a ``--py-files`` zip)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-audit",
        description="Audit analytics over Apache Kafka security logs.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name in COMMAND_MODULES:
        _command_module(name).register(commands)
    for command in commands.choices.values():
        # A command's UsageError is reported with its own usage line, as argparse would.
        command.set_defaults(command_parser=command)
    return parser


def mistyped_command(argv: Sequence[str]) -> str | None:
    """argparse's error for a first positional argument that is no command but close to one
    (``invalid choice: 'rnu' (did you mean 'run'?)``), else None (argparse then reports an
    unknown command with the list of commands itself)."""
    for token in argv:
        if token.startswith("-"):
            continue  # the top-level options take no value
        if token in COMMAND_MODULES:
            return None
        close = difflib.get_close_matches(token, COMMAND_MODULES, n=1)
        return (
            f"argument COMMAND: invalid choice: '{token}' (did you mean '{close[0]}'?)"
            if close
            else None
        )
    return None


def unrecognized(extra: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """argparse's error for arguments no option takes, with the option closest to the first
    unknown one (``unrecognized arguments: --statr 2026-11-20 (did you mean --start?)``)."""
    message = f"unrecognized arguments: {' '.join(extra)}"
    options = [o for action in parser._actions for o in action.option_strings]
    first = next((e.split("=", 1)[0] for e in extra if e.startswith("--")), None)
    close = difflib.get_close_matches(first, options, n=1) if first else []
    return message + (f" (did you mean {close[0]}?)" if close else "")


def _configure_logging(args: argparse.Namespace) -> None:
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    # httpx logs every request at INFO (run --notify; the notifier redacts the URL there too).
    for noisy in ("py4j", "pyspark", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _parse(argv: Sequence[str]) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code when parsing ended the command (``--help`` and
    ``--version``: 0; a mistake: 2, argparse having printed the usage and the error)."""
    parser = _parser()
    try:
        if (message := mistyped_command(argv)) is not None:
            parser.error(message)
        args, extra = parser.parse_known_args(argv)
        if extra:  # reported by the command's parser, with its usage
            command = getattr(args, "command_parser", parser)
            command.error(unrecognized(extra, command))
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    if args.command is None:  # a bare ``kafka-audit`` (or only -v / -q)
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return args


def main(argv: Sequence[str] | None = None, under_spark_submit: bool = False) -> int:
    """Entry point of the ``kafka-audit`` console script and of ``jobs/submit.py``.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).
        under_spark_submit: the caller is spark-submit's driver (its master is kept).

    Returns:
        The exit code (``EXIT_CODES``): 0 done; 1 a configuration, input or engine error (one
        line on stderr, no stack trace); 2 a command-line mistake (usage and one line on
        stderr; also a bare ``kafka-audit``, which prints the help); ``run`` also 1 (no Kafka
        record read), 3 (accounting does not balance) and 4 (findings at or above
        ``--fail-on``). Never raises ``SystemExit``.
    """
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    if isinstance(args, int):
        return args
    _configure_logging(args)
    args.under_spark_submit = under_spark_submit
    try:
        return int(_command_module(args.command).execute(args))
    except UsageError as error:
        args.command_parser.print_usage(sys.stderr)
        print(f"{args.command_parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as error:
        print(f"kafka-audit: configuration error: {error}", file=sys.stderr)
    except AuditError as error:
        print(f"kafka-audit: error: {error}", file=sys.stderr)
    return EXIT_ERROR


def console_main() -> None:
    """``kafka-audit`` console script: exits with ``main``'s exit code."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
