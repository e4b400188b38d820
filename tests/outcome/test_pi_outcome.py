"""The Pi outcome classifier: each way a Pi run ends, from a session file's entries or a `--mode json` stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract.outcome import classify_pi
from tests.outcome.test_outcome import Case
from tests.outcome.test_outcome import test_each_failure_shape_gives_its_kind_status_signals_and_decision as check
from tests.support import REPO, run_in_process

# Hand-written after pi-ai's AssistantMessage and the coding agent's session entries and events.
ANTHROPIC_400 = (
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.236: `tool_use` ids were '
    'found without `tool_result` blocks immediately after"},"request_id":"req_1"}'
)
OVERFLOW_400 = (
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213000 tokens > '
    '200000 maximum"}}'
)


def said(stop: str = "stop", error: str | None = None, **more: Any) -> dict[str, Any]:
    """An assistant message as pi-ai writes one."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "done"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": stop,
        "timestamp": 1763681581544,
        **more,
    }
    if error is not None:
        message["errorMessage"] = error
    return message


USER = {"role": "user", "content": [{"type": "text", "text": "fix the test"}], "timestamp": 1763681581000}
HEADER = {"type": "session", "id": "s-1", "timestamp": "2025-11-20T23:33:50.805Z", "cwd": "/work"}


def session(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    entries = [{"type": "message", "timestamp": "2025-11-20T23:34:00.000Z", "message": m} for m in (USER, *messages)]
    return [HEADER, *entries]


def events(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**HEADER, "version": 3}, {"type": "agent_start"}, *lines]


def end(message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message_end", "message": message}


def pi(id: str, kind: str | None, status: str, retryable: bool, action: str, signals=(), **artifacts: Any) -> Case:
    return Case(id, artifacts, kind, status, retryable, action, list(signals))


LAST = ("session", "lines[2].message.stopReason")
CASES = [
    pi("success", None, "completed", False, "grade", [LAST], lines=session(said())),
    pi(
        "provider-400",
        "model_request_error",
        "failed",
        False,
        "grade",
        [LAST],
        lines=session(said("error", ANTHROPIC_400)),
    ),
    pi(
        "rate-limited",
        "model_rate_limited",
        "failed",
        True,
        "retry",
        lines=session(said("error", "429 Too Many Requests")),
    ),
    pi(
        "overloaded-529",
        "model_server_error",
        "failed",
        True,
        "retry",
        lines=session(said("error", '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')),
    ),
    pi(
        "auth-401",
        "model_auth_error",
        "failed",
        False,
        "exclude",
        lines=session(said("error", "401 invalid x-api-key")),
    ),
    pi("status-404", "unknown_error", "failed", False, "exclude", lines=session(said("error", "404 model not found"))),
    pi("terminated", "model_transport_error", "failed", True, "retry", lines=session(said("error", "terminated"))),
    pi(
        "connection",
        "model_transport_error",
        "failed",
        True,
        "retry",
        lines=session(said("error", "Connection error.")),
    ),
    pi(
        "overloaded-no-status",
        "model_server_error",
        "failed",
        True,
        "retry",
        lines=session(said("error", "Overloaded")),
    ),
    pi("overflow-400", "model_context_limit", "incomplete", False, "grade", lines=session(said("error", OVERFLOW_400))),
    pi(
        "overflow-bedrock",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        lines=session(said("error", "Input is too long for requested model.")),
    ),
    pi("unexplained-error", "unknown_error", "failed", False, "exclude", lines=session(said("error", "boom"))),
    pi("length", "model_output_limit", "incomplete", False, "grade", lines=session(said("length"))),
    pi("aborted", "agent_aborted", "failed", False, "exclude", lines=session(said("aborted", "Request was aborted"))),
    pi("aborted-by-deadline", "agent_timeout", "failed", True, "retry", lines=session(said("aborted")), timed_out=True),
    pi("cut-off-after-tool-use", "agent_crash", "failed", True, "retry", lines=session(said("toolUse")), exit_code=1),
    pi("cut-off-exit-0", "unknown_error", "failed", False, "exclude", lines=session(said("toolUse")), exit_code=0),
    pi("deadline-before-any-answer", "agent_timeout", "failed", True, "retry", lines=session(), timed_out=True),
    pi("nothing", "unknown_error", "failed", False, "exclude", lines=[]),
    pi(
        "error-recovered-by-later-work",
        None,
        "completed",
        False,
        "grade",
        [("session", "lines[2].message.stopReason"), ("session", "lines[3].message.stopReason")],
        lines=session(said("error", "terminated"), said()),
    ),
    pi(
        "stream-retry-recovered",
        None,
        "completed",
        False,
        "grade",
        [("stream", "lines[5].success"), ("stream", "lines[6].message.stopReason")],
        lines=events(
            end(said("error", "529 overloaded")),
            {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "529"},
            {"type": "agent_end", "messages": [said("error", "529")], "willRetry": True},
            {"type": "auto_retry_end", "success": True, "attempt": 1},
            end(said()),
        ),
    ),
    pi(
        "stream-retries-given-up",
        "model_server_error",
        "failed",
        True,
        "retry",
        [("stream", "lines[4].finalError")],
        lines=events(
            end(said("error", "503 Service Unavailable")),
            {"type": "auto_retry_start", "attempt": 3, "maxAttempts": 3, "delayMs": 8000, "errorMessage": "503"},
            {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": "503 Service Unavailable"},
        ),
    ),
    pi(
        "stream-agent-end-only",
        "model_request_error",
        "failed",
        False,
        "grade",
        [("stream", "lines[2].messages[1].stopReason")],
        lines=events({"type": "agent_end", "messages": [USER, said("error", ANTHROPIC_400)]}),
    ),
    pi(
        "stream-overflow-compacted-then-done",
        None,
        "completed",
        False,
        "grade",
        [("stream", "lines[4].reason")],
        lines=events(
            end(said("error", OVERFLOW_400)),
            {"type": "compaction_start", "reason": "overflow"},
            {"type": "compaction_end", "reason": "overflow", "result": {"summary": "s"}, "willRetry": True},
            end(said()),
        ),
    ),
    pi(
        "receipt-wrapped-lines",
        "model_output_limit",
        "incomplete",
        False,
        "grade",
        [("stream", "lines[2].message.stopReason")],
        lines=[{"t": 1763681581.5 + i, "line": line} for i, line in enumerate(events(end(said("length"))))],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_each_way_a_pi_run_ends_gives_its_kind_status_signals_and_decision(case: Case) -> None:
    check(classify_pi, case)


def test_the_provider_status_and_error_type_are_kept_with_the_text() -> None:
    outcome = classify_pi(session(said("error", ANTHROPIC_400)))
    assert (outcome.status_code, outcome.error_name) == (400, "invalid_request_error")
    assert outcome.error_message == f"{ANTHROPIC_400} (status 400)"


def test_a_413_is_a_request_error_not_an_overflow() -> None:
    outcome = classify_pi(session(said("error", "413 Request Entity Too Large")))
    assert (outcome.failure_kind, outcome.status_code) == ("model_request_error", 413)


def test_outcome_pi_reads_a_real_session_and_refuses_a_file_of_something_else(tmp_path: Path) -> None:
    real = REPO / "examples" / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"
    status, out, err = run_in_process("outcome", "pi", str(real), "--exit-code", "0")
    outcome = json.loads(out)
    assert (status, err, outcome["response_status"]) == (0, "", "completed")
    # The real 400 rejection was followed by more work: a signal, not the verdict.
    assert any(s["value"] == "error, not terminal: work followed" for s in outcome["signals"])

    (tmp_path / "other.jsonl").write_text("[1, 2]\n")
    status, out, err = run_in_process("outcome", "pi", str(tmp_path / "other.jsonl"))
    assert (status, out) == (2, "")
    assert "not a Pi session file or `pi --mode json` output" in err
