"""The Codex outcome classifier: rollout `error`/`turn_aborted` events and `exec --json` failures onto failure kinds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import classify_codex, iter_diagnostics
from gym_contract.outcome import CODEX_TESTED_VERSION, decide
from tests.strategies import as_line, damaged_lines, interpreters_own_stack, json_values, mutated_records
from tests.support import REPO

CASES = REPO / "tests" / "conformance" / "producers" / "codex"


def rollout(*events: dict[str, Any], version: str = CODEX_TESTED_VERSION) -> list[dict[str, Any]]:
    """A rollout file's lines: its session_meta, one turn started, the given `event_msg` payloads."""
    meta = {"id": "s", "cli_version": version, "source": "exec"}
    lines = [{"timestamp": "2026-05-11T08:00:00.000Z", "type": "session_meta", "payload": meta}]
    lines.append({"timestamp": "2026-05-11T08:00:00.010Z", "type": "event_msg", "payload": {"type": "task_started"}})
    for event in events:
        kind = "response_item" if event.get("type") in ("message", "function_call", "reasoning") else "event_msg"
        lines.append({"timestamp": "2026-05-11T08:00:01.000Z", "type": kind, "payload": event})
    return lines


def error(message: str, info: Any = None) -> dict[str, Any]:
    return {"type": "error", "message": message, "codex_error_info": info}


DONE = {"type": "task_complete", "last_agent_message": None}
WORK = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"}


def exec_stream(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"}, *events]


def failed(message: str) -> dict[str, Any]:
    return {"type": "turn.failed", "error": {"message": message}}


KINDS = [
    ("completed", rollout(DONE), None, None),
    ("overflow by name", rollout(error("too long", "context_window_exceeded"), DONE), "model_context_limit", None),
    (
        "overflow by Codex's wording",
        exec_stream(failed("Codex ran out of room in the model's context window. Start a new thread.")),
        "model_context_limit",
        None,
    ),
    (
        "overflow by provider wording",
        exec_stream(failed("context_length_exceeded: too many")),
        "model_context_limit",
        None,
    ),
    (
        "status in the structured info",
        rollout(error("retry limit", {"response_too_many_failed_attempts": {"http_status_code": 502}})),
        "model_server_error",
        502,
    ),
    (
        "429 in the text",
        exec_stream(failed("unexpected status 429 Too Many Requests: slow down")),
        "model_rate_limited",
        429,
    ),
    (
        "last status in the text",
        exec_stream(failed("exceeded retry limit, last status: 500")),
        "model_server_error",
        500,
    ),
    ("401 in the text", exec_stream(failed("unexpected status 401 Unauthorized: bad key")), "model_auth_error", 401),
    ("400 in the text", exec_stream(failed("unexpected status 400 Bad Request: {}")), "model_request_error", 400),
    ("bad request by name", rollout(error("invalid", "bad_request")), "model_request_error", None),
    ("unauthorized by name", rollout(error("login", "unauthorized")), "model_auth_error", None),
    ("usage limit by name", rollout(error("limit", "usage_limit_exceeded")), "model_rate_limited", None),
    (
        "usage limit by wording",
        exec_stream(failed("You've hit your usage limit. Try again later.")),
        "model_rate_limited",
        None,
    ),
    (
        "disconnected without a status",
        rollout(error("stream disconnected before completion", {"response_stream_disconnected": {}})),
        "model_transport_error",
        None,
    ),
    (
        "transport by wording",
        exec_stream(failed("stream disconnected before completion: eof")),
        "model_transport_error",
        None,
    ),
    ("nothing established", exec_stream(failed("something odd happened")), "unknown_error", None),
    ("a top-level error event alone", exec_stream({"type": "error", "message": "boom"}), "unknown_error", None),
    ("aborted", rollout({"type": "turn_aborted", "reason": "interrupted"}), "agent_aborted", None),
]


@pytest.mark.parametrize(("name", "events", "kind", "status"), KINDS, ids=[case[0] for case in KINDS])
def test_each_native_signal_gives_its_failure_kind(name: str, events: list[Any], kind: str | None, status: Any) -> None:
    outcome = classify_codex(events)

    assert (outcome.failure_kind, outcome.status_code) == (kind, status)
    assert [
        d for d in iter_diagnostics(outcome.model_dump(mode="python"), "agent_outcome") if d.severity == "error"
    ] == []


def test_an_error_followed_by_work_in_the_same_turn_is_not_the_end() -> None:
    outcome = classify_codex(rollout(error("stream disconnected before completion"), WORK, DONE))

    assert outcome.response_status == "completed"
    assert any(signal.value == "not terminal: work followed" for signal in outcome.signals)


def test_the_last_turn_decides_a_session_of_many() -> None:
    first = rollout(error("unexpected status 500", "internal_server_error"), DONE)
    later = [{"timestamp": "2026-05-11T08:01:00.000Z", "type": "event_msg", "payload": {"type": "task_started"}}]
    later.append({"timestamp": "2026-05-11T08:01:09.000Z", "type": "event_msg", "payload": DONE})

    assert classify_codex(first).failure_kind == "model_server_error"
    assert classify_codex(first + later).response_status == "completed"


def test_the_process_decides_what_the_artifact_leaves_open() -> None:
    started = rollout()

    assert classify_codex(started, exit_code=137).failure_kind == "agent_crash"
    assert classify_codex(started, exit_code=0).failure_kind == "unknown_error"
    assert classify_codex(started, timed_out=True).failure_kind == "agent_timeout"
    assert classify_codex(rollout({"type": "turn_aborted", "reason": "interrupted"}), timed_out=True).failure_kind == (
        "agent_timeout"
    )
    assert classify_codex([], exit_code=None).failure_kind == "unknown_error"
    assert classify_codex([], exit_code=1).failure_kind == "agent_crash"
    # A provider error is the cause even when the deadline also passed.
    assert classify_codex(rollout(error("x", "context_window_exceeded")), timed_out=True).failure_kind == (
        "model_context_limit"
    )


def test_a_completed_run_with_a_failing_exit_code_is_said_so() -> None:
    outcome = classify_codex(rollout(DONE), exit_code=1)

    assert outcome.response_status == "completed"
    assert "exit code 1 although the last turn completed with no error" in outcome.warnings


def test_the_version_comes_from_the_rollout_and_an_untested_one_is_warned_of() -> None:
    assert classify_codex(rollout(DONE)).warnings == []
    assert classify_codex(rollout(DONE, version="0.46.0")).harness_version == "0.46.0"
    assert "untested" in classify_codex(rollout(DONE, version="0.46.0")).warnings[0]
    assert "version unknown" in classify_codex(exec_stream({"type": "turn.completed"})).warnings[0]
    assert classify_codex(exec_stream({"type": "turn.completed"}), version="0.125.0").warnings == []


def test_damaged_lines_are_warned_of_and_the_rest_is_read() -> None:
    lines = [json.dumps(event).encode() for event in rollout(DONE)] + [b"{not json", b"[1, 2]"]

    outcome = classify_codex(lines)

    assert outcome.response_status == "completed"
    assert "2 events line(s) are not JSON objects and were ignored (lines 4, 5)" in outcome.warnings


def test_a_damaged_line_is_warned_of_by_its_number_counted_from_1() -> None:
    lines = [b"{not json"] + [json.dumps(event).encode() for event in rollout(DONE)]

    outcome = classify_codex(lines)

    assert "1 events line(s) are not JSON objects and were ignored (line 1)" in outcome.warnings


def test_decide_grades_retries_and_excludes_codex_outcomes() -> None:
    assert decide(classify_codex(rollout(error("x", "context_window_exceeded")))).action == "grade"
    assert decide(classify_codex(exec_stream(failed("unexpected status 503 Service Unavailable")))).action == "retry"
    assert decide(classify_codex(rollout({"type": "turn_aborted", "reason": "replaced"}))).action == "exclude"


SEED_EVENTS = tuple(
    json.loads(line) for path in sorted(CASES.rglob("*.jsonl")) for line in path.read_text().splitlines() if line
)
ONE = st.one_of(mutated_records(SEED_EVENTS), json_values())
STREAM = st.lists(st.one_of(ONE, st.builds(as_line, ONE), damaged_lines()), max_size=8)


@given(STREAM, st.none() | st.integers(-1, 255), st.booleans())
def test_any_events_classify_to_a_valid_outcome(lines: list[Any], exit_code: Any, timed_out: bool) -> None:
    with interpreters_own_stack():
        outcome = classify_codex(lines, exit_code=exit_code, timed_out=timed_out)
    found = iter_diagnostics(outcome.model_dump(mode="python"), "agent_outcome")
    assert [d.code for d in found if d.severity == "error"] == []
