"""Config files and CLI overrides: values, defaults, and errors that name the file, the key and
the nearest valid key (one line each)."""

from __future__ import annotations

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
from jobs.rules import (
    AuthorizerRules,
    ConnectRules,
    ForwardingRules,
    ReauthRules,
    TokenRules,
)

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    """The message of the ConfigError that loading ``text`` raises, without the file name."""
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message
    return message.removeprefix(f"{path}: ")


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

[secrets]
fingerprint_key_env = "KEY"
token_secret_file = "secrets/token.secret"

[spark]
master = "local[1]"
[spark.conf]
"spark.sql.shuffle.partitions" = 3
"spark.ui.enabled" = false

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
        spark_conf={"spark.sql.shuffle.partitions": "3", "spark.ui.enabled": "false"},
        fingerprint_key_env="KEY",
        token_secret_file=str(tmp_path / "secrets/token.secret"),
    )
    assert config.window_dates() == [date(2026, 11, 20), date(2026, 11, 21)]


def test_keys_left_out_are_not_returned(tmp_path: Path) -> None:
    # build_config lets the CLI override only what the file did not set: defaults stay out.
    kwargs = load_config_file(_write(tmp_path, '[run]\nlake = "file:///data/lake"\n'))
    assert kwargs == {
        "lake": "file:///data/lake",
        "spark_conf": {},
        "rules": {},
        "sources": (),
        "default_time_zone": "UTC",
    }


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
        ('[run]\ntimezone = "UTC"\n', "unknown key run.timezone: did you mean time_zone?"),
        (
            '[[sources]]\npath = "/x"\ntimezone = "UTC"\n',
            "unknown key sources[0].timezone: did you mean time_zone?",
        ),
        (
            '[secrets]\nfingerprint_key_evn = "K"\n',
            "unknown key secrets.fingerprint_key_evn: did you mean fingerprint_key_env?",
        ),
        ('[spark]\nmastr = "local[1]"\n', "unknown key spark.mastr: did you mean master?"),
        (
            "[rules.reauth]\nidle_msx = 1\n",
            "unknown key rules.reauth.idle_msx: did you mean idle_ms?",
        ),
        (
            "[rules.tokens]\ncreation_burst_treshold = 1\n",
            "unknown key rules.tokens.creation_burst_treshold: did you mean creation_burst_threshold?",
        ),
        (
            '[rules.connect]\nworker_useragent = "x"\n',
            "unknown key rules.connect.worker_useragent: did you mean worker_user_agent?",
        ),
        (
            "[rules.forwarding]\npairing_tolerance = 1\n",
            "unknown key rules.forwarding.pairing_tolerance: did you mean pairing_tolerance_ms?",
        ),
        (
            "[rules.authorizer]\ndenial_burst_window = 1\n",
            "unknown key rules.authorizer.denial_burst_window: did you mean denial_burst_window_ms?",
        ),
        ("[rules.reauht]\nidle_ms = 1\n", "unknown key rules.reauht: did you mean reauth?"),
        ('[runn]\nlake = "l"\n', "unknown key runn: did you mean run?"),
        # A key written above its table (before [run]) is a top-level key.
        ('lake = "l"\n[run]\n', "unknown key lake: did you mean run.lake?"),
    ],
)
def test_a_typo_in_each_section_names_the_key_and_the_nearest_one(
    tmp_path: Path, text: str, message: str
) -> None:
    assert _error(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[run]\nxyz = 1\n",
            "unknown key run.xyz: expected one of lake, engine, time_zone, start, end",
        ),
        (
            "[rules.forwarding]\nfoo = 1\n",
            "unknown key rules.forwarding.foo: expected one of pairing_tolerance_ms",
        ),
        ("[xyz]\n", "unknown key xyz: expected one of run, sources, secrets, spark, rules, notify"),
    ],
)
def test_an_unknown_key_with_no_near_one_lists_the_valid_keys(
    tmp_path: Path, text: str, message: str
) -> None:
    assert _error(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[run]\nengine = "spark"\n',
            "run.engine: expected one of auto, native, embedded, got 'spark'",
        ),
        ("[run]\nlake = 3\n", "run.lake: expected a string, got 3"),
        ('[run]\nlake = ""\n', "run.lake: expected a non-empty string, got ''"),
        ("[run]\ntime_zone = true\n", "run.time_zone: expected a string, got true"),
        (
            '[run]\nstart = "yesterday"\n',
            "run.start: 'yesterday' is not a date or ISO-8601 timestamp (e.g. 2026-11-20)",
        ),
        (
            "[run]\nend = 10:00:00\n",
            "run.end: 10:00:00 is not a date or ISO-8601 timestamp (e.g. 2026-11-20)",
        ),
        (
            '[[sources]]\npath = "/x"\ntime_zone = 3\n',
            "sources[0].time_zone: expected a string, got 3",
        ),
        (
            '[[sources]]\npath = "/x"\ntime_zone = "Mars/Base"\n',
            "sources[0].time_zone: unknown time zone 'Mars/Base' (expected e.g. UTC)",
        ),
        ('[[sources]]\ntime_zone = "UTC"\n', "sources[0].path: required key missing"),
        ('[[sources]]\npath = "/x"\nnode_id = 1\n', "sources[0].node_id: expected a string, got 1"),
        (
            '[[sources]]\npath = "/x"\nlayout_pattern = "%q"\n',
            "sources[0].layout_pattern: log4j pattern '%q': unknown conversion %q",
        ),
        (
            '[sources]\npath = "/x"\n',
            "sources: expected an array of tables ([[sources]], not [sources]), got a table",
        ),
        ("[secrets]\ntoken_secret_env = 1\n", "secrets.token_secret_env: expected a string, got 1"),
        ("[spark]\nmaster = []\n", "spark.master: expected a string, got an array"),
        ("spark = 1\n", "spark: expected a table, got 1"),
        (
            '[spark.conf]\nspark.sql.shuffle.partitions = "4"\n',
            "spark.conf.spark: expected a string, number or boolean, got a table (quote a "
            'dotted Spark key: "spark.sql.shuffle.partitions" = "4")',
        ),
        (
            '[spark.conf]\n"spark.jars" = ["a"]\n',
            'spark.conf."spark.jars": expected a string, number or boolean, got an array',
        ),
        (
            '[rules.connect]\nstale_key_grace_ms = "1m"\n',
            "rules.connect.stale_key_grace_ms: expected an integer, got '1m'",
        ),
        (
            "[rules.tokens]\ncreation_burst_threshold = true\n",
            "rules.tokens.creation_burst_threshold: expected an integer, got true",
        ),
        (
            "[rules.tokens]\ncreation_burst_threshold = 2.5\n",
            "rules.tokens.creation_burst_threshold: expected an integer, got 2.5",
        ),
        (
            "[rules.tokens]\ncreation_burst_threshold = 0\n",
            "rules.tokens.creation_burst_threshold: expected a number >= 1, got 0",
        ),
        (
            '[rules.tokens]\nmetadata_mode = "etcd"\n',
            "rules.tokens.metadata_mode: expected one of auto, zookeeper, kraft, got 'etcd'",
        ),
        (
            "[rules.tokens]\nlifetime_factor = 0\n",
            "rules.tokens.lifetime_factor: expected a number > 0.0, got 0",
        ),
        (
            '[rules.reauth]\ncapabilities = "librdkafka>=2.2.0"\n',
            "rules.reauth.capabilities: expected an array, got 'librdkafka>=2.2.0'",
        ),
        (
            '[rules.reauth]\ncapabilities = ["librdkafka>2"]\n',
            "rules.reauth.capabilities[0]: capability 'librdkafka>2': expected 'name>=1.2.3' or 'name=never'",
        ),
        (
            '[rules.reauth]\nreadiness_candidates_ms = [900000, "1h"]\n',
            "rules.reauth.readiness_candidates_ms[1]: expected an integer, got '1h'",
        ),
        (
            "[rules.authorizer]\ndenial_burst_window_ms = -1\n",
            "rules.authorizer.denial_burst_window_ms: expected a number >= 1, got -1",
        ),
        ("[rules]\nreauth = 3\n", "rules.reauth: expected a table, got 3"),
    ],
)
def test_wrong_types_name_the_key_the_expectation_and_the_value(
    tmp_path: Path, text: str, message: str
) -> None:
    assert _error(tmp_path, text) == message


def test_every_problem_of_the_file_on_one_line(tmp_path: Path) -> None:
    message = _error(tmp_path, '[run]\ntimezone = "UTC"\nengine = "x"\n[spark]\nmastr = 1\n')
    assert message.split("; ") == [
        "run.engine: expected one of auto, native, embedded, got 'x'",
        "unknown key run.timezone: did you mean time_zone?",
        "unknown key spark.mastr: did you mean master?",
    ]


def test_an_object_store_lake_in_the_file_is_one_line(tmp_path: Path) -> None:
    message = _error(tmp_path, '[run]\nlake = "s3://bucket/lake"\n')
    assert message.startswith("run.lake: s3:// lakes are not supported (object-store URIs")
    assert "mountpoint-s3" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run\n", "not valid TOML"),
        ('[run]\nlake = "l"\n[run]\n', "not valid TOML"),
    ],
)
def test_toml_syntax_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    assert message in _error(tmp_path, text)


def test_a_window_of_part_days_is_refused_with_the_file_named(tmp_path: Path) -> None:
    message = _error(tmp_path, '[run]\nstart = "2026-11-20T13:00:00"\n')
    assert message.startswith("run.start: 2026-11-20T13:00:00+00:00 is not a UTC midnight;")


def test_errors_across_keys_are_found_when_the_config_is_built(tmp_path: Path) -> None:
    # Checks across keys, and with the command line's values: after the file is loaded.
    path = _write(tmp_path, '[run]\nlake = "l"\nstart = 2026-11-21\nend = 2026-11-20\n')
    with pytest.raises(ConfigError, match=r"^no input: give --input PATH"):
        build_config(load_config_file(path))
    with pytest.raises(ConfigError, match=r"^run window: start 2026-11-21T00:00:00"):
        build_config(load_config_file(path), sources=[SourceSpec("/x")])


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config_file(tmp_path / "nope.toml")


@pytest.mark.parametrize("name", ["default.toml", "demo.toml"])
def test_the_shipped_config_files_load(name: str) -> None:
    kwargs = load_config_file(ROOT / "conf" / name)
    assert kwargs["lake"] == str(ROOT / "lake")
    assert kwargs["engine"] == "auto"
    assert kwargs["default_time_zone"] == "UTC"


def test_default_toml_states_the_true_defaults() -> None:
    # conf/default.toml lists every key "with its default": each [rules.*] table it writes
    # out must equal the dataclass's defaults, and [spark].master RunConfig's.
    kwargs = load_config_file(ROOT / "conf" / "default.toml")
    config = build_config(kwargs, sources=[SourceSpec("/x")])
    classes = {
        "reauth": ReauthRules,
        "tokens": TokenRules,
        "forwarding": ForwardingRules,
        "connect": ConnectRules,
        "authorizer": AuthorizerRules,
    }
    assert sorted(config.rules) == sorted(classes)
    for area, cls in classes.items():
        assert area_rules(config, area, cls) == cls(), area
    assert config.master == RunConfig((SourceSpec("/x"),), "l").master


def test_demo_toml_reads_the_samples_and_the_generated_day() -> None:
    kwargs = load_config_file(ROOT / "conf" / "demo.toml")
    assert [s.path for s in kwargs["sources"]] == [str(ROOT / "samples"), str(ROOT / "generated")]
    assert kwargs["master"] == "local[2]"


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
    assert parse_instant("2026-11-21T00:00:00Z", "x") == datetime(2026, 11, 21, tzinfo=UTC)
    with pytest.raises(ConfigError, match="--start: 'x' is not a date"):
        parse_instant("x", "--start")


def test_rules_areas_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(
        '[run]\nlake = "lake"\n[[sources]]\npath = "logs"\n'
        "[rules.tokens]\ncreation_burst_threshold = 5\nlifetime_factor = 2\n"
        '[rules.reauth]\ncapabilities = ["x>=1.0", "y=never"]\n',
        encoding="utf-8",
    )
    config = build_config(load_config_file(path))
    tokens = area_rules(config, "tokens", TokenRules)
    assert tokens == TokenRules(creation_burst_threshold=5, lifetime_factor=2.0)
    assert isinstance(tokens.lifetime_factor, float)
    assert area_rules(config, "reauth", ReauthRules).capabilities == ("x>=1.0", "y=never")
    assert area_rules(config, "connect", ConnectRules) == ConnectRules()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"grace_ms": 5}, "unknown key rules.connect.grace_ms: did you mean stale_key_grace_ms?"),
        (
            {"stale_key_grace_ms": "5"},
            "rules.connect.stale_key_grace_ms: expected an integer, got '5'",
        ),
        ({"retry_gap_ms": True}, "rules.connect.retry_gap_ms: expected an integer, got true"),
        ({"worker_user_agent": 1}, "rules.connect.worker_user_agent: expected a string, got 1"),
        (
            {"worker_user_agent": ""},
            "rules.connect.worker_user_agent: expected a non-empty string, got ''",
        ),
    ],
)
def test_rules_given_in_code_are_checked_alike(table: dict[str, object], message: str) -> None:
    config = RunConfig(sources=(SourceSpec("x"),), lake="l", rules={"connect": table})
    with pytest.raises(ConfigError) as caught:
        area_rules(config, "connect", ConnectRules)
    assert str(caught.value) == message


def test_repeated_input_options_add_up() -> None:
    # argparse's default keeps only the last --input: every other input would vanish unseen.
    from jobs.cli.main import _parser  # noqa: PLC0415 - the parser itself, no Spark

    args = _parser().parse_args(["run", "--input", "a", "b", "--input", "c", "--lake", "x"])
    assert args.input == ["a", "b", "c"]
