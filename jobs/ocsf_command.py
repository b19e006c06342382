"""``kafka-audit export-ocsf``: export authentication and API activity as OCSF events"""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    """Add the ``export-ocsf`` subparser to ``commands`` (argparse's subparsers action)."""
    commands.add_parser(
        "export-ocsf",
        help="export authentication and API activity as OCSF events (not yet available)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``export-ocsf``; returns the exit code."""
    raise NotImplementedError("export-ocsf")
