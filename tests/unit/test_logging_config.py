"""A node's logging config -> the ConversionPattern of each log file: one case per format
(Kafka's shipped files reproduced), rotation suffixes, fallbacks, and errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.errors import ConfigError
from jobs.logging_config import (
    LOGGING_CONFIG_NAMES,
    LoggingLayouts,
    folder_logging_config,
    read_logging_config,
)

KAFKA = "[%d] %p %m (%c)%n"
CONNECT = "[%d] %p %X{connector.context}%m (%c:%L)%n"
STRIMZI = "%d{ISO8601} %p %m (%c) [%t]%n"
# The file appenders of Kafka's shipped configs (3.9 names; 4.0 capitalises them).
KAFKA_APPENDERS = {
    "kafkaAppender": "server.log",
    "stateChangeAppender": "state-change.log",
    "requestAppender": "kafka-request.log",
    "cleanerAppender": "log-cleaner.log",
    "controllerAppender": "controller.log",
    "authorizerAppender": "kafka-authorizer.log",
}
KAFKA_FILES = tuple(KAFKA_APPENDERS.values())

# Kafka 3.9 config/log4j.properties (license header and comments cut).
LOG4J_FILE_APPENDER = """
log4j.appender.{name}=org.apache.log4j.DailyRollingFileAppender
log4j.appender.{name}.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.{name}.File=${{kafka.logs.dir}}/{file}
log4j.appender.{name}.layout=org.apache.log4j.PatternLayout
log4j.appender.{name}.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
KAFKA_39_PROPERTIES = (
    """
log4j.rootLogger=INFO, stdout, kafkaAppender

log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
    + "".join(LOG4J_FILE_APPENDER.format(name=n, file=f) for n, f in KAFKA_APPENDERS.items())
    + """
log4j.logger.kafka=INFO, kafkaAppender
log4j.additivity.kafka=false
log4j.logger.kafka.authorizer.logger=INFO, authorizerAppender
log4j.additivity.kafka.authorizer.logger=false
"""
)

# Kafka 4.0 config/log4j2.yaml (comments and most loggers cut).
LOG4J2_ROLLING_FILE = """
      - name: {name}
        fileName: "${{sys:kafka.logs.dir}}/{file}"
        filePattern: "${{sys:kafka.logs.dir}}/{file}.%d{{yyyy-MM-dd-HH}}"
        PatternLayout:
          pattern: "${{logPattern}}"
        TimeBasedTriggeringPolicy:
          modulate: true
          interval: 1
"""
KAFKA_40_YAML = (
    """
Configuration:
  Properties:
    Property:
      # Fallback if the system property is not set
      - name: "kafka.logs.dir"
        value: "."
      - name: "logPattern"
        value: "[%d] %p %m (%c)%n"

  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "${logPattern}"

    RollingFile:
"""
    + "".join(
        LOG4J2_ROLLING_FILE.format(name=n[0].upper() + n[1:], file=f)
        for n, f in KAFKA_APPENDERS.items()
    )
    + """
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
        - ref: KafkaAppender
    Logger:
      - name: kafka.authorizer.logger
        level: INFO
        additivity: false
        AppenderRef:
          ref: AuthorizerAppender
"""
)

# Kafka 3.9 config/connect-log4j.properties (comments cut).
CONNECT_PROPERTIES = """
log4j.rootLogger=INFO, stdout, connectAppender
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.connectAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.connectAppender.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.connectAppender.File=${kafka.logs.dir}/connect.log
log4j.appender.connectAppender.layout=org.apache.log4j.PatternLayout
connect.log.pattern=[%d] %p %X{connector.context}%m (%c:%L)%n
log4j.appender.stdout.layout.ConversionPattern=${connect.log.pattern}
log4j.appender.connectAppender.layout.ConversionPattern=${connect.log.pattern}
log4j.logger.org.reflections=ERROR
"""

# Kafka 4.0 config/connect-log4j2.yaml: rotated files are connect-<date>.log.
CONNECT_YAML = """
Configuration:
  Properties:
    Property:
      - name: "kafka.logs.dir"
        value: "."
      - name: "logPattern"
        value: "[%d] %p %X{connector.context}%m (%c:%L)%n"
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "${logPattern}"
    RollingFile:
      - name: ConnectAppender
        fileName: "${sys:kafka.logs.dir}/connect.log"
        filePattern: "${sys:kafka.logs.dir}/connect-%d{yyyy-MM-dd-HH}.log"
        PatternLayout:
          pattern: "${logPattern}"
"""

# Strimzi's broker log4j.properties: the console only (the pod's log is the container's).
STRIMZI_PROPERTIES = """
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %p %m (%c) [%t]%n
log4j.rootLogger=${kafka.root.logger.level}, CONSOLE
log4j.logger.kafka.authorizer.logger=INFO
"""

# A log4j2.properties: properties, a console with an env default, two file layouts.
LOG4J2_PROPERTIES = """
status = warn
property.logDir = /var/log/kafka
property.filePattern = [%d] %p %m (%c)%n
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = ${env:CONSOLE_PATTERN:-%d{ISO8601} %p %m (%c) [%t]%n}
appender.rolling.type = RollingFile
appender.rolling.name = SERVER
appender.rolling.fileName = ${logDir}/server.log
appender.rolling.filePattern = ${logDir}/server.log.%d{yyyy-MM-dd-HH}
appender.rolling.layout.type = PatternLayout
appender.rolling.layout.pattern = ${filePattern}
appender.authz.type = RollingFile
appender.authz.name = AUTHZ
appender.authz.fileName = ${sys:kafka.logs.dir}/kafka-authorizer.log
appender.authz.layout.type = PatternLayout
appender.authz.layout.pattern = [%d] [%p] [%t] [%c] - %m%n
appender.json.type = File
appender.json.name = JSON
appender.json.fileName = /var/log/kafka/audit.json
appender.json.layout.type = JsonTemplateLayout
rootLogger = INFO, STDOUT, SERVER
"""

# A log4j2.xml with a namespace, the pattern as attribute and as child element.
LOG4J2_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN" xmlns="https://logging.apache.org/xml/ns">
  <Properties>
    <Property name="logPattern">[%d] %p %m (%c)%n</Property>
    <Property name="logDir" value="/var/log/kafka"/>
  </Properties>
  <Appenders>
    <Console name="STDOUT" target="SYSTEM_OUT">
      <PatternLayout pattern="[%p] %d [%t] %c %M - %m%n"/>
    </Console>
    <RollingFile name="SERVER" fileName="${logDir}/server.log"
                 filePattern="${logDir}/server.log.%d{yyyy-MM-dd-HH}">
      <PatternLayout><Pattern>${logPattern}</Pattern></PatternLayout>
      <TimeBasedTriggeringPolicy/>
    </RollingFile>
    <Appender type="File" name="AUTHZ" fileName="${logDir}/kafka-authorizer.log">
      <Layout type="PatternLayout" pattern="[%d][%p][category=%c] %m%n"/>
    </Appender>
  </Appenders>
  <Loggers><Root level="INFO"><AppenderRef ref="STDOUT"/></Root></Loggers>
</Configuration>
"""

# Lower-case keys, one RollingFile as a mapping, 'Pattern' capitalised, no console.
LENIENT_YAML = """
configuration:
  properties:
    property:
      name: p
      value: "%d{ISO8601} %-5p [%t] %c - %m%n"
  appenders:
    rollingFile:
      name: A
      FileName: /logs/server.log
      patternLayout:
        Pattern: "${p}"
"""

# log4j2.json: the YAML tree in JSON, in the strict form ("appender" entries with a type).
LOG4J2_JSON = """{"configuration": {
  "properties": {"property": [{"name": "dir", "value": "/logs"},
                              {"name": "pat", "value": "[%d] %p %m (%c)%n"}]},
  "appenders": {"appender": [
    {"type": "Console", "name": "OUT",
     "layout": {"type": "PatternLayout", "pattern": "${ctx:x:-${missing:-[%d] %p %X{connector.context}%m (%c:%L)%n}}"}},
    {"type": "RollingFile", "name": "C", "fileName": "${dir}/controller.log",
     "PatternLayout": {"pattern": "${pat}"}}]}}}
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _read(tmp_path: Path, name: str, text: str) -> LoggingLayouts:
    return read_logging_config(_write(tmp_path, name, text))


@pytest.mark.parametrize(
    ("name", "text", "by_file", "console"),
    [
        ("log4j.properties", KAFKA_39_PROPERTIES, dict.fromkeys(KAFKA_FILES, KAFKA), KAFKA),
        ("log4j2.yaml", KAFKA_40_YAML, dict.fromkeys(KAFKA_FILES, KAFKA), KAFKA),
        ("connect-log4j.properties", CONNECT_PROPERTIES, {"connect.log": CONNECT}, CONNECT),
        ("connect-log4j2.yaml", CONNECT_YAML, {"connect.log": CONNECT}, CONNECT),
        ("log4j.properties", STRIMZI_PROPERTIES, {}, STRIMZI),
        (
            "log4j2.properties",
            LOG4J2_PROPERTIES,
            {"server.log": KAFKA, "kafka-authorizer.log": "[%d] [%p] [%t] [%c] - %m%n"},
            STRIMZI,
        ),
        (
            "log4j2.xml",
            LOG4J2_XML,
            {"server.log": KAFKA, "kafka-authorizer.log": "[%d][%p][category=%c] %m%n"},
            "[%p] %d [%t] %c %M - %m%n",
        ),
        ("log4j2.yml", LENIENT_YAML, {"server.log": "%d{ISO8601} %-5p [%t] %c - %m%n"}, None),
        ("log4j2.json", LOG4J2_JSON, {"controller.log": KAFKA}, CONNECT),
    ],
)
def test_each_format_gives_every_file_and_the_console(
    tmp_path: Path, name: str, text: str, by_file: dict[str, str], console: str | None
) -> None:
    layouts = _read(tmp_path, name, text)
    assert layouts.path == tmp_path / name
    assert dict(layouts.by_file) == by_file
    assert layouts.console == console


@pytest.mark.parametrize(
    ("log_file", "expected"),
    [
        ("kafka-authorizer.log", "[%d] [%p] [%t] [%c] - %m%n"),
        ("kafka-authorizer.log.1", "[%d] [%p] [%t] [%c] - %m%n"),
        ("kafka-authorizer.log.2024-01-01-13", "[%d] [%p] [%t] [%c] - %m%n"),
        ("kafka-authorizer.log.2026-11-20-13.gz", "[%d] [%p] [%t] [%c] - %m%n"),
        ("server.log", KAFKA),
        ("server.log.2024-01-01.3.gz", KAFKA),
        ("kafka.out", STRIMZI),  # a stdout capture: the console's
        ("kafkaServer-gc.txt", STRIMZI),
        ("audit.json", STRIMZI),  # not a PatternLayout: no file entry
        ("server.logs", STRIMZI),  # a different name, not a rotation
    ],
)
def test_pattern_for_removes_rotation_and_falls_back_to_the_console(
    tmp_path: Path, log_file: str, expected: str
) -> None:
    layouts = _read(tmp_path, "log4j2.properties", LOG4J2_PROPERTIES)
    assert layouts.pattern_for(tmp_path / "logs" / log_file) == expected


def test_pattern_for_log4j2_date_infix_and_shared_or_no_pattern(tmp_path: Path) -> None:
    connect = _read(tmp_path, "connect-log4j2.yaml", CONNECT_YAML)
    # Same pattern for console and file: tell them apart with a different console.
    assert connect.pattern_for(Path("connect-2025-01-01-13.log")) == CONNECT
    shared = LoggingLayouts(tmp_path, {"a.log": KAFKA, "b.log": KAFKA}, None)
    assert shared.pattern_for(Path("c.out")) == KAFKA
    assert shared.pattern_for(Path("a.log.1")) == KAFKA
    mixed = LoggingLayouts(tmp_path, {"a.log": KAFKA, "b.log": STRIMZI}, None)
    assert mixed.pattern_for(Path("c.out")) is None
    assert mixed.pattern_for(Path("b.log.2024-01-01-13")) == STRIMZI
    infix = LoggingLayouts(tmp_path, {"connect.log": CONNECT}, STRIMZI)
    assert infix.pattern_for(Path("connect-2025-01-01-13-2.log.gz")) == CONNECT
    assert infix.pattern_for(Path("other-2025-01-01.log")) == STRIMZI


def test_log4j1_defaults_and_other_layouts(tmp_path: Path) -> None:
    layouts = _read(
        tmp_path,
        "log4j.properties",
        "log4j.appender.plain=org.apache.log4j.FileAppender\n"
        "log4j.appender.plain.file=/x/plain.log\n"  # option names are case-insensitive
        "log4j.appender.plain.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.json=org.apache.log4j.FileAppender\n"
        "log4j.appender.json.File=/x/json.log\n"
        "log4j.appender.json.layout=net.logstash.log4j.JSONEventLayoutV1\n"
        "log4j.appender.unknown=org.apache.log4j.FileAppender\n"
        "log4j.appender.unknown.File=${sys:log.file}\n"
        "log4j.appender.unknown.layout.ConversionPattern=%m%n\n",
    )
    assert dict(layouts.by_file) == {"plain.log": "%m%n"}
    assert layouts.console is None


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("log4j2.yaml", "Configuration:\n  Appenders: [unclosed\n", "not valid YAML"),
        ("log4j2.yaml", "- just\n- a list\n", "no 'Configuration' mapping"),
        ("log4j2.yaml", "Configuration:\n  Appenders:\n    RollingFile:\n      - oops\n",
         "Appenders.RollingFile must be a mapping or a list of mappings"),
        ("log4j2.yaml", "Configuration:\n  Appenders: [a, b]\n", "Appenders must be a mapping"),
        ("log4j2.yaml",
         "Configuration:\n  Appenders:\n    Console:\n      PatternLayout:\n        pattern: [a]\n",
         "PatternLayout pattern must be a string"),
        ("log4j2.xml", "<Configuration><Appenders></Configuration>", "not valid XML"),
        ("log4j2.xml", "<log4j:configuration xmlns:log4j='http://jakarta.apache.org/log4j/'/>",
         "not log4j2's <Configuration>"),
        ("log4j2.xml", "<Properties/>", "not log4j2's <Configuration>"),
        ("log4j.properties", "log4j.appender.a.layout.ConversionPattern=\\uZZZZ\n",
         "not a valid properties file"),
        ("log4j2.conf", "x", "unknown logging config format"),
    ],
)  # fmt: skip
def test_malformed_configs_raise_config_error_naming_the_file(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(ConfigError) as raised:
        read_logging_config(path)
    assert str(path) in str(raised.value)
    assert reason in str(raised.value)
    assert "\n" not in str(raised.value)  # the CLI prints it on one line


def test_unreadable_config_raises_config_error(tmp_path: Path) -> None:
    (tmp_path / "log4j2.yaml").mkdir()
    with pytest.raises(ConfigError, match="cannot read logging config"):
        read_logging_config(tmp_path / "log4j2.yaml")
    bad = tmp_path / "x.yaml"
    bad.write_bytes(b"Configuration: \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read logging config"):
        read_logging_config(bad)


def test_folder_takes_the_first_config_by_preference(tmp_path: Path) -> None:
    assert LOGGING_CONFIG_NAMES[0] == "log4j2.yaml"
    assert not any(name.startswith("tools-") for name in LOGGING_CONFIG_NAMES)
    assert folder_logging_config(tmp_path) is None
    _write(tmp_path, "tools-log4j.properties", STRIMZI_PROPERTIES)
    assert folder_logging_config(tmp_path) is None  # the tools' config is not the node's
    _write(tmp_path, "connect-log4j.properties", CONNECT_PROPERTIES)
    _write(tmp_path, "log4j.properties", STRIMZI_PROPERTIES)
    found = folder_logging_config(tmp_path)
    assert found is not None and found.path == tmp_path / "log4j.properties"
    _write(tmp_path, "log4j2.yaml", KAFKA_40_YAML)
    found = folder_logging_config(tmp_path)
    assert found is not None and found.path == tmp_path / "log4j2.yaml"
    assert found.pattern_for(tmp_path / "kafka-request.log.2026-11-20-13.gz") == KAFKA
