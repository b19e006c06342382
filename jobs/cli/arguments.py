"""Argument types shared by every ``kafka-audit`` subcommand.

Each is an argparse ``type=`` callable: a bad value makes argparse print the usage and exit 2
(README: exit codes), with the same wording for every subcommand.
"""

from __future__ import annotations

import argparse
from datetime import datetime

from jobs.config import check_lake_location, check_time_zone, parse_instant
from jobs.errors import ConfigError


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
