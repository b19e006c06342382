"""``kafka-audit generate``: determinism, streams, layouts, rotation and gzip, and the
pipeline's bronze parsing every generated line (docs/generator.md)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jobs.cli.main import main
from jobs.simulator.generate import AREAS, generate, load_areas
from jobs.simulator.layouts import DEFAULT_LAYOUTS, LAYOUTS, LOG4J_CONFIG_PATTERN
from jobs.simulator.world import GenerateOptions
from transforms.bronze.layout import HEADER_PATTERN
from transforms.bronze.log4j_pattern import BUILTIN_LAYOUTS, compile_pattern

HEADER = re.compile(HEADER_PATTERN)
#: Every layout the generator writes, as (regex, logger group): Kafka's fast one, the other
#: distributions' and the one a node's log4j.properties declares.
_COMPILED = [*BUILTIN_LAYOUTS, compile_pattern(LOG4J_CONFIG_PATTERN, "logging_config")]
HEADERS = [(HEADER, 6), *((re.compile(c.regex), c.groups["logger"]) for c in _COMPILED)]


def header_logger(line: str) -> str | None:
    """The logger of a record's first line in any generated layout; None for a continuation."""
    for regex, group in HEADERS:
        match = regex.match(line)
        if match is not None:
            return match.group(group)
    return None


#: The layout name transforms.bronze.layout gives each simulator layout.
PARSED_LAYOUT = {"log4j": "log4j", "container": "log4j", "logger-line": "log4j_line",
                 "strimzi": "strimzi"}  # fmt: skip


def _options(out: Path, **overrides: object) -> GenerateOptions:
    base: dict[str, object] = {
        "out": out, "brokers": 4, "controllers": 1, "connect_workers": 1, "clients": 9,
        "hours": 2.0, "lines_target": 3000, "seed": 7,
    }  # fmt: skip
    base.update(overrides)
    return GenerateOptions(**base)  # type: ignore[arg-type]


def _read(path: Path) -> list[str]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return handle.read().splitlines()
    return path.read_text(encoding="utf-8").splitlines()


def _digest(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (gz files by their content), by relative path."""
    return {
        str(p.relative_to(root)): hashlib.sha256("\n".join(_read(p)).encode()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate(_options(out), progress=None)
    return out


def test_same_seed_same_corpus_other_seed_other_corpus(corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate(_options(again), progress=None)
    assert _digest(again) == _digest(corpus)
    other = tmp_path / "other"
    generate(_options(other, seed=8), progress=None)
    assert _digest(other) != _digest(corpus)


def test_every_area_and_stream_is_present(corpus: Path) -> None:
    assert [a.name for a in load_areas()] == [name for name, _, _ in AREAS]
    files = {str(p.relative_to(corpus)) for p in corpus.rglob("*") if p.is_file()}
    for broker in ("broker-1", "broker-2", "broker-3", "broker-4"):
        for name in ("server.log", "kafka-request.log", "kafka-authorizer.log",
                     "server.properties"):  # fmt: skip
            assert f"{broker}/{name}" in files
    assert "controller-1/server.properties" in files
    assert "connect-1/connect-distributed.properties" in files
    for name in ("security_metrics.jsonl", "token_lifecycle.jsonl", "findings.jsonl",
                 "README.md"):  # fmt: skip
        assert f"truth/{name}" in files
    loggers = Counter(
        HEADER.match(line).group(6)  # type: ignore[union-attr]
        for path in corpus.glob("broker-*/*.log")
        for line in _read(path)
        if HEADER.match(line)
    )
    for logger in ("kafka.request.logger", "kafka.authorizer.logger",
                   "org.apache.kafka.common.network.Selector", "kafka.network.Processor",
                   "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"):  # fmt: skip
        assert loggers[logger] > 0, logger


def test_each_broker_writes_its_layout_and_request_form(corpus: Path) -> None:
    # Brokers take the layouts in turn; versions cycle 3.9.1, 2.7.2, 4.1.0, 3.6.2 ('mixed').
    seen = {}
    for i, layout in enumerate(DEFAULT_LAYOUTS, 1):
        lines = _read(corpus / f"broker-{i}" / "kafka-request.log")
        matches = [HEADER.match(line) for line in lines]
        assert all(matches), layout
        groups = {(m.group(1), m.group(2), m.group(7) is not None, m.group(8) is not None)
                  for m in matches if m}  # fmt: skip
        seen[layout] = groups
    assert seen["log4j"] == {("", "[", False, False)}
    assert seen["logger-line"] == {("", "[", True, False)}
    assert seen["strimzi"] == {("", "", False, True)}
    assert seen["container"] == {("broker-4 kafka ", "[", False, False)}
    old = next(
        line for line in _read(corpus / "broker-2" / "kafka-request.log") if "client-0" in line
    )
    assert "Completed request:RequestHeader(apiKey=" in old  # 2.7: the string form
    new = next(
        line for line in _read(corpus / "broker-1" / "kafka-request.log") if "client-0" in line
    )
    body = new.split("Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0]
    assert list(json.loads(body))[:2] == ["isForwarded", "requestHeader"]  # 2.8+: JSON


def test_rotation_and_gzip(tmp_path: Path) -> None:
    out = tmp_path / "rotated"
    summary = generate(_options(out, rotate_lines=200, gzip=True), progress=None)
    plain = tmp_path / "plain"
    generate(_options(plain), progress=None)
    request = sorted(p.name for p in (out / "broker-1").glob("kafka-request.log*"))
    assert request[0] == "kafka-request.log"
    assert all(re.fullmatch(r"kafka-request\.log\.\d+\.gz", n) for n in request[1:])
    assert len(request) > 2
    for folder in sorted(p for p in plain.iterdir() if p.name.startswith("broker")):
        for stream in ("server.log", "kafka-request.log", "kafka-authorizer.log"):
            parts = sorted((out / folder.name).glob(f"{stream}*"), key=_age, reverse=True)
            joined = [line for part in parts for line in _read(part)]
            assert joined == _read(folder / stream), f"{folder.name}/{stream}"
            assert all(len(_read(p)) <= 200 + 3 for p in parts)  # a handshake stays whole
    assert summary.lines == sum(len(_read(p)) for p in out.rglob("*.log*"))
    # The same seed gives the same bytes, gzip files included (their header holds no time).
    again = tmp_path / "again"
    generate(_options(again, rotate_lines=200, gzip=True), progress=None)
    zipped = sorted(p.relative_to(out) for p in out.rglob("*.gz"))
    assert zipped == sorted(p.relative_to(again) for p in again.rglob("*.gz"))
    assert [(out / z).read_bytes() for z in zipped] == [(again / z).read_bytes() for z in zipped]


def _age(path: Path) -> int:
    """0 for the live file, N for ``name.N[.gz]`` (older)."""
    match = re.search(r"\.log\.(\d+)", path.name)
    return int(match.group(1)) if match else 0


def test_truth_evidence_points_at_the_tagged_lines(corpus: Path) -> None:
    findings = [json.loads(line) for line in _read(corpus / "truth" / "findings.jsonl")]
    rules = {f["rule_id"] for f in findings}
    assert {"authorizer.default_allow", "authorizer.denial_burst",
            "reauth.no_reauth_client_on_expiring_listener"} <= rules  # fmt: skip
    for finding in findings:
        for position in finding["evidence"]:
            line = _read(corpus / position["source_path"])[position["line_number"] - 1]
            if finding["rule_id"] == "authorizer.denial_burst":
                assert f"Principal = {finding['subject']} is Denied" in line
            if finding["rule_id"] == "authorizer.default_allow":
                assert "based on rule DefaultAllow" in line


def test_cli_generate_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    code = main(["generate", "--out", str(out), "--lines-target", "500", "--hours", "1",
                 "--brokers", "1", "--clients", "3", "--seed", "3"])  # fmt: skip
    assert code == 0
    assert "generated" in capsys.readouterr().out
    assert (out / "broker-1" / "kafka-request.log").exists()
    assert main(["generate", "--out", str(tmp_path / "x"), "--hours", "0"]) == 2
    assert "--hours" in capsys.readouterr().err


#: The family transforms.silver.families gives each logger of the auth / request / authorizer areas.
FAMILY_OF_LOGGER = {
    "kafka.request.logger": "request",
    "kafka.authorizer.logger": "authz",
    "org.apache.kafka.common.network.Selector": "auth",
    "kafka.network.Processor": "auth",
    "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator": "auth",
}


def test_bronze_parses_every_generated_line(spark: SparkSession, tmp_path: Path) -> None:
    """Every layout (one node each, log4j-config's from the log4j.properties the generator
    writes beside its logs), rotated and gzipped files: one bronze record per generated record,
    each line of these areas' loggers claimed by its family, nothing quarantined, no line in an
    unrecognized layout."""
    from jobs.config import RunConfig, SourceSpec  # noqa: PLC0415
    from jobs.fingerprint_keys import ephemeral_key  # noqa: PLC0415
    from jobs.inputs import discover_sources  # noqa: PLC0415
    from jobs.pipeline import build_frames  # noqa: PLC0415

    out = tmp_path / "parse"
    opts = _options(out, lines_target=1400, rotate_lines=300, gzip=True, hours=1.0,
                    clients=6, brokers=6, layouts=LAYOUTS)  # fmt: skip
    generate(opts, progress=None)
    assert (out / "controller-1" / "log4j.properties").exists()  # the 7th node: log4j-config
    expected: Counter[tuple[str, str | None]] = Counter()
    for path in out.rglob("*.log*"):
        for line in _read(path):
            logger = header_logger(line)
            if logger is not None:  # else a continuation line of a stack trace
                expected[(logger, FAMILY_OF_LOGGER.get(logger, "?"))] += 1
    sources = (SourceSpec(str(out)),)
    config = RunConfig(sources=sources, lake="(none)", run_id="t")
    frames = build_frames(spark, discover_sources(sources), config, ephemeral_key())
    rows = frames.bronze.groupBy("logger", "family").agg(F.count(F.lit(1)).alias("n")).collect()
    got: Counter[tuple[str, str | None]] = Counter()
    for row in rows:
        family = row["family"] if row["logger"] in FAMILY_OF_LOGGER else "?"
        got[(row["logger"], family)] += int(row["n"])
    assert got == expected
    assert frames.quarantine.count() == 0
    layouts = {row["layout"] for row in frames.bronze.select("layout").distinct().collect()}
    assert layouts == {"log4j", "log4j_line", "strimzi", "confluent_operator",
                       "bracketed_fields", "logging_config"}  # fmt: skip
