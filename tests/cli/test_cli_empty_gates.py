"""A gate that checked nothing does not pass: inputs with no record fail with no_records unless --allow-empty."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gym_contract import cli
from gym_contract.diagnostics import CODES, docs_url
from gym_contract.validation._report import Report
from tests.support import REPO

EMPTY_INPUTS = {"empty.jsonl": b"", "blank.jsonl": b"\n  \n\n", "array.json": b"[]\n", "empty.jsonl.gz": None}


def write(tmp_path: Path, name: str) -> str:
    import gzip

    content = EMPTY_INPUTS[name]
    path = tmp_path / name
    path.write_bytes(gzip.compress(b"") if content is None else content)
    return str(path)


def json_report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    status = cli.main(["validate", "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_no_records_is_a_registered_error_with_its_docs_anchor():
    assert CODES["no_records"].severity == "error"
    assert docs_url("no_records").endswith("/reference/errors/#no_records")
    assert "{#no_records}" in (REPO / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EMPTY_INPUTS))
def test_validate_fails_on_inputs_that_hold_no_record(tmp_path: Path, capsys, name):
    status, report = json_report(capsys, write(tmp_path, name))
    assert (status, report["verdict"], report["records"]) == (1, "fail", 0)
    assert report["diagnostics_by_code"] == {"no_records": 1}
    (said,) = report["diagnostics"]
    assert (said["severity"], said["docs"]) == ("error", docs_url("no_records"))


@pytest.mark.parametrize("name", sorted(EMPTY_INPUTS))
def test_allow_empty_lets_an_empty_run_pass_and_still_says_it_was_empty(tmp_path: Path, capsys, name):
    status, report = json_report(capsys, "--allow-empty", write(tmp_path, name))
    assert (status, report["verdict"]) == (0, "pass")
    assert [(d["code"], d["severity"]) for d in report["diagnostics"]] == [("no_records", "info")]


def test_one_input_with_records_is_enough(tmp_path: Path, capsys):
    status, report = json_report(capsys, write(tmp_path, "empty.jsonl"), str(REPO / "examples" / "rollout-7-0.jsonl"))
    assert status == 0
    assert "no_records" not in report["diagnostics_by_code"]


@pytest.mark.parametrize("content", [b"", b" \n\t\n"])
def test_an_empty_json_document_is_damaged_not_a_document_of_no_records(tmp_path: Path, capsys, content):
    path = tmp_path / "empty.json"
    path.write_bytes(content)
    status, report = json_report(capsys, "--allow-empty", str(path))
    assert status == 1  # --allow-empty allows no records, not a damaged document
    assert (report["damaged_lines"], report["diagnostics_by_code"]) == (1, {"json_invalid": 1})
    assert report["diagnostics"][0]["line"] == 1
    assert "empty" in report["diagnostics"][0]["message"]


def test_the_text_report_names_the_whole_run_and_begins_with_it(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", write(tmp_path, "empty.jsonl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "all inputs"
    assert lines[1].startswith("  ✗ error no_records: the inputs hold no record: nothing was checked")
    assert "FAIL (fail on error)" in lines


def test_two_jobs_fail_the_same_empty_run(tmp_path: Path, capsys):
    first, second = write(tmp_path, "empty.jsonl"), write(tmp_path, "blank.jsonl")
    status, report = json_report(capsys, "--jobs", "2", first, second)
    assert (status, report["diagnostics_by_code"]) == (1, {"no_records": 1})


def test_every_ci_format_fails_an_empty_run(tmp_path: Path, capsys):
    path = write(tmp_path, "empty.jsonl")
    assert cli.main(["validate", "--format", "junit", path]) == 1
    root = ElementTree.fromstring(capsys.readouterr().out)
    assert (root.get("tests"), root.get("failures")) == ("1", "1")
    (failure,) = root.findall(".//testcase/failure")
    assert failure.get("type") == "no_records"
    assert cli.main(["validate", "--format", "junit", "--max-diagnostics", "0", path]) == 1
    assert ElementTree.fromstring(capsys.readouterr().out).get("failures") == "1"
    assert cli.main(["validate", "--format", "junit", "--allow-empty", path]) == 0
    root = ElementTree.fromstring(capsys.readouterr().out)
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    assert cli.main(["validate", "--format", "sarif", path]) == 1
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert (result["ruleId"], result["level"], "locations" in result) == ("no_records", "error", False)
    assert cli.main(["validate", "--format", "github", path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("::error title=no_records::the inputs hold no record")
    assert out[-1].startswith("gym-contract: FAIL")


def test_report_fails_an_empty_run_unless_allowed(tmp_path: Path, capsys):
    pytest.importorskip("plotly", reason="the report extra")
    path, page = write(tmp_path, "empty.jsonl"), str(tmp_path / "report.html")
    assert cli.main(["report", path, "-o", page]) == 1
    assert ", FAIL, 0 records" in capsys.readouterr().out
    assert "no_records" in Path(page).read_text(encoding="utf-8")
    assert cli.main(["report", path, "-o", page, "--allow-empty"]) == 0
    assert ", PASS, 0 records" in capsys.readouterr().out


@pytest.mark.parametrize("output", [[], ["--format", "json"], ["--format", "markdown"]])
def test_coverage_fails_when_there_is_no_rollout_to_rate_unless_allowed(tmp_path: Path, capsys, output):
    path = write(tmp_path, "empty.jsonl")
    assert cli.main(["coverage", path, *output]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gym-contract: no_records: the inputs hold no rollout or trajectory record to rate")
    assert cli.main(["coverage", path, *output, "--allow-empty"]) == 0
    assert capsys.readouterr().err.endswith("; allowed\n")
    assert cli.main(["coverage", str(REPO / "examples" / "rollouts.jsonl"), *output]) == 0


def test_lineage_fails_on_a_capture_file_with_no_call_unless_allowed(tmp_path: Path, capsys):
    path = tmp_path / "7-0.capture.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert cli.main(["lineage", str(path)]) == 1
    assert "no_records: " in capsys.readouterr().err
    assert cli.main(["lineage", str(path), "--allow-empty"]) == 0


def test_an_interrupted_run_is_not_called_empty():
    report = Report(interrupted=True)
    report.note_empty()
    assert report.by_code == {}


def test_no_records_is_listed_past_the_listing_cap():
    report = Report(max_diagnostics=0)
    report.note_empty()
    assert [d.code for d in report.diagnostics] == ["no_records"]
    assert report.fails()
    report.note_empty()  # said once however often asked
    assert report.by_code == {"no_records": 1}


def test_the_pytest_plugins_check_file_fails_on_a_file_of_no_record(tmp_path: Path):
    from gym_contract.pytest_plugin import Contract

    path = write(tmp_path, "blank.jsonl")
    with pytest.raises(pytest.fail.Exception, match="no_records"):
        Contract().check_file(path)
    assert Contract().check_file(path, allow_empty=True).records == 0


def test_a_run_of_damaged_lines_fails_on_them_and_is_not_called_empty(tmp_path: Path, capsys):
    path = tmp_path / "damaged.jsonl"
    path.write_text('{"broken\n[1]\n', encoding="utf-8")
    status, report = json_report(capsys, str(path))
    assert status == 1
    assert report["diagnostics_by_code"] == {"json_invalid": 1, "record_not_object": 1}


def test_schema_diff_refuses_a_folder_of_no_schema_rather_than_find_nothing_breaking(tmp_path: Path, capsys):
    (tmp_path / "old").mkdir()
    assert cli.main(["schema", "diff", str(tmp_path / "old")]) == 2
    assert (
        capsys.readouterr().err
        == f"gym-contract: {tmp_path / 'old'}: holds no schema file (*.json): nothing to compare\n"
    )
    assert cli.main(["schema", "diff", "1.0", str(tmp_path / "old")]) == 2


def test_the_junit_report_of_an_empty_run_satisfies_the_published_junit_schema(tmp_path: Path, capsys):
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is in the dev extra")
    schema = xmlschema.XMLSchema(str(REPO / "tests" / "data" / "junit" / "junit-10.xsd"))
    for flags in ([], ["--allow-empty"]):
        cli.main(["validate", "--format", "junit", *flags, write(tmp_path, "empty.jsonl")])
        schema.validate(capsys.readouterr().out)


def test_the_sarif_and_json_reports_of_an_empty_run_satisfy_their_schemas(tmp_path: Path, capsys):
    import jsonschema

    from gym_contract import schemas

    sarif = json.loads((REPO / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    cli.main(["validate", "--format", "sarif", write(tmp_path, "empty.jsonl")])
    jsonschema.Draft4Validator(sarif).validate(json.loads(capsys.readouterr().out))
    cli.main(["validate", "--format", "json", write(tmp_path, "empty.jsonl")])
    jsonschema.Draft202012Validator(schemas.report_schema()).validate(json.loads(capsys.readouterr().out))
