"""Agent outcomes: each failure kind from the artifacts of each harness, the policy over them, and its laws."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics, schemas
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome import (
    ACTIONS,
    FAILURE_KINDS,
    MAX_ERROR_MESSAGE,
    TRANSIENT_KINDS,
    ClaudeCodeError,
    Decision,
    OpenCodeError,
    Policy,
    classify_claude_code,
    classify_opencode,
    decide,
)
from tests.schema_instances import schema_instances
from tests.support import REPO

EXPORT = json.loads((REPO / "examples/reference/opencode-1.17.11-export.json").read_text())
T = 1_785_813_050_000  # ms, as OpenCode writes times

# ------------------------------------------------------------------------------ OpenCode artifacts
# Hand-written after the shapes of OUTCOME.md A.5-A.8: `{info, messages[{info, parts}]}` exports whose
# assistant errors are `{name, data}`, and `run --format json` events `{type, timestamp, sessionID, ...}`.


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    info = {"role": "user", "id": "msg_u", "sessionID": "ses_1", "time": {"created": T}}
    return {"info": info, "parts": [{"type": "text", "text": "fix the failing test"}, *parts]}


def assistant(*parts: dict[str, Any], error: dict | None = None, finish: str | None = "stop", done: bool = True):
    info: dict[str, Any] = {
        "role": "assistant",
        "id": "msg_a",
        "sessionID": "ses_1",
        "modelID": "policy",
        "providerID": "nemo_gym",
        "time": {"created": T + 10, **({"completed": T + 900} if done else {})},
    }
    if finish is not None:
        info["finish"] = finish
    if error is not None:
        info["error"] = error
    return {"info": info, "parts": [{"type": "step-start", "id": "prt_s"}, *parts]}


def export(*messages: dict[str, Any], version: str = "1.17.11") -> dict[str, Any]:
    return {"info": {"id": "ses_1", "version": version, "time": {"created": T}}, "messages": [user(), *messages]}


def tool(status: str, **state: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": "bash", "callID": "call_1", "state": {"status": status, "input": {}, **state}}


ABORTED_TOOL = tool(
    "error", error="Tool execution aborted", metadata={"interrupted": True}, time={"start": T, "end": T}
)


def api_error(message: str, status: int | None = None, retryable: bool = False, **data: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"message": message, "isRetryable": retryable, **data}
    if status is not None:
        fields["statusCode"] = status
    return {"name": "APIError", "data": fields}


def named(name: str, **data: Any) -> dict[str, Any]:
    return {"name": name, "data": data}


def event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": T, "sessionID": "ses_1", **payload}


STEP = [event("step_start", part={"type": "step-start"}), event("text", part={"type": "text", "text": "done"})]
OVERFLOW = named("ContextOverflowError", message="Input exceeds context window of this model")


@dataclass
class Case:
    """One run's artifacts and what must come of them."""

    id: str
    artifacts: dict[str, Any]
    kind: str | None
    status: str
    retryable: bool
    action: str
    signals: list[tuple[str, str]] = field(default_factory=list)


def oc(id: str, kind: str | None, status: str, retryable: bool, action: str, signals=(), **artifacts: Any) -> Case:
    return Case(id, artifacts, kind, status, retryable, action, list(signals))


ERR = ("export", "messages[1].info.error.name")
OPENCODE_CASES = [
    oc(
        "real-export-completed",
        None,
        "completed",
        False,
        "grade",
        [("export", "messages[2].info.finish")],
        export=EXPORT,
    ),
    oc(
        "overflow-recovered-by-compaction",
        None,
        "completed",
        False,
        "grade",
        [("export", "messages[2].parts[1].overflow"), ("events", "lines[2].error.name")],
        export=export(assistant(), user({"type": "compaction", "auto": True, "overflow": True}), assistant()),
        events=[*STEP, event("error", error=OVERFLOW), *STEP, event("done", reason="idle", rejected=[])],
        exit_code=1,
    ),
    oc(
        "context-overflow-error",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [ERR],
        export=export(assistant(error=named("ContextOverflowError", message="prompt is too long"), finish="error")),
    ),
    oc(
        "overflow-misreported-as-api-error",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [ERR, ("export", "messages[1].info.error.data.message")],
        export=export(
            assistant(
                error=api_error(
                    "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens.",
                    400,
                    retryable=True,
                )
            )
        ),
    ),
    oc(
        "overflow-in-response-body-code",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [ERR, ("export", "messages[1].info.error.data.responseBody")],
        export=export(
            assistant(error=api_error("Bad Request", 400, responseBody='{"error":{"code":"context_length_exceeded"}}'))
        ),
    ),
    oc(
        "overflow-misreported-as-unknown-error",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [ERR, ("export", "messages[1].info.error.data.message")],
        export=export(assistant(error=named("UnknownError", message="Error: prompt is too long: 210000 > 200000"))),
    ),
    oc(
        "unrecovered-overflow-in-events",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [("events", "lines[2].error.name")],
        events=[*STEP, event("error", error=OVERFLOW)],
        exit_code=1,
    ),
    oc(
        "output-length",
        "model_output_limit",
        "incomplete",
        False,
        "grade",
        [ERR],
        export=export(assistant(error=named("MessageOutputLengthError"), finish="length")),
    ),
    oc(
        "bad-request-400",
        "model_request_error",
        "failed",
        False,
        "grade",
        [ERR, ("export", "messages[1].info.error.data.statusCode")],
        export=export(assistant(error=api_error("Invalid 'tools[0].function.name': string too long", 400))),
    ),
    oc(
        "413-without-overflow-evidence",
        "model_request_error",
        "failed",
        False,
        "grade",
        [ERR],
        export=export(assistant(error=api_error("Request Entity Too Large", 413))),
    ),
    oc(
        "unprocessable-422",
        "model_request_error",
        "failed",
        False,
        "grade",
        [ERR],
        export=export(assistant(error=api_error("unknown field 'foo'", 422))),
    ),
    oc(
        "rate-limited-429",
        "model_rate_limited",
        "failed",
        True,
        "retry",
        [ERR],
        export=export(assistant(error=api_error("Rate limit reached", 429, retryable=True))),
    ),
    oc(
        "server-503",
        "model_server_error",
        "failed",
        True,
        "retry",
        [ERR],
        export=export(assistant(error=api_error("Service Unavailable", 503, retryable=True))),
    ),
    oc(
        "connection-reset-without-status",
        "model_transport_error",
        "failed",
        True,
        "retry",
        [ERR, ("export", "messages[1].info.error.data.isRetryable")],
        export=export(
            assistant(
                error=api_error(
                    "Connection reset by server", retryable=True, metadata={"code": "ECONNRESET", "syscall": "read"}
                )
            )
        ),
    ),
    oc(
        "decompression-failed-in-events",
        "model_transport_error",
        "failed",
        True,
        "retry",
        [("events", "lines[2].error.name")],
        events=[*STEP, event("error", error=api_error("Response decompression failed", retryable=True))],
        exit_code=1,
    ),
    oc(
        "provider-auth",
        "model_auth_error",
        "failed",
        False,
        "exclude",
        [ERR],
        export=export(assistant(error=named("ProviderAuthError", providerID="openai", message="no API key"))),
    ),
    oc(
        "unauthorized-401",
        "model_auth_error",
        "failed",
        False,
        "exclude",
        [ERR],
        export=export(assistant(error=api_error("Invalid API key", 401))),
    ),
    oc(
        "content-filter",
        "content_filter",
        "failed",
        False,
        "exclude",
        [ERR],
        export=export(
            assistant(error=named("ContentFilterError", message="blocked by content filter")), version="1.18.2"
        ),
    ),
    oc(
        "message-aborted",
        "agent_aborted",
        "failed",
        False,
        "exclude",
        [ERR],
        export=export(assistant(ABORTED_TOOL, error=named("MessageAbortedError", message="Aborted"))),
    ),
    oc(
        "aborted-tool-parts-only",
        "agent_aborted",
        "failed",
        False,
        "exclude",
        [("export", "messages[1].parts[1].state.error")],
        export=export(assistant(ABORTED_TOOL, finish="tool-calls")),
    ),
    oc(
        "deadline-with-running-tool",
        "agent_timeout",
        "failed",
        True,
        "retry",
        [("process", "timed_out"), ("export", "messages[1].parts[1].state.status")],
        export=export(assistant(tool("running", time={"start": T}), finish=None, done=False)),
        timed_out=True,
    ),
    oc(
        "abort-caused-by-deadline",
        "agent_timeout",
        "failed",
        True,
        "retry",
        [ERR, ("process", "timed_out")],
        export=export(assistant(error=named("MessageAbortedError", message="Aborted"))),
        timed_out=True,
    ),
    oc(
        "killed-mid-turn",
        "agent_crash",
        "failed",
        True,
        "retry",
        [("export", "messages[1].info.time.completed"), ("process", "exit_code")],
        export=export(assistant(tool("pending"), finish=None, done=False)),
        exit_code=137,
    ),
    oc(
        "cleanup-failed",
        "cleanup_failure",
        "failed",
        False,
        "exclude",
        [("process", "cleanup_error")],
        export=EXPORT,
        cleanup_error=RuntimeError("sandbox teardown failed: container not found"),
    ),
    oc(
        "unknown-error-with-ref",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [ERR, ("export", "messages[1].info.error.data.message")],
        export=export(assistant(error=named("UnknownError", message="Unexpected server error", ref="err_1"))),
    ),
    oc(
        "structured-output-error",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [ERR],
        export=export(assistant(error=named("StructuredOutputError", message="invalid JSON", retries=3))),
    ),
    oc(
        "status-less-api-error-not-retryable",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [ERR, ("export", "messages[1].info.error.data")],
        export=export(assistant(error=api_error("insufficient_quota"))),
    ),
    oc(
        "openai-404-marked-retryable",
        "unknown_error",
        "failed",
        True,
        "retry",
        [ERR, ("export", "messages[1].info.error.data.statusCode")],
        export=export(assistant(error=api_error("Not Found", 404, retryable=True))),
    ),
    oc(
        "no-artifacts-no-exit-code",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [("process", "artifacts")],
    ),
]

# --------------------------------------------------------------------------- Claude Code artifacts
# Hand-written after OUTCOME.md B.1-B.2: stream-json lines with `system/init`, assistant messages (the
# `<synthetic>` API-error ones carry `error` and `is_api_error_message`), `api_retry` events and `result`.


def init(version: str = "2.1.120") -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "session_id": "s1",
        "uuid": "u0",
        "cwd": "/work",
        "model": "claude-sonnet-4-5",
        "permissionMode": "bypassPermissions",
        "apiKeySource": "user",
        "claude_code_version": version,
        "tools": ["Bash", "Task"],
        "mcp_servers": [],
    }


def says(text: str, model: str = "claude-sonnet-4-5", **extra: Any) -> dict[str, Any]:
    message = {
        "id": "msg_1",
        "model": model,
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "stop_sequence" if model == "<synthetic>" else "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return {
        "type": "assistant",
        "message": message,
        "parent_tool_use_id": None,
        "session_id": "s1",
        "uuid": "u1",
        **extra,
    }


def synthetic(text: str, error: str) -> dict[str, Any]:
    return says(text, model="<synthetic>", error=error, is_api_error_message=True)


def api_retry(status: int | None, error: str, attempt: int = 1) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": attempt,
        "max_retries": 10,
        "retry_delay_ms": 500,
        "error_status": status,
        "error": error,
        "session_id": "s1",
        "uuid": f"r{attempt}",
    }


def result(subtype: str = "success", is_error: bool = False, **fields: Any) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": 1200,
        "duration_api_ms": 900,
        "num_turns": 2,
        "session_id": "s1",
        "uuid": "u9",
        "total_cost_usd": 0.01,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "permission_denials": [],
        **fields,
    }


def cc(id: str, kind: str | None, status: str, retryable: bool, action: str, signals=(), **artifacts: Any) -> Case:
    return Case(id, artifacts, kind, status, retryable, action, list(signals))


API = {"terminal_reason": "api_error"}
SUBTYPE = ("stream", "lines[2].subtype")
CLAUDE_CODE_CASES = [
    cc(
        "success", None, "completed", False, "grade", [SUBTYPE], stream_events=[init(), says("42"), result(result="42")]
    ),
    cc(
        "prompt-too-long",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [("stream", "lines[3].result"), ("stream", "lines[2].error")],
        stream_events=[
            init(),
            says("reading"),
            synthetic("Prompt is too long", "invalid_request"),
            result(is_error=True, result="Prompt is too long"),
        ],
        exit_code=1,
    ),
    cc(
        "blocking-limit-before-the-api",
        "model_context_limit",
        "incomplete",
        False,
        "grade",
        [("stream", "lines[1].terminal_reason")],
        stream_events=[
            init(),
            result(is_error=True, result="Prompt is too long", terminal_reason="blocking_limit", duration_api_ms=0),
        ],
        exit_code=1,
    ),
    cc(
        "max-output-tokens",
        "model_output_limit",
        "incomplete",
        False,
        "grade",
        [("stream", "lines[1].error")],
        stream_events=[
            init(),
            synthetic("API Error: the response exceeded the output token maximum", "max_output_tokens"),
            result(is_error=True, result="API Error: the response exceeded the output token maximum", **API),
        ],
    ),
    cc(
        "bad-request-400",
        "model_request_error",
        "failed",
        False,
        "grade",
        [("stream", "lines[1].api_error_status")],
        stream_events=[
            init(),
            result(is_error=True, result="API Error: 400 tools.0.name: invalid", api_error_status=400, **API),
        ],
    ),
    cc(
        "rate-limited-after-retries",
        "model_rate_limited",
        "failed",
        True,
        "retry",
        [("stream", "api_retry"), ("stream", "lines[3].api_error_status")],
        stream_events=[
            init(),
            api_retry(429, "rate_limit", 1),
            api_retry(429, "rate_limit", 2),
            result(is_error=True, result="API Error: 429 rate_limit_error", api_error_status=429, **API),
        ],
        exit_code=1,
    ),
    cc(
        "overloaded-without-status-field",
        "model_server_error",
        "failed",
        True,
        "retry",
        [("stream", "lines[1].error"), ("stream", "lines[2].result")],
        stream_events=[
            init("2.1.39"),
            synthetic("API Error: 529 Overloaded. Try again later.", "overloaded"),
            result(is_error=True, result="API Error: 529 Overloaded. Try again later."),
        ],
    ),
    cc(
        "connection-errors-retried-without-status",
        "model_transport_error",
        "failed",
        True,
        "retry",
        [("stream", "lines[3].error_status")],
        stream_events=[
            init(),
            says("working"),
            api_retry(None, "unknown", 1),
            api_retry(None, "unknown", 2),
            result(is_error=True, result="API Error: Connection error.", **API),
        ],
    ),
    cc(
        "login-required",
        "model_auth_error",
        "failed",
        False,
        "exclude",
        [("stream", "lines[1].error")],
        stream_events=[
            init(),
            synthetic("Please run /login · API Error: 401 invalid x-api-key", "authentication_failed"),
            result(is_error=True, result="Please run /login · API Error: 401", api_error_status=401, **API),
        ],
    ),
    cc(
        "max-turns",
        "agent_max_turns",
        "incomplete",
        False,
        "grade",
        [SUBTYPE],
        stream_events=[
            init(),
            says("still going"),
            result("error_max_turns", True, errors=[], terminal_reason="max_turns"),
        ],
    ),
    cc(
        "aborted-streaming",
        "agent_aborted",
        "failed",
        False,
        "exclude",
        [("stream", "lines[2].terminal_reason")],
        stream_events=[
            init(),
            says("partial"),
            result("error_during_execution", True, terminal_reason="aborted_streaming"),
        ],
    ),
    cc(
        "no-result-at-the-deadline",
        "agent_timeout",
        "failed",
        True,
        "retry",
        [("stream", "result"), ("process", "timed_out")],
        stream_events=[init(), says("thinking")],
        timed_out=True,
    ),
    cc(
        "no-result-process-died",
        "agent_crash",
        "failed",
        True,
        "retry",
        [("stream", "result"), ("process", "exit_code")],
        stream_events=[init(), says("thinking"), '{"type":"assistant","mess'],
        exit_code=1,
    ),
    cc(
        "model-not-found",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [("stream", "lines[2]")],
        stream_events=[
            init(),
            synthetic("API Error: 404 model: claude-nope", "model_not_found"),
            result(is_error=True, result="API Error: 404 model: claude-nope", api_error_status=404, **API),
        ],
    ),
    cc(
        "max-budget",
        "unknown_error",
        "failed",
        False,
        "exclude",
        [SUBTYPE, ("stream", "lines[2]")],
        stream_events=[init(), says("spent"), result("error_max_budget_usd", True, errors=["budget of $1 exceeded"])],
    ),
]

CASES = [pytest.param(classify_opencode, c, id=f"opencode-{c.id}") for c in OPENCODE_CASES] + [
    pytest.param(classify_claude_code, c, id=f"claude_code-{c.id}") for c in CLAUDE_CODE_CASES
]


@pytest.mark.parametrize(("classify", "case"), CASES)
def test_each_failure_shape_gives_its_kind_status_signals_and_decision(classify, case):
    outcome = classify(**case.artifacts)
    assert (outcome.failure_kind, outcome.response_status, outcome.retryable) == (
        case.kind,
        case.status,
        case.retryable,
    )
    assert outcome.partial_work_retained == (case.status == "incomplete")
    seen = {(signal.artifact, signal.field) for signal in outcome.signals}
    assert set(case.signals) <= seen, f"missing signals; seen: {sorted(seen)}"
    assert decide(outcome).action == case.action
    assert [d for d in iter_diagnostics(outcome.model_dump(mode="json"), "agent_outcome") if d.severity != "info"] == []


def test_the_tables_cover_every_failure_kind_of_the_schema():
    enum = [kind for kind in schemas.get("agent_outcome")["properties"]["failure_kind"]["enum"] if kind is not None]
    assert list(FAILURE_KINDS) == enum
    covered = {case.kind for case in OPENCODE_CASES + CLAUDE_CODE_CASES}
    assert covered == {*enum, None}


def test_error_names_are_the_upstream_literals():
    assert OpenCodeError.NAMES == (
        "APIError",
        "ContextOverflowError",
        "ProviderAuthError",
        "MessageOutputLengthError",
        "MessageAbortedError",
        "UnknownError",
        "StructuredOutputError",
        "ContentFilterError",
    )
    assert "max_output_tokens" in ClaudeCodeError.VALUES
    assert "authentication_failed" in ClaudeCodeError.VALUES
    assert len(ClaudeCodeError.VALUES) == 10


def test_a_provider_failure_keeps_its_message_and_status_and_nothing_else():
    outcome = classify_opencode(
        export(assistant(error=api_error("Bad gateway from upstream", 502, True, responseBody="BODY-SECRET")))
    )
    assert outcome.error_name == "APIError"
    assert outcome.status_code == 502
    assert outcome.error_message == "Bad gateway from upstream (status 502)"


def test_a_one_megabyte_provider_error_is_cut_to_the_bound_and_keeps_its_status():
    huge = "x" * 1_000_000
    outcome = classify_opencode(
        export(assistant(error=api_error("upstream said: " + huge, 500, True, responseBody="{" + huge + "}")))
    )
    assert outcome.error_message is not None
    assert len(outcome.error_message) <= MAX_ERROR_MESSAGE == 16_000
    assert outcome.error_message.startswith("upstream said: x")
    assert outcome.error_message.endswith("(status 500)")
    assert "{" not in outcome.error_message
    assert len(outcome.model_dump_json()) < 20_000


def test_the_tested_opencode_version_gives_no_warning_and_others_a_warning_not_a_refusal():
    assert classify_opencode(EXPORT).warnings == []
    other = classify_opencode(EXPORT, version="1.18.29")
    assert other.harness_version == "1.18.29"
    assert other.response_status == "completed"
    assert any("1.18.29" in w and "1.17.11" in w for w in other.warnings)
    unknown = classify_opencode(events=[*STEP, event("done", reason="idle", rejected=[])])
    assert unknown.harness_version is None
    assert any("unknown" in w for w in unknown.warnings)


def test_claude_code_names_its_version_and_warns_that_no_recorded_stream_was_tested():
    outcome = classify_claude_code([init("2.1.120"), result()])
    assert outcome.harness == "claude_code"
    assert outcome.harness_version == "2.1.120"
    assert any("not yet tested" in w for w in outcome.warnings)


def test_damaged_event_lines_are_a_warning_and_the_rest_is_read():
    lines = [json.dumps(e) for e in STEP] + ["not json", json.dumps(event("done", reason="idle", rejected=[]))]
    outcome = classify_opencode(events=lines, version="1.17.11")
    assert outcome.response_status == "completed"
    assert any("1 events line(s)" in w for w in outcome.warnings)


def test_success_with_is_error_is_a_failure_not_a_completion():
    outcome = classify_claude_code([init(), result(is_error=True, result="API Error: 500 boom", api_error_status=500)])
    assert outcome.response_status == "failed"
    assert outcome.failure_kind == "model_server_error"
    assert outcome.error_message == "API Error: 500 boom (status 500)"


def test_disagreeing_status_and_error_enum_establish_no_kind():
    stream = [init(), synthetic("API Error: 500", "rate_limit"), result(is_error=True, api_error_status=500)]
    outcome = classify_claude_code(stream)
    assert outcome.failure_kind == "unknown_error"
    assert outcome.status_code == 500


def test_an_error_enum_that_names_another_failure_is_not_overruled_by_the_status():
    stream = [init(), synthetic("API Error: 403 billing", "billing_error"), result(is_error=True, api_error_status=403)]
    outcome = classify_claude_code(stream)
    assert (outcome.failure_kind, outcome.error_name, outcome.status_code) == ("unknown_error", "billing_error", 403)
    assert decide(outcome).action == "exclude"


def test_retries_that_succeeded_do_not_explain_a_later_failure():
    stream = [init(), api_retry(None, "unknown"), says("ok"), result(is_error=True, result="something broke")]
    assert classify_claude_code(stream).failure_kind == "unknown_error"


# ---------------------------------------------------------------------------------------- decide


def outcome_of(kind: str | None, status: str = "failed", retryable: bool = False, **fields: Any) -> AgentOutcome:
    classifier = Classifier(name="test", version="1")
    return AgentOutcome(
        harness="opencode",
        classifier=classifier,
        response_status=status,
        failure_kind=kind,
        retryable=retryable,
        **fields,
    )


def test_request_errors_are_graded_by_default_and_excluded_when_configured():
    request_error = outcome_of("model_request_error", status_code=400)
    assert decide(request_error).action == "grade"
    excluded = decide(request_error, Policy(grade_request_errors=False))
    assert excluded.action == "exclude"
    assert "grade_request_errors" in excluded.reason


@pytest.mark.parametrize("kind", sorted(TRANSIENT_KINDS))
def test_transient_failures_are_retried_until_the_retries_are_used_up(kind):
    outcome = outcome_of(kind, retryable=True)
    policy = Policy(max_retries=2)
    assert [decide(outcome, policy, attempt=n).action for n in (1, 2, 3, 4)] == ["retry", "retry", "exclude", "exclude"]
    assert decide(outcome, Policy(max_retries=0)).action == "exclude"


def test_failed_or_incomplete_without_a_kind_is_excluded():
    assert decide(outcome_of(None, "failed")).action == "exclude"
    assert decide(outcome_of(None, "incomplete")).action == "exclude"
    assert decide(outcome_of(None, "completed")).action == "grade"


def test_decide_reads_an_outcome_given_as_json():
    as_json = outcome_of("model_context_limit", "incomplete", partial_work_retained=True).model_dump(mode="json")
    assert decide(as_json) == Decision("grade", decide(as_json).reason)


def test_policies_and_attempts_are_checked():
    assert Policy.from_dict({"max_retries": 5}) == Policy(max_retries=5, grade_request_errors=True)
    with pytest.raises(ValueError, match="unknown policy key"):
        Policy.from_dict({"max_retry": 5})
    with pytest.raises(ValueError, match="max_retries"):
        Policy(max_retries=-1)
    with pytest.raises(ValueError, match="grade_request_errors"):
        Policy.from_dict({"grade_request_errors": "yes"})
    with pytest.raises(ValueError, match="attempt"):
        decide(outcome_of(None, "completed"), attempt=0)


policies = st.builds(Policy, max_retries=st.integers(0, 5), grade_request_errors=st.booleans())
attempts = st.integers(1, 8)
outcomes = st.builds(
    outcome_of,
    st.sampled_from([None, *FAILURE_KINDS]),
    st.sampled_from(["completed", "failed", "incomplete"]),
    st.booleans(),
    partial_work_retained=st.booleans(),
    status_code=st.none() | st.integers(100, 599),
    error_name=st.none() | st.text(max_size=20),
    error_message=st.none() | st.text(max_size=200),
)


@given(schema_instances("agent_outcome"), policies, attempts)
def test_decide_is_total_every_outcome_gets_one_action_with_a_reason(outcome, policy, attempt):
    decision = decide(outcome, policy, attempt=attempt)
    assert decision.action in ACTIONS
    assert decision.reason.strip()


@given(outcomes, policies, attempts)
def test_no_transient_failure_is_ever_graded(outcome, policy, attempt):
    if outcome.failure_kind in TRANSIENT_KINDS or (outcome.failure_kind is not None and outcome.retryable):
        assert decide(outcome, policy, attempt=attempt).action != "grade"


@given(outcomes, st.none() | st.text(max_size=300), policies, attempts)
def test_changing_only_the_error_message_never_changes_the_decision(outcome, message, policy, attempt):
    changed = outcome.model_copy(update={"error_message": message})
    assert decide(changed, policy, attempt=attempt) == decide(outcome, policy, attempt=attempt)


# -------------------------------------------------------------------------------------- validate


def test_validate_checks_an_outcomes_status_against_its_kind():
    def codes(record: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [(d.code, d.severity, d.path) for d in iter_diagnostics(record)]

    clean = classify_opencode(export(assistant(error=OVERFLOW))).model_dump(mode="json")
    assert codes({"_ng_rollout_id": "r-1", "ng_agent_outcome": clean}) == []
    crashed_yet_completed = {**clean, "failure_kind": "agent_crash", "response_status": "completed"}
    assert codes({"_ng_rollout_id": "r-1", "ng_agent_outcome": crashed_yet_completed}) == [
        ("outcome_status_inconsistent", "error", "/ng_agent_outcome/response_status")
    ]
    assert codes({**clean, "partial_work_retained": False}) == [
        ("outcome_partial_work_missing", "warning", "/partial_work_retained")
    ]


# ------------------------------------------------------------------------------------------ docs


def test_the_docs_page_lists_every_kind_with_the_action_decide_takes():
    page = (REPO / "docs/concepts/outcomes.md").read_text()
    rows = {
        m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \|[^\n]*\| \*\*(grade|retry|exclude)", page, re.M)
    }
    assert set(rows) == set(FAILURE_KINDS)
    for kind, action in rows.items():
        status = "incomplete" if kind in ("model_context_limit", "model_output_limit", "agent_max_turns") else "failed"
        assert decide(outcome_of(kind, status, retryable=kind in TRANSIENT_KINDS)).action == action, kind
