"""Outcomes never raise: any stream, export or events classify, `decide` refuses only with ContractError."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._values import NumberText
from gym_contract.diagnostics import ContractError
from gym_contract.outcome import ACTIONS, Decision, Policy, classify_claude_code, classify_opencode, decide
from gym_contract.reading._json_parsing import loads
from tests.cli.test_cli_artifacts import is_claude_code_stream
from tests.outcome.test_outcome import CLAUDE_CODE_CASES, EXPORT, OPENCODE_CASES
from tests.strategies import (
    as_line,
    damaged_lines,
    file_lines,
    interpreters_own_stack,
    json_values,
    jsonl,
    mutated_records,
    nested,
)
from tests.support import REPO, run_in_process

# ---------------------------------------------------------------------------------------- inputs


def seeds(artifact: str, cases: list[Any]) -> tuple[dict[str, Any], ...]:
    """Every event (or export) of the hand-written cases: what the mutations start from."""
    found: list[dict[str, Any]] = []
    for case in cases:
        value = case.artifacts.get(artifact)
        found += [value] if isinstance(value, dict) else [event for event in value or () if isinstance(event, dict)]
    return tuple(found) + ((EXPORT,) if artifact == "export" else ())


def events(artifact: str, cases: list[Any]) -> st.SearchStrategy[Any]:
    """Events broken at random, and any JSON value."""
    return st.one_of(mutated_records(seeds(artifact, cases)), json_values())


def stream(artifact: str, cases: list[Any]) -> st.SearchStrategy[list[Any]]:
    """A stream as a caller may hand it over: parsed events, their raw lines as bytes or text, damaged lines."""
    one = events(artifact, cases)
    line = st.builds(as_line, one)
    text = line.map(lambda raw: raw.decode("utf-8", "surrogatepass"))
    return st.lists(st.one_of(one, line, text, damaged_lines()), max_size=6)


CLAUDE_STREAM = stream("stream_events", CLAUDE_CODE_CASES)
OPENCODE_EVENTS = stream("events", OPENCODE_CASES)
EXPORTS = st.one_of(st.none(), events("export", OPENCODE_CASES))
EXIT_CODES = st.none() | st.integers(-1, 255)


def errors_of(outcome: Any) -> list[str]:
    return [
        d.code for d in iter_diagnostics(outcome.model_dump(mode="python"), "agent_outcome") if d.severity == "error"
    ]


# ------------------------------------------------------------------------------------------ laws


@given(CLAUDE_STREAM, EXIT_CODES, st.booleans())
def test_any_claude_code_stream_classifies_to_a_valid_outcome(lines: list[Any], exit_code: Any, timed_out: bool):
    with interpreters_own_stack():
        assert errors_of(classify_claude_code(lines, exit_code=exit_code, timed_out=timed_out)) == []


@given(EXPORTS, OPENCODE_EVENTS, EXIT_CODES, st.booleans())
def test_any_opencode_export_and_events_classify_to_a_valid_outcome(
    export: Any, lines: list[Any], exit_code: Any, timed_out: bool
):
    with interpreters_own_stack():
        assert errors_of(classify_opencode(export, lines, exit_code=exit_code, timed_out=timed_out)) == []


@cache
def outcome_seeds() -> tuple[dict[str, Any], ...]:
    classified = [classify_opencode(**case.artifacts) for case in OPENCODE_CASES]
    classified += [classify_claude_code(**case.artifacts) for case in CLAUDE_CODE_CASES]
    return tuple(outcome.model_dump(mode="python") for outcome in classified)


OUTCOMES = st.one_of(mutated_records(outcome_seeds()), json_values())


def decision_or_refusal(outcome: Any) -> Decision | ContractError:
    try:
        return decide(outcome)
    except ContractError as refusal:
        return refusal


@given(OUTCOMES)
def test_decide_decides_or_raises_contract_error_naming_an_error(outcome: Any):
    answer = decision_or_refusal(outcome)
    if isinstance(answer, Decision):
        assert answer.action in ACTIONS
    else:
        assert any(diagnostic.severity == "error" for diagnostic in answer.diagnostics)


def read_back(out: str) -> Any:
    """The command's JSON output as the package's reader reads it."""
    return loads(out.encode())


@given(file_lines(events("stream_events", CLAUDE_CODE_CASES)))
def test_the_outcome_command_takes_any_stream_file_and_writes_what_it_classified(lines: list[bytes]):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stream.jsonl"
        path.write_bytes(jsonl(lines))
        status, out, err = run_in_process("outcome", "claude-code", str(path), "--exit-code", "1")
    if not is_claude_code_stream(jsonl(lines)):  # nothing of Claude Code's in it: refused, not called a crash
        assert (status, out) == (2, "")
        assert err.startswith(f"gym-contract: {path}: not Claude Code stream-json output: ")
        return
    assert (status, err) == (0, "")
    assert read_back(out) == classify_claude_code(lines, exit_code=1).model_dump(mode="python")


@given(st.one_of(st.builds(as_line, EXPORTS), damaged_lines()), file_lines(events("events", OPENCODE_CASES)))
def test_the_outcome_command_takes_any_export_and_events_files(export: bytes, lines: list[bytes]):
    with tempfile.TemporaryDirectory() as folder:
        export_path, events_path = Path(folder) / "export.json", Path(folder) / "run.jsonl"
        export_path.write_bytes(export)
        events_path.write_bytes(jsonl(lines))
        status, out, err = run_in_process("outcome", "opencode", str(export_path), "--events", str(events_path))
    assert status in (0, 2)
    if status == 0:
        expected = classify_opencode(read_back(export.decode()), lines).model_dump(mode="python")
        assert read_back(out) == expected
    else:
        assert len(err.splitlines()) == 1
        assert err.startswith("gym-contract: ")


@given(st.one_of(st.builds(as_line, OUTCOMES), damaged_lines()))
def test_the_decide_command_decides_any_outcome_file_or_says_what_is_wrong_line_by_line(content: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "outcome.json"
        path.write_bytes(content)
        status, out, err = run_in_process("decide", str(path))
    assert status in (0, 2)
    if status == 0:
        assert Decision(**read_back(out)).action in ACTIONS
    else:
        assert out == ""
        assert err
        assert all(line.startswith("gym-contract: ") for line in err.splitlines())


# ------------------------------------------------------------------------------ crash classes pinned


def test_opencode_events_whose_type_is_a_list_are_no_events_of_any_kind():
    assert classify_opencode(None, [{"type": []}]).failure_kind == "agent_crash"
    after_an_error = [{"type": "error", "error": {"name": "APIError", "data": {}}}, {"type": ["text"]}]
    assert classify_opencode(None, after_an_error).failure_kind == "unknown_error"


def test_a_claude_code_terminal_reason_that_is_a_list_names_no_reason():
    ended = classify_claude_code([{"type": "result", "subtype": "error_during_execution", "terminal_reason": []}])
    assert ended.failure_kind == "unknown_error"


def deep_line(event: dict[str, Any]) -> str:
    return json.dumps({**event, "content": "@"}).replace('"@"', "[" * 1000 + "]" * 1000)


def test_the_outcome_command_reads_a_stream_with_content_nested_a_thousand_levels(tmp_path: Path):
    path = tmp_path / "stream.jsonl"
    path.write_text(deep_line({"type": "assistant"}) + "\n" + json.dumps({"type": "result", "subtype": "success"}))
    status, out, _ = run_in_process("outcome", "claude-code", str(path))
    assert (status, read_back(out)["response_status"]) == (0, "completed")


def test_the_outcome_command_reads_opencode_events_nested_a_thousand_levels(tmp_path: Path):
    export, events = tmp_path / "export.json", tmp_path / "run.jsonl"
    export.write_text(json.dumps(EXPORT))
    events.write_text(deep_line({"type": "text", "sessionID": "ses_1"}) + "\n")
    status, out, _ = run_in_process("outcome", "opencode", str(export), "--events", str(events))
    assert (status, read_back(out)["response_status"]) == (0, "completed")


def test_a_provider_body_nested_past_the_readers_limit_is_no_json_body():
    body = '{"error": ' + "[" * 5000 + "]" * 5000 + "}"
    error = {"name": "APIError", "data": {"statusCode": 400, "responseBody": body}}
    export = {"messages": [{"info": {"role": "assistant", "error": error}, "parts": []}]}
    assert classify_opencode(export).failure_kind == "model_request_error"


def test_a_status_code_no_http_status_can_be_is_no_status():
    error = {"name": "APIError", "data": {"statusCode": 10**5000, "isRetryable": True}}
    export = {"messages": [{"info": {"role": "assistant", "error": error}, "parts": []}]}
    assert (classify_opencode(export).failure_kind, classify_opencode(export).status_code) == (
        "model_transport_error",
        None,
    )


def test_a_signal_value_no_double_holds_is_written_as_it_was_read(tmp_path: Path):
    path = tmp_path / "stream.jsonl"
    path.write_text('{"type": "result", "subtype": 1E+400, "is_error": true}\n')
    status, out, _ = run_in_process("outcome", "claude-code", str(path))
    signals = read_back(out)["signals"]
    assert status == 0
    assert {"artifact": "stream", "field": "lines[0].subtype", "value": NumberText("1E+400")} in signals
    assert '"value": 1E+400' in out


def test_decide_on_a_mapping_that_is_no_outcome_raises_contract_error_with_its_diagnostics():
    with pytest.raises(ContractError) as refusal:
        decide({"harness": 1})
    assert refusal.value.diagnostics == tuple(iter_diagnostics({"harness": 1}, "agent_outcome"))


def test_a_policy_value_nested_a_thousand_levels_is_refused_in_one_short_line(tmp_path: Path):
    with pytest.raises(ValueError, match="max_retries must be a whole number") as refusal:
        Policy.from_dict({"max_retries": nested(1, 1000)})
    assert len(str(refusal.value)) < 200
    outcome, policy = tmp_path / "outcome.json", tmp_path / "policy.json"
    outcome.write_text(json.dumps(outcome_seeds()[0], default=str))
    policy.write_text('{"max_retries": ' + "[" * 1000 + "]" * 1000 + "}")
    status, _, err = run_in_process("decide", str(outcome), "--policy", str(policy))
    assert (status, len(err.splitlines())) == (2, 1)


def test_the_shipped_export_still_reads_through_the_command():
    status, out, _ = run_in_process(
        "outcome", "opencode", str(REPO / "examples/reference/opencode-1.17.11-export.json")
    )
    assert (status, read_back(out)["harness_version"]) == (0, "1.17.11")


@pytest.mark.parametrize(
    ("facts", "error"),
    [
        pytest.param({"exit_code": 10**5000}, ValueError, id="exit-code-beyond-64-bits"),
        pytest.param({"exit_code": "1"}, TypeError, id="exit-code-text"),
        pytest.param({"version": 2}, TypeError, id="version-number"),
    ],
)
def test_process_facts_no_host_reports_are_bad_arguments(facts: dict[str, Any], error: type[Exception]):
    with pytest.raises(error):
        classify_claude_code([], **facts)
    with pytest.raises(error):
        classify_opencode(None, [], **facts)
