"""The fingerprint key: by reference, or generated once per lake with owner-only permissions."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from jobs.errors import ConfigError
from jobs.fingerprint_keys import fingerprint_key, lake_key_path, token_secret


def test_generated_once_owner_only_and_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lake = str(tmp_path / "lake")
    first = fingerprint_key(lake)
    path = lake_key_path(lake)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) == 64 and "generated a fingerprint key" in caplog.text
    caplog.clear()
    assert fingerprint_key(lake) == first
    assert "generated" not in caplog.text  # said once, not on every run
    assert fingerprint_key(str(tmp_path / "other")) != first


def test_by_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_KEY", "e" * 40)
    assert fingerprint_key("unused", key_env="AUDIT_KEY") == b"e" * 40
    key_file = tmp_path / "key"
    key_file.write_text("f" * 40 + "\n", encoding="utf-8")
    assert fingerprint_key("unused", key_file=str(key_file)) == b"f" * 40
    assert not (Path("unused") / "_kafka_audit").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"key_env": "NOT_SET_ANYWHERE"}, "NOT_SET_ANYWHERE is not set"),
        ({"key_env": "SHORT_KEY"}, "at least 32 characters"),
        ({"key_file": "/does/not/exist"}, "cannot read /does/not/exist"),
    ],
)
def test_errors_name_the_reference(
    kwargs: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    monkeypatch.setenv("SHORT_KEY", "abc")
    with pytest.raises(ConfigError, match=message):
        fingerprint_key("lake", **kwargs)


def test_remote_lake_needs_a_key_by_reference() -> None:
    with pytest.raises(ConfigError, match="not a local folder"):
        fingerprint_key("s3a://bucket/lake")


def test_token_secret_by_reference_or_from_the_nodes_properties(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_SECRET", " s3cret \n")
    assert token_secret("TOKEN_SECRET", None) == b"s3cret"
    secret_file = tmp_path / "token.secret"
    secret_file.write_text("from-file\n", encoding="utf-8")
    assert token_secret(None, str(secret_file)) == b"from-file"
    # The pre-4.0 name counts too; brokers agreeing give one secret.
    props = [{"delegation.token.secret.key": "k1"}, {"delegation.token.master.key": "k1"}, {}]
    assert token_secret(None, None, props) == b"k1"
    assert token_secret(None, None, [{"node.id": "1"}]) is None
    with pytest.raises(ConfigError, match=r"different delegation\.token\.secret\.key"):
        token_secret(None, None, [{"delegation.token.secret.key": "a"},
                                  {"delegation.token.secret.key": "b"}])  # fmt: skip
    with pytest.raises(ConfigError, match="variable NOPE is not set"):
        token_secret("NOPE", None)
