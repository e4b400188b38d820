"""The collector's steps end to end, and `gym-contract join` / `gym-contract project` as users run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gym_contract import iter_diagnostics
from gym_contract.collection import collect, merge_capture
from tests.support import REPO

CAPTURE_DIR = REPO / "examples" / "capture"
POLICY = {"type": "responses_api_models", "name": "policy"}
BUNDLE = {
    "source": "pi",
    "records": [
        {
            "kind": "agent_invocation",
            "invocation_id": "root",
            "model_calls": [{"model_ref": POLICY, "response_id": "resp_7-0-first"}],
            "conversation": [{"role": "user", "content": "Factor 391.", "type": "message"}],
        }
    ],
    "gaps": [{"code": "no_sandbox_runtime"}],
}
ROW = {"_ng_task_index": 7, "_ng_rollout_index": 0, "reward": 1.0, "ng_agent_observations": BUNDLE}


def test_merging_a_capture_joins_the_observations_to_it():
    merged = merge_capture(ROW, [REPO / "missing", CAPTURE_DIR])
    (root,) = merged["ng_agent_observations"]["records"]
    assert root["model_calls"][0]["model_call_id"] == "5b1f0c6e2a9d4e1b8c3f7a6d0e9b2c41"
    capture = merged["ng_model_call_capture"]
    assert capture["rollout_id"] == "7-0"
    assert len(capture["calls"]) == capture["metrics"]["num_calls"] == 4


def test_no_capture_anywhere_is_a_gap_not_an_error():
    merged = merge_capture(ROW, [REPO / "missing"])
    assert merged["ng_model_call_capture"]["gaps"] == [{"code": "model_call_capture_no_records"}]


def test_a_record_without_a_rollout_id_is_left_alone():
    assert merge_capture({"reward": 1.0}, [CAPTURE_DIR]) == {"reward": 1.0}


def test_redacted_histories_keep_no_payloads():
    redacted = {**ROW, "ng_agent_observations": {**BUNDLE, "gaps": [{"code": "multimodal_history_redacted"}]}}
    calls = merge_capture(redacted, [CAPTURE_DIR])["ng_model_call_capture"]["calls"]
    assert all("request" not in call for call in calls)


def test_a_bundle_that_breaks_the_contract_leaves_a_join_gap():
    broken = {**ROW, "ng_agent_observations": {"records": []}}
    capture = merge_capture(broken, [CAPTURE_DIR])["ng_model_call_capture"]
    assert {"code": "agent_observation_join_failed", "detail": "ValidationError"} in capture["gaps"]


def test_a_collected_record_validates_and_its_trajectory_owns_the_payloads():
    collected = collect(ROW, [CAPTURE_DIR])
    assert [d for d in iter_diagnostics(collected) if d.severity == "error"] == []
    assert all("request" not in call for call in collected["ng_model_call_capture"]["calls"])
    assert collected["ng_trajectory"]["model_calls"][0]["request"]["input"][0]["content"] == "Factor 391."


def run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False)
    assert "Traceback" not in result.stderr
    return result


def test_the_join_command(tmp_path: Path):
    observations = tmp_path / "observations.json"
    observations.write_text(json.dumps(BUNDLE))
    result = run("join", str(observations), "--capture", str(CAPTURE_DIR), "--rollout-id", "7-0")
    assert result.returncode == 0
    joined = json.loads(result.stdout)
    assert joined["records"][0]["model_calls"][0]["model_call_id"] == "5b1f0c6e2a9d4e1b8c3f7a6d0e9b2c41"
    assert (
        run("join", str(tmp_path / "nope.json"), "--capture", str(CAPTURE_DIR), "--rollout-id", "7-0").returncode == 2
    )
    observations.write_text("{}")
    assert run("join", str(observations), "--capture", str(CAPTURE_DIR), "--rollout-id", "7-0").returncode == 2


def test_a_capture_directory_or_an_output_that_cannot_be_used_is_one_line_and_exit_2(tmp_path: Path):
    observations = tmp_path / "observations.json"
    observations.write_text(json.dumps(BUNDLE))
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps(ROW) + "\n")
    missing, a_file = str(tmp_path / "nowhere"), str(observations)
    cases = {
        ("join", str(observations), "--capture", missing, "--rollout-id", "7-0"): f"{missing!r}: it does not exist",
        ("project", str(rollouts), "--capture-dir", a_file): f"{a_file!r}: it is not a directory",
        ("project", str(rollouts), "--capture-dir", str(CAPTURE_DIR), "-o", str(tmp_path)): "Is a directory",
    }
    for arguments, said in cases.items():
        result = run(*arguments)
        assert result.returncode == 2, arguments
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith("gym-contract: ")
        assert line.endswith(said)


def test_the_project_command_streams_records_and_summarises(tmp_path: Path):
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps(ROW) + "\n{broken\n")
    out = tmp_path / "out.jsonl"
    result = run("project", str(rollouts), "--capture-dir", str(CAPTURE_DIR), "-o", str(out))
    assert result.returncode == 1  # the damaged line
    summary = json.loads(result.stdout)
    assert summary["rollouts"] == 1
    assert summary["damaged_lines"] == 1
    assert "rollouts.jsonl:2: json_invalid" in result.stderr
    assert run("validate", str(out), "--quiet").returncode == 0


def test_unusable_rollout_ids_never_raise():
    bad_explicit = {**ROW, "_ng_rollout_id": "a/b"}
    assert merge_capture(bad_explicit, [CAPTURE_DIR]) == bad_explicit
    # An attachment keyed by "a/b-0" would break the contract's pattern: no capture is merged under it.
    odd_index = {**ROW, "_ng_task_index": "a/b"}
    assert merge_capture(odd_index, [CAPTURE_DIR]) == odd_index
    nested_index = {**ROW, "_ng_task_index": [[["deep"]]]}
    assert merge_capture(nested_index, [CAPTURE_DIR]) == nested_index


def test_the_example_rollout_projects_cleanly_through_the_cli():
    rollout = REPO / "examples" / "rollout-7-0.jsonl"
    project_run = subprocess.run(
        [sys.executable, "-m", "gym_contract", "project", str(rollout), "--capture-dir", str(CAPTURE_DIR)],
        capture_output=True,
        check=False,
    )
    assert project_run.returncode == 0
    validate_run = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", "-", "--format", "json"],
        input=project_run.stdout,
        capture_output=True,
        check=False,
    )
    assert validate_run.returncode == 0
    summary = json.loads(validate_run.stdout)
    assert summary["diagnostics_by_severity"]["error"] == 0
    assert summary["gaps_by_code"]["model_call_ownership_unavailable"] == 2  # the 429 and the judge's call
    projected = json.loads(project_run.stdout)
    owned = projected["ng_agent_observations"]["records"][0]["model_calls"]
    assert [ref["model_call_id"] for ref in owned] == [
        "5b1f0c6e2a9d4e1b8c3f7a6d0e9b2c41",
        "5b1f0c6e2a9d4e1b8c3f7a6d0e9b2c43",
    ]
    assert projected["ng_trajectory"]["tool_calls"][0]["output"] == "2 3 5 7 11 13 17 19"
