"""The `gym-contract schema` commands, run as a user would."""

from __future__ import annotations

import json
import subprocess
import sys

from gym_contract import schemas


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False)


def test_schema_list_names_every_schema_with_its_id():
    result = run("schema", "list")
    assert result.returncode == 0
    for name in schemas.names():
        assert any(line.split()[0] == name and schemas.schema_id(name) in line for line in result.stdout.splitlines())


def test_schema_list_as_json():
    result = run("schema", "list", "--format", "json")
    listed = json.loads(result.stdout)
    assert [entry["name"] for entry in listed] == schemas.names()


def test_schema_show_prints_the_shipped_file():
    result = run("schema", "show", "trajectory")
    assert result.returncode == 0
    assert json.loads(result.stdout) == schemas.get("trajectory")


def test_schema_show_prints_a_fragment():
    result = run("schema", "show", "model_call_capture")
    assert json.loads(result.stdout)["title"] == "ModelCallCapture"


def test_schema_show_id():
    assert run("schema", "show", "trajectory", "--id").stdout.strip() == schemas.schema_id("trajectory")


def test_unknown_schema_is_a_usage_error_without_traceback():
    result = run("schema", "show", "nope")
    assert result.returncode == 2
    assert "no bundled schema named 'nope'" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_command_is_a_usage_error():
    result = run()
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
