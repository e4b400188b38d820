"""The machine-readable reports satisfy their published schemas: SARIF 2.1.0, and the JSON report's own."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any
from xml.etree import ElementTree

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


JUNIT_XSD = REPO / "tests" / "data" / "junit" / "junit-10.xsd"


def _junit(*arguments: str) -> tuple[int, Any]:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is in the dev extra")
    result = validate("--format", "junit", *arguments)
    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    schema.validate(result.stdout)
    return result.returncode, ElementTree.fromstring(result.stdout)


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_the_junit_report_satisfies_a_published_junit_schema(name):
    status, root = _junit(*INPUTS[name])
    assert status == {"clean": 0, "damaged": 1, "unreadable": 2}[name]
    if name != "unreadable":
        cases = root.findall("./testsuite/testcase")
        assert len(cases) == int(root.get("tests")) > 0


def test_a_test_case_per_record_and_per_damaged_line(tmp_path):
    damaged = (REPO / "examples" / "damaged_rollouts.jsonl").read_bytes()
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'{"broken\n\n' + damaged)
    status, root = _junit(str(path))
    assert status == 1
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    records = damaged.count(b"\n")
    assert len(cases) == records + 1  # the blank line is no test case
    # One naming scheme, passing or not: the item's index, as the text report's "(record N)".
    assert [case.get("name") for case in cases] == [f"record {item}" for item in range(len(cases))]
    (broken,) = [case for case in cases if case.find("error") is not None]
    assert (broken.get("name"), broken.find("error").text.split(": ")[0]) == ("record 0", f"{path}:1")
    failing = [case for case in cases if case.find("failure") is not None]
    assert int(suite.get("failures")) == len(failing) == 2
    assert all(f"{path}:" in case.find("failure").text for case in failing)


def test_records_over_the_listing_cap_still_fail_and_say_why(tmp_path):
    status, root = _junit("--max-diagnostics", "0", *INPUTS["damaged"])
    failures = root.findall(".//failure")
    assert status == 1
    assert len(failures) == 2
    assert all("raise --max-diagnostics" in (failure.text or "") for failure in failures)


def test_warnings_fail_a_record_only_from_fail_on_warning(tmp_path):
    record = json.loads((REPO / "examples" / "rollouts.jsonl").read_text().splitlines()[0])
    record["ng_trajectory"]["model_calls"][0]["token_stats"]["total_tokens"] += 7  # a warning, no error
    path = tmp_path / "warned.jsonl"
    path.write_text(json.dumps(record) + "\n")
    status, by_error = _junit(str(path))
    assert status == 0
    assert by_error.findall(".//failure") == []
    status, by_warning = _junit("--fail-on", "warning", str(path))
    assert status == 1
    (failure,) = by_warning.findall(".//failure")
    assert failure.get("type") == "token_total_mismatch"


def test_the_junit_report_is_the_same_with_two_jobs(tmp_path):
    # Over a megabyte, so that two jobs check the file in two shares whose records are numbered apart.
    lines = (REPO / "examples" / "damaged_rollouts.jsonl").read_bytes() + (
        REPO / "examples" / "rollouts.jsonl"
    ).read_bytes()
    path = tmp_path / "large.jsonl"
    path.write_bytes(b'{"broken\n' + lines * 12)
    assert path.stat().st_size > 1024 * 1024

    def cases(*jobs: str) -> list[tuple[str | None, str | None, str]]:
        _, root = _junit(*jobs, str(path))
        return [
            (case.get("name"), next((child.tag for child in case), None), ElementTree.tostring(case, "unicode"))
            for case in root.iter("testcase")
        ]

    assert cases("--jobs", "2") == cases()
