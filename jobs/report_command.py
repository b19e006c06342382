"""``kafka-audit report``: print metrics, readiness and findings from a lake"""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    """Add the ``report`` subparser to ``commands`` (argparse's subparsers action)."""
    commands.add_parser(
        "report", help="print metrics, readiness and findings from a lake (not yet available)"
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``report``; returns the exit code."""
    raise NotImplementedError("report")
