"""Small text helpers shared by the run summary and ``kafka-audit report`` (no Spark import):
durations, metric values with their units, timestamps, log positions relative to the folder
their files share, and rich tables drawn in ASCII to a given width (rich is imported only
when something is drawn)."""

from __future__ import annotations

import io
import posixpath
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

#: Metric-name suffix -> unit (schemas/security_metrics.py; Kafka's JMX conventions). Longest
#: suffix first: ``-rate-per-minute`` before ``-rate``.
METRIC_UNITS: tuple[tuple[str, str], ...] = (
    ("-rate-per-minute", "/min"),
    ("-rate", "/s"),
    ("-avg", " ms"),
    ("-max", " ms"),
    ("-p99", " ms"),
)


def duration_text(ms: int) -> str:
    """``900000`` -> ``15 min``, ``3600000`` -> ``1 h``, other values in ms."""
    if ms % 3_600_000 == 0:
        return f"{ms // 3_600_000} h"
    if ms % 60_000 == 0:
        return f"{ms // 60_000} min"
    return f"{ms} ms"


def number_text(value: float) -> str:
    """A number for people: integers without a fraction (``4``), else 3 significant digits
    (``0.167``, ``1.16e-05``, ``1.23e+03``)."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3g}"


def metric_value_text(metric: str, value: float | None) -> str:
    """One ``security_metrics`` value with the unit its name implies.

    Args:
        metric: Kafka's JMX attribute name (``failed-authentication-rate``).
        value: The value; None -> ''.

    Returns:
        ``-total``: a count (``5``); ``-rate``: per second (``1.16e-05/s``);
        ``-rate-per-minute``: per minute (``0.167/min``); ``-avg`` / ``-max`` / ``-p99``
        (re-authentication latency): milliseconds (``12.5 ms``); any other name: the number.
    """
    if value is None:
        return ""
    for suffix, unit in METRIC_UNITS:
        if metric.endswith(suffix):
            if unit == " ms" and abs(value) >= 100:
                return f"{value:.0f} ms"
            return number_text(value) + unit
    return number_text(value)


def timestamp_text(moment: datetime | None, seconds: bool = True) -> str:
    """``2026-11-20 09:00:00`` (UTC as stored; no offset shown); None -> ''."""
    if moment is None:
        return ""
    return f"{moment:%Y-%m-%d %H:%M:%S}" if seconds else f"{moment:%Y-%m-%d %H:%M}"


def split_position(position: str) -> tuple[str, str]:
    """``/logs/b1/server.log:17`` -> (``/logs/b1/server.log``, ``17``); a position without a
    line number -> (position, '')."""
    path, colon, line = position.rpartition(":")
    if not colon or not line.isdigit():
        return position, ""
    return path, line


def common_folder(positions: Iterable[str]) -> str:
    """The longest folder every position's file lies under (``/logs`` for
    ``/logs/b1/server.log:17`` and ``/logs/b2/server.log:5``); '' when there is none (no
    position, or relative and absolute paths mixed)."""
    folders = {posixpath.dirname(split_position(p)[0]) for p in positions}
    if not folders or len({f.startswith("/") for f in folders}) > 1:
        return ""
    return posixpath.commonpath(folders) if len(folders) > 1 else folders.pop()


def relative_position(position: str, folder: str) -> str:
    """``position`` (``path:line``) with ``folder`` and its slash removed from the front
    (``b1/server.log:17``); unchanged when it does not lie under ``folder``."""
    if not folder:
        return position
    prefix = folder.rstrip("/") + "/"
    return position[len(prefix) :] if position.startswith(prefix) else position


def positions_text(positions: list[str], folder: str) -> str:
    """The first position relative to ``folder`` and how many more (``b1/server.log:17
    (+1)``); '' for none."""
    if not positions:
        return ""
    more = f" (+{len(positions) - 1})" if len(positions) > 1 else ""
    return relative_position(positions[0], folder) + more


def list_text(values: list[str], most: int = 5) -> str:
    """``a, b, c``; past ``most`` values, the first ``most`` and how many more (``(+3)``)."""
    shown = ", ".join(values[:most])
    return shown + (f" (+{len(values) - most})" if len(values) > most else "")


def ascii_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    right: Collection[str] = (),
    wide: Mapping[str, int] | None = None,
    leading: int = 0,
) -> Table:
    """A rich Table drawn in ASCII (tabulate's ``simple`` look: dashes under the header, a
    space between columns), every cell wrapped, long words folded, to fit the width it is
    drawn at (:func:`draw`).

    Args:
        headers: Column titles.
        rows: Cells, one sequence per row: ``str`` (shown as is, never read as rich markup)
            or rich ``Text`` (for styles). Neutralize log-derived text first
            (:func:`jobs.neutralize.terminal`).
        right: Headers of right-aligned (numeric) columns.
        wide: Header -> ratio, for the columns that take the width left over (the others
            are as wide as their content, or shrink evenly when the width is short).
        leading: Blank lines between rows.

    Returns:
        The table, to pass to :func:`draw`.
    """
    from rich.box import Box  # noqa: PLC0415  (rich only when something is drawn)
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    box = Box("    \n    \n -  \n    \n    \n -  \n    \n    \n", ascii=True)
    table = Table(box=box, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  header_style="bold", leading=leading)  # fmt: skip
    for header in headers:
        table.add_column(header, overflow="fold", justify="right" if header in right else "left",
                         ratio=(wide or {}).get(header))  # fmt: skip
    for row in rows:
        table.add_row(*[Text(c) if isinstance(c, str) else c for c in row])
    return table


def draw(renderables: Iterable[str | RenderableType], width: int, color: bool = False) -> str:
    """Renderables drawn by rich at ``width`` columns: no line is longer (text wrapped at
    spaces, long words folded); trailing blanks stripped.

    Args:
        renderables: ``str`` (one paragraph; never read as rich markup or emoji codes), rich
            ``Text`` or tables (:func:`ascii_table`); ``""`` is a blank line.
        width: Columns.
        color: ANSI colours and bold (for a terminal); off: plain text, no escape sequence.

    Returns:
        The text, each line ending with a newline.
    """
    from rich.console import Console  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, force_terminal=color,
        color_system="standard" if color else None, markup=False, emoji=False,
        highlight=False, soft_wrap=False, legacy_windows=False,
    )  # fmt: skip
    for item in renderables:
        console.print(Text(item, overflow="fold") if isinstance(item, str) else item)
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
