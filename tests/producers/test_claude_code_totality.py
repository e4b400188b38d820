"""The Claude Code producer never raises: any transcripts and any stream give a valid document, on any path."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract.producers.claude_code import SUMMARY_FIELDS, observe, outcome, read_run, run_summary
from gym_contract.reading._json_parsing import loads
from tests.cli.test_cli_artifacts import is_claude_code_stream
from tests.outcome.test_outcome import CLAUDE_CODE_CASES
from tests.strategies import as_line, damaged_lines, file_lines, json_values, jsonl, mutated_records
from tests.support import REPO, run_in_process

# ---------------------------------------------------------------------------------------- inputs


@cache
def transcript_events() -> tuple[dict[str, Any], ...]:
    """Every event of the real transcripts shipped with the repository."""
    found: list[dict[str, Any]] = []
    for root in (REPO / "tests" / "data" / "claude-code", REPO / "examples" / "claude-code"):
        for path in sorted(root.rglob("*.jsonl")):
            for line in path.read_bytes().splitlines():
                event = orjson.loads(line)
                if isinstance(event, dict):
                    found.append(event)
    return tuple(found)


STREAM_EVENTS = tuple(event for case in CLAUDE_CODE_CASES for event in case.artifacts["stream_events"])
TRANSCRIPT_LINES = file_lines(st.one_of(mutated_records(transcript_events()), json_values()))
STREAM_LINES = file_lines(st.one_of(mutated_records(STREAM_EVENTS), json_values()))
SIDECARS = st.one_of(st.builds(as_line, json_values()), damaged_lines(), st.just(b'{"toolUseId": "toolu_1"}'))


def config_dir(folder: Path, main: list[bytes], subagent: list[bytes], sidecar: bytes) -> Path:
    """A CLAUDE_CONFIG_DIR holding a session, one subagent transcript and its sidecar."""
    session = folder / "config" / "projects" / "p"
    (session / "S" / "subagents").mkdir(parents=True)
    (session / "S.jsonl").write_bytes(jsonl(main))
    (session / "S" / "subagents" / "agent-a1.jsonl").write_bytes(jsonl(subagent))
    (session / "S" / "subagents" / "agent-a1.meta.json").write_bytes(sidecar)
    return folder / "config"


def errors(document: Any, kind: str) -> list[str]:
    return [d.code for d in iter_diagnostics(document, kind) if d.severity == "error"]


# ------------------------------------------------------------------------------------------ laws


@given(TRANSCRIPT_LINES, TRANSCRIPT_LINES, SIDECARS, STREAM_LINES)
def test_any_transcripts_and_stream_give_a_valid_bundle_outcome_and_summary(
    main: list[bytes], subagent: list[bytes], sidecar: bytes, stream: list[bytes]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = config_dir(Path(folder), main, subagent, sidecar)
        run = read_run(config, stream, "policy", exit_code=1)
        assert observe(config, stream, "policy", exit_code=1) == run.observations
        assert run_summary(config, stream, exit_code=1) == run.summary
    document = run.document()
    assert errors(document["ng_agent_observations"], "bundle") == []
    assert errors(document["ng_agent_outcome"], "agent_outcome") == []
    assert outcome(stream, exit_code=1) == run.outcome
    assert list(run.summary)[: len(SUMMARY_FIELDS)] == list(SUMMARY_FIELDS)


@given(TRANSCRIPT_LINES, STREAM_LINES)
def test_the_observe_command_takes_any_run_and_writes_the_document_it_read(
    main: list[bytes], stream: list[bytes]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = config_dir(Path(folder), main, [], b"{}")
        stream_path = Path(folder) / "stdout.jsonl"
        stream_path.write_bytes(jsonl(stream))
        status, out, err = run_in_process(
            "observe", "claude-code", str(config), "--stream", str(stream_path), "--model-ref", "policy"
        )
        expected = read_run(config, stream_path, "policy").document()
    if not is_claude_code_stream(jsonl(stream)):  # nothing of Claude Code's in it: refused, not read as a crash
        assert (status, out) == (2, "")
        assert err.startswith(f"gym-contract: {stream_path}: not Claude Code stream-json output: ")
        return
    assert (status, err) == (0, "")
    assert loads(out.encode()) == expected


# ------------------------------------------------------------------------------ crash classes pinned


def write_run(tmp_path: Path, *events: Any) -> Path:
    config = tmp_path / "config"
    session = config / "projects" / "p" / "S.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("".join(json.dumps(event) + "\n" for event in events))
    return config


def user_result(**event: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}
    return {"sessionId": "S", "type": "user", "message": {"role": "user", "content": [block]}, **event}


def test_the_observe_command_reads_a_stream_with_content_nested_a_thousand_levels(tmp_path: Path) -> None:
    config = write_run(tmp_path, {"sessionId": "S", "type": "user", "message": {"role": "user", "content": "hi"}})
    stream = tmp_path / "stdout.jsonl"
    deep = json.dumps({"type": "assistant", "message": "@"}).replace('"@"', "[" * 1000 + "]" * 1000)
    stream.write_text(deep + "\n" + json.dumps({"type": "result", "subtype": "success"}) + "\n")
    status, out, _ = run_in_process("observe", "claude-code", str(config), "--stream", str(stream))
    assert (status, loads(out.encode())["ng_agent_outcome"]["response_status"]) == (0, "completed")


def test_a_tool_result_whose_status_is_a_list_is_a_completed_call(tmp_path: Path) -> None:
    config = write_run(tmp_path, user_result(toolUseResult={"status": ["failed"]}))
    tools = [r for r in read_run(config).observations.records if r.kind == "tool_call"]
    assert [tool.status for tool in tools] == ["completed"]


def test_a_timestamp_no_double_holds_is_no_time(tmp_path: Path) -> None:
    config = write_run(tmp_path, user_result(timestamp=10**400))
    tools = [r for r in read_run(config).observations.records if r.kind == "tool_call"]
    assert [tool.completed_at for tool in tools] == [None]


def test_tool_input_keeps_integers_beyond_64_bits_exactly(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"n": 123456789012345678901234567890}}
    message = {"role": "assistant", "id": "msg_1", "content": [call]}
    config = write_run(tmp_path, {"sessionId": "S", "type": "assistant", "uuid": "u1", "message": message})
    [invocation] = [r for r in read_run(config).observations.records if r.kind == "agent_invocation"]
    assert invocation.conversation[0].arguments == '{"n":123456789012345678901234567890}'


def test_a_result_duration_no_double_holds_leaves_the_measured_one(tmp_path: Path) -> None:
    config = write_run(tmp_path, {"sessionId": "S", "type": "user", "message": {"role": "user", "content": "hi"}})
    stream = [json.dumps({"type": "result", "subtype": "success", "duration_ms": 10**400})]
    assert run_summary(config, stream, measured_duration_s=2.5)["duration_s"] == 2.5


def test_tool_times_further_apart_than_a_double_counts_have_no_duration(tmp_path: Path) -> None:
    start = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    started = {"sessionId": "S", "type": "assistant", "uuid": "u1", "timestamp": -1e308}
    started["message"] = {"role": "assistant", "id": "msg_1", "content": [start]}
    config = write_run(tmp_path, started, user_result(timestamp=1e308))
    document = read_run(config).document()
    [tool] = [r for r in document["ng_agent_observations"]["records"] if r["kind"] == "tool_call"]
    assert (tool["duration_ms"], errors(document["ng_agent_observations"], "bundle")) == (None, [])


@pytest.mark.parametrize("seconds", ["nan", "inf", "-5", "1e308"])
def test_a_measured_duration_that_is_no_duration_is_a_bad_argument(tmp_path: Path, seconds: str) -> None:
    config = write_run(tmp_path, {"sessionId": "S", "type": "user", "message": {"role": "user", "content": "hi"}})
    with pytest.raises(ValueError, match="measured_duration_s must be a number of seconds"):
        read_run(config, measured_duration_s=float(seconds))
    with pytest.raises(SystemExit) as stop:
        run_in_process("observe", "claude-code", str(config), "--duration-s", seconds)
    assert stop.value.code == 2  # argparse's usage error, which names --duration-s (tests/cli/test_cli_numbers.py)
