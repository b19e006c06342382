"""``kafka-audit generate``: write a simulated cluster's logs with their ground truth"""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    """Add the ``generate`` subparser to ``commands`` (argparse's subparsers action)."""
    commands.add_parser(
        "generate",
        help="write a simulated cluster's logs with their ground truth (not yet available)",
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``generate``; returns the exit code."""
    raise NotImplementedError("generate")
