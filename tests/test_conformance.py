"""The language-neutral conformance suite (tests/conformance/) run against this package, schema and engine."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gym_contract import KINDS, detect_kind, is_valid, iter_diagnostics, schemas
from gym_contract._vocabulary import SCHEMA_OF_KIND
from gym_contract.checking import check_files
from gym_contract.diagnostics import CODES
from gym_contract.validation import ROLLOUT_ATTACHMENTS
from tests.support import model_accepts, model_entities

SUITE = Path(__file__).parent / "conformance"
NOW = 1_786_100_000.0  # the moment the suite's README fixes
# Codes about reading files or the whole run, not records: the suite has no case for them (its README says so).
READING_CODES = {"input_unreadable", "input_truncated", "utf8_invalid", "line_too_long", "no_records"}


def suite_files() -> list[Path]:
    return sorted(SUITE.glob("*.json"), key=lambda path: path.name)


def groups() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in suite_files():
        if path.name != "suite.schema.json":
            found += [(path.stem, group) for group in json.loads(path.read_text(encoding="utf-8"))]
    return found


def cases() -> list[tuple[str, str | None, dict[str, Any]]]:
    """Cases of records of a kind: what the engine says about each, and the schema's verdict."""
    return [
        (f"{stem}: {test['description']}", group["kind"], test)
        for stem, group in groups()
        if "schema" not in group
        for test in group["tests"]
    ]


def part_cases() -> list[tuple[str, str, dict[str, Any]]]:
    """Cases of a part of a record judged on its own: only its schema's verdict."""
    return [
        (f"{stem}: {test['description']}", group["schema"], test)
        for stem, group in groups()
        if "schema" in group
        for test in group["tests"]
    ]


CASES = cases()
PART_CASES = part_cases()


def as_set(diagnostics: list[dict[str, str]]) -> Counter[tuple[str, str, str]]:
    return Counter((d["code"], d["severity"], d["path"]) for d in diagnostics)


def diagnostics_of_line(line: str, kind: str | None, tmp_path: Path) -> list[dict[str, str]]:
    path = tmp_path / "line.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    report = check_files([str(path)], kind, now=NOW)
    return [{"code": d.code, "severity": d.severity, "path": d.path} for d in report.diagnostics]


@pytest.mark.parametrize(("kind", "test"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_engine_says_what_the_case_expects(kind: str | None, test: dict[str, Any], tmp_path: Path) -> None:
    if "line" in test:
        found = diagnostics_of_line(test["line"], kind, tmp_path)
    else:
        found = [d.to_dict() for d in iter_diagnostics(test["data"], kind, now=NOW)]
        assert is_valid(test["data"], kind, now=NOW) is test["valid"]
    assert as_set(found) == as_set(test["diagnostics"])
    assert test["valid"] is not any(d["severity"] == "error" for d in test["diagnostics"])


def schema_alone(data: Any, kind: str) -> bool:
    """What an implementation that has only the JSON Schemas (here: jsonschema) decides."""
    if kind != "rollout":
        return schemas.validator(SCHEMA_OF_KIND[kind]).is_valid(data)
    attachments = [(data.get(key), name) for key, name in ROLLOUT_ATTACHMENTS.items()]
    return all(
        isinstance(value, dict) and schemas.validator(SCHEMA_OF_KIND[name]).is_valid(value)
        for value, name in attachments
        if value is not None
    )


SCHEMA_CASES = [case for case in CASES if case[2].get("schema_valid") is not None]


@pytest.mark.parametrize(("kind", "test"), [case[1:] for case in SCHEMA_CASES], ids=[c[0] for c in SCHEMA_CASES])
def test_the_schemas_alone_decide_schema_valid(kind: str | None, test: dict[str, Any]) -> None:
    assert schema_alone(test["data"], kind or detect_kind(test["data"])) is test["schema_valid"]
    if test["schema_valid"]:
        assert all(d["code"] != "schema_violation" for d in test["diagnostics"])


@pytest.mark.parametrize(("schema", "test"), [case[1:] for case in PART_CASES], ids=[c[0] for c in PART_CASES])
def test_a_part_of_a_record_is_judged_by_its_own_schema(schema: str, test: dict[str, Any]) -> None:
    assert schemas.validator(schema).is_valid(test["data"]) is test["schema_valid"]


@pytest.mark.parametrize(("schema", "test"), [case[1:] for case in PART_CASES], ids=[c[0] for c in PART_CASES])
def test_the_models_judge_a_part_of_a_record_as_its_schema_does(schema: str, test: dict[str, Any]) -> None:
    assert model_accepts(model_entities()[schema], test["data"]) is test["schema_valid"]


def test_every_file_follows_the_suite_format() -> None:
    suite_schema = json.loads((SUITE / "suite.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(suite_schema)
    for path in suite_files():
        if path.name != "suite.schema.json":
            jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), suite_schema)


def test_every_record_code_and_every_kind_has_a_case() -> None:
    expected = {d["code"] for _, _, test in CASES for d in test["diagnostics"]}
    assert expected == set(CODES) - READING_CODES
    kinds = {kind for _, kind, _ in CASES if kind is not None}
    assert kinds == set(KINDS)


def test_every_kind_has_a_clean_case() -> None:
    clean = {kind for _, kind, test in CASES if test["valid"] and not test["diagnostics"]}
    assert set(KINDS) <= clean
