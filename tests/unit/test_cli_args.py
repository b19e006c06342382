"""The command line without Spark: argument mistakes exit 2 with the usage and one line,
``--version``, a bare ``kafka-audit``, "did you mean" for a mistyped command, the shared
argument types, and an input without a Kafka log stopping before Spark (exit 1)."""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from jobs.cli import arguments
from jobs.cli.main import COMMAND_MODULES, _parser, main, mistyped_command
from jobs.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError

RUN = ["run", "--input", "samples", "--lake", "/tmp/kafka-audit-never-written"]


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``argv``; check exit 2, the subcommand's usage and one error line; return it."""
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    command = next((a for a in argv if a in COMMAND_MODULES), None)
    prog = f"kafka-audit {command}" if command else "kafka-audit"
    assert err[0].startswith(f"usage: {prog} "), err
    assert err[-1].startswith(f"{prog}: error: "), err
    assert not [line for line in err if "Traceback" in line]
    return err[-1].removeprefix(f"{prog}: error: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*RUN, "--start", "2026-11-20"], "--start and --end go together"),
        ([*RUN, "--end", "2026-11-21"], "--start and --end go together"),
        ([*RUN, "--start", "nope", "--end", "x"], "argument --start: 'nope' is not a date"),
        ([*RUN, "--start", "2026-11-31", "--end", "2026-12-01"], "argument --start: '2026-11-31'"),
        ([*RUN, "--start", "2026-11-20T06:00", "--end", "2026-11-21"], "--start 2026-11-20T06:00:00+00:00 is not a UTC midnight"),
        ([*RUN, "--start", "2026-11-21", "--end", "2026-11-20"], "--end 2026-11-20 must be after --start 2026-11-21"),
        ([*RUN, "--start", "2026-11-20", "--end", "2026-11-20"], "must be after --start"),
        ([*RUN, "--time-zone", "Mars/Base"], "argument --time-zone: unknown time zone"),
        (["run", "--input", "samples", "--lake", "s3://bucket/lake"], "argument --lake: s3:// lakes are not supported"),
        (["run", "--input", "samples", "--lake", "gs://bucket/lake"], "gs:// lakes are not supported"),
        ([*RUN, "--fail-on", "critical"], "argument --fail-on: invalid choice: 'critical'"),
        ([*RUN, "--fail-on", "High"], "argument --fail-on: invalid choice: 'High'"),
        ([*RUN, "--engine", "spark"], "argument --engine: invalid choice: 'spark'"),
        ([*RUN, "--statr", "2026-11-20"], "unrecognized arguments: --statr 2026-11-20 (did you mean --start?)"),
        ([*RUN, "--fail_on", "high"], "unrecognized arguments: --fail_on high (did you mean --fail-on?)"),
        (["export-ocsf", "--lake", "/l", "--out", "o", "extra"], "unrecognized arguments: extra"),
        (["run", "--lake", "/tmp/x"], "give --input (or --conf FILE"),
        (["run", "--input", "samples"], "give --lake (or --conf FILE"),
        (["run"], "give --input and --lake (or --conf FILE"),
        (["parse", "samples", "--time-zone", "Europe/Berlinn"], "unknown time zone"),
        (["parse", "samples", "--lake", "abfs://c@a.dfs.core.windows.net/x"], "abfs:// lakes are not supported"),
        (["export-ocsf", "--lake", "s3://b/l", "--out", "o"], "s3:// lakes are not supported"),
        (["export-ocsf", "--lake", "/l", "--out", "o", "--start", "2026-11-20"], "--start and --end go together"),
        (["export-ocsf", "--lake", "/l", "--out", "o", "--start", "20/11/2026", "--end", "2026-11-21"], "argument --start: '20/11/2026' is not a date"),
        (["generate", "--out", "o", "--hours", "0"], "argument --hours: expected a number > 0, got 0"),
        (["generate", "--out", "o", "--hours", "two"], "argument --hours: expected a number, got two"),
        (["generate", "--out", "o", "--brokers", "0"], "argument --brokers: expected a number >= 1, got 0"),
        (["generate", "--out", "o", "--rotate-lines", "-1"], "argument --rotate-lines: expected a number >= 0"),
        (["generate", "--out", "o", "--clients", "1.5"], "argument --clients: expected a whole number, got 1.5"),
        (["generate", "--out", "o", "--start", "yesterday"], "argument --start: 'yesterday' is not a date"),
    ],
)  # fmt: skip
def test_argument_mistakes_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in _usage_error(argv, capsys)


@pytest.mark.parametrize(
    ("typo", "command"),
    [("rnu", "run"), ("reprot", "report"), ("export-osf", "export-ocsf"), ("pars", "parse"),
     ("generat", "generate")],
)  # fmt: skip
def test_a_mistyped_command_gets_a_suggestion(
    typo: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    error = _usage_error(["-v", typo, "--lake", "x"], capsys)
    assert error == f"argument COMMAND: invalid choice: '{typo}' (did you mean '{command}'?)"


def test_an_unknown_command_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    error = _usage_error(["xyzzy"], capsys)
    assert error.startswith("argument COMMAND: invalid choice: 'xyzzy' (choose from ")
    assert "'export-ocsf'" in error
    assert mistyped_command(["-q", "xyzzy"]) is None
    assert mistyped_command(["--verbose", "run", "--input", "rnu"]) is None


def test_bare_command_prints_the_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["-v"]):
        assert main(argv) == EXIT_USAGE
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("usage: kafka-audit [-h] [--version]")
        assert "\ncommands:\n" in err and "\nexit codes:\n" in err
        assert "  4  run: findings at or above --fail-on" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == EXIT_OK
    expected = importlib.metadata.version("kafka-security-audit")
    assert capsys.readouterr().out == f"kafka-audit {expected}\n"


def test_every_command_has_a_description() -> None:
    parser = _parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    described = {name for name, sub in commands.choices.items() if sub.description}
    assert described == set(commands.choices) == set(COMMAND_MODULES)


def test_run_arguments_are_parsed_once_for_every_command() -> None:
    args = _parser().parse_args(
        [*RUN, "--start", "2026-11-20", "--end", "2026-11-21T00:00:00Z", "--fail-on", "medium",
         "--time-zone", "Europe/Berlin", "--lake", "file:///tmp/lake"]
    )  # fmt: skip
    assert args.start == datetime(2026, 11, 20, tzinfo=UTC)
    assert args.end == datetime(2026, 11, 21, tzinfo=UTC)
    assert (args.fail_on, args.time_zone, args.lake) == (
        "medium",
        "Europe/Berlin",
        "file:///tmp/lake",
    )
    assert _parser().parse_args(RUN).fail_on is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-20", datetime(2026, 11, 20, tzinfo=UTC)),
        ("2026-11-20T00:00:00Z", datetime(2026, 11, 20, tzinfo=UTC)),
        ("2026-11-20T01:00:00+01:00", datetime(2026, 11, 20, tzinfo=UTC)),
        (" 2026-11-20T09:30 ", datetime(2026, 11, 20, 9, 30, tzinfo=UTC)),
    ],
)
def test_instant(text: str, expected: datetime) -> None:
    assert arguments.instant(text) == expected


@pytest.mark.parametrize("text", ["", "nope", "2026-13-01", "20.11.2026", "2026-11-20T25:00"])
def test_instant_refuses(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a date or ISO-8601 timestamp"):
        arguments.instant(text)


def test_day_window() -> None:
    day = datetime(2026, 11, 20, tzinfo=UTC)
    after = datetime(2026, 11, 22, tzinfo=UTC)
    assert arguments.day_window(None, None) is None
    assert arguments.day_window(day, after) == (day, after)
    with pytest.raises(UsageError, match="go together"):
        arguments.day_window(day, None)
    with pytest.raises(UsageError, match=r"--end 2026-11-22T00:00:01\+00:00 is not a UTC midnight"):
        arguments.day_window(day, after.replace(second=1))
    with pytest.raises(UsageError, match="--end 2026-11-20 must be after --start 2026-11-22"):
        arguments.day_window(after, day)


@pytest.mark.parametrize(
    ("parse", "good", "value", "bad"),
    [
        (arguments.at_least(1), "3", 3, ["0", "-2", "x", "1.0", ""]),
        (arguments.at_least(0), "0", 0, ["-1", "one"]),
        (arguments.positive_number, "0.5", 0.5, ["0", "-1", "nan", "inf", "x"]),
    ],
)
def test_number_types(parse: Any, good: str, value: object, bad: list[str]) -> None:
    assert parse(good) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="expected a"):
            parse(text)


def _no_spark(*_: object, **__: object) -> None:
    raise AssertionError("Spark was started")


@pytest.mark.parametrize(
    "files",
    [
        {"notes.txt": "meeting notes\nnothing to see\n"},
        {"a/app.log": "2026-11-20 10:00:00 some other app logged this\n", "b/empty.log": ""},
        {"server.log.1.gz": None},  # gzip of a non-Kafka text
        {"server.log": "# only a comment\n\n"},
    ],
)
def test_an_input_without_a_kafka_log_stops_before_spark(
    files: dict[str, str | None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("jobs.session.build_session", _no_spark)
    for name, text in files.items():
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.write_bytes(gzip.compress(b"GET /index.html 200\n" * 50))
        else:
            path.write_text(text)
    lake = tmp_path / "lake"
    assert main(["run", "--input", str(tmp_path / "in"), "--lake", str(lake)]) == EXIT_ERROR
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        f"kafka-audit: error: no Kafka log among the {len(files)} input file(s) under "
    )
    assert "layout_pattern" in err[0] and "server.log" in err[0]
    assert not lake.exists()


def test_a_declared_layout_makes_a_file_a_kafka_log(tmp_path: Path) -> None:
    from jobs.config import SourceSpec  # noqa: PLC0415
    from jobs.inputs import discover_sources, holds_log_records  # noqa: PLC0415

    log = tmp_path / "custom.log"
    log.write_text("2026-11-20 10:00:00,123 | WARN | kafka.authorizer.logger | denied\n")
    plain = discover_sources([SourceSpec(str(log))])
    declared = discover_sources([SourceSpec(str(log), layout_pattern="%d | %p | %c | %m%n")])
    assert (holds_log_records(plain[0]), holds_log_records(declared[0])) == (False, True)


def test_the_bundled_samples_hold_kafka_logs() -> None:
    from jobs.config import SourceSpec  # noqa: PLC0415
    from jobs.inputs import discover_sources, holds_log_records, require_kafka_logs  # noqa: PLC0415

    sources = discover_sources([SourceSpec("samples")])
    assert all(holds_log_records(s) for s in sources), [str(s.path) for s in sources]
    require_kafka_logs(sources)


def test_config_file_errors_still_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--conf", str(tmp_path / "missing.toml")]) == EXIT_ERROR
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-audit: configuration error: "), err
    assert "missing.toml" in err[0]


def test_export_to_a_file_is_an_argument_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text("")
    argv = ["export-ocsf", "--lake", str(tmp_path / "lake"), "--out", str(out)]
    assert _usage_error(argv, capsys) == f"--out {out} is a file: give a folder"


def test_spark_master_keeps_spark_submits_unless_given() -> None:
    from argparse import Namespace  # noqa: PLC0415

    from jobs.cli.arguments import spark_master  # noqa: PLC0415

    assert spark_master(Namespace(master=None, under_spark_submit=True)) is None
    assert spark_master(Namespace(master=None, under_spark_submit=False)) == "local[*]"
    assert spark_master(Namespace(master="spark://h:7077", under_spark_submit=True)) == (
        "spark://h:7077"
    )
    assert spark_master(Namespace()) == "local[*]"
