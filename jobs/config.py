"""Run configuration: TOML files (``conf/*.toml``) and CLI overrides, into frozen dataclasses.

Every error names the file, the key and what was expected (``ConfigError``).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jobs.errors import ConfigError
from schemas.raw_lines import LAYOUT_DECLARED
from transforms.bronze.log4j_pattern import LayoutPatternError, compile_pattern

ENGINES = ("auto", "native", "embedded")

RulesT = TypeVar("RulesT")


def check_time_zone(zone: str, where: str) -> str:
    """Return ``zone`` if it is a valid IANA zone id, else raise ConfigError naming ``where``."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ConfigError(f"{where}: unknown time zone {zone!r} (expected e.g. UTC)") from error
    return zone


#: URI schemes of object stores people try as a lake; none is supported by this install.
OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "r2")


def check_lake_location(location: str, where: str) -> str:
    """Return ``location`` if it is a lake this install can read and write: a local (or
    mounted) path, or a ``file://`` URI.

    Object stores (``s3://``, ``gs://``, ``abfs://``, ...) need Spark's Hadoop connectors
    (hadoop-aws, gcs-connector, hadoop-azure), which come from Maven Central and are not bundled.

    Raises:
        ConfigError: one line naming ``where``, the scheme, and what works instead.
    """
    scheme = location.split("://", 1)[0].lower() if "://" in location else ""
    if scheme in ("", "file"):
        return location
    kind = "object-store" if scheme in OBJECT_STORE_SCHEMES else "remote"
    raise ConfigError(
        f"{where}: {scheme}:// lakes are not supported ({kind} URIs need Spark's Hadoop "
        "connector jars, which this install does not bundle); use a local path, a file:// "
        "URI, or the object store mounted as a folder (mountpoint-s3, gcsfuse, blobfuse2)"
    )


def parse_instant(text: str, where: str) -> datetime:
    """Parse ``2026-11-20`` or an ISO-8601 date-time into an aware UTC datetime.

    A value without an offset is taken as UTC. Raises ConfigError naming ``where``.
    """
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as error:
        raise ConfigError(
            f"{where}: {text!r} is not a date or ISO-8601 timestamp (e.g. 2026-11-20)"
        ) from error
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


@dataclass(frozen=True)
class SourceSpec:
    """One input path (file, folder or glob) and how to read it.

    Attributes:
        path: local file, folder of node folders, or glob.
        time_zone: zone of the log4j timestamps in these files (they carry no offset).
        node_id: force the node id of every file under ``path`` (else discovered).
        layout_pattern: the log4j ConversionPattern these files were written with (else the
            node's own logging config beside its logs, else the built-in layouts;
            docs/layouts.md).
    """

    path: str
    time_zone: str = "UTC"
    node_id: str | None = None
    layout_pattern: str | None = None

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError("sources: 'path' must not be empty")
        check_time_zone(self.time_zone, f"source {self.path!r} time_zone")
        if self.layout_pattern is not None:
            try:
                compile_pattern(self.layout_pattern, LAYOUT_DECLARED)
            except LayoutPatternError as error:
                raise ConfigError(f"source {self.path!r} layout_pattern: {error}") from error


@dataclass(frozen=True)
class RunConfig:
    """Everything one pipeline run needs; validated on construction.

    Attributes:
        sources: the inputs.
        lake: root folder (or URI) of the Delta tables.
        start / end: the run window [start, end) in UTC, whole days; None = all records.
        engine: ``auto``, ``native`` (delta-spark) or ``embedded`` (delta-rs).
        run_id: identifies the run in every row (``run_id``) and commit; reruns converge
            whatever the ids (docs/reruns.md).
        master: Spark master when the job builds its own session (None = keep spark-submit's).
        spark_conf: extra Spark settings.
        fingerprint_key_env / fingerprint_key_file: the fingerprint key by reference
            (``jobs.fingerprint_keys``); neither = a key generated and kept in the lake.
        token_secret_env / token_secret_file: the cluster's ``delegation.token.secret.key``
            by reference, for HMAC verification (KIP-48); never stored.
        rules: thresholds and switches of the gold rules, one table per area
            (``[rules.reauth]``, ``[rules.tokens]``, ...); each area validates its own keys.
    """

    sources: tuple[SourceSpec, ...]
    lake: str
    start: datetime | None = None
    end: datetime | None = None
    engine: str = "auto"
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    master: str | None = "local[*]"
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    fingerprint_key_env: str | None = None
    fingerprint_key_file: str | None = None
    token_secret_env: str | None = None
    token_secret_file: str | None = None
    rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.sources:
            raise ConfigError("no input: give --input PATH or [[sources]] in the config file")
        if not self.lake:
            raise ConfigError("no lake: give --lake PATH or run.lake in the config file")
        if self.engine not in ENGINES:
            raise ConfigError(f"run.engine: {self.engine!r} is not one of {', '.join(ENGINES)}")
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None and value.timetz() != time(0, tzinfo=UTC):
                raise ConfigError(
                    f"run.{name}: {value.isoformat()} is not a UTC midnight; the run window "
                    "must be whole UTC days, because tables are partitioned by date and a "
                    "re-run replaces whole date partitions"
                )
        if self.start and self.end and self.start >= self.end:
            raise ConfigError(
                f"run window: start {self.start.isoformat()} is not before end "
                f"{self.end.isoformat()}"
            )

    def window_dates(self) -> list[date] | None:
        """The UTC dates the window covers, or None when the run has no window.

        Raises ConfigError when only one of start / end is set.
        """
        if self.start is None and self.end is None:
            return None
        if self.start is None or self.end is None:
            raise ConfigError("run window: give both --start and --end, or neither")
        days = (self.end - self.start).days
        return [self.start.date() + timedelta(days=i) for i in range(days)]


def _table(document: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
    value = document.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: [{key}] must be a table")
    return value


def _str(table: Mapping[str, Any], key: str, path: Path, section: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, date | datetime):
        return value.isoformat()
    if not isinstance(value, str):
        raise ConfigError(f"{path}: {section}.{key} must be a string, got {value!r}")
    return value


def _read_toml(path: Path) -> Mapping[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config file ({error.strerror})") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from error


def _run_kwargs(run: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """``[run]``: lake (relative to the file's folder), start, end, engine."""
    kwargs: dict[str, Any] = {}
    if (lake := _str(run, "lake", path, "run")) is not None:
        kwargs["lake"] = os.path.normpath(path.parent / lake) if "://" not in lake else lake
    for key in ("start", "end"):
        if (text := _str(run, key, path, "run")) is not None:
            kwargs[key] = parse_instant(text, f"{path}: run.{key}")
    if (engine := _str(run, "engine", path, "run")) is not None:
        kwargs["engine"] = engine
    return kwargs


def _secrets_kwargs(secrets: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """``[secrets]``: environment variable names as given, file names relative to the file."""
    kwargs: dict[str, Any] = {}
    for key in ("fingerprint_key", "token_secret"):
        if (env := _str(secrets, f"{key}_env", path, "secrets")) is not None:
            kwargs[f"{key}_env"] = env
        if (file := _str(secrets, f"{key}_file", path, "secrets")) is not None:
            kwargs[f"{key}_file"] = str(path.parent / file)
    return kwargs


def _rules(document: Mapping[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    """``[rules.<area>]`` tables, unchecked here (``area_rules`` checks each area's keys)."""
    rules = _table(document, "rules", path)
    for area, table in rules.items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{path}: [rules.{area}] must be a table")
    return {str(area): dict(table) for area, table in rules.items()}


def _source_specs(
    document: Mapping[str, Any], path: Path, default_tz: str
) -> tuple[SourceSpec, ...]:
    """``[[sources]]``: paths relative to the file's folder, zone defaulting to the run's."""
    sources = document.get("sources", [])
    if not isinstance(sources, list):
        raise ConfigError(f"{path}: [[sources]] must be an array of tables")
    specs = []
    for index, item in enumerate(sources):
        where = f"sources[{index}]"
        if not isinstance(item, Mapping) or not _str(item, "path", path, where):
            raise ConfigError(f"{path}: {where} needs a 'path' string")
        source_path = str(item["path"])
        if not Path(source_path).is_absolute():
            source_path = os.path.normpath(path.parent / source_path)
        specs.append(
            SourceSpec(
                path=source_path,
                time_zone=_str(item, "time_zone", path, where) or default_tz,
                node_id=_str(item, "node_id", path, where),
                layout_pattern=_str(item, "layout_pattern", path, where),
            )
        )
    return tuple(specs)


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a TOML config file into RunConfig keyword arguments (relative paths resolved
    against the file's folder).

    Raises:
        ConfigError: unreadable file, TOML syntax error, wrong types.
    """
    document = _read_toml(path)
    run = _table(document, "run", path)
    spark = _table(document, "spark", path)
    secrets = _table(document, "secrets", path)
    kwargs: dict[str, Any] = {**_run_kwargs(run, path), **_secrets_kwargs(secrets, path)}
    kwargs["rules"] = _rules(document, path)
    if (master := _str(spark, "master", path, "spark")) is not None:
        kwargs["master"] = master
    conf = _table(spark, "conf", path)
    kwargs["spark_conf"] = {str(k): str(v) for k, v in conf.items()}
    default_tz = _str(run, "time_zone", path, "run") or "UTC"
    kwargs["sources"] = _source_specs(document, path, default_tz)
    kwargs["default_time_zone"] = check_time_zone(default_tz, f"{path}: run.time_zone")
    return kwargs


def build_config(file_kwargs: Mapping[str, Any], **overrides: Any) -> RunConfig:
    """Merge config-file values with CLI overrides (CLI wins; ``None`` means not given)."""
    merged = {k: v for k, v in file_kwargs.items() if k != "default_time_zone"}
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "sources":
            merged["sources"] = tuple(merged.get("sources", ())) + tuple(value)
        else:
            merged[key] = value
    merged.setdefault("sources", ())
    merged.setdefault("lake", "")
    return RunConfig(**merged)


def with_run_id(config: RunConfig, run_id: str | None) -> RunConfig:
    """Return ``config`` with ``run_id`` replaced when one is given."""
    return replace(config, run_id=run_id) if run_id else config


def area_rules(config: RunConfig, area: str, cls: type[RulesT]) -> RulesT:
    """The ``[rules.<area>]`` table of ``config`` as ``cls`` (a dataclass whose fields all have
    defaults: Kafka's defaults or the project's documented ones).

    Raises:
        ConfigError: an unknown key, or a value of the wrong type (ints where floats are
            expected are accepted; lists must hold the field's element type).
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    table = dict(config.rules.get(area, {}))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ConfigError(
            f"[rules.{area}]: unknown key(s) {', '.join(unknown)}; known: {', '.join(fields)}"
        )
    defaults = cls()
    values: dict[str, Any] = {}
    for name, given in table.items():
        default = getattr(defaults, name)
        expected = type(default)
        value = given
        if isinstance(default, float) and isinstance(given, int) and not isinstance(given, bool):
            value = float(given)
        elif isinstance(default, tuple):
            if not isinstance(given, list):
                raise ConfigError(f"[rules.{area}].{name} must be a list, got {given!r}")
            value = tuple(given)
        elif default is not None and (
            not isinstance(given, expected) or isinstance(given, bool) != isinstance(default, bool)
        ):
            raise ConfigError(f"[rules.{area}].{name} must be {expected.__name__}, got {value!r}")
        values[name] = value
    return dataclasses.replace(defaults, **values)
