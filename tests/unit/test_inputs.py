"""Input discovery: log files in folders, rotated and gzipped names, node configs beside logs."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from jobs.config import SourceSpec
from jobs.errors import InputError
from jobs.inputs import discover_sources, node_config, node_property_rows


def _touch(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_folder_of_node_folders(tmp_path: Path) -> None:
    _touch(tmp_path / "broker-1" / "server.log")
    _touch(tmp_path / "broker-1" / "server.log.2026-11-20-13")
    (tmp_path / "broker-1" / "kafka-request.log.2026-11-20-12.gz").write_bytes(
        gzip.compress(b"x\n")
    )
    _touch(tmp_path / "broker-1" / "server.properties", "node.id = 11\nprocess.roles=broker\n")
    _touch(tmp_path / "broker-1" / "notes.md")
    _touch(tmp_path / "broker-1" / ".hidden.log")
    _touch(tmp_path / "connect-a" / "connect.log")
    _touch(
        tmp_path / "connect-a" / "connect-distributed.properties",
        "group.id=g\nconfig.storage.topic=c\nrest.advertised.host.name=w1\nrest.advertised.port=8083\n",
    )
    _touch(tmp_path / "strays" / "server.log")
    found = discover_sources([SourceSpec(str(tmp_path), time_zone="Asia/Kolkata")])
    got = sorted(
        (str(s.path.relative_to(tmp_path)), s.node_folder_name, s.node_id, s.time_zone,
         s.config.role if s.config else None)
        for s in found
    )  # fmt: skip
    assert got == [
        ("broker-1/kafka-request.log.2026-11-20-12.gz", "broker-1", "11", "Asia/Kolkata", "broker"),
        ("broker-1/server.log", "broker-1", "11", "Asia/Kolkata", "broker"),
        ("broker-1/server.log.2026-11-20-13", "broker-1", "11", "Asia/Kolkata", "broker"),
        ("connect-a/connect.log", "connect-a", "connect-w1:8083", "Asia/Kolkata", "connect"),
        ("strays/server.log", "strays", None, "Asia/Kolkata", None),
    ]


def test_properties_syntax_is_java_properties(tmp_path: Path) -> None:
    path = _touch(
        tmp_path / "server.properties",
        "# comment\nbroker.id : 3\nlisteners=SASL_SSL://:9093,\\\n  PLAINTEXT://:9092\n"
        "listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=3600000\n",
    )
    config = node_config(path)
    assert config is not None
    assert (config.node_id, config.role) == ("3", "broker")
    assert config.properties["listeners"] == "SASL_SSL://:9093,PLAINTEXT://:9092"
    assert (
        config.properties["listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms"]
        == "3600000"
    )


def test_forced_node_id_wins(tmp_path: Path) -> None:
    _touch(tmp_path / "b" / "server.log")
    _touch(tmp_path / "b" / "server.properties", "broker.id=1\n")
    (found,) = discover_sources([SourceSpec(str(tmp_path / "b" / "server.log"), node_id="9")])
    assert found.node_id == "9"


def test_conflicting_node_configs_are_not_guessed(tmp_path: Path) -> None:
    _touch(tmp_path / "server.log")
    _touch(tmp_path / "a.properties", "node.id=1\n")
    _touch(tmp_path / "b.properties", "node.id=2\n")
    (found,) = discover_sources([SourceSpec(str(tmp_path))])
    assert found.config is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("missing.log", "no such file or folder"),
        ("*.nothing", "matches no file"),
        ("empty", "hold no log file"),
    ],
)
def test_bad_inputs(tmp_path: Path, spec: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=message):
        discover_sources([SourceSpec(str(tmp_path / spec))])


def test_node_property_rows_never_carry_secret_values(tmp_path: Path) -> None:
    broker = tmp_path / "broker-1"
    broker.mkdir()
    (broker / "server.log").write_text("", encoding="utf-8")
    (broker / "server.properties").write_text(
        "node.id=1\nprocess.roles=broker\nconnections.max.reauth.ms = 3600000 \n"
        "delegation.token.secret.key=topsecret\nssl.keystore.password=pw\n"
        'listener.name.sasl_ssl.plain.sasl.jaas.config=x required password="p";\n',
        encoding="utf-8",
    )
    rows = node_property_rows(discover_sources([SourceSpec(str(tmp_path))]))
    path = str((broker / "server.properties").resolve())
    assert rows == [
        ("1", "broker", path, "connections.max.reauth.ms", "3600000", False),
        ("1", "broker", path, "delegation.token.secret.key", None, True),
        ("1", "broker", path, "listener.name.sasl_ssl.plain.sasl.jaas.config", None, True),
        ("1", "broker", path, "node.id", "1", False),
        ("1", "broker", path, "process.roles", "broker", False),
        ("1", "broker", path, "ssl.keystore.password", None, True),
    ]
