"""The project's exceptions (one base, one subclass per kind of failure) and the exit codes of
the ``kafka-audit`` command line (docs/running.md, exit codes)."""

from __future__ import annotations

#: The command did what was asked; a run found nothing at or above ``--fail-on``.
EXIT_OK = 0
#: A configuration file, an input or the engine is wrong (one line on stderr), or a run read
#: no Kafka record at all (a ``warning:`` line, after the tables are written).
EXIT_ERROR = 1
#: The command line is wrong: argparse's usage and one error line.
EXIT_USAGE = 2
#: The run's line accounting does not balance (a bug: takes precedence over ``EXIT_FINDINGS``).
EXIT_UNBALANCED = 3
#: The run wrote every table and found findings at or above ``--fail-on``.
EXIT_FINDINGS = 4


class AuditError(Exception):
    """Base class of every error this project raises on purpose.

    The CLI prints ``str(error)`` on one line and exits non-zero, without a stack trace.
    """


class ConfigError(AuditError):
    """A configuration file or value is wrong; the message names file, key and expectation."""


class UsageError(AuditError):
    """The command line is wrong in a way one argument's ``type=`` cannot see (two arguments
    that go together, a missing one): the CLI prints the subcommand's usage and the message,
    and exits ``EXIT_USAGE``, as argparse does for its own errors."""


class InputError(AuditError):
    """An input path is missing, unreadable or of an unknown kind."""


class EngineError(AuditError):
    """The Delta engine cannot be used (forced engine unavailable, failed commit, bad table)."""
