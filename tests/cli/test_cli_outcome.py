"""`gym-contract outcome` and `gym-contract decide`, run as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gym_contract import cli
from gym_contract.outcome import classify_opencode
from tests.outcome.test_outcome import CLAUDE_CODE_CASES, OPENCODE_CASES, Case
from tests.support import REPO

REPO_EXAMPLES = REPO / "examples"
SHIPPED_EXPORT = REPO / "examples/reference/opencode-1.17.11-export.json"
DAMAGED_LINE_GAPS = frozenset({"malformed_transcript_line", "invalid_transcript_record"})


def run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False)
    assert "Traceback" not in result.stderr + result.stdout
    return result


def main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process: exit status, stdout, stderr."""
    status = cli.main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.out, captured.err


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    if isinstance(content, list):
        path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in content))
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def process_flags(case: Case) -> list[str]:
    flags = []
    if case.artifacts.get("exit_code") is not None:
        flags += ["--exit-code", str(case.artifacts["exit_code"])]
    if case.artifacts.get("timed_out"):
        flags.append("--timed-out")
    return flags


def test_the_shipped_opencode_export_is_classified_completed_and_graded(tmp_path):
    result = run("outcome", "opencode", str(SHIPPED_EXPORT), "--exit-code", "0")
    assert result.returncode == 0
    outcome = json.loads(result.stdout)
    assert (outcome["harness_version"], outcome["response_status"], outcome["failure_kind"]) == (
        "1.17.11",
        "completed",
        None,
    )
    assert outcome["warnings"] == []
    decided = run("decide", write(tmp_path, "outcome.json", outcome))
    assert decided.returncode == 0
    assert json.loads(decided.stdout)["action"] == "grade"


# The export is the command's argument; a case without one is given an empty export (no messages).
CLI_OPENCODE = [c for c in OPENCODE_CASES if "cleanup_error" not in c.artifacts and c.artifacts]


@pytest.mark.parametrize("case", CLI_OPENCODE, ids=[c.id for c in CLI_OPENCODE])
def test_each_documented_opencode_failure_shape_is_classified_as_its_kind(tmp_path, capsys, case):
    args = ["outcome", "opencode", write(tmp_path, "export.json", case.artifacts.get("export", {"messages": []}))]
    if "events" in case.artifacts:
        args += ["--events", write(tmp_path, "run.jsonl", case.artifacts["events"])]
    status, out, _ = main(capsys, *args, *process_flags(case))
    assert status == 0
    outcome = json.loads(out)
    assert (outcome["failure_kind"], outcome["response_status"], outcome["retryable"]) == (
        case.kind,
        case.status,
        case.retryable,
    )
    status, out, _ = main(capsys, "decide", write(tmp_path, "outcome.json", outcome))
    assert json.loads(out)["action"] == case.action


@pytest.mark.parametrize("case", CLAUDE_CODE_CASES, ids=[c.id for c in CLAUDE_CODE_CASES])
def test_each_documented_claude_code_failure_shape_is_classified_as_its_kind(tmp_path, capsys, case):
    stream = write(tmp_path, "stream.jsonl", case.artifacts["stream_events"])
    status, out, _ = main(capsys, "outcome", "claude-code", stream, *process_flags(case))
    assert status == 0
    outcome = json.loads(out)
    assert (outcome["failure_kind"], outcome["response_status"]) == (case.kind, case.status)


@pytest.mark.parametrize("flag", ["--harness-version", "--version"])
def test_the_version_flag_overrides_the_export_and_warns_on_an_untested_version(capsys, flag):
    # --harness-version; --version, its first name, still works for the scripts that use it.
    status, out, _ = main(capsys, "outcome", "opencode", str(SHIPPED_EXPORT), flag, "1.18.29")
    outcome = json.loads(out)
    assert status == 0
    assert outcome["harness_version"] == "1.18.29"
    assert outcome["response_status"] == "completed"
    assert any("1.17.11" in warning for warning in outcome["warnings"])


def test_the_harness_version_is_not_shown_as_the_programs():
    shown = subprocess.run(
        [sys.executable, "-m", "gym_contract", "outcome", "opencode", "--help"], capture_output=True, text=True
    ).stdout
    assert "--harness-version V" in shown
    assert "--version" not in shown


def rate_limited() -> dict[str, Any]:
    case = next(c for c in OPENCODE_CASES if c.kind == "model_rate_limited")
    return classify_opencode(**case.artifacts).model_dump(mode="json")


def test_decide_counts_attempts_against_the_policys_retries(tmp_path, capsys):
    outcome = write(tmp_path, "outcome.json", rate_limited())
    policy = write(tmp_path, "policy.json", {"max_retries": 1})
    actions = [json.loads(main(capsys, "decide", outcome, "--policy", policy, "--attempt", n)[1]) for n in ("1", "2")]
    assert [a["action"] for a in actions] == ["retry", "exclude"]
    assert all(a["reason"] for a in actions)


def test_decide_reads_the_outcome_of_a_rollout_record_and_a_policy_that_excludes_request_errors(tmp_path, capsys):
    case = next(c for c in OPENCODE_CASES if c.kind == "model_request_error")
    record = {"_ng_rollout_id": "r-1", "ng_agent_outcome": classify_opencode(**case.artifacts).model_dump(mode="json")}
    path = write(tmp_path, "rollout.json", record)
    assert json.loads(main(capsys, "decide", path)[1])["action"] == "grade"
    policy = write(tmp_path, "policy.json", {"grade_request_errors": False})
    assert json.loads(main(capsys, "decide", path, "--policy", policy)[1])["action"] == "exclude"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["outcome", "opencode", "{missing}"], "no such file", id="missing-export"),
        pytest.param(["outcome", "opencode", "{text}"], "not valid JSON (line 1, column 1)", id="export-not-json"),
        pytest.param(["outcome", "opencode", "{array}"], "must be a JSON object", id="export-not-object"),
        pytest.param(["outcome", "opencode", "{export}", "--events", "{missing}"], "no such file", id="missing-events"),
        pytest.param(["outcome", "claude-code", "{missing}"], "no such file", id="missing-stream"),
        pytest.param(["decide", "{text}"], "not valid JSON", id="outcome-not-json"),
        pytest.param(["decide", "{array}"], "must be a JSON object", id="outcome-not-object"),
        pytest.param(["decide", "{outcome}", "--policy", "{bad_policy}"], "unknown policy key", id="policy-key"),
        pytest.param(["decide", "{outcome}", "--policy", "{text}"], "not valid JSON", id="policy-not-json"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys, args, message):
    files = {
        "missing": str(tmp_path / "nope.json"),
        "text": write(tmp_path, "text.json", "this is not json"),
        "array": write(tmp_path, "array.json", "[1, 2]"),
        "export": str(SHIPPED_EXPORT),
        "outcome": write(tmp_path, "outcome.json", rate_limited()),
        "bad_policy": write(tmp_path, "policy.json", {"retries": 3}),
    }
    status, out, err = main(capsys, *(arg.format(**files) for arg in args))
    assert status == 2
    assert out == ""
    assert err.startswith("gym-contract: ")
    assert err.count("\n") == 1
    assert message in err


def test_decide_names_every_problem_of_an_invalid_outcome_on_a_line_of_its_own(tmp_path, capsys):
    outcome = {**rate_limited(), "harness": 7, "response_status": "finished"}
    del outcome["classifier"]
    status, out, err = main(capsys, "decide", write(tmp_path, "outcome.json", {"ng_agent_outcome": outcome}))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 3
    assert all(line.startswith("gym-contract: ") and "not a valid ng_agent_outcome" in line for line in lines)
    assert sorted(line.split(": ")[3] for line in lines) == [
        "/ng_agent_outcome",
        "/ng_agent_outcome/harness",
        "/ng_agent_outcome/response_status",
    ]


def test_bad_input_run_as_a_process_gives_no_traceback(tmp_path):
    result = run("outcome", "opencode", write(tmp_path, "broken.json", '{"messages": ['))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1


def test_a_harness_version_that_is_not_utf8_is_written_with_a_replacement_character():
    # The shell hands the bytes over as they are; Python holds the 0xFF as a lone surrogate.
    stream = REPO_EXAMPLES / "claude-code/spotter-v2.1.39.stream.jsonl"
    result = run("outcome", "claude-code", str(stream), "--harness-version", "2.\udcff")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["harness_version"] == "2.\ufffd"
    assert outcome["response_status"] == "completed"


def test_a_bad_attempt_is_a_usage_error(tmp_path):
    result = run("decide", write(tmp_path, "outcome.json", {}), "--attempt", "0")
    assert result.returncode == 2
    assert "positive whole number" in result.stderr


def test_decide_on_a_rollout_without_an_outcome_says_how_to_make_one(tmp_path: Path):
    rollout = tmp_path / "rollout.json"
    rollout.write_text((REPO_EXAMPLES / "rollouts.jsonl").read_text().splitlines()[0])
    result = run("decide", str(rollout))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "carries no ng_agent_outcome" in line
    assert "gym-contract outcome" in line


def test_a_json_array_on_a_jsonl_line_says_how_to_read_it(tmp_path: Path):
    lines = tmp_path / "records.jsonl"
    lines.write_text('[{"task_id": "t"}]\n')
    result = run("validate", "--format", "json", str(lines))
    (diagnostic,) = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["code"] == "record_not_object"
    assert "read as such when its name ends in .json" in diagnostic["message"]


def test_the_example_claude_code_stream_is_a_completed_run_of_its_session():
    stream = str(REPO_EXAMPLES / "claude-code" / "spotter-v2.1.39.stream.jsonl")
    outcome = json.loads(run("outcome", "claude-code", stream, "--exit-code", "0").stdout)
    assert (outcome["harness_version"], outcome["response_status"], outcome["failure_kind"]) == (
        "2.1.39",
        "completed",
        None,
    )
    observed = run(
        "observe", "claude-code", str(REPO_EXAMPLES / "claude-code" / "spotter-v2.1.39"), "--stream", stream,
        "--exit-code", "0", "--model-ref", "policy",
    )  # fmt: skip
    assert observed.returncode == 0, observed.stderr
    document = json.loads(observed.stdout)
    assert document["ng_agent_outcome"] == outcome
    # The stream names the session of the transcripts: the root invocation takes its status and run time from it.
    assert document["run_summary"]["result_success"] is True
    assert document["run_summary"]["duration_s"] == 790.696


def test_the_example_opencode_events_are_a_retryable_transport_error_that_the_example_policy_retries():
    events = str(REPO_EXAMPLES / "opencode" / "run-error.jsonl")
    result = run("outcome", "opencode", str(SHIPPED_EXPORT), "--events", events, "--exit-code", "1")
    outcome = json.loads(result.stdout)
    assert (outcome["failure_kind"], outcome["retryable"], outcome["error_name"]) == (
        "model_transport_error",
        True,
        "APIError",
    )
    policy = str(REPO_EXAMPLES / "policy.json")

    def action_at(attempt: int) -> str:
        decided = subprocess.run(
            [sys.executable, "-m", "gym_contract", "decide", "--policy", policy, "--attempt", str(attempt), "-"],
            input=result.stdout,
            capture_output=True,
            text=True,
            check=True,
        )
        return str(json.loads(decided.stdout)["action"])

    assert action_at(2) == "retry"
    assert action_at(3) != "retry"


@pytest.mark.parametrize(
    ("harness", "artifact"),
    [
        ("codex", next((REPO_EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))),
        ("pi", REPO_EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"),
    ],
)
def test_outcome_warnings_number_damaged_lines_from_1_as_the_producers_gaps_do(
    tmp_path: Path, capsys, harness: str, artifact: Path
):
    lines = artifact.read_bytes().splitlines(keepends=True)
    damaged = tmp_path / artifact.name
    damaged.write_bytes(b"".join([lines[0], b"{not json\n", *lines[1:], b"[1, 2]\n"]))

    status, out, _ = main(capsys, "outcome", harness, str(damaged))
    assert status == 0
    (warning,) = [warning for warning in json.loads(out)["warnings"] if "not JSON objects" in warning]
    status, out, _ = main(capsys, "observe", harness, str(damaged))
    assert status == 0
    gaps = json.loads(out)["ng_agent_observations"]["gaps"]

    gap_lines = sorted(int(gap["detail"].rsplit(":", 1)[1]) for gap in gaps if gap["code"] in DAMAGED_LINE_GAPS)
    assert gap_lines == [2, len(lines) + 2]
    assert warning.endswith(f"(lines {gap_lines[0]}, {gap_lines[1]})")


def test_a_lone_carriage_return_ends_no_line_for_outcome_as_for_the_producer(tmp_path: Path, capsys):
    artifact = next((REPO_EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))
    lines = artifact.read_bytes().splitlines(keepends=True)
    joined = lines[1].rstrip(b"\n") + b"\r" + lines[2]  # two events on one line, as every JSONL reader sees it
    damaged = tmp_path / artifact.name
    damaged.write_bytes(b"".join([lines[0], joined, *lines[3:]]))

    status, out, _ = main(capsys, "outcome", "codex", str(damaged))
    assert status == 0
    (warning,) = [warning for warning in json.loads(out)["warnings"] if "not JSON objects" in warning]
    status, out, _ = main(capsys, "observe", "codex", str(damaged))
    gaps = json.loads(out)["ng_agent_observations"]["gaps"]
    gap_lines = [int(gap["detail"].rsplit(":", 1)[1]) for gap in gaps if gap["code"] in DAMAGED_LINE_GAPS]
    assert gap_lines == [2]
    assert warning.endswith("(line 2)")
