"""`gym-contract schema diff` on damaged schema folders: a verdict, or a diagnostic naming the file; no traceback."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from gym_contract import schemas
from gym_contract.cli import main
from gym_contract.schema_diff import MAX_SCHEMA_DEPTH, SchemaFolderError, changes, load_version
from tests.schema_folders import SchemaFolder, damaged_schema_folders
from tests.support import REPO


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gym_contract", "schema", "diff", *args], capture_output=True, text=True, check=False
    )


def v1_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "v1"
    shutil.copytree(REPO / "schemas" / "v1", folder)
    return folder


def edit(folder: Path, name: str, change: Any) -> None:
    path = folder / name
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def diff_in_process(*args: str) -> tuple[int, str, str]:
    """The command run in this process, writing to UTF-8 streams as a terminal's are (a lone surrogate fails)."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict")
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["schema", "diff", *args])
        stdout.flush(), stderr.flush()
    return status, out.getvalue().decode(), err.getvalue().decode()


def refused(folder: Path, name: str, place: str, why: str) -> None:
    """Both formats, both directions: exit 2, no output, one line that names the file, the place and why."""
    for args in ((str(folder), "1.0"), ("1.0", str(folder))):
        for output in ("text", "json"):
            status, stdout, stderr = diff_in_process(*args, "--format", output)
            assert (status, stdout) == (2, ""), stderr
            assert stderr.startswith(f"gym-contract: {name} in {folder}{place}"), stderr
            assert why in stderr
            assert stderr.count("\n") == 1, stderr


def test_a_file_nested_deeper_than_the_parser_reads_is_refused_by_name(tmp_path: Path):
    folder = v1_copy(tmp_path)
    (folder / "common.schema.json").write_text('{"$defs": {"A": ' + "[" * 1100 + "]" * 1100 + "}}")
    refused(folder, "common.schema.json", ": not JSON (depth limit exceeded", "line 1 column")


def test_a_file_nested_deeper_than_schema_diff_compares_is_refused_at_its_pointer(tmp_path: Path):
    folder = v1_copy(tmp_path)
    deep: Any = {"type": "string"}
    for _ in range(MAX_SCHEMA_DEPTH):
        deep = {"not": deep}
    (folder / "common.schema.json").write_text(json.dumps(deep))
    place = ", at /" + "/".join(["not"] * (MAX_SCHEMA_DEPTH - 1))
    refused(folder, "common.schema.json", place, f"nested deeper than the {MAX_SCHEMA_DEPTH} levels")


def test_a_file_nested_to_the_limit_is_compared():
    shallow: Any = {"type": "string"}
    for _ in range(MAX_SCHEMA_DEPTH - 2):
        shallow = {"not": shallow}
    deeper = json.loads(json.dumps(shallow).replace('"string"', '"integer"'))
    found = changes({"x.schema.json": shallow}, {"x.schema.json": deeper})
    assert {change.path.count("/not") for change in found} == {MAX_SCHEMA_DEPTH - 2}


def test_a_gap_code_that_is_a_list_is_refused(tmp_path: Path):
    folder = v1_copy(tmp_path)
    edit(folder, "gap_codes.json", lambda registry: registry["codes"][3].update(code=["a", "b"]))
    refused(folder, "gap_codes.json", ", at /codes/3/code: ", 'is not of type "string"')


def test_emitted_by_holding_a_list_is_refused(tmp_path: Path):
    folder = v1_copy(tmp_path)
    edit(folder, "gap_codes.json", lambda registry: registry["codes"][0].update(emitted_by=[["capture"]]))
    refused(folder, "gap_codes.json", ", at /codes/0/emitted_by/0: ", 'is not of type "string"')


def test_a_gap_code_listed_twice_is_refused(tmp_path: Path):
    folder = v1_copy(tmp_path)
    edit(folder, "gap_codes.json", lambda registry: registry["codes"].append(dict(registry["codes"][0])))
    refused(folder, "gap_codes.json", ", at /codes/", "is listed twice (first at /codes/0)")


def test_a_required_entry_that_is_an_object_is_refused(tmp_path: Path):
    folder = v1_copy(tmp_path)
    edit(folder, "trajectory.schema.json", lambda schema: schema["required"].append({"name": "x"}))
    refused(folder, "trajectory.schema.json", ", at /required/", 'is not of type "string"')


def test_a_code_holding_a_lone_surrogate_is_refused_before_any_report_is_printed(tmp_path: Path):
    folder = v1_copy(tmp_path)
    text = (folder / "gap_codes.json").read_text(encoding="utf-8")
    (folder / "gap_codes.json").write_text(text.replace('"code": "', '"code": "\\ud800', 1), encoding="utf-8")
    refused(folder, "gap_codes.json", ": not JSON (", "surrogate")
    result = run(str(folder), "1.0")  # and as a process of its own, whose stdout is strict UTF-8
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"gym-contract: gap_codes.json in {folder}: not JSON (no low surrogate")


@pytest.mark.parametrize(
    ("name", "damage", "where", "why"),
    [
        ("trajectory.schema.json", {"properties": []}, ", at /properties: ", 'is not of type "object"'),
        ("trajectory.schema.json", {"items": 3}, ", at /items: ", "is not of type"),
        ("trajectory.schema.json", {"enum": "a"}, ", at /enum: ", 'is not of type "array"'),
        ("trajectory.schema.json", {"$ref": 7}, ", at /$ref: ", 'is not of type "string"'),
        ("trajectory.schema.json", {"oneOf": {"a": 1}}, ", at /oneOf: ", 'is not of type "array"'),
        ("trajectory.schema.json", {"type": "text"}, ", at /type: ", "is not valid under any of the schemas"),
        ("trajectory.schema.json", {"minimum": "0"}, ", at /minimum: ", 'is not of type "number"'),
        ("trajectory.schema.json", {"dependentRequired": {"a": [1]}}, ", at /dependentRequired/a/0: ", "string"),
        ("gap_codes.json", {"codes": {"a": {}}}, ", at /codes: ", 'is not of type "array"'),
        ("gap_codes.json", {"codes": [{"meaning": "m"}]}, ", at /codes/0: ", '"code" is a required property'),
        ("gap_codes.json", {"codes": [{"code": "a", "criteria": "C1"}]}, ", at /codes/0/criteria: ", "is not of type"),
    ],
)
def test_every_keyword_the_comparison_reads_is_checked_for_its_type(
    tmp_path: Path, name: str, damage: dict[str, Any], where: str, why: str
):
    folder = v1_copy(tmp_path)
    edit(folder, name, lambda document: document.update(damage))
    refused(folder, name, where, why)


def test_a_key_given_twice_is_refused_rather_than_one_value_kept(tmp_path: Path):
    folder = v1_copy(tmp_path)
    (folder / "common.schema.json").write_text('{"$defs": {"A": {"type": "string", "type": "integer"}}}')
    refused(folder, "common.schema.json", ", at /$defs/A: ", "the key 'type' is given twice")


def test_an_integer_beyond_64_bits_is_compared_exactly(tmp_path: Path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "x.schema.json").write_text('{"maximum": 18446744073709551616}')
    (new / "x.schema.json").write_text('{"maximum": 18446744073709551617}')
    assert [(c.verdict, c.what) for c in changes(load_version(str(old)), load_version(str(new)))] == [
        ("additive", "maximum 18446744073709551616 → 18446744073709551617")
    ]


def test_unreadable_files_and_names_are_refused_by_name(tmp_path: Path):
    folder = v1_copy(tmp_path)
    (folder / "common.schema.json").unlink()
    (folder / "common.schema.json").mkdir()
    result = run(str(folder), "1.0")
    assert result.returncode == 2
    assert result.stderr.startswith(f"gym-contract: common.schema.json in {folder}: cannot be read (")
    shutil.rmtree(folder / "common.schema.json")
    (folder / "README.md").write_text("not JSON, and not read")
    assert run(str(folder), "1.0").returncode == 1  # a file removed breaks; the README is not read
    (folder / bytes.decode(b"\xff.json", "utf-8", "surrogateescape")).write_text("{}")
    result = run(str(folder), "1.0", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "\\xff.json in" in result.stderr
    assert "the file name is not UTF-8" in result.stderr


def test_the_python_api_refuses_what_load_version_would_not_give():
    current = load_version(schemas.directory())
    for damaged in (
        {**current, "gap_codes.json": {"codes": [{"code": "\udc80"}]}},
        {**current, "x.schema.json": {"required": [{}]}},
        {**current, "x.schema.json": {1: "a"}},
        {**current, "x.schema.json": {"maximum": float("nan")}},
        {**current, "x.schema.json": {"default": {1, 2}}},
    ):
        with pytest.raises(SchemaFolderError, match=r"x\.schema\.json in the new version|gap_codes"):
            changes(current, damaged)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(folder=damaged_schema_folders())
def test_law_schema_diff_never_raises_and_always_gives_a_verdict(tmp_path_factory: Any, folder: SchemaFolder):
    damaged = str(folder.write(tmp_path_factory.mktemp("folders") / "damaged"))
    real = str(REPO / "schemas" / "v1")
    for old, new in ((real, damaged), (damaged, real)):
        for output in ("text", "json"):
            status, stdout, stderr = diff_in_process(old, new, "--format", output)
            if status == 2:  # refused: one line that names the file or the folder
                assert stdout == ""
                assert stderr.startswith("gym-contract: "), stderr
                assert stderr.count("\n") == 1, stderr
                assert damaged in stderr, stderr
                continue
            found = json.loads(stdout) if output == "json" else stdout.splitlines()
            breaking = (
                sum(change["verdict"] == "breaking" for change in found)
                if output == "json"
                else int(found[-1].split(" breaking, ")[0])
            )
            assert status == (1 if breaking else 0), (status, stdout)
