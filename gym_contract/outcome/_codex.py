"""Classify how a Codex CLI run ended from its rollout file or its `codex exec --json` stdout."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from gym_contract._values import nonempty, obj, text
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_TIMEOUT,
    MODEL_AUTH_ERROR,
    MODEL_CONTEXT_LIMIT,
    MODEL_RATE_LIMITED,
    MODEL_REQUEST_ERROR,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome._base import Evidence, check_process_facts, kind_for_status, overflow_phrase, status_code

CODEX_TESTED_VERSION: Final = "0.125.0"
CODEX_CLASSIFIER: Final = Classifier(name="gym_contract.outcome.codex", version="1")

# `codex_error_info` names (rollout `error` events) whose kind does not depend on a status.
_KIND_BY_INFO = {
    "context_window_exceeded": MODEL_CONTEXT_LIMIT,
    "usage_limit_exceeded": MODEL_RATE_LIMITED,
    "server_overloaded": MODEL_SERVER_ERROR,
    "internal_server_error": MODEL_SERVER_ERROR,
    "unauthorized": MODEL_AUTH_ERROR,
    "bad_request": MODEL_REQUEST_ERROR,
}
# Names that carry `http_status_code`: the status decides, and without one the connection failed.
_TRANSPORT_INFOS = frozenset(
    {
        "http_connection_failed",
        "response_stream_connection_failed",
        "response_stream_disconnected",
        "response_too_many_failed_attempts",
    }
)
# Codex's own wording of its errors (their Display texts), read when the structured name is absent,
# as in the `exec --json` stream, which keeps only the message.
_CODEX_OVERFLOW = re.compile(r"ran out of room in the model's context window", re.IGNORECASE)
_STATUS_IN_TEXT = re.compile(r"\b(?:unexpected status|last status:?|status code:?|http status:?)\s*([1-5]\d\d)\b", re.I)
_TRANSPORT_TEXT = re.compile(
    r"stream disconnected before completion|error sending request|connection (?:reset|refused|closed)"
    r"|timed out waiting for|idle timeout waiting for",
    re.IGNORECASE,
)
_USAGE_LIMIT_TEXT = re.compile(r"you've hit your usage limit", re.IGNORECASE)
_ROLLOUT_LINES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})


@dataclass(frozen=True)
class _Error:
    where: str
    message: str | None
    info: Any = None


def classify_codex(
    events: Iterable[Any] | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    version: str | None = None,
) -> AgentOutcome:
    """The `ng_agent_outcome` of one Codex CLI run (one session).

    ``events`` is a rollout file's lines (`session_meta`, `event_msg` …) or the `codex exec --json`
    stdout (`thread.started`, `turn.*`, `item.*`, `error`), as parsed objects or raw lines; the form
    is told from the content. ``exit_code`` and ``timed_out`` are what the host saw of the process.
    ``version`` is the Codex version (default: the rollout's `session_meta.cli_version`). The last
    turn decides: a fatal error in it, an abort, or its completion. Any event of any shape is read;
    raises TypeError or ValueError only for an ``exit_code`` that is not an integer within 64 bits
    or a ``version`` that is not a string.
    """
    check_process_facts(exit_code, version)
    evidence = Evidence("codex", CODEX_CLASSIFIER)
    stream = evidence.lines(events, "events")
    if exit_code is not None:
        evidence.signal("process", "exit_code", exit_code)
    if timed_out:
        evidence.signal("process", "timed_out", True)
    rollout = any(text(event.get("type")) in _ROLLOUT_LINES and "payload" in event for _, event in stream)
    found_version = version
    started = False
    ending: tuple[str, str, Any] | None = None  # how the last turn ended: (kind, where, detail)
    error: _Error | None = None
    for index, event in stream:
        kind, payload = _event(event, rollout)
        where = f"lines[{index}]"
        if kind == "session_meta" and found_version is None:
            found_version = nonempty(payload.get("cli_version"))
        elif kind in ("task_started", "turn_started", "turn.started"):
            started, ending, error = True, None, None
        elif kind in ("task_complete", "turn_complete", "turn.completed"):
            ending = ("completed", f"{where}.type", kind)
        elif kind == "turn_aborted":
            ending = ("aborted", f"{where}.payload.reason", text(payload.get("reason")))
        elif kind == "turn.failed":
            failure = obj(payload.get("error")) or {}
            error = _Error(f"{where}.error.message", nonempty(failure.get("message")))
            ending = ("failed", f"{where}.type", kind)
        elif kind == "error":
            info = payload.get("codex_error_info")
            path = f"{where}.payload.message" if rollout else f"{where}.message"
            error = _Error(path, nonempty(payload.get("message")), info)
        elif kind == "item.error" and ending is None:
            evidence.signal("events", f"{where}.item.message", "an error item: not fatal by itself")
        elif _is_work(kind, rollout) and error is not None and ending is None:
            evidence.signal("events", error.where, "not terminal: work followed")
            error = None
    evidence.harness_version = found_version
    _check_version(evidence)
    if error is not None:
        return _from_error(evidence, error, timed_out)
    if ending is not None and ending[0] == "aborted":
        evidence.signal("events", ending[1], ending[2])
        return evidence.outcome(AGENT_TIMEOUT if timed_out else AGENT_ABORTED)
    if timed_out:
        return evidence.outcome(AGENT_TIMEOUT)
    if ending is not None and ending[0] == "completed":
        evidence.signal("events", ending[1], ending[2])
        if exit_code not in (None, 0):
            evidence.warn(f"exit code {exit_code} although the last turn completed with no error")
        return evidence.outcome(None)
    if not stream:
        evidence.signal("process", "artifacts", "no events")
        if exit_code is None:
            return evidence.outcome(UNKNOWN_ERROR)
    elif started:
        evidence.signal("events", "type", "the last turn started and never ended")
    else:
        evidence.signal("events", "type", "no turn started")
    if exit_code == 0:
        evidence.signal("process", "exit_code", "0 but no turn ended: no kind established")
        return evidence.outcome(UNKNOWN_ERROR)
    return evidence.outcome(AGENT_CRASH)


def _event(event: dict[str, Any], rollout: bool) -> tuple[str | None, dict[str, Any]]:
    """The event's kind and its fields: a rollout line's `event_msg` payload type, an exec event's type."""
    kind = text(event.get("type"))
    if not rollout:
        if kind in ("item.completed", "item.updated") and text((obj(event.get("item")) or {}).get("type")) == "error":
            return "item.error", event
        return kind, event
    payload = obj(event.get("payload")) or {}
    if kind == "event_msg":
        return text(payload.get("type")), payload
    return kind, payload


def _is_work(kind: str | None, rollout: bool) -> bool:
    """An event after which the session was still working: an earlier error was not the end of the turn."""
    if rollout:
        return kind in ("response_item", "exec_command_end", "patch_apply_end", "agent_message")
    return kind in ("item.started", "item.updated", "item.completed")


def _check_version(evidence: Evidence) -> None:
    version = evidence.harness_version
    if version is None:
        evidence.warn(
            f"Codex version unknown (no --version, no session_meta.cli_version); "
            f"the classifier is tested on {CODEX_TESTED_VERSION}"
        )
    elif version != CODEX_TESTED_VERSION:
        evidence.warn(
            f"Codex {version} is not the tested version {CODEX_TESTED_VERSION}; error classification is untested on it"
        )


def _info(value: Any) -> tuple[str | None, int | None]:
    """A `codex_error_info`: a bare name, or a one-key object naming the variant with its `http_status_code`."""
    if isinstance(value, str):
        return value, None
    fields = obj(value)
    if fields is None or len(fields) != 1:
        return None, None
    name, details = next(iter(fields.items()))
    detail = obj(details) or {}
    return name, status_code(detail.get("http_status_code", detail.get("httpStatusCode")))


def _codex_overflow(message: str | None) -> str | None:
    found = _CODEX_OVERFLOW.search(message) if message else None
    return found.group(0) if found else None


def _from_error(evidence: Evidence, error: _Error, timed_out: bool) -> AgentOutcome:
    """The verdict of the last turn's fatal error: its structured name first, then Codex's wording, then a status."""
    name, status = _info(error.info)
    message = error.message
    evidence.signal("events", error.where, message)
    if status is None and message is not None:
        found = _STATUS_IN_TEXT.search(message)
        status = int(found.group(1)) if found else None

    def verdict(kind: str) -> AgentOutcome:
        return evidence.outcome(kind, status_code=status, error_name=name, message=message)

    if name is not None:
        evidence.signal("events", error.where.replace(".message", ".codex_error_info"), name)
    phrase = overflow_phrase(message) or _codex_overflow(message)
    if name == "context_window_exceeded" or phrase is not None:
        if phrase is not None:
            evidence.signal("events", error.where, f"overflow phrasing: {phrase}")
        return verdict(MODEL_CONTEXT_LIMIT)
    if name in _KIND_BY_INFO:
        return verdict(_KIND_BY_INFO[name])
    by_status = kind_for_status(status) if status is not None else None
    if by_status is not None:
        evidence.signal("events", error.where, f"status {status}")
        return verdict(by_status)
    if name in _TRANSPORT_INFOS or (message is not None and _TRANSPORT_TEXT.search(message)):
        return verdict(MODEL_TRANSPORT_ERROR)
    if message is not None and _USAGE_LIMIT_TEXT.search(message):
        return verdict(MODEL_RATE_LIMITED)
    if timed_out:
        return verdict(AGENT_TIMEOUT)
    evidence.signal("events", error.where, "no name, status or wording that establishes a kind")
    return verdict(UNKNOWN_ERROR)
