"""Classify how a Claude Code run ended from its `claude -p --output-format stream-json --verbose` stream."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from gym_contract._values import nonempty, preview, text
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_MAX_TURNS,
    AGENT_TIMEOUT,
    MODEL_AUTH_ERROR,
    MODEL_CONTEXT_LIMIT,
    MODEL_OUTPUT_LIMIT,
    MODEL_RATE_LIMITED,
    MODEL_REQUEST_ERROR,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome._base import (
    ClaudeCodeError,
    Evidence,
    check_process_facts,
    kind_for_status,
    overflow_phrase,
    status_code,
)

CLAUDE_CODE_TESTED_VERSION: Final[str | None] = None
"""No recorded stream-json capture has been run through the classifier yet; it follows the documented shapes."""
CLAUDE_CODE_CLASSIFIER: Final = Classifier(name="gym_contract.outcome.claude_code", version="1")

# Enum values whose kind is established by the value alone. `billing_error` and `model_not_found` name
# failures that are none of the kinds (an account or configuration problem, not known to be transient);
# `unknown` names nothing, so the status decides.
_KIND_BY_ERROR = {
    ClaudeCodeError.AUTHENTICATION_FAILED: MODEL_AUTH_ERROR,
    ClaudeCodeError.OAUTH_ORG_NOT_ALLOWED: MODEL_AUTH_ERROR,
    ClaudeCodeError.RATE_LIMIT: MODEL_RATE_LIMITED,
    ClaudeCodeError.INVALID_REQUEST: MODEL_REQUEST_ERROR,
    ClaudeCodeError.SERVER_ERROR: MODEL_SERVER_ERROR,
    ClaudeCodeError.OVERLOADED: MODEL_SERVER_ERROR,
    ClaudeCodeError.MAX_OUTPUT_TOKENS: MODEL_OUTPUT_LIMIT,
}
_OTHER_FAILURES = frozenset({ClaudeCodeError.BILLING_ERROR, ClaudeCodeError.MODEL_NOT_FOUND})
_ABORTED = frozenset({"aborted_streaming", "aborted_tools"})
_API_ERROR_PROSE = re.compile(r"API Error: (\d{3})\b")
_SYNTHETIC_MODEL = "<synthetic>"


def classify_claude_code(
    stream_events: Iterable[Any] | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    version: str | None = None,
) -> AgentOutcome:
    """The `ng_agent_outcome` of one Claude Code run.

    ``stream_events`` is the stream-json output, as parsed objects or raw lines. ``exit_code`` and
    ``timed_out`` are what the host saw of the process. ``version`` is the CLI version (default: the
    `system/init` event's `claude_code_version`). Any event of any shape is read; raises TypeError or
    ValueError only for process facts no host reports: an ``exit_code`` that is not an integer within
    64 bits, a ``version`` that is not a string.
    """
    check_process_facts(exit_code, version)
    evidence = Evidence("claude_code", CLAUDE_CODE_CLASSIFIER)
    stream = evidence.lines(stream_events, "stream")
    result: tuple[int, dict[str, Any]] | None = None
    api_error: tuple[int, dict[str, Any]] | None = None
    retry: tuple[int, dict[str, Any]] | None = None
    retries = 0
    found_version: str | None = None
    for index, event in stream:
        kind, subtype = event.get("type"), event.get("subtype")
        if kind == "result":
            result = (index, event)
        elif kind == "system" and subtype == "init":
            found_version = found_version or nonempty(event.get("claude_code_version"))
        elif kind == "system" and subtype == "api_retry":
            retry, retries = (index, event), retries + 1
        elif kind == "assistant" and event.get("parent_tool_use_id") is None:
            if _is_api_error(event):
                api_error = (index, event)
            else:
                retry = None  # the model answered: earlier retries succeeded
    evidence.harness_version = version or found_version
    _check_version(evidence)
    if exit_code is not None:
        evidence.signal("process", "exit_code", exit_code)
    if timed_out:
        evidence.signal("process", "timed_out", True)
    if retries:
        evidence.signal("stream", "api_retry", retries)

    if result is None:
        evidence.signal("stream", "result", "missing")
        if api_error is not None:
            evidence.signal("stream", f"lines[{api_error[0]}].error", api_error[1].get("error"))
        return evidence.outcome(AGENT_TIMEOUT if timed_out else AGENT_CRASH)
    return _from_result(evidence, *result, api_error, retry, exit_code, timed_out)


def _check_version(evidence: Evidence) -> None:
    shown = evidence.harness_version or "unknown"
    if CLAUDE_CODE_TESTED_VERSION is None:
        evidence.warn(
            f"Claude Code {shown}: the classifier follows the documented stream-json shapes and is not yet "
            "tested on a recorded stream of any version"
        )
    elif evidence.harness_version != CLAUDE_CODE_TESTED_VERSION:
        evidence.warn(
            f"Claude Code {shown} is not the tested version {CLAUDE_CODE_TESTED_VERSION}; "
            "error classification is untested on it"
        )


def _is_api_error(event: dict[str, Any]) -> bool:
    """A synthetic API-error message: the CLI's error prose, not model output."""
    message = event.get("message")
    synthetic = isinstance(message, dict) and message.get("model") == _SYNTHETIC_MODEL
    return event.get("is_api_error_message") is True or (synthetic and event.get("error") is not None)


def _prose(event: dict[str, Any] | None) -> str | None:
    """The text blocks of an assistant message, joined."""
    message = event.get("message") if event else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = [
        block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts) or None


def _from_result(
    evidence: Evidence,
    index: int,
    result: dict[str, Any],
    api_error: tuple[int, dict[str, Any]] | None,
    retry: tuple[int, dict[str, Any]] | None,
    exit_code: int | None,
    timed_out: bool,
) -> AgentOutcome:
    subtype, is_error, given_terminal = result.get("subtype"), result.get("is_error"), result.get("terminal_reason")
    evidence.signal("stream", f"lines[{index}].subtype", subtype)
    evidence.signal("stream", f"lines[{index}].is_error", is_error)
    if given_terminal is not None:
        evidence.signal("stream", f"lines[{index}].terminal_reason", given_terminal)
    terminal = text(given_terminal)

    if subtype == "success" and is_error is not True:
        if exit_code not in (None, 0):
            evidence.warn(f"exit code {exit_code} although the result is a success")
        if timed_out:
            evidence.warn("the host reported a timeout, but the stream ends with a successful result")
        return evidence.outcome(None)
    if subtype == "error_max_turns" or terminal == "max_turns":
        return evidence.outcome(
            AGENT_MAX_TURNS, error_name=nonempty(subtype) or nonempty(terminal), message=_errors(result)
        )
    if terminal in _ABORTED:
        kind = AGENT_TIMEOUT if timed_out else AGENT_ABORTED
        return evidence.outcome(kind, error_name=nonempty(terminal), message=_errors(result))

    error_event = api_error[1] if api_error is not None else None
    enum = nonempty(error_event.get("error")) if error_event else None
    name = enum or nonempty(terminal) or (subtype if isinstance(subtype, str) and subtype != "success" else None)
    # The CLI's error prose, where it says it: the result text, the `errors` list, the synthetic message.
    prose = [
        (f"lines[{index}].result", nonempty(result.get("result"))),
        (f"lines[{index}].errors", _errors(result)),
        (f"lines[{api_error[0] if api_error else index}].message.content", _prose(error_event)),
    ]
    said = next((candidate for _, candidate in prose if candidate), None)
    status = status_code(result.get("api_error_status"))
    if status is not None:
        evidence.signal("stream", f"lines[{index}].api_error_status", status)
    if api_error is not None:
        evidence.signal("stream", f"lines[{api_error[0]}].error", enum)

    if terminal == "blocking_limit":
        return evidence.outcome(MODEL_CONTEXT_LIMIT, status_code=status, error_name=name, message=said)
    for where, candidate in prose:
        phrase = overflow_phrase(candidate)
        if phrase is not None:
            evidence.signal("stream", where, f"overflow phrasing: {phrase}")
            return evidence.outcome(MODEL_CONTEXT_LIMIT, status_code=status, error_name=name, message=said)

    for where, candidate in prose if status is None else ():
        match = _API_ERROR_PROSE.search(candidate or "")
        if match is not None:
            evidence.signal("stream", where, match.group(0))
            status = int(match.group(1))
            break
    if status is None and retry is not None:
        retried = status_code(retry[1].get("error_status"))
        evidence.signal("stream", f"lines[{retry[0]}].error_status", retried)
        if retried is None and _KIND_BY_ERROR.get(enum or "") is None:
            # Retried without an HTTP status, and nothing later names one: the status-less transport failure.
            retry_name = name or nonempty(retry[1].get("error"))
            return evidence.outcome(MODEL_TRANSPORT_ERROR, error_name=retry_name, message=said)
        status = retried

    def verdict(kind: str, why: str | None = None) -> AgentOutcome:
        if why is not None:
            evidence.signal("stream", f"lines[{index}]", why)
        return evidence.outcome(kind, status_code=status, error_name=name, message=said)

    # Status and error enum each establish a kind or none; when both do, they must agree.
    if enum in _OTHER_FAILURES:
        return verdict(UNKNOWN_ERROR, f"error {enum} is none of the failure kinds")
    by_status = kind_for_status(status) if status is not None else None
    by_enum = _KIND_BY_ERROR.get(enum or "")
    if by_status is not None and by_enum is not None and by_status != by_enum:
        return verdict(UNKNOWN_ERROR, f"status {status} says {by_status}, error {enum} says {by_enum}")
    established = by_status or by_enum
    if established is not None:
        return verdict(established)
    if status is not None:
        return verdict(UNKNOWN_ERROR, f"status {status} establishes no kind")
    # Any JSON value may stand there: quoted in bounded words, never through str (deep, or too long an integer).
    shown = subtype if isinstance(subtype, str) else preview(subtype)
    return verdict(UNKNOWN_ERROR, f"{shown}: no status, error or phrasing that establishes a kind")


def _errors(result: dict[str, Any]) -> str | None:
    """The `errors` prose of an `error_*` result, joined."""
    errors = result.get("errors")
    if not isinstance(errors, list):
        return None
    return "; ".join(e for e in errors if isinstance(e, str) and e) or None
