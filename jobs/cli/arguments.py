"""Argument types shared by every ``kafka-audit`` subcommand.

Each is an argparse ``type=`` callable: a bad value makes argparse print the usage and exit 2
(README: exit codes), with the same wording for every subcommand. ``day_window`` checks the
``--start`` / ``--end`` pair, which no single ``type=`` can see; its ``UsageError`` exits 2 too.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime, time

from jobs.config import check_lake_location, check_time_zone, parse_instant
from jobs.errors import ConfigError, UsageError


def instant(text: str) -> datetime:
    """``2026-11-20`` or an ISO-8601 date-time (``2026-11-20T00:00:00Z``), as an aware UTC
    datetime; a value without an offset is UTC.

    Raises:
        argparse.ArgumentTypeError: not a date or ISO-8601 timestamp.
    """
    try:
        return parse_instant(text, "value")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("value: ")) from error


def time_zone(text: str) -> str:
    """An IANA zone id (``Europe/Berlin``, ``UTC``).

    Raises:
        argparse.ArgumentTypeError: an unknown zone.
    """
    try:
        return check_time_zone(text, "value")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("value: ")) from error


def lake_location(text: str) -> str:
    """A lake root this install supports: a local path or ``file://`` URI.

    Raises:
        argparse.ArgumentTypeError: an object-store or other remote URI (one line saying what
            is supported).
    """
    try:
        return check_lake_location(text, "value")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("value: ")) from error


def _shown(value: datetime) -> str:
    return f"{value:%Y-%m-%d}" if value.timetz() == time(0, tzinfo=UTC) else value.isoformat()


def day_window(start: datetime | None, end: datetime | None) -> tuple[datetime, datetime] | None:
    """The window of ``--start`` / ``--end`` (values of ``instant``): whole UTC days, end
    exclusive, because tables are partitioned by date and a rerun replaces whole days.

    Args:
        start: ``--start`` as given, or None.
        end: ``--end`` as given, or None.

    Returns:
        ``(start, end)``, or None when neither is given (every day).

    Raises:
        UsageError: only one of the two is given, one is not a UTC midnight, or ``end`` is not
            after ``start`` (the CLI exits 2 with the subcommand's usage).
    """
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise UsageError("--start and --end go together: give both, or neither (every day)")
    for flag, value in (("--start", start), ("--end", end)):
        if value.timetz() != time(0, tzinfo=UTC):
            raise UsageError(
                f"{flag} {_shown(value)} is not a UTC midnight: the window is whole UTC days "
                f"(e.g. {flag} {value:%Y-%m-%d})"
            )
    if end <= start:
        raise UsageError(f"--end {_shown(end)} must be after --start {_shown(start)}")
    return start, end


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type=`` for whole numbers ``>= minimum``.

    Returns:
        The callable; it raises ``argparse.ArgumentTypeError`` for other values.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {text}")
        return value

    return parse


def positive_number(text: str) -> float:
    """A number ``> 0`` (``1``, ``0.5``).

    Raises:
        argparse.ArgumentTypeError: not a number, or not above 0.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def spark_master(args: argparse.Namespace) -> str | None:
    """The master a subcommand's session uses: ``--master`` if given; else None under
    spark-submit (keep spark-submit's master), else ``local[*]``."""
    master: str | None = getattr(args, "master", None)
    if master:
        return master
    return None if getattr(args, "under_spark_submit", False) else "local[*]"
