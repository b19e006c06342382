"""``kafka-audit run``: run the pipeline for a window and write the Delta tables."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.cli.arguments import day_window, instant, lake_location, time_zone
from jobs.config import (
    SEVERITY_NAMES,
    NotifySpec,
    RunConfig,
    SourceSpec,
    build_config,
    check_webhook_url,
    load_config_file,
)
from jobs.errors import EXIT_OK, ConfigError, UsageError
from jobs.inputs import discover_sources, require_kafka_logs

if TYPE_CHECKING:
    from jobs.summary import RunSummary

#: ``--fail-on`` thresholds, lowest first (``schemas.findings.SEVERITIES`` without ``info``;
#: not imported from there, to keep ``--help`` free of pyspark).
FAIL_ON = ("low", "medium", "high")

DESCRIPTION = """\
Run the pipeline over the input logs for a window of whole UTC days and write every Delta
table (bronze, silver, gold) into the lake; print a summary: a headline (findings by
severity, lines and records, verdict), the tables written, the accounting totals and the
files worth a look (--json: everything, the per-file accounting included).

Exit codes: 0 done; 1 a configuration, input or engine error, or no Kafka record read;
2 an argument mistake; 3 the line accounting does not balance; 4 findings at or above
--fail-on (after every table is written; 3 wins over 4).

--notify URL (or [notify] in --conf): after every table is written, POST each new finding at
or above --notify-min-severity (default high) to the webhook as JSON with a Slack-compatible
text, once per finding id (docs/notifications.md). A finding not delivered after the retries
is a warning line and is tried again by the next run; it does not change the exit code."""


def register(commands: Any) -> None:
    """Add the ``run`` subparser to ``commands`` (an argparse subparsers action)."""
    run = commands.add_parser(
        "run",
        help="run the pipeline and write the Delta tables",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--input",
        nargs="+",
        # Repeated --input options add up (the last one alone used to win, silently).
        action="extend",
        default=[],
        metavar="PATH",
        help="log files, folders (of node folders) or globs; may be repeated",
    )
    run.add_argument("--lake", type=lake_location, help="root folder of the Delta tables")
    run.add_argument("--start", type=instant, help="window start, UTC midnight (2026-11-20)")
    run.add_argument("--end", type=instant, help="window end, exclusive, UTC midnight (2026-11-21)")
    run.add_argument("--conf", type=Path, help="TOML config file (see conf/default.toml)")
    run.add_argument(
        "--engine", choices=["auto", "native", "embedded"], help="Delta engine (default: auto)"
    )
    run.add_argument(
        "--time-zone", type=time_zone, help="zone of the log4j timestamps of --input files"
    )
    run.add_argument(
        "--run-id", help="run id, recorded in every row and commit (default: a new one)"
    )
    run.add_argument("--master", help="Spark master when running outside spark-submit")
    run.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="exit 4 when the run found findings of this severity or above (after writing)",
    )
    run.add_argument(
        "--notify",
        type=webhook_url,
        metavar="URL",
        help="POST each new finding at or above --notify-min-severity to this webhook "
        "(overrides [notify]; prefer [notify] url_env: the URL holds a token)",
    )
    run.add_argument(
        "--notify-min-severity",
        choices=SEVERITY_NAMES,
        help="lowest severity notified (default: [notify] min_severity, else high)",
    )
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="live bar of Spark tasks per stage (default: when stderr is a terminal)",
    )


def webhook_url(text: str) -> str:
    """``--notify``: an ``http://`` or ``https://`` URL with a host.

    Raises:
        argparse.ArgumentTypeError: anything else (the value is not repeated: it may hold a
            token).
    """
    try:
        return check_webhook_url(text, "value")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("value: ")) from error


def notify_spec(args: argparse.Namespace, file_kwargs: dict[str, Any]) -> NotifySpec:
    """The ``[notify]`` of the config file with ``--notify`` / ``--notify-min-severity`` over
    it (``--notify`` replaces the file's ``url`` and ``url_env``).

    Raises:
        UsageError: ``--notify-min-severity`` with no URL from either.
    """
    spec: NotifySpec = file_kwargs.get("notify", NotifySpec())
    if args.notify is not None:
        spec = replace(spec, url=args.notify, url_env=None)
    if args.notify_min_severity is not None:
        if spec.url is None and spec.url_env is None:
            raise UsageError(
                "--notify-min-severity needs a webhook: give --notify URL (or [notify] url / "
                "url_env in --conf)"
            )
        spec = replace(spec, min_severity=args.notify_min_severity)
    return spec


def notify_after_run(
    summary: RunSummary, config: RunConfig, url: str, backoff_s: float = 1.0
) -> RunSummary:
    """POST the lake's findings not notified before (``jobs.notify.notify_findings``) and
    return ``summary`` with a warning when one was not delivered or recorded; the exit code
    is unchanged (docs/notifications.md).

    Args:
        summary: the run's summary, every table written.
        config: the run's configuration (lake, ``notify``).
        url: the webhook (``config.notify.webhook_url()``).
        backoff_s: first wait between two attempts, seconds.

    Returns:
        ``summary``, or a copy with one more warning (``jobs.notify.Outcome.warning``).
    """
    from jobs.notify import notify_findings  # noqa: PLC0415  (keeps --help fast)

    outcome = notify_findings(config.lake, url, config.notify, backoff_s)
    warning = outcome.warning()
    return summary if warning is None else replace(summary, warnings=[*summary.warnings, warning])


def _check_arguments(args: argparse.Namespace) -> tuple[Any, Any]:
    """The window of the command line; without ``--conf``, ``--input`` and ``--lake`` are
    required.

    Raises:
        UsageError: a missing argument, or a bad ``--start`` / ``--end`` pair.
    """
    if args.conf is None:
        missing = [f for f, v in (("--input", args.input), ("--lake", args.lake)) if not v]
        if missing:
            raise UsageError(
                f"give {' and '.join(missing)} (or --conf FILE with [[sources]] and run.lake)"
            )
    window = day_window(args.start, args.end)
    return window if window is not None else (None, None)


def execute(args: argparse.Namespace) -> int:
    """Run the pipeline; print its summary (``--json``: as JSON) on stdout.

    Under spark-submit (``args.under_spark_submit``) the master is spark-submit's unless
    ``--master``.

    Returns:
        ``RunSummary.exit_code``: 0; 1 when no Kafka record was read (a ``warning:`` line);
        3 when the line accounting does not balance; 4 when findings are at or above
        ``--fail-on``. With ``--json`` a non-zero code's reason is also one line on stderr.
        A finding ``--notify`` could not deliver is a ``warning:`` of the summary, not a code.

    Raises:
        UsageError: a missing argument, a bad window, or ``--notify-min-severity`` without
            a webhook, before Spark starts.
        ConfigError / InputError: a bad configuration or input (an input with no Kafka log
            among its files included, an unset ``[notify] url_env``), before Spark starts.
    """
    from jobs.lake.tables import local_size_bytes  # noqa: PLC0415
    from jobs.pipeline import input_bytes, run  # noqa: PLC0415  (keeps --help fast)
    from jobs.session import build_session  # noqa: PLC0415
    from transforms.silver.registry import SILVER_TABLES  # noqa: PLC0415

    start, end = _check_arguments(args)
    file_kwargs = load_config_file(args.conf) if args.conf else {}
    zone = args.time_zone or file_kwargs.get("default_time_zone", "UTC")
    config = build_config(
        file_kwargs,
        sources=[SourceSpec(path=p, time_zone=zone) for p in args.input] or None,
        lake=args.lake,
        start=start,
        end=end,
        engine=args.engine,
        run_id=args.run_id,
        master=args.master,
        notify=notify_spec(args, file_kwargs),
    )
    config.window_dates()  # both or neither of the file's run.start / run.end
    url = config.notify.webhook_url()  # an unset url_env fails before Spark starts
    sources = discover_sources(config.sources)  # fail on bad inputs before starting Spark
    require_kafka_logs(sources)
    master = args.master if getattr(args, "under_spark_submit", False) else config.master
    lake_bytes = local_size_bytes(config.lake, list(SILVER_TABLES))  # None: not a local path
    size = None if lake_bytes is None else input_bytes(sources) + lake_bytes
    spark = build_session("kafka-security-audit", master, config.spark_conf, input_bytes=size)
    java = f"Java {spark.sparkContext._jvm.System.getProperty('java.version')}"  # type: ignore[union-attr]
    summary = run(spark, config, java=java, sources=sources, progress=args.progress)
    summary = replace(summary, fail_on=args.fail_on)
    if url is not None:
        summary = notify_after_run(summary, config, url)
    print(summary.to_json() if args.json else summary.render())
    if args.json and summary.exit_code != EXIT_OK:
        print(f"kafka-audit: {summary.verdict()}", file=sys.stderr)
    return summary.exit_code
