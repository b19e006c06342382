"""The HTML report's figures (``kafka-audit report --format html``) and the rule for drawing
events over time at the data's own resolution (:func:`activity_periods`, :func:`time_resolution`;
the notebooks use the same rule).

Figures are matplotlib ``Figure`` objects (no pyplot, no global state) saved as SVG with text
kept as text (``svg.fonttype='none'``), ids from a fixed ``svg.hashsalt`` and no date: the same
rows give the same bytes. matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from jobs.neutralize import terminal

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

Row = dict[str, Any]
#: matplotlib's RDF metadata block (image type and the namespaces' addresses): dropped.
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)

#: Window kinds of security_metrics and their length.
STEPS: Mapping[str, timedelta] = {"1h": timedelta(hours=1), "1d": timedelta(days=1)}
#: Data that spans at most this long is drawn per hour, longer spans per day (the notebooks'
#: rule, notebooks/03_auth_failures_and_denials.ipynb).
HOURLY_MAX_EXTENT = timedelta(days=3)
#: More days than this without a value split the time axis into separate periods (panels).
PERIOD_GAP = timedelta(days=7)
#: At most this many panels: past it, the periods with the shortest gap between them merge.
MAX_PANELS = 6
#: matplotlib settings of every figure: text as SVG text, fixed ids, no math parsing of names.
SVG_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "kafka-audit-report",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
#: One colour per token state (schemas/token_lifecycle.py STATES).
STATE_COLORS = {"active": "#2b8a3e", "expired": "#868e96", "expired_early": "#e67700",
                "swept": "#495057"}  # fmt: skip
DAY = timedelta(days=1)


def time_resolution(extent: timedelta) -> str:
    """The window kind to draw data spanning ``extent`` with: ``1h`` for at most
    :data:`HOURLY_MAX_EXTENT` (3 days: at most 72 hourly values), else ``1d``."""
    return "1h" if extent <= HOURLY_MAX_EXTENT else "1d"


@dataclass(frozen=True)
class Period:
    """Whole UTC days ``[start, end)`` with data, drawn as one panel at its own resolution."""

    start: datetime
    end: datetime

    @property
    def resolution(self) -> str:
        """``1h`` or ``1d`` (:func:`time_resolution` of the period's length)."""
        return time_resolution(self.end - self.start)

    def describe(self) -> str:
        """``2026-11-20 (per hour)`` or ``2026-11-01 .. 2026-11-30 (per day)`` (last day
        inclusive)."""
        last = self.end - DAY
        days = f"{self.start:%Y-%m-%d}" + (f" .. {last:%Y-%m-%d}" if last > self.start else "")
        return f"{days} (per {'hour' if self.resolution == '1h' else 'day'})"


def activity_periods(
    moments: Iterable[datetime], gap: timedelta = PERIOD_GAP, most: int = MAX_PANELS
) -> list[Period]:
    """The periods a time axis should show: the data's own extent, not a fixed calendar.

    The UTC days holding a moment are joined into periods; more than ``gap`` without data
    starts a new period (a lake with the samples of 2020 and a cluster-day of 2026 is two
    short periods, not six years of empty days). Past ``most`` periods, the two with the
    shortest gap between them merge, until ``most`` are left.

    Args:
        moments: Aware datetimes (window starts); naive ones are taken as UTC.
        gap: The longest stretch without data inside one period.
        most: The most periods returned (1 or more).

    Returns:
        Periods of whole UTC days, in time order; [] for no moment.
    """
    days = sorted({_utc(m).replace(hour=0, minute=0, second=0, microsecond=0) for m in moments})
    spans: list[list[datetime]] = []
    for day in days:
        if spans and day - spans[-1][1] <= gap:
            spans[-1][1] = day + DAY
        else:
            spans.append([day, day + DAY])
    while len(spans) > max(most, 1):
        i = min(range(len(spans) - 1), key=lambda k: spans[k + 1][0] - spans[k][1])
        spans[i : i + 2] = [[spans[i][0], spans[i + 1][1]]]
    return [Period(start, end) for start, end in spans]


def window_counts(rows: Iterable[Row], period: Period) -> list[tuple[datetime, datetime, int]]:
    """Events per window over the data's own extent in ``period``: from its first window with
    a row to its last, at the period's resolution, zero-filled between.

    Args:
        rows: security_metrics rows of one metric (``window``, ``window_start_ts``,
            ``event_count``); rows outside the period are ignored.
        period: The period; its resolution's rows are counted, or the daily ones when it has
            no row of that kind (a lake without hourly windows).

    Returns:
        (window start, window end, events) in time order, summed over brokers, listeners and
        the other slices; [] when no row lies in the period.
    """
    inside = [r for r in rows if period.start <= _utc(r["window_start_ts"]) < period.end]
    kinds = {r["window"] for r in inside}
    kind = period.resolution if period.resolution in kinds else "1d"
    found: dict[datetime, int] = {}
    for r in inside:
        if r["window"] == kind:
            start = _utc(r["window_start_ts"])
            found[start] = found.get(start, 0) + int(r["event_count"] or 0)
    if not found:
        return []
    step, first = STEPS[kind], min(found)
    starts = [first + i * step for i in range((max(found) - first) // step + 1)]
    return [(start, start + step, found.get(start, 0)) for start in starts]


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@contextmanager
def figure_settings() -> Iterator[None]:
    """matplotlib's settings for the page's figures (:data:`SVG_RC`), for drawing and saving."""
    import matplotlib as mpl  # noqa: PLC0415

    with mpl.rc_context(SVG_RC):
        yield


def svg_text(figure: Figure) -> str:
    """``figure`` as an inline ``<svg>`` element: no XML declaration, DOCTYPE or metadata
    (no date, no creator: byte-identical for the same figure). Call inside
    :func:`figure_settings`."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return _METADATA.sub("", text[text.index("<svg") :], count=1)


#: Colours of the over-time figures and of the token timeline's markers.
BAR_COLOR = "#c92a2a"
#: Token history operations drawn on a token's line: operation -> (marker, label).
TOKEN_MARKS = {"renew": ("|", "renewed"), "expire": ("x", "expired (request)"),
               "sweep": ("s", "removed (token manager)")}  # fmt: skip
REJECTED_MARK = ("o", "rejected request")


def over_time_svg(rows: Sequence[Row], periods: Sequence[Period], label: str) -> str:
    """Events over time, one panel per period at its own resolution (shared y axis).

    Args:
        rows: security_metrics rows of one metric (both window kinds).
        periods: :func:`activity_periods` of the rows' window starts (1 or more).
        label: What is counted (``authentication failures``), for the axis.

    Returns:
        The figure as an ``<svg>`` element (:func:`svg_text`).
    """
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    with figure_settings():
        figure = Figure(figsize=(10, 2.6), layout="constrained")
        axes = figure.subplots(1, len(periods), sharey=True, squeeze=False)[0]
        for ax, period in zip(axes, periods, strict=True):
            windows = window_counts(rows, period)
            edges = [start for start, _, _ in windows] + [windows[-1][1]] if windows else []
            counts = [n for _, _, n in windows]
            if windows:
                ax.stairs(counts, edges, fill=True, color=BAR_COLOR, linewidth=0)
                pad = max(windows[0][1] - windows[0][0], (edges[-1] - edges[0]) * 0.04)
                ax.set_xlim(edges[0] - pad, edges[-1] + pad)
            _date_axis(ax, max_ticks=8 // len(periods) + 2)
            ax.set_title(f"{period.describe()}: {sum(counts)}", fontsize=8, loc="left")
        axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0].set_ylabel(f"{label}\nper window")
        return svg_text(figure)


def _date_axis(ax: Axes, max_ticks: int) -> None:
    """UTC date ticks, labelled concisely (``06:00`` under a day's date)."""
    import matplotlib.dates as mdates  # noqa: PLC0415

    # matplotlib.dates has no annotations for these two.
    locator = mdates.AutoDateLocator(minticks=2, maxticks=max_ticks, tz=UTC)  # type: ignore[no-untyped-call]
    formatter = mdates.ConciseDateFormatter(locator, tz=UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)


def token_timeline_svg(tokens: Sequence[Row]) -> str:
    """One line per delegation token (KIP-48), from issue to its end (removal, expiry, or the
    run's end while active), coloured by state; a dotted line on to its max lifetime; markers
    where it was renewed, expired by request, removed by the token manager, and where a
    request on it was rejected (error code not 0).

    Args:
        tokens: token_lifecycle rows (1 or more), drawn top to bottom.

    Returns:
        The figure as an ``<svg>`` element (:func:`svg_text`).
    """
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    with figure_settings():
        figure = Figure(figsize=(10, max(2.2, 1.3 + 0.24 * len(tokens))), layout="constrained")
        ax = figure.subplots()
        for y, token in enumerate(tokens):
            _token_line(ax, y, token)
        ax.set_yticks(range(len(tokens)), [_token_label(t) for t in tokens], fontsize=7)
        ax.set_ylim(len(tokens) - 0.5, -0.5)
        _date_axis(ax, max_ticks=10)
        handles = [Line2D([], [], color=c, lw=4, label=s) for s, c in STATE_COLORS.items()]
        handles += [Line2D([], [], color="black", ls="", marker=m, label=text)
                    for m, text in TOKEN_MARKS.values()]  # fmt: skip
        handles.append(Line2D([], [], ls="", marker=REJECTED_MARK[0], markerfacecolor="none",
                              markeredgecolor=BAR_COLOR, label=REJECTED_MARK[1]))  # fmt: skip
        handles.append(Line2D([], [], color="grey", ls=":", label="until max lifetime"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        return svg_text(figure)


def _token_label(token: Row) -> str:
    """``User:alice tok-1234…`` (owner and the start of the token key), controls escaped."""
    key = str(token["token_key"])
    return terminal(f"{token['owner'] or '?'} {key[:10]}{'…' if len(key) > 10 else ''}")


def _token_line(ax: Axes, y: int, token: Row) -> None:
    start = token["issue_ts"] or token["first_seen_ts"]
    end = token["ended_ts"] or token["state_as_of_ts"] or token["last_seen_ts"]
    color = STATE_COLORS.get(token["state"], "black")
    if start is not None and end is not None:
        ax.plot([start, end], [y, y], color=color, lw=4, solid_capstyle="butt")
        if token["max_ts"] is not None and token["max_ts"] > end:
            ax.plot([end, token["max_ts"]], [y, y], color="grey", ls=":", lw=1)
    history = token["history"] or ()
    for operation, (marker, _) in TOKEN_MARKS.items():
        moments = [h["event_ts"] for h in history
                   if h["operation"] == operation and h["event_ts"] is not None]  # fmt: skip
        ax.plot(moments, [y] * len(moments), ls="", marker=marker, color="black", ms=6)
    rejected = [h["event_ts"] for h in history
                if h["error_code"] not in (None, 0) and h["event_ts"] is not None]  # fmt: skip
    ax.plot(rejected, [y] * len(rejected), ls="", marker=REJECTED_MARK[0], ms=5,
            markerfacecolor="none", markeredgecolor=BAR_COLOR)  # fmt: skip
