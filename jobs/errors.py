"""The project's exceptions: one base, one subclass per kind of failure."""

from __future__ import annotations


class AuditError(Exception):
    """Base class of every error this project raises on purpose.

    The CLI prints ``str(error)`` on one line and exits non-zero, without a stack trace.
    """


class ConfigError(AuditError):
    """A configuration file or argument is wrong; the message names file, key and expectation."""


class InputError(AuditError):
    """An input path is missing, unreadable or of an unknown kind."""


class EngineError(AuditError):
    """The Delta engine cannot be used (forced engine unavailable, failed commit, bad table)."""
