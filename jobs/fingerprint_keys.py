"""The fingerprint key: by reference from configuration, else generated once per lake.

Fingerprints of secrets (``transforms.bronze.redaction``) are HMAC-SHA256 under this key. The key is
given by reference, never by value in a config file: an environment variable
(``secrets.fingerprint_key_env``) or a file (``secrets.fingerprint_key_file``). Without one, the
first run generates a random key, keeps it in the lake's own metadata folder
(``<lake>/_kafka_audit/fingerprint.key``, owner-only permissions), says so once, and reuses it,
so fingerprints are stable within a lake.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from jobs.errors import ConfigError

log = logging.getLogger(__name__)

KEY_BYTES = 32
METADATA_FOLDER = "_kafka_audit"
KEY_FILE_NAME = "fingerprint.key"


def _decode(text: str, where: str) -> bytes:
    value = text.strip()
    if len(value) < 32:
        raise ConfigError(f"{where}: the fingerprint key must have at least 32 characters")
    return value.encode("utf-8")


def lake_key_path(lake: str) -> Path:
    """Where a lake keeps its generated fingerprint key."""
    return Path(lake) / METADATA_FOLDER / KEY_FILE_NAME


def fingerprint_key(lake: str, key_env: str | None = None, key_file: str | None = None) -> bytes:
    """Return the fingerprint key for a run writing to ``lake``.

    Args:
        lake: the lake root (a local folder when the key is generated).
        key_env: name of an environment variable holding the key (>= 32 characters).
        key_file: path of a file holding the key.

    Returns:
        The key bytes.

    Raises:
        ConfigError: the variable is unset, the file unreadable, the key too short, or a key
            would have to be generated for a lake that is not a local folder.
    """
    if key_env:
        value = os.environ.get(key_env)
        if value is None:
            raise ConfigError(
                f"secrets.fingerprint_key_env: environment variable {key_env} is not set"
            )
        return _decode(value, f"environment variable {key_env}")
    if key_file:
        try:
            return _decode(Path(key_file).read_text(encoding="utf-8"), key_file)
        except OSError as error:
            raise ConfigError(
                f"secrets.fingerprint_key_file: cannot read {key_file} ({error.strerror})"
            ) from error
    if "://" in lake:
        raise ConfigError(
            f"lake {lake} is not a local folder: give the fingerprint key by reference "
            "(secrets.fingerprint_key_env or secrets.fingerprint_key_file)"
        )
    path = lake_key_path(lake)
    if path.exists():
        return _decode(path.read_text(encoding="utf-8"), str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(KEY_BYTES)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    log.warning(
        "generated a fingerprint key for this lake at %s (owner-only); keep it with the lake: "
        "secrets in the logs are stored only as fingerprints under this key",
        path,
    )
    return key.encode("utf-8")


def ephemeral_key() -> bytes:
    """A random key for runs that write nothing (``kafka-audit parse``)."""
    return secrets.token_hex(KEY_BYTES).encode("utf-8")


#: Kafka's property names of the delegation-token secret: current, then pre-4.0.
TOKEN_SECRET_PROPERTIES = ("delegation.token.secret.key", "delegation.token.master.key")


def token_secret(
    key_env: str | None, key_file: str | None, properties: Iterable[Mapping[str, str]] = ()
) -> bytes | None:
    """The cluster's delegation-token secret for HMAC verification (KIP-48), or None.

    By reference first (``secrets.token_secret_env`` / ``secrets.token_secret_file``), else the
    value of ``delegation.token.secret.key`` (or the pre-4.0 ``delegation.token.master.key``)
    in the nodes' properties files. The value is the string Kafka reads from its config, as
    UTF-8 bytes; it is never logged or stored.

    Raises:
        ConfigError: the variable is unset, the file unreadable, or the nodes' configs give
            different secrets (logs from several clusters).
    """
    if key_env:
        value = os.environ.get(key_env)
        if value is None:
            raise ConfigError(f"secrets.token_secret_env: variable {key_env} is not set")
        return value.strip().encode("utf-8")
    if key_file:
        try:
            return Path(key_file).read_text(encoding="utf-8").strip().encode("utf-8")
        except OSError as error:
            raise ConfigError(
                f"secrets.token_secret_file: cannot read {key_file} ({error.strerror})"
            ) from error
    found = {
        value.strip()
        for props in properties
        if (value := next((props[n] for n in TOKEN_SECRET_PROPERTIES if props.get(n)), None))
    }
    if len(found) > 1:
        raise ConfigError(
            "the nodes' properties files give different delegation.token.secret.key values; "
            "give the cluster's secret by reference (secrets.token_secret_env / _file)"
        )
    return found.pop().encode("utf-8") if found else None
