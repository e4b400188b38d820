"""The bundled schemas as a strict validator in another language reads them: ajv (JavaScript), strict mode, 2020-12.

ajv in strict mode refuses keywords JSON Schema does not define, `required` and `properties` without
`type: object`, and a `required` key no `properties` declares. Every schema file must compile so, and
then judge each conformance case as the suite says. ajv comes from `tests/ajv/package.json`
(`npm install --prefix tests/ajv`, which `.ci/run` does); without it the tests skip, except in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gym_contract import detect_kind, schemas
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS, SCHEMA_OF_KIND
from tests.support import REPO
from tests.test_conformance import PART_CASES, SCHEMA_CASES

AJV = REPO / "tests" / "ajv"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None or not (AJV / "node_modules" / "ajv").is_dir():
        message = "ajv is not installed: npm install --prefix tests/ajv (node and npm needed)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def judge(node: str, cases: list[dict[str, Any]], tmp_path: Path) -> dict[str, Any]:
    given = tmp_path / "cases.json"
    given.write_text(json.dumps(cases), encoding="utf-8")
    run = subprocess.run(
        [node, str(AJV / "judge.cjs"), schemas.directory(), str(given)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def test_every_schema_file_compiles_in_strict_mode(node: str, tmp_path: Path):
    compiled = judge(node, [], tmp_path)["compiled"]
    files = sorted(path.name for path in Path(schemas.directory()).glob("*.schema.json"))
    assert sorted(compiled) == files
    assert {name: error for name, error in compiled.items() if error is not None} == {}


def instances(data: Any, kind: str) -> list[tuple[str, Any]]:
    """The (schema, value) pairs a schema-only implementation checks for one record of a kind; a rollout's
    attachments each under its own schema, one that is null counting as absent (the suite's README)."""
    if kind != "rollout":
        return [(SCHEMA_OF_KIND[kind], data)]
    return [(SCHEMA_OF_KIND[name], data[key]) for key, name in ROLLOUT_ATTACHMENTS.items() if data.get(key) is not None]


def test_ajv_judges_every_conformance_case_as_the_suite_says(node: str, tmp_path: Path):
    asked: list[dict[str, Any]] = []
    expected: list[tuple[str, bool, slice]] = []
    for description, kind, test in SCHEMA_CASES:
        pairs = instances(test["data"], kind or detect_kind(test["data"]) or "")
        start = len(asked)
        asked += [{"uri": schemas.schema_id(name), "data": value} for name, value in pairs]
        expected.append((description, test["schema_valid"], slice(start, len(asked))))
    for description, name, test in PART_CASES:
        asked.append({"uri": schemas.schema_id(name), "data": test["data"]})
        expected.append((description, test["schema_valid"], slice(len(asked) - 1, len(asked))))
    verdicts = judge(node, asked, tmp_path)["verdicts"]
    assert all(isinstance(verdict, bool) for verdict in verdicts), [v for v in verdicts if not isinstance(v, bool)]
    wrong = [description for description, valid, place in expected if all(verdicts[place]) is not valid]
    assert wrong == []
    # Both verdicts are asked for, so that a validator that says yes (or no) to everything fails.
    assert {valid for _, valid, _ in expected} == {True, False}
