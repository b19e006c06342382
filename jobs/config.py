"""Run configuration: TOML files (``conf/*.toml``) and CLI overrides, into frozen dataclasses.

A file is validated whole when it is loaded, by pydantic models of its tables (``ConfigFile``):
every unknown key and wrong type is reported on one ``ConfigError`` line naming the file, the
dotted key and the nearest valid key or what was expected (docs/configuration.md). The JSON
schema editors use is generated from the same models: ``python -m jobs.config --schema``
(docs/config.schema.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import re
import sys
import tomllib
import typing
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, NoDefault
from pydantic_core import CoreSchema, ErrorDetails, core_schema

from jobs.errors import ConfigError
from jobs.rules import RulesTables, rules_adapter
from schemas.raw_lines import LAYOUT_DECLARED
from transforms.bronze.log4j_pattern import LayoutPatternError, compile_pattern

ENGINES = ("auto", "native", "embedded")
Engine = Literal["auto", "native", "embedded"]
#: ``schemas.findings.SEVERITIES``, most severe first (not imported from there, to keep the
#: config free of pyspark; tests/unit/test_notify.py checks the two agree).
SEVERITY_NAMES = ("high", "medium", "low", "info")
Severity = Literal["high", "medium", "low", "info"]

RulesT = TypeVar("RulesT")

#: URI schemes of object stores people try as a lake; none is supported by this install.
OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "r2")

_AN_INSTANT = "a date or ISO-8601 timestamp (e.g. 2026-11-20)"
_A_WEBHOOK = (
    "expected an http:// or https:// URL with a host (the value is not shown: webhook URLs "
    "carry tokens)"
)


def _zone(zone: str) -> str:
    """``zone`` if it is an IANA zone id; else ValueError."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {zone!r} (expected e.g. UTC)") from error
    return zone


def check_time_zone(zone: str, where: str) -> str:
    """Return ``zone`` if it is a valid IANA zone id, else raise ConfigError naming ``where``."""
    try:
        return _zone(zone)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from error


def _lake(location: str) -> str:
    """``location`` if this install can use it as a lake; else ValueError saying what can."""
    scheme = location.split("://", 1)[0].lower() if "://" in location else ""
    if scheme in ("", "file"):
        return location
    kind = "object-store" if scheme in OBJECT_STORE_SCHEMES else "remote"
    raise ValueError(
        f"{scheme}:// lakes are not supported ({kind} URIs need Spark's Hadoop "
        "connector jars, which this install does not bundle); use a local path, a file:// "
        "URI, or the object store mounted as a folder (mountpoint-s3, gcsfuse, blobfuse2)"
    )


def check_lake_location(location: str, where: str) -> str:
    """Return ``location`` if it is a lake this install can read and write: a local (or
    mounted) path, or a ``file://`` URI.

    Object stores (``s3://``, ``gs://``, ``abfs://``, ...) need Spark's Hadoop connectors
    (hadoop-aws, gcs-connector, hadoop-azure), which come from Maven Central and are not bundled.

    Raises:
        ConfigError: one line naming ``where``, the scheme, and what works instead.
    """
    try:
        return _lake(location)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from error


def _webhook(url: str) -> str:
    """``url`` if it is an http(s) URL with a host; else ValueError. The message never shows
    the value: webhook URLs carry tokens (Slack's ``/services/T…/B…/<token>``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a port that is not a number)
    except ValueError:
        raise ValueError(_A_WEBHOOK) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(_A_WEBHOOK)
    if any(c.isspace() for c in url):
        raise ValueError(_A_WEBHOOK)
    return url


def check_webhook_url(url: str, where: str) -> str:
    """Return ``url`` if it is an ``http://`` or ``https://`` URL with a host.

    Raises:
        ConfigError: one line naming ``where`` and what is expected, without the URL (it
            usually holds a token).
    """
    try:
        return _webhook(url)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from error


def _instant(value: object) -> datetime:
    """A TOML date or date-time, or an ISO-8601 string, as an aware UTC datetime (no offset =
    UTC); else ValueError."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as error:
            raise ValueError(f"{value!r} is not {_AN_INSTANT}") from error
    else:
        raise ValueError(f"{_shown(value)} is not {_AN_INSTANT}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _whole_day(value: datetime) -> datetime:
    """``value`` if it is a UTC midnight; else ValueError saying why it must be."""
    if value.timetz() != time(0, tzinfo=UTC):
        raise ValueError(
            f"{value.isoformat()} is not a UTC midnight; the run window must be whole UTC "
            "days, because tables are partitioned by date and a re-run replaces whole date "
            "partitions"
        )
    return value


def parse_instant(text: str, where: str) -> datetime:
    """Parse ``2026-11-20`` or an ISO-8601 date-time into an aware UTC datetime.

    A value without an offset is taken as UTC. Raises ConfigError naming ``where``.
    """
    try:
        return _instant(text)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from error


def _layout(pattern: str) -> str:
    """``pattern`` if it compiles as a log4j ConversionPattern; else ValueError."""
    try:
        compile_pattern(pattern, LAYOUT_DECLARED)
    except LayoutPatternError as error:
        raise ValueError(str(error)) from error
    return pattern


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
                _layout(self.layout_pattern)
            except ValueError as error:
                raise ConfigError(f"source {self.path!r} layout_pattern: {error}") from error


@dataclass(frozen=True)
class NotifySpec:
    """Where and what ``kafka-audit run`` notifies (``[notify]``, ``--notify URL``;
    docs/notifications.md); validated on construction. No URL: no notification.

    Attributes:
        url: the webhook URL (http or https); it usually carries a token.
        url_env: name of an environment variable holding the URL, instead of ``url``.
        min_severity: notify findings of this severity or above (``high``, ``medium``, ``low``,
            ``info``).
        timeout_s: timeout of each POST attempt, seconds (> 0).
        attempts: POST attempts per finding (>= 1): retries on connection errors, timeouts,
            HTTP 429 and 5xx, with exponential backoff.
    """

    url: str | None = None
    url_env: str | None = None
    min_severity: str = "high"
    timeout_s: float = 10.0
    attempts: int = 3

    def __post_init__(self) -> None:
        if self.url is not None and self.url_env is not None:
            raise ConfigError("notify: give url or url_env, not both")
        if self.url is not None:
            check_webhook_url(self.url, "notify.url")
        if self.min_severity not in SEVERITY_NAMES:
            raise ConfigError(
                f"notify.min_severity: {self.min_severity!r} is not one of "
                + ", ".join(SEVERITY_NAMES)
            )
        if isinstance(self.timeout_s, bool) or not 0 < self.timeout_s < float("inf"):
            raise ConfigError(f"notify.timeout_s: expected a number > 0, got {self.timeout_s!r}")
        if isinstance(self.attempts, bool) or self.attempts < 1:
            raise ConfigError(f"notify.attempts: expected a number >= 1, got {self.attempts!r}")

    def webhook_url(self) -> str | None:
        """The URL to POST to: ``url``, else the value of the variable ``url_env`` (read now),
        else None (notifications off).

        Raises:
            ConfigError: ``url_env`` names a variable that is unset, empty, or not an http(s)
                URL (the value is never shown).
        """
        if self.url_env is None:
            return self.url
        value = os.environ.get(self.url_env, "").strip()
        if not value:
            raise ConfigError(f"notify.url_env: environment variable {self.url_env} is not set")
        return check_webhook_url(value, f"notify.url_env: variable {self.url_env}")


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
            (``[rules.reauth]``, ``[rules.tokens]``, ...): checked when a file is loaded, and
            read by ``area_rules``.
        notify: the webhook of new findings (``[notify]``, ``--notify``); no URL = off.
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
    notify: NotifySpec = field(default_factory=NotifySpec)

    def __post_init__(self) -> None:
        if not self.sources:
            raise ConfigError("no input: give --input PATH or [[sources]] in the config file")
        if not self.lake:
            raise ConfigError("no lake: give --lake PATH or run.lake in the config file")
        if self.engine not in ENGINES:
            raise ConfigError(f"run.engine: {self.engine!r} is not one of {', '.join(ENGINES)}")
        for name in ("start", "end"):
            if (value := getattr(self, name)) is not None:
                try:
                    _whole_day(value)
                except ValueError as error:
                    raise ConfigError(f"run.{name}: {error}") from error
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


def _spark_value(value: object) -> str:
    """A ``[spark.conf]`` value as Spark reads it (``true``, ``4``); else ValueError."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    hint = ' (quote a dotted Spark key: "spark.sql.shuffle.partitions" = "4")'
    raise ValueError(
        f"expected a string, number or boolean, got {_shown(value)}"
        + (hint if isinstance(value, Mapping) else "")
    )


#: Every table: unknown keys and wrong types are errors (an integer is no string, 1 no bool).
_TABLE = ConfigDict(
    extra="forbid", strict=True, frozen=True, use_attribute_docstrings=True, defer_build=True
)
TimeZone = Annotated[str, AfterValidator(_zone)]
Midnight = Annotated[
    datetime, BeforeValidator(_instant, json_schema_input_type=str), AfterValidator(_whole_day)
]
NonEmpty = Annotated[str, Field(min_length=1)]
SparkValue = Annotated[
    str, BeforeValidator(_spark_value, json_schema_input_type=str | int | float | bool)
]


class RunTable(BaseModel):
    """``[run]``: where the tables go, how they are written, which days."""

    model_config = _TABLE
    lake: Annotated[NonEmpty, AfterValidator(_lake)] | None = None
    """Root folder of the Delta tables (relative to this file), or a file:// URI."""
    engine: Engine = "auto"
    """Delta engine: native delta-spark when its jars are on the classpath, else delta-rs."""
    time_zone: TimeZone = "UTC"
    """Zone of the log4j timestamps (written in local time, no offset); per source too."""
    start: Midnight | None = None
    """Run window start, a UTC midnight (2026-11-20); leave start and end out for all records."""
    end: Midnight | None = None
    """Run window end, exclusive, a UTC midnight."""


class SourceTable(BaseModel):
    """``[[sources]]``: one input, a file, a folder (of node folders) or a glob."""

    model_config = _TABLE
    path: NonEmpty
    """The input, relative to this file."""
    time_zone: TimeZone | None = None
    """Zone of these files' timestamps (default: run.time_zone)."""
    node_id: NonEmpty | None = None
    """Force the node id of every file under path (default: discovered)."""
    layout_pattern: Annotated[NonEmpty, AfterValidator(_layout)] | None = None
    """The log4j ConversionPattern of these files, when none of the built-in ones."""


class SecretsTable(BaseModel):
    """``[secrets]``: keys by reference (an environment variable or a file), never by value."""

    model_config = _TABLE
    fingerprint_key_env: NonEmpty | None = None
    """Environment variable holding the fingerprint key."""
    fingerprint_key_file: NonEmpty | None = None
    """File holding the fingerprint key (relative to this file)."""
    token_secret_env: NonEmpty | None = None
    """Environment variable holding the cluster's delegation.token.secret.key (KIP-48)."""
    token_secret_file: NonEmpty | None = None
    """File holding the cluster's delegation.token.secret.key (relative to this file)."""


class SparkTable(BaseModel):
    """``[spark]``: the session the job builds when it runs as a plain program."""

    model_config = _TABLE
    master: NonEmpty = "local[*]"
    """Spark master (spark-submit's own master wins there)."""
    conf: dict[str, SparkValue] = Field(default_factory=dict)
    """Extra Spark settings; quote dotted keys ("spark.sql.shuffle.partitions" = "4")."""


class NotifyTable(BaseModel):
    """``[notify]``: POST each new finding at or above a severity to a webhook, once per
    finding id (docs/notifications.md)."""

    model_config = _TABLE
    url: Annotated[NonEmpty, AfterValidator(_webhook)] | None = None
    """Webhook URL (http:// or https://). It usually carries a token: prefer url_env."""
    url_env: NonEmpty | None = None
    """Environment variable holding the webhook URL (instead of url)."""
    min_severity: Severity = "high"
    """Notify findings of this severity or above."""
    timeout_s: Annotated[float, Field(gt=0)] = 10.0
    """Timeout of each POST attempt, in seconds."""
    attempts: Annotated[int, Field(ge=1, le=10)] = 3
    """POST attempts per finding; retried with exponential backoff on connection errors,
    timeouts, HTTP 429 and 5xx, never on another 4xx."""

    @model_validator(mode="after")
    def _one_url(self) -> NotifyTable:
        if self.url is not None and self.url_env is not None:
            raise ValueError("give url or url_env, not both")
        return self


class ConfigFile(BaseModel):
    """A kafka-security-audit configuration file (conf/default.toml lists every key)."""

    model_config = ConfigDict(**_TABLE, title="kafka-security-audit configuration")
    run: RunTable = Field(default_factory=RunTable)
    """Where the tables go, how they are written, which days."""
    sources: list[SourceTable] = Field(default_factory=list)
    """The inputs, one [[sources]] table each."""
    secrets: SecretsTable = Field(default_factory=SecretsTable)
    """Keys by reference."""
    spark: SparkTable = Field(default_factory=SparkTable)
    """The Spark session."""
    rules: RulesTables = Field(default_factory=RulesTables)
    """Thresholds of the audit rules, one table per area."""
    notify: NotifyTable = Field(default_factory=NotifyTable)
    """The webhook new findings are posted to."""


def _shown(value: object) -> str:
    """``value`` as a TOML reader would name it: ``'spark'``, ``3``, ``true``, a table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, date | time):
        return value.isoformat()
    return repr(value)


def _dotted(loc: Sequence[str | int]) -> str:
    """``('sources', 0, 'time_zone')`` as ``sources[0].time_zone``; odd keys quoted as in TOML."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part)
            text += f".{name}" if text else name
    return text


def _keys_at(root: Any, loc: Sequence[str | int]) -> list[str]:
    """The valid keys of the table at ``loc`` under ``root`` (a model or dataclass type)."""
    kind = root
    for part in (*loc, None):
        if typing.get_origin(kind) is list:
            kind = typing.get_args(kind)[0]
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            fields = {name: info.annotation for name, info in kind.model_fields.items()}
        elif isinstance(kind, type) and dataclasses.is_dataclass(kind):
            fields = {f.name: None for f in dataclasses.fields(kind)}
        else:
            return []
        if part is None:
            return list(fields)
        if not isinstance(part, int):
            kind = fields.get(part)
    return []


def _unknown_key(root: Any, loc: Sequence[str | int], prefix: tuple[str, ...]) -> str:
    """``unknown key run.timezone: did you mean time_zone?`` (else the valid keys)."""
    parent, name = loc[:-1], str(loc[-1])
    keys = _keys_at(root, parent)
    close = difflib.get_close_matches(name, keys, n=1)
    if not close and not parent and not prefix:  # a key above its table: lake = ... before [run]
        close = [f"{table}.{name}" for table in keys if name in _keys_at(root, (table,))][:1]
    hint = f"did you mean {close[0]}?" if close else f"expected one of {', '.join(keys)}"
    return f"unknown key {_dotted((*prefix, *loc))}: {hint}"


_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "a table",
    "model_type": "a table",
    "dataclass_type": "a table",
    "string_too_short": "a non-empty string",
}


#: pydantic's bound errors: the sign and the ``ctx`` key of the bound.
_BOUNDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}


def _problem(detail: ErrorDetails, root: Any, prefix: tuple[str, ...]) -> str:
    """One pydantic error as ``<dotted key>: expected ..., got ...``."""
    loc = (*prefix, *detail["loc"])
    kind, ctx = detail["type"], detail.get("ctx", {})
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return _unknown_key(root, detail["loc"], prefix)
    if kind in ("missing", "missing_argument"):
        return f"{_dotted(loc)}: required key missing"
    if kind == "value_error":
        return f"{_dotted(loc)}: {ctx['error']}"
    if kind == "literal_error":
        expected = "one of " + ", ".join(re.findall(r"'([^']*)'", str(ctx["expected"])))
    elif kind in _BOUNDS:
        sign, name = _BOUNDS[kind]
        expected = f"a number {sign} {ctx[name]}"
    elif loc == ("sources",):
        expected = "an array of tables ([[sources]], not [sources])"
    else:
        expected = _EXPECTED.get(kind, detail["msg"].removeprefix("Input should be "))
    return f"{_dotted(loc)}: expected {expected}, got {_shown(detail['input'])}"


def _explain(error: ValidationError, root: Any, prefix: tuple[str, ...] = ()) -> str:
    """Every problem of ``error`` (validating ``root``, shown under ``prefix``), on one line."""
    problems = [_problem(detail, root, prefix) for detail in error.errors(include_url=False)]
    return "; ".join(dict.fromkeys(problems))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config file ({error.strerror})") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from error


def _source_specs(parsed: ConfigFile, folder: Path) -> tuple[SourceSpec, ...]:
    """``[[sources]]``: paths relative to the file's folder, zone defaulting to the run's."""
    specs = []
    for source in parsed.sources:
        path = source.path
        if not Path(path).is_absolute():
            path = os.path.normpath(folder / path)
        zone = source.time_zone or parsed.run.time_zone
        specs.append(SourceSpec(path, zone, source.node_id, source.layout_pattern))
    return tuple(specs)


def load_config_file(path: Path) -> dict[str, Any]:
    """Read and validate a TOML config file into RunConfig keyword arguments (relative paths
    resolved against the file's folder), plus ``default_time_zone`` (``run.time_zone``, for
    sources given on the command line).

    A ``[run]``, ``[secrets]`` or ``[spark]`` key the file leaves out is not returned, so
    ``build_config`` and the command line keep their defaults; ``spark_conf``, ``rules``,
    ``sources`` and ``default_time_zone`` always are. ``rules`` holds the ``[rules.<area>]``
    tables as written (checked here, read by ``area_rules``); ``notify`` (a ``NotifySpec``)
    only when the file has a ``[notify]`` table.

    Raises:
        ConfigError: unreadable file, TOML syntax error, or every unknown key and wrong type
            of the file on one line: ``<file>: unknown key run.timezone: did you mean
            time_zone?``, ``<file>: run.engine: expected one of auto, native, embedded, got
            'spark'``; a webhook URL is never shown.
    """
    document = _read_toml(path)
    try:
        parsed = ConfigFile.model_validate(document)
    except ValidationError as error:
        raise ConfigError(f"{path}: {_explain(error, ConfigFile)}") from error
    folder, run, secrets = path.parent, parsed.run, parsed.secrets
    kwargs: dict[str, Any] = {
        key: getattr(run, key) for key in ("start", "end", "engine") if key in run.model_fields_set
    }
    if run.lake is not None:
        kwargs["lake"] = run.lake if "://" in run.lake else os.path.normpath(folder / run.lake)
    for key in secrets.model_fields_set:
        value = getattr(secrets, key)
        kwargs[key] = str(folder / value) if key.endswith("_file") else value
    if "master" in parsed.spark.model_fields_set:
        kwargs["master"] = parsed.spark.master
    kwargs["spark_conf"] = dict(parsed.spark.conf)
    kwargs["rules"] = {area: dict(table) for area, table in document.get("rules", {}).items()}
    kwargs["sources"] = _source_specs(parsed, folder)
    kwargs["default_time_zone"] = run.time_zone
    if "notify" in parsed.model_fields_set:
        kwargs["notify"] = NotifySpec(**parsed.notify.model_dump())
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
    """The ``[rules.<area>]`` table of ``config`` as ``cls``, one of the dataclasses of
    ``jobs.rules`` (every field has a default: Kafka's or the project's documented one).

    A table from a file was checked when the file was loaded; this checks a table given in
    code (``RunConfig(rules=...)``) the same way.

    Raises:
        ConfigError: every unknown key and wrong type, on one line
            (``unknown key rules.connect.grace_ms: did you mean stale_key_grace_ms?``).
    """
    try:
        return typing.cast(RulesT, rules_adapter(cls).validate_python(config.rules.get(area, {})))
    except ValidationError as error:
        raise ConfigError(_explain(error, cls, ("rules", area))) from error


class _TomlJsonSchema(GenerateJsonSchema):
    """JSON Schema draft-07 (what TOML editors read; Taplo's validator dates from draft 4-7) of
    a TOML file: TOML has no null, so an optional key is one left out, not a null value."""

    schema_dialect = "http://json-schema.org/draft-07/schema#"

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # "Time Zone" beside time_zone says nothing

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        default = super().get_default_value(schema)
        return NoDefault if default is None else default

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        generated = super().generate(schema, mode)
        if "$defs" in generated:  # draft-07 keeps them under "definitions"
            generated["definitions"] = generated.pop("$defs")
        return {"$schema": self.schema_dialect, **generated}


def config_json_schema() -> dict[str, Any]:
    """The JSON schema of the config files, generated from ``ConfigFile``: published as
    docs/config.schema.json for editors (``#:schema`` in conf/default.toml)."""
    return ConfigFile.model_json_schema(
        ref_template="#/definitions/{model}", schema_generator=_TomlJsonSchema
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m jobs.config --schema``: print the JSON schema of the config files.

    Returns 0. Raises SystemExit(2) on bad arguments (argparse).
    """
    parser = argparse.ArgumentParser(
        prog="python -m jobs.config",
        description="Print the JSON schema of kafka-audit's TOML config files "
        "(regenerates docs/config.schema.json).",
        allow_abbrev=False,
    )
    parser.add_argument("--schema", action="store_true", required=True, help="print the schema")
    parser.parse_args(argv)
    sys.stdout.write(json.dumps(config_json_schema(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
