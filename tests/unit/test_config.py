"""Config files and CLI overrides: values, defaults, and errors that name the key."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from jobs.config import (
    RunConfig,
    SourceSpec,
    area_rules,
    build_config,
    load_config_file,
    parse_instant,
)
from jobs.errors import ConfigError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_file_values_and_relative_paths(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
[run]
lake = "lake"
engine = "embedded"
time_zone = "Europe/Berlin"
start = 2026-11-20
end = "2026-11-22T00:00:00Z"

[spark]
master = "local[1]"
[spark.conf]
"spark.sql.shuffle.partitions" = 3

[[sources]]
path = "logs/broker-1"
[[sources]]
path = "/abs/connect"
time_zone = "UTC"
node_id = "connect-1"
""",
    )
    config = build_config(load_config_file(path), run_id="r1")
    assert config == RunConfig(
        sources=(
            SourceSpec(str(tmp_path / "logs/broker-1"), "Europe/Berlin", None),
            SourceSpec("/abs/connect", "UTC", "connect-1"),
        ),
        lake=str(tmp_path / "lake"),
        start=datetime(2026, 11, 20, tzinfo=UTC),
        end=datetime(2026, 11, 22, tzinfo=UTC),
        engine="embedded",
        run_id="r1",
        master="local[1]",
        spark_conf={"spark.sql.shuffle.partitions": "3"},
    )
    assert config.window_dates() == [date(2026, 11, 20), date(2026, 11, 21)]


def test_cli_values_override_and_add_sources(tmp_path: Path) -> None:
    path = _write(tmp_path, '[run]\nlake = "a"\n[[sources]]\npath = "/x"\n')
    config = build_config(
        load_config_file(path), lake="/other", sources=[SourceSpec("/y")], engine=None
    )
    assert (config.lake, [s.path for s in config.sources], config.engine) == (
        "/other",
        ["/x", "/y"],
        "auto",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run\n", "not valid TOML"),
        ('[run]\nlake = "l"\nengine = "spark"\n[[sources]]\npath = "/x"\n', "run.engine"),
        ("[run]\nlake = 3\n", "run.lake must be a string"),
        ('[run]\nlake = "l"\nstart = "yesterday"\n', "run.start"),
        ('[run]\nlake = "l"\n[[sources]]\ntime_zone = "UTC"\n', "sources[0] needs a 'path'"),
        ('[run]\nlake = "l"\n[[sources]]\npath = "/x"\ntime_zone = "Mars/Base"\n', "Mars/Base"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_config(load_config_file(path))


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config_file(tmp_path / "nope.toml")


def test_window_must_be_whole_ordered_utc_days() -> None:
    source = (SourceSpec("/x"),)
    with pytest.raises(ConfigError, match="whole UTC days"):
        RunConfig(source, "l", start=parse_instant("2026-11-20T13:00:00", "--start"))
    with pytest.raises(ConfigError, match="is not before end"):
        RunConfig(
            source,
            "l",
            start=parse_instant("2026-11-21", "s"),
            end=parse_instant("2026-11-20", "e"),
        )
    with pytest.raises(ConfigError, match="both --start and --end"):
        RunConfig(source, "l", start=parse_instant("2026-11-21", "s")).window_dates()
    assert RunConfig(source, "l").window_dates() is None


def test_parse_instant_takes_offsets_to_utc() -> None:
    assert parse_instant("2026-11-21T01:00:00+01:00", "x") == datetime(2026, 11, 21, tzinfo=UTC)
    with pytest.raises(ConfigError, match="--start: 'x' is not a date"):
        parse_instant("x", "--start")


@dataclasses.dataclass(frozen=True)
class _Rules:
    threshold: int = 3
    factor: float = 1.5
    names: tuple[str, ...] = ("a",)
    enabled: bool = True


def test_rules_areas_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(
        '[run]\nlake = "lake"\n[[sources]]\npath = "logs"\n'
        '[rules.demo]\nthreshold = 5\nfactor = 2\nnames = ["x", "y"]\n',
        encoding="utf-8",
    )
    config = build_config(load_config_file(path))
    assert area_rules(config, "demo", _Rules) == _Rules(5, 2.0, ("x", "y"), True)
    assert area_rules(config, "absent", _Rules) == _Rules()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"treshold": 5}, r"unknown key\(s\) treshold; known: threshold, factor, names"),
        ({"threshold": "5"}, r"\[rules.demo\].threshold must be int, got '5'"),
        ({"threshold": True}, r"threshold must be int, got True"),
        ({"enabled": 1}, r"enabled must be bool, got 1"),
        ({"names": "x"}, r"names must be a list"),
    ],
)
def test_rules_errors_name_the_key(table: dict[str, object], message: str) -> None:
    config = RunConfig(sources=(SourceSpec("x"),), lake="l", rules={"demo": table})
    with pytest.raises(ConfigError, match=message):
        area_rules(config, "demo", _Rules)


def test_repeated_input_options_add_up() -> None:
    # argparse's default keeps only the last --input: every other input would vanish unseen.
    from jobs.cli.main import _parser  # noqa: PLC0415 - the parser itself, no Spark

    args = _parser().parse_args(["run", "--input", "a", "b", "--input", "c", "--lake", "x"])
    assert args.input == ["a", "b", "c"]
