"""The machine-readable reports satisfy their published schemas: SARIF 2.1.0, and the JSON report's own."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from gym_contract import schemas
from gym_contract.diagnostics import CODES
from tests.support import REPO

SARIF = json.loads((REPO / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
INPUTS = {
    "clean": [str(REPO / "examples" / "rollouts.jsonl")],
    "damaged": [str(REPO / "examples" / "damaged_rollouts.jsonl"), str(REPO / "examples" / "rollout-7-0.jsonl")],
    "unreadable": [str(REPO / "no-such-file.jsonl")],
}


def validate(*arguments: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", *arguments], capture_output=True, text=True, check=False
    )
    assert "Traceback" not in result.stderr
    return result


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_the_sarif_report_satisfies_the_sarif_schema(name):
    result = validate("--format", "sarif", *INPUTS[name])
    assert result.returncode == {"clean": 0, "damaged": 1, "unreadable": 2}[name]
    document = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF).validate(document)
    (run,) = document["runs"]
    if name == "damaged":
        rules = run["tool"]["driver"]["rules"]
        assert {rule["id"] for rule in rules} == set(CODES)
        assert all(rule["helpUri"].endswith(f"#{rule['id']}") for rule in rules)
        assert run["results"], "a damaged file has results"
        for result_ in run["results"]:
            assert rules[result_["ruleIndex"]]["id"] == result_["ruleId"]
            region = result_["locations"][0]["physicalLocation"]["region"]
            assert region["startLine"] >= 1


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_the_json_report_satisfies_its_own_schema(name):
    schema = schemas.report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    result = validate("--format", "json", *INPUTS[name])
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(document)
    assert document["report_version"] == "1"
    if name != "unreadable":
        # Every key the report writes is described, so that nothing in it is undocumented.
        assert set(document) <= set(schema["$defs"]["Report"]["properties"])


def test_github_annotations_locate_each_diagnostic_and_end_with_the_verdict():
    result = validate("--format", "github", *INPUTS["damaged"])
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("gym-contract: FAIL (fail on error): ")
    annotations = lines[:-1]
    assert annotations
    for line in annotations:
        command, _, message = line[2:].partition("::")
        level, _, properties = command.partition(" ")
        assert level in ("error", "warning", "notice")
        fields = dict(item.split("=", 1) for item in properties.split(","))
        assert fields["file"].endswith(".jsonl")
        assert int(fields["line"]) >= 1
        assert "https://gym-contract.dev/reference/errors/#" in message
        assert "\n" not in message


def test_an_annotation_escapes_what_would_end_it_early(tmp_path):
    odd = tmp_path / "a,b:c%.jsonl"
    odd.write_text('{"ng_trajectory": {"task_id": "t", "rollout_id": "r", "turns": 5}}\n')
    result = validate("--format", "github", str(odd))
    first = result.stdout.splitlines()[0]
    assert "file=" + str(odd).replace("%", "%25").replace(":", "%3A").replace(",", "%2C") in first
