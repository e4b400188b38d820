"""Classify how an OpenCode run ended from its `opencode export` document and `run --format json` events."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from gym_contract._values import nonempty, objects, text
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_TIMEOUT,
    CLEANUP_FAILURE,
    CONTENT_FILTER,
    MODEL_AUTH_ERROR,
    MODEL_CONTEXT_LIMIT,
    MODEL_OUTPUT_LIMIT,
    MODEL_TRANSPORT_ERROR,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome._base import (
    Evidence,
    OpenCodeError,
    body_error_code,
    check_process_facts,
    kind_for_status,
    overflow_phrase,
    status_code,
)

OPENCODE_TESTED_VERSION: Final = "1.17.11"
OPENCODE_CLASSIFIER: Final = Classifier(name="gym_contract.outcome.opencode", version="1")

# Events after which a session was still working: an `error` event followed by one of them was not terminal.
_ACTIVITY = frozenset({"step_start", "text", "reasoning", "tool_use", "step_finish"})
_ABORTED_TOOL_ERROR = "Tool execution aborted"

# Error names whose kind does not depend on the error's data.
_KIND_BY_NAME = {
    OpenCodeError.CONTEXT_OVERFLOW_ERROR: MODEL_CONTEXT_LIMIT,
    OpenCodeError.PROVIDER_AUTH_ERROR: MODEL_AUTH_ERROR,
    OpenCodeError.MESSAGE_OUTPUT_LENGTH_ERROR: MODEL_OUTPUT_LIMIT,
    OpenCodeError.CONTENT_FILTER_ERROR: CONTENT_FILTER,
}


def classify_opencode(
    export: dict[str, Any] | None = None,
    events: Iterable[Any] | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    cleanup_error: BaseException | str | None = None,
    version: str | None = None,
) -> AgentOutcome:
    """The `ng_agent_outcome` of one OpenCode run.

    ``export`` is the `opencode export` document; ``events`` the `run --format json` stream, as parsed
    objects or raw lines. ``exit_code``, ``timed_out`` and ``cleanup_error`` are what the host saw of the
    process. ``version`` is the OpenCode version (default: the export's `info.version`); a version other
    than the tested 1.17.11 gives a warning, not a refusal. An export and events of any shape are
    read; raises TypeError or ValueError only for process facts no host reports: an ``exit_code``
    that is not an integer within 64 bits, a ``version`` that is not a string.
    """
    check_process_facts(exit_code, version)
    evidence = Evidence("opencode", OPENCODE_CLASSIFIER)
    stream = evidence.lines(events, "events")
    info = export.get("info") if isinstance(export, dict) else None
    evidence.harness_version = version or (nonempty(info.get("version")) if isinstance(info, dict) else None)
    _check_version(evidence)
    if exit_code is not None:
        evidence.signal("process", "exit_code", exit_code)
    if timed_out:
        evidence.signal("process", "timed_out", True)

    if cleanup_error is not None:
        evidence.signal("process", "cleanup_error", str(cleanup_error))
        return evidence.outcome(CLEANUP_FAILURE, message=str(cleanup_error))

    messages = _messages(export, evidence)
    recovered = _recovered_overflows(messages, evidence)
    last = _last_assistant(messages)
    if last is not None:
        index, message = last
        error = message["info"].get("error")
        if isinstance(error, dict):
            return _from_error(evidence, error, "export", f"messages[{index}].info.error", timed_out)
    terminal, passed = _terminal_error_event(stream, evidence)
    if terminal is not None:
        index, error = terminal
        return _from_error(evidence, error, "events", f"lines[{index}].error", timed_out)
    if timed_out:
        if last is not None:
            _describe_last(evidence, *last)
        return evidence.outcome(AGENT_TIMEOUT)
    if last is not None:
        return _from_last_message(evidence, exit_code, recovered + passed, *last)
    return _from_stream_only(evidence, stream, exit_code, export is not None)


def _check_version(evidence: Evidence) -> None:
    version = evidence.harness_version
    if version is None:
        evidence.warn(
            f"OpenCode version unknown (no --version, no info.version in the export); "
            f"the classifier is tested on {OPENCODE_TESTED_VERSION}"
        )
    elif version != OPENCODE_TESTED_VERSION:
        evidence.warn(
            f"OpenCode {version} is not the tested version {OPENCODE_TESTED_VERSION}; "
            "error classification is untested on it"
        )


def _messages(export: dict[str, Any] | None, evidence: Evidence) -> list[tuple[int, dict[str, Any]]]:
    if export is None:
        return []
    raw = export.get("messages") if isinstance(export, dict) else None
    if not isinstance(raw, list):
        evidence.signal("export", "messages", "missing or not a list")
        return []
    return [(i, m) for i, m in enumerate(raw) if isinstance(m, dict) and isinstance(m.get("info"), dict)]


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return objects(message.get("parts"))


def _last_assistant(messages: list[tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, Any]] | None:
    for index, message in reversed(messages):
        if message["info"].get("role") == "assistant":
            return index, message
    return None


def _recovered_overflows(messages: list[tuple[int, dict[str, Any]]], evidence: Evidence) -> int:
    """`compaction` parts with `overflow: true`: the context overflowed and the session compacted and went on."""
    found = 0
    for index, message in messages:
        for position, part in enumerate(_parts(message)):
            if part.get("type") == "compaction" and part.get("overflow") is True:
                found += 1
                evidence.signal("export", f"messages[{index}].parts[{position}].overflow", "recovered")
    return found


def _terminal_error_event(
    stream: list[tuple[int, dict[str, Any]]], evidence: Evidence
) -> tuple[tuple[int, dict[str, Any]] | None, int]:
    """The last `error` event if the session did no more work after it, and how many earlier ones it went past.

    An `error` event is not necessarily terminal: a context overflow that compaction recovers from emits one too.
    """
    terminal: tuple[int, dict[str, Any]] | None = None
    passed = 0
    for index, event in stream:
        kind = text(event.get("type"))
        if terminal is not None and (kind in _ACTIVITY or kind == "error"):
            passed += 1
            evidence.signal("events", f"lines[{terminal[0]}].error.name", "not terminal: work followed")
            terminal = None
        if kind == "error" and isinstance(event.get("error"), dict):
            terminal = (index, event["error"])
    return terminal, passed


def _from_error(evidence: Evidence, error: dict[str, Any], artifact: str, field: str, timed_out: bool) -> AgentOutcome:
    """The verdict of a recorded `{name, data}` error."""
    name = nonempty(error.get("name"))
    raw = error.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    message = nonempty(data.get("message"))
    status = status_code(data.get("statusCode"))
    evidence.signal(artifact, f"{field}.name", name)

    def verdict(kind: str, retryable: bool | None = None) -> AgentOutcome:
        return evidence.outcome(kind, status_code=status, error_name=name, message=message, retryable=retryable)

    if name in _KIND_BY_NAME:
        return verdict(_KIND_BY_NAME[name])
    if name == OpenCodeError.MESSAGE_ABORTED_ERROR:
        return verdict(AGENT_TIMEOUT if timed_out else AGENT_ABORTED)
    if name == OpenCodeError.UNKNOWN_ERROR:
        phrase = overflow_phrase(message)
        if phrase is not None:
            evidence.signal(artifact, f"{field}.data.message", f"overflow phrasing: {phrase}")
            return verdict(MODEL_CONTEXT_LIMIT)
        evidence.signal(artifact, f"{field}.data.message", "no phrasing that establishes a kind")
        return verdict(UNKNOWN_ERROR)
    if name == OpenCodeError.API_ERROR:
        return _from_api_error(evidence, data, artifact, field, verdict)
    if name == OpenCodeError.STRUCTURED_OUTPUT_ERROR:
        evidence.signal(artifact, f"{field}.name", "structured output failed: no failure kind of its own")
    else:
        evidence.signal(artifact, f"{field}.name", "not a known OpenCode error name")
    return verdict(UNKNOWN_ERROR)


def _from_api_error(
    evidence: Evidence, data: dict[str, Any], artifact: str, field: str, verdict: Callable[..., AgentOutcome]
) -> AgentOutcome:
    """An `APIError`: overflow evidence first (1.17.x misreports overflows), then the status, then the retry marker."""
    status = status_code(data.get("statusCode"))
    retryable = data.get("isRetryable") is True
    body = nonempty(data.get("responseBody"))
    for where, said in (("message", nonempty(data.get("message"))), ("responseBody", body)):
        phrase = overflow_phrase(said)
        if phrase is not None:
            evidence.signal(artifact, f"{field}.data.{where}", f"overflow phrasing: {phrase}")
            return verdict(MODEL_CONTEXT_LIMIT)
    if body_error_code(body) == "context_length_exceeded":
        evidence.signal(artifact, f"{field}.data.responseBody", "error.code context_length_exceeded")
        return verdict(MODEL_CONTEXT_LIMIT)
    evidence.signal(artifact, f"{field}.data.statusCode", status)
    evidence.signal(artifact, f"{field}.data.isRetryable", data.get("isRetryable"))
    if status is None:
        if retryable:
            return verdict(MODEL_TRANSPORT_ERROR)
        evidence.signal(artifact, f"{field}.data", "no status and not marked retryable: no kind established")
        return verdict(UNKNOWN_ERROR)
    kind = kind_for_status(status)
    if kind is None:
        evidence.signal(artifact, f"{field}.data.statusCode", f"status {status} establishes no kind")
        return verdict(UNKNOWN_ERROR, retryable)
    return verdict(kind)


def _aborted_tools(evidence: Evidence, index: int, message: dict[str, Any]) -> tuple[int, int]:
    """Tool parts left pending/running (cleanup never ran) and tool parts the cleanup marked aborted."""
    dangling = aborted = 0
    for position, part in enumerate(_parts(message)):
        state = part.get("state")
        if part.get("type") != "tool" or not isinstance(state, dict):
            continue
        status = state.get("status")
        metadata = state.get("metadata")
        interrupted = isinstance(metadata, dict) and metadata.get("interrupted") is True
        if status in ("pending", "running"):
            dangling += 1
            evidence.signal("export", f"messages[{index}].parts[{position}].state.status", status)
        elif status == "error" and (interrupted or state.get("error") == _ABORTED_TOOL_ERROR):
            aborted += 1
            evidence.signal("export", f"messages[{index}].parts[{position}].state.error", state.get("error"))
    return dangling, aborted


def _describe_last(evidence: Evidence, index: int, message: dict[str, Any]) -> None:
    info = message["info"]
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    evidence.signal("export", f"messages[{index}].info.time.completed", time.get("completed"))
    if "finish" in info:
        evidence.signal("export", f"messages[{index}].info.finish", info.get("finish"))
    _aborted_tools(evidence, index, message)


def _from_last_message(
    evidence: Evidence, exit_code: int | None, recovered: int, index: int, message: dict[str, Any]
) -> AgentOutcome:
    """The last assistant message has no error: finished, cut off, or aborted."""
    info = message["info"]
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    completed = time.get("completed")
    finish = info.get("finish")
    evidence.signal("export", f"messages[{index}].info.time.completed", completed)
    evidence.signal("export", f"messages[{index}].info.finish", finish)
    dangling, aborted = _aborted_tools(evidence, index, message)
    if completed is None or dangling:
        return _cut_off(evidence, exit_code, "the last assistant message never finished")
    if aborted:
        return evidence.outcome(AGENT_ABORTED)
    if finish == "error":
        evidence.signal("export", f"messages[{index}].info.finish", "error without a recorded error")
        return evidence.outcome(UNKNOWN_ERROR)
    if exit_code not in (None, 0) and not recovered:
        # OpenCode exits 1 after any root-session `error` event, a recovered overflow included.
        evidence.warn(f"exit code {exit_code} although the export shows a finished last turn and no error")
    return evidence.outcome(None)


def _from_stream_only(
    evidence: Evidence, stream: list[tuple[int, dict[str, Any]]], exit_code: int | None, had_export: bool
) -> AgentOutcome:
    """No assistant message in an export: the events alone, then the process."""
    if had_export:
        evidence.signal("export", "messages", "no assistant message")
    last_finish: tuple[int, Any] | None = None
    for index, event in stream:
        kind = text(event.get("type"))
        if kind == "done":
            evidence.signal("events", f"lines[{index}].type", "done")
            return evidence.outcome(None)
        if kind == "step_finish":
            part = event.get("part")
            last_finish = (index, part.get("reason") if isinstance(part, dict) else None)
        elif kind in _ACTIVITY:
            last_finish = None
    if last_finish is not None and last_finish[1] == "stop":
        evidence.signal("events", f"lines[{last_finish[0]}].part.reason", "stop")
        return evidence.outcome(None)
    if not stream and not had_export:
        evidence.signal("process", "artifacts", "neither an export nor events")
        if exit_code is None:
            return evidence.outcome(UNKNOWN_ERROR)
    return _cut_off(evidence, exit_code, "no finished turn in the artifacts")


def _cut_off(evidence: Evidence, exit_code: int | None, what: str) -> AgentOutcome:
    """The artifacts show no finished turn and no error: the process died, unless it says it exited cleanly."""
    if exit_code == 0:
        evidence.signal("process", "exit_code", f"0 but {what}: no kind established")
        return evidence.outcome(UNKNOWN_ERROR)
    return evidence.outcome(AGENT_CRASH)
