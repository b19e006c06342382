"""docs/config.schema.json: generated from the config models, current, and usable by editors
(the shipped files pass it, a typo fails it)."""

from __future__ import annotations

import json
import tomllib
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from jobs.config import config_json_schema, main

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "config.schema.json"
REGENERATE = ".venv/bin/python -m jobs.config --schema > docs/config.schema.json"


def _as_json(value: Any) -> Any:
    """A TOML document as an editor validates it: dates and times are strings."""
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    if isinstance(value, date | datetime | time):
        return value.isoformat()
    return value


def test_the_published_schema_is_current() -> None:
    published = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert published == config_json_schema(), f"docs/config.schema.json is stale: {REGENERATE}"


def test_main_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--schema"]) == 0
    assert capsys.readouterr().out == SCHEMA.read_text(encoding="utf-8")
    for wrong in (["--schem"], []):
        with pytest.raises(SystemExit) as caught:
            main(wrong)
        assert caught.value.code == 2, wrong


def test_the_schema_names_every_section_and_area() -> None:
    schema = config_json_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert list(schema["properties"]) == ["run", "sources", "secrets", "spark", "rules", "notify"]
    assert schema["additionalProperties"] is False
    rules = schema["definitions"]["RulesTables"]
    assert list(rules["properties"]) == ["reauth", "tokens", "forwarding", "connect", "authorizer"]
    run = schema["definitions"]["RunTable"]["properties"]
    assert run["engine"]["enum"] == ["auto", "native", "embedded"]
    assert "null" not in json.dumps(schema)  # TOML has no null: an optional key is left out


@pytest.mark.parametrize("name", ["default.toml", "demo.toml"])
def test_the_shipped_files_point_at_the_schema(name: str) -> None:
    first = (ROOT / "conf" / name).read_text(encoding="utf-8").splitlines()[0]
    assert first == "#:schema ../docs/config.schema.json"
    assert (ROOT / "conf" / first.removeprefix("#:schema ")).resolve() == SCHEMA


def test_an_editor_validating_with_the_schema_agrees_with_the_loader() -> None:
    validator = jsonschema.Draft7Validator(config_json_schema())
    for name in ("default.toml", "demo.toml"):
        document = tomllib.loads((ROOT / "conf" / name).read_text(encoding="utf-8"))
        assert list(validator.iter_errors(_as_json(document))) == [], name
    typos = {
        "run": {"timezone": "UTC"},
        "rules": {"reauht": {}},
        "spark": {"conf": {"spark": {"sql": "1"}}},
    }
    for section, table in typos.items():
        errors = list(validator.iter_errors({section: table}))
        assert len(errors) == 1, (section, errors)
    assert not list(
        validator.iter_errors({"run": {"start": "2026-11-20"}, "sources": [{"path": "x"}]})
    )
